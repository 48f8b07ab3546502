# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils.judges: one judge per host check, and the proof that both callers use it.

The first part runs each judge on real output formats (trayfixture sysfs trees, mstconfig and cmdline
fixtures, containerd configs). The second runs each check module on its own and the preflight on a
tray_state read of the same tray, pass and fail, and asserts the same msg, details and fix.
"""

import os

import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils import check_record, judges
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight
from ansible_collections.gpu_tray.cluster.plugins.module_utils.containerd import inspect
from ansible_collections.gpu_tray.cluster.plugins.module_utils.hugepages import read_pools
from ansible_collections.gpu_tray.cluster.plugins.module_utils.mstconfig import (
    EMPTY_TABLE,
    QUERY_ERRORS,
    check_firmware,
    parse_mstconfig,
    query_device,
    summarise,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import collect_rdma, select_devices
from ansible_collections.gpu_tray.cluster.plugins.modules import (
    containerd_config,
    hugepage_check,
    ib_pkey_check,
    kernel_cmdline,
    nic_firmware,
    tray_state,
)
import tooldouble
from trayfixture import build_tray, gb200_devices, gb200_devices_with_hidden_vfs, port, set_pkeys
from unithelpers import containerd_tree, fixture_path, write_toml

RAILS = ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']
BDFS = ['0000:03:00.0', '0000:04:00.0', '0000:06:00.0', '0000:07:00.0']
FULL = 0xffff


def text(*parts):
    with open(fixture_path(*parts)) as handle:
        return handle.read()


# ---- shared helpers ---------------------------------------------------------------------------------------

def test_verdict_is_the_check_record_and_fix_only_when_failed():
    assert judges.verdict('x', False, 'OK.', fix='do it') == {
        'name': 'x', 'status': 'passed', 'message': 'OK.', 'fix': '', 'details': [], 'data': {'notes': []},
        'object': ''}
    failed = judges.verdict('x', 1, 'Bad.', ('a',), ('n',), 'do it', {'k': 1})
    assert failed == {'name': 'x', 'status': 'failed', 'message': 'Bad.', 'fix': 'do it', 'details': ['a', 'n'],
                      'data': {'k': 1, 'notes': ['n']}, 'object': ''}
    # passed, with something it could not judge: a warning (it does not fail a phase), without a fix
    warned = judges.verdict('x', False, 'OK.', notes=['n'], fix='do it')
    assert (warned['status'], warned['details'], warned['fix']) == ('warning', ['n'], '')
    assert check_record.findings(failed) == ['a'] and check_record.findings(warned) == []
    with pytest.raises(ValueError, match="status 'odd' is not one of passed, failed, warning, skipped"):
        check_record.record('x', 'odd', 'm')


def test_name_list_sentence_and_and():
    assert judges.name_list(['a', 'b', 'c', 'd']) == 'a, b, c, d'
    assert judges.name_list(['a', 'b', 'c', 'd', 'e', 'f']) == 'a, b, c, d and 2 more'
    assert judges.name_list(iter(['a', 'b']), limit=1, sep=' ') == 'a and 1 more'
    assert judges.sentence(['the x is wrong', 'the y too']) == 'The x is wrong; the y too.'
    assert judges._and([]) == '' and judges._and(['a']) == 'a'
    assert judges._and(['a', 'b']) == 'a and b' and judges._and(['a', 'b', 'c']) == 'a, b and c'


# ---- P_Keys ---------------------------------------------------------------------------------------------

def pkey_verdict(tray, required=FULL, include_vfs=True, names=None):
    facts = collect_rdma(tray['sys'])
    devices, _unknown = select_devices(facts, names, include_vfs)
    return judges.judge_pkeys(facts, devices, required, include_vfs)


def test_pkeys_pass_on_the_gb200_tray(tmp_path):
    judged = pkey_verdict(build_tray(str(tmp_path / 't')))
    assert not judged['status'] == 'failed' and judged['fix'] == '' and judged['details'] == [] and judged['data']['notes'] == []
    assert judged['message'] == 'All 6 InfiniBand ports are full members of partition 0xffff.'
    data = judged['data']
    assert data['pkey'] == '0xffff' and data['failed_ports'] == [] and data['skipped_ports'] == []
    assert data['checked_devices'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_5', 'mlx5_6', 'mlx5_4']
    assert [res['ok'] for res in data['ports']] == [True] * 6 and data['unchecked_vfs'] == []


def test_pkeys_limited_vf_and_pf_name_guids_keys_and_the_vf_fix(tmp_path):
    tray = build_tray(str(tmp_path / 't'))
    set_pkeys(tray, 'mlx5_6', ['0x7fff'])
    set_pkeys(tray, 'mlx5_1', ['0x8001', '0xzz'])
    judged = pkey_verdict(tray)
    assert judged['status'] == 'failed'
    # the failing ports, by PF: the same words whichever ports a phase checked
    assert judged['message'] == ('2 InfiniBand ports are not full members of partition 0xffff: PF mlx5_1; '
                                 'VF mlx5_6 of mlx5_3.')
    assert judged['details'] == [
        'mlx5_1 port 1 (PF 0000:04:00.0) GUID b83f:d203:00a1:b201 holds 0x8001 (partition 0x0001, full member)',
        'mlx5_6 port 1 (VF of 0000:06:00.0) GUID b83f:d203:00a1:b215 holds 0x7fff (default partition, limited member)']
    assert judged['fix'] == (
        'The fabric manager (UFM, or ib-kubernetes) must add each listed port GUID to partition 0xffff as a full '
        'member (0x8000 bit); 1 of the failing ports are VFs - each VF GUID must be added too (in UFM, or by '
        'ib-kubernetes: its GUID pool and the SriovIBNetwork\'s pKey), fixing the PFs alone is not enough. Links stay '
        'up with limited membership, but RDMA between hosts fails with retry-exceeded.')
    assert judged['data']['failed_ports'] == ['mlx5_1 port 1 (PF 0000:04:00.0)', 'mlx5_6 port 1 (VF of 0000:06:00.0)']


def test_pkeys_pf_only_failure_has_no_vf_advice_and_an_empty_table_says_so(tmp_path):
    tray = build_tray(str(tmp_path / 't'))
    set_pkeys(tray, 'mlx5_0', [])
    judged = pkey_verdict(tray)
    assert judged['details'] == ['mlx5_0 port 1 (PF 0000:03:00.0) GUID b83f:d203:00a1:b200 holds no non-zero keys']
    assert 'VF' not in judged['fix'] and judged['fix'].endswith('fails with retry-exceeded.')
    assert judged['message'] == '1 InfiniBand port is not a member of partition 0xffff: PF mlx5_0.'


def test_pkeys_port_without_guid_and_a_tenant_partition():
    facts = {'class_dir': '/sys/class/infiniband', 'devices': [], 'rails': [], 'vfs_by_pf': {}}
    dev = {'name': 'mlx5_0', 'kind': 'pf', 'pci_address': '0000:03:00.0', 'physfn': None, 'vfs': [],
           'sriov_numvfs': 0, 'ports': [{'port': 1, 'link_layer': 'InfiniBand', 'pkeys': ['0x0123'],
                                         'port_guid': None, 'state': 'ACTIVE'}]}
    judged = judges.judge_pkeys(facts, [dev], 0x8123)
    assert judged['details'] == ['mlx5_0 port 1 (PF 0000:03:00.0) holds 0x0123 (partition 0x0123, limited member)']
    assert judged['message'] == ('1 InfiniBand port is a limited member of partition 0x8123, not a full member: '
                                 'PF mlx5_0.')
    assert 'partition 0x8123 as a full member' in judged['fix']


def test_pkeys_without_infiniband_ports_fails_naming_what_was_found(tmp_path):
    devices = [{'name': 'mlx5_8', 'bdf': '0000:09:00.0', 'device_id': '0x1021', 'totalvfs': 0, 'numvfs': 0,
                'netdevs': [], 'ports': {1: port(link_layer='Ethernet'), 2: port(link_layer=None)}}]
    tray = build_tray(str(tmp_path / 't'), devices=devices)
    judged = pkey_verdict(tray, names=['mlx5_8'])
    class_dir = os.path.join(tray['sys'], 'class', 'infiniband')
    assert judged['status'] == 'failed' and judged['message'] == 'No InfiniBand ports to check under %s.' % class_dir
    assert check_record.findings(judged) == [
        'no InfiniBand ports under %s (devices found: mlx5_8; rails: none; ports skipped as not InfiniBand: '
        'mlx5_8 port 1 (PF 0000:09:00.0) (Ethernet), mlx5_8 port 2 (PF 0000:09:00.0) (unknown)); expected the '
        'ConnectX rails' % class_dir]
    assert judged['details'] == check_record.findings(judged) + judged['data']['notes']
    assert judged['data']['notes'] == ['not checked (link layer is not InfiniBand, no partitions): '
                                       'mlx5_8 port 1 (PF 0000:09:00.0) Ethernet, mlx5_8 port 2 (PF 0000:09:00.0) unknown']
    assert judged['fix'] == judges.PKEY_NO_PORTS_FIX
    bare = pkey_verdict(build_tray(str(tmp_path / 'bare'), devices=[]))
    assert bare['details'][0].startswith('no InfiniBand ports under ') and 'devices found: none; rails: none)' in \
        bare['details'][0] and bare['data']['notes'] == []


def test_pkeys_vfs_the_host_cannot_see_are_a_note_not_a_failure(tmp_path):
    tray = build_tray(str(tmp_path / 't'), devices=gb200_devices_with_hidden_vfs())
    judged = pkey_verdict(tray)
    # passed, but not every VF could be judged: a warning that names them
    assert judged['status'] == 'warning' and judged['fix'] == '' and judged['details'] == judged['data']['notes']
    assert judged['data']['notes'] == [
        '2 VFs of the checked PFs have no RDMA device under %s, so their P_Keys were not checked: 0000:06:00.3 of '
        'mlx5_3 (bound to vfio-pci, not mlx5_core, so no RDMA device on the host); a VF without virtfn link of mlx5_3 '
        '(sriov_numvfs is 4 but only 3 virtfn links exist). Check them where they live (the pod network namespace, '
        'or the VM/vfio user).' % os.path.join(tray['sys'], 'class', 'infiniband')]
    pf_only = pkey_verdict(tray, include_vfs=False)
    assert pf_only['data']['notes'] == [] and pf_only['data']['unchecked_vfs'] == [] and pf_only['status'] == 'passed'
    assert pf_only['message'].startswith('All 4 InfiniBand ports')


# ---- NIC firmware: the one mstconfig run ----------------------------------------------------------------------

class FakeModule(object):
    """run_command as AnsibleModule's, answering from a list of (rc, stdout, stderr)."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = []

    def run_command(self, argv, environ_update=None):
        self.calls.append((argv, environ_update))
        return self.answers.pop(0)


def test_query_device_runs_one_read_only_query_with_untranslated_output():
    module = FakeModule([(0, text('mstconfig', 'cx7_ok_e.txt'), None)])
    record = query_device(module, '/usr/bin/mstconfig', '0000:03:00.0')
    assert module.calls == [(['/usr/bin/mstconfig', '-e', '-d', '0000:03:00.0', 'q'],
                             {'LC_ALL': 'C', 'LANG': 'C', 'LANGUAGE': 'C'})]
    assert record == {'bdf': '0000:03:00.0', 'command': ['/usr/bin/mstconfig', '-e', '-d', '0000:03:00.0', 'q'],
                      'rc': 0, 'stdout': text('mstconfig', 'cx7_ok_e.txt'), 'stderr': '', 'retried_without_e': False,
                      'usage_error': None}
    plain = FakeModule([(0, None, '')])
    assert query_device(plain, 'mstconfig', '0000:03:00.0', extended=False)['command'] == \
        ['mstconfig', '-d', '0000:03:00.0', 'q'] and plain.calls[0][0] == ['mstconfig', '-d', '0000:03:00.0', 'q']


def test_query_device_retries_once_without_e_only_on_a_usage_error():
    usage = (1, '-E- invalid argument: -e\n', '')
    module = FakeModule([usage, (0, text('mstconfig', 'cx7_ok_no_e.txt'), '')])
    record = query_device(module, 'mstconfig', '0000:03:00.0')
    assert [call[0] for call in module.calls] == [['mstconfig', '-e', '-d', '0000:03:00.0', 'q'],
                                                  ['mstconfig', '-d', '0000:03:00.0', 'q']]
    assert record['retried_without_e'] is True and record['usage_error'] == 'invalid argument: -e'
    assert record['command'] == ['mstconfig', '-d', '0000:03:00.0', 'q'] and record['rc'] == 0
    on_stderr = FakeModule([(2, '', '-E- Unknown option: -e\n'), (0, '', '')])
    assert query_device(on_stderr, 'mstconfig', '0000:03:00.0')['retried_without_e'] is True
    # the device's own error, a usage text with rc 0, or a query already without -e: no second call
    for answers, extended in (([(3, '-E- Failed to open the device\n', '')], True),
                              ([(0, '-E- invalid argument: -e\n', '')], True),
                              ([(1, '-E- invalid argument: -e\n', '')], False)):
        module = FakeModule(answers)
        record = query_device(module, 'mstconfig', '0000:99:00.0', extended=extended)
        assert len(module.calls) == 1 and record['retried_without_e'] is False and record['usage_error'] is None


# ---- NIC firmware: entries ----------------------------------------------------------------------------------

def raw(fixture=None, bdf='0000:03:00.0', rc=0, stdout=None, stderr='', **extra):
    out = text('mstconfig', fixture) if fixture else (stdout or '')
    return dict({'bdf': bdf, 'rc': rc, 'stdout': out, 'stderr': stderr, 'command': ['mstconfig', 'q']}, **extra)


def test_firmware_entry_of_a_good_and_a_wrong_table():
    good = judges.firmware_entry(raw('cx7_ok_e.txt', name='mlx5_0'), min_num_vfs=16)
    assert good['ok'] is True and good['error'] is None and good['extended'] is True and good['problems'] == []
    assert good['name'] == 'mlx5_0' and good['bdf'] == '0000:03:00.0' and good['command'] == ['mstconfig', 'q']
    assert good['params']['NUM_OF_VFS'] == {'modified': False, 'default': '16', 'current': '16', 'next_boot': '16'}
    assert good['info']['device_type'] == 'ConnectX7' and good['rc'] == 0
    assert good['retried_without_e'] is False and good['usage_error'] is None
    wrong = judges.firmware_entry(raw('cx7_nextboot8_e.txt', bdf='0000:04:00.0'), min_num_vfs=16)
    assert wrong['ok'] is False
    assert [(p['param'], p['column']) for p in wrong['problems']] == [('NUM_OF_VFS', 'next_boot')]
    # the spec's options reach the checker: no VF minimum, no SR-IOV, ETH links wanted
    assert judges.firmware_entry(raw('cx7_nextboot8_e.txt'))['ok'] is True
    eth = raw('cx7_sriov_off_eth_e.txt')
    assert judges.firmware_entry(eth, require_sriov=False, link_type='ETH')['ok'] is True
    assert [p['param'] for p in judges.firmware_entry(eth, require_sriov=True, link_type='ETH')['problems']] == [
        'SRIOV_EN', 'SRIOV_EN']
    assert [p['param'] for p in judges.firmware_entry(eth, require_sriov=False)['problems']] == ['LINK_TYPE_P1'] * 2


def test_firmware_entry_of_outputs_that_cannot_be_judged():
    opened = judges.firmware_entry(raw('open_error.txt', rc=3))
    assert opened['error'] == 'mstconfig rc=3: Failed to open the device' and opened['extended'] is None
    assert opened['problems'] == [] and opened['params'] == {} and opened['ok'] is False
    on_stderr = judges.firmware_entry(raw(rc=3, stdout='', stderr='-E- Failed to open the device\n'))
    assert on_stderr['error'] == 'mstconfig rc=3: Failed to open the device'
    partial = judges.firmware_entry(raw('cx7_partial_error_e.txt', rc=0))
    assert partial['error'] == 'mstconfig rc=0: Failed to query device current configuration'
    garbage = judges.firmware_entry(raw(rc=1, stdout='one\ntwo\nthree\nfour\n'))
    assert garbage['error'].startswith('mstconfig rc=1, unparsable output (') and \
        garbage['error'].endswith('): two | three | four')
    from_stderr = judges.firmware_entry(raw(rc=1, stdout='x\n', stderr='segfault\n'))
    assert from_stderr['error'].endswith('): segfault')
    empty = judges.firmware_entry(raw(rc=2, stdout='Configurations:      Next Boot\n', stderr='no access\n'))
    assert empty['error'] == 'mstconfig rc=2: no access'
    empty_out = judges.firmware_entry(raw(rc=2, stdout='Configurations:      Next Boot\n'))
    assert empty_out['error'] == 'mstconfig rc=2: Configurations:      Next Boot'
    cut = judges.firmware_entry(raw('cx7_cut_off_e.txt'))
    assert cut['error'] is None and [p['param'] for p in cut['problems']] == [EMPTY_TABLE]


def test_firmware_lines_name_device_parameter_and_both_values():
    wrong = judges.firmware_entry(raw('cx7_sriov_off_eth_e.txt', bdf='0000:06:00.0'), min_num_vfs=16)
    assert judges.firmware_lines(wrong) == [
        '0000:06:00.0: SRIOV_EN is current=False(0), next boot=False(0) (default=False(0)); expected True(1) in '
        'current and next boot',
        '0000:06:00.0: NUM_OF_VFS is current=0, next boot=0 (default=0); expected >= 16 in current and next boot',
        '0000:06:00.0: LINK_TYPE_P1 is current=ETH(2), next boot=ETH(2) (default=IB(1)); expected IB in current and '
        'next boot']
    plain = judges.firmware_entry(raw('cx7_nextboot8_no_e.txt', bdf='0000:04:00.0'), min_num_vfs=16)
    assert judges.firmware_lines(plain) == ['0000:04:00.0: NUM_OF_VFS is next boot=8; expected >= 16 in next boot']
    unreadable = judges.firmware_entry(raw('cx7_numvfs_unreadable_e.txt'), min_num_vfs=16)
    assert judges.firmware_lines(unreadable) == [
        "0000:03:00.0: cannot read NUM_OF_VFS (current): 'N/A' is not a number"]
    twice = dict(unreadable, problems=unreadable['problems'] * 2)
    assert len(judges.firmware_lines(twice)) == 2           # each unreadable column once per problem
    missing = judges.firmware_entry(raw(stdout='Configurations:   Next Boot\n   NUM_OF_PF   1\n'), min_num_vfs=4)
    assert judges.firmware_lines(missing) == ['0000:03:00.0: SRIOV_EN is not reported by the tool; expected True(1)',
                                              '0000:03:00.0: NUM_OF_VFS is not reported by the tool; expected >= 4']
    cut = judges.firmware_entry(raw('cx7_cut_off_e.txt'))
    assert judges.firmware_lines(cut) == ['0000:03:00.0: ' + cut['problems'][0]['detail']]
    # -E- lines with a table: the tool's error for firmware_entry; the checker's problem for a parsed table
    errors = judges.firmware_entry(raw(stdout='-E- Failed to query PCI_ATOMIC_MODE\nConfigurations:   Next Boot\n'
                                              '   SRIOV_EN   True(1)\n'))
    assert errors['error'] == 'mstconfig rc=0: Failed to query PCI_ATOMIC_MODE' and errors['problems'] == []
    table = parse_mstconfig('-E- Failed to query PCI_ATOMIC_MODE\nConfigurations:   Next Boot\n   SRIOV_EN   True(1)\n')
    checked = dict(errors, error=None, problems=check_firmware(table), params=summarise(table))
    assert [p['param'] for p in checked['problems']] == [QUERY_ERRORS]
    assert judges.firmware_lines(checked) == ['0000:03:00.0: ' + checked['problems'][0]['detail']]
    opened = judges.firmware_entry(raw('open_error.txt', rc=3))
    assert judges.firmware_lines(opened) == ['0000:03:00.0: cannot query firmware: mstconfig rc=3: Failed to open '
                                             'the device']


def entries(*specs):
    """One judged entry per (fixture, bdf, rc); min_num_vfs 16 as on GB200."""
    return [judges.firmware_entry(raw(fixture, bdf=bdf, rc=rc, name='mlx5_%d' % index), min_num_vfs=16)
            for index, (fixture, bdf, rc) in enumerate(specs)]


def test_judge_firmware_pass_names_the_devices():
    judged = judges.judge_firmware(entries(*[('cx7_ok_e.txt', bdf, 0) for bdf in BDFS]))
    assert not judged['status'] == 'failed' and judged['fix'] == '' and judged['details'] == [] and judged['data']['notes'] == []
    assert judged['message'] == 'NIC firmware settings OK on 0000:03:00.0, 0000:04:00.0, 0000:06:00.0, 0000:07:00.0.'
    assert judged['data']['failed_devices'] == [] and judged['data']['unknown'] == []
    many = judges.judge_firmware(entries(*[('cx7_ok_e.txt', '0000:0%d:00.0' % n, 0) for n in range(1, 7)]))
    assert many['message'] == ('NIC firmware settings OK on 0000:01:00.0, 0000:02:00.0, 0000:03:00.0, 0000:04:00.0 '
                               'and 2 more.')


def test_judge_firmware_wrong_unreadable_and_unknown_each_get_their_words_and_fix():
    judged = judges.judge_firmware(entries(('cx7_ok_e.txt', BDFS[0], 0), ('cx7_nextboot8_e.txt', BDFS[1], 0),
                                           ('open_error.txt', BDFS[2], 3), ('cx7_cut_off_e.txt', BDFS[3], 0)),
                                   unknown=['mlx5_9'], class_dir='/sys/class/infiniband')
    assert judged['status'] == 'failed' and judged['data']['failed_devices'] == BDFS[1:]
    assert judged['message'] == ('NIC firmware settings are wrong on 1 of 4 devices (0000:04:00.0); the firmware settings '
                                 'of 2 of 4 devices could not be read (0000:06:00.0, 0000:07:00.0); rail mlx5_9 has no PCI '
                                 'function.')
    assert judged['details'][0] == 'rails mlx5_9 have no PCI function under /sys/class/infiniband'
    assert judged['details'][1] == ('0000:04:00.0: NUM_OF_VFS is current=16, next boot=8 (default=16); expected >= 16 '
                                    'in next boot')
    assert judged['details'][2].startswith('0000:06:00.0: cannot query firmware: mstconfig rc=3')
    assert judged['fix'] == ' '.join([judges.FIRMWARE_FIX, judges.FIRMWARE_QUERY_FIX, judges.FIRMWARE_RAIL_FIX])
    only_wrong = judges.judge_firmware(entries(('cx7_nextboot8_e.txt', BDFS[1], 0)))
    assert only_wrong['fix'] == judges.FIRMWARE_FIX
    assert only_wrong['message'] == 'NIC firmware settings are wrong on 1 of 1 devices (0000:04:00.0).'
    only_unreadable = judges.judge_firmware(entries(('cx7_numvfs_unreadable_e.txt', BDFS[0], 0)))
    assert only_unreadable['fix'] == judges.FIRMWARE_QUERY_FIX
    assert only_unreadable['message'] == 'The firmware settings of 1 of 1 devices could not be read (0000:03:00.0).'


def test_judge_firmware_rails_without_pci_function_or_nothing_to_query():
    one = judges.judge_firmware(entries(('cx7_ok_e.txt', BDFS[0], 0)), unknown=['mlx5_9'])
    assert one['message'] == 'Rail mlx5_9 has no PCI function, so its firmware was not checked.'
    assert one['fix'] == judges.FIRMWARE_RAIL_FIX and one['data']['failed_devices'] == []
    two = judges.judge_firmware(entries(('cx7_ok_e.txt', BDFS[0], 0)), unknown=['mlx5_8', 'mlx5_9'])
    assert two['message'] == 'Rails mlx5_8, mlx5_9 have no PCI function, so their firmware was not checked.'
    wrong_and_two = judges.judge_firmware(entries(('cx7_nextboot8_e.txt', BDFS[1], 0)), unknown=['mlx5_8', 'IB_9'])
    assert wrong_and_two['message'].endswith('; rails mlx5_8, IB_9 have no PCI function.')      # names as they are
    none_found = judges.judge_firmware([], unknown=['mlx5_9'])
    assert none_found['message'] == 'The NIC firmware could not be queried: rail mlx5_9 has no PCI function.'
    assert none_found['fix'] == ' '.join([judges.FIRMWARE_QUERY_FIX, judges.FIRMWARE_RAIL_FIX])
    nothing = judges.judge_firmware([])
    assert nothing['status'] == 'failed' and nothing['details'] == ['no devices to query']
    assert nothing['message'] == 'The NIC firmware could not be queried.' and nothing['fix'] == judges.FIRMWARE_QUERY_FIX
    missing_tool = judges.judge_firmware([], unknown=['mlx5_9'], error='mstconfig not found (mstconfig_path=x)')
    assert missing_tool['message'] == 'The NIC firmware could not be queried.'
    assert missing_tool['details'][0] == 'mstconfig not found (mstconfig_path=x)'
    queried_but_tool_error = judges.judge_firmware(entries(('cx7_ok_e.txt', BDFS[0], 0)), error='boom')
    assert queried_but_tool_error['status'] == 'failed' and queried_but_tool_error['message'] == 'The NIC firmware could not be queried.'


def test_judge_firmware_notes_what_was_checked_only_in_part():
    retried = judges.firmware_entry(raw('cx7_ok_no_e.txt', retried_without_e=True, usage_error='invalid argument: -e'))
    plain = judges.firmware_entry(raw('cx7_ok_no_e.txt', bdf=BDFS[1]))
    failed_retry = judges.firmware_entry(raw('open_error.txt', bdf=BDFS[2], rc=3, retried_without_e=True))
    judged = judges.judge_firmware([retried, plain])
    assert judged['status'] == 'warning' and judged['details'] == judged['data']['notes']
    assert judged['data']['notes'] == [
        '0000:03:00.0: mstconfig rejected its arguments (invalid argument: -e); retried once without -e, so only '
        'next-boot values can be checked. Install a current mstflint to check the running values too.',
        '0000:04:00.0: mstconfig printed no Current column (queried without -e); only next-boot values were checked']
    assert 'an mstflint without -e' in judges.judge_firmware([failed_retry])['data']['notes'][0]


# ---- huge pages -----------------------------------------------------------------------------------------------

def pools_of(tmp_path, pools, name='t'):
    tray = build_tray(str(tmp_path / name), hugepages=pools)
    return read_pools(tray['sys']) + (tray,)


def test_hugepages_sizes_and_counts_pass(tmp_path):
    base, pools, _tray = pools_of(tmp_path, {2048: 5128, 524288: 0, 16777216: 0})
    requested = [{'size': '2M', 'count': 5128}, {'size': '512M', 'count': 0}]
    sizes = judges.judge_hugepages(pools, requested, check='sizes', base=base, current_default_kb=524288)
    assert not sizes['status'] == 'failed' and sizes['message'] == 'Huge page sizes OK (2M, 512M).' and sizes['fix'] == ''
    assert sizes['data'] == {'checked': 'sizes', 'results': sizes['data']['results'],
                             'available_sizes': ['2M', '512M', '16G'], 'default_hugepage_size': '512M', 'notes': []}
    counts = judges.judge_hugepages(pools, requested, base=base)
    assert not counts['status'] == 'failed' and counts['message'] == 'Huge page counts OK (2M x 5128, 512M x 0).'
    assert counts['data']['default_hugepage_size'] is None


def test_hugepages_missing_1g_on_a_64k_kernel_names_the_pools_and_the_smaller_sizes(tmp_path):
    base, pools, _tray = pools_of(tmp_path, {2048: 0, 524288: 0, 16777216: 0})
    judged = judges.judge_hugepages(pools, [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}],
                                    check='sizes', base=base)
    assert judged['status'] == 'failed' and judged['message'] == 'The running kernel has no 1G huge page pool.'
    assert judged['details'] == ['the running kernel has no 1G huge page pool (pools on this kernel: 2M, 512M, 16G)']
    assert judged['fix'] == ('Request only sizes the running kernel has (pools on this kernel: 2M, 512M, 16G) in the '
                             'tuning profile, or boot a kernel with the needed page size, then reboot. On this '
                             '64k-page kernel request 2M or 512M pages instead of 1G.')
    four_k = pools_of(tmp_path, {2048: 0, 1048576: 0}, 'fourk')
    other = judges.judge_hugepages(four_k[1], [{'size': '16G'}], check='sizes', base=four_k[0])
    assert other['message'] == 'The running kernel has no 16G huge page pool.' and '512M' not in other['fix']
    assert 'pools on this kernel: 2M, 1G)' in other['fix']
    two = judges.judge_hugepages(pools, [{'size': '1G'}, {'size': '32M'}], check='sizes', base=base)
    assert two['message'] == 'The running kernel has no 1G, 32M huge page pool.'


def test_hugepages_counts_short_unreadable_and_no_pools(tmp_path):
    base, pools, tray = pools_of(tmp_path, {2048: 0, 524288: 1, 16777216: 0})
    one = judges.judge_hugepages(pools, [{'size': '2M', 'count': 5128}], base=base, proc_root=tray['proc'])
    assert one['message'] == 'The 2M huge page pool holds 0 of the 5128 requested pages.'
    assert one['details'][0].startswith('the 2M pool holds 0 of the 5128 requested pages (nr_hugepages); likely')
    assert one['fix'] == ('Compare MemTotal in %s/meminfo with the pages requested, make sure no later '
                          '/etc/default/grub.d drop-in overrides GRUB_CMDLINE_LINUX_DEFAULT, and that %s/cmdline '
                          'carries the hugepages= arguments (else the tray booted another entry); then reboot.'
                          % (tray['proc'], tray['proc']))
    both = judges.judge_hugepages(pools, [{'size': '2M', 'count': 8}, {'size': '512M', 'count': 2}], base=base)
    assert both['message'] == 'The 2M, 512M huge page pools hold fewer pages than requested.'
    assert len(both['details']) == 2 and '/proc/meminfo' in both['fix']
    boundary = judges.judge_hugepages(pools, [{'size': '512M', 'count': 1}], base=base)
    assert not boundary['status'] == 'failed'
    pools[2048]['nr_hugepages'] = None
    unread = judges.judge_hugepages(pools, [{'size': '2M', 'count': 1}, {'size': '1G'}], base=base)
    assert unread['message'] == ('The running kernel has no 1G huge page pool; the page count of the 2M huge page pool '
                                 'cannot be read.')
    assert unread['fix'].endswith('Check that sysfs_root is right and that nr_hugepages of each requested pool is '
                                  'readable.') and unread['fix'].startswith('Request only sizes')
    assert not judges.judge_hugepages(pools, [{'size': '2M', 'count': 1}], check='sizes', base=base)['status'] == 'failed'
    empty = judges.judge_hugepages({}, [{'size': '2M', 'count': 1}], base='/x/kernel/mm/hugepages')
    assert empty['details'] == ['no huge page pools under /x/kernel/mm/hugepages',
                                'the running kernel has no 2M huge page pool (pools on this kernel: none)']
    assert empty['message'] == 'The running kernel has no 2M huge page pool.'
    assert empty['fix'] == "Check that sysfs_root is the tray's /sys (/x/kernel/mm/hugepages has no pools)."


def test_hugepages_default_size(tmp_path):
    base, pools, _tray = pools_of(tmp_path, {2048: 8, 524288: 0})
    want = [{'size': '2M', 'count': 8}]
    wrong = judges.judge_hugepages(pools, want, base=base, default_size_kb=2048, current_default_kb=524288)
    assert wrong['message'] == 'The default huge page size is 512M, not 2M.'
    assert wrong['details'] == ['the default huge page size is 512M (Hugepagesize in /proc/meminfo), expected 2M']
    assert wrong['fix'] == 'Add default_hugepagesz=2M to the kernel command line, then reboot.'
    assert not judges.judge_hugepages(pools, want, base=base, default_size_kb=2048, current_default_kb=2048)['status'] == 'failed'
    no_line = judges.judge_hugepages(pools, want, base=base, default_size_kb=2048, proc_root='/p')
    assert no_line['details'] == ['cannot read the default huge page size: no Hugepagesize line in /p/meminfo']
    assert no_line['message'] == 'The default huge page size cannot be read.' and 'proc file system' in no_line['fix']
    unread = judges.judge_hugepages(pools, want, base=base, default_size_kb=2048, meminfo_read=False)
    assert unread['details'] == ['cannot read /proc/meminfo for the default huge page size']
    assert unread['message'] == 'The default huge page size cannot be read.'
    assert unread['fix'] == "Check that proc_root is the tray's /proc."
    # before the reboot only a pool of that size must exist
    sizes = judges.judge_hugepages(pools, want, check='sizes', base=base, default_size_kb=2048,
                                   current_default_kb=524288, meminfo_read=False)
    assert not sizes['status'] == 'failed'
    no_pool = judges.judge_hugepages(pools, want, check='sizes', base=base, default_size_kb=1048576)
    assert no_pool['message'] == 'The running kernel has no 1G huge page pool for the default size.'
    assert no_pool['details'] == ['the running kernel has no 1G huge page pool for default_size']
    assert no_pool['fix'] == 'Set default_hugepagesz to a size this kernel has (2M, 512M).'
    assert judges.judge_hugepages({}, want, check='sizes', base=base, default_size_kb=1048576)['details'] == [
        'no huge page pools under %s' % base, 'the running kernel has no 2M huge page pool (pools on this kernel: none)']


# ---- kernel command line ---------------------------------------------------------------------------------------

GB200_ARGS = ['iommu.passthrough=1', 'init_on_alloc=0', 'numa_balancing=disable', 'earlycon', 'hugepagesz=2M',
              'hugepages=5128', 'hugepagesz=1G', 'hugepages=2']


def test_cmdline_pass_and_lenient_duplicates():
    tuned = text('cmdline', 'gb200_tuned.txt').strip()
    judged = judges.judge_cmdline(tuned, GB200_ARGS, ['isolcpus'])
    assert not judged['status'] == 'failed' and judged['message'] == 'Kernel command line OK (8 required arguments present).'
    assert judged['data']['cmdline'] == tuned and judged['data']['missing'] == [] and judged['data']['notes'] == []
    doubled = text('cmdline', 'vr200_duplicated.txt').strip()
    lenient = judges.judge_cmdline(doubled, GB200_ARGS, fail_on_duplicates=False)
    assert lenient['status'] == 'warning' and lenient['details'] == lenient['data']['notes']
    assert lenient['data']['notes'] == ['duplicated (not failing the check): %s' % judges._duplicate_text(
        lenient['data']['duplicates'])]


def test_cmdline_missing_forbidden_and_duplicated_are_named():
    doubled = text('cmdline', 'vr200_duplicated.txt').strip()
    judged = judges.judge_cmdline(doubled, GB200_ARGS + ['pci=realloc'], ['hugepagesz=1G'])
    assert judged['status'] == 'failed'
    assert judged['message'] == ('The booted kernel command line lacks pci=realloc, has the forbidden hugepagesz=1G and '
                                 'repeats console=tty0 console=ttyS0,115200n8 init_on_alloc=0 iommu.passthrough=1 and 6 more.')
    assert judged['details'] == [
        'missing: pci=realloc', 'forbidden but present: hugepagesz=1G',
        'duplicated: console=tty0 (x2) console=ttyS0,115200n8 (x2) init_on_alloc=0 (x2) iommu.passthrough=1 (x2) '
        'numa_balancing=disable (x2) earlycon (x2) hugepagesz=2M (x2) hugepages=5128 after hugepagesz=2M (x2) '
        'hugepagesz=1G (x2) hugepages=2 after hugepagesz=1G (x2)']
    assert judged['fix'] == judges.CMDLINE_FIX % '/proc/cmdline'
    assert judged['fix'].startswith('Expected every required argument once and no forbidden one in /proc/cmdline.')
    missing = judges.judge_cmdline('ro quiet', ['a=1'], path='/x/cmdline')
    assert missing['message'] == 'The booted kernel command line lacks a=1.' and '/x/cmdline' in missing['fix']
    forbidden = judges.judge_cmdline('ro isolcpus=1-3', forbidden=['isolcpus'])
    assert forbidden['message'] == 'The booted kernel command line has the forbidden isolcpus=1-3.'
    repeated = judges.judge_cmdline('ro x ro', [], [])
    assert repeated['message'] == 'The booted kernel command line repeats ro.' and repeated['details'] == [
        'duplicated: ro (x2)']
    with pytest.raises(ValueError):
        judges.judge_cmdline('ro', ['a=1 b=2'])


def test_cmdline_that_could_not_be_read():
    judged = judges.judge_cmdline(None, ['a'], path='/p/cmdline', error='cannot read /p/cmdline: gone')
    assert judged == {'name': 'kernel_cmdline', 'status': 'failed', 'message': 'The kernel command line could not be read.',
                      'details': ['cannot read /p/cmdline: gone'], 'object': '',
                      'fix': "Check that proc_root is the tray's /proc (/p/cmdline could not be read).",
                      'data': {'path': '/p/cmdline', 'notes': []}}


# ---- containerd ------------------------------------------------------------------------------------------------

def containerd_verdict(tmp_path, root_name, dropins=(), source=None):
    config, dropdir = containerd_tree(tmp_path / 'etc', root_name, dropins)
    return judges.judge_containerd(*inspect(config, dropdir, source)), config


def test_containerd_pass_with_and_without_drop_ins(tmp_path):
    judged, config = containerd_verdict(tmp_path / 'a', 'root-v3.toml', [('99-nvidia-v3.toml', '99-nvidia.toml')],
                                        'file')
    assert not judged['status'] == 'failed' and judged['fix'] == '' and judged['data']['notes'] == []
    assert judged['message'] == 'The containerd root config is version 3; its drop-in is not above it.'
    assert judged['data']['config_path'] == config and judged['data']['problems'] == []
    two, _config = containerd_verdict(tmp_path / 'c', 'root-noversion.toml',
                                      [('99-nvidia-v2.toml', 'a.toml'), ('99-nvidia-v2.toml', 'b.toml')], 'file')
    assert two['status'] == 'failed'        # a root without version is 1 to containerd
    three, _config = containerd_verdict(tmp_path / 'd', 'root-v3.toml',
                                        [('99-nvidia-v2.toml', 'a.toml'), ('99-nvidia-v3.toml', 'b.toml')], 'file')
    assert three['message'] == 'The containerd root config is version 3; none of its 2 drop-ins is above it.'
    noversion = judges.judge_containerd(dict(three['data'], version=None), [], [])
    assert noversion['message'].startswith('The containerd root config is version 1 (no version key); ')
    bare, _config = containerd_verdict(tmp_path / 'b', 'root-v3.toml')
    assert bare['message'] == 'The containerd root config is version 3; it has no drop-ins.'
    assert bare['data']['notes'] and 'RUNTIME_CONFIG_SOURCE=file' in bare['data']['notes'][0]
    assert bare['data']['warnings'] == bare['data']['notes']


def test_containerd_drop_ins_above_the_root_or_unloadable(tmp_path):
    above, _config = containerd_verdict(tmp_path / 'a', 'root-noversion.toml',
                                        [('99-nvidia-v2.toml', '99-nvidia.toml')], 'file')
    dropin = os.path.join(str(tmp_path / 'a'), 'etc', 'containerd', 'conf.d', '99-nvidia.toml')
    assert above['status'] == 'failed' and above['message'] == ('The containerd drop-in %s declares a version above the root '
                                                                'config\'s 1.' % dropin)
    assert 'higher than root config version 1' in above['details'][0] and above['fix'] == judges.CONTAINERD_VERSION_FIX
    assert any('has no version key' in note for note in above['data']['notes'])
    two, _config = containerd_verdict(tmp_path / 'b', 'root-v3.toml',
                                      [('99-nvidia-v4.toml', '98-a.toml'), ('99-nvidia-v4.toml', '99-b.toml')], 'file')
    assert two['message'].startswith('The containerd drop-ins ') and two['message'].endswith(
        '99-b.toml declare a version above the root config\'s 3.')
    broken, _config = containerd_verdict(tmp_path / 'c', 'root-v3.toml', [('broken.toml', '50-broken.toml'),
                                                                          ('99-nvidia-v4.toml', '99-nvidia.toml')], 'file')
    assert broken['message'].endswith('99-nvidia.toml declares a version above the root config\'s 3; containerd cannot '
                                      'load %s.' % broken['data']['dropins'][0]['path'])
    assert broken['fix'] == ' '.join([judges.CONTAINERD_VERSION_FIX, judges.CONTAINERD_LOAD_FIX])
    only_broken = judges.judge_containerd(dict(broken['data'], dropins=broken['data']['dropins'][:1]),
                                          broken['data']['problems'][:1])
    assert only_broken['message'].startswith('Containerd cannot load ') and only_broken['fix'] == judges.CONTAINERD_LOAD_FIX


def test_containerd_root_config_that_could_not_be_read():
    gone = judges.judge_containerd(config_path='/etc/containerd/config.toml')
    assert gone == {'name': 'containerd_config', 'status': 'failed',
                    'message': 'The containerd configuration could not be read.',
                    'details': ['/etc/containerd/config.toml does not exist'], 'object': '',
                    'fix': judges.CONTAINERD_READ_FIX, 'data': {'notes': []}}
    broken = judges.judge_containerd(error='x is not valid TOML', config_path='x')
    assert broken['details'] == ['x is not valid TOML'] and broken['status'] == 'failed'


# ---- the same verdict from the module and from the preflight -----------------------------------------------------

UNITS = {'is-enabled': {}, 'is-active': {'containerd.service': 'active'}}
TABLE = dict((bdf, {'e': 'cx7_ok_e.txt', 'plain': 'cx7_ok_no_e.txt'}) for bdf in BDFS)


@pytest.fixture
def systemctl(tmp_path):
    directory = tmp_path / 'systemctl'
    directory.mkdir()
    return tooldouble.systemctl(str(directory), UNITS)[0]


def read_state(run_module, tray, systemctl, **extra):
    args = {'sysfs_root': tray['sys'], 'proc_root': tray['proc'], 'systemctl_path': systemctl,
            'os_release_path': fixture_path('os-release', 'ubuntu-24.04'),
            'containerd_config_path': os.path.join(tray['root'], 'none.toml')}
    args.update(extra)
    state = run_module(tray_state, args)
    assert not state.failed, state
    return state


def judged_by_preflight(state, check, **spec):
    return preflight.evaluate(state, dict(spec, checks=[check]))[0]


def assert_same(alone, checked, variable=None):
    """The module's msg/problems/fix and its warnings (the notes) are the preflight check's message/details/fix, and
    the record the module returns is the preflight's (a refusal of an input names the module's option where the
    preflight names the inventory variable: ``variable``)."""
    notes = [w for w in alone.warning_texts if w != alone['msg']]
    message = checked['message'].replace(variable, 'option requested') if variable else checked['message']
    fix = checked['fix'].replace(variable, 'option requested') if variable else checked['fix']
    assert message == alone['msg']
    assert checked['details'] == alone['problems'] + notes
    assert fix == (alone['fix'] or '')
    assert (checked['status'] == 'failed') == bool(alone['problems'])
    [record] = alone['checks']
    assert dict(record, message=message, fix=fix) == dict(record, message=alone['msg'], fix=alone['fix'] or '')
    assert (record['name'], record['status'], record['details']) == (
        checked['name'], checked['status'], checked['details'])


@pytest.mark.parametrize('case', ['pass', 'limited', 'no-ports', 'unseen-vfs'])
def test_pkeys_module_and_preflight_say_the_same(run_module, tmp_path, systemctl, case):
    devices = gb200_devices()
    if case == 'no-ports':
        devices = []
    if case == 'unseen-vfs':
        devices[2]['numvfs'] = 3
        devices.append({'name': None, 'bdf': '0000:06:00.3', 'device_id': '0x101e', 'physfn': '0000:06:00.0',
                        'driver': 'vfio-pci'})
    tray = build_tray(str(tmp_path / 't'), devices=devices)
    if case == 'limited':
        set_pkeys(tray, 'mlx5_6', ['0x7fff'])
        set_pkeys(tray, 'mlx5_0', ['0x7fff'])
    checked = judged_by_preflight(read_state(run_module, tray, systemctl), 'pkeys', pkey='0xffff', include_vfs=True)
    alone = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'fail_on_error': False})
    assert_same(alone, checked)
    assert (checked['status'] == 'failed') == (case in ('limited', 'no-ports'))
    assert checked['data']['failed_ports'] == alone['failed_ports']
    if case == 'unseen-vfs':
        assert checked['details'] and not checked['status'] == 'failed'


@pytest.mark.parametrize('case', ['pass', 'wrong', 'old-mstflint'])
def test_firmware_module_and_preflight_say_the_same(run_module, tmp_path, systemctl, case):
    table = dict(TABLE)
    if case == 'wrong':
        table[BDFS[1]] = {'e': 'cx7_nextboot8_e.txt'}
        table[BDFS[2]] = {'e': 'cx7_sriov_off_eth_e.txt'}
        table[BDFS[3]] = {'e': 'open_error.txt', 'rc': 3}
    directory = tmp_path / 'mst'
    directory.mkdir()
    mst, _log = tooldouble.mstconfig(str(directory), table, no_e=case == 'old-mstflint')
    tray = build_tray(str(tmp_path / 't'))
    state = read_state(run_module, tray, systemctl, query_firmware=True, rails=RAILS, mstconfig_path=mst)
    checked = judged_by_preflight(state, 'nic_firmware', firmware=True, min_num_vfs=16)
    alone = run_module(nic_firmware, {'sysfs_root': tray['sys'], 'rails': RAILS, 'mstconfig_path': mst,
                                      'min_num_vfs': 16, 'fail_on_error': False})
    assert_same(alone, checked)
    assert (checked['status'] == 'failed') == (case == 'wrong')
    assert checked['data']['failed_devices'] == alone['failed_devices']
    # the same entries; the preflight also knows each rail's name
    assert [entry['name'] for entry in checked['data']['devices']] == RAILS
    assert dict((entry['bdf'], dict(entry, name=None)) for entry in checked['data']['devices']) == alone['devices']
    if case == 'old-mstflint':
        assert len(checked['details']) == 4 and all('retried once without -e' in d for d in checked['details'])


@pytest.mark.parametrize('check, nr_2m, requested', [
    ('sizes', 0, [{'size': '2M', 'count': 5128}]), ('counts', 0, [{'size': '2M', 'count': 5128}]),
    ('counts', 5128, [{'size': '2M', 'count': 5128}]),
    ('sizes', 0, [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}]),
])
def test_hugepages_module_and_preflight_say_the_same(run_module, tmp_path, systemctl, check, nr_2m, requested):
    tray = build_tray(str(tmp_path / 't'), hugepages={2048: nr_2m, 524288: 0, 16777216: 0})
    checked = judged_by_preflight(read_state(run_module, tray, systemctl), 'hugepages', hugepages=requested,
                                  hugepages_check=check)
    alone = run_module(hugepage_check, {'sysfs_root': tray['sys'], 'proc_root': tray['proc'], 'requested': requested,
                                        'check': check, 'fail_on_error': False})
    # a size without a pool refuses the input: the preflight names the inventory variable, the module its option
    assert_same(alone, checked, 'gpu_tray_tuning_hugepages' if check == 'sizes' else None)
    if len(requested) == 2:
        assert checked['message'] == ('gpu_tray_tuning_hugepages asks for 1G huge pages, but the running kernel has '
                                      'no 1G huge page pool.')
        assert 'in gpu_tray_tuning_hugepages' in checked['fix']
    assert checked['data']['results'] == alone['results'] and checked['data']['checked'] == alone['checked']
    assert (checked['status'] == 'failed') == (nr_2m == 0 and check == 'counts' or len(requested) == 2)


@pytest.mark.parametrize('cmdline, required, forbidden', [
    (None, ['iommu.passthrough=1', 'hugepages=5128'], ['isolcpus']),
    ('BOOT_IMAGE=/vmlinuz ro isolcpus=1-3 init_on_alloc=0 init_on_alloc=0', ['pci=realloc'], ['isolcpus']),
])
def test_cmdline_module_and_preflight_say_the_same(run_module, tmp_path, systemctl, cmdline, required, forbidden):
    tray = build_tray(str(tmp_path / 't'), **({'cmdline': cmdline} if cmdline else {}))
    checked = judged_by_preflight(read_state(run_module, tray, systemctl), 'kernel_cmdline',
                                  cmdline_required=required, cmdline_forbidden=forbidden)
    alone = run_module(kernel_cmdline, {'proc_root': tray['proc'], 'required': required, 'forbidden': forbidden,
                                        'fail_on_error': False})
    assert_same(alone, checked)
    assert (checked['status'] == 'failed') == bool(cmdline)
    for key in ('tokens', 'present', 'missing', 'forbidden_present', 'duplicates', 'cmdline'):
        assert checked['data'][key] == alone[key]


@pytest.mark.parametrize('root_name, dropin', [('root-v3.toml', '99-nvidia-v3.toml'),
                                               ('root-v2.toml', '99-nvidia-v3.toml'),
                                               ('root-v3.toml', None)])
def test_containerd_module_and_preflight_say_the_same(run_module, tmp_path, systemctl, root_name, dropin):
    image = tmp_path / 'image'
    containerd_tree(image / 'etc', root_name, [(dropin, '99-nvidia.toml')] if dropin else [])
    tray = build_tray(str(tmp_path / 't'))
    state = read_state(run_module, tray, systemctl, containerd_config_path='/etc/containerd/config.toml',
                       containerd_root=str(image))
    checked = judged_by_preflight(state, 'containerd_config')
    alone = run_module(containerd_config, {'root': str(image), 'fail_on_error': False})
    assert_same(alone, checked)
    assert (checked['status'] == 'failed') == (root_name == 'root-v2.toml')


@pytest.mark.parametrize('check', ['kernel_cmdline', 'containerd_config'])
def test_unreadable_input_module_and_preflight_say_the_same(run_module, tmp_path, systemctl, check):
    if check == 'kernel_cmdline':
        tray = build_tray(str(tmp_path / 't'), cmdline=None)
        state, alone = read_state(run_module, tray, systemctl), run_module(kernel_cmdline, {'proc_root': tray['proc']})
    else:
        config = write_toml(tmp_path / 'config.toml', 'version = "2"\n')
        state = read_state(run_module, build_tray(str(tmp_path / 't')), systemctl, containerd_config_path=config)
        alone = run_module(containerd_config, {'config_path': config})
    checked = judged_by_preflight(state, check)
    assert alone.failed and checked['status'] == 'failed'
    assert (checked['message'], checked['details'], checked['fix']) == (alone['msg'], alone['problems'], alone['fix'])
