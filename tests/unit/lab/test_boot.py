# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Boot emulation: the kernel command line from a grub.cfg the REAL update-grub
wrote (tests/unit/lab/data, generated in a lab tray), hugepage pools, boot id,
modules-load.d replay, VFs gone after a reboot."""

import os
import shutil

import pytest

from labtray import DATA, fixtures

traylab = fixtures.traylab
VR200_IMAGE = '/boot/vmlinuz-7.0.0-14-nvidia-bos-64k'


def sample(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


def test_cmdline_of_the_default_entry():
    assert traylab.cmdline_from_grub(sample('grub-vr200-baseline.cfg')) == \
        'BOOT_IMAGE=%s root=/dev/vda1 ro console=ttyAMA0,115200n8' % VR200_IMAGE
    assert traylab.cmdline_from_grub(sample('grub-vr200-tuned.cfg')) == (
        'BOOT_IMAGE=%s root=/dev/vda1 ro console=ttyAMA0,115200n8 init_on_alloc=0 iommu.passthrough=1 '
        'numa_balancing=disable hugepagesz=2M hugepages=5128 hugepagesz=1G hugepages=2' % VR200_IMAGE)
    # a later drop-in that sets the variable wholesale drops both the console and the tuned args
    assert traylab.cmdline_from_grub(sample('grub-vr200-override.cfg')) == \
        'BOOT_IMAGE=%s root=/dev/vda1 ro quiet splash' % VR200_IMAGE


def test_baseline_matches_what_update_grub_writes():
    hw = fixtures.hardware('rke2-vr200', 1)
    assert hw['baseline_cmdline'] == traylab.cmdline_from_grub(sample('grub-vr200-baseline.cfg'))
    hw = fixtures.hardware('rke2-vr200', 1, frozenset(['grub-dropin-override']))
    assert hw['baseline_cmdline'] == traylab.cmdline_from_grub(sample('grub-vr200-override.cfg'))


def test_grub_default_submenu_saved_and_missing_entries():
    text = sample('grub-vr200-tuned.cfg')
    recovery = 'BOOT_IMAGE=%s root=/dev/vda1 ro single' % VR200_IMAGE
    assert traylab.cmdline_from_grub(text.replace('set default="0"', 'set default="1>1"')) == recovery
    by_id = 'gnulinux-7.0.0-14-nvidia-bos-64k-recovery-7d0b3c1e-5f0e-4b8e-9a57-1c2d3e4f5a6b'
    assert traylab.cmdline_from_grub(
        text.replace('set default="0"', 'set default="gnulinux-advanced-7d0b3c1e-5f0e-4b8e-9a57-1c2d3e4f5a6b>%s"'
                     % by_id)) == recovery
    saved = text.replace('set default="0"', 'set default="${saved_entry}"')
    assert traylab.cmdline_from_grub(saved, 'saved_entry=1>1\n') == recovery
    assert traylab.cmdline_from_grub(saved, '').endswith('hugepages=2')
    # an index GRUB does not have falls back to entry 0, as GRUB does
    assert traylab.cmdline_from_grub(text.replace('set default="0"', 'set default="7"')).endswith('hugepages=2')
    with pytest.raises(ValueError):
        traylab.cmdline_from_grub('set default="0"\n')


def test_hugepages_from_the_command_line():
    sizes, default = (2048, 524288, 16777216), 524288
    pools, _d, messages = traylab.hugepages_from_cmdline(
        'ro hugepagesz=2M hugepages=5128 hugepagesz=1G hugepages=2', sizes, default)
    assert pools == {2048: 5128, 524288: 0, 16777216: 0}
    assert messages[0] == 'HugeTLB: unsupported hugepagesz=1G'
    pools, dflt, _m = traylab.hugepages_from_cmdline('hugepages=4', sizes, default)
    assert pools[524288] == 4 and dflt == 524288
    pools, dflt, _m = traylab.hugepages_from_cmdline('hugepagesz=2M hugepages=8192 default_hugepagesz=2M', sizes,
                                                     default)
    assert pools[2048] == 8192 and dflt == 2048
    pools, _d, _m = traylab.hugepages_from_cmdline('hugepagesz=16G hugepages=1 hugepagesz=512M hugepages=3', sizes,
                                                   default)
    assert pools == {2048: 0, 524288: 3, 16777216: 1}


def test_boot_derives_cmdline_from_grub_cfg_and_applies_it(make_tray):
    tray = make_tray('rke2-vr200', boot=False)
    tray.boot()
    assert tray.text('proc/cmdline') == 'BOOT_IMAGE=%s root=/dev/vda1 ro console=ttyAMA0,115200n8\n' % VR200_IMAGE
    assert tray.text('run/gpu-tray-lab/cmdline.source') == 'baseline\n'
    shutil.copy(os.path.join(DATA, 'grub-vr200-tuned.cfg'), tray.p('boot/grub/grub.cfg'))
    assert 'init_on_alloc=0' not in tray.text('proc/cmdline')     # nothing changes before the reboot
    tray.boot()
    cmdline = tray.text('proc/cmdline')
    assert cmdline.endswith(' numa_balancing=disable hugepagesz=2M hugepages=5128 hugepagesz=1G hugepages=2\n')
    assert tray.text('run/gpu-tray-lab/numa_balancing') == '0\n'
    assert tray.read('kernel/mm/hugepages/hugepages-2048kB/nr_hugepages') == '5128\n'
    assert tray.read('kernel/mm/hugepages/hugepages-2048kB/free_hugepages') == '5128\n'
    assert not os.path.exists(tray.sys('kernel/mm/hugepages/hugepages-1048576kB'))
    assert 'HugeTLB: unsupported hugepagesz=1G' in tray.text('var/log/gpu-tray-lab/boot.log')


def test_kernel_cmdline_module_options(make_tray):
    tray = make_tray('rke2-vr200', boot=False)
    tray.write(tray.p('boot/grub/grub.cfg'), sample('grub-vr200-baseline.cfg').replace(
        'console=ttyAMA0,115200n8', 'console=ttyAMA0,115200n8 ib_core.netns_mode=0 modules_load=ib_umad'))
    tray.boot()
    assert tray.read('module/ib_core/parameters/netns_mode') == 'N\n'
    assert os.path.isdir(tray.sys('module/ib_umad'))


def test_boot_identity_changes_every_boot(make_tray):
    tray = make_tray('nvke-gb200')
    first = tray.text('run/gpu-tray-lab/boot_id')
    assert tray.text('var/lib/gpu-tray-lab/boot_count') == '1\n'
    tray.boot()
    second = tray.text('run/gpu-tray-lab/boot_id')
    assert first != second and len(second.strip()) == 36
    assert tray.text('var/lib/gpu-tray-lab/boot_count') == '2\n'


def test_modules_load_d_replayed_at_boot_only(make_tray):
    tray = make_tray('nvke-gb200')
    tray.write(tray.p('etc/modules-load.d/aicr-rdma-ulp.conf'),
               '# AICR rdma-modules\nrdma_ucm\nib_umad\n; comment\nib_ipoib\n')
    tray.write(tray.p('usr/lib/modules-load.d/vendor.conf'), 'ib_iser\n')
    tray.write(tray.p('usr/lib/modules-load.d/aicr-rdma-ulp.conf'), 'configfs\n')   # shadowed by /etc's
    assert not os.path.exists(tray.sys('module/rdma_ucm'))
    tray.boot()
    for mod in ('rdma_ucm', 'ib_umad', 'ib_ipoib', 'ib_iser', 'mlx5_core', 'mlx5_ib', 'ib_core'):
        assert os.path.isdir(tray.sys('module/' + mod)), mod
    assert not os.path.exists(tray.sys('module/configfs'))
    os.unlink(tray.p('etc/modules-load.d/aicr-rdma-ulp.conf'))
    tray.boot()
    assert not os.path.exists(tray.sys('module/rdma_ucm'))   # a reboot empties /sys/module
    assert os.path.isdir(tray.sys('module/configfs'))


def test_reboot_removes_vfs(make_tray):
    tray = make_tray('nvke-gb200')
    tray.write_numvfs('mlx5_1', 4)
    assert os.path.islink(tray.sys('bus/pci/devices/0002:03:00.0/virtfn3'))
    assert tray.read('bus/pci/devices/0002:03:00.4/device') == '0x101e\n'
    assert os.readlink(tray.sys('bus/pci/devices/0002:03:00.4/physfn')) == '../0002:03:00.0'
    tray.boot()
    assert tray.read('bus/pci/devices/0002:03:00.0/sriov_numvfs') == '0\n'
    assert not os.path.lexists(tray.sys('bus/pci/devices/0002:03:00.1'))
    assert sorted(os.listdir(tray.sys('class/infiniband'))) == ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3', 'mlx5_4']


def test_sriov_numvfs_writes_the_kernel_refuses(make_tray):
    tray = make_tray('nvke-gb200')
    assert tray.write_numvfs('mlx5_0', 16) == ['0000:03:00.0: enabled 16 VFs']
    assert os.path.islink(tray.sys('bus/pci/devices/0000:03:00.0/virtfn15'))
    assert os.path.basename(os.readlink(tray.sys('bus/pci/devices/0000:03:00.0/virtfn15'))) == '0000:03:02.0'
    names = sorted(os.listdir(tray.sys('class/infiniband')), key=lambda n: int(n.split('_')[1]))
    assert names[-1] == 'mlx5_20'
    messages = tray.write_numvfs('mlx5_0', 8)
    assert messages == ['0000:03:00.0: write of sriov_numvfs refused as the kernel would: EBUSY (Device or '
                        'resource busy): 16 VFs already enabled. Disable before enabling 8 VFs']
    assert tray.read('bus/pci/devices/0000:03:00.0/sriov_numvfs') == '16\n'
    assert 'EINVAL' in tray.write_numvfs('mlx5_0', 'many')[0]
    assert tray.write_numvfs('mlx5_0', 0) == ['0000:03:00.0: disabled 16 VFs']
    # VF names: the lowest free mlx5_N, never a PF's name
    tray.write_numvfs('mlx5_3', 1)
    assert os.path.basename(os.path.realpath(tray.sys('class/infiniband/mlx5_5/device'))) == '0010:03:00.1'


def test_runtime_hugepage_writes(make_tray):
    tray = make_tray('nvke-gb200')
    pool = 'kernel/mm/hugepages/hugepages-2048kB/'
    tray.write(tray.sys(pool + 'nr_hugepages'), '8192\n')
    assert tray.reconcile() == ['hugepages-2048kB: nr_hugepages 0 -> 8192']
    assert tray.read(pool + 'free_hugepages') == '8192\n'
    assert tray.reconcile() == []
    # more than the tray's memory: the kernel allocates what it can
    big = 'kernel/mm/hugepages/hugepages-16777216kB/'
    tray.write(tray.sys(big + 'nr_hugepages'), '1000\n')
    messages = tray.reconcile()
    assert messages and 'asked for 1000, allocated' in messages[0]
    allocated = int(tray.read(big + 'nr_hugepages'))
    assert 0 < allocated < 1000 and allocated * 16 < 960
    assert tray.read(pool + 'nr_hugepages') == '8192\n'
    tray.write(tray.sys(pool + 'nr_hugepages'), 'lots\n')
    assert 'EINVAL' in tray.reconcile()[0]
    assert tray.read(pool + 'nr_hugepages') == '8192\n'


def test_blacklist_stops_udev_loading_at_boot(make_tray):
    tray = make_tray('nvke-gb200')
    tray.write(tray.p('etc/modprobe.d/blacklist-mlx5.conf'), 'blacklist mlx5_ib\n')
    tray.boot()
    assert not os.path.exists(tray.sys('module/mlx5_ib'))
    assert os.path.isdir(tray.sys('module/mlx5_core'))
    assert os.listdir(tray.sys('class/infiniband')) == []
    # an explicit modprobe ignores the blacklist, as kmod does
    assert tray.run('modprobe', 'mlx5_ib').returncode == 0
    assert len(os.listdir(tray.sys('class/infiniband'))) == 5
