# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/reboot_plan.py, the run's steps (action reboot_step): what the role registered turned into the plan,
each tray's report row and outcome, the wave's record and the report - the per-tray bookkeeping that was YAML."""

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_plan as rp
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_run as rr
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_cluster as rc

NOW = 1796431064.0
CHECKS = {'drain': 'the drain error', 'reboot': 'the BMC section', 'verify': 'the tray\'s connection',
          'unreachable': 'the tray\'s BMC console (SOL)', 'default': 'the error above'}
BMC_SETTINGS = {'address': '10.0.0.11', 'username': 'admin', 'password': True, 'system_id': ''}


def tray(judged=False, recover='none'):
    """A tray's kept facts (__rolling_reboot_tray)."""
    return {'changed_roles': ['kernel_tuning'], 'maintenance': 'nvidia-maintenance/gpu-tray-rolling-reboot-tray01',
            'checks': CHECKS, 'bmc': {'judged': judged, 'settings': BMC_SETTINGS, 'serial': 'S1', 'log_entries': 5,
                                      'recover': recover}}


def inputs(hosts=('tray01', 'tray02', 'tray03'), asking=('tray01', 'tray02'), **more):
    """The plan's inputs as the role renders them (__rolling_reboot_plan_inputs), no cluster."""
    out = {'hosts': list(hosts), 'reasons': dict((h, ['kernel_tuning'] if h in asking else []) for h in hosts),
           'groups': dict((h, '') for h in hosts), 'nodes': dict((h, h) for h in hosts), 'strategy': 'auto',
           'canaries': 1, 'batch': 1, 'group_by': '', 'drain': 'auto', 'drain_via': 'auto', 'via_insisted': False,
           'cluster': {'read': False, 'why': 'no cluster configured', 'sources': [], 'error': ''}, 'check_mode': False}
    out.update(more)
    return out


def trays(hosts=('tray01', 'tray02', 'tray03'), **kwargs):
    return dict((h, tray(**kwargs)) for h in hosts)


SYSTEM = {'changed': False, 'redfish_facts': {'system': {'ret': True, 'entries': [[{}, {
    'Id': 'System.Embedded.1', 'SerialNumber': 'S1', 'PowerState': 'On', 'Status': {'Health': 'OK'},
    'BootProgress': {'LastState': 'OSRunning'}}]]}}}


# ------------------------------------------------------------------------------------------------ the Maintenance Operator

def _reads(crd, deployments):
    return [{'resources': [{'metadata': {'name': 'nodemaintenances.maintenance.nvidia.com'}}] if crd else []},
            {'resources': [{'metadata': {'name': name}} for name in deployments]}]


@pytest.mark.parametrize('drain_via, reads, expected', [
    ('maintenance_operator', None, True),                                     # insisted on: always (refused if absent)
    ('drain', _reads(True, ['network-operator-maintenance-operator-chart']), False),
    ('auto', _reads(True, ['network-operator-maintenance-operator-chart']), True),
    ('auto', _reads(True, ['network-operator']), False),                     # the CRD stayed behind an uninstall
    ('auto', _reads(False, ['maintenance-operator']), False),                # a Deployment without the API
    ('auto', [{'skipped': True}, {'skipped': True}], False),                 # not read (no cluster)
    ('auto', None, False),
], ids=['insisted', 'drain', 'auto-running', 'auto-crd-left-behind', 'auto-no-crd', 'auto-not-read', 'auto-none'])
def test_the_maintenance_operator_is_used_only_where_it_runs(drain_via, reads, expected):
    assert rc.use_maintenance_operator(drain_via, reads) is expected


def test_the_node_object_is_the_named_node_of_the_read():
    nodes = {'resources': [{'metadata': {'name': 'a'}}, {'metadata': {'name': 'b'}, 'spec': {'unschedulable': True}}]}
    assert rc.node_object(nodes, 'b')['spec'] == {'unschedulable': True}
    assert rc.node_object(nodes, 'c') is None and rc.node_object({'skipped': True}, 'a') is None
    assert rc.node_object(None, 'a') is None


# ------------------------------------------------------------------------------------------------ begin, bmc, wave

def test_the_plan_emits_the_rows_it_starts_from():
    run = rr.begin(inputs(check_mode=True), trays(), now=NOW)
    assert run['via'] == 'drain' and run['waves_done'] == [] and run['planned'] == run['plan']['lines']
    assert run['planned'][0].endswith('Check mode: nothing is rebooted.')
    one = run['rows']['tray01']
    assert one == {'tray': 'tray01', 'status': 'would reboot', 'rebooted': 'no', 'cmdline_verified': 'n/a',
                   'drain': 'not drained: no cluster', 'reboot_required_by': ['kernel_tuning'],
                   'changed_roles': ['kernel_tuning'], 'group': '', 'wave': 1, 'role': 'canary', 'idle': 'idle',
                   'idle_why': 'no cluster configured'}
    assert run['rows']['tray02']['wave'] == 2 and run['rows']['tray02']['role'] == 'together'
    three = run['rows']['tray03']
    assert (three['status'], three['wave'], three['role'], three['drain']) == ('no reboot needed', None, None, '-')
    assert rr.begin(inputs(), trays())['rows']['tray01']['status'] == 'not reached'


def test_a_busy_tray_is_judged_from_its_node_and_its_pods_when_the_cluster_was_read():
    nodes = {'resources': [{'metadata': {'name': h}} for h in ('tray01', 'tray02')]}
    pods = {'tray01': {'resources': []}, 'tray02': {'resources': [{'metadata': {'name': 'train', 'namespace': 'ml'}}]},
            'tray03': {'skipped': True}}
    cluster = {'read': True, 'why': '', 'sources': ['~/.kube/config'], 'error': ''}
    run = rr.begin(inputs(cluster=cluster), trays(), nodes, pods)
    assert run['states']['tray01']['why'] == 'runs no pod' and run['states']['tray02']['workloads'] == ['ml/train']
    assert run['states']['tray03'] == dict(run['states']['tray03'], node=False, why='not a node of the cluster')
    assert run['plan']['busy'] == ['tray02'] and run['rows']['tray02']['idle_why'] == 'runs 1 workload pod(s): ml/train'


TUNED = {'nvidia-tuned': {'interrupt': {'type': 'reboot'}, 'configInterrupts': {'intent': {'type': 'reboot'}}}}


def _cr(kind, name, packages, hostname=None):
    spec = {'packages': packages}
    if hostname:
        spec['nodeSelectors'] = {'matchLabels': {'kubernetes.io/hostname': hostname}}
    return {'kind': kind, 'metadata': {'name': name}, 'spec': spec}


def test_another_controller_that_reboots_a_rebooting_tray_refuses_the_run_in_the_plan():
    """The NodeWright/Skyhook read (looped, NodeWright then Skyhook): an object whose package reboots and whose
    selector takes a tray that reboots refuses; one on another node, one without an interrupt, one that takes only
    a tray without a reboot (tray03) do not; the refusal names the objects, the trays and the packages once each."""
    cluster = {'read': True, 'why': '', 'sources': ['~/.kube/config'], 'error': ''}
    nodes = {'resources': [{'metadata': {'name': h, 'labels': {'kubernetes.io/hostname': h}}}
                           for h in ('tray01', 'tray02', 'tray03')]}
    noop = {'shellscript': {'interrupt': {'type': 'noop'}}}
    quiet = [{'resources': [_cr('NodeWright', 'elsewhere', TUNED, 'tray09'), _cr('NodeWright', 'only3', TUNED, 'tray03')]},
             {'resources': [_cr('Skyhook', 'harmless', noop)]}]
    run = rr.begin(inputs(cluster=cluster), trays(), nodes, foreign=quiet)
    assert run['plan']['refuse'] is None and run['plan']['next'] is not None
    loud = [{'resources': [_cr('NodeWright', 'tuning', TUNED, 'tray01')]}, {'resources': [_cr('Skyhook', 'all', TUNED)]}]
    run = rr.begin(inputs(cluster=cluster), trays(), nodes, foreign=loud)
    assert run['plan']['refuse'] == (
        'NodeWright tuning, Skyhook all would also interrupt tray01, tray02 (nvidia-tuned: reboot): '
        'two controllers that do not know of each other would reboot these nodes concurrently; nothing was rebooted. '
        'Pause or remove them (annotation nodewright.nvidia.com/pause=true, skyhook.nvidia.com/pause=true on a '
        'Skyhook), or set rolling_reboot_foreign_controllers to allow.')
    assert run['plan']['next'] is None and run['plan']['lines'][-1] == run['plan']['refuse']
    skipped = [{'skipped': True, 'resources': [_cr('Skyhook', 'all', TUNED)]}, {'skipped': True}]
    assert rr.begin(inputs(cluster=cluster), trays(), nodes, foreign=skipped)['plan']['refuse'] is None


def test_a_controller_read_that_failed_is_no_proof_of_absence_and_refuses_the_run():
    """Pin (issue 53 item 7): RBAC's 403 or a time-out on the NodeWright/Skyhook look leaves another rebooting
    controller unknown - the plan refuses, naming the kind and the error; only a kind the cluster does not serve (its
    CRD not installed) is no controller. The role registers the look with failed_when false: the plan decides."""
    cluster = {'read': True, 'why': '', 'sources': ['~/.kube/config'], 'error': ''}
    nodes = {'resources': [{'metadata': {'name': h}} for h in ('tray01', 'tray02', 'tray03')]}
    not_served = {'item': {'kind': 'Skyhook'}, 'failed': False, 'failed_when_result': False,
                  'msg': 'Failed to find exact match for skyhook.nvidia.com/v1alpha1.Skyhook by [kind, name, '
                         'singularName, shortNames]'}
    forbidden = {'item': {'kind': 'NodeWright'}, 'failed': False, 'failed_when_result': False,
                 'msg': 'Failed to list NodeWright: (403)\nReason: Forbidden\nHTTP response headers: ...'}
    timeout = {'item': {'kind': 'Skyhook'}, 'failed': True, 'msg': 'Max retries exceeded (read timeout=20)'}
    run = rr.begin(inputs(cluster=cluster), trays(), nodes, foreign=[{'item': {'kind': 'NodeWright'}, 'resources': []},
                                                                     not_served])
    assert run['plan']['refuse'] is None and run['plan']['next'] is not None
    run = rr.begin(inputs(cluster=cluster), trays(), nodes, foreign=[forbidden, not_served])
    assert run['plan']['refuse'] == (
        'NodeWright objects could not be read (NodeWright: Failed to list NodeWright: (403)): another controller that '
        'reboots these nodes cannot be ruled out; nothing was rebooted. Let the run\'s account list them (RBAC), or '
        'set rolling_reboot_foreign_controllers to allow.')
    assert run['plan']['next'] is None
    run = rr.begin(inputs(cluster=cluster), trays(), nodes, foreign=[forbidden, timeout])
    assert run['plan']['refuse'].startswith('NodeWright objects and Skyhook objects could not be read (NodeWright: '
                                            'Failed to list NodeWright: (403); Skyhook: Max retries exceeded')
    # allow: the role skips the look, nothing is refused
    skipped = [dict(forbidden, skipped=True), dict(timeout, skipped=True)]
    assert rr.begin(inputs(cluster=cluster), trays(), nodes, foreign=skipped)['plan']['refuse'] is None


def test_another_controller_refuses_before_a_tray_without_its_group():
    nodes = {'resources': [{'metadata': {'name': 'tray01'}}]}
    cluster = {'read': True, 'why': '', 'sources': ['~/.kube/config'], 'error': ''}
    grouped = inputs(cluster=cluster, group_by='rack', groups={'tray01': 'r1', 'tray02': None, 'tray03': 'r1'})
    assert 'tray02' in rr.begin(grouped, trays(), nodes)['plan']['refuse']
    refuse = rr.begin(grouped, trays(), nodes, foreign=[{'resources': [_cr('Skyhook', 'all', TUNED)]}])['plan']['refuse']
    assert refuse.startswith('Skyhook all would also interrupt tray01 (nvidia-tuned: reboot)')


@pytest.mark.parametrize('insisted, reads, refused', [
    (True, _reads(False, []), True),                                   # insisted on, the cluster serves no API
    (True, _reads(True, []), False),                                   # the API is served (a Deployment not needed)
    (True, _reads(False, ['maintenance-operator']), True),             # a Deployment without the API: refused
    (True, _reads(False, [])[:1], True),                               # the CRD's read alone decides
    (False, _reads(False, []), False),                                 # auto: busy trays are drained instead
    (True, [{'skipped': True}, {'skipped': True}], False),             # not read (no cluster): nothing to refuse
    (True, None, False),
], ids=['insisted-no-api', 'insisted-api', 'insisted-deployment-only', 'crd-read-only', 'auto', 'not-read', 'none'])
def test_a_maintenance_operator_insisted_on_that_the_cluster_lacks_refuses_the_run(insisted, reads, refused):
    run = rr.begin(inputs(via_insisted=insisted, drain_via='maintenance_operator' if insisted else 'auto'), trays(),
                   mo_reads=reads)
    expected = ('rolling_reboot_drain_via is maintenance_operator but the cluster serves no '
                'nodemaintenances.maintenance.nvidia.com; nothing was rebooted. Install the Maintenance Operator '
                '(network-operator with maintenanceOperator.enabled) or set rolling_reboot_drain_via to drain.')
    assert run['plan']['refuse'] == (expected if refused else None)


def test_each_rebooting_tray_with_a_bmc_to_judge_gets_its_access_in_its_row():
    kept = trays(judged=True)
    kept['tray02']['bmc']['judged'] = False
    run = rr.judge_bmcs(rr.begin(inputs(), kept), inputs(), kept, {'tray01': SYSTEM, 'tray02': None, 'tray03': SYSTEM})
    assert sorted(run['bmc']) == ['tray01']                    # tray02 not judged, tray03 not rebooting
    assert run['bmc']['tray01']['ok'] and run['rows']['tray01']['bmc_access'].startswith('The BMC at 10.0.0.11 answers')
    assert 'bmc_access' not in run['rows']['tray02'] and 'bmc_access' not in run['rows']['tray03']
    refused = rr.judge_bmcs(rr.begin(inputs(), kept), inputs(), kept, {'tray01': {'skipped': True}})
    assert not refused['bmc']['tray01']['ok'] and 'was not asked' in refused['bmc']['tray01']['msg']


def test_a_tray_found_busy_just_before_its_wave_leaves_the_idle_trays_for_a_rolling_batch():
    nodes = {'resources': [{'metadata': {'name': h}} for h in ('tray01', 'tray02', 'tray03')]}
    cluster = {'read': True, 'why': '', 'sources': ['~/.kube/config'], 'error': ''}
    given = inputs(asking=('tray01', 'tray02', 'tray03'), cluster=cluster)
    idle = dict((h, {'resources': []}) for h in given['hosts'])
    run = rr.begin(given, trays(), nodes, idle)
    assert [w['trays'] for w in run['plan']['waves']] == [['tray01'], ['tray02', 'tray03']]
    run = rr.start_wave(run, given, nodes, {'tray01': {'skipped': True}}, NOW)
    assert run['wave']['trays'] == ['tray01'] and run['wave_index'] == 1 and run['started'] == NOW
    run = rr.record_wave(run, given, trays(), {'tray01': ok_regs()}, given['hosts'], NOW + 100)
    busy = {'tray02': {'resources': [{'metadata': {'name': 'train', 'namespace': 'ml'}}]}, 'tray03': {'resources': []}}
    run = rr.start_wave(run, given, nodes, busy, NOW + 101)
    # the busy tray's first batch goes down with the idle ones (strategy auto), drained as a busy one
    assert (run['wave']['together'], run['wave']['rolling'], run['wave_index']) == (['tray03'], ['tray02'], 2), run['wave']
    assert run['wave']['label'] == '1 together + 1 rolling'
    assert run['states']['tray02']['idle'] is False and run['plan']['trays']['tray02']['role'] == 'rolling'


# ------------------------------------------------------------------------------------------------ record

def ok_regs(down=NOW + 1, up=NOW + 61, **more):
    regs = {'sent': {'changed': True, 'boot_id': 'b1', 'sent_at': down}, 'back': {'changed': True, 'back_at': up},
            'bmc_system': {'skipped': True}, 'bmc_logs': {'skipped': True}, 'bmc_cycle': {'skipped': True},
            'cycled_back': {'skipped': True}, 'bmc_system_after': {'skipped': True},
            'verified': {'plan': {'exports': {'cmdline_verified': 'yes'}}}}
    regs.update(more)
    return regs


def registered(regs, kept):
    """What the role registers for a tray not back: step not_back's result, and its final one when still down."""
    regs = dict(regs)
    if (regs.get('back') or {}).get('failed'):
        regs['bmc_seen'] = rr.not_back(kept, regs)
        cycled = regs.get('cycled_back') or {'skipped': True}
        if cycled.get('skipped') or cycled.get('failed'):
            regs['bmc_final'] = dict(rr.not_back(kept, regs, 600, final=True), failed=True)
    return regs


def _wave(given, kept, regs, in_play=None, recover='none'):
    run = rr.start_wave(rr.begin(given, kept), given, None, {}, NOW)
    return rr.record_wave(run, given, kept, regs, given['hosts'] if in_play is None else in_play, NOW + 90.04)


def test_a_tray_that_came_back_verified_is_rebooted_and_the_wave_is_recorded():
    run = _wave(inputs(), trays(), {'tray01': ok_regs()})
    row = run['rows']['tray01']
    assert (row['status'], row['rebooted'], row['cmdline_verified'], row['reboot_seconds']) == ('rebooted', 'yes', 'yes', 60.0)
    assert row['drain'] == 'not drained: no cluster' and row['down_at'] == NOW + 1 and row['unreachable'] is False
    assert run['waves_done'] == [{'wave': 1, 'label': 'canary', 'trays': ['tray01'], 'started': NOW, 'ended': NOW + 90.04,
                                  'seconds': 90.0, 'reboots': {'tray01': 60.0}, 'failed': []}]
    assert run['plan']['last'] == 'wave 1/2 (canary) done in 90 s: 1 tray(s) back, reboots took 60 s.'
    assert run['plan']['stop'] is None and run['plan']['next']['trays'] == ['tray02']


def test_a_drained_tray_says_how_its_node_was_put_back():
    nodes = {'resources': [{'metadata': {'name': 'tray01'}}]}
    given = inputs(cluster={'read': True, 'why': '', 'sources': ['x'], 'error': ''})
    run = rr.begin(given, trays(), nodes, {'tray01': {'resources': []}})
    run = rr.record_wave(rr.start_wave(run, given, nodes, {}, NOW), given, trays(), {'tray01': ok_regs()},
                         given['hosts'], NOW + 90)
    assert run['rows']['tray01']['drain'] == 'drained, uncordoned'


def test_a_tray_that_failed_before_its_reboot_was_sent_is_left_as_its_drain_left_it():
    regs = {'tray01': {'failure': {'step': 'drain', 'task': 'Cordon and drain the node', 'error': 'PDB  blocks\n it'}}}
    nodes = {'resources': [{'metadata': {'name': 'tray01'}}]}
    given = inputs(cluster={'read': True, 'why': '', 'sources': ['x'], 'error': ''})
    run = rr.begin(given, trays(), nodes, {'tray01': {'resources': []}})
    run = rr.record_wave(rr.start_wave(run, given, nodes, {}, NOW), given, trays(), regs, given['hosts'], NOW + 5)
    row = run['rows']['tray01']
    assert (row['status'], row['rebooted'], row['cmdline_verified']) == ('FAILED', 'no', 'n/a')
    assert row['error'] == 'PDB blocks it' and row['check'] == 'the drain error' and row['down_at'] is None
    assert row['drain'] == 'cordoned (left cordoned)' and row['failed_step'] == 'Cordon and drain the node'
    assert row['message'].startswith('Canary tray01: Cordon and drain the node failed: PDB blocks it Check the drain')
    assert run['waves_done'][0]['failed'] == ['tray01'] and run['plan']['stop']['canary'] == ['tray01']
    assert run['plan']['next'] is None


def test_a_tray_not_back_gets_the_bmc_section_and_fails_at_its_reboot():
    failed_back = {'failed': True, 'msg': 'timed out waiting for a new boot id'}
    regs = ok_regs(back=failed_back, bmc_system=SYSTEM, bmc_logs={'skipped': True}, verified=None,
                   failure={'step': 'reboot', 'task': 'Stop when the tray did not come back', 'error': 'not back'})
    run = _wave(inputs(), trays(), {'tray01': registered(regs, tray())})
    row = run['rows']['tray01']
    assert (row['status'], row['rebooted'], row['cmdline_verified']) == ('FAILED', 'did not come back', 'no')
    assert row['up_at'] is None and row['down_at'] == NOW + 1 and row['check'] == 'the BMC section'
    assert row['bmc']['read'] and row['bmc']['recovery']['done'] is False and row['bmc']['after'] is None
    assert row['bmc']['summary'] in row['message'] or row['bmc']['summary'].rstrip('.') in row['message']


def test_a_tray_back_after_its_one_power_cycle_is_rebooted_with_the_bmc_section():
    regs = ok_regs(back={'failed': True, 'msg': 'timed out'}, bmc_system=SYSTEM, bmc_cycle={'changed': True},
                   cycled_back={'changed': True, 'back_at': NOW + 400})
    assert 'bmc_final' not in registered(regs, tray(recover='power_cycle'))        # back: the final step is skipped
    row = _wave(inputs(), trays(recover='power_cycle'), {'tray01': registered(regs, tray(recover='power_cycle'))})['rows']['tray01']
    assert (row['status'], row['rebooted']) == ('rebooted (power-cycled once through the BMC)', 'yes, after a power cycle')
    assert row['up_at'] == NOW + 400 and row['bmc']['recovery']['result'] == 'back after the power cycle'


def test_a_failed_power_cycle_is_named_with_its_error():
    regs = ok_regs(back={'failed': True, 'msg': 'timed out'}, bmc_system=SYSTEM,
                   bmc_cycle={'failed': True, 'msg': 'HTTP 500'}, bmc_system_after={'skipped': True},
                   failure={'step': 'reboot', 'task': 'Stop when the tray did not come back', 'error': 'x'})
    row = _wave(inputs(), trays(recover='power_cycle'), {'tray01': registered(regs, tray(recover='power_cycle'))})['rows']['tray01']
    assert row['bmc']['recovery']['result'] == 'the power cycle command failed: HTTP 500'
    assert row['rebooted'] == 'did not come back'


def test_a_tray_that_stopped_answering_after_it_came_back_was_rebooted():
    regs = ok_regs(verified={'unreachable': True, 'msg': 'ssh: connection timed out'},
                   failure={'step': 'unreachable', 'task': 'Stop for a tray that stopped answering after it came back',
                            'error': 'ssh: connection timed out'})
    row = _wave(inputs(), trays(), {'tray01': regs})['rows']['tray01']
    assert (row['status'], row['rebooted'], row['cmdline_verified'], row['unreachable']) == ('FAILED', 'yes', 'no', True)
    assert row['failed_step'] == 'the tray stopped answering after it came back from its reboot'
    assert row['check'] == CHECKS['unreachable']


def test_a_tray_that_left_the_play_is_counted_as_failed_on_its_behalf():
    regs = {'tray01': {'sent': {'changed': True, 'boot_id': 'b1', 'sent_at': NOW + 1}, 'back': None}}
    run = _wave(inputs(), trays(), regs, in_play=['tray02', 'tray03'])
    row = run['rows']['tray01']
    assert (row['status'], row['unreachable'], row['rebooted']) == ('FAILED', True, 'unknown')
    assert row['failed_step'] == 'the tray stopped answering' and row['down_at'] == NOW + 1
    assert row['error'] == 'unreachable over SSH, no further task ran on it'
    assert row['message'].endswith('The tray is left as it is; no further tray was touched; a re-run resumes.')
    assert run['waves_done'][0]['failed'] == ['tray01'] and run['plan']['stop'] is not None


def test_a_tray_gone_after_it_came_back_had_rebooted():
    regs = {'tray01': {'sent': {'sent_at': NOW}, 'back': {'changed': True, 'back_at': NOW + 50}}}
    row = _wave(inputs(), trays(), regs, in_play=['tray02'])['rows']['tray01']
    assert (row['rebooted'], row['failed_step']) == ('yes', 'the tray stopped answering after it came back from its reboot')


# ------------------------------------------------------------------------------------------------ report

def test_the_report_without_a_plan_shows_the_rows_the_run_started_from():
    out = rr.report(None, inputs(), trays(), ['tray01', 'tray02', 'tray03', 'tray09'], {'task': 't', 'message': 'm'})
    assert out['planned'] == [rr.NO_PLAN] and out['plan'] == {} and out['waves'] == []
    assert [r['status'] for r in out['rows']] == ['not reached', 'not reached', 'no reboot needed']
    assert out['json'][-1] == {'tray': 'tray09', 'status': 'not in the run', 'rebooted': 'no', 'cmdline_verified': 'n/a',
                               'drain': '-', 'why': rr.GONE}
    assert out['stopped'] == {'task': 't', 'message': 'm'}
    # a failed plan step returns no rows: the same
    assert rr.report({'failed': True, 'msg': 'x'}, inputs(), trays(), ['tray01'])['planned'] == [rr.NO_PLAN]


def test_the_report_gives_each_row_its_waves_timing():
    run = _wave(inputs(), trays(), {'tray01': ok_regs()})
    out = rr.report(run, inputs(), trays(), ['tray01', 'tray02', 'tray03'])
    assert [r['tray'] for r in out['json']] == ['tray01', 'tray02', 'tray03']
    assert out['json'][0]['wave_timing'] == run['waves_done'][0] and out['json'][1]['wave_timing'] is None
    assert 'wave_timing' not in out['rows'][0] and out['plan'] == run['plan'] and out['stopped'] is None


def test_the_bmc_section_takes_the_serial_the_trays_facts_hold_when_the_wave_is_recorded():
    """The role's __rolling_reboot_serial is read when used: a serial the facts hold by then is the one judged."""
    failure = {'step': 'reboot', 'task': 'Stop when the tray did not come back', 'error': 'x'}
    base = dict(back={'failed': True, 'msg': 'timed out'}, bmc_system=SYSTEM, verified=None, failure=failure)
    kept = rr.outcome(registered(ok_regs(**base), tray()), tray(), {'via': None}, 'drain')['bmc']
    other = rr.outcome(registered(ok_regs(facts={'gpu_tray': {'dmi': {'product_serial': 'S9'}}}, **base), tray()), tray(),
                       {'via': None}, 'drain')['bmc']
    assert kept['system_id'] == 'System.Embedded.1' and kept['read']
    assert other != kept and 'S9' in other['summary'], other


@pytest.mark.parametrize('sent', [None, {'failed': True, 'msg': 'no'}, {'unreachable': True, 'msg': 'x'},
                                  {'changed': True, 'boot_id': 'b0', 'sent_at': NOW - 3600}],
                         ids=['not-run', 'failed', 'unreachable', 'an-earlier-run'])
def test_a_failure_before_the_reboot_was_sent_this_wave_has_no_times_and_no_bmc(sent):
    """The send part of the wave (drain, NodeMaintenance, the send itself): nothing was sent in this wave, so nothing
    was waited for - whatever an earlier run of the role in the same play registered."""
    regs = {'failure': {'step': 'dispatch', 'task': 'Send the reboot', 'error': 'no'}, 'sent': sent,
            'back': {'changed': True, 'back_at': NOW - 3000}}
    out = rr.outcome(regs, tray(), {'via': 'drain'}, 'drain', started=NOW)
    assert 'sent' not in out and 'back' not in out and out['came_back'] is False, out
    row = rr.result({'tray': 'tray01'}, out)
    assert (row['down_at'], row['rebooted'], row['drain']) == (None, 'unknown', 'cordoned (left cordoned)')


# ------------------------------------------------------------------------------------------------ what mutation asked for

def test_an_unreadable_clusters_error_is_cut_after_200_characters():
    """The refusal quotes the read's first line, whole up to 200 characters, cut with '...' after that."""
    cut = rp.unreadable({'read': False, 'sources': ['KUBECONFIG=/k'], 'error': 'x' * 199 + 'YZ\nsecond line'})
    assert '(%s...)' % ('x' * 199 + 'Y') in cut and 'Z' not in cut and 'second' not in cut, cut
    whole = rp.unreadable({'read': False, 'sources': ['KUBECONFIG=/k'], 'error': 'e' * 200})
    assert '(%s)' % ('e' * 200) in whole, whole


def test_a_tray_of_an_unreadable_cluster_counts_as_busy_and_as_no_node_read():
    state = rp._state(inputs(cluster={'read': False, 'why': '', 'sources': ['KUBECONFIG=/k'], 'error': ''}), 'tray01')
    assert state['node'] is False and state['idle'] is False and 'KUBECONFIG=/k cannot be read' in state['why']


OFF = {'changed': False, 'redfish_facts': {'system': {'ret': True, 'entries': [[{}, {
    'Id': 'System.Embedded.1', 'SerialNumber': 'S1', 'PowerState': 'Off', 'Status': {'Health': 'OK'}}]]}}}
NOT_BACK = {'step': 'reboot', 'task': 'Stop when the tray did not come back', 'error': 'x'}


def test_without_facts_the_bmc_section_judges_the_serial_kept_before_the_plan():
    kept = tray()
    kept['bmc'] = dict(kept['bmc'], serial='S7')
    regs = ok_regs(back={'failed': True, 'msg': 'timed out'}, bmc_system=SYSTEM, verified=None, failure=NOT_BACK)
    seen = rr.outcome(registered(regs, kept), kept, {'via': None}, 'drain')['bmc']
    assert 'S7' in seen['summary'], seen


@pytest.mark.parametrize('recover, cycle', [('power_cycle', True), ('none', False)])
def test_the_power_cycle_is_due_only_where_the_tray_asks_for_it(recover, cycle):
    regs = ok_regs(back={'failed': True, 'msg': 'timed out'}, bmc_system=OFF, verified=None, failure=NOT_BACK)
    seen = rr.outcome(registered(regs, tray(recover=recover)), tray(recover=recover), {'via': None}, 'drain')['bmc']
    assert seen['recovery']['power_cycle'] is cycle, seen


def test_a_tray_still_down_after_its_power_cycle_carries_what_the_bmc_said_after_it():
    regs = ok_regs(back={'failed': True, 'msg': 'timed out'}, bmc_system=OFF, bmc_cycle={'changed': True},
                   cycled_back={'failed': True, 'msg': 'timed out again'}, bmc_system_after=OFF, verified=None,
                   failure=NOT_BACK)
    out = rr.outcome(registered(regs, tray(recover='power_cycle')), tray(recover='power_cycle'), {'via': None}, 'drain')
    assert out['bmc_after'] is not None and out['bmc_after']['read'], out['bmc_after']
    assert out['bmc_after']['system_id'] == 'System.Embedded.1' and out['came_back'] is False


def test_a_reboot_sent_the_moment_the_wave_started_is_this_waves():
    regs = {'failure': NOT_BACK, 'sent': {'changed': True, 'boot_id': 'b1', 'sent_at': NOW},
            'back': {'failed': True, 'msg': 'timed out'}}
    out = rr.outcome(regs, tray(), {'via': None}, 'drain', started=NOW)
    assert out['sent'] == regs['sent'] and out['back'] == regs['back'], out


def test_not_back_says_what_the_bmc_says_once_and_the_final_step_fails_with_what_it_said_last():
    """The warning of the first step (summary; why it is or is not power-cycled) and the final step's failure: the
    timeout, the wait's error, the power cycle when one ran, and the BMC's summary after it - else the first one."""
    regs = ok_regs(back={'failed': True, 'msg': 'timed out'}, bmc_system=OFF)
    seen = rr.not_back(tray(recover='power_cycle'), regs)
    assert seen['bmc']['recovery']['power_cycle'] and seen['bmc']['recovery']['command'] == 'PowerOn'
    assert seen['warning'] == '%s; %s' % (seen['bmc']['summary'], seen['bmc']['recovery']['why'])
    final = rr.not_back(tray(), dict(regs, bmc_seen=seen), 600, final=True)
    assert final == {'after': None, 'msg': 'The tray did not come back from its reboot within 600 s (timed out). %s.'
                     % seen['bmc']['summary']}
    after = dict(regs, bmc_seen=seen, bmc_cycle={'changed': True}, bmc_system_after=SYSTEM)
    final = rr.not_back(tray(), after, '900', final=True)
    assert final['after']['power_state'] == 'On' and final['after']['summary'] != seen['bmc']['summary']
    assert final['msg'] == ('The tray did not come back from its reboot within 900 s (timed out), nor from its power '
                            'cycle through the BMC. %s.' % final['after']['summary'])
    assert '(no answer)' in rr.not_back(tray(), {'back': {'failed': True}}, 5, final=True)['msg']


def test_not_back_keeps_the_trays_count_of_sel_entries_and_the_default_without_one():
    """The recorded hung tray's SEL (3 entries): rolling_reboot_bmc_log_entries 2 keeps the latest 2; none kept in the
    tray's facts means bmc.DEFAULT_LOG_ENTRIES (10), so all 3."""
    import json
    import pathlib
    redfish = pathlib.Path(__file__).parents[2] / 'fixtures' / 'redfish'
    system, logs = (json.loads((redfish / name).read_text()) for name in ('system_inventory_hung.json', 'logs_hung.json'))
    kept = tray()
    kept['bmc'] = dict(kept['bmc'], serial=None, log_entries=2)
    regs = {'bmc_system': system, 'bmc_logs': logs}
    assert [e['message'][:8] for e in rr.not_back(kept, regs)['bmc']['log']] == ['Warm res', 'POST han']
    kept['bmc']['log_entries'] = None
    assert len(rr.not_back(kept, regs)['bmc']['log']) == 3


def test_the_bmcs_of_trays_after_one_not_judged_are_judged_too():
    kept = trays(judged=True)
    kept['tray01']['bmc']['judged'] = False
    run = rr.begin(inputs(), kept, bmc_answers={'tray01': SYSTEM, 'tray02': SYSTEM})
    assert sorted(run['bmc']) == ['tray02'] and run['bmc']['tray02']['ok']


def test_another_controller_is_matched_on_the_trays_node_names():
    """A tray whose node has another name: the NodeWright object selects the node, the refusal names the node."""
    cluster = {'read': True, 'why': '', 'sources': ['~/.kube/config'], 'error': ''}
    nodes = {'resources': [{'metadata': {'name': 'gpu-node-7', 'labels': {'kubernetes.io/hostname': 'gpu-node-7'}}}]}
    given = inputs(cluster=cluster, nodes={'tray01': 'gpu-node-7', 'tray02': 'gpu-node-8', 'tray03': 'gpu-node-9'})
    refuse = rr.begin(given, trays(), nodes, foreign=[{'resources': [_cr('NodeWright', 't', TUNED, 'gpu-node-7')]}])
    assert refuse['plan']['refuse'].startswith('NodeWright t would also interrupt gpu-node-7 (nvidia-tuned: reboot)')
