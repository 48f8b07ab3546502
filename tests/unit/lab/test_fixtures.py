# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""populate_tray: the files the kernel would show, per platform and per fault."""

import os

import pytest

from labtray import SYS, fixtures, snapshot

GB200_RAILS = {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0002:03:00.0', 'mlx5_3': '0010:03:00.0',
               'mlx5_4': '0012:03:00.0'}
# a GB200 rail's port and PCI function files, as the kernel shows them
GB200_PORT = {'state': '4: ACTIVE\n', 'phys_state': '5: LinkUp\n', 'rate': '400 Gb/sec (4X NDR)\n',
              'link_layer': 'InfiniBand\n', 'pkeys/0': '0xffff\n'}
GB200_RAIL = {'node_type': '1: CA\n', 'hca_type': 'MT4129\n', 'device/vendor': '0x15b3\n', 'device/device': '0x1021\n',
              'device/sriov_totalvfs': '16\n', 'device/sriov_numvfs': '0\n'}


def test_gb200_rails_have_the_kernel_formats(make_tray):
    tray = make_tray('nvke-gb200')
    names = sorted(os.listdir(tray.sys('class/infiniband')))
    assert names == ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3', 'mlx5_4']
    for name, bdf in GB200_RAILS.items():
        port = 'class/infiniband/%s/ports/1/' % name
        assert tray.reads(port, GB200_PORT) == GB200_PORT
        assert len(os.listdir(tray.sys(port + 'pkeys'))) == 128
        assert set(tray.read(port + 'pkeys/%d' % i) for i in range(1, 128)) == {'0x0000\n'}
        assert tray.read(port + 'lid').startswith('0x')
        assert tray.reads('class/infiniband/%s/' % name, GB200_RAIL) == GB200_RAIL
        guid = tray.read('class/infiniband/%s/node_guid' % name).strip()
        assert len(guid.split(':')) == 4 and all(len(g) == 4 for g in guid.split(':'))
        assert tray.read(port + 'gids/0').strip().endswith(guid)
        # device -> the PCI function, a relative link resolving inside the fixture root
        link = tray.sys('class/infiniband/%s/device' % name)
        assert os.readlink(link) == '../../../%s' % bdf
        real = os.path.realpath(link)
        assert real.startswith(os.path.realpath(tray.sys())) and os.path.basename(real) == bdf
        assert os.path.realpath(tray.sys('bus/pci/devices/%s' % bdf)) == real
        assert not os.path.lexists(tray.sys('class/infiniband/%s/device/physfn' % name))
    # no IPoIB netdevs until ib_ipoib is loaded (the NVKE image does not load it)
    assert not os.path.exists(tray.sys('bus/pci/devices/0000:03:00.0/net'))


def test_gb200_bluefield3_is_not_a_rail(make_tray):
    tray = make_tray('nvke-gb200')
    dpu = {'device/device': '0xa2dc\n', 'hca_type': 'MT41692\n', 'ports/1/link_layer': 'Ethernet\n'}
    assert tray.reads('class/infiniband/mlx5_2/', dpu) == dpu
    assert os.path.basename(os.path.realpath(tray.sys('class/infiniband/mlx5_2/device'))) == '0006:01:00.0'
    # mlx5_core's Ethernet netdev of the DPU exists without ib_ipoib
    assert os.listdir(tray.sys('class/infiniband/mlx5_2/device/net')) == ['enP6p1s0np0']
    rails = [name for name in os.listdir(tray.sys('class/infiniband'))
             if tray.read('class/infiniband/%s/device/device' % name) == '0x1021\n']
    assert sorted(rails) == sorted(GB200_RAILS)


def test_gb200_os_kernel_and_services(make_tray):
    tray = make_tray('nvke-gb200')
    text = tray.text('etc/os-release')
    assert 'VERSION_ID="24.04"' in text and 'VERSION_CODENAME=noble' in text and 'ID=ubuntu' in text
    assert os.readlink(tray.p('etc/os-release')) == '../usr/lib/os-release'
    release = fixtures.PLATFORMS['nvke-gb200']['kernel_release']
    assert release.startswith('6.8.0-10') and release.endswith('-nvidia-64k')
    assert os.path.isfile(tray.p('boot/vmlinuz-' + release))
    assert os.path.isfile(tray.p('boot/initrd.img-' + release))
    assert tray.text('proc/sys/kernel/osrelease') == release + '\n'
    assert os.path.isfile(tray.p('usr/lib/systemd/system/containerd.service'))
    assert os.path.islink(tray.p('etc/systemd/system/multi-user.target.wants/containerd.service'))
    assert not os.path.exists(tray.p('usr/lib/systemd/system/nvidia-imex.service'))
    assert tray.text('etc/containerd/config.toml') == 'version = 3\n'


def test_vr200_rails_os_and_services(make_tray):
    tray = make_tray('rke2-vr200')
    names = sorted(os.listdir(tray.sys('class/infiniband')))
    assert names == ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3']
    rail = {'device/device': '0x1025\n', 'ports/1/rate': '800 Gb/sec (4X XDR)\n', 'ports/1/state': '4: ACTIVE\n'}
    for name in names:
        assert tray.reads('class/infiniband/%s/' % name, rail) == rail
    assert 'VERSION_ID="26.04"' in tray.text('etc/os-release')
    release = fixtures.PLATFORMS['rke2-vr200']['kernel_release']
    assert release.startswith('7.0.0-') and release.endswith('-nvidia-bos-64k')
    wants = tray.p('etc/systemd/system/multi-user.target.wants')
    assert os.readlink(os.path.join(wants, 'nvidia-imex.service')) == '/usr/lib/systemd/system/nvidia-imex.service'
    assert os.path.isfile(tray.p('usr/lib/systemd/system/nvidia-imex.service'))
    assert os.readlink(os.path.join(wants, 'rke2-agent.service')) == \
        '/usr/local/lib/systemd/system/rke2-agent.service'
    assert os.path.isfile(tray.p('usr/lib/systemd/system/containerd.service'))
    assert not os.path.lexists(os.path.join(wants, 'containerd.service'))
    # the daemon doubles keep the daemon's process name (pgrep -x nvidia-imex)
    assert os.readlink(tray.p('usr/local/lib/gpu-tray-lab/idle/nvidia-imex')) == '/bin/sleep'
    assert os.path.isfile(tray.p('etc/nvidia-imex/config.cfg'))


def test_hugepage_pools_of_a_64k_kernel(make_tray):
    tray = make_tray('nvke-gb200')
    pools = sorted(os.listdir(tray.sys('kernel/mm/hugepages')))
    assert pools == ['hugepages-16777216kB', 'hugepages-2048kB', 'hugepages-524288kB']
    for pool in pools:
        files = sorted(os.listdir(tray.sys('kernel/mm/hugepages/' + pool)))
        assert files == ['free_hugepages', 'nr_hugepages', 'nr_hugepages_mempolicy', 'nr_overcommit_hugepages',
                         'resv_hugepages', 'surplus_hugepages']
        assert tray.read('kernel/mm/hugepages/%s/nr_hugepages' % pool) == '0\n'


def test_populate_is_idempotent(make_tray, tmp_path):
    tray = make_tray('rke2-vr200', boot=False)
    first = snapshot(tray.root)
    fixtures.populate_tray(tray.root, 'rke2-vr200', 1, frozenset())
    assert snapshot(tray.root) == first
    # a different fault set rewrites what differs and removes what no longer applies
    fixtures.populate_tray(tray.root, 'rke2-vr200', 1, frozenset(['grub-dropin-override', 'imex-reenabled',
                                                                  'stops-answering-after-reboot']))
    assert os.path.exists(tray.p('etc/default/grub.d/99-zz-override.cfg'))
    stop_unit = 'etc/systemd/system/multi-user.target.wants/gpu-tray-lab-stop-answering.service'
    assert os.readlink(tray.p(stop_unit)) == '/usr/lib/systemd/system/gpu-tray-lab-stop-answering.service'
    fixtures.populate_tray(tray.root, 'rke2-vr200', 1, frozenset())
    assert not os.path.exists(tray.p('etc/default/grub.d/99-zz-override.cfg'))
    assert not os.path.lexists(tray.p(stop_unit))
    assert snapshot(tray.root) == first


def test_fault_table():
    assert set(fixtures.FAULTS) == {
        'pkey-limited-pf', 'pkey-limited-vf', 'num-vfs-8', 'sriov-disabled', 'link-type-eth',
        'grub-dropin-override', 'no-return-from-reboot', 'imex-reenabled', 'hugepage-1g',
        'stops-answering-after-reboot', 'stuck-in-post', 'multus-token-expiring'}
    scopes = {'stuck-in-post': 'supervisor', 'stops-answering-after-reboot': 'tray', 'hugepage-1g': 'inventory',
              'no-return-from-reboot': 'supervisor', 'pkey-limited-pf': 'tray'}
    assert dict((fault, fixtures.fault_scope(fault)) for fault in scopes) == scopes
    assert (fixtures.tray_faults('hugepage-1g'), fixtures.tray_faults('no-return-from-reboot')) == ('inventory', 'tray')
    with pytest.raises(ValueError, match='unknown fault'):
        fixtures.fault_scope('pkey-limited')
    with pytest.raises(ValueError, match='unknown platform'):
        fixtures.hardware('gb300', 1)
    with pytest.raises(ValueError, match='no nvidia-imex'):
        fixtures.hardware('nvke-gb200', 1, frozenset(['imex-reenabled']))
    assert fixtures.inventory_vars('rke2-vr200', frozenset(['hugepage-1g']))['gpu_tray_tuning_hugepages'][1] == \
        {'size': '1G', 'count': 2}


def _diff(make_tray, platform, fault):
    """Paths whose content differs between a clean tray and one with ``fault``."""
    clean = snapshot(make_tray(platform).root)
    faulty = snapshot(make_tray(platform, [fault]).root)
    ignore = ('var/lib/gpu-tray-lab/hw.json', 'var/log/gpu-tray-lab/calls.log', 'var/log/gpu-tray-lab/boot.log',
              'run/gpu-tray-lab/boot_id', fixtures.MULTUS_KUBECONFIG_REL)      # issued when the tray is populated
    return sorted(k for k in set(clean) | set(faulty) if clean.get(k) != faulty.get(k) and k not in ignore)


def test_fault_pkey_limited_pf_changes_one_pkey(make_tray):
    assert _diff(make_tray, 'nvke-gb200', 'pkey-limited-pf') == [
        'var/lib/gpu-tray-lab/sys/devices/pci0012:00/0012:03:00.0/infiniband/mlx5_4/ports/1/pkeys/0']
    tray = make_tray('nvke-gb200', ['pkey-limited-pf'])
    assert tray.read('class/infiniband/mlx5_4/ports/1/pkeys/0') == '0x7fff\n'
    assert tray.read('class/infiniband/mlx5_0/ports/1/pkeys/0') == '0xffff\n'


def test_fault_pkey_limited_vf_survives_vf_recreation(make_tray):
    assert _diff(make_tray, 'nvke-gb200', 'pkey-limited-vf') == []
    tray = make_tray('nvke-gb200', ['pkey-limited-vf'])
    tray.write_numvfs('mlx5_4', 16)
    tray.write_numvfs('mlx5_0', 2)
    vf_names = os.listdir(tray.sys('class/infiniband'))
    assert len(vf_names) == 5 + 18
    for _round in range(2):
        for name in os.listdir(tray.sys('class/infiniband')):
            dev = 'class/infiniband/%s/' % name
            physfn = tray.sys(dev + 'device/physfn')
            if not os.path.islink(physfn):
                continue
            pf = os.path.basename(os.readlink(physfn))
            expected = '0x7fff\n' if pf == '0012:03:00.0' else '0xffff\n'
            assert tray.read(dev + 'ports/1/pkeys/0') == expected
            assert tray.read(dev + 'device/device') == '0x101e\n'
        assert tray.read('class/infiniband/mlx5_4/ports/1/pkeys/0') == '0xffff\n'
        tray.write_numvfs('mlx5_4', 0)
        tray.write_numvfs('mlx5_4', 16)


def test_fault_num_vfs_8(make_tray):
    changed = _diff(make_tray, 'nvke-gb200', 'num-vfs-8')
    assert changed == ['var/lib/gpu-tray-lab/sys/devices/pci0012:00/0012:03:00.0/sriov_totalvfs']
    tray = make_tray('nvke-gb200', ['num-vfs-8'])
    assert tray.read('class/infiniband/mlx5_4/device/sriov_totalvfs') == '8\n'
    messages = tray.write_numvfs('mlx5_4', 16)
    assert 'ERANGE' in messages[0]
    assert tray.read('class/infiniband/mlx5_4/device/sriov_numvfs') == '0\n'
    out = tray.run('mstconfig', '-e', '-d', '0012:03:00.0', 'q', 'NUM_OF_VFS').stdout
    assert '*        NUM_OF_VFS                          16              8               8' in out


def test_fault_sriov_disabled(make_tray):
    changed = _diff(make_tray, 'nvke-gb200', 'sriov-disabled')
    pci = 'var/lib/gpu-tray-lab/sys/devices/pci0012:00/0012:03:00.0/'
    # the PF has no SR-IOV files
    assert changed == sorted(pci + n for n in ('sriov_drivers_autoprobe', 'sriov_numvfs', 'sriov_offset',
                                               'sriov_stride', 'sriov_totalvfs', 'sriov_vf_device'))
    tray = make_tray('nvke-gb200', ['sriov-disabled'])
    assert not os.path.exists(tray.sys('class/infiniband/mlx5_4/device/sriov_totalvfs'))
    # a write cannot create the file (sysfs): the watcher removes it again and no VF appears
    assert 'ENOENT' in tray.write_numvfs('mlx5_4', 16)[0]
    assert not os.path.exists(tray.sys('class/infiniband/mlx5_4/device/sriov_numvfs'))
    assert not os.path.lexists(tray.sys('class/infiniband/mlx5_4/device/virtfn0'))
    out = tray.run('mstconfig', '-d', '0012:03:00.0', 'q', 'SRIOV_EN').stdout
    assert out.splitlines()[-1] == '         SRIOV_EN                            False(0)'


def test_fault_link_type_eth(make_tray):
    tray = make_tray('nvke-gb200', ['link-type-eth'])
    assert tray.read('class/infiniband/mlx5_4/ports/1/link_layer') == 'Ethernet\n'
    assert tray.read('class/infiniband/mlx5_4/ports/1/lid') == '0x0\n'
    assert tray.read('class/infiniband/mlx5_4/device/class') == '0x020000\n'
    assert os.listdir(tray.sys('class/infiniband/mlx5_4/device/net')) == ['enP18p3s0np0']
    assert tray.read('class/infiniband/mlx5_3/ports/1/link_layer') == 'InfiniBand\n'
    out = tray.run('mstconfig', '-d', '0012:03:00.0', 'q').stdout
    assert '         LINK_TYPE_P1                        ETH(2)' in out.splitlines()


def test_fault_grub_dropin_override(make_tray):
    changed = _diff(make_tray, 'nvke-gb200', 'grub-dropin-override')
    assert changed == ['etc/default/grub.d/99-zz-override.cfg', 'proc/cmdline', 'run/gpu-tray-lab/cmdline']
    tray = make_tray('nvke-gb200', ['grub-dropin-override'])
    dropins = sorted(os.listdir(tray.p('etc/default/grub.d')))
    assert dropins[-1] == '99-zz-override.cfg' and '99-nvidia-tuned-cmdline.cfg' < dropins[-1]
    assert 'GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"\n' in tray.text('etc/default/grub.d/99-zz-override.cfg')
    assert tray.text('proc/cmdline').endswith(' ro quiet splash\n')


def test_multus_kubeconfig_on_gb200_and_the_expiring_token_fault(make_tray):
    """GB200's recipe runs multus: its kubeconfig with a token valid a year from the tray's population, or 10 days
    with multus-token-expiring (read by the collection's own parser); VR200 runs no multus."""
    import time
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.multus import token_expiry
    for faults, days in (((), 365), (('multus-token-expiring',), 10)):
        before = time.time()
        tray = make_tray('nvke-gb200', faults, boot=False)
        path = tray.p(fixtures.MULTUS_KUBECONFIG_REL)
        assert oct(os.stat(path).st_mode & 0o777) == '0o600'
        with open(path) as handle:
            token = token_expiry(handle.read())
        assert before + days * 86400 - 1 <= token['exp'] <= time.time() + days * 86400
        assert token['exp'] - token['iat'] == 365 * 86400
    assert not os.path.exists(make_tray('rke2-vr200', boot=False).p(fixtures.MULTUS_KUBECONFIG_REL))
    with pytest.raises(ValueError, match='platform rke2-vr200 runs no multus'):
        fixtures.hardware('rke2-vr200', 1, frozenset(['multus-token-expiring']))


def test_fault_imex_reenabled(make_tray):
    changed = _diff(make_tray, 'rke2-vr200', 'imex-reenabled')
    assert changed == ['etc/systemd/system/multi-user.target.wants/gpu-tray-lab-imex-postinst.service']


def test_inventory_and_supervisor_faults_leave_the_tray_alone(make_tray):
    assert _diff(make_tray, 'nvke-gb200', 'hugepage-1g') == []
    assert _diff(make_tray, 'nvke-gb200', 'no-return-from-reboot') == []


def test_sriov_path_unit_watches_every_pf(make_tray):
    tray = make_tray('nvke-gb200', ['sriov-disabled'])
    with open(tray.p('etc/systemd/system/gpu-tray-lab-sriov.path')) as handle:
        watched = [line.split('=', 1)[1] for line in handle.read().splitlines() if line.startswith('PathChanged=')]
    assert watched == ['/%s/devices/pci%s:00/%s/sriov_numvfs' % (SYS, bdf[:4], bdf)
                       for bdf in ('0000:03:00.0', '0002:03:00.0', '0006:01:00.0', '0010:03:00.0',
                                   '0012:03:00.0')] + [
        '/%s/kernel/mm/hugepages/hugepages-%dkB/nr_hugepages' % (SYS, size) for size in (2048, 524288, 16777216)]


def test_prepare_rootfs_installs_doubles_and_diversions(tmp_path, monkeypatch):
    calls = []

    def fake_run(argv, **kwargs):
        calls.append(argv)
        target = tmp_path / argv[-1].lstrip('/')
        target.rename(str(target) + '.distrib')

    monkeypatch.setattr(fixtures.subprocess, 'run', fake_run)
    (tmp_path / 'usr/sbin').mkdir(parents=True)
    (tmp_path / 'sbin').mkdir()
    (tmp_path / 'usr/sbin/grub-probe').write_text('real')
    (tmp_path / 'sbin/modprobe').symlink_to('/bin/kmod')
    (tmp_path / 'sbin/rmmod').symlink_to('/bin/kmod')
    fixtures.prepare_rootfs(tmp_path)
    assert [c[:6] for c in calls] == [['chroot', str(tmp_path), 'dpkg-divert', '--local', '--rename', '--add']] * 3
    assert os.readlink(str(tmp_path / 'usr/sbin/grub-probe')) == '/usr/local/lib/gpu-tray-lab/grub-probe'
    assert os.readlink(str(tmp_path / 'sbin/modprobe')) == '/usr/local/sbin/modprobe'
    assert os.access(str(tmp_path / 'usr/local/sbin/mstconfig'), os.X_OK)
    assert os.readlink(str(tmp_path / 'etc/systemd/system/sysinit.target.wants/gpu-tray-lab-boot.service')) == \
        '/usr/lib/systemd/system/gpu-tray-lab-boot.service'
    fixtures.prepare_rootfs(tmp_path)          # idempotent: no second diversion
    assert len(calls) == 3


def test_collection_rdma_code_reads_the_fixture(make_tray):
    """gpu_tray.cluster's own sysfs reader sees four rails, the DPU and the VFs as a real tray's."""
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import rdma
    tray = make_tray('nvke-gb200', ['pkey-limited-vf'])
    tray.write_numvfs('mlx5_4', 2)
    facts = rdma.collect_rdma(tray.sys())
    assert facts['rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']
    assert facts['vfs_by_pf'] == {'0012:03:00.0': ['mlx5_5', 'mlx5_6']}
    by_name = dict((dev['name'], dev) for dev in facts['devices'])
    assert by_name['mlx5_4']['sriov_totalvfs'] == 16 and by_name['mlx5_4']['sriov_numvfs'] == 2
    assert by_name['mlx5_5']['kind'] == 'vf' and by_name['mlx5_5']['physfn'] == '0012:03:00.0'
    assert by_name['mlx5_2']['pci_device_id'] == '0xa2dc'


def test_each_tray_has_its_own_smbios_identity_for_the_bmc(make_tray):
    first, second = make_tray('nvke-gb200'), make_tray('rke2-vr200')
    serial = first.read('class/dmi/id/product_serial').strip()
    assert serial == fixtures.identity('nvke-gb200', 1)['product_serial']
    assert serial != second.read('class/dmi/id/product_serial').strip()
    assert first.read('class/dmi/id/product_uuid').strip() == fixtures.identity('nvke-gb200', 1)['product_uuid']
    # a firmware placeholder, as real trays have in some fields (the read turns it into null)
    assert first.read('class/dmi/id/chassis_serial') == 'Not Specified\n'
