# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel behaviour the lab must not be more lenient about than a real tray: read-only kernel files,
a tray GRUB cannot boot, kmod's rules for removing modules, RoCE P_Key tables, grub-probe targets."""

import json
import os
import subprocess
import sys

import pytest

from labtray import TRAYFS, fixtures

traylab = fixtures.traylab
TRAYLAB_DIR = os.path.join(TRAYFS, 'usr/local/lib/gpu-tray-lab')


# ------------------------------------------------------------ read-only fixture tree (review item 1)

def test_only_numvfs_and_nr_hugepages_are_writable():
    hw = fixtures.hardware('nvke-gb200', 1, frozenset(['sriov-disabled']))
    files = traylab.writable_files(hw)
    numvfs = sorted(f for f in files if f.endswith('/sriov_numvfs'))
    # every PF with SR-IOV (4 rails but the sriov-disabled one, and the BlueField-3), no VF file, no other file
    with_sriov = [h for h in hw['hcas'] if h.get('sriov_totalvfs') is not None]
    assert len(with_sriov) == len(hw['hcas']) - 1
    assert numvfs == sorted('%s/sriov_numvfs' % traylab.pci_rel(h['bdf']) for h in with_sriov)
    assert sorted(f for f in files if not f.endswith('/sriov_numvfs')) == sorted(
        'kernel/mm/hugepages/hugepages-%dkB/nr_hugepages' % size for size in hw['hugepage_sizes_kb'])


PROTECT_SCRIPT = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
import traylab
base = sys.argv[2]
hw = traylab.load_hw(base)
rw = traylab.protect_sysfs(base, hw)
traylab.modprobe_load('mlx5_ib', base=base, hw=hw)
traylab.reconcile(base, hw)
sysdir = traylab.path(traylab.SYS_REL, base)
result = {'rw_view': rw, 'sys_root': traylab.sys_root(base), 'writes': {}}
for rel, value in json.loads(sys.argv[3]):
    target = os.path.join(sysdir, rel)
    try:
        with open(target, 'w') as handle:
            handle.write(value)
        result['writes'][rel] = 'ok'
    except OSError as exc:
        result['writes'][rel] = exc.strerror
    with open(target) as handle:
        result.setdefault('after', {})[rel] = handle.read()
print(json.dumps(result))
'''


@pytest.mark.lab_needs('root', 'unshare', reason='a private mount namespace for the bind mounts')
def test_protect_sysfs_makes_kernel_files_read_only(make_tray):
    """The boot unit's mounts, run in a private mount namespace against a populated tray: writes to
    read-only kernel files fail and change nothing; sriov_numvfs and nr_hugepages take writes."""
    tray = make_tray('nvke-gb200', boot=False)
    rail = traylab.pci_rel(tray.hw['hcas'][0]['bdf'])
    writes = [
        ('module/ib_core/parameters/netns_mode', 'N\n'),
        ('%s/infiniband/mlx5_0/ports/1/pkeys/0' % rail, '0x7fff\n'),
        ('%s/sriov_totalvfs' % rail, '64\n'),
        ('%s/sriov_numvfs' % rail, '2\n'),
        ('kernel/mm/hugepages/hugepages-2048kB/nr_hugepages', '16\n'),
    ]
    proc = subprocess.run(['unshare', '--mount', '--propagation', 'private', sys.executable, '-c', PROTECT_SCRIPT,
                           TRAYLAB_DIR, tray.root, json.dumps(writes)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result['sys_root'] == result['rw_view'] == tray.p('run/gpu-tray-lab/sys-rw')
    w, after = result['writes'], result['after']
    assert w['module/ib_core/parameters/netns_mode'] == 'Read-only file system'
    assert after['module/ib_core/parameters/netns_mode'] == 'Y\n'
    assert w['%s/infiniband/mlx5_0/ports/1/pkeys/0' % rail] == 'Read-only file system'
    assert after['%s/infiniband/mlx5_0/ports/1/pkeys/0' % rail] == '0xffff\n'
    assert w['%s/sriov_totalvfs' % rail] == 'Read-only file system'
    assert after['%s/sriov_totalvfs' % rail] == '16\n'
    assert w['%s/sriov_numvfs' % rail] == 'ok' and after['%s/sriov_numvfs' % rail] == '2\n'
    assert w['kernel/mm/hugepages/hugepages-2048kB/nr_hugepages'] == 'ok'
    # the namespace is gone: the tree on disk is an ordinary directory again, the module tmpfs went with it
    assert not os.listdir(tray.sys('module'))


# ------------------------------------------------------------ unbootable trays (review item 2)

def test_missing_kernel_image_makes_the_tray_unbootable(make_tray):
    tray = make_tray('rke2-vr200')
    image = 'boot/vmlinuz-%s' % tray.hw['kernel_release']
    os.unlink(tray.p(image))
    with pytest.raises(traylab.Unbootable, match="boots /%s, which does not exist" % image):
        tray.boot()


def test_grub_cfg_without_a_default_linux_entry_is_unbootable(make_tray):
    tray = make_tray('rke2-vr200')
    tray.write(tray.p('boot/grub/grub.cfg'), 'set default="0"\nmenuentry "broken" {\n  echo no kernel here\n}\n')
    with pytest.raises(traylab.Unbootable, match='grub.cfg is unusable'):
        tray.boot()


def test_boot_command_records_the_reason_and_fails(make_tray):
    tray = make_tray('rke2-vr200')
    os.unlink(tray.p('boot/vmlinuz-%s' % tray.hw['kernel_release']))
    proc = tray.run(os.path.join(TRAYLAB_DIR, 'gpu-tray-lab-hw'), 'boot', '--no-mount')
    assert proc.returncode == 1
    assert 'tray is unbootable' in proc.stderr
    assert 'which does not exist' in tray.text('var/lib/gpu-tray-lab/unbootable')
    assert 'boot FAILED, unbootable' in tray.text('var/log/gpu-tray-lab/boot.log')
    # the boot unit powers the tray off when this fails
    with open(os.path.join(TRAYFS, 'usr/lib/systemd/system/gpu-tray-lab-boot.service')) as handle:
        assert 'FailureAction=poweroff-force' in handle.read().splitlines()
    # a good boot clears the reason again
    tray.write(tray.p('boot/vmlinuz-%s' % tray.hw['kernel_release']), '')
    tray.boot()
    assert not os.path.exists(tray.p('var/lib/gpu-tray-lab/unbootable'))


# ------------------------------------------------------------ kmod removal rules (review item 6)

def test_modprobe_remove_of_unknown_and_unloaded_modules(make_tray):
    tray = make_tray('nvke-gb200')
    result = tray.run('modprobe', '-r', 'no_such_module')
    assert (result.returncode, result.stderr) == (1, 'modprobe: FATAL: Module no_such_module not found.\n')
    assert not os.path.isdir(tray.sys('module/ib_umad'))
    # kmod >= 30: removing a known module that is not loaded is a no-op (rc 0, silent) ...
    result = tray.run('modprobe', '-r', 'ib_umad')
    assert (result.returncode, result.stderr) == (0, '')
    # ... unless --first-time
    result = tray.run('modprobe', '-r', '--first-time', 'ib_umad')
    assert (result.returncode, result.stderr) == (1, 'modprobe: FATAL: Module ib_umad is not in kernel.\n')


def test_rmmod_needs_a_loaded_unused_module(make_tray):
    tray = make_tray('nvke-gb200')
    result = tray.run('rmmod', 'ib_umad')
    assert (result.returncode, result.stderr) == (1, 'rmmod: ERROR: Module ib_umad is not currently loaded\n')
    result = tray.run('rmmod', 'no_such_module')
    assert (result.returncode, result.stderr) == (1, 'rmmod: ERROR: Module no_such_module is not currently loaded\n')
    result = tray.run('rmmod', 'ib_core')
    assert result.returncode == 1 and result.stderr.startswith('rmmod: ERROR: Module ib_core is in use by: ')
    assert os.path.isdir(tray.sys('module/ib_core'))
    assert tray.run('modprobe', 'ib_umad').returncode == 0
    result = tray.run('rmmod', 'ib_umad')
    assert (result.returncode, result.stderr) == (0, '')
    assert not os.path.exists(tray.sys('module/ib_umad'))
    result = tray.run('rmmod', 'mlx5_core')
    assert result.returncode == 1 and 'refuses to unload mlx5_core' in result.stderr
    assert os.path.isdir(tray.sys('module/mlx5_core'))
    assert 'REFUSED rmmod: unload of mlx5_core' in tray.calls()


# ------------------------------------------------------------ RoCE P_Key table (review item 9)

def _pkeys(tray, ibdev):
    pdir = tray.sys('class/infiniband/%s/ports/1/pkeys' % ibdev)
    return [tray.read('class/infiniband/%s/ports/1/pkeys/%s' % (ibdev, n)).strip()
            for n in sorted(os.listdir(pdir), key=int)]


def test_ethernet_ports_have_a_one_entry_pkey_table(make_tray):
    tray = make_tray('nvke-gb200', ['link-type-eth'])
    assert _pkeys(tray, 'mlx5_4') == ['0xffff']                 # the rail switched to Ethernet
    assert _pkeys(tray, 'mlx5_2') == ['0xffff']                 # the BlueField-3 (Ethernet)
    ib = _pkeys(tray, 'mlx5_0')
    assert len(ib) == 128 and ib[0] == '0xffff' and set(ib[1:]) == {'0x0000'}


# ------------------------------------------------------------ grub-probe (review item 17)

def test_grub_probe_unknown_target_fails_like_grub_probe():
    exe = os.path.join(TRAYLAB_DIR, 'grub-probe')
    proc = subprocess.run([exe, '--target=no_such_target', '/'], capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (1, '')
    assert proc.stderr == "grub-probe: error: unknown target `no_such_target'.\n"
    proc = subprocess.run([exe, '-t', 'device', '/'], capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout) == (0, '/dev/vda1\n')
