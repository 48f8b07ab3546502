# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The seven modules run in-process with real AnsibleModule argument handling."""

import os
import shutil
import socket

import pytest

from ansible_collections.gpu_tray.cluster.plugins.modules import (
    containerd_config,
    hugepage_check,
    ib_pkey_check,
    kernel_cmdline,
    nic_firmware,
    rdma_facts,
    tray_facts,
)
import tooldouble
from trayfixture import DEFAULT_CMDLINE, build_tray, gb200_devices, gb200_devices_with_hidden_vfs, port, set_pkeys
from unithelpers import containerd_tree, fixture_path, write_toml

HOST = socket.gethostname()
RAILS = ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']


def _text(result):
    """Everything a failed check reports: the one-sentence msg, the problems and the fix."""
    return '\n'.join([result.get('msg') or ''] + list(result.get('problems') or []) + [result.get('fix') or ''])


def _one_sentence(result):
    """msg is one short sentence without the machine's host name (Ansible prints the host)."""
    msg = result['msg']
    assert not msg.startswith(HOST + ':') and '\n' not in msg and msg.endswith('.'), msg
    assert 'Fix' not in msg, msg


def _no_traceback(result):
    assert 'exception' not in result or 'Traceback' not in str(result.get('exception', ''))
    assert 'Traceback' not in result.get('msg', '')


# ---- rdma_facts ------------------------------------------------------------------------------------

def test_rdma_facts(run_module, tray):
    result = run_module(rdma_facts, {'sysfs_root': tray['sys'], '_ansible_check_mode': True})
    assert not result.failed and result['changed'] is False
    facts = result['ansible_facts']['gpu_tray_rdma']
    assert facts['rails'] == RAILS
    assert facts['rail_pci_addresses'] == ['0000:03:00.0', '0000:04:00.0', '0000:06:00.0', '0000:07:00.0']
    assert facts['connectx_pfs'] == RAILS and facts['connectx_pci_addresses'] == facts['rail_pci_addresses']
    by_name = dict((d['name'], d) for d in facts['devices'])
    assert by_name['mlx5_2']['is_rail'] is False and by_name['mlx5_2']['pci_device_id'] == '0xa2dc'
    assert [dev['name'] for dev in facts['devices'] if dev['is_rail'] is True] == RAILS      # the real rails
    assert by_name['mlx5_6']['kind'] == 'vf' and by_name['mlx5_6']['physfn'] == '0000:06:00.0'
    assert by_name['mlx5_3']['sriov_numvfs'] == 2 and by_name['mlx5_3']['sriov_totalvfs'] == 16
    assert [vf['pci_address'] for vf in by_name['mlx5_3']['vfs']] == ['0000:06:00.1', '0000:06:00.2']
    assert by_name['mlx5_0']['ports'][0]['rate_gbps'] == 400


def test_rdma_facts_rails_override(run_module, tray):
    result = run_module(rdma_facts, {'sysfs_root': tray['sys'], 'rails': ['mlx5_3', 'mlx5_0', 'mlx5_3']})
    facts = result['ansible_facts']['gpu_tray_rdma']
    assert facts['rails'] == ['mlx5_0', 'mlx5_3']                      # natural order, once each (as documented)
    assert facts['rail_pci_addresses'] == ['0000:03:00.0', '0000:06:00.0']
    bad = run_module(rdma_facts, {'sysfs_root': tray['sys'], 'rails': ['mlx5_9']})
    assert bad.failed and 'option rails' in _text(bad) and 'mlx5_9' in _text(bad) and not bad['msg'].startswith(HOST)


def test_rdma_facts_empty_tree(run_module, tmp_path):
    result = run_module(rdma_facts, {'sysfs_root': str(tmp_path)})
    assert not result.failed and result['ansible_facts']['gpu_tray_rdma']['devices'] == []


# ---- ib_pkey_check ---------------------------------------------------------------------------------

def test_pkey_all_full_members(run_module, tray):
    result = run_module(ib_pkey_check, {'sysfs_root': tray['sys']})
    assert not result.failed and result['changed'] is False
    assert result['checked_devices'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_5', 'mlx5_6', 'mlx5_4']
    assert len(result['ports']) == 6 and all(p['ok'] for p in result['ports'])
    assert result['failed_ports'] == [] and result['skipped_ports'] == [] and result['unchecked_vfs'] == []
    assert not result.warning_texts


def test_pkey_limited_members_on_vfs(run_module, tray):
    """The NVKE reference fabric: ports hold only 0x7fff (limited member)."""
    set_pkeys(tray, 'mlx5_5', ['0x7fff'])
    set_pkeys(tray, 'mlx5_6', ['0x7fff', '0x0000', '0x8001'])
    result = run_module(ib_pkey_check, {'sysfs_root': tray['sys']})
    assert result.failed
    assert result['failed_ports'] == ['mlx5_5 port 1 (VF of 0000:06:00.0)',
                                      'mlx5_6 port 1 (VF of 0000:06:00.0)']
    msg = _text(result)
    _one_sentence(result)
    assert '0x7fff (default partition, limited member)' in msg
    assert '0x8001 (partition 0x0001, full member)' in msg
    assert 'UFM' in msg and 'each VF GUID' in msg and 'PFs alone is not enough' in msg
    assert 'b83f:d203:00a1:b214' in msg                       # the VF's port GUID to add
    assert [p['membership'] for p in result['ports'] if not p['ok']] == ['limited', 'limited']
    report = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'fail_on_error': False})
    assert not report.failed and len(report['failed_ports']) == 2 and report.warning_texts


def test_pkey_tenant_key_low_15_bits(run_module, tray):
    for name in ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4', 'mlx5_5', 'mlx5_6']:
        set_pkeys(tray, name, ['0x7fff', '0x8123'])
    for pkey in ('0x8123', '0x0123', '0123', '8123'):
        result = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'pkey': pkey})
        assert not result.failed, result['msg']
        assert result['pkey'] == '0x8123'
    default = run_module(ib_pkey_check, {'sysfs_root': tray['sys']})
    assert default.failed and len(default['failed_ports']) == 6


@pytest.mark.parametrize('pkey, held, other', [(0x8123, '0x8123', '0x9fbb'), (65535, '0xffff', '0x8053')])
def test_pkey_unquoted_yaml_integer_is_the_number_it_is(run_module, tray, pkey, held, other):
    """YAML reads an unquoted 0x8123 as 33059 and 65535 as 0xffff: the module checks exactly that key."""
    for name in ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4', 'mlx5_5', 'mlx5_6']:
        set_pkeys(tray, name, [held])
    assert not run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'pkey': pkey}).failed
    for name in ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4', 'mlx5_5', 'mlx5_6']:
        set_pkeys(tray, name, [other])                                     # another reading would pass here
    result = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'pkey': pkey})
    assert result.failed and len(result['failed_ports']) == 6
    bad = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'pkey': 70000})
    assert bad.failed and "option pkey" in _text(bad) and '70000 is not a partition key' in _text(bad)
    _no_traceback(bad)


def test_pkey_tenant_limited_member_only(run_module, tray):
    """Ports hold the tenant partition only as limited member (0x0123): pkey=0x8123 must fail as 'limited'."""
    for name in ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4', 'mlx5_5', 'mlx5_6']:
        set_pkeys(tray, name, ['0xffff', '0x0123'])
    result = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'pkey': '0x8123'})
    assert result.failed and result['pkey'] == '0x8123'
    assert len(result['failed_ports']) == 6
    assert [p['membership'] for p in result['ports']] == ['limited'] * 6
    assert '0x0123 (partition 0x0123, limited member)' in _text(result)
    assert 'full member (0x8000 bit)' in _text(result)


def test_pkey_skips_non_infiniband_ports(run_module, tmp_path):
    """A two-port device with port 1 InfiniBand and port 2 Ethernet: port 2 is reported as skipped, not judged."""
    devices = gb200_devices()
    devices.append({'name': 'mlx5_7', 'bdf': '0000:08:00.0', 'device_id': '0x1021',
                    'ports': {1: port(pkeys=('0xffff',)), 2: port(link_layer='Ethernet', pkeys=('0x7fff',))}})
    devices.append({'name': 'mlx5_8', 'bdf': '0000:09:00.0', 'device_id': '0x1021',
                    'ports': {1: port(link_layer='Ethernet', pkeys=('0x7fff',))}})
    tray = build_tray(str(tmp_path / 't'), devices=devices)
    result = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'devices': ['mlx5_7']})
    assert not result.failed, result['msg']
    assert [(p['device'], p['port']) for p in result['ports']] == [('mlx5_7', 1)]
    assert [(p['device'], p['port'], p['link_layer']) for p in result['skipped_ports']] == [('mlx5_7', 2, 'Ethernet')]
    assert any('mlx5_7 port 2 (PF 0000:08:00.0) Ethernet' in w for w in result.warning_texts)
    assert 'All 1 InfiniBand ports are full members' in result['msg']
    eth_only = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'devices': ['mlx5_8']})
    assert eth_only.failed and 'no InfiniBand ports' in _text(eth_only)
    assert 'mlx5_8 port 1 (PF 0000:09:00.0) (Ethernet)' in _text(eth_only)


def test_pkey_reports_vfs_it_cannot_see(run_module, tmp_path):
    """mlx5_3 has sriov_numvfs=4: two VFs visible, one on vfio-pci, one counted but without virtfn link."""
    tray = build_tray(str(tmp_path / 't'), devices=gb200_devices_with_hidden_vfs())
    result = run_module(ib_pkey_check, {'sysfs_root': tray['sys']})
    assert not result.failed                                   # the visible ports are fine; the rest is warned
    assert [(u['pf'], u['pci_address'], u['driver']) for u in result['unchecked_vfs']] == [
        ('mlx5_3', '0000:06:00.3', 'vfio-pci'), ('mlx5_3', None, None)]
    warning = [w for w in result.warning_texts if 'VFs of the checked PFs' in w]
    assert warning and '2 VFs' in warning[0] and '0000:06:00.3 of mlx5_3' in warning[0] and 'vfio-pci' in warning[0]
    assert 'sriov_numvfs is 4 but only 3 virtfn links exist' in warning[0]
    pf_only = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'include_vfs': False})
    assert pf_only['unchecked_vfs'] == [] and not pf_only.warning_texts


def test_pkey_pf_only_without_vfs(run_module, tray):
    set_pkeys(tray, 'mlx5_6', ['0x7fff'])
    result = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'include_vfs': False})
    assert not result.failed and 'mlx5_6' not in result['checked_devices']
    explicit = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'devices': ['mlx5_3']})
    assert explicit.failed and explicit['checked_devices'] == ['mlx5_3', 'mlx5_5', 'mlx5_6']


# ---- nic_firmware ----------------------------------------------------------------------------------

TABLE = {
    '0000:03:00.0': {'e': 'cx7_ok_e.txt', 'plain': 'cx7_ok_no_e.txt'},
    '0000:04:00.0': {'e': 'cx7_nextboot8_e.txt', 'plain': 'cx7_nextboot8_no_e.txt'},
    '0000:06:00.0': {'e': 'cx7_sriov_off_eth_e.txt'},
    '0000:07:00.0': {'e': 'cx7_ok_e.txt', 'plain': 'cx7_ok_no_e.txt'},
}


def test_nic_firmware_ok_and_argv(run_module, tmp_path):
    tool, log = tooldouble.mstconfig(str(tmp_path), TABLE)
    result = run_module(nic_firmware, {'devices': ['0000:03:00.0', '0000:07:00.0'], 'mstconfig_path': tool,
                                       'min_num_vfs': 16, '_ansible_check_mode': True})
    assert not result.failed and result['changed'] is False
    assert result['devices']['0000:03:00.0']['params']['NUM_OF_VFS']['current'] == '16'
    calls = tooldouble.read_log(log)
    assert [c['argv'] for c in calls] == [['-e', '-d', '0000:03:00.0', 'q'], ['-e', '-d', '0000:07:00.0', 'q']]
    assert all(c['LC_ALL'] == 'C' for c in calls)


def test_nic_firmware_from_rdma_facts(run_module, tray, tmp_path):
    facts = run_module(rdma_facts, {'sysfs_root': tray['sys']})['ansible_facts']['gpu_tray_rdma']
    tool, log = tooldouble.mstconfig(str(tmp_path), TABLE)
    result = run_module(nic_firmware, {'rdma_facts': facts, 'mstconfig_path': tool, 'min_num_vfs': 16})
    assert result.failed
    assert sorted(result['failed_devices']) == ['0000:04:00.0', '0000:06:00.0']
    msg = _text(result)
    _one_sentence(result)
    assert '0000:04:00.0: NUM_OF_VFS is current=16, next boot=8 (default=16); expected >= 16 in next boot' in msg
    assert ('0000:06:00.0: SRIOV_EN is current=False(0), next boot=False(0) (default=False(0)); expected True(1) '
            'in current and next boot') in msg
    assert '0000:06:00.0: LINK_TYPE_P1 is current=ETH(2), next boot=ETH(2) (default=IB(1)); expected IB' in msg
    assert 'cold power-cycle' in msg and 'never writes NIC firmware' in msg and 'mstfwreset' in msg
    assert 'could not be queried' not in msg                      # every device was read: no query fix
    assert [c['argv'][2] for c in tooldouble.read_log(log)] == facts['rail_pci_addresses']


def test_nic_firmware_rails_from_sysfs(run_module, tray, tmp_path):
    tool, log = tooldouble.mstconfig(str(tmp_path), TABLE)
    result = run_module(nic_firmware, {'sysfs_root': tray['sys'], 'mstconfig_path': tool, 'fail_on_error': False})
    assert [c['argv'][2] for c in tooldouble.read_log(log)] == ['0000:03:00.0', '0000:04:00.0', '0000:06:00.0',
                                                                '0000:07:00.0']
    assert result['failed_devices'] == ['0000:06:00.0']        # SR-IOV off / ETH; NUM_OF_VFS not checked


def test_nic_firmware_catches_a_rail_switched_to_ethernet(run_module, tmp_path):
    """mlx5_3's firmware says ETH: it is no longer a rail by link layer. The default (the rails) does not query it;
    the expected rails (option rails, or rdma_facts pinned to them) or include_non_rail_connectx do."""
    devices = gb200_devices()
    for dev in devices:
        if dev['name'] == 'mlx5_3':
            dev['ports'] = {1: port(link_layer='Ethernet', rate='400 Gb/sec (4X NDR)')}
    tray = build_tray(str(tmp_path / 'eth'), devices=devices)
    facts = run_module(rdma_facts, {'sysfs_root': tray['sys']})['ansible_facts']['gpu_tray_rdma']
    assert facts['rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_4'] and facts['connectx_pfs'] == RAILS
    pinned = run_module(rdma_facts, {'sysfs_root': tray['sys'], 'rails': RAILS})['ansible_facts']['gpu_tray_rdma']
    tool, log = tooldouble.mstconfig(str(tmp_path), TABLE)
    for args in ({'sysfs_root': tray['sys']}, {'rdma_facts': facts}):
        result = run_module(nic_firmware, dict(args, mstconfig_path=tool))
        assert not result.failed and sorted(result['devices']) == ['0000:03:00.0', '0000:04:00.0', '0000:07:00.0']
    for args in ({'sysfs_root': tray['sys'], 'rails': RAILS}, {'rdma_facts': facts, 'rails': RAILS},
                 {'rdma_facts': pinned}, {'sysfs_root': tray['sys'], 'include_non_rail_connectx': True},
                 {'rdma_facts': facts, 'include_non_rail_connectx': True}):
        result = run_module(nic_firmware, dict(args, mstconfig_path=tool))
        assert result.failed and result['failed_devices'] == ['0000:06:00.0'], args
        assert 'LINK_TYPE_P1 is current=ETH(2), next boot=ETH(2) (default=IB(1)); expected IB' in _text(result)


def test_nic_firmware_leaves_an_ethernet_storage_card_alone(run_module, tmp_path):
    """A ConnectX run as Ethernet on purpose (storage) is not a rail: not queried unless asked for."""
    devices = gb200_devices()
    devices.append({'name': 'mlx5_7', 'bdf': '0000:08:00.0', 'device_id': '0x1021',
                    'ports': {1: port(link_layer='Ethernet')}})
    tray = build_tray(str(tmp_path / 't'), devices=devices)
    rails_ok = dict((bdf, {'e': 'cx7_ok_e.txt'}) for bdf in ('0000:03:00.0', '0000:04:00.0', '0000:06:00.0',
                                                             '0000:07:00.0'))
    tool, log = tooldouble.mstconfig(str(tmp_path), rails_ok)        # 0000:08:00.0 would fail: not in the table
    result = run_module(nic_firmware, {'sysfs_root': tray['sys'], 'mstconfig_path': tool, 'min_num_vfs': 16})
    assert not result.failed, result['msg']
    assert [c['argv'][2] for c in tooldouble.read_log(log)] == ['0000:03:00.0', '0000:04:00.0', '0000:06:00.0',
                                                                '0000:07:00.0']
    broad = run_module(nic_firmware, {'sysfs_root': tray['sys'], 'mstconfig_path': tool, 'min_num_vfs': 16,
                                      'include_non_rail_connectx': True})
    assert broad.failed and broad['failed_devices'] == ['0000:08:00.0']


def test_nic_firmware_rails_option_errors(run_module, tray, tmp_path):
    tool, _log = tooldouble.mstconfig(str(tmp_path), TABLE)
    unknown = run_module(nic_firmware, {'sysfs_root': tray['sys'], 'mstconfig_path': tool, 'rails': ['mlx5_9']})
    assert unknown.failed and 'option rails' in _text(unknown) and 'mlx5_9' in _text(unknown)
    both = run_module(nic_firmware, {'mstconfig_path': tool, 'rails': RAILS, 'devices': ['0000:03:00.0']})
    assert both.failed and 'mutually exclusive' in _text(both) and 'rails' in _text(both)
    no_devices = run_module(nic_firmware, {'mstconfig_path': tool, 'rails': RAILS, 'rdma_facts': {'rails': RAILS}})
    assert no_devices.failed and 'option rdma_facts has no devices' in _text(no_devices)
    for result in (unknown, both, no_devices):
        _no_traceback(result)


def test_nic_firmware_without_e(run_module, tmp_path):
    tool, log = tooldouble.mstconfig(str(tmp_path), TABLE)
    result = run_module(nic_firmware, {'devices': ['0000:04:00.0'], 'mstconfig_path': tool, 'extended': False,
                                       'min_num_vfs': 16, 'fail_on_error': False})
    assert not result.failed and result['failed_devices'] == ['0000:04:00.0']
    assert result['devices']['0000:04:00.0']['extended'] is False
    assert '0000:04:00.0: NUM_OF_VFS is next boot=8; expected >= 16 in next boot' in _text(result)
    assert any('no Current column' in w for w in result.warning_texts)
    assert tooldouble.read_log(log)[0]['argv'] == ['-d', '0000:04:00.0', 'q']


@pytest.mark.parametrize('stream', ['stdout', 'stderr'])
def test_nic_firmware_open_error_is_per_device(run_module, tmp_path, stream):
    tool, _log = tooldouble.mstconfig(str(tmp_path), TABLE, error_stream=stream)
    result = run_module(nic_firmware, {'devices': ['0000:03:00.0', '0000:99:00.0'], 'mstconfig_path': tool})
    assert result.failed
    assert result['devices']['0000:03:00.0']['ok'] is True
    bad = result['devices']['0000:99:00.0']
    assert bad['rc'] == 3 and bad['error'] == 'mstconfig rc=3: Failed to open the device'
    assert '0000:99:00.0: cannot query firmware: mstconfig rc=3: Failed to open the device' in _text(result)
    _no_traceback(result)


def test_nic_firmware_query_error_only_gets_the_query_fix(run_module, tmp_path):
    """Only 'cannot open device': the fix is the address / root / mstflint, not a firmware change."""
    tool, _log = tooldouble.mstconfig(str(tmp_path), TABLE)
    result = run_module(nic_firmware, {'devices': ['0000:99:00.0'], 'mstconfig_path': tool})
    assert result.failed and result['failed_devices'] == ['0000:99:00.0']
    msg = _text(result)
    assert 'lspci -D -d 15b3:' in msg and 'become: true' in msg and 'mstflint is installed' in msg
    assert 'mst start' in msg
    assert 'cold power-cycle' not in msg and 'mstconfig -d <bdf> -y set' not in msg
    mixed = run_module(nic_firmware, {'devices': ['0000:04:00.0', '0000:99:00.0'], 'mstconfig_path': tool,
                                      'min_num_vfs': 16})
    assert 'cold power-cycle' in _text(mixed) and 'lspci -D -d 15b3:' in _text(mixed)


def test_nic_firmware_retries_without_e_on_a_usage_error(run_module, tmp_path):
    tool, log = tooldouble.mstconfig(str(tmp_path), TABLE, no_e=True)
    result = run_module(nic_firmware, {'devices': ['0000:04:00.0'], 'mstconfig_path': tool, 'min_num_vfs': 16})
    assert [c['argv'] for c in tooldouble.read_log(log)] == [['-e', '-d', '0000:04:00.0', 'q'],
                                                             ['-d', '0000:04:00.0', 'q']]
    assert result.failed and result['devices']['0000:04:00.0']['extended'] is False
    assert result['devices']['0000:04:00.0']['command'][1:] == ['-d', '0000:04:00.0', 'q']
    assert '0000:04:00.0: NUM_OF_VFS is next boot=8; expected >= 16 in next boot' in _text(result)
    assert any('retried once without -e' in w and 'invalid argument: -e' in w for w in result.warning_texts)


def test_nic_firmware_cut_off_table_fails(run_module, tmp_path):
    tool, _log = tooldouble.mstconfig(str(tmp_path), {'0000:03:00.0': {'e': 'cx7_cut_off_e.txt'}})
    result = run_module(nic_firmware, {'devices': ['0000:03:00.0'], 'mstconfig_path': tool,
                                       'require_sriov': False})
    assert result.failed and result['failed_devices'] == ['0000:03:00.0']
    assert 'table without parameters' in _text(result) and 'lspci -D -d 15b3:' in _text(result)
    assert result['devices']['0000:03:00.0']['problems'][0]['param'] == 'CONFIGURATIONS'


@pytest.mark.parametrize('rc', [0, 3])
def test_nic_firmware_partial_table_with_errors_fails(run_module, tmp_path, rc):
    """-E- after part of the table: whatever the exit code, the device was not read and the check fails."""
    tool, _log = tooldouble.mstconfig(str(tmp_path), {'0000:03:00.0': {'e': 'cx7_partial_error_e.txt', 'rc': rc}})
    result = run_module(nic_firmware, {'devices': ['0000:03:00.0'], 'mstconfig_path': tool, 'min_num_vfs': 16})
    assert result.failed and result['failed_devices'] == ['0000:03:00.0']
    entry = result['devices']['0000:03:00.0']
    assert entry['ok'] is False and entry['error'] == 'mstconfig rc=%d: Failed to query device current configuration' % rc
    assert 'cannot query firmware' in _text(result) and 'lspci -D -d 15b3:' in _text(result)


def test_nic_firmware_unreadable_num_of_vfs_fails(run_module, tmp_path):
    tool, _log = tooldouble.mstconfig(str(tmp_path), {'0000:03:00.0': {'e': 'cx7_numvfs_unreadable_e.txt'}})
    result = run_module(nic_firmware, {'devices': ['0000:03:00.0'], 'mstconfig_path': tool, 'min_num_vfs': 16})
    assert result.failed and result['failed_devices'] == ['0000:03:00.0']
    problems = result['devices']['0000:03:00.0']['problems']
    assert [(p['param'], p['column'], p['found']) for p in problems] == [('NUM_OF_VFS', 'current', 'N/A')]
    assert "0000:03:00.0: cannot read NUM_OF_VFS (current): 'N/A' is not a number" in _text(result)
    assert 'lspci -D -d 15b3:' in _text(result) and 'cold power-cycle' not in _text(result)
    # NUM_OF_VFS not asked for: the rest of the table is fine
    assert not run_module(nic_firmware, {'devices': ['0000:03:00.0'], 'mstconfig_path': tool}).failed


# ---- kernel_cmdline --------------------------------------------------------------------------------

GB200_ARGS = ['iommu.passthrough=1', 'init_on_alloc=0', 'numa_balancing=disable', 'earlycon',
              'hugepagesz=2M', 'hugepages=5128', 'hugepagesz=1G', 'hugepages=2', 'console=ttyS0,115200n8']


def test_kernel_cmdline_ok(run_module, tray):
    result = run_module(kernel_cmdline, {'proc_root': tray['proc'], 'required': GB200_ARGS,
                                         'forbidden': ['isolcpus'], '_ansible_check_mode': True})
    assert not result.failed and result['changed'] is False
    assert result['missing'] == [] and result['duplicates'] == [] and len(result['present']) == len(GB200_ARGS)


def test_kernel_cmdline_duplicates_missing_forbidden(run_module, tmp_path):
    proc = tmp_path / 'proc'
    proc.mkdir()
    shutil.copy(fixture_path('cmdline', 'vr200_duplicated.txt'), str(proc / 'cmdline'))
    result = run_module(kernel_cmdline, {'proc_root': str(proc), 'required': GB200_ARGS + ['pci=realloc'],
                                         'forbidden': ['hugepagesz=1G']})
    assert result.failed
    msg = _text(result)
    _one_sentence(result)
    assert 'missing: pci=realloc' in msg
    assert 'forbidden but present: hugepagesz=1G' in msg
    assert 'init_on_alloc=0 (x2)' in msg and 'iommu.passthrough=1 (x2)' in msg
    assert 'hugepages=5128 after hugepagesz=2M (x2)' in msg
    lenient = run_module(kernel_cmdline, {'proc_root': str(proc), 'required': GB200_ARGS,
                                          'fail_on_duplicates': False})
    assert not lenient.failed and lenient['duplicates']


def _cmdline(tmp_path, text):
    proc = tmp_path / 'proc'
    proc.mkdir()
    (proc / 'cmdline').write_text(text + '\n')
    return str(proc)


@pytest.mark.parametrize('extra, dup', [
    ('iommu.passthrough=1', {'arg': 'iommu.passthrough=1', 'context': None, 'count': 2}),
    ('earlycon', {'arg': 'earlycon', 'context': None, 'count': 2}),
    ('hugepagesz=1G hugepages=2', {'arg': 'hugepagesz=1G', 'context': None, 'count': 2}),
])
def test_kernel_cmdline_duplicate_alone_fails(run_module, tmp_path, extra, dup):
    """Every required argument present, nothing forbidden: one duplicated argument alone fails the check
    (the preflight role and the post-reboot verification rely on it)."""
    proc = _cmdline(tmp_path, DEFAULT_CMDLINE + ' ' + extra)
    result = run_module(kernel_cmdline, {'proc_root': proc, 'required': GB200_ARGS, 'forbidden': ['isolcpus']})
    assert result['missing'] == [] and result['forbidden_present'] == []
    assert result.failed and result['duplicates'][0] == dup
    assert 'duplicated: %s' % dup['arg'] in _text(result) and 'missing' not in _text(result)
    lenient = run_module(kernel_cmdline, {'proc_root': proc, 'required': GB200_ARGS, 'fail_on_duplicates': False})
    assert not lenient.failed and lenient['duplicates'][0] == dup and lenient['problems'] == []
    assert any(w.startswith('duplicated (not failing the check): %s' % dup['arg']) for w in lenient.warning_texts)


def test_kernel_cmdline_missing_alone_and_forbidden_alone_fail(run_module, tmp_path):
    proc = _cmdline(tmp_path, DEFAULT_CMDLINE)
    missing = run_module(kernel_cmdline, {'proc_root': proc, 'required': GB200_ARGS + ['pci=realloc']})
    assert missing.failed and missing['missing'] == ['pci=realloc'] and missing['duplicates'] == []
    forbidden = run_module(kernel_cmdline, {'proc_root': proc, 'forbidden': ['hugepagesz=1G']})
    assert forbidden.failed and forbidden['forbidden_present'] == ['hugepagesz=1G'] and forbidden['missing'] == []
    bare = run_module(kernel_cmdline, {'proc_root': proc, 'forbidden': ['console']})          # any value
    assert bare.failed and bare['forbidden_present'] == ['console=tty0', 'console=ttyS0,115200n8']
    assert not run_module(kernel_cmdline, {'proc_root': proc, 'forbidden': ['console=ttyS1']}).failed


def test_kernel_cmdline_one_count_per_hugepage_size_is_no_duplicate(run_module, tmp_path):
    proc = _cmdline(tmp_path, 'BOOT_IMAGE=/vmlinuz ro hugepagesz=2M hugepages=512 hugepagesz=1G hugepages=512')
    result = run_module(kernel_cmdline, {'proc_root': proc, 'required': ['hugepages=512']})
    assert not result.failed, result['msg']
    assert result['duplicates'] == []


def test_kernel_cmdline_not_utf8(run_module, tmp_path):
    """A /proc/cmdline with bytes that are not UTF-8 is still checked, with a warning (no traceback)."""
    proc = tmp_path / 'proc'
    proc.mkdir()
    (proc / 'cmdline').write_bytes(b'BOOT_IMAGE=/vmlinuz ro label=caf\xe9 iommu.passthrough=1 init_on_alloc=0\n')
    result = run_module(kernel_cmdline, {'proc_root': str(proc), 'required': ['iommu.passthrough=1'],
                                         'forbidden': ['init_on_alloc']})
    _no_traceback(result)
    assert result.failed and 'forbidden but present: init_on_alloc=0' in _text(result)
    assert result['present'] == ['iommu.passthrough=1']
    assert 'label=caf\\xe9' in result['tokens']
    assert any('not valid UTF-8' in w and str(proc / 'cmdline') in w for w in result.warning_texts)


# ---- hugepage_check --------------------------------------------------------------------------------

def test_hugepage_check_64k_kernel(run_module, tray):
    result = run_module(hugepage_check, {'sysfs_root': tray['sys'], '_ansible_check_mode': True,
                                         'requested': [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}]})
    assert result.failed and result['changed'] is False
    assert result['available_sizes'] == ['2M', '512M', '16G']
    assert 'no 1G huge page pool' in _text(result) and '2M, 512M, 16G' in _text(result)
    assert result['checked'] == 'counts'          # Ansible prints the host
    assert '2M, 512M, 16G' in result['fix'] and result['problems'] == [result['results'][1]['problem']]
    ok = run_module(hugepage_check, {'sysfs_root': tray['sys'], 'requested': [{'size': '2048kB', 'count': 5128},
                                                                              {'size': '16G'}]})
    assert not ok.failed and [r['ok'] for r in ok['results']] == [True, True]


def test_hugepage_check_default_size(run_module, tray):
    base = {'sysfs_root': tray['sys'], 'proc_root': tray['proc'], 'requested': [{'size': '2M', 'count': 5128}]}
    result = run_module(hugepage_check, dict(base, default_size='2M'))
    assert result.failed and result['default_hugepage_size'] == '512M'
    assert 'default huge page size is 512M' in _text(result) and 'default_hugepagesz=2M' in result['fix']
    assert not run_module(hugepage_check, dict(base, default_size='524288kB')).failed
    assert not run_module(hugepage_check, base).failed             # not checked when omitted
    bad = run_module(hugepage_check, dict(base, default_size='big'))
    assert bad.failed and 'option default_size' in _text(bad)


def test_hugepage_check_fix_names_the_sizes_of_this_kernel(run_module, tmp_path):
    """On a 4k-page kernel the fix must offer 2M and 1G, not the 64k kernel's 512M/16G."""
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 100, 1048576: 2}, osrelease='6.8.0-1021-nvidia')
    requested = [{'size': '2M', 'count': 5128}, {'size': '16G', 'count': 1}]
    result = run_module(hugepage_check, {'sysfs_root': t['sys'], 'requested': requested})
    assert result.failed and result['available_sizes'] == ['2M', '1G']
    assert 'pools on this kernel: 2M, 1G)' in _text(result) and 'pools on this kernel: 2M, 1G)' in result['fix']
    assert '512M' not in _text(result) + result['fix']


FRESH_VR200 = [{'size': '2M', 'count': 5128}, {'size': '512M', 'count': 0}]


def test_hugepage_check_sizes_before_the_reboot(run_module, tmp_path):
    """Preflight on a fresh tray: the pools exist but hold 0 pages (hugepages= applies with the reboot)."""
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 0, 524288: 0, 16777216: 0})
    sizes = run_module(hugepage_check, {'sysfs_root': t['sys'], 'check': 'sizes', 'requested': FRESH_VR200})
    assert not sizes.failed and sizes['checked'] == 'sizes' and sizes['problems'] == [] and sizes['fix'] is None
    assert sizes['msg'] == 'Huge page sizes OK (2M, 512M).'
    # the sizes check still refuses a size the kernel has no pool for (1G on a 64k kernel)
    no_1g = run_module(hugepage_check, {'sysfs_root': t['sys'], 'check': 'sizes',
                                        'requested': [{'size': '1G', 'count': 2}]})
    assert no_1g.failed and no_1g['checked'] == 'sizes' and 'no 1G huge page pool' in _text(no_1g)
    # the same tray fails the counts check (the default), naming pool, found count and causes
    counts = run_module(hugepage_check, {'sysfs_root': t['sys'], 'requested': FRESH_VR200})
    assert counts.failed and counts['checked'] == 'counts'
    assert counts['problems'] == ['the 2M pool holds 0 of the 5128 requested pages (nr_hugepages); likely causes: '
                                  'not enough free memory at boot for that many pages, a later GRUB drop-in '
                                  'overriding our hugepages= arguments, or the tray booted another boot entry']
    assert counts['msg'] == 'The 2M huge page pool holds 0 of the 5128 requested pages.'
    _one_sentence(counts)
    assert 'MemTotal' in counts['fix'] and '/etc/default/grub.d' in counts['fix'] and 'cmdline' in counts['fix']
    assert [r['ok'] for r in counts['results']] == [False, True]       # 0 of 0 is enough


def test_hugepage_check_counts_boundary(run_module, tmp_path):
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 5127, 524288: 0})
    short = run_module(hugepage_check, {'sysfs_root': t['sys'], 'requested': [{'size': '2M', 'count': 5128}]})
    assert short.failed and 'holds 5127 of the 5128 requested pages' in _text(short)
    enough = run_module(hugepage_check, {'sysfs_root': t['sys'], 'requested': [{'size': '2M', 'count': 5127}]})
    assert not enough.failed and enough['msg'] == 'Huge page counts OK (2M x 5127).'


def test_hugepage_check_sizes_default_size(run_module, tmp_path):
    """check=sizes: default_size needs a pool of that size, not yet the running default (it comes with the reboot)."""
    t = build_tray(str(tmp_path / 't'), default_hugepage_kb=524288)
    base = {'sysfs_root': t['sys'], 'proc_root': t['proc'], 'check': 'sizes', 'requested': [{'size': '2M'}]}
    assert not run_module(hugepage_check, dict(base, default_size='2M')).failed
    bad = run_module(hugepage_check, dict(base, default_size='1G'))
    assert bad.failed and 'no 1G huge page pool for default_size' in _text(bad) and '2M, 512M, 16G' in bad['fix']


@pytest.mark.parametrize('content, count', [('', 1), ('lots', 1), ('12x', 1), (None, 0)])
def test_hugepage_check_unreadable_count_fails(run_module, tmp_path, content, count):
    """An nr_hugepages without an integer, or none at all, is a failure that names the file, never a pass."""
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 5128})
    path = os.path.join(t['sys'], 'kernel', 'mm', 'hugepages', 'hugepages-2048kB', 'nr_hugepages')
    if content is None:
        os.remove(path)
    else:
        with open(path, 'w') as handle:
            handle.write(content)
    result = run_module(hugepage_check, {'sysfs_root': t['sys'], 'requested': [{'size': '2M', 'count': count}]})
    assert result.failed and 'cannot read the page count of the 2M pool' in _text(result) and path in _text(result)
    assert 'nr_hugepages' in result['fix']
    # the sizes check does not need the count
    assert not run_module(hugepage_check, {'sysfs_root': t['sys'], 'check': 'sizes',
                                           'requested': [{'size': '2M', 'count': 1}]}).failed


def test_hugepage_check_unreadable_meminfo_fails(run_module, tmp_path):
    """default_size set but meminfo missing or without Hugepagesize: fail naming the file."""
    t = build_tray(str(tmp_path / 't'), default_hugepage_kb=None)
    base = {'sysfs_root': t['sys'], 'proc_root': t['proc'], 'requested': [{'size': '2M'}], 'default_size': '2M'}
    missing = run_module(hugepage_check, base)
    meminfo = os.path.join(t['proc'], 'meminfo')
    assert missing.failed and 'cannot read %s for the default huge page size' % meminfo in _text(missing)
    assert missing['default_hugepage_size'] is None and 'proc_root' in missing['fix']
    with open(meminfo, 'w') as handle:
        handle.write('MemTotal:       1003263424 kB\n')
    no_line = run_module(hugepage_check, base)
    assert no_line.failed and 'no Hugepagesize line in %s' % meminfo in _text(no_line)
    # without default_size meminfo is not needed
    assert not run_module(hugepage_check, dict(base, default_size=None)).failed


def test_hugepage_check_report_only(run_module, tmp_path):
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 0})
    result = run_module(hugepage_check, {'sysfs_root': t['sys'], 'fail_on_error': False,
                                         'requested': [{'size': '2M', 'count': 8}]})
    assert not result.failed and result['problems'] and result['msg'] in result.warning_texts


def test_hugepage_check_no_pools(run_module, tmp_path):
    result = run_module(hugepage_check, {'sysfs_root': str(tmp_path), 'requested': [{'size': '2M'}]})
    assert result.failed and 'no huge page pools' in _text(result) and 'sysfs_root' in result['fix']


# ---- containerd_config -----------------------------------------------------------------------------

def _etc(tmp_path, root, dropin):
    return containerd_tree(tmp_path, root, [(dropin, '99-nvidia.toml')] if dropin else [])


def test_containerd_config_mismatch(run_module, tmp_path):
    config, dropdir = _etc(tmp_path, 'root-v3.toml', '99-nvidia-v4.toml')
    result = run_module(containerd_config, {'config_path': config, 'dropin_dir': dropdir,
                                            '_ansible_check_mode': True})
    assert result.failed and result['changed'] is False
    assert result['version'] == 3 and result['dropins'][0]['version'] == 4
    assert 'higher than root config version 3' in _text(result) and 'RUNTIME_CONFIG_SOURCE=file' in _text(result)
    _one_sentence(result)
    assert any('config dump migrates to version 4' in w for w in result.warning_texts)


def test_containerd_config_clean_and_warning(run_module, tmp_path):
    config, dropdir = _etc(tmp_path, 'root-v3.toml', '99-nvidia-v3.toml')
    clean = run_module(containerd_config, {'config_path': config, 'dropin_dir': dropdir,
                                           'runtime_config_source': 'file'})
    assert not clean.failed and not clean.warning_texts
    warned = run_module(containerd_config, {'config_path': config, 'dropin_dir': dropdir})
    assert not warned.failed and warned['toolkit_reads_command'] is True
    assert any('RUNTIME_CONFIG_SOURCE=file' in w for w in warned.warning_texts)


def test_containerd_config_root_without_version(run_module, tmp_path):
    config, dropdir = _etc(tmp_path, 'root-noversion.toml', '99-nvidia-v2.toml')
    result = run_module(containerd_config, {'config_path': config, 'dropin_dir': dropdir,
                                            'runtime_config_source': 'file'})
    assert result.failed and result['version'] is None
    assert 'higher than root config version 1' in _text(result)
    assert any('has no version key' in w for w in result.warning_texts)


def test_containerd_config_root_option(run_module, tmp_path):
    """Under root=<image>, root-v2's import /etc/containerd/conf.d/*.toml is <image>/etc/containerd/conf.d."""
    image = tmp_path / 'image'
    containerd_tree(image / 'etc', 'root-v2.toml', [('99-nvidia-v4.toml', '99-nvidia.toml')])
    result = run_module(containerd_config, {'root': str(image), 'dropin_dir': '/etc/containerd/conf.d',
                                            'runtime_config_source': 'file'})
    dropin = str(image / 'etc' / 'containerd' / 'conf.d' / '99-nvidia.toml')
    assert result.failed and result['config_path'] == str(image / 'etc' / 'containerd' / 'config.toml')
    assert result['dropins'] == [{'path': dropin, 'imported': True, 'imported_by': result['config_path'],
                                  'version': 4, 'error': None}]
    assert 'higher than root config version 2' in _text(result) and not result.warning_texts
    missing = run_module(containerd_config, {'root': str(tmp_path / 'nothing')})
    assert missing.failed and str(tmp_path / 'nothing' / 'etc' / 'containerd' / 'config.toml') in _text(missing)


def test_containerd_config_v4_root(run_module, tmp_path):
    """A version 4 root (containerd 2.2+): a v4 drop-in is fine and the command source warns about nothing."""
    image = tmp_path / 'image'
    write_toml(image / 'etc' / 'containerd' / 'config.toml', 'version = 4\nimports = ["conf.d/*.toml"]\n')
    write_toml(image / 'etc' / 'containerd' / 'conf.d' / '99-nvidia.toml', 'version = 4\n')
    result = run_module(containerd_config, {'root': str(image), 'dropin_dir': '/etc/containerd/conf.d'})
    assert not result.failed and result['version'] == 4 and result['toolkit_reads_command'] is True
    assert [d['version'] for d in result['dropins']] == [4] and not result.warning_texts


def test_containerd_config_imports_not_a_list(run_module, tmp_path):
    config = write_toml(tmp_path / 'config.toml', 'version = 3\nimports = 5\n')
    result = run_module(containerd_config, {'config_path': config})
    assert result.failed and not result['msg'].startswith(HOST + ':')
    assert 'imports = 5 is not a list of strings' in _text(result) and config in _text(result)
    _no_traceback(result)
    quoted = run_module(containerd_config, {'config_path': write_toml(tmp_path / 'v.toml', 'version = "2"\n')})
    assert quoted.failed and "version = '2' is not an integer" in _text(quoted)


# ---- tray_facts ------------------------------------------------------------------------------------

def _facts(run_module, tray, systemctl, **extra):
    args = dict({'sysfs_root': tray['sys'], 'proc_root': tray['proc'], 'systemctl_path': systemctl}, **extra)
    return run_module(tray_facts, args)


def test_tray_facts(run_module, tray, tmp_path, monkeypatch):
    tool, log = tooldouble.systemctl(str(tmp_path), {
        'is-enabled': {'nvidia-imex.service': 'masked'},
        'is-active': {'nvidia-imex.service': 'inactive', 'rke2-agent.service': 'active'},
    })
    real_sysconf = os.sysconf
    monkeypatch.setattr(os, 'sysconf', lambda name: 65536 if name == 'SC_PAGE_SIZE' else real_sysconf(name))
    result = _facts(run_module, tray, tool, os_release_path=fixture_path('os-release', 'ubuntu-26.04'),
                    _ansible_check_mode=True)
    assert not result.failed and result['changed'] is False
    facts = result['ansible_facts']['gpu_tray']
    assert facts['os_id'] == 'ubuntu' and facts['os_version_id'] == '26.04'
    assert facts['kernel_release'] == '6.8.0-1021-nvidia-64k'
    assert facts['kernel_flavour_page_size'] == 65536
    assert facts['page_size'] == 65536                 # the running kernel's page size, not the fixture's
    assert facts['ib_core_netns_mode'] == 'shared'
    assert facts['modules'] == ['ib_core', 'mlx5_core', 'mlx5_ib', 'printk']
    assert facts['loadable_modules'] == ['ib_core', 'mlx5_core', 'mlx5_ib']
    assert facts['nvidia_imex'] == {'unit': 'nvidia-imex.service', 'enabled': 'masked', 'active': 'inactive'}
    assert facts['container_runtime'] == 'rke2-agent'
    assert facts['container_runtime_units']['containerd.service'] == 'inactive'
    calls = tooldouble.read_log(log)
    assert calls[0]['argv'] == ['is-enabled', 'nvidia-imex.service']
    assert calls[1]['argv'][0] == 'is-active' and 'k3s.service' in calls[1]['argv']
    assert all(c['LC_ALL'] == 'C' for c in calls)


def test_tray_facts_reads_the_smbios_identity_placeholders_are_null(run_module, tray, tmp_path):
    dmi = os.path.join(tray['sys'], 'class', 'dmi', 'id')
    os.makedirs(dmi)
    for name, text in (('product_serial', '1794523000123\n'), ('sys_vendor', 'NVIDIA\n'),
                       ('chassis_serial', 'To Be Filled By O.E.M.\n'), ('board_serial', '   \n')):
        with open(os.path.join(dmi, name), 'w') as handle:
            handle.write(text)
    tool, _log = tooldouble.systemctl(str(tmp_path), {})
    assert _facts(run_module, tray, tool)['ansible_facts']['gpu_tray']['dmi'] == {
        'product_serial': '1794523000123', 'sys_vendor': 'NVIDIA', 'chassis_serial': None, 'board_serial': None,
        'product_uuid': None, 'product_name': None}      # absent files (product_serial is root-only on a tray)


@pytest.mark.parametrize('release, flavour', [
    ('5.14.0-427.13.1.el9_4.aarch64+64k', 65536),        # RHEL-family kernel-64k
    ('7.0.0-5-nvidia-bos-64k', 65536),                   # VR200 Ubuntu 26.04
    ('5.14.0-427.13.1.el9_4.aarch64', 4096),
])
def test_tray_facts_page_flavour_both_spellings(run_module, tmp_path, release, flavour):
    t = build_tray(str(tmp_path / 't'), osrelease=release, modules={
        'ib_core': {'initstate': 'live', 'parameters': {'netns_mode': '0'}}})
    tool, _log = tooldouble.systemctl(str(tmp_path), {'is-enabled': {'nvidia-imex.service': 'masked-runtime'},
                                                      'is-active': {'nvidia-imex.service': 'inactive'}})
    facts = _facts(run_module, t, tool)['ansible_facts']['gpu_tray']
    assert facts['kernel_release'] == release and facts['kernel_flavour_page_size'] == flavour
    assert facts['ib_core_netns_mode'] == 'exclusive'                    # netns_mode written as 0
    assert facts['nvidia_imex']['enabled'] == 'masked-runtime'           # a runtime mask (/run) is kept as such


def test_tray_facts_exclusive_missing_unit_no_ib_core(run_module, tray, tmp_path):
    netns = os.path.join(tray['sys'], 'module', 'ib_core', 'parameters', 'netns_mode')
    with open(netns, 'w') as handle:
        handle.write('N\n')
    tool, _log = tooldouble.systemctl(str(tmp_path), {'is-enabled': {}, 'is-active': {'containerd.service': 'active'}})
    facts = _facts(run_module, tray, tool)['ansible_facts']['gpu_tray']
    assert facts['ib_core_netns_mode'] == 'exclusive'
    assert facts['nvidia_imex']['enabled'] == 'not-found'
    assert facts['container_runtime'] == 'containerd'
    shutil.rmtree(os.path.join(tray['sys'], 'module', 'ib_core'))
    gone = _facts(run_module, tray, tool)
    assert gone['ansible_facts']['gpu_tray']['ib_core_netns_mode'] is None


def test_tray_facts_without_systemd(run_module, tray, tmp_path):
    tool, _log = tooldouble.systemctl(str(tmp_path), None)
    result = _facts(run_module, tray, tool)
    facts = result['ansible_facts']['gpu_tray']
    assert not result.failed
    assert facts['nvidia_imex']['active'] == 'unknown' and facts['container_runtime'] is None
    assert 'systemd' in facts['systemd_error']
    nosys = _facts(run_module, tray, str(tmp_path / 'no-systemctl'))
    assert nosys['ansible_facts']['gpu_tray']['systemd_error'] == 'systemctl not found'
    a_dir = _facts(run_module, tray, str(tmp_path))
    assert not a_dir.failed and a_dir['ansible_facts']['gpu_tray']['systemd_error'] == 'systemctl not found'


# ---- bad input: every module fails naming the option or path, without a traceback -------------------------

MODULES = dict((m.__name__.rsplit('.', 1)[1], m) for m in (containerd_config, hugepage_check, ib_pkey_check,
                                                           kernel_cmdline, nic_firmware, rdma_facts))
DEFAULTS = {'ib_pkey_check': {'sysfs_root': '{sys}'}, 'nic_firmware': {'mstconfig_path': '{mst}'},
            'hugepage_check': {'sysfs_root': '{sys}'}, 'rdma_facts': {'sysfs_root': '{sys}'}}
N1 = {'devices': ['0000:03:00.0']}
BAD_INPUT = [   # module, args ('{sys}', '{proc}', '{tmp}', '{mst}': this test's paths), words of msg/problems/fix
    ('rdma_facts', {'rails': {'a': 1}}, ['rails']),
    ('ib_pkey_check', {'pkey': 'xyz'}, ['option pkey', 'xyz']),
    ('ib_pkey_check', {'pkey': '0x12345'}, ['option pkey']),
    ('ib_pkey_check', {'pkey': '0x8000'}, ['option pkey', 'not a usable partition key']),
    ('ib_pkey_check', {'devices': ['mlx5_7']}, ['option devices', 'mlx5_7']),
    ('ib_pkey_check', {'include_vfs': 'perhaps'}, ['include_vfs']),
    ('ib_pkey_check', {'sysfs_root': '{tmp}'}, ['no InfiniBand ports']),
    ('nic_firmware', dict(N1, min_num_vfs=-1), ['option min_num_vfs', '-1']),
    ('nic_firmware', dict(N1, min_num_vfs='many'), ['min_num_vfs']),
    ('nic_firmware', dict(N1, link_type='RoCE'), ['link_type']),
    ('nic_firmware', {'sysfs_root': '/nonexistent-sysfs'}, ['no ConnectX rails', '/nonexistent-sysfs']),
    ('nic_firmware', {'rdma_facts': {'rail_pci_addresses': []}}, ['no ConnectX rails', 'option rdma_facts lists none']),
    ('nic_firmware', {'rdma_facts': {'rails': []}}, ['option rdma_facts']),
    ('nic_firmware', dict(N1, mstconfig_path='/nonexistent/mstconfig'), ['mstconfig not found']),
    ('nic_firmware', dict(N1, mstconfig_path='{tmp}'), ['mstconfig not found']),       # a directory
    ('kernel_cmdline', {'proc_root': '{proc}', 'required': ['a=1 b=2']}, ['option required']),
    ('kernel_cmdline', {'proc_root': '{tmp}/nope'}, ['cannot read', 'proc_root']),
    ('kernel_cmdline', {'proc_root': '{proc}', 'fail_on_duplicates': 'sometimes'}, ['fail_on_duplicates']),
    ('hugepage_check', {'requested': [{'size': '2Q', 'count': 1}]}, ['option requested[0].size', '2Q']),
    ('hugepage_check', {'requested': [{'size': '2M', 'count': -1}]}, ['option requested[0].count', '-1']),
    ('hugepage_check', {'requested': [{'count': 1}]}, ['size']),
    ('hugepage_check', {'requested': [{'size': '2M', 'count': 'lots'}]}, ['count']),
    ('hugepage_check', {'requested': '2M'}, ['requested']),
    ('hugepage_check', {'requested': []}, ['option requested is empty']),
    ('hugepage_check', {'check': 'pages', 'requested': [{'size': '2M'}]}, ['check', 'sizes']),
    ('containerd_config', {'config_path': '{tmp}/none.toml'}, ['cannot read', 'config_path']),
    ('containerd_config', {'config_path': fixture_path('containerd', 'broken.toml')}, ['not valid TOML']),
    ('containerd_config', {'config_path': '{tmp}', 'fail_on_error': 'x'}, ['fail_on_error']),
]


@pytest.mark.parametrize('name, args, words', BAD_INPUT, ids=['%s-%d' % (row[0], i) for i, row in enumerate(BAD_INPUT)])
def test_bad_input_fails_naming_it(run_module, tray, tmp_path, name, args, words):
    paths = {'sys': tray['sys'], 'proc': tray['proc'], 'tmp': str(tmp_path),
             'mst': tooldouble.mstconfig(str(tmp_path), TABLE)[0]}
    args = dict((key, value.format(**paths) if isinstance(value, str) else value)
                for key, value in dict(DEFAULTS.get(name, {}), **args).items())
    result = run_module(MODULES[name], args)
    assert result.failed and all(word in _text(result) for word in words), (words, _text(result))
    _no_traceback(result)
