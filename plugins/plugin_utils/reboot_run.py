# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling reboot's run, kept on the controller: pure functions (no I/O, no Ansible).

The action ``gpu_tray.cluster.reboot_step`` hands each step what the role registered (by short names: it alone knows
the role's register: names) and the previous step's result; the step returns the next one. The plan of each wave is
plugin_utils/reboot_plan.py's, what else acts on the nodes plugin_utils/reboot_cluster.py's.

* :func:`result` - a tray's row of the rolling-reboot report from what its wave registered (:func:`outcome`).
* :func:`begin`, :func:`start_wave`, :func:`not_back`, :func:`record_wave`, :func:`report` - the run's steps.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import journal as run_journal
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.reboot_cluster import (
    foreign_controllers, is_failed, is_skipped, left, maintenance_operator_missing, node_object,
    use_maintenance_operator)
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.reboot_plan import DONE, FAILED, plan, tray_state


# ------------------------------------------------------------------------------------------------ the report row

HINTS = {
    # what a failed step leaves: rebooted / cmdline verified
    'drain': ('no', 'n/a'), 'maintenance_request': ('no', 'n/a'), 'maintenance_wait': ('no', 'n/a'),
    'recheck': ('no', 'n/a'), 'dispatch': ('unknown', 'no'), 'reboot': ('did not come back', 'no'),
    'verify': ('yes', 'no'), 'ready': ('yes', 'yes'), 'release': ('yes', 'yes'), 'uncordon_wait': ('yes', 'yes'),
    'unreachable': ('unknown', 'no'),
}


def result(base, outcome):
    """A tray's report row after its wave (``base``: the row so far; ``outcome``: what its wave registered).

    outcome: step (the failed step, None when all went well), error, check (what to look at), sent (the dispatch
    result: boot_id, sent_at), back (the wait: back_at, failed, msg), bmc (bmc.state: :func:`not_back`, or None),
    cycled (the power-cycle command ran), cycle_failed, cycled_back (back after it), verified (the verify plan's
    exports.cmdline_verified), unreachable (it stopped answering over SSH), came_back (its reboot had been seen),
    drained (its node was drained or put under maintenance), left (how a failed tray's node is left), released
    (what the successful drain line says)."""
    row = dict(base)
    sent = outcome.get('sent') or {}
    back = outcome.get('back') or {}
    row['down_at'] = sent.get('sent_at')
    row['up_at'] = None if back.get('failed') else back.get('back_at')
    if (outcome.get('cycled_back') or {}).get('back_at'):
        row['up_at'] = outcome['cycled_back']['back_at']
    row['reboot_seconds'] = (round(float(row['up_at']) - float(row['down_at']), 1)
                             if row['up_at'] is not None and row['down_at'] is not None else None)
    row['unreachable'] = bool(outcome.get('unreachable'))
    if outcome.get('bmc'):
        bmc = dict(outcome['bmc'])
        bmc['recovery'] = dict(bmc.get('recovery') or {}, done=bool(outcome.get('cycled')), result=None)
        bmc['after'] = outcome.get('bmc_after')
        if outcome.get('cycled'):
            bmc['recovery']['result'] = (
                'the power cycle command failed: %s' % (outcome.get('cycle_failed') or '') if outcome.get('cycle_failed')
                else 'back after the power cycle' if outcome.get('cycled_back') else 'still down after the power cycle')
        row['bmc'] = bmc
    cycled = bool(outcome.get('cycled_back'))
    step = outcome.get('step')
    if step is None:
        row.update(status=DONE + (' (power-cycled once through the BMC)' if cycled else ''),
                   rebooted='yes, after a power cycle' if cycled else 'yes',
                   cmdline_verified=outcome.get('verified') or 'n/a',
                   drain=outcome.get('released') if outcome.get('drained') else row.get('drain'))
        return row
    if outcome.get('unreachable'):
        came_back = bool(outcome.get('came_back'))
        rebooted, verified = ('yes', 'no') if came_back else HINTS['unreachable']
        failed_step = 'the tray stopped answering' + (' after it came back from its reboot' if came_back else '')
        error = outcome.get('error') or 'unreachable over SSH, no further task ran on it'
    else:
        rebooted, verified = HINTS.get(step, ('unknown', 'no'))
        if cycled and rebooted == 'yes':
            rebooted = 'yes, after a power cycle'
        failed_step, error = outcome.get('task') or step, outcome.get('error') or ''
    row.update(status=FAILED, rebooted=rebooted, cmdline_verified=verified, failed_step=failed_step,
               error=' '.join(str(error).split()), check=' '.join(str(outcome.get('check') or '').split()),
               drain=outcome.get('left') if outcome.get('drained') else row.get('drain'))
    row['message'] = tray_message(row, outcome.get('left') if outcome.get('drained') else 'as it is')
    return row


def tray_message(row, left):
    """The failure message of a failed tray (its own fatal line)."""
    prefix = 'Canary %s: ' % row.get('tray') if row.get('role') == 'canary' else ''
    text = '%s%s failed: %s' % (prefix, row.get('failed_step'), row.get('error'))
    bmc = row.get('bmc') or {}
    summary = ((bmc.get('after') or {}).get('summary') or bmc.get('summary')) if bmc else None
    if summary and summary not in text:
        text += ' %s.' % summary.rstrip('.')
    return '%s Check %s. The tray is left %s; no further tray was touched; a re-run resumes.' % (
        text, row.get('check') or 'the error above', left)


# ------------------------------------------------------------------------------------------------ the run
#
# What the role registered, turned into the run's record on the controller (action gpu_tray.cluster.reboot_step):
# :func:`begin` (idle or busy, how busy nodes are drained, what refuses the run, the first plan, each tray's report
# row and its BMC access before the first reboot: :func:`judge_bmcs`), :func:`start_wave` (the wave re-planned with
# the pods read just before it), :func:`not_back` (what the BMC says about a tray that did not come back, once),
# :func:`record_wave` (each tray's outcome, the wave's record, the plan of the rest)
# and :func:`report` (the rows, waves and where the run stopped, for the report files and the job's artifacts).
# ``run`` is what the previous step returned (the role registers it as __rolling_reboot_run); ``trays`` per tray
# what the role keeps of it (the fact __rolling_reboot_tray: changed_roles, maintenance, checks, bmc); ``regs`` per
# tray what its tasks registered, by short name (the reboot_step action maps the role's register: names to them;
# the planner knows none).

GONE = 'left the play before the rolling reboot: unreachable or failed in an earlier phase'
LEFT_GONE = 'as it is (it left the run unreachable)'
NO_PLAN = 'No plan was made: the run stopped before it.'


def start_row(tray, reasons, changed_roles, check_mode):
    """A tray's report row before the plan."""
    status = ('would reboot' if check_mode else 'not reached') if reasons else 'no reboot needed'
    return {'tray': tray, 'status': status, 'rebooted': 'no', 'cmdline_verified': 'n/a', 'drain': '-',
            'reboot_required_by': list(reasons or []), 'changed_roles': list(changed_roles or [])}


def _start_rows(inputs, trays):
    return dict((h, start_row(h, (inputs.get('reasons') or {}).get(h), (trays.get(h) or {}).get('changed_roles'),
                              inputs.get('check_mode'))) for h in inputs['hosts'])


def _plan(inputs, run, **more):
    """plan() of the run's inputs with what the run holds (states, rows, the way busy nodes go, waves done)."""
    return plan(dict(inputs, states=run['states'], rows=run['rows'], via=run['via'],
                     waves_done=run.get('waves_done') or [], **more))


def held_by_us(inputs, nodes, cut_short=None, current=None):
    """{tray: {node, via, run, ...}} of the trays whose node a run of ours holds (cordoned, drained or under our
    NodeMaintenance) and did not release: the cut-short run's journal (its ``held``), else our mark on the Node
    (journal.NODE_ANNOTATION, another run's) - so that the cluster alone tells, with the run folder gone. A node a
    run left held on purpose (its tray failed: mark step ``failed``) is not: it waits for a person."""
    out = {}
    names = inputs.get('nodes') or {}
    for host in inputs['hosts']:
        mark = run_journal.node_mark(node_object(nodes, names.get(host)))
        if mark and mark.get('run') != current and mark.get('step') != 'failed':
            out[host] = dict(mark, node=names.get(host, host))
    for host, detail in ((cut_short or {}).get('held') or {}).items():
        if host in inputs['hosts']:
            out[host] = dict(out.get(host) or {}, **detail)
    return out


def _cut_short_refusal(cut_short, gone):
    """The sentence that stops the run before any reboot when a tray the cut-short run sent down is still away."""
    away = [t for t in (cut_short or {}).get('still_down') or [] if t in (gone or [])]
    if not away:
        return None
    return ('%s sent down by run %s (cut short at %s, %s) %s not answering: nothing is rebooted until %s back - wait '
            'for %s, or look at %s through the BMC (docs/runbooks/tray-not-back-from-reboot.md), then run again.'
            % (', '.join(away), cut_short['run'], cut_short['step'], cut_short['at'],
               'is' if len(away) == 1 else 'are', 'it is' if len(away) == 1 else 'they are',
               'it' if len(away) == 1 else 'them', 'it' if len(away) == 1 else 'them'))


def begin(inputs, trays, nodes=None, pods=None, mo_reads=None, now=None, foreign=None, bmc_answers=None,
          cut_short=None, run_id=None, gone=None):
    """The run's starting point: per tray its state (:func:`tray_state` from its Node in ``nodes`` and its ``pods``
    read; None when the cluster was not read), how busy nodes are drained (:func:`use_maintenance_operator`), the
    first plan (``planned``: its lines, kept for the report) and each tray's report row with its place in the plan.
    ``inputs``: plan()'s, without states, rows, via, waves_done, now; with drain_via. The plan refuses the run for
    another controller that reboots these trays (``foreign``: :func:`foreign_controllers`) and for a Maintenance
    Operator insisted on that the cluster does not have (``mo_reads``: :func:`maintenance_operator_missing`). Each
    rebooting tray's BMC is judged from ``bmc_answers`` (:func:`judge_bmcs`: ``bmc``, ``warnings``).

    What a run of ours cut short left (``cut_short``: journal.cut_short of the last run, ``run_id`` this run's, ``gone``
    the trays of the play that left it before the rolling reboot): the report's first line (``earlier``), the nodes
    it held (:func:`held_by_us`: our own cordon is no sign of somebody at work), ``release`` - those of them whose
    tray needs no reboot now (it came back in the wanted state): released before the first wave -, and a refusal
    when a tray it sent down is still away."""
    hosts = [str(h) for h in inputs['hosts']]
    rebooting = [(inputs.get('nodes') or {}).get(h, h) for h in hosts if (inputs.get('reasons') or {}).get(h)]
    inputs = dict(inputs, hosts=hosts, refuse=_cut_short_refusal(cut_short, gone)
                  or foreign_controllers(foreign, nodes, rebooting)
                  or maintenance_operator_missing(inputs.get('via_insisted'), mo_reads))
    read = bool((inputs.get('cluster') or {}).get('read'))
    held = held_by_us(inputs, nodes, cut_short, run_id) if read or cut_short else {}
    pods = pods or {}
    states = {}
    for host in hosts:
        if read:
            got = pods.get(host)
            states[host] = tray_state(node_object(nodes, (inputs.get('nodes') or {}).get(host)),
                                      None if is_skipped(got) else got, ours=host in held)
        else:
            states[host] = None
    run = {'states': states, 'rows': _start_rows(inputs, trays), 'waves_done': [],
           'via': 'maintenance_operator' if use_maintenance_operator(inputs.get('drain_via'), mo_reads) else 'drain',
           'earlier': run_journal.line(cut_short), 'held': held,
           'release': dict((h, v) for h, v in held.items() if not (inputs.get('reasons') or {}).get(h))}
    run['plan'] = _plan(inputs, run, now=now)
    run['planned'] = run['plan']['lines']
    for host in hosts:
        mine = run['plan']['trays'][host]
        run['rows'][host] = dict(run['rows'][host], group=(inputs.get('groups') or {}).get(host), wave=mine['wave'],
                                 role=mine['role'], idle='idle' if mine['idle'] else 'busy', idle_why=mine['why'],
                                 drain=mine['drain'])
    return judge_bmcs(run, inputs, trays, bmc_answers)


def judge_bmcs(run, inputs, trays, answers):
    """Each tray's BMC access before the first reboot (plugin_utils/bmc.py access), for the trays that reboot and
    whose BMC is required or configured: ``bmc`` per tray, and the row's ``bmc_access``; ``warnings``, one per tray
    that reboots with a BMC that cannot be used where it is not required (the role refuses where it is)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bmc
    run = dict(run, rows=dict(run['rows']), bmc={}, warnings=[])
    for host in inputs['hosts']:
        mine = (trays.get(host) or {}).get('bmc') or {}
        if not (inputs.get('reasons') or {}).get(host) or not mine.get('judged'):
            continue
        answer = (answers or {}).get(host)
        run['bmc'][host] = bmc.access(mine.get('settings') or {}, answer if isinstance(answer, dict) else None,
                                      mine.get('serial'))
        run['rows'][host] = dict(run['rows'][host], bmc_access=run['bmc'][host]['msg'])
        if not run['bmc'][host]['ok'] and not mine.get('required'):
            run['warnings'].append(
                '%s: %s The tray reboots anyway (rolling_reboot_bmc_required is false): if it does not come back, '
                'nothing can look at it or recover it.' % (host, run['bmc'][host]['msg']))
    return run


def start_wave(run, inputs, nodes=None, pods=None, now=None):
    """The next wave, planned once more with the pods of its idle trays read just before it (a tray that became busy
    leaves it for a rolling wave): ``wave`` (the plan's next), ``wave_index``, ``started``."""
    states = dict(run['states'])
    for host, got in (pods or {}).items():
        if not is_skipped(got) and host in states:
            states[host] = tray_state(node_object(nodes, (inputs.get('nodes') or {}).get(host)), got)
    run = dict(run, states=states)
    run['plan'] = _plan(inputs, run, only=((run['plan'] or {}).get('next') or {}).get('trays') or [], now=now)
    run.update(wave=run['plan']['next'], wave_index=len(run['waves_done']) + 1, started=now)
    return run


def _serial(tray, regs):
    """The tray's serial as its facts hold it when the wave is recorded (a verify read may have added it; the role's
    serial fact), else as kept before the plan."""
    facts = regs.get('facts')
    if not isinstance(facts, dict):
        return (tray.get('bmc') or {}).get('serial')
    return ((facts.get('gpu_tray') or {}).get('dmi') or {}).get('product_serial')


def not_back(tray, regs, timeout=None, final=False):
    """A tray that did not come back from its reboot (action reboot_step, step ``not_back``, once for that tray):
    ``bmc`` - what its BMC says (bmc.state of the reads the role registered, ``regs``: bmc_system, bmc_logs, facts)
    and whether it is power-cycled once (its ``recovery``) - and the ``warning`` the action shows. With ``final`` -
    still down, not from its reboot nor from the one power cycle - ``after``, what the BMC said after the power cycle
    (when read: bmc_system_after), and ``msg``, the step's failure (``regs``: back, bmc_cycle, bmc_seen: the first
    step's result; ``timeout``: rolling_reboot_timeout). The report row takes both (:func:`outcome`)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bmc
    mine = tray.get('bmc') or {}
    settings, serial = mine.get('settings') or {}, _serial(tray, regs)
    if not final:
        count = mine.get('log_entries')
        seen = bmc.state(settings, regs.get('bmc_system'), regs.get('bmc_logs'), serial=serial,
                         count=bmc.DEFAULT_LOG_ENTRIES if count is None else int(count),
                         recover=mine.get('recover') or 'none', attempted=False)
        return {'bmc': seen, 'warning': '%s; %s' % (seen['summary'], seen['recovery']['why'])}
    read_after = regs.get('bmc_system_after')
    after = None if is_skipped(read_after) else bmc.state(settings, read_after, None, serial=serial)
    seen = (regs.get('bmc_seen') or {}).get('bmc') or {}
    return {'after': after, 'msg': 'The tray did not come back from its reboot within %s s (%s)%s. %s.' % (
        timeout, (regs.get('back') or {}).get('msg', 'no answer'),
        '' if is_skipped(regs.get('bmc_cycle')) else ', nor from its power cycle through the BMC',
        (after or seen).get('summary'))}


def _sent_now(sent, started):
    """Whether this wave sent the tray its reboot: a send that succeeded, at or after the wave started (a result
    registered by an earlier run of the role in the same play is not this wave's)."""
    if not isinstance(sent, dict) or is_failed(sent) or sent.get('unreachable') or sent.get('skipped'):
        return False
    at = sent.get('sent_at')
    return isinstance(at, (int, float)) and (started is None or float(at) >= float(started))


def outcome(regs, tray, mine, via, started=None):
    """What a tray's wave did, for :func:`result`, from what its tasks registered (``regs``): all went well; a failed
    step (``regs['failure']``: step, task, error - the role's one rescue records only that); or, before its reboot
    was sent (nothing waited for), a failure in taking the node out or sending. ``tray``: the tray's kept facts;
    ``mine``: its part of the plan; ``via``: how the run drains busy nodes; ``started``: when the wave started."""
    failure = regs.get('failure')
    drained = mine.get('via') is not None
    if isinstance(failure, dict):
        step = failure.get('step') or 'default'
        checks = tray.get('checks') or {}
        out = {'step': step, 'task': failure.get('task'), 'error': failure.get('error'),
               'check': checks.get(step, checks.get('default')), 'unreachable': step == 'unreachable',
               'came_back': False, 'drained': drained, 'left': left(via, tray.get('maintenance'))}
        if not _sent_now(regs.get('sent'), started):      # it failed before its reboot was sent: nothing waited for
            return out
    else:
        out = {'step': None, 'drained': drained}
    back, cycle, cycled_back = regs.get('back'), regs.get('bmc_cycle'), regs.get('cycled_back')
    cycled_ok = cycled_back if not is_skipped(cycled_back) and not is_failed(cycled_back) else None
    seen, final = regs.get('bmc_seen'), regs.get('bmc_final')         # what not_back said, once
    out.update(sent=regs.get('sent'), back=back, bmc=None if is_skipped(seen) else seen.get('bmc'),
               cycled=not is_skipped(cycle), cycled_back=cycled_ok)
    if out['step'] is None:
        out['verified'] = ((((regs.get('verified') or {}).get('plan') or {}).get('exports') or {})
                           .get('cmdline_verified'))
        out['released'] = 'drained, uncordoned' if mine.get('via') == 'drain' else (
            'NodeMaintenance %s (Maintenance Operator), released' % tray.get('maintenance'))
        return out
    out.update(bmc_after=None if is_skipped(final) else final.get('after'),
               cycle_failed=(cycle.get('msg', 'failed') if is_failed(cycle) else None),
               came_back=not is_failed(back) or cycled_ok is not None)
    return out


def gone_outcome(regs, tray, mine):
    """The outcome of a tray of the wave that left the play (UNREACHABLE: Ansible runs no rescue for it): failed,
    recorded on its behalf so that the next wave never starts beside it."""
    back = regs.get('back')
    return {'step': 'unreachable', 'unreachable': True, 'check': (tray.get('checks') or {}).get('unreachable'),
            'sent': regs.get('sent') if regs.get('sent') is not None else {},
            'came_back': back is not None and not is_skipped(back) and not is_failed(back),
            'drained': mine.get('via') is not None, 'left': LEFT_GONE}


def record_wave(run, inputs, trays, regs, in_play, now=None):
    """The wave's end: each tray's row (:func:`result` of its :func:`outcome`; a tray no longer ``in_play`` counted
    as failed, :func:`gone_outcome`), the wave's record in ``waves_done`` and the plan of the rest (its ``last``
    line; ``stop`` when a tray failed)."""
    wave = run.get('wave') or {}
    rows = dict(run['rows'])
    plan_trays = run['plan']['trays']
    for host in wave.get('trays') or []:
        mine, kept, got = plan_trays.get(host) or {}, trays.get(host) or {}, regs.get(host) or {}
        if host in in_play or isinstance(got.get('failure'), dict):
            rows[host] = result(rows[host], outcome(got, kept, mine, run['via'], run.get('started')))
        if host not in in_play:
            rows[host] = result(rows[host], gone_outcome(got, kept, mine))
    members = wave.get('trays') or []
    started = float(run.get('started') or now)
    entry = {'wave': int(run.get('wave_index') or len(run['waves_done']) + 1), 'label': wave.get('label'),
             'trays': members, 'started': started, 'ended': float(now), 'seconds': round(float(now) - started, 1),
             'reboots': dict((h, rows[h].get('reboot_seconds')) for h in members),
             'failed': [h for h in members if rows[h].get('status') == FAILED]}
    run = dict(run, rows=rows, waves_done=list(run['waves_done']) + [entry])
    run['plan'] = _plan(inputs, run, now=now)
    return run


def report(run, inputs, trays, play_hosts_all, stopped=None):
    """What the report files and the job's artifacts show: ``rows`` (every tray of the run, its report row),
    ``json`` (the rows with their wave's timing, then a row per tray that left the play before the rolling
    reboot), ``waves``, ``plan`` (the latest), ``planned`` (the first plan's lines), ``stopped``."""
    hosts = [str(h) for h in inputs['hosts']]
    run = run if isinstance(run, dict) and isinstance(run.get('rows'), dict) else None
    rows_of = run['rows'] if run else _start_rows(dict(inputs, hosts=hosts), trays)
    rows = [rows_of[h] for h in hosts]
    waves = list((run or {}).get('waves_done') or [])
    wave_of = dict((w.get('wave'), w) for w in waves)
    timed = [dict(row, wave_timing=wave_of.get(row.get('wave'))) for row in rows]
    gone = [{'tray': h, 'status': 'not in the run', 'rebooted': 'no', 'cmdline_verified': 'n/a', 'drain': '-',
             'why': GONE} for h in play_hosts_all if h not in hosts]
    return {'rows': rows, 'json': timed + gone, 'waves': waves, 'plan': (run or {}).get('plan') or {},
            'planned': (run or {}).get('planned') or [NO_PLAN], 'stopped': stopped,
            'earlier': (run or {}).get('earlier') or '', 'released': sorted((run or {}).get('release') or {})}
