# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/reboot_plan.py: idle or busy, the strategies' waves, the plan and progress lines, when the run stops,
and a tray's report row - the rolling reboot's decisions, without a tray or a cluster."""

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_plan as rp
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_run as rr

TRAYS = ['tray%02d' % i for i in range(1, 9)]
RACK = dict((t, 'A' if i < 4 else 'B') for i, t in enumerate(TRAYS))       # A: 01-04, B: 05-08
NOW = 1796431064.0                                                         # 2026-12-05 00:37:44 UTC


# ------------------------------------------------------------------------------------------------ Kubernetes objects

def node(name, unschedulable=None):
    spec = {} if unschedulable is None else {'unschedulable': unschedulable}
    return {'metadata': {'name': name}, 'spec': spec}


def pod(name, namespace='default', owner=None, mirror=False, phase='Running'):
    meta = {'name': name, 'namespace': namespace}
    if owner:
        meta['ownerReferences'] = [{'kind': owner, 'name': name + '-owner', 'controller': True}]
    if mirror:
        meta['annotations'] = {'kubernetes.io/config.mirror': 'abc123'}
    return {'metadata': meta, 'status': {'phase': phase}}


def pods(*items):
    """A registered kubernetes.core.k8s_info result."""
    return {'changed': False, 'failed': False, 'api_found': True, 'resources': list(items)}


SYSTEM_PODS = [pod('nvidia-driver-x', 'gpu-operator', owner='DaemonSet'),
               pod('kube-proxy-tray01', 'kube-system', mirror=True),
               pod('job-done', owner='Job', phase='Succeeded'), pod('crashed', phase='Failed')]


def test_a_tray_that_is_not_a_node_is_idle():
    assert rp.tray_state(None, pods(pod('x'))) == {
        'node': False, 'idle': True, 'why': 'not a node of the cluster', 'workloads': [], 'cordoned': False}


def test_daemonset_static_and_finished_pods_leave_a_node_idle():
    state = rp.tray_state(node('tray01'), pods(*SYSTEM_PODS))
    assert state == {'node': True, 'idle': True, 'why': 'runs only DaemonSet and static pods', 'workloads': [],
                     'cordoned': False}


def test_a_node_without_pods_is_idle():
    assert rp.tray_state(node('tray01', unschedulable=False), pods())['why'] == 'runs no pod'
    assert rp.tray_state(node('tray01', unschedulable=False), pods())['idle'] is True


@pytest.mark.parametrize('owner', ['ReplicaSet', 'StatefulSet', 'Job', None])
def test_any_other_running_pod_makes_it_busy(owner):
    state = rp.tray_state(node('tray01'), pods(*(SYSTEM_PODS + [pod('train-0', 'ml', owner=owner, phase='Pending')])))
    assert state['idle'] is False and state['node'] is True
    assert state['workloads'] == ['ml/train-0']
    assert state['why'] == 'runs 1 workload pod(s): ml/train-0'


def test_a_busy_node_names_three_workloads_and_counts_the_rest():
    state = rp.tray_state(node('tray01'), pods(*[pod('w%d' % i) for i in range(5)]))
    assert state['why'] == 'runs 5 workload pod(s): default/w0, default/w1, default/w2 and 2 more'
    assert len(state['workloads']) == 5


def test_a_pod_without_namespace_is_in_default():
    assert rp.workload_pods([{'metadata': {'name': 'p'}}]) == ['default/p']
    assert rp.workload_pods(None) == []


def test_a_node_cordoned_before_the_run_is_busy_and_its_pods_are_not_needed():
    state = rp.tray_state(node('tray01', unschedulable=True), None)
    assert state['idle'] is False and state['cordoned'] is True
    assert state['why'] == 'cordoned before the run (someone may be working on the node)'


@pytest.mark.parametrize('read, why', [
    (None, 'its pods were not read'),
    ({'skipped': True}, 'its pods could not be read (no answer)'),
    ({'failed': True, 'msg': 'Forbidden: pods is forbidden\nsecond line'},
     'its pods could not be read (Forbidden: pods is forbidden)'),
    ({'changed': False}, 'its pods could not be read (no answer)'),
    ('garbage', 'its pods could not be read (no answer)'),
])
def test_a_node_whose_pods_are_not_known_is_busy(read, why):
    state = rp.tray_state(node('tray01'), read)
    assert state['idle'] is False and state['why'] == why and state['node'] is True


def test_a_failed_read_with_an_empty_list_is_not_an_idle_node():
    assert rp.tray_state(node('tray01'), {'failed': True, 'resources': [], 'msg': 'timeout'})['why'] == \
        'its pods could not be read (timeout)'


def test_a_long_read_error_is_cut():
    state = rp.tray_state(node('tray01'), {'failed': True, 'msg': 'x' * 500})
    assert state['why'] == 'its pods could not be read (%s)' % ('x' * 200)


# ------------------------------------------------------------------------------------------------ canaries

@pytest.mark.parametrize('value, parsed', [
    (1, ('count', 1)), ('2', ('count', 2)), (' 3 ', ('count', 3)), ('per_group', ('per_group', None)),
    (' per_group', ('per_group', None)),
])
def test_canaries_are_a_count_or_per_group(value, parsed):
    assert rp.parse_canaries(value) == parsed


@pytest.mark.parametrize('value', [0, -1, '0', 'one', '', None, True, False, 1.5, 'per-group', [1]])
def test_bad_canaries_name_the_variable(value):
    with pytest.raises(rp.PlanError, match=r'gpu_tray_reboot_canaries \(rolling_reboot_canaries\) must be a '
                                           r'positive integer or per_group'):
        rp.parse_canaries(value)


def test_canaries_are_taken_one_per_group_in_turn():
    assert rp.pick_canaries(TRAYS, RACK, 1) == ['tray01']
    assert rp.pick_canaries(TRAYS, RACK, 2) == ['tray01', 'tray05']
    assert rp.pick_canaries(TRAYS, RACK, 3) == ['tray01', 'tray02', 'tray05']
    assert rp.pick_canaries(TRAYS, RACK, 'per_group') == ['tray01', 'tray05']
    assert rp.pick_canaries(TRAYS[4:], RACK, 'per_group') == ['tray05']


def test_canaries_without_groups_are_the_first_trays():
    assert rp.pick_canaries(TRAYS, {}, 2) == ['tray01', 'tray02']
    assert rp.pick_canaries(TRAYS, {}, 'per_group') == ['tray01']


def test_a_group_that_runs_out_of_candidates_leaves_the_others_to_fill_the_count():
    assert rp.pick_canaries(['tray01', 'tray05', 'tray06', 'tray07'], RACK, 3) == ['tray01', 'tray05', 'tray06']


def test_never_more_canaries_than_candidates():
    assert rp.pick_canaries(['tray03', 'tray06'], RACK, 5) == ['tray03', 'tray06']
    assert rp.pick_canaries([], RACK, 1) == []


# ------------------------------------------------------------------------------------------------ the plan

def inputs(**changes):
    base = {
        'hosts': TRAYS, 'reasons': dict((t, ['kernel_tuning']) for t in TRAYS), 'groups': dict(RACK),
        'nodes': dict((t, t) for t in TRAYS), 'states': dict((t, None) for t in TRAYS),
        'rows': dict((t, {'tray': t, 'status': 'not reached'}) for t in TRAYS),
        'strategy': 'auto', 'canaries': 1, 'batch': 1, 'group_by': 'rack', 'drain': 'auto', 'via': 'drain',
        'via_insisted': False, 'cluster': {'read': False, 'why': 'no cluster configured'}, 'check_mode': False,
        'waves_done': [], 'now': NOW,
    }
    base.update(changes)
    return base


def idle_state(why='runs no pod'):
    return {'node': True, 'idle': True, 'why': why, 'workloads': [], 'cordoned': False}


def busy_state(why='runs 1 workload pod(s): ml/train-0'):
    return {'node': True, 'idle': False, 'why': why, 'workloads': ['ml/train-0'], 'cordoned': False}


def cluster(busy=(), not_nodes=(), **changes):
    states = {}
    for tray in TRAYS:
        states[tray] = busy_state() if tray in busy else rp.tray_state(None) if tray in not_nodes else idle_state()
    return inputs(states=states, cluster={'read': True, 'why': ''}, **changes)


def waves(plan):
    return [w['trays'] for w in plan['waves']]


def test_a_fresh_fleet_without_a_cluster_is_a_canary_then_everything_else_together():
    plan = rp.plan(inputs())
    assert waves(plan) == [['tray01'], TRAYS[1:]]
    assert plan['periods'] == 2 and plan['canaries'] == ['tray01']
    assert plan['idle'] == TRAYS and plan['busy'] == [] and plan['pending'] == TRAYS
    assert plan['refuse'] is None and plan['stop'] is None
    assert [w['label'] for w in plan['waves']] == ['canary', '7 together']
    assert plan['waves'][1]['together'] == TRAYS[1:] and plan['waves'][1]['rolling'] == []
    assert plan['lines'] == [
        '8 of 8 tray(s) need a reboot, in 2 reboot period(s) (strategy auto): 8 idle, 0 busy - no cluster '
        'configured: every tray counts as idle; canary tray01, then the other 7 together.',
        'wave 1/2 (canary): tray01',
        'wave 2/2 (7 together): tray02, tray03, tray04, tray05, tray06, tray07, tray08']
    assert plan['summary'] == plan['lines'][0]
    row = plan['trays']['tray01']
    assert row == {'idle': True, 'why': 'no cluster configured', 'node': False, 'role': 'canary', 'wave': 1,
                   'via': None, 'drain': 'not drained: no cluster', 'pending': True}
    assert plan['trays']['tray08']['role'] == 'together' and plan['trays']['tray08']['wave'] == 2
    assert plan['next']['trays'] == ['tray01'] and plan['next']['canary'] == ['tray01']


def test_the_same_fleet_rolling_takes_one_tray_per_rack_at_a_time():
    plan = rp.plan(inputs(strategy='rolling'))
    assert waves(plan) == [['tray01', 'tray05'], ['tray02', 'tray06'], ['tray03', 'tray07'], ['tray04', 'tray08']]
    assert plan['periods'] == 4 and plan['canaries'] == []
    assert plan['lines'][0] == ('8 of 8 tray(s) need a reboot, in 4 reboot period(s) (strategy rolling, batch 1, one '
                                'batch per rack at a time).')
    assert plan['lines'][1] == 'wave 1/4 (2 rolling): tray01, tray05'
    assert all(plan['trays'][t]['role'] == 'rolling' for t in TRAYS)


def test_rolling_without_groups_takes_batch_trays_at_a_time():
    plan = rp.plan(inputs(strategy='rolling', group_by='', batch=3))
    assert waves(plan) == [TRAYS[:3], TRAYS[3:6], TRAYS[6:]]
    assert plan['lines'][0].endswith('(strategy rolling, batch 3).')


def test_auto_on_a_cluster_canary_for_idle_trays_and_rolling_for_busy_ones():
    plan = rp.plan(cluster(busy=('tray01', 'tray02', 'tray05'), via='maintenance_operator'))
    assert plan['idle'] == ['tray03', 'tray04', 'tray06', 'tray07', 'tray08']
    assert plan['busy'] == ['tray01', 'tray02', 'tray05']
    # the canary alone; then the other idle trays with the busy ones' first batch (one per rack); then the rest
    assert waves(plan) == [['tray03'], ['tray01', 'tray04', 'tray05', 'tray06', 'tray07', 'tray08'], ['tray02']]
    assert [w['label'] for w in plan['waves']] == ['canary', '4 together + 2 rolling', '1 rolling']
    assert plan['waves'][1]['rolling'] == ['tray01', 'tray05']
    assert plan['waves'][1]['together'] == ['tray04', 'tray06', 'tray07', 'tray08']
    # busy trays go through the Maintenance Operator; idle ones are drained directly (nothing to evict)
    assert plan['trays']['tray01']['via'] == 'maintenance_operator'
    assert plan['trays']['tray01']['drain'] == 'maintenance_operator'
    assert plan['trays']['tray03']['via'] == 'drain' and plan['trays']['tray04']['via'] == 'drain'
    assert plan['lines'][0] == (
        '8 of 8 tray(s) need a reboot, in 3 reboot period(s) (strategy auto): 5 idle (tray03, tray04, tray06, '
        'tray07, tray08), 3 busy (tray01, tray02, tray05); canary tray03, then the other 4 idle together, the 3 busy '
        'rolling (batch 1, one batch per rack at a time).')
    assert plan['lines'][-3:] == ['busy: tray01 - runs 1 workload pod(s): ml/train-0',
                                  'busy: tray02 - runs 1 workload pod(s): ml/train-0',
                                  'busy: tray05 - runs 1 workload pod(s): ml/train-0']


def test_auto_with_only_busy_trays_is_rolling_without_a_canary():
    plan = rp.plan(cluster(busy=TRAYS))
    assert waves(plan) == rp.plan_waves(TRAYS, TRAYS, 1, RACK, 'rack')
    assert plan['canaries'] == []
    assert plan['lines'][0].endswith('0 idle, 8 busy (tray01, tray02, tray03, tray04, tray05, tray06 and 2 more); '
                                     'busy trays rolling (batch 1, one batch per rack at a time).')


def test_a_tray_that_is_not_a_node_is_idle_and_not_drained():
    plan = rp.plan(cluster(busy=TRAYS[1:], not_nodes=('tray01',)))
    assert plan['canaries'] == ['tray01']
    assert plan['trays']['tray01']['drain'] == 'not drained: the cluster has no node tray01'
    assert plan['trays']['tray01']['via'] is None


def test_the_nodes_name_is_the_one_the_inventory_gives():
    plan = rp.plan(cluster(not_nodes=('tray01',), nodes=dict((t, 'node-' + t) for t in TRAYS)))
    assert plan['trays']['tray01']['drain'] == 'not drained: the cluster has no node node-tray01'


def test_strategy_canary_takes_busy_trays_down_together_drained_directly():
    plan = rp.plan(cluster(busy=('tray01', 'tray02'), strategy='canary', via='maintenance_operator'))
    assert waves(plan) == [['tray03'], ['tray01', 'tray02', 'tray04', 'tray05', 'tray06', 'tray07', 'tray08']]
    assert plan['trays']['tray01']['role'] == 'together' and plan['trays']['tray01']['via'] == 'drain'
    assert plan['lines'][0].endswith('canary tray03, then the other 7 together.')


def test_strategy_canary_picks_a_busy_canary_when_no_tray_is_idle():
    plan = rp.plan(cluster(busy=TRAYS, strategy='canary', canaries='per_group'))
    assert waves(plan) == [['tray01', 'tray05'], ['tray02', 'tray03', 'tray04', 'tray06', 'tray07', 'tray08']]
    assert plan['trays']['tray01']['via'] == 'drain'


def test_strategy_canary_refuses_a_maintenance_operator_it_was_told_to_use():
    plan = rp.plan(cluster(busy=('tray02',), strategy='canary', via='maintenance_operator', via_insisted=True))
    assert plan['refuse'].startswith('rolling_reboot_drain_via is maintenance_operator, but strategy canary takes the '
                                     'busy trays tray02 down together')
    assert plan['next'] is None and plan['progress'] == ''
    assert plan['lines'][-1] == plan['refuse']
    # without busy trays there is nothing the budget would hold back
    assert rp.plan(cluster(strategy='canary', via='maintenance_operator', via_insisted=True))['refuse'] is None
    # and auto sends the busy trays through it
    assert rp.plan(cluster(busy=('tray02',), via='maintenance_operator', via_insisted=True))['refuse'] is None


def test_where_each_state_comes_from_without_a_read():
    plan = rp.plan(inputs(cluster={'read': False, 'why': 'nothing configured here'}))
    assert plan['trays']['tray01']['why'] == 'nothing configured here' and plan['trays']['tray01']['node'] is False
    plan = rp.plan(inputs(cluster={'read': True, 'why': ''}))           # read, but no state for the trays
    assert plan['trays']['tray01']['why'] == 'its node was not read' and plan['trays']['tray01']['node'] is True
    assert plan['busy'] == TRAYS and plan['trays']['tray01']['via'] == 'drain'
    assert rp.plan(inputs(drain='never'))['trays']['tray01']['node'] is False
    assert rp.plan(cluster(not_nodes=('tray02',)))['trays']['tray02']['node'] is False
    assert rp.plan(cluster())['trays']['tray02']['node'] is True


def test_names_are_listed_up_to_six():
    assert rp._names(['a', 'b', 'c', 'd', 'e', 'f']) == 'a, b, c, d, e, f'
    assert rp._names(['a', 'b', 'c', 'd', 'e', 'f', 'g']) == 'a, b, c, d, e, f and 1 more'
    assert rp._names(['a', 'b'], 1) == 'a and 1 more'


def test_drain_never_counts_every_tray_busy():
    plan = rp.plan(inputs(drain='never'))
    assert plan['busy'] == TRAYS and plan['canaries'] == []
    assert plan['periods'] == 4
    assert plan['trays']['tray01']['drain'] == 'not drained: rolling_reboot_drain is never'
    assert plan['trays']['tray01']['why'] == 'not read: rolling_reboot_drain is never (counted as busy)'
    assert 'every tray counts as busy' in plan['lines'][0]
    # strategy canary still takes them canary-first
    assert rp.plan(inputs(drain='never', strategy='canary'))['periods'] == 2


def test_drain_always_refuses_trays_it_would_not_drain():
    plan = rp.plan(inputs(drain='always'))
    assert plan['refuse'] == ('rolling_reboot_drain is always, but tray01, tray02, tray03, tray04, tray05, tray06 and '
                              '2 more would reboot not drained: no cluster; nothing was rebooted.')
    assert rp.plan(cluster(drain='always'))['refuse'] is None
    # the first tray's reason is named
    plan = rp.plan(cluster(drain='always', not_nodes=('tray02', 'tray03')))
    assert plan['refuse'] == ('rolling_reboot_drain is always, but tray02, tray03 would reboot not drained: the cluster '
                              'has no node tray02; nothing was rebooted.')


def test_a_tray_without_its_group_is_refused_whatever_the_strategy():
    groups = dict(RACK, tray03='')
    for strategy in ('auto', 'canary', 'rolling'):
        plan = rp.plan(inputs(groups=groups, strategy=strategy))
        assert plan['refuse'] == ('rack is not set for tray03: without it the tray could share a rack with any other, '
                                  'so its reboot cannot be placed safely; set it in the inventory or do not group by '
                                  'it; nothing was rebooted.')
        assert plan['waves'] == [] and plan['next'] is None and plan['summary'] == plan['refuse']
        assert plan['lines'] == [plan['refuse']] and plan['trays']['tray01']['role'] is None


def test_only_the_trays_that_need_a_reboot_are_planned():
    reasons = dict((t, []) for t in TRAYS)
    reasons.update(tray03=['kernel_tuning'], tray04=['rdma_netns', 'kernel_tuning'], tray07=['kernel_tuning'])
    plan = rp.plan(inputs(reasons=reasons))
    assert waves(plan) == [['tray03'], ['tray04', 'tray07']]
    assert plan['trays']['tray01'] == {'idle': True, 'why': 'no cluster configured', 'node': False, 'role': None,
                                       'wave': None, 'via': None, 'drain': '-', 'pending': False}
    assert plan['lines'][0].startswith('3 of 8 tray(s) need a reboot, in 2 reboot period(s)')


def test_nothing_to_reboot_no_wave():
    plan = rp.plan(inputs(reasons={}))
    assert plan['waves'] == [] and plan['periods'] == 0 and plan['next'] is None and plan['progress'] == ''
    assert plan['lines'] == ['0 of 8 tray(s) need a reboot, in 0 reboot period(s) (strategy auto): 0 idle, 0 busy - '
                             'no cluster configured: every tray counts as idle.']


def test_a_single_tray_is_its_own_canary():
    reasons = {'tray05': ['kernel_tuning']}
    plan = rp.plan(inputs(reasons=reasons))
    assert waves(plan) == [['tray05']] and plan['canaries'] == ['tray05']
    assert plan['lines'][0].endswith('canary tray05, then nothing else.')


def test_check_mode_says_so():
    plan = rp.plan(inputs(check_mode=True))
    assert plan['lines'][0].endswith(' Check mode: nothing is rebooted.')
    assert plan['lines'][1] == 'wave 1/2 (canary): tray01 (would reboot)'


def test_per_group_canaries():
    plan = rp.plan(inputs(canaries='per_group'))
    assert waves(plan) == [['tray01', 'tray05'], ['tray02', 'tray03', 'tray04', 'tray06', 'tray07', 'tray08']]
    assert plan['lines'][0].endswith('canary tray01, tray05, then the other 6 together.')


@pytest.mark.parametrize('key, value, words', [
    ('strategy', 'fast', "strategy must be one of auto, canary, rolling, got 'fast'"),
    ('drain', 'sometimes', "drain must be one of auto, always, never, got 'sometimes'"),
    ('via', 'kubectl', "via must be one of drain, maintenance_operator, got 'kubectl'"),
    ('canaries', 0, 'gpu_tray_reboot_canaries'),
    ('batch', 'two', 'gpu_tray_reboot_batch (rolling_reboot_batch): expected a positive integer'),
])
def test_inputs_no_plan_can_be_made_from_are_errors_naming_them(key, value, words):
    with pytest.raises(rp.PlanError) as err:
        rp.plan(inputs(**{key: value}))
    assert words in str(err.value)
    # a bad batch is refused even when nothing needs a reboot: it is wrong on every run
    with pytest.raises(rp.PlanError):
        rp.plan(inputs(reasons={}, **{key: value}))


def test_a_rolling_plan_without_a_batch_takes_one():
    plan = rp.plan({'hosts': ['t1', 't2'], 'reasons': {'t1': ['r'], 't2': ['r']}, 'strategy': 'rolling',
                    'drain': 'auto', 'via': 'drain', 'cluster': {'read': False, 'why': ''}})
    assert plan['lines'][0] == '2 of 2 tray(s) need a reboot, in 2 reboot period(s) (strategy rolling, batch 1).'


def test_defaults_of_the_optional_inputs():
    plan = rp.plan({'hosts': ['t1', 't2'], 'reasons': {'t1': ['r'], 't2': ['r']}, 'strategy': 'auto',
                    'drain': 'auto', 'via': 'drain', 'cluster': {'read': False, 'why': ''}})
    assert waves(plan) == [['t1'], ['t2']]
    assert plan['lines'][0] == ('2 of 2 tray(s) need a reboot, in 2 reboot period(s) (strategy auto): 2 idle, 0 busy - '
                                'no cluster configured: every tray counts as idle; canary t1, then the other 1 '
                                'together.')
    assert plan['trays']['t1']['drain'] == 'not drained: no cluster'
    assert plan['progress'] == 'wave 1/2 (canary) started -: 1 tray(s) going down; no reboot measured yet in this ' \
                               'run, so no estimate.'


# ------------------------------------------------------------------------------------------------ re-plans

def done(rows, *trays, **fields):
    rows = dict(rows)
    for tray in trays:
        extra = dict((k, v) for k, v in fields.items() if k not in ('status', 'role', 'wave'))
        rows[tray] = dict(rows[tray], status=fields.get('status', 'rebooted'), role=fields.get('role', 'canary'),
                          wave=fields.get('wave', 1), **extra)
    return rows


WAVE_1 = {'wave': 1, 'label': 'canary', 'trays': ['tray01'], 'started': NOW - 60, 'ended': NOW - 20,
          'seconds': 40.0, 'reboots': {'tray01': 33.4}, 'failed': []}


def test_after_the_canary_everything_else_goes_together_with_the_progress_line():
    rows = done(inputs()['rows'], 'tray01')
    plan = rp.plan(inputs(rows=rows, waves_done=[WAVE_1]))
    assert waves(plan) == [TRAYS[1:]] and plan['canaries'] == [] and plan['periods'] == 1
    assert plan['lines'][1] == 'wave 2/2 (7 together): tray02, tray03, tray04, tray05, tray06, tray07, tray08'
    assert plan['trays']['tray02']['wave'] == 2
    assert plan['lines'][0].endswith('; all together; 1 already rebooted and verified in this run.')
    assert plan['progress'] == (
        'wave 2/2 (7 together) started 2026-12-05 00:37:44 UTC: 7 tray(s) going down; the last reboot took 33 s '
        '(tray01, wave 1); 1 period(s) left with this one, about 40 s (the median wave so far took 40 s).')
    assert plan['last'] == 'wave 1/2 (canary) done in 40 s: 1 tray(s) back, reboots took 33 s.'
    assert plan['trays']['tray01']['pending'] is False


def test_the_estimate_is_the_median_wave_times_the_waves_left():
    rows = done(inputs(strategy='rolling')['rows'], 'tray01', 'tray05', role='rolling')
    rows = done(rows, 'tray02', 'tray06', role='rolling', wave=2)
    waves_done = [dict(WAVE_1, seconds=30.0, reboots={'tray01': 20.0, 'tray05': 25.0}),
                  dict(WAVE_1, wave=2, seconds=50.0, reboots={'tray02': 41.0, 'tray06': 44.6}),
                  dict(WAVE_1, wave=3, seconds=36.0, reboots={'tray03': None})]
    plan = rp.plan(inputs(strategy='rolling', rows=rows, waves_done=waves_done))
    assert plan['periods'] == 2
    assert plan['progress'] == (
        'wave 4/5 (2 rolling) started 2026-12-05 00:37:44 UTC: 2 tray(s) going down; the last reboot took 45 s '
        '(tray06, wave 2); 2 period(s) left with this one, about 72 s (the median wave so far took 36 s).')


def test_the_median_of_an_even_number_of_waves():
    waves_done = [dict(WAVE_1, seconds=30.0), dict(WAVE_1, wave=2, seconds=50.0)]
    rows = done(inputs()['rows'], 'tray01')
    plan = rp.plan(inputs(rows=rows, waves_done=waves_done))
    assert 'about 40 s (the median wave so far took 40 s)' in plan['progress']
    waves_done = [dict(WAVE_1, wave=i + 1, seconds=float(s)) for i, s in enumerate((10, 70, 20, 30))]
    plan = rp.plan(inputs(rows=rows, waves_done=waves_done))
    assert 'the median wave so far took 25 s' in plan['progress']
    assert plan['last'] == 'wave 4/5 (canary) done in 30 s: 1 tray(s) back, reboots took 33 s.'


def test_no_estimate_before_a_reboot_was_measured():
    plan = rp.plan(inputs(waves_done=[dict(WAVE_1, reboots={'tray01': None})]))
    assert plan['progress'].endswith('; no reboot measured yet in this run, so no estimate.')
    plan = rp.plan(inputs(waves_done=[dict(WAVE_1, reboots={}, seconds=None)]))
    assert plan['progress'].endswith('so no estimate.')


def test_the_last_line_names_the_slowest_reboot_and_the_failed_trays():
    record = dict(WAVE_1, wave=2, label='7 together', seconds=61.2,
                  reboots={'tray02': 40.0, 'tray03': 52.5, 'tray04': None}, failed=['tray04'])
    assert rp.wave_line(record, 2) == ('wave 2/2 (7 together) done in 61 s: 2 tray(s) back, reboots took 40 s-52 s '
                                       '(slowest tray03); FAILED: tray04.')
    assert rp.wave_line({'wave': 1}, 3) == 'wave 1/3 (-) done in 0 s.'


def test_a_canary_that_turned_busy_just_before_its_wave_leaves_it_and_another_is_picked():
    # the re-plan with what was just read: tray01 now runs a workload; the wave proposed was [tray01]
    states = dict((t, idle_state()) for t in TRAYS)
    states['tray01'] = busy_state()
    plan = rp.plan(inputs(states=states, cluster={'read': True, 'why': ''}, only=['tray01']))
    assert plan['canaries'] == ['tray02'] and plan['next']['trays'] == [] and plan['next']['label'] == ''
    # next time round the new canary goes alone
    plan = rp.plan(inputs(states=states, cluster={'read': True, 'why': ''}))
    assert plan['next']['trays'] == ['tray02']


def test_a_tray_that_turned_busy_leaves_the_together_wave_for_a_rolling_one():
    rows = done(inputs()['rows'], 'tray01')
    states = dict((t, idle_state()) for t in TRAYS)
    states['tray03'] = busy_state()
    plan = rp.plan(inputs(rows=rows, states=states, cluster={'read': True, 'why': ''}, waves_done=[WAVE_1],
                          only=TRAYS[1:]))
    assert plan['next']['trays'] == TRAYS[1:]          # tray03 goes as the first rolling batch of rack A
    assert plan['next']['rolling'] == ['tray03'] and 'tray03' not in plan['next']['together']
    assert plan['next']['label'] == '6 together + 1 rolling'
    # a wave restricted to what was read keeps only those trays
    plan = rp.plan(inputs(rows=rows, states=states, cluster={'read': True, 'why': ''}, waves_done=[WAVE_1],
                          only=['tray02', 'tray04']))
    assert plan['next']['trays'] == ['tray02', 'tray04'] and plan['next']['rolling'] == []
    assert plan['next']['canary'] == [] and plan['next']['together'] == ['tray02', 'tray04']


# ------------------------------------------------------------------------------------------------ stopping

def test_a_failed_canary_stops_the_run_before_any_other_tray_reboots():
    bmc = {'summary': 'BMC: PowerState On, BootProgress PCIResourceConfigStarted, health Critical'}
    rows = done(inputs()['rows'], 'tray01', status='FAILED', failed_step='Stop when the tray did not come back',
                bmc=bmc)
    plan = rp.plan(inputs(rows=rows, waves_done=[dict(WAVE_1, failed=['tray01'])]))
    assert plan['next'] is None and plan['progress'] == ''
    assert plan['stop'] == {'failed': ['tray01'], 'canary': ['tray01'], 'msg': (
        'The canary tray01 failed (tray01: Stop when the tray did not come back; tray01 BMC: PowerState On, '
        'BootProgress PCIResourceConfigStarted, health Critical), so no other tray was rebooted: the change this run '
        'applies may keep every tray from coming back. 0 tray(s) were rebooted and verified in this run; a re-run '
        'resumes with the trays still pending.')}
    assert 'tray01' not in plan['pending']


def test_the_bmc_after_a_power_cycle_is_what_the_stop_names():
    bmc = {'summary': 'BMC: first', 'after': {'summary': 'BMC: after the cycle'}}
    rows = done(inputs()['rows'], 'tray01', status='FAILED', failed_step='reboot', bmc=bmc)
    assert 'tray01 BMC: after the cycle)' in rp.plan(inputs(rows=rows))['stop']['msg']


def test_a_failed_canary_without_a_bmc_section():
    rows = done(inputs()['rows'], 'tray01', status='FAILED', failed_step='Verify the tray')
    assert rp.plan(inputs(rows=rows))['stop']['msg'].startswith('The canary tray01 failed (tray01: Verify the tray), so')


def test_a_failed_tray_of_a_later_wave_stops_the_run_and_names_the_wave():
    rows = done(inputs()['rows'], 'tray01')
    rows = done(rows, 'tray02', 'tray03', role='together', wave=2)
    rows = done(rows, 'tray04', status='FAILED', role='together', wave=2, failed_step='the tray stopped answering')
    rows['tray05'] = dict(rows['tray05'], status='FAILED', role='together', wave=2)
    plan = rp.plan(inputs(rows=rows))
    assert plan['stop']['canary'] == [] and plan['stop']['failed'] == ['tray04', 'tray05']
    assert plan['stop']['msg'] == (
        'Stopped because tray04, tray05 failed in wave 2 (tray04: the tray stopped answering; tray05: failed); no '
        'further tray is touched. 3 tray(s) were rebooted and verified in this run; a re-run resumes with the trays '
        'still pending.')
    assert plan['next'] is None
    assert plan['pending'] == ['tray06', 'tray07', 'tray08']


def test_a_failed_tray_without_a_wave():
    rows = dict(inputs()['rows'], tray02={'status': 'FAILED'})
    assert 'failed in wave ? (tray02: failed)' in rp.plan(inputs(rows=rows))['stop']['msg']


def test_a_power_cycled_tray_counts_as_done():
    rows = done(inputs()['rows'], 'tray01', status='rebooted (power-cycled once through the BMC)')
    plan = rp.plan(inputs(rows=rows))
    assert plan['pending'] == TRAYS[1:] and plan['canaries'] == []


# ------------------------------------------------------------------------------------------------ the report row

BASE = {'tray': 'tray02', 'status': 'not reached', 'rebooted': 'no', 'cmdline_verified': 'n/a', 'drain': 'drain',
        'role': 'together', 'wave': 2}
SENT = {'changed': True, 'boot_id': 'b-1', 'sent_at': 1000.0}
BACK = {'changed': True, 'rebooted': True, 'back_at': 1041.26}
BMC = {'read': True, 'summary': 'BMC: PowerState On, BootProgress PCIResourceConfigStarted, health Critical',
       'recovery': {'power_cycle': True, 'command': 'PowerForceRestart', 'why': 'power cycle through the BMC, once'}}


def test_a_tray_back_and_verified():
    row = rr.result(BASE, {'step': None, 'sent': SENT, 'back': BACK, 'verified': 'yes', 'drained': True,
                           'released': 'drained, uncordoned'})
    assert row == dict(BASE, status='rebooted', rebooted='yes', cmdline_verified='yes', drain='drained, uncordoned',
                       down_at=1000.0, up_at=1041.26, reboot_seconds=41.3, unreachable=False)
    assert 'bmc' not in row and 'message' not in row
    assert BASE['status'] == 'not reached'                 # the row given is not changed


def test_a_tray_not_drained_keeps_its_drain_words_and_nothing_to_verify_is_na():
    base = dict(BASE, drain='not drained: no cluster')
    row = rr.result(base, {'step': None, 'sent': SENT, 'back': BACK, 'drained': False, 'released': 'x'})
    assert row['drain'] == 'not drained: no cluster' and row['cmdline_verified'] == 'n/a'


def test_a_power_cycle_wait_without_a_time_keeps_the_first_answer():
    row = rr.result(BASE, {'step': None, 'sent': SENT, 'back': BACK, 'cycled_back': {'rebooted': True}})
    assert row['up_at'] == 1041.26


def test_a_tray_back_after_its_power_cycle():
    row = rr.result(BASE, {'step': None, 'sent': SENT, 'back': {'failed': True, 'back_at': 1600.0}, 'bmc': BMC,
                           'cycled': True, 'cycled_back': {'back_at': 1700.5}, 'verified': 'yes'})
    assert row['status'] == 'rebooted (power-cycled once through the BMC)'
    assert row['rebooted'] == 'yes, after a power cycle'
    assert row['up_at'] == 1700.5 and row['reboot_seconds'] == 700.5
    assert row['bmc']['recovery'] == dict(BMC['recovery'], done=True, result='back after the power cycle')
    assert row['bmc']['after'] is None and row['bmc']['summary'] == BMC['summary']


def test_a_tray_still_down_after_its_power_cycle():
    after = {'summary': 'BMC: PowerState On, BootProgress PCIResourceConfigStarted, health Critical (after)'}
    row = rr.result(BASE, {'step': 'reboot', 'task': 'Stop when the tray did not come back', 'sent': SENT,
                           'back': {'failed': True}, 'bmc': BMC, 'bmc_after': after, 'cycled': True,
                           'error': 'The tray did  not come back\n within 25 s.', 'check': 'the BMC\n section',
                           'drained': True, 'left': 'cordoned (left cordoned)'})
    assert row['status'] == 'FAILED' and row['rebooted'] == 'did not come back' and row['cmdline_verified'] == 'no'
    assert row['failed_step'] == 'Stop when the tray did not come back'
    assert row['error'] == 'The tray did not come back within 25 s.' and row['check'] == 'the BMC section'
    assert row['bmc']['recovery']['result'] == 'still down after the power cycle' and row['bmc']['after'] == after
    assert row['up_at'] is None and row['reboot_seconds'] is None and row['down_at'] == 1000.0
    assert row['drain'] == 'cordoned (left cordoned)'
    assert row['message'] == (
        'Stop when the tray did not come back failed: The tray did not come back within 25 s. BMC: PowerState On, '
        'BootProgress PCIResourceConfigStarted, health Critical (after). Check the BMC section. The tray is left '
        'cordoned (left cordoned); no further tray was touched; a re-run resumes.')


def test_a_power_cycle_command_that_failed():
    row = rr.result(BASE, {'step': 'reboot', 'sent': SENT, 'back': {'failed': True}, 'bmc': BMC, 'cycled': True,
                           'cycle_failed': 'HTTP Error 500'})
    assert row['bmc']['recovery']['result'] == 'the power cycle command failed: HTTP Error 500'
    assert row['failed_step'] == 'reboot'


def test_no_power_cycle_no_recovery_result():
    row = rr.result(BASE, {'step': 'reboot', 'back': {'failed': True}, 'bmc': dict(BMC, recovery=None)})
    assert row['bmc']['recovery'] == {'done': False, 'result': None}
    assert row['down_at'] is None and row['reboot_seconds'] is None


def test_a_canary_that_did_not_come_back_says_so_first_with_the_bmc():
    row = rr.result(dict(BASE, role='canary', tray='tray01'), {
        'step': 'reboot', 'task': 'Stop', 'error': 'not back.', 'back': {'failed': True}, 'bmc': BMC,
        'check': 'the BMC section', 'drained': False})
    assert row['message'].startswith('Canary tray01: Stop failed: not back. BMC: PowerState On, BootProgress '
                                     'PCIResourceConfigStarted, health Critical. Check the BMC section. The tray is '
                                     'left as it is;')
    # the summary is not repeated when the error already carries it
    row = rr.result(BASE, {'step': 'reboot', 'error': 'not back. ' + BMC['summary'] + '.', 'bmc': BMC})
    assert row['message'].count('PowerState') == 1


def test_a_tray_that_came_back_and_stopped_answering_is_recorded_unreachable():
    row = rr.result(BASE, {'step': 'unreachable', 'unreachable': True, 'came_back': True, 'sent': SENT, 'back': BACK,
                           'check': 'the BMC console', 'drained': True, 'left': 'cordoned (left cordoned)'})
    assert row['status'] == 'FAILED' and row['unreachable'] is True
    assert row['failed_step'] == 'the tray stopped answering after it came back from its reboot'
    assert row['rebooted'] == 'yes' and row['cmdline_verified'] == 'no'
    assert row['error'] == 'unreachable over SSH, no further task ran on it'
    assert row['up_at'] == 1041.26


def test_a_tray_unreachable_before_its_reboot():
    row = rr.result(BASE, {'step': 'unreachable', 'unreachable': True, 'error': 'ssh: connect refused'})
    assert row['failed_step'] == 'the tray stopped answering' and row['rebooted'] == 'unknown'
    assert row['error'] == 'ssh: connect refused' and row['cmdline_verified'] == 'no'
    assert row['check'] == '' and row['message'].endswith('Check the error above. The tray is left as it is; no '
                                                          'further tray was touched; a re-run resumes.')


@pytest.mark.parametrize('step, rebooted, verified', [
    ('drain', 'no', 'n/a'), ('maintenance_wait', 'no', 'n/a'), ('maintenance_request', 'no', 'n/a'),
    ('dispatch', 'unknown', 'no'), ('verify', 'yes', 'no'), ('ready', 'yes', 'yes'), ('release', 'yes', 'yes'),
    ('uncordon_wait', 'yes', 'yes'), ('default', 'unknown', 'no'),
])
def test_what_a_failed_step_leaves(step, rebooted, verified):
    row = rr.result(BASE, {'step': step, 'task': 'the task', 'error': 'boom'})
    assert (row['rebooted'], row['cmdline_verified']) == (rebooted, verified)
    assert row['failed_step'] == 'the task' and row['unreachable'] is False and row['drain'] == 'drain'


def test_a_failed_verification_after_a_power_cycle():
    row = rr.result(BASE, {'step': 'verify', 'task': 'Verify', 'error': 'x', 'cycled': True,
                           'cycled_back': {'back_at': 1200.0}, 'sent': SENT, 'back': {'failed': True}})
    assert row['rebooted'] == 'yes, after a power cycle' and row['reboot_seconds'] == 200.0


def test_times_are_utc():
    assert rp._text_time(NOW) == '2026-12-05 00:37:44 UTC'
    assert rp._text_time(None) == '-'


@pytest.mark.parametrize('source', ['gpu_tray_kubeconfig /etc/gpu/kubeconfig', 'gpu_tray_kube_context gb200',
                                    'K8S_AUTH_KUBECONFIG=/runner/env/credential_kubeconfig',
                                    'K8S_AUTH_HOST=https://api:6443', 'KUBECONFIG=/root/kc', '~/.kube/config'])
@pytest.mark.parametrize('drain', ['auto', 'always'])
def test_a_cluster_one_source_configures_but_that_cannot_be_read_refuses_the_run(source, drain):
    """An expired AWX kubeconfig (one source: K8S_AUTH_KUBECONFIG) - or any one other source - whose cluster cannot
    be read stops the run; it never makes every tray idle (canary, then the rest together, undrained)."""
    unread = {'read': False, 'why': 'no cluster configured', 'sources': [source],
              'error': 'Unauthorized: the server has asked for the client to provide credentials\ntraceback'}
    plan = rp.plan(inputs(drain=drain, cluster=unread))
    assert plan['refuse'] == (
        'The Kubernetes cluster configured by %s cannot be read (Unauthorized: the server has asked for the client to '
        'provide credentials); nothing was rebooted. Fix the kubeconfig or credential, or set rolling_reboot_drain to '
        'never to reboot without draining.' % source), plan['refuse']
    assert plan['idle'] == [] and plan['busy'] == TRAYS and plan['next'] is None, plan
    assert all(not t['idle'] and t['why'].endswith('cannot be read') for t in plan['trays'].values()), plan['trays']
    assert 'cannot be read: every tray counts as busy' in plan['summary'], plan['summary']


def test_an_unread_cluster_nothing_configures_counts_every_tray_idle_and_drain_never_reads_none():
    none = rp.plan(inputs(cluster={'read': False, 'why': 'no cluster configured', 'sources': [], 'error': ''}))
    assert none['refuse'] is None and none['idle'] == TRAYS and none['next'] is not None, none
    # rolling_reboot_drain never: nothing is read, nothing refused; every tray counts as busy (rolling)
    never = rp.plan(inputs(drain='never', cluster={'read': False, 'why': 'rolling_reboot_drain is never',
                                                   'sources': ['KUBECONFIG=/root/kc'], 'error': ''}))
    assert never['refuse'] is None and never['busy'] == TRAYS, never
    # a read cluster is not refused whatever configures it
    read = rp.plan(dict(cluster(), cluster={'read': True, 'why': '', 'sources': ['K8S_AUTH_KUBECONFIG=/k'], 'error': ''}))
    assert read['refuse'] is None, read['refuse']


def test_no_pending_tray_refuses_nothing_for_an_unread_cluster():
    unread = {'read': False, 'why': '', 'sources': ['KUBECONFIG=/root/kc'], 'error': 'x'}
    plan = rp.plan(inputs(reasons=dict((t, []) for t in TRAYS), cluster=unread))
    assert plan['refuse'] is None and plan['pending'] == [], plan
