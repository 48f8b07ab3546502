# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tray's tool doubles, run as subprocesses against a populated tray tree:
they print and fail like the real tools, and log every call."""

import os
import subprocess

from labtray import TRAYFS


def test_modprobe_unknown_module_fails_like_kmod(make_tray):
    tray = make_tray('nvke-gb200')
    result = tray.run('modprobe', 'foo')
    assert result.returncode == 1
    assert result.stderr == 'modprobe: FATAL: Module foo not found in directory /lib/modules/6.8.0-1028-nvidia-64k\n'
    assert not os.path.exists(tray.sys('module/foo'))
    # no nvidia_peermem build for the GB200 64k kernel; the host has no nvidia driver on NVKE
    assert tray.run('modprobe', 'nvidia_peermem').returncode == 1
    assert tray.run('modprobe', '-q', 'nvidia').stderr == ''
    assert 'modprobe foo\n' in tray.calls()


def test_modprobe_loads_with_dependencies(make_tray):
    tray = make_tray('nvke-gb200')
    assert not os.path.exists(tray.sys('module/rdma_ucm'))
    result = tray.run('modprobe', 'rdma_ucm')
    assert result.returncode == 0, result.stderr
    for mod in ('rdma_ucm', 'rdma_cm', 'ib_cm', 'iw_cm', 'ib_uverbs', 'ib_core'):
        assert os.path.isdir(tray.sys('module/' + mod)), mod
    assert tray.read('module/rdma_ucm/initstate') == 'live\n'
    # dashes are underscores; aliases resolve (rdma-core's rdma.conf lists xprtrdma)
    assert tray.run('modprobe', 'ib-umad').returncode == 0
    assert os.path.isdir(tray.sys('module/ib_umad'))
    assert tray.run('modprobe', 'xprtrdma').returncode == 0
    assert os.path.isdir(tray.sys('module/rpcrdma'))


def test_modprobe_dry_run_and_show_depends(make_tray):
    tray = make_tray('nvke-gb200')
    assert tray.run('modprobe', '-n', 'ib_umad').returncode == 0
    assert not os.path.exists(tray.sys('module/ib_umad'))
    out = tray.run('modprobe', '--show-depends', 'ib_ipoib').stdout.splitlines()
    assert out[-1] == 'insmod /lib/modules/6.8.0-1028-nvidia-64k/kernel/ib_ipoib.ko.zst'
    assert not os.path.exists(tray.sys('module/ib_ipoib'))


def test_netns_mode_follows_modprobe_d_only_at_load_time(make_tray):
    tray = make_tray('rke2-vr200')
    # ib_core was loaded at boot (mlx5_ib needs it): default shared mode
    assert tray.read('module/ib_core/parameters/netns_mode') == 'Y\n'
    tray.write(tray.p('etc/modprobe.d/dranet-rdma-netns-exclusive.conf'), 'options ib_core netns_mode=0\n')
    assert tray.run('modprobe', 'ib_core').returncode == 0
    assert tray.read('module/ib_core/parameters/netns_mode') == 'Y\n'    # already loaded: unchanged
    tray.boot()                                                          # the reboot applies it
    assert tray.read('module/ib_core/parameters/netns_mode') == 'N\n'
    os.unlink(tray.p('etc/modprobe.d/dranet-rdma-netns-exclusive.conf'))
    tray.boot()
    assert tray.read('module/ib_core/parameters/netns_mode') == 'Y\n'


def test_bad_module_option_fails_the_load(make_tray):
    tray = make_tray('nvke-gb200')
    tray.write(tray.p('etc/modprobe.d/x.conf'), 'options ib_umad foo=1\noptions ib_ipoib send_queue_size=lots\n')
    assert tray.run('modprobe', 'ib_umad').returncode == 0          # unknown parameter: ignored by the kernel
    result = tray.run('modprobe', 'ib_ipoib')
    assert result.returncode == 1
    assert result.stderr == "modprobe: ERROR: could not insert 'ib_ipoib': Invalid argument\n"
    assert not os.path.exists(tray.sys('module/ib_ipoib'))


def test_modprobe_remove_rules(make_tray):
    tray = make_tray('nvke-gb200')
    result = tray.run('modprobe', '-r', 'mlx5_core')
    assert result.returncode == 1
    assert 'refuses to unload mlx5_core' in result.stderr
    assert os.path.isdir(tray.sys('module/mlx5_core'))
    assert 'REFUSED modprobe: unload of mlx5_core' in tray.calls()
    result = tray.run('rmmod', 'mlx5_core')
    assert result.returncode == 1 and os.path.isdir(tray.sys('module/mlx5_core'))
    result = tray.run('modprobe', '-r', 'ib_core')
    assert (result.returncode, result.stderr) == (1, 'modprobe: FATAL: Module ib_core is in use.\n')
    assert tray.run('modprobe', 'ib_umad').returncode == 0
    assert tray.run('modprobe', '-r', 'ib_umad').returncode == 0
    assert not os.path.exists(tray.sys('module/ib_umad'))


def test_ipoib_netdevs_follow_ib_ipoib(make_tray):
    tray = make_tray('nvke-gb200')
    assert sorted(os.listdir(tray.sys('class/net'))) == ['enP6p1s0np0']
    assert tray.run('modprobe', 'ib_ipoib').returncode == 0
    assert sorted(os.listdir(tray.sys('class/net'))) == ['enP6p1s0np0', 'ibP16p3s0', 'ibP18p3s0', 'ibP2p3s0',
                                                         'ibp3s0']
    assert os.listdir(tray.sys('class/infiniband/mlx5_0/device/net')) == ['ibp3s0']
    assert tray.read('class/net/ibp3s0/type') == '32\n'
    tray.write_numvfs('mlx5_0', 2)
    assert sorted(os.listdir(tray.sys('bus/pci/devices/0000:03:00.1/net'))) == ['ibp3s0f1']
    assert tray.run('modprobe', '-r', 'ib_ipoib').returncode == 0
    assert sorted(os.listdir(tray.sys('class/net'))) == ['enP6p1s0np0']


def test_mstconfig_query_layout(make_tray):
    tray = make_tray('nvke-gb200')
    result = tray.run('mstconfig', '-d', '0000:03:00.0', 'q')
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[:3] == ['Device #1:', '----------', '']
    assert lines[3] == 'Device type:    ConnectX7'
    assert lines[6] == 'Device:         0000:03:00.0'
    assert lines[8] == 'Configurations:                              Next Boot'
    assert '         NUM_OF_VFS                          16' in lines
    assert '         SRIOV_EN                            True(1)' in lines
    assert '         LINK_TYPE_P1                        IB(1)' in lines
    extended = tray.run('mstconfig', '-e', '-d', '0000:03:00.0', 'q').stdout.splitlines()
    assert extended[8] == 'Configurations:                              Default         Current         Next Boot'
    assert '         NUM_OF_VFS                          16              16              16' in extended
    assert '*        SRIOV_EN                            False(0)        True(1)         True(1)' in extended
    assert '         LINK_TYPE_P1                        IB(1)           IB(1)           IB(1)' in extended
    # the short form of a domain-0 address works, like the real tool
    assert tray.run('mstconfig', '-d', '03:00.0', 'query').returncode == 0
    bf3 = tray.run('mstconfig', '-e', '-d', '0006:01:00.0', 'q').stdout
    assert 'Device type:    BlueField3' in bf3
    assert 'INTERNAL_CPU_MODEL                  EMBEDDED_CPU(1)' in bf3


def test_mstconfig_output_parses_with_the_collection_parser(make_tray):
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import mstconfig
    tray = make_tray('nvke-gb200', ['num-vfs-8'])
    parsed = mstconfig.parse_mstconfig(tray.run('mstconfig', '-e', '-d', '0012:03:00.0', 'q').stdout)
    assert parsed['params']['NUM_OF_VFS']['next_boot']['value'] == 8
    assert parsed['params']['NUM_OF_VFS']['default']['value'] == 16
    assert parsed['params']['LINK_TYPE_P1']['current']['label'] == 'IB'
    plain = mstconfig.parse_mstconfig(tray.run('mstconfig', '-d', '0000:03:00.0', 'q').stdout)
    assert plain['params']['SRIOV_EN']['next_boot']['label'] == 'True'


def test_mstconfig_unknown_device_and_writes(make_tray):
    tray = make_tray('nvke-gb200')
    result = tray.run('mstconfig', '-d', '0000:99:00.0', 'q')
    assert (result.returncode, result.stdout) == (3, '-E- Failed to open the device\n')
    assert tray.calls().count('REFUSED') == 0
    result = tray.run('mstconfig', '-d', '0000:03:00.0', '-y', 'set', 'NUM_OF_VFS=16')
    assert result.returncode != 0
    assert 'refusing "set"' in result.stdout
    result = tray.run('mstconfig', '-d', '0000:03:00.0', 'reset')
    assert result.returncode != 0
    result = tray.run('mstfwreset', '-d', '0000:03:00.0', '--skip_driver', '-l', '3', '-y', 'reset')
    assert result.returncode == 1
    calls = tray.calls()
    assert calls.count('REFUSED') == 3
    assert 'REFUSED mstconfig: mstconfig set (device 0000:03:00.0, NUM_OF_VFS=16)' in calls
    assert 'REFUSED mstfwreset' in calls


def test_grub_probe_double_answers_for_vda1():
    exe = os.path.join(TRAYFS, 'usr/local/lib/gpu-tray-lab/grub-probe')

    def probe(target):
        return subprocess.run([exe, '--target=' + target, '/'], capture_output=True, text=True, check=True).stdout

    assert probe('device') == '/dev/vda1\n'
    assert probe('fs') == 'ext2\n'
    assert len(probe('fs_uuid').strip()) == 36
