# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling strategy's waves (plugin_utils/reboot_plan.py plan_waves, which the reboot plan calls; the filter
reboot_waves that wrapped it for playbooks is gone)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_plan as rp

TRAYS = ['tray%02d' % i for i in range(1, 9)]
RACK_OF = dict((t, 'r%d' % ((i // 2) + 1)) for i, t in enumerate(TRAYS))    # r1: 01 02, r2: 03 04, ...


def test_default_one_tray_at_a_time_in_inventory_order():
    assert rp.plan_waves(TRAYS, ['tray05', 'tray02', 'tray07']) == [['tray02'], ['tray05'], ['tray07']]


def test_nothing_pending_no_wave():
    assert rp.plan_waves(TRAYS, []) == []


def test_count_batches():
    assert rp.plan_waves(TRAYS[:5], TRAYS[:5], 2) == [['tray01', 'tray02'], ['tray03', 'tray04'], ['tray05']]
    assert rp.plan_waves(TRAYS[:3], TRAYS[:3], '2') == [['tray01', 'tray02'], ['tray03']]


def test_percent_of_all_hosts_not_only_pending():
    # 25% of 8 trays = 2 per wave, even though only 3 need a reboot
    assert rp.plan_waves(TRAYS, ['tray01', 'tray02', 'tray03'], '25%') == [['tray01', 'tray02'], ['tray03']]
    # rounded down, at least one
    assert rp.plan_waves(TRAYS[:3], TRAYS[:3], '10%') == [['tray01'], ['tray02'], ['tray03']]
    assert rp.plan_waves(TRAYS[:4], TRAYS[:4], '100%') == [TRAYS[:4]]


@pytest.mark.parametrize('batch, group, size', [
    ('30%', 8, 2),          # 2.4 trays: rounding up would take a third tray of the rack down
    ('34%', 3, 1),          # 1.02
    ('49%', 4, 1),          # 1.96: never more than the operator allowed
    ('99%', 18, 17),        # 17.82
    ('33.4%', 3, 1),        # 1.002
    ('33.34%', 3, 1),       # 1.0002
    ('50%', 18, 9),
])
def test_percent_rounds_down(batch, group, size):
    """A percentage never lets more trays of a group down than it says (like Ansible's serial)."""
    assert rp.batch_size(batch, group) == size
    hosts = ['t%02d' % i for i in range(group)]
    assert max(len(wave) for wave in rp.plan_waves(hosts, hosts, batch, dict.fromkeys(hosts, 'r1'), 'rack')) == size


def test_groups_reboot_in_parallel_one_batch_each():
    waves = rp.plan_waves(TRAYS, TRAYS, 1, RACK_OF, 'rack')
    assert waves == [['tray01', 'tray03', 'tray05', 'tray07'], ['tray02', 'tray04', 'tray06', 'tray08']]


def test_8_racks_of_18_trays_take_18_waves():
    hosts = ['t%03d' % i for i in range(144)]
    racks = dict((h, 'rack%d' % (i % 8)) for i, h in enumerate(hosts))
    waves = rp.plan_waves(hosts, hosts, 1, racks, 'rack')
    assert len(waves) == 18
    assert all(len(w) == 8 and len(set(racks[h] for h in w)) == 8 for w in waves)


def test_uneven_groups_and_only_pending():
    racks = {'a1': 'A', 'a2': 'A', 'a3': 'A', 'b1': 'B', 'b2': 'B'}
    hosts = ['a1', 'b1', 'a2', 'b2', 'a3']
    waves = rp.plan_waves(hosts, ['a1', 'a2', 'a3', 'b2'], 1, racks, 'rack')
    assert waves == [['a1', 'b2'], ['a2'], ['a3']]


def test_percent_is_per_group():
    racks = dict([('a%d' % i, 'A') for i in range(4)] + [('b%d' % i, 'B') for i in range(8)])
    hosts = sorted(racks)
    waves = rp.plan_waves(hosts, hosts, '50%', racks, 'rack')
    # A: 2 per wave, B: 4 per wave -> 2 waves of 6
    assert [len(w) for w in waves] == [6, 6]
    assert sum(1 for h in waves[0] if racks[h] == 'A') == 2


def test_integer_group_values():
    racks = {'t1': 1, 't2': 1, 't3': 2}
    assert rp.plan_waves(['t1', 't2', 't3'], ['t1', 't2', 't3'], 1, racks) == [['t1', 't3'], ['t2']]


def test_the_filter_takes_one_tray_at_a_time_by_default():
    assert rp.plan_waves(TRAYS, ['tray02', 'tray01']) == [['tray01'], ['tray02']]


@pytest.mark.parametrize('batch, waves', [
    ('1', [['tray01'], ['tray02'], ['tray03']]),          # the smallest count, as text from a survey
    ('0.5%', [['tray01'], ['tray02'], ['tray03']]),       # above 0: at least one tray
    ('100%', [['tray01', 'tray02', 'tray03']]),
])
def test_smallest_and_largest_batches(batch, waves):
    assert rp.plan_waves(TRAYS[:3], TRAYS[:3], batch) == waves


def test_a_bad_batch_is_refused_even_when_nothing_needs_a_reboot():
    """The setting is wrong on every run, not only on the run that happens to need a reboot."""
    with pytest.raises(ValueError, match='positive integer or a percentage'):
        rp.plan_waves(TRAYS, [], 'two')


@pytest.mark.parametrize('batch', [0, -1, '0', '0%', '150%', '100.5%', 'two', '', True, None, 1.5, '%'])
def test_bad_batch_names_the_problem(batch):
    with pytest.raises(ValueError) as err:
        rp.plan_waves(TRAYS, TRAYS, batch)
    assert 'positive integer or a percentage' in str(err.value)


def test_missing_group_value_names_hosts_and_variable():
    racks = dict(RACK_OF)
    del racks['tray03']
    racks['tray04'] = ''
    with pytest.raises(ValueError) as err:
        rp.plan_waves(TRAYS, TRAYS, 1, racks, 'rack')
    assert 'rack is not set for tray03, tray04' in str(err.value)


def test_missing_group_value_of_a_tray_that_needs_no_reboot_is_fine():
    racks = dict(RACK_OF)
    del racks['tray08']
    assert rp.plan_waves(TRAYS, ['tray01', 'tray02'], 1, racks, 'rack') == [['tray01'], ['tray02']]


def test_unhashable_group_value():
    with pytest.raises(ValueError) as err:
        rp.plan_waves(['t1'], ['t1'], 1, {'t1': ['r1']}, 'rack')
    assert "rack of t1 is ['r1']" in str(err.value)


def test_pending_host_outside_the_play():
    with pytest.raises(ValueError) as err:
        rp.plan_waves(['t1'], ['t1', 'tx'], 1)
    assert 'not in the play: tx' in str(err.value)


@given(st.lists(st.tuples(st.sampled_from('ABCD'), st.booleans()), min_size=1, max_size=40),
       st.integers(min_value=1, max_value=5))
def test_properties(spec, batch):
    hosts = ['h%02d' % i for i in range(len(spec))]
    group_of = dict((h, g) for h, (g, _p) in zip(hosts, spec))
    pending = [h for h, (_g, p) in zip(hosts, spec) if p]
    waves = rp.plan_waves(hosts, pending, batch, group_of, 'rack')
    flat = [h for w in waves for h in w]
    assert sorted(flat) == sorted(pending)                                   # every pending tray exactly once
    assert all(w for w in waves)
    for wave in waves:
        per_group = {}
        for h in wave:
            per_group[group_of[h]] = per_group.get(group_of[h], 0) + 1
        assert max(per_group.values()) <= batch                              # at most one batch per group
    counts = {}
    for h in pending:
        counts[group_of[h]] = counts.get(group_of[h], 0) + 1
    expected = max([-(-c // batch) for c in counts.values()] or [0])          # the biggest group sets the pace
    assert len(waves) == expected
    for group in counts:                                                     # a group keeps its inventory order
        order = [h for h in flat if group_of[h] == group]
        assert order == sorted(order)
