# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation's tray phase (filter tray_validation over plugin_utils/tray_validation.py).

Every tray here is a fixture tree in the kernel's sysfs layout, read by the real tray_state module, as the role
reads a tray after the deploy; the policies are SriovNetworkNodePolicy objects as the stack role renders them.
"""

import copy
import json
import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.tray_validation import tray_validation
from ansible_collections.gpu_tray.cluster.plugins.module_utils import check_record, judges
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import evidence, preflight
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.tray_validation import (
    parse_kubelet_checkpoint,
    policy_selects,
)
from ansible_collections.gpu_tray.cluster.plugins.modules import tray_state
import tooldouble
from trayfixture import DEFAULT_MODULES, build_tray, port, set_pkeys
from unithelpers import fixture_path, lab_fixtures

RAILS = [('mlx5_0', '0000:03:00.0'), ('mlx5_1', '0000:04:00.0'), ('mlx5_3', '0000:06:00.0'), ('mlx5_4', '0000:07:00.0')]
CHECKPOINT = '/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint'
UNREAD = {'tray10': {'state': None, 'error': 'UNREACHABLE: ssh timed out'},          # two trays the read did not reach
          'tray9': {'state': {'unreachable': True, 'msg': 'Failed to connect'}}}


def policies(num_vfs=2, root_devices=True):
    out = []
    for index, (_name, bdf) in enumerate(RAILS):
        selector = {'vendor': '15b3'}
        if root_devices:
            selector['rootDevices'] = [bdf]
        else:
            selector['deviceID'] = '1021'
        out.append({'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovNetworkNodePolicy',
                    'metadata': {'name': 'sriov-ib-rail-%d' % index, 'namespace': 'nvidia-network-operator'},
                    'spec': {'resourceName': 'sriov_resource_rail_%d' % index, 'linkType': 'IB', 'isRdma': True,
                             'deviceType': 'netdevice', 'numVfs': num_vfs, 'nicSelector': selector}})
    return out


def vf_devices(num_vfs=2, vf_pkeys=('0xffff',), limited_rail=None, drivers=None, no_netdev=(), hidden=()):
    """A GB200 tray whose rails carry ``num_vfs`` VFs each, as the config daemon leaves them (IPoIB netdevs)."""
    devs = []
    name = 5
    for index, (rail, bdf) in enumerate(RAILS):
        devs.append({'name': rail, 'bdf': bdf, 'device_id': '0x1021', 'totalvfs': 16, 'numvfs': num_vfs,
                     'netdevs': ['ibp%ds0' % (3 + index)], 'ports': {1: port(guid='b83f:d203:00a1:b2%02x' % index)}})
    devs.append({'name': 'mlx5_2', 'bdf': '0000:05:00.0', 'device_id': '0xa2dc', 'totalvfs': 0, 'numvfs': 0,
                 'netdevs': ['enP5p5s0f0np0'], 'ports': {1: port(link_layer='Ethernet', guid='b83f:d203:00a1:b2aa')}})
    for index, (rail, bdf) in enumerate(RAILS):
        for vf in range(num_vfs):
            vf_bdf = bdf[:-1] + str(vf + 1)
            keys = vf_pkeys if rail == limited_rail or limited_rail is None else ('0xffff',)
            dev = {'name': 'mlx5_%d' % name, 'bdf': vf_bdf, 'device_id': '0x101e', 'physfn': bdf,
                   'netdevs': [] if vf_bdf in no_netdev else ['ibp%ds0v%d' % (3 + index, vf)],
                   'ports': {1: port(pkeys=keys, guid='b83f:d203:00a1:c%d%02x' % (index, vf))}}
            if drivers and vf_bdf in drivers:
                dev.update(name=None, driver=drivers[vf_bdf])
            if vf_bdf in hidden:
                dev.update(name=None, driver='mlx5_core', netdevs=[])
            devs.append(dev)
            name += 1
    return devs


@pytest.fixture
def tools(tmp_path):
    directory = tmp_path / 'tools'
    directory.mkdir()
    systemctl, _log = tooldouble.systemctl(str(directory), {'is-enabled': {}, 'is-active': {}})
    return {'systemctl': systemctl}


def read(run_module, tray, tools, tmp_path, checkpoint=None, name='kubelet_internal_checkpoint'):
    """The tray read as the role reads it: tray_state with one file among its files (by default the kubelet's
    device-manager checkpoint; written with ``checkpoint`` unless that is None)."""
    path = str(tmp_path / name)
    if checkpoint is not None:
        with open(path, 'w') as handle:
            handle.write(checkpoint)
    result = run_module(tray_state, {'sysfs_root': tray['sys'], 'proc_root': tray['proc'],
                                     'systemctl_path': tools['systemctl'],
                                     'os_release_path': fixture_path('os-release', 'ubuntu-24.04'),
                                     'containerd_config_path': str(tmp_path / 'none.toml'),
                                     'files': [path], '_ansible_check_mode': True})
    assert not result.failed, result
    return dict(result), path


def modules(**params):
    out = copy.deepcopy(DEFAULT_MODULES)
    out['ib_ipoib'] = {'initstate': 'live', 'parameters': {}}
    for name, value in params.items():
        out[name] = value
    return out


def judge(state, checkpoint_path, spec=None, baseline=None, host='tray02'):
    full = {'rails': [name for name, _bdf in RAILS], 'policies': policies(), 'pkey': '0xffff',
            'netns_mode': 'unmanaged', 'checkpoint_path': checkpoint_path}
    full.update(spec or {})
    checks = tray_validation({host: {'state': state, 'spec': full, 'baseline': baseline}})
    return dict((check['name'].split('/', 1)[1], check) for check in checks)


def build(tmp_path, **kwargs):
    mods = kwargs.pop('modules', None) or modules()
    return build_tray(str(tmp_path / 'tray'), devices=vf_devices(**kwargs), modules=mods)


def test_healthy_tray_after_the_deploy_passes_every_check(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path), tools, tmp_path)
    checks = judge(state, path, baseline=state['ansible_facts']['gpu_tray_rdma'])
    assert list(checks) == ['sriov-vfs', 'pkeys', 'vf-ipoib', 'netns-mode', 'pf-state', 'multus-token']
    assert checks['sriov-vfs']['status'] == 'passed', checks['sriov-vfs']
    assert checks['sriov-vfs']['message'] == 'All 8 VFs on 4 rails exist, bound to mlx5_core.'
    # the rails' PFs and their VFs, judged as the preflight judges them
    assert checks['pkeys']['message'] == 'All 12 InfiniBand ports are full members of partition 0xffff.'
    assert checks['vf-ipoib']['status'] == 'passed'
    assert checks['netns-mode']['status'] == 'skipped' and 'shared' in checks['netns-mode']['message']
    assert checks['pf-state']['message'] == 'All 4 rail PFs are ACTIVE / LinkUp, as at the preflight.'
    # the multus kubeconfig was not among the files read here
    assert checks['multus-token']['status'] == 'skipped' and 'was not read in this run' in checks['multus-token']['message']
    # one record shape: the tray is the object, the message states the finding without it
    assert all(check['object'] == 'tray02' and check['fix'] == '' and sorted(check) == sorted(check_record.KEYS)
               for check in checks.values())


def test_limited_vfs_are_named_with_guid_and_the_fabric_fix_in_the_check_and_the_evidence(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path, vf_pkeys=('0x7fff',), limited_rail='mlx5_4'), tools, tmp_path)
    checks = judge(state, path)
    pkeys = checks['pkeys']
    assert pkeys['status'] == 'failed'
    assert pkeys['message'] == ('2 InfiniBand ports are limited members of partition 0xffff, not full members: '
                                'VFs mlx5_11, mlx5_12 of mlx5_4.')
    assert pkeys['details'] == [
        'mlx5_11 port 1 (VF of 0000:07:00.0) GUID b83f:d203:00a1:c300 holds 0x7fff (default partition, limited member)',
        'mlx5_12 port 1 (VF of 0000:07:00.0) GUID b83f:d203:00a1:c301 holds 0x7fff (default partition, limited member)']
    assert 'UFM' in pkeys['fix'] and 'ib-kubernetes' in pkeys['fix'] and 'PFs alone is not enough' in pkeys['fix']
    assert [port.split(' ')[0] for port in pkeys['data']['failed_ports']] == ['mlx5_11', 'mlx5_12']
    # the PFs are fine: only the VFs fail (what the preflight could not see before the VFs existed)
    assert checks['pf-state']['status'] == 'passed' and checks['sriov-vfs']['status'] == 'passed'
    result = evidence.phase_result({'name': 'trays', 'checks': list(checks.values())})
    assert result == {'status': 'failed', 'findings': 'tray02/pkeys: 2 InfiniBand ports are limited members of '
                                                      'partition 0xffff, not full members: VFs mlx5_11, mlx5_12 of '
                                                      'mlx5_4'}
    # the evidence lists the details, with two trays that could not be read in the phase
    phase = {'name': 'trays', 'checks': list(checks.values()) + tray_validation(UNREAD)}
    files = dict((item['path'], item['content']) for item in evidence.evidence_files([phase], {'recipe': 'r'}))
    ctrf = json.loads(files['ctrf/trays.json'])['results']
    limited = [test for test in ctrf['tests'] if test['name'] == 'tray02/pkeys'][0]
    assert limited['status'] == 'failed' and len(limited['extra']['details']) == 2
    assert '- **tray02/pkeys** (FAILED)' in files['report.md']
    assert '  - mlx5_11 port 1 (VF of 0000:07:00.0) GUID' in files['report.md']
    assert '<li>mlx5_12 port 1 (VF of 0000:07:00.0)' in files['report.html']
    assert 'mlx5_11 port 1' in files['junit.xml']


def test_a_limited_vf_reads_the_same_in_the_preflight_and_in_the_validation(run_module, tools, tmp_path):
    """One judge per check across phases: the preflight of a tray that already has VFs and the validation's trays
    phase report a P_Key limited on one VF with the same record - sentence, fix, details, data - only the name
    qualified by the tray in the validation's one table of every tray."""
    tray = build(tmp_path)
    set_pkeys(tray, 'mlx5_12', ['0x7fff'])
    state, path = read(run_module, tray, tools, tmp_path)
    validated = judge(state, path)['pkeys']
    [preflighted] = preflight.evaluate(state, {'checks': ['pkeys'], 'host': 'tray02', 'pkey': '0xffff',
                                               'include_vfs': True})
    assert validated['message'] == ('1 InfiniBand port is a limited member of partition 0xffff, not a full member: '
                                    'VF mlx5_12 of mlx5_4.')
    assert (preflighted['name'], validated['name']) == ('pkeys', 'tray02/pkeys')
    assert dict(validated, name='pkeys') == preflighted
    assert preflighted['status'] == 'failed' and preflighted['object'] == 'tray02' and preflighted['fix']


def test_a_tenant_pkey_is_required_on_every_vf(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path, vf_pkeys=('0xffff', '0x8001')), tools, tmp_path)
    # the VFs hold 0x8001, the PFs only 0xffff: the P_Key check names them all
    failing = judge(state, path, {'pkey': '0x8001'})['pkeys']
    assert failing['status'] == 'failed'
    assert failing['message'] == '4 InfiniBand ports are not members of partition 0x8001: PFs mlx5_0, mlx5_1, mlx5_3, mlx5_4.'
    other = judge(state, path, {'pkey': '0x8002'})['pkeys']
    assert other['status'] == 'failed' and other['message'].startswith('12 InfiniBand ports are not members of '
                                                                       'partition 0x8002: PFs mlx5_0')


def test_missing_and_unbound_vfs_fail_sriov_vfs_naming_the_pf_and_policy(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path, num_vfs=0), tools, tmp_path)
    vfs = judge(state, path)['sriov-vfs']
    assert vfs['status'] == 'failed'
    assert vfs['message'] == ('mlx5_0 (0000:03:00.0): sriov_numvfs is 0, SriovNetworkNodePolicy '
                              'sriov-ib-rail-0 asks for 2 (and 3 more on mlx5_0, mlx5_1, mlx5_3, mlx5_4).')
    assert 'SriovNetworkNodeState' in vfs['fix']
    assert judge(state, path)['pkeys']['message'] == 'All 4 InfiniBand ports are full members of partition 0xffff.'
    assert judge(state, path)['vf-ipoib']['status'] == 'skipped'
    tray = build(tmp_path / 'b', drivers={'0000:04:00.2': 'vfio-pci'})
    state, path = read(run_module, tray, tools, tmp_path / 'b')
    vfs = judge(state, path)['sriov-vfs']
    assert vfs['message'] == ('VF 0000:04:00.2 of mlx5_1 is bound to vfio-pci, not mlx5_core (the policy\'s '
                              'deviceType netdevice).')


def test_policies_select_by_device_id_when_rendered_without_rdma_facts(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path), tools, tmp_path)
    checks = judge(state, path, {'policies': policies(root_devices=False)})
    assert checks['sriov-vfs']['status'] == 'passed'
    pf = dict((dev['name'], dev) for dev in state['ansible_facts']['gpu_tray_rdma']['devices'])
    assert policy_selects(policies(root_devices=False)[0], pf['mlx5_0'])
    assert not policy_selects(policies(root_devices=False)[0], pf['mlx5_2'])      # BlueField-3: another device ID
    assert not policy_selects(policies()[0], pf['mlx5_1'])                        # rootDevices: one PF each
    named = dict(policies()[0], spec=dict(policies()[0]['spec'], nicSelector={'pfNames': ['ibp3s0#0-1']}))
    assert policy_selects(named, pf['mlx5_0']) and not policy_selects(named, pf['mlx5_1'])
    bare = {'pci_vendor_id': '0x15b3', 'pci_device_id': '0x1021', 'pci_address': '0000:03:00.0'}   # vendor alone
    assert policy_selects({'spec': {'nicSelector': {'vendor': '15b3'}}}, bare) is True
    assert policy_selects({'spec': {'nicSelector': {'vendor': '8086'}}}, bare) is False
    # a recipe without SR-IOV (VR200): the VF checks are skipped, not passed
    vr = judge(state, path, {'policies': []})
    assert [vr[name]['status'] for name in ('sriov-vfs', 'vf-ipoib')] == ['skipped'] * 2


def test_vf_without_ipoib_netdev_fails_and_names_ib_ipoib(run_module, tools, tmp_path):
    mods = modules()
    del mods['ib_ipoib']
    tray = build(tmp_path, no_netdev=[bdf[:-1] + str(n) for _r, bdf in RAILS for n in (1, 2)], modules=mods)
    state, path = read(run_module, tray, tools, tmp_path)
    ipoib = judge(state, path)['vf-ipoib']
    assert ipoib['status'] == 'failed' and ipoib['message'] == '8 VFs have no IPoIB netdev (ib_ipoib is not loaded).'
    assert ipoib['details'][0] == 'mlx5_5 VF 0000:03:00.1 of mlx5_0 has no IPoIB netdev'
    assert 'rdma_modules' in ipoib['fix']


KUBELET = {'Data': {'PodDeviceEntries': [
    {'PodUID': '6b3c1f0e-77aa-4d5e-9a10-5f1c2d3e4f50', 'ContainerName': 'nccl', 'ResourceName':
     'nvidia.com/sriov_resource_rail_0', 'DeviceIDs': {'0': ['0000:03:00.1']}, 'AllocResp': 'CiIKHk5WSURJQQ=='},
    {'PodUID': 'f00dfeed-0000-4000-8000-000000000001', 'ContainerName': 'old', 'ResourceName':
     'nvidia.com/sriov_resource_rail_1', 'DeviceIDs': ['0000:04:00.1'], 'AllocResp': ''}],
    'RegisteredDevices': {'nvidia.com/sriov_resource_rail_0': ['0000:03:00.1', '0000:03:00.2']}}, 'Checksum': 1234}


def test_kubelet_checkpoint_numa_map_and_old_list_format():
    found = parse_kubelet_checkpoint(json.dumps(KUBELET))
    assert found == {'0000:03:00.1': {'pod_uid': '6b3c1f0e-77aa-4d5e-9a10-5f1c2d3e4f50', 'container': 'nccl',
                                      'resource': 'nvidia.com/sriov_resource_rail_0'},
                     '0000:04:00.1': {'pod_uid': 'f00dfeed-0000-4000-8000-000000000001', 'container': 'old',
                                      'resource': 'nvidia.com/sriov_resource_rail_1'}}
    assert parse_kubelet_checkpoint('{"Data": {"PodDeviceEntries": null}}') == {}
    assert parse_kubelet_checkpoint('not json') is None and parse_kubelet_checkpoint('[]') is None
    # an entry that is not an object is skipped
    text = json.dumps({'Data': {'PodDeviceEntries': [1, {'PodUID': 'u', 'ContainerName': 'c',
                                                         'DeviceIDs': ['0000:03:00.1']}]}})
    assert list(parse_kubelet_checkpoint(text)) == ['0000:03:00.1']


def test_vfs_in_pods_are_not_visible_never_passed(run_module, tools, tmp_path):
    # exclusive mode: the RDMA device and netdev of the VF handed to a pod are in the pod's namespace
    mods = modules(ib_core={'initstate': 'live', 'parameters': {'netns_mode': 'N'}})
    tray = build(tmp_path, hidden=['0000:03:00.1'], modules=mods)
    state, path = read(run_module, tray, tools, tmp_path, checkpoint=json.dumps(KUBELET))
    checks = judge(state, path, {'netns_mode': 'exclusive'})
    assert checks['sriov-vfs']['status'] == 'passed'
    assert any('VF 0000:03:00.1 of mlx5_0: RDMA device in the network namespace of pod 6b3c1f0e' in line
               for line in checks['sriov-vfs']['details'])
    # the VF in the pod could not be judged on the host: a warning naming it and the pod
    assert checks['pkeys']['status'] == 'warning'
    assert checks['pkeys']['message'] == 'All 11 InfiniBand ports are full members of partition 0xffff.'
    assert ('0000:03:00.1 of mlx5_0 (its RDMA device is in the network namespace of pod 6b3c1f0e-77aa-4d5e-9a10-'
            '5f1c2d3e4f50)' in checks['pkeys']['details'][0])
    assert checks['vf-ipoib']['status'] == 'passed' and '1 are in pods' in checks['vf-ipoib']['message']
    assert checks['netns-mode']['status'] == 'passed'
    # the same hidden VF without a checkpoint entry is a missing RDMA device: failed
    state, path = read(run_module, tray, tools, tmp_path, checkpoint='{"Data": {"PodDeviceEntries": []}}')
    vfs = judge(state, path, {'netns_mode': 'exclusive'})['sriov-vfs']
    assert vfs['status'] == 'failed' and 'has no RDMA device' in vfs['message']


def test_netns_mode_against_the_platform(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path), tools, tmp_path)
    netns = judge(state, path, {'netns_mode': 'exclusive'})['netns-mode']
    assert netns['status'] == 'failed'
    assert netns['message'] == 'ib_core netns_mode is shared, not exclusive.'
    assert 'rdma_netns' in netns['fix'] and netns['fix'] == judges.NETNS_FIX
    # the variable the user set comes first
    with pytest.raises(AnsibleFilterError, match=r'tray02: gpu_tray_ib_core_netns_mode \(validate_netns_mode\)'):
        judge(state, path, {'netns_mode': 'exlusive'})
    with pytest.raises(AnsibleFilterError, match=r'gpu_tray_pkey \(validate_pkey\)'):
        judge(state, path, {'pkey': '0x8000'})


def test_pf_state_changed_since_the_preflight_is_named(run_module, tools, tmp_path):
    tray = build(tmp_path)
    before, path = read(run_module, tray, tools, tmp_path)
    baseline = before['ansible_facts']['gpu_tray_rdma']
    rate = os.path.join(tray['sys'], 'class', 'infiniband', 'mlx5_1', 'ports', '1', 'rate')
    with open(rate, 'w') as handle:
        handle.write('200 Gb/sec (2X NDR)\n')
    state, path = read(run_module, tray, tools, tmp_path)
    pf = judge(state, path, baseline=baseline)['pf-state']
    assert pf['status'] == 'failed'
    assert pf['message'] == ('mlx5_1 port 1 rate: 400 Gb/sec (4X NDR) at the preflight, now 200 Gb/sec '
                             '(2X NDR).')
    set_pkeys(tray, 'mlx5_0', ['0x7fff'])
    state, path = read(run_module, tray, tools, tmp_path)
    checks = judge(state, path)                   # no baseline: the requirements alone
    assert checks['pf-state']['status'] == 'passed' and 'no preflight record' in checks['pf-state']['details'][-1]
    assert checks['pf-state']['message'] == ('All 4 rail PFs are ACTIVE / LinkUp; no preflight record of this tray, so '
                                             'not compared with the preflight.')
    # a PF's P_Keys are the P_Key check's
    assert checks['pkeys']['message'] == ('1 InfiniBand port is a limited member of partition 0xffff, not a full '
                                          'member: PF mlx5_0.')


def test_an_unread_tray_is_one_failed_check():
    checks = tray_validation(UNREAD)
    assert [(c['name'], c['status'], c['message']) for c in checks] == [
        ('tray9/tray-read', 'failed', 'The tray could not be read: Failed to connect.'),
        ('tray10/tray-read', 'failed', 'The tray could not be read: UNREACHABLE: ssh timed out.')]
    assert [c['object'] for c in checks] == ['tray9', 'tray10']
    with pytest.raises(AnsibleFilterError, match='expects a mapping'):
        tray_validation('tray01')


def test_the_list_form_is_the_mapping_form_of_parallel_lists():
    """How the validate role calls it: the trays, their reads, specs and baselines in order, common spec keys on top
    of each tray's, one reason for every tray without a read."""
    common = {'policies': [], 'now': 0}
    listed = tray_validation(['tray02', 'tray01'], states=[None, {'failed': True, 'msg': 'boom'}],
                             specs=[{'rails': ['mlx5_0']}, {}], baselines=[None, None], common=common,
                             error='not read in this run')
    mapped = tray_validation({'tray02': {'state': None, 'error': 'not read in this run', 'spec': {'rails': ['mlx5_0']}},
                              'tray01': {'state': {'failed': True, 'msg': 'boom'}, 'error': 'not read in this run'}})
    assert listed == mapped and [c['name'] for c in listed][:1] == ['tray01/tray-read'], listed
    assert 'not read in this run' in listed[0]['message']
    with pytest.raises(AnsibleFilterError, match='baselines, specs must have one entry per tray'):
        tray_validation(['tray01'], states=[None], specs=[], baselines=[])


def test_a_checkpoint_not_read_or_not_parsable_is_said_in_the_vf_details(run_module, tools, tmp_path):
    tray = build(tmp_path)
    state, path = read(run_module, tray, tools, tmp_path, checkpoint=json.dumps(KUBELET))
    unread = copy.deepcopy(state)
    unread['files'] = {}
    details = judge(unread, path)['sriov-vfs']['details']
    assert 'the kubelet checkpoint %s was not read' % path in details
    garbled = copy.deepcopy(state)
    garbled['files'][path] = {'exists': True, 'content': 'not json'}
    assert ('the kubelet checkpoint %s could not be parsed (not the device-manager JSON)' % path
            in judge(garbled, path)['sriov-vfs']['details'])
    garbled['files'][path] = {'exists': True, 'content': None}
    assert ('the kubelet checkpoint %s could not be parsed (too large to read)' % path
            in judge(garbled, path)['sriov-vfs']['details'])
    garbled['files'][path] = {'exists': False}
    assert not any('checkpoint' in line for line in judge(garbled, path)['sriov-vfs']['details'])


def _devices(state):
    return dict((dev['name'], dev) for dev in state['ansible_facts']['gpu_tray_rdma']['devices'])


def test_policies_that_select_no_pf_are_shown_with_their_selectors(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path), tools, tmp_path)
    stray = [dict(policy, spec=dict(policy['spec'], nicSelector={'rootDevices': ['0000:99:00.0'], 'vendor': '15b3'}))
             for policy in policies()[:2]]
    vfs = judge(state, path, {'policies': stray})['sriov-vfs']
    assert vfs['status'] == 'failed'
    assert vfs['message'] == 'No SriovNetworkNodePolicy of the recipe selects a PF of this tray.'
    assert vfs['details'] == ["rails mlx5_0, mlx5_1, mlx5_3, mlx5_4; the policies select sriov-ib-rail-0: "
                              "rootDevices=['0000:99:00.0'], vendor=15b3; sriov-ib-rail-1: "
                              "rootDevices=['0000:99:00.0'], vendor=15b3"]


def test_vf_count_problems_on_a_pf_are_each_named(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path), tools, tmp_path)
    devices = _devices(state)
    devices['mlx5_0']['sriov_totalvfs'] = None            # SR-IOV off in the firmware
    devices['mlx5_1']['vfs'] = devices['mlx5_1']['vfs'][:1]  # sriov_numvfs 2, one virtfn link
    vfs = judge(state, path)['sriov-vfs']
    assert vfs['status'] == 'failed'
    assert 'mlx5_0 (0000:03:00.0) has no sriov_numvfs: SR-IOV is disabled in its firmware (SRIOV_EN)' in vfs['details']
    assert 'mlx5_1: sriov_numvfs is 2 but 1 virtfn links exist' in vfs['details']


def test_ipoib_judges_every_vf_after_one_that_is_not_infiniband(run_module, tools, tmp_path):
    tray = build(tmp_path, no_netdev=('0000:07:00.2',))
    state, path = read(run_module, tray, tools, tmp_path)
    first = [dev for dev in state['ansible_facts']['gpu_tray_rdma']['devices'] if dev.get('kind') == 'vf'][0]
    for item in first['ports']:
        item['link_layer'] = 'Ethernet'
    ipoib = judge(state, path)['vf-ipoib']
    assert ipoib['status'] == 'failed' and ipoib['data']['with_netdev'] == 6
    assert len(ipoib['data']['missing']) == 1 and '0000:07:00.2' in ipoib['data']['missing'][0]


def test_pf_state_names_every_problem_on_every_rail(run_module, tools, tmp_path):
    fresh, path = read(run_module, build(tmp_path), tools, tmp_path)
    state = copy.deepcopy(fresh)
    baseline = copy.deepcopy(state['ansible_facts']['gpu_tray_rdma'])
    devices = _devices(state)
    devices['mlx5_0']['ports'] = []
    devices['mlx5_1']['ports'][0]['link_layer'] = 'Ethernet'
    devices['mlx5_3']['ports'][0]['state'] = 'DOWN'
    pf = judge(state, path, {'rails': ['mlx5_9', 'mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']})['pf-state']
    assert pf['status'] == 'failed'
    problems = pf['data']['problems']
    assert problems[0].startswith('rail mlx5_9 not found under ')
    assert 'mlx5_0 has no ports (mlx5_ib not loaded?)' in problems
    assert 'mlx5_1 port 1: link layer Ethernet, not InfiniBand' in problems
    assert not any(line.startswith('mlx5_1 port 1: ') and 'ACTIVE' in line for line in problems)
    assert 'mlx5_3 port 1: DOWN / LinkUp, not ACTIVE / LinkUp' in problems
    # against the preflight: a PF field that changed, a port that was not there, and the next port still compared
    state = copy.deepcopy(fresh)
    devices = _devices(state)
    second = dict(devices['mlx5_4']['ports'][0], port=2)
    old = dict((dev['name'], dev) for dev in baseline['devices'])
    old['mlx5_4']['ports'] = [dict(second, rate='200 Gb/sec (2X NDR)')]
    old['mlx5_4']['fw_ver'] = '28.39.1002'
    devices['mlx5_4']['ports'].append(second)
    changes = judge(state, path, baseline=baseline)['pf-state']['data']['changes']
    assert changes == ['mlx5_4 fw_ver: 28.39.1002 at the preflight, now %s' % devices['mlx5_4']['fw_ver'],
                       'mlx5_4 port 1: not there at the preflight',
                       'mlx5_4 port 2 rate: 200 Gb/sec (2X NDR) at the preflight, now %s' % second['rate']]


def test_the_filter_is_registered_under_its_name():
    from ansible_collections.gpu_tray.cluster.plugins.filter.tray_validation import FilterModule

    assert FilterModule().filters() == {'tray_validation': tray_validation}


def test_spec_forms_the_role_passes(run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path), tools, tmp_path)
    # rails as the comma-separated text of a survey, with blanks
    vfs = judge(state, path, {'rails': ' mlx5_0, mlx5_3 ,'})['sriov-vfs']
    assert [row['rail'] for row in vfs['data']['rails']] == ['mlx5_0', 'mlx5_3', 'mlx5_1', 'mlx5_4']
    # IPoIB not required: said so, not passed
    ipoib = judge(state, path, {'ipoib': False})['vf-ipoib']
    assert ipoib['status'] == 'skipped' and ipoib['message'] == 'IPoIB on the VFs is not required.'
    # no checkpoint_path: the kubelet's own, which this read did not include
    full = {'rails': [name for name, _bdf in RAILS], 'policies': policies(), 'pkey': '0xffff'}
    checks = tray_validation({'tray02': {'state': state, 'spec': full}})
    assert 'the kubelet checkpoint %s was not read' % CHECKPOINT in checks[0]['details']
    for bad in ({'kind': 'SriovNetworkNodePolicy'}, [policies()[0], 'sriov-ib-rail-1']):
        with pytest.raises(AnsibleFilterError, match='tray02: policies must be a list of SriovNetworkNodePolicy objects'):
            judge(state, path, {'policies': bad})


def test_the_largest_vf_count_of_the_policies_selecting_a_pf_counts_and_other_kinds_are_ignored(
        run_module, tools, tmp_path):
    state, path = read(run_module, build(tmp_path), tools, tmp_path)
    more = [dict(policy, metadata=dict(policy['metadata'], name='more-%d' % index), spec=dict(policy['spec'], numVfs=4))
            for index, policy in enumerate(policies())]
    network = {'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovIBNetwork', 'metadata': {'name': 'net'},
               'spec': {'resourceName': 'sriov_resource_rail_0', 'numVfs': 8, 'nicSelector': {}}}
    vfs = judge(state, path, {'policies': [network] + policies() + more})['sriov-vfs']
    assert vfs['status'] == 'failed'
    assert vfs['message'].startswith('mlx5_0 (0000:03:00.0): sriov_numvfs is 2, SriovNetworkNodePolicy '
                                     'more-0 asks for 4')
    assert [(row['num_vfs'], row['policy']) for row in vfs['data']['rails']] == [(4, 'more-%d' % i) for i in range(4)]


MULTUS_NOW = 1780000000                 # 2026-05-28T20:26:40Z


def multus_state(run_module, tray, tools, tmp_path, text):
    """The tray read with the multus kubeconfig among its files (``text``; None: no such file)."""
    return read(run_module, tray, tools, tmp_path, text, name='multus.kubeconfig')


def test_a_multus_token_that_expires_in_10_days_warns_with_the_restart(run_module, tools, tmp_path):
    """F26: the Network Operator's multus never rewrites its kubeconfig; 10 days before the token lapses the trays
    phase warns (default 30 days), naming the date and the fix; a lapsed one fails; a year ahead passes."""
    multus_kubeconfig = lab_fixtures().multus_kubeconfig
    tray = build(tmp_path)
    day = 86400
    spec = {'now': MULTUS_NOW, 'multus_namespace': 'nvidia-network-operator'}
    state, path = multus_state(run_module, tray, tools, tmp_path,
                               multus_kubeconfig(MULTUS_NOW - 355 * day, MULTUS_NOW + 10 * day))
    check = judge(state, path, dict(spec, multus_kubeconfig=path))['multus-token']
    assert check['status'] == 'warning', check
    assert check['message'] == ('The multus token in %s expires on 2026-06-07 20:26 UTC (in 10 days).' % path)
    assert 'rollout restart daemonset kube-multus-ds' in check['fix'] and '--skip-config-watch' in check['fix']
    assert 'before 2026-06-07 20:26 UTC' in check['fix'] and '-n nvidia-network-operator' in check['fix']
    assert check['data']['days_left'] == 10.0 and check['data']['warn_days'] == 30
    assert check['details'] == ['issued 2025-06-07 20:26 UTC, expires 2026-06-07 20:26 UTC '
                                '(system:serviceaccount:nvidia-network-operator:multus)']
    # fewer days to warn: the same token passes
    assert judge(state, path, dict(spec, multus_kubeconfig=path, multus_token_warn_days=7))['multus-token'][
        'status'] == 'passed'
    # in the report the warning is listed apart and does not fail the phase
    phase = {'name': 'trays', 'checks': [check]}
    assert evidence.phase_status(phase) == 'passed'
    lapsed = judge(state, path, dict(spec, multus_kubeconfig=path, now=MULTUS_NOW + 11 * day))['multus-token']
    assert lapsed['status'] == 'failed' and 'expired on 2026-06-07 20:26 UTC' in lapsed['message']
    assert 'new pods get no secondary networks' in lapsed['message'] and 'rollout restart' in lapsed['fix']
    state, path = multus_state(run_module, tray, tools, tmp_path,
                               multus_kubeconfig(MULTUS_NOW, MULTUS_NOW + 365 * day))
    fresh = judge(state, path, dict(spec, multus_kubeconfig=path))['multus-token']
    assert fresh['status'] == 'passed' and fresh['message'].endswith('(in 365 days).') and fresh['fix'] == ''


def test_a_tray_without_multus_or_with_an_unreadable_token_is_said(run_module, tools, tmp_path):
    tray = build(tmp_path)
    spec = {'now': MULTUS_NOW}
    state, path = multus_state(run_module, tray, tools, tmp_path, None)
    absent = judge(state, path, dict(spec, multus_kubeconfig=path))['multus-token']
    assert absent['status'] == 'skipped' and absent['message'] == (
        'No %s: multus does not run on this tray.' % path)
    state, path = multus_state(run_module, tray, tools, tmp_path, 'users: []\n')
    garbled = judge(state, path, dict(spec, multus_kubeconfig=path))['multus-token']
    assert garbled['status'] == 'warning' and 'cannot be read: the user of its current context' in garbled['message']
    assert judge(state, path, dict(spec, multus_kubeconfig=''))['multus-token']['status'] == 'skipped'
    with pytest.raises(AnsibleFilterError, match='validate_multus_token_warn_days'):
        judge(state, path, dict(spec, multus_token_warn_days='soon'))
