# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run journal: what a run did that cannot be undone, written before and after each such step, so that the next
run - after a kill, an evicted execution node, a dropped SSH session - knows what the dead run left (issue 55).

A journal is ``journal.jsonl`` in the run's report folder (docs/awx.md "Where the reports go"): one JSON object a line,
appended (``O_APPEND`` and ``fsync``: a line is whole or, when the writer died in the middle of it, unreadable and
skipped), never rewritten. Each line: ``run`` (the controller run's id, :func:`run_id`), ``phase``, ``step``, ``time``
(epoch seconds), ``trays``, ``detail``. A run that ended writes ``step: end`` last; a run whose last line is anything
else was cut short. The rolling reboot writes ``planned`` (the trays its plan reboots), per tray ``held`` (its node
about to be cordoned or put under maintenance - before it, so a kill right after still says so), ``sending`` (before
the reboot is sent), ``sent``, ``back``, ``verified``, ``released`` (its node schedulable again), ``failed``, and
``end``. The same marks go on the cluster's objects (:data:`NODE_ANNOTATION` on the Node, the NodeMaintenance's own),
so that a run folder lost with its controller does not lose them.

Pure functions but :func:`append`, :func:`read` and :func:`run_id` (the controller's process), used by the
``gpu_tray.cluster.phase_record`` action (its ``journal`` and ``journal_read``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import os
import time

JOURNAL = 'journal.jsonl'
# on a Node our run holds (cordoned, drained or under our NodeMaintenance): {"run": ..., "step": ..., "time": ...}
NODE_ANNOTATION = 'gpu-tray.cluster/rolling-reboot'
STEPS = ('planned', 'held', 'sending', 'sent', 'back', 'verified', 'released', 'failed', 'end')
# what each tray step says about the tray, in order: a later one supersedes an earlier one
_ORDER = dict((step, index) for index, step in enumerate(STEPS))


def _utc(epoch):
    return datetime.datetime.fromtimestamp(float(epoch), tz=datetime.timezone.utc)


def run_id(pid=None, proc='/proc', now=None):
    """The controller run's id: ``<UTC start of ansible-playbook>-<its pid>`` - the same in every worker of one run
    (an action runs in a worker forked from ansible-playbook: its parent), different for the next run. Without
    /proc (not Linux) the start is ``now``."""
    pid = int(pid if pid is not None else os.getppid())
    start = now
    try:
        with open(os.path.join(proc, str(pid), 'stat')) as fh:
            ticks = int(fh.read().rsplit(')', 1)[1].split()[19])
        with open(os.path.join(proc, 'stat')) as fh:
            boot = [int(line.split()[1]) for line in fh if line.startswith('btime ')][0]
        start = boot + ticks / float(os.sysconf('SC_CLK_TCK'))
    except (IOError, OSError, IndexError, ValueError):
        pass
    return '%s-%d' % (_utc(start if start is not None else time.time()).strftime('%Y%m%dT%H%M%SZ'), pid)


def entry(run, phase, step, trays=None, detail=None, now=None):
    """One journal line (a dict)."""
    if step not in STEPS:
        raise ValueError('journal: step %r is not one of %s' % (step, ', '.join(STEPS)))
    return {'run': str(run), 'phase': str(phase), 'step': step,
            'time': round(float(now if now is not None else time.time()), 3),
            'trays': sorted(str(t) for t in trays or []), 'detail': dict(detail or {})}


def append(path, item):
    """Append one line to the journal at ``path`` (made with its folder when missing), flushed to the disk."""
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder)
    data = (json.dumps(item, sort_keys=True, separators=(',', ':')) + '\n').encode('utf-8')
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def parse(text):
    """The journal's entries from its text; a line that is not a whole JSON object (the writer died in it) is
    skipped."""
    out = []
    for line in (text or '').splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and item.get('run') and item.get('step') in STEPS:
            out.append(item)
    return out


def read(path):
    """parse() of the journal at ``path``; [] when there is none."""
    try:
        with open(path) as fh:
            return parse(fh.read())
    except (IOError, OSError):
        return []


def runs(entries):
    """[(run id, [its entries])] in the order the runs first wrote."""
    order, grouped = [], {}
    for item in entries:
        if item['run'] not in grouped:
            order.append(item['run'])
            grouped[item['run']] = []
        grouped[item['run']].append(item)
    return [(run, grouped[run]) for run in order]


def cut_short(entries, phase, current=None):
    """What the last run of ``phase`` before ``current`` left, when it did not end: ``{run, step, time, at, trays,
    sent_down, back, verified, released, held, still_down, failed}`` (``trays``: each tray's last step and its
    detail), or None when that run ended (or there is none)."""
    mine = [(run, items) for run, items in runs(e for e in entries if e.get('phase') == phase) if run != current]
    if not mine:
        return None
    run, items = mine[-1]
    if items[-1]['step'] == 'end':
        return None
    trays, held, seen = {}, {}, {}
    for item in items:
        for tray in item['trays']:
            seen.setdefault(tray, set()).add(item['step'])
            if item['step'] == 'planned':
                trays.setdefault(tray, {'step': 'planned', 'time': item['time'], 'detail': {}})
                continue
            trays[tray] = {'step': item['step'], 'time': item['time'], 'detail': item.get('detail') or {}}
            if item['step'] == 'held':
                held[tray] = dict(item.get('detail') or {}, run=run)
            elif item['step'] in ('released', 'failed'):
                # released, or left held on purpose: a failed tray's node stays cordoned for a person to look at
                held.pop(tray, None)
    last = items[-1]

    def having(step):
        return sorted(t for t, steps in seen.items() if step in steps)

    sent_down = sorted(set(having('sending')) | set(having('sent')))
    back = having('back')
    return {'run': run, 'step': last['step'], 'time': last['time'],
            'at': _utc(last['time']).strftime('%Y-%m-%d %H:%M:%S UTC'),
            'trays': trays, 'sent_down': sent_down, 'back': back, 'verified': having('verified'),
            'released': having('released'), 'failed': having('failed'), 'held': held,
            'still_down': sorted(t for t in sent_down if t not in back)}


def _names(names):
    return ', '.join(names) if names else 'none'


def line(summary):
    """The report's opening line for a run that was cut short (summary: :func:`cut_short`), '' when none was."""
    if not summary:
        return ''
    parts = ['sent down: %s' % _names(summary['sent_down']), 'back: %s' % _names(summary['back']),
             'verified: %s' % _names(summary['verified']), 'still down: %s' % _names(summary['still_down'])]
    if summary['held']:
        parts.append('nodes held: %s' % _names(sorted(summary['held'])))
    return 'Run %s was cut short at %s (%s): %s.' % (summary['run'], summary['step'], summary['at'], '; '.join(parts))


def node_mark(node):
    """Our mark on a Node object (its :data:`NODE_ANNOTATION`, decoded), or None."""
    annotations = ((node or {}).get('metadata') or {}).get('annotations') or {}
    raw = annotations.get(NODE_ANNOTATION)
    if not raw:
        return None
    try:
        mark = json.loads(raw)
    except ValueError:
        return {'run': '?', 'step': 'held', 'time': None, 'raw': raw}
    return mark if isinstance(mark, dict) else {'run': '?', 'step': 'held', 'time': None, 'raw': raw}


def node_annotation(run, step, via, now=None):
    """The annotation value our run puts on a Node it holds."""
    when = round(float(now if now is not None else time.time()), 3)
    return json.dumps({'run': str(run), 'step': step, 'via': via, 'time': when}, sort_keys=True, separators=(',', ':'))
