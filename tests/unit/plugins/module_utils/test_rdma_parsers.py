# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""sysfs InfiniBand parsers on the kernel's exact formats (drivers/infiniband/core/sysfs.c)."""

import os

import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils import rdma
from trayfixture import build_tray, gb200_devices, port, set_pkeys

RAILS = ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']


def tray_with(tmp_path, *extra, **changes):
    """The GB200 tray plus devices ``extra``, with the named devices' fields changed (mlx5_3={'numvfs': 5})."""
    devices = gb200_devices()
    for dev in devices:
        dev.update(changes.get(dev['name'], {}))
    return build_tray(str(tmp_path / 't'), devices=devices + list(extra))


@pytest.mark.parametrize('text, expected', [
    ('4: ACTIVE', (4, 'ACTIVE')), ('1: DOWN', (1, 'DOWN')), ('5: ACTIVE_DEFER', (5, 'ACTIVE_DEFER')),
    ('5: LinkUp', (5, 'LinkUp')), ('3: Disabled', (3, 'Disabled')), ('7: Phy Test', (7, 'Phy Test')),
    ('4: PortConfigurationTraining', (4, 'PortConfigurationTraining')), ('garbage', (None, 'garbage')),
    (None, (None, None)),
])
def test_parse_state(text, expected):
    assert rdma.parse_state(text) == expected


@pytest.mark.parametrize('text, gbps, width, speed', [
    ('400 Gb/sec (4X NDR)', 400, 4, 'NDR'), ('200 Gb/sec (2X NDR)', 200, 2, 'NDR'),
    ('800 Gb/sec (4X XDR)', 800, 4, 'XDR'), ('100 Gb/sec (4X EDR)', 100, 4, 'EDR'),
    ('2.5 Gb/sec (1X SDR)', 2.5, 1, 'SDR'), ('10 Gb/sec (1X QDR)', 10, 1, 'QDR'),
    ('40 Gb/sec (4X FDR10)', 40, 4, 'FDR10'), ('25 Gb/sec (1X)', 25, 1, None),
])
def test_parse_rate(text, gbps, width, speed):
    assert rdma.parse_rate(text) == {'gbps': gbps, 'width': width, 'speed': speed}


def test_parse_rate_unreadable():
    assert rdma.parse_rate(None)['gbps'] is None
    assert rdma.parse_rate('Invalid argument')['gbps'] is None


@pytest.mark.parametrize('text, value', [
    ('0xffff', 0xffff), ('0x7fff', 0x7fff), ('0x8001', 0x8001), ('0x0000', 0), ('0x8123', 0x8123),
    ('0xzz', None), ('ffff', None), ('', None), (None, None),
])
def test_parse_pkey(text, value):
    assert rdma.parse_pkey(text) == value


def test_pkey_membership_semantics():
    # bit 15 is full membership, the low 15 bits the partition
    assert rdma.port_has_full_membership([0xffff], 0xffff)
    assert not rdma.port_has_full_membership([0x7fff], 0xffff)
    assert rdma.port_has_full_membership([0x7fff, 0x8123], 0x8123)
    assert rdma.port_has_full_membership([0x8123], 0x0123)          # low 15 bits compared
    assert not rdma.port_has_full_membership([0x0123], 0x8123)      # limited tenant member
    assert not rdma.port_has_full_membership([0xffff], 0x8123)      # default partition only
    assert not rdma.port_has_full_membership([], 0xffff)
    assert rdma.describe_pkey(0x7fff) == '0x7fff (default partition, limited member)'
    assert rdma.describe_pkey(0x8001) == '0x8001 (partition 0x0001, full member)'


def test_read_pkeys_skips_empty_slots(tmp_path):
    port_dir = tmp_path / 'ports' / '1'
    (port_dir / 'pkeys').mkdir(parents=True)
    for index, value in enumerate(['0xffff', '0x0000', '0x7fff', '0x8001', '0x0000', '0x8000']):
        (port_dir / 'pkeys' / str(index)).write_text(value + '\n')
    # slot 10 sorts after 2 numerically, not lexically
    (port_dir / 'pkeys' / '10').write_text('0x8123\n')
    assert rdma.read_pkeys(str(port_dir)) == [0xffff, 0x7fff, 0x8001, 0x8000, 0x8123]
    # 0x8000 (partition 0) never satisfies a check: partition 0 cannot be requested
    assert not rdma.port_has_full_membership([0x8000], 0xffff)


def test_guid_from_gid():
    assert rdma.guid_from_gid('fe80:0000:0000:0000:b83f:d203:00a1:b2c4') == 'b83f:d203:00a1:b2c4'
    assert rdma.guid_from_gid('fe80::1') is None
    assert rdma.guid_from_gid(None) is None


def test_collect_gb200_tray(tray):
    facts = rdma.collect_rdma(tray['sys'])
    names = [dev['name'] for dev in facts['devices']]
    assert names == ['mlx5_0', 'mlx5_1', 'mlx5_2', 'mlx5_3', 'mlx5_4', 'mlx5_5', 'mlx5_6']
    assert facts['rails'] == RAILS
    by_name = dict((dev['name'], dev) for dev in facts['devices'])
    mlx5_0 = by_name['mlx5_0']
    assert mlx5_0['pci_address'] == '0000:03:00.0'
    assert mlx5_0['pci_device_id'] == '0x1021'
    assert mlx5_0['model'] == 'ConnectX-7'
    assert mlx5_0['kind'] == 'pf' and mlx5_0['physfn'] is None
    assert mlx5_0['sriov_totalvfs'] == 16 and mlx5_0['sriov_numvfs'] == 0
    assert mlx5_0['ports'][0]['state'] == 'ACTIVE' and mlx5_0['ports'][0]['state_num'] == 4
    assert mlx5_0['ports'][0]['phys_state'] == 'LinkUp'
    assert mlx5_0['ports'][0]['rate'] == '400 Gb/sec (4X NDR)'
    assert mlx5_0['ports'][0]['rate_gbps'] == 400
    assert mlx5_0['ports'][0]['pkeys'] == ['0xffff']
    assert mlx5_0['ports'][0]['link_layer'] == 'InfiniBand'
    bf3 = by_name['mlx5_2']
    assert bf3['pci_device_id'] == '0xa2dc' and bf3['netdevs'] == ['enP5p5s0f0np0']
    vf = by_name['mlx5_5']
    assert vf['kind'] == 'vf' and vf['physfn'] == '0000:06:00.0'
    assert vf['sriov_totalvfs'] is None
    assert facts['vfs_by_pf'] == {'0000:06:00.0': ['mlx5_5', 'mlx5_6']}


@pytest.mark.parametrize('change, rails', [
    ({'mlx5_2': {'ports': {1: port(link_layer='InfiniBand')}}}, RAILS),          # a BlueField with an IB port
    ({'mlx5_0': {'ports': {1: port(link_layer='Ethernet')}}}, RAILS[1:]),        # a ConnectX run as Ethernet
], ids=['bluefield-ib', 'connectx-eth'])
def test_bluefield_and_ethernet_connectx_are_not_rails(tmp_path, change, rails):
    assert rdma.collect_rdma(tray_with(tmp_path, **change)['sys'])['rails'] == rails


def test_rails_override_and_natural_order(tmp_path):
    tray = tray_with(tmp_path, {'name': 'mlx5_10', 'bdf': '0000:08:00.0', 'device_id': '0x1021', 'ports': {1: port()}})
    assert rdma.collect_rdma(tray['sys'])['rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4', 'mlx5_10']
    assert rdma.collect_rdma(tray['sys'], rails=['mlx5_1'])['rails'] == ['mlx5_1']
    # an explicit list comes back in natural order, each name once
    assert rdma.collect_rdma(tray['sys'], rails=['mlx5_10', 'mlx5_3', 'mlx5_3', 'mlx5_0'])['rails'] == [
        'mlx5_0', 'mlx5_3', 'mlx5_10']


def test_unreadable_rate_gives_none(tray):
    rate = os.path.join(tray['sys'], 'class', 'infiniband', 'mlx5_1', 'ports', '1', 'rate')
    os.remove(rate)
    dev = [d for d in rdma.collect_rdma(tray['sys'])['devices'] if d['name'] == 'mlx5_1'][0]
    assert dev['ports'][0]['rate'] is None and dev['ports'][0]['rate_gbps'] is None


def test_select_devices_and_check(tray):
    set_pkeys(tray, 'mlx5_6', ['0x7fff'])
    facts = rdma.collect_rdma(tray['sys'])
    selected, unknown = rdma.select_devices(facts)
    assert [dev['name'] for dev in selected] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_5', 'mlx5_6', 'mlx5_4']
    assert unknown == []
    no_vfs, unknown = rdma.select_devices(facts, include_vfs=False)
    assert [dev['name'] for dev in no_vfs] == RAILS
    missing = rdma.select_devices(facts, ['mlx5_9'])[1]
    assert missing == ['mlx5_9']
    results, skipped = rdma.check_pkeys(selected, 0xffff)
    assert skipped == [] and len(results) == 6
    bad = [res for res in results if not res['ok']]
    assert [res['device'] for res in bad] == ['mlx5_6']
    assert bad[0]['membership'] == 'limited'
    assert bad[0]['label'] == 'mlx5_6 port 1 (VF of 0000:06:00.0)'


def test_soft_and_foreign_devices_are_never_rails(tmp_path):
    tray = tray_with(tmp_path, {'name': 'irdma0', 'bdf': '0000:09:00.0', 'device_id': '0x1593', 'vendor': '0x8086',
                                'ports': {1: port()}})
    # rxe0: a soft RoCE device has no `device` link to a PCI function
    rxe = os.path.join(tray['sys'], 'devices', 'virtual', 'infiniband', 'rxe0', 'ports', '1')
    os.makedirs(rxe)
    for name, value in (('link_layer', 'InfiniBand'), ('state', '4: ACTIVE')):
        with open(os.path.join(rxe, name), 'w') as handle:
            handle.write(value + '\n')
    os.symlink('../../devices/virtual/infiniband/rxe0', os.path.join(tray['sys'], 'class', 'infiniband', 'rxe0'))
    facts = rdma.collect_rdma(tray['sys'])
    assert facts['rails'] == RAILS
    assert facts['connectx_pfs'] == RAILS
    rxe_dev = [d for d in facts['devices'] if d['name'] == 'rxe0'][0]
    assert rxe_dev['pci_address'] is None and rxe_dev['ports'][0]['state'] == 'ACTIVE'


def test_pf_lists_its_vfs_from_virtfn_links(tray):
    by_name = dict((d['name'], d) for d in rdma.collect_rdma(tray['sys'])['devices'])
    assert by_name['mlx5_3']['vfs'] == [{'index': 0, 'pci_address': '0000:06:00.1', 'driver': 'mlx5_core'},
                                        {'index': 1, 'pci_address': '0000:06:00.2', 'driver': 'mlx5_core'}]
    assert by_name['mlx5_0']['vfs'] == [] and by_name['mlx5_5']['vfs'] == []


def _tray_with_hidden_vfs(tmp_path, numvfs):
    """mlx5_3 (0000:06:00.0): VFs .1/.2 visible, .3 on vfio-pci, .4 on mlx5_core but its RDMA device elsewhere."""
    return tray_with(tmp_path, {'name': None, 'bdf': '0000:06:00.3', 'device_id': '0x101e', 'physfn': '0000:06:00.0',
                                'driver': 'vfio-pci'},
                     {'name': None, 'bdf': '0000:06:00.4', 'device_id': '0x101e', 'physfn': '0000:06:00.0',
                      'driver': 'mlx5_core'}, mlx5_3={'numvfs': numvfs})


def test_unchecked_vfs_fewer_visible_than_sriov_numvfs(tmp_path):
    tray = _tray_with_hidden_vfs(tmp_path, numvfs=5)
    facts = rdma.collect_rdma(tray['sys'])
    selected, _unknown = rdma.select_devices(facts)
    assert [d['name'] for d in selected] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_5', 'mlx5_6', 'mlx5_4']
    unchecked = rdma.unchecked_vfs(facts, selected)
    assert [(u['pf'], u['pci_address'], u['driver']) for u in unchecked] == [
        ('mlx5_3', '0000:06:00.3', 'vfio-pci'), ('mlx5_3', '0000:06:00.4', 'mlx5_core'), ('mlx5_3', None, None)]
    assert 'vfio-pci' in unchecked[0]['reason']
    assert 'network namespace' in unchecked[1]['reason'] and 'mlx5_ib' in unchecked[1]['reason']
    assert unchecked[2]['reason'] == 'sriov_numvfs is 5 but only 4 virtfn links exist'
    # the default tray: every VF is visible, nothing is unchecked
    default = rdma.collect_rdma(build_tray(str(tmp_path / 'd'))['sys'])
    assert rdma.unchecked_vfs(default, rdma.select_devices(default)[0]) == []


def test_check_pkeys_skips_non_infiniband_ports(tmp_path):
    """A two-port ConnectX with port 1 InfiniBand and port 2 Ethernet: only port 1 has partitions."""
    tray = tray_with(tmp_path, {'name': 'mlx5_7', 'bdf': '0000:08:00.0', 'device_id': '0x1021',
                                'ports': {1: port(pkeys=('0x7fff',)), 2: port(link_layer='Ethernet', pkeys=())}})
    facts = rdma.collect_rdma(tray['sys'])
    assert 'mlx5_7' not in facts['rails'] and 'mlx5_7' in facts['connectx_pfs']
    selected, _unknown = rdma.select_devices(facts, ['mlx5_7'])
    results, skipped = rdma.check_pkeys(selected, 0xffff)
    assert [(r['device'], r['port'], r['ok'], r['membership']) for r in results] == [('mlx5_7', 1, False, 'limited')]
    assert skipped == [{'device': 'mlx5_7', 'port': 2, 'kind': 'pf', 'pci_address': '0000:08:00.0',
                        'link_layer': 'Ethernet', 'label': 'mlx5_7 port 2 (PF 0000:08:00.0)'}]


@pytest.mark.parametrize('link_layer', ['Unknown', None])
def test_unknown_link_layer_port_is_skipped_and_no_rail(tmp_path, link_layer):
    """A port whose link layer reads 'Unknown' (or nothing) is neither judged nor makes its device a rail."""
    tray = tray_with(tmp_path, {'name': 'mlx5_7', 'bdf': '0000:08:00.0', 'device_id': '0x1021',
                                'ports': {1: port(link_layer=link_layer, pkeys=('0xffff',))}})
    facts = rdma.collect_rdma(tray['sys'])
    assert 'mlx5_7' not in facts['rails'] and 'mlx5_7' in facts['connectx_pfs']
    selected, _unknown = rdma.select_devices(facts, ['mlx5_7'])
    results, skipped = rdma.check_pkeys(selected, 0xffff)
    assert results == []
    assert [(s['device'], s['port'], s['link_layer']) for s in skipped] == [('mlx5_7', 1, link_layer)]


@pytest.mark.parametrize('pkeys, required, membership, ok', [
    (['0xffff'], 0xffff, 'full', True),
    (['0x7fff'], 0xffff, 'limited', False),  # the default partition, limited member
    (['0x8123'], 0xffff, 'none', False),  # another partition only
    ([], 0xffff, 'none', False),  # an empty table
    (['0x0123', '0x7fff'], 0x8123, 'limited', False),
    (['0x8123'], 0x0123, 'full', True),  # a full member is also a member of the limited key
    (['0x8124'], 0x8123, 'none', False),
])
def test_membership_full_limited_none(tmp_path, pkeys, required, membership, ok):
    tray = build_tray(str(tmp_path / 't'))
    set_pkeys(tray, 'mlx5_0', pkeys)
    selected, _unknown = rdma.select_devices(rdma.collect_rdma(tray['sys']), ['mlx5_0'])
    results, _skipped = rdma.check_pkeys(selected, required)
    assert [(r['device'], r['membership'], r['ok'], r['pkeys']) for r in results] == [
        ('mlx5_0', membership, ok, pkeys)]


def test_is_rail_on_the_real_rails(tray):
    """The four ConnectX-7 InfiniBand PFs are rails; the BlueField-3 and the VFs are not."""
    facts = rdma.collect_rdma(tray['sys'])
    by_name = dict((dev['name'], dev) for dev in facts['devices'])
    rails = [name for name in sorted(by_name) if rdma.is_rail(by_name[name])]
    assert rails == RAILS
    assert [rdma.is_connectx_pf(by_name[name]) for name in ('mlx5_2', 'mlx5_5', 'mlx5_0')] == [False, False, True]
    assert not rdma.is_rail(dict(by_name['mlx5_0'], ports=[]))                # no port: no rail
    assert not rdma.is_rail(dict(by_name['mlx5_0'], pci_vendor_id='0x8086'))   # not Mellanox


def test_read_virtfns_only_takes_virtfn_links(tray):
    pf = os.path.join(tray['sys'], 'devices', 'pci0000:00', '0000:00:00.0', '0000:06:00.0')
    os.symlink('../0000:06:00.1', os.path.join(pf, 'virtfnx'))         # not virtfn<n>
    os.symlink('../0000:06:00.2', os.path.join(pf, 'resvfn7'))         # not virtfn, same shape
    assert [vf['index'] for vf in rdma.read_virtfns(pf)] == [0, 1]


def test_select_devices_unknown_repeated_and_vf_named_too(tray):
    facts = rdma.collect_rdma(tray['sys'])
    selected, unknown = rdma.select_devices(facts, ['mlx5_9', 'mlx5_3', 'mlx5_5', 'mlx5_3', 'mlx5_0', 'mlx5_2'])
    assert unknown == ['mlx5_9']
    assert [dev['name'] for dev in selected] == ['mlx5_3', 'mlx5_5', 'mlx5_6', 'mlx5_0', 'mlx5_2']
    assert facts['vfs_by_pf'] == {'0000:06:00.0': ['mlx5_5', 'mlx5_6']}         # only VFs, keyed by their PF


def test_unchecked_vfs_of_a_later_pf_and_without_driver(tmp_path):
    """mlx5_4 (after mlx5_3 and its visible VFs in the selection) has a VF with no driver bound."""
    facts = rdma.collect_rdma(tray_with(tmp_path, {'name': None, 'bdf': '0000:07:00.1', 'device_id': '0x101e',
                                                   'physfn': '0000:07:00.0'}, mlx5_4={'numvfs': 1})['sys'])
    selected, _unknown = rdma.select_devices(facts)
    assert [dev['name'] for dev in selected][-1] == 'mlx5_4'
    assert rdma.unchecked_vfs(facts, selected) == [{
        'pf': 'mlx5_4', 'physfn': '0000:07:00.0', 'pci_address': '0000:07:00.1', 'driver': None,
        'reason': 'no driver bound, so no RDMA device'}]


def test_ports_after_a_skipped_port_are_still_judged(tray):
    facts = rdma.collect_rdma(tray['sys'])
    selected, _unknown = rdma.select_devices(facts, ['mlx5_2', 'mlx5_0'])        # the Ethernet BlueField first
    results, skipped = rdma.check_pkeys(selected, 0xffff)
    assert [s['device'] for s in skipped] == ['mlx5_2'] and [(r['device'], r['ok']) for r in results] == [
        ('mlx5_0', True)]


def test_second_port_after_a_skipped_first_port_is_judged(tmp_path):
    facts = rdma.collect_rdma(tray_with(tmp_path, {'name': 'mlx5_7', 'bdf': '0000:08:00.0', 'device_id': '0x1021',
                                                   'ports': {1: port(link_layer='Ethernet', pkeys=()),
                                                             2: port(pkeys=('0x7fff',))}})['sys'])
    results, skipped = rdma.check_pkeys(rdma.select_devices(facts, ['mlx5_7'])[0], 0xffff)
    assert [(s['device'], s['port']) for s in skipped] == [('mlx5_7', 1)]
    assert [(r['device'], r['port'], r['membership']) for r in results] == [('mlx5_7', 2, 'limited')]
