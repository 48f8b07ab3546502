# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/journal.py and what the rolling reboot's plan makes of it (issue 55): a run killed between two
steps leaves a journal without its end; the next run says what it left, treats its held nodes as ours, releases those
whose tray needs no reboot any more, and refuses to reboot anything while a tray it sent down is still away."""

import json
import os

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import journal
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import phase_record
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_run as rr

from test_reboot_run import NOW, inputs, trays

DEAD = '20261207T140000Z-4242'
NEXT = '20261207T141500Z-5151'


def _journal(steps, run=DEAD, phase='rolling_reboot'):
    """Entries of one run: [(step, trays, detail)], a second apart."""
    return [journal.entry(run, phase, step, t, d, now=NOW + i) for i, (step, t, d) in enumerate(steps)]


KILLED_IN_WAVE_2 = [('planned', ['tray01', 'tray02', 'tray03'], {}),
                    ('held', ['tray01'], {'node': 'tray01', 'via': 'drain'}), ('sending', ['tray01'], {}),
                    ('sent', ['tray01'], {'boot_id': 'a'}), ('back', ['tray01'], {}), ('verified', ['tray01'], {}),
                    ('released', ['tray01'], {'node': 'tray01'}),
                    ('held', ['tray02'], {'node': 'tray02', 'via': 'drain'}),
                    ('held', ['tray03'], {'node': 'tray03', 'via': 'maintenance_operator'}),
                    ('sending', ['tray02'], {}), ('sent', ['tray02'], {'boot_id': 'b'}),
                    ('sending', ['tray03'], {}), ('sent', ['tray03'], {'boot_id': 'c'}), ('back', ['tray02'], {})]


def test_a_run_without_its_end_was_cut_short_and_says_where():
    summary = journal.cut_short(_journal(KILLED_IN_WAVE_2), 'rolling_reboot', current=NEXT)
    assert summary['run'] == DEAD and summary['step'] == 'back'
    assert summary['sent_down'] == ['tray01', 'tray02', 'tray03'] and summary['back'] == ['tray01', 'tray02']
    assert summary['verified'] == ['tray01'] and summary['still_down'] == ['tray03']
    assert sorted(summary['held']) == ['tray02', 'tray03'] and summary['held']['tray03']['via'] == 'maintenance_operator'
    assert journal.line(summary) == (
        'Run %s was cut short at back (2026-12-05 00:37:57 UTC): sent down: tray01, tray02, tray03; back: tray01, '
        'tray02; verified: tray01; still down: tray03; nodes held: tray02, tray03.' % DEAD)


def test_a_run_that_ended_left_nothing_and_the_current_run_is_never_its_own_earlier_run():
    ended = _journal(KILLED_IN_WAVE_2 + [('end', ['tray01', 'tray02', 'tray03'], {})])
    assert journal.cut_short(ended, 'rolling_reboot', current=NEXT) is None
    mine = _journal(KILLED_IN_WAVE_2, run=NEXT)
    assert journal.cut_short(ended + mine, 'rolling_reboot', current=NEXT) is None
    # the last run before this one counts: an older cut-short run followed by one that ended is done with
    assert journal.cut_short(_journal(KILLED_IN_WAVE_2) + _journal([('end', [], {})], run='x-1'), 'rolling_reboot',
                             current=NEXT) is None
    assert journal.cut_short([], 'rolling_reboot') is None and journal.line(None) == ''
    # another phase's journal is not this one's
    assert journal.cut_short(_journal(KILLED_IN_WAVE_2, phase='stack_deploy'), 'rolling_reboot', current=NEXT) is None


def test_a_line_the_writer_died_in_is_skipped(tmp_path):
    path = str(tmp_path / 'run' / journal.JOURNAL)
    for item in _journal(KILLED_IN_WAVE_2[:4]):
        journal.append(path, item)
    with open(path, 'a') as fh:
        fh.write('{"run": "%s", "phase": "rolling_reboot", "step": "ba' % DEAD)
    got = journal.read(path)
    assert [e['step'] for e in got] == ['planned', 'held', 'sending', 'sent']
    assert journal.cut_short(got, 'rolling_reboot')['still_down'] == ['tray01']
    assert journal.read(str(tmp_path / 'none')) == []
    with pytest.raises(ValueError):
        journal.entry(DEAD, 'rolling_reboot', 'rebooting')


def test_the_run_id_is_the_controller_processs_start_and_pid(tmp_path):
    proc = tmp_path / 'proc'
    (proc / '777').mkdir(parents=True)
    ticks = 100 * 3600          # an hour after boot at 100 ticks a second
    (proc / '777' / 'stat').write_text('777 (ansible-play) S ' + ' '.join(['0'] * 18) + ' %d 0 0\n' % ticks)
    (proc / 'stat').write_text('cpu 1 2 3\nbtime 1796428800\n')
    if os.sysconf('SC_CLK_TCK') == 100:
        assert journal.run_id(777, str(proc)) == '20261205T010000Z-777'
    assert journal.run_id(778, str(proc), now=NOW).endswith('-778')          # no /proc entry: now
    assert journal.run_id() == journal.run_id()                              # one run, one id


def _nodes(**marks):
    items = []
    for name in ('tray01', 'tray02', 'tray03'):
        node = {'metadata': {'name': name, 'annotations': {}}, 'spec': {}}
        if name in marks:
            node['metadata']['annotations'][journal.NODE_ANNOTATION] = journal.node_annotation(marks[name], 'held',
                                                                                               'drain', now=NOW)
            node['spec']['unschedulable'] = True
        items.append(node)
    return {'resources': items}


PODS = {'resources': [{'metadata': {'name': 'ds', 'ownerReferences': [{'kind': 'DaemonSet'}]}}]}


def test_the_next_plan_treats_our_cordon_as_ours_and_releases_the_trays_that_need_no_reboot():
    """tray02 came back in the wanted state (no reboot asked); tray01 still asks; both nodes cordoned by the dead run
    (read from the Node's mark alone: no journal)."""
    run = rr.begin(inputs(asking=('tray01',), cluster={'read': True}), trays(), nodes=_nodes(tray01=DEAD, tray02=DEAD),
                   pods={'tray01': PODS, 'tray02': PODS, 'tray03': PODS}, now=NOW, run_id=NEXT)
    assert sorted(run['held']) == ['tray01', 'tray02'] and sorted(run['release']) == ['tray02']
    # our own cordon is no sign of somebody at work: tray01 is idle, judged by its pods
    assert run['states']['tray01']['idle'] is True
    assert run['states']['tray01']['why'].endswith('cordoned by a run of ours that was cut short')
    # somebody else's cordon still makes a tray busy
    other = rr.begin(inputs(asking=('tray01',), cluster={'read': True}), trays(),
                     nodes={'resources': [{'metadata': {'name': 'tray01'}, 'spec': {'unschedulable': True}}]},
                     pods={}, now=NOW, run_id=NEXT)
    assert other['states']['tray01']['idle'] is False and other['release'] == {}
    # this run's own mark is not an earlier run's
    mine = rr.begin(inputs(asking=('tray01',), cluster={'read': True}), trays(), nodes=_nodes(tray02=NEXT),
                    pods={'tray01': PODS, 'tray02': PODS}, now=NOW, run_id=NEXT)
    assert mine['held'] == {}


def test_a_tray_the_dead_run_sent_down_that_is_still_away_refuses_the_run_before_any_reboot():
    summary = journal.cut_short(_journal(KILLED_IN_WAVE_2), 'rolling_reboot', current=NEXT)
    run = rr.begin(inputs(hosts=('tray01', 'tray02'), asking=('tray01',)), trays(), now=NOW, cut_short=summary,
                   run_id=NEXT, gone=['tray03'])
    assert run['plan']['refuse'].startswith('tray03 sent down by run %s (cut short at back' % DEAD)
    assert 'nothing is rebooted until it is back' in run['plan']['refuse'] and run['plan']['next'] is None
    # back and answering: no refusal; the journal's held node of a tray that needs no reboot is released
    run = rr.begin(inputs(asking=('tray01',)), trays(), now=NOW, cut_short=summary, run_id=NEXT, gone=[])
    assert run['plan']['refuse'] is None and sorted(run['release']) == ['tray02', 'tray03']
    report = rr.report(run, inputs(asking=('tray01',)), trays(), ['tray01', 'tray02', 'tray03'])
    assert report['earlier'] == journal.line(summary) and report['released'] == ['tray02', 'tray03']
    md = phase_record.rolling_reboot_markdown(report, {'hosts': ['tray01', 'tray02', 'tray03']})
    assert md.splitlines()[2] == '**Earlier run:** ' + journal.line(summary)
    assert 'Released first (their trays came back in the wanted state; the cut-short run held their nodes): ' \
           'tray02, tray03.' in md


def test_the_node_mark_reads_back():
    raw = journal.node_annotation(DEAD, 'held', 'maintenance_operator', now=NOW)
    assert json.loads(raw) == {'run': DEAD, 'step': 'held', 'via': 'maintenance_operator', 'time': NOW}
    node = {'metadata': {'annotations': {journal.NODE_ANNOTATION: raw}}}
    assert journal.node_mark(node)['run'] == DEAD and journal.node_mark({'metadata': {}}) is None
    assert journal.node_mark({'metadata': {'annotations': {journal.NODE_ANNOTATION: 'x'}}})['run'] == '?'


def test_a_node_left_cordoned_on_purpose_is_not_released():
    """A tray that failed leaves its node cordoned for a person (mark step failed, journal failed): a later run
    neither releases it nor counts the cordon as its own."""
    nodes = _nodes(tray02=DEAD)
    nodes['resources'][1]['metadata']['annotations'][journal.NODE_ANNOTATION] = journal.node_annotation(
        DEAD, 'failed', 'drain', now=NOW)
    run = rr.begin(inputs(asking=('tray01',), cluster={'read': True}), trays(), nodes=nodes,
                   pods={'tray01': PODS, 'tray02': PODS, 'tray03': PODS}, now=NOW, run_id=NEXT)
    assert run['held'] == {} and run['release'] == {}
    summary = journal.cut_short(_journal(KILLED_IN_WAVE_2 + [('failed', ['tray03'], {'step': 'reboot'})]),
                                'rolling_reboot', current=NEXT)
    assert sorted(summary['held']) == ['tray02'] and summary['failed'] == ['tray03']
