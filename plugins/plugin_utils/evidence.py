# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation evidence as pure functions: CTRF JSON per phase, one JUnit XML, a Markdown and an HTML report.

Input is a list of phases, each ``{'name': <phase>, 'checks': [check, ...], 'start': ms, 'stop': ms}``; a check is
the one check record of the collection (module_utils/check_record.py, what the judges, the validation modules and
the trays phase return): ``name``, ``status`` (passed / failed / warning / skipped), ``message``, ``fix``,
``details`` (one text per finding: the devices a message summarises, listed under the phase's table in the reports
and as ``extra.details`` in CTRF), ``object``, ``data`` (not written to CTRF: the evidence of the preflight keeps
it; the reports read what an NCCL check measured from it, :func:`nccl_data`),
and optionally ``duration`` (ms). A registered result of a module that returns no records (component_version,
nccl_result) becomes one here (:func:`checks_from_result`). The reports read only these keys.

CTRF (https://ctrf.io, the format ``aicr validate`` writes, aicr.md 3.3): ``results.tool``,
``results.summary`` (tests, passed, failed, skipped, pending, other, start, stop) and ``results.tests[]``
(name, status, duration, suite, message, extra). CTRF has no "warning" status: a warning is ``passed``
with ``extra.warning = true`` (it does not fail the run) and is listed separately in the reports.
JUnit XML is built with ElementTree (escaping done by the library); the HTML report is one self-contained
file (inline CSS, no script, no external resource), every value escaped with ``html.escape``. Both reports open
with a summary and group the checks by check (``tray05/pkeys`` is ``pkeys`` on tray05), so a report of 144 trays
names what failed on its first screen (docs/validation.md "The report").
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import html
import json
import re
import xml.etree.ElementTree as ET

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import STATUSES, record
from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import natural_key

# 'preflight': the preflight's checks the validation found, as a phase of the attested bundle (plugin_utils/
# preflight_records.py); the validation's own reports hold the other five
RUN_PHASES = ('readiness', 'deployment', 'trays', 'conformance', 'performance')     # validate_phases' choices
PHASES = ('preflight',) + RUN_PHASES
TOOL = 'gpu_tray.cluster'
# the worst real finding first: a skip says nothing about the object, so it ranks last - an object (a tray's cell, a
# check's group) is skipped only where nothing else was found (issue 53, item 6)
_ORDER = {'failed': 0, 'warning': 1, 'passed': 2, 'skipped': 3}


def normalise_check(check):
    """A check record with the keys the writers use; ValueError on an unknown status or a missing name."""
    name = check.get('name')
    status = check.get('status')
    if not name:
        raise ValueError('a check without a name: %r' % (check,))
    if status not in STATUSES:
        raise ValueError('check %s has status %r, expected one of %s' % (name, status, ', '.join(STATUSES)))
    return dict(name=str(name), status=status, message=str(check.get('message') or ''),
                fix=str(check.get('fix') or ''), duration=int(check.get('duration') or 0),
                object=str(check.get('object') or ''),
                data=dict(check['data']) if isinstance(check.get('data'), dict) else {},
                details=[str(line) for line in (check.get('details') or [])])


def checks_from_result(item, name=None):
    """Checks from one item of a phase: a check dict (has ``status``), a registered result of a module that
    returns ``checks`` (cluster_preflight), or any other registered module result (component_version,
    nccl_result, a host check): failed when it failed or says ``passed: false``, skipped when the task was
    skipped, warning when it warned, else passed; ``name`` (or the item's ``check_name``) names it."""
    if not isinstance(item, dict):
        raise ValueError('a check must be a dict, got %s' % type(item).__name__)
    if 'status' in item and 'name' in item:
        return [item]
    if isinstance(item.get('checks'), list) and not item.get('skipped'):
        return list(item['checks'])
    label = name or item.get('check_name') or item.get('component') or item.get('invocation', {}).get('module_args', {}).get('component')
    if not label:
        raise ValueError('a registered result needs a check_name (set it with combine({"check_name": ...})): %r'
                         % (sorted(item),))
    if item.get('skipped'):
        status, message = 'skipped', item.get('skip_reason') or 'skipped'
    elif item.get('failed') or item.get('passed') is False:
        status, message = 'failed', item.get('msg') or 'failed'
    elif item.get('warnings'):
        status = 'warning'
        message = (item.get('msg') or '') + ' (warnings: %s)' % '; '.join(
            str(warning.get('msg', warning) if isinstance(warning, dict) else warning) for warning in item['warnings'])
    else:
        status, message = 'passed', item.get('msg') or 'passed'
    return [record(label, status, message, item.get('fix'), data=nccl_data(item), obj=item.get('object') or '')]


def nccl_data(result, summary=None):
    """What an NCCL run measured, for a check's ``data`` (the reports' NCCL table): from a registered
    nccl_result (``busbw``, ``min_busbw``, ``threshold``, ``ranks``, ``hosts``, ``transport``) and the run's plan
    summary when it was launched here (``trays``, ``gpus_per_tray``, ``ranks``, ``variant``); ``{}`` for a result
    that is not an NCCL one. ``trays`` is the plan's, else the number of distinct hosts in the log."""
    result, summary = result or {}, summary or {}
    if 'busbw' not in result and not summary:
        return {}
    hosts = [str(host) for host in result.get('hosts') or []]
    data = dict((key, result.get(key)) for key in ('busbw', 'min_busbw', 'threshold', 'transport'))
    data['hosts'] = hosts
    data['ranks'] = result.get('ranks') or summary.get('ranks')
    data['trays'] = summary.get('trays') or (len(set(hosts)) if hosts else None)
    data['gpus_per_tray'] = summary.get('gpus_per_tray')
    item = result.get('item')        # the loop item of validate_nccl_logs: {path, variant}
    data['variant'] = summary.get('variant') or (item.get('variant') if isinstance(item, dict) else None)
    return data


def _phase(phase):
    name = phase.get('name')
    if name not in PHASES:
        raise ValueError('unknown phase %r, expected one of %s' % (name, ', '.join(PHASES)))
    checks = [normalise_check(check) for item in phase.get('checks') or [] for check in checks_from_result(item)]
    return dict(name=name, checks=checks, start=int(phase.get('start') or 0), stop=int(phase.get('stop') or 0))


def phase_status(phase):
    """failed when any check failed; skipped when the phase has no checks or every check was skipped (a phase
    that judged nothing never reads as passed); else passed (warnings and some skips do not fail a phase)."""
    statuses = [check['status'] for check in phase['checks']]
    if 'failed' in statuses:
        return 'failed'
    return 'passed' if any(status != 'skipped' for status in statuses) else 'skipped'


def phase_result(phase, limit=3):
    """``{'status', 'findings'}`` of one phase: its status (phase_status) and one line naming its first ``limit``
    failed checks with their findings (``tray02/pkeys: 16 InfiniBand ports are ...; 2 more``), for a task message."""
    phase = _phase(phase)
    failed = [check for check in phase['checks'] if check['status'] == 'failed']
    shown = []
    for check in failed[:limit]:
        shown.append('%s: %s' % (check['name'], finding(check).rstrip('.')))
    if len(failed) > limit:
        shown.append('%d more' % (len(failed) - limit))
    return {'status': phase_status(phase), 'findings': '; '.join(shown)}


def ctrf(phase, meta=None):
    """The CTRF report of one phase (a dict; json.dumps it)."""
    phase = _phase(phase)
    meta = meta or {}
    tests, summary = [], dict(tests=0, passed=0, failed=0, skipped=0, pending=0, other=0,
                              start=phase['start'], stop=phase['stop'])
    for check in phase['checks']:
        status = 'passed' if check['status'] == 'warning' else check['status']
        summary['tests'] += 1
        summary[status] += 1
        test = dict(name=check['name'], status=status, duration=check['duration'], suite=[phase['name']],
                    message=check['message'])
        extra = {}
        if check['status'] == 'warning':
            extra['warning'] = True
        if check['fix']:
            extra['fix'] = check['fix']
        if check['object']:
            extra['object'] = check['object']
        if check['details']:
            extra['details'] = check['details']
        if extra:
            test['extra'] = extra
        tests.append(test)
    results = dict(tool=dict(name=TOOL, version=meta.get('version', '')), summary=summary, tests=tests)
    environment = dict((key, meta[key]) for key in ('recipe', 'recipe_digest', 'cluster') if meta.get(key))
    if environment:
        results['environment'] = environment
    return dict(reportFormat='CTRF', specVersion='0.0.0', results=results)


def junit(phases, meta=None):
    """One JUnit XML document (text) with a testsuite per phase; warnings are passing test cases."""
    phases = [_phase(phase) for phase in phases]
    root = ET.Element('testsuites', name='%s validation%s' % (TOOL, (' ' + (meta or {}).get('recipe', '')).rstrip()))
    totals = dict(tests=0, failures=0, skipped=0)
    for phase in phases:
        counts = dict(tests=len(phase['checks']),
                      failures=sum(1 for check in phase['checks'] if check['status'] == 'failed'),
                      skipped=sum(1 for check in phase['checks'] if check['status'] == 'skipped'))
        suite = ET.SubElement(root, 'testsuite', name=phase['name'], errors='0',
                              time='%.3f' % (max(phase['stop'] - phase['start'], 0) / 1000.0),
                              **dict((key, str(value)) for key, value in counts.items()))
        for check in phase['checks']:
            case = ET.SubElement(suite, 'testcase', name=check['name'], classname='%s.%s' % (TOOL, phase['name']),
                                 time='%.3f' % (check['duration'] / 1000.0))
            lines = [check['message']] + ['- ' + line for line in check['details']]
            if check['fix']:
                lines.append('Fix: ' + check['fix'])
            text = '\n'.join(lines)
            if check['status'] == 'failed':
                ET.SubElement(case, 'failure', message=check['message'][:500], type='failed').text = text
            elif check['status'] == 'skipped':
                ET.SubElement(case, 'skipped', message=check['message'][:500])
            elif check['status'] == 'warning':
                ET.SubElement(case, 'system-out').text = 'WARNING: ' + text
        for key in totals:
            totals[key] += counts[key]
    for key, value in totals.items():
        root.set(key, str(value))
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding='unicode') + '\n'


def stale_note(recorded_digest, current_digest):
    """A sentence when evidence was recorded for another recipe digest than the current one, else ''."""
    if recorded_digest and current_digest and recorded_digest != current_digest:
        return ('STALE: this evidence was recorded for recipe digest %s, the recipe is now %s - validate again '
                'before relying on it' % (recorded_digest, current_digest))
    return ''


def check_group(check):
    """The check a record is of: its name without the object that qualifies it (``tray02/pkeys`` -> ``pkeys``)."""
    obj = check['object']
    if obj and check['name'].startswith(obj + '/'):
        return check['name'][len(obj) + 1:]
    return check['name']


def finding(check):
    """The check's message without its object in front (``tray02: 3 VFs ...`` -> ``3 VFs ...``): the reports put
    the object beside it."""
    message = check['message']
    if check['object'] and message.startswith(check['object'] + ': '):
        return message[len(check['object']) + 2:]
    return message


def _counts(checks):
    return dict((status, sum(1 for check in checks if check['status'] == status)) for status in STATUSES)


def _status(checks):
    return min((check['status'] for check in checks), key=lambda status: _ORDER[status]) if checks else 'skipped'


def check_groups(phase):
    """The checks of a phase grouped by check (``tray02/pkeys`` and ``tray07/pkeys`` are both ``pkeys``), the worst
    group first (failed, warning, passed, skipped - a skip ranks last; else in the order the phase ran them); in a
    group the worst records first, then by object in natural order. Each group: ``name``, ``status`` (its worst real
    finding, skipped when every record was), ``counts``, ``checks``."""
    groups = {}
    order = []
    for check in phase['checks']:
        name = check_group(check)
        if name not in groups:
            groups[name] = []
            order.append(name)
        groups[name].append(check)
    out = []
    for name in order:
        checks = sorted(groups[name], key=lambda check: (_ORDER[check['status']], natural_key(check['object'])))
        out.append(dict(name=name, status=_status(checks), counts=_counts(checks), checks=checks))
    return sorted(out, key=lambda group: _ORDER[group['status']])


def _objects(phase_name, objects):
    noun = 'tray' if phase_name == 'trays' else 'object'
    return '%d %s%s' % (len(objects), noun, '' if len(objects) == 1 else 's')


def status_groups(phases, status):
    """Every check with ``status`` in any phase, grouped by phase and check; each group has ``phase``, ``check``,
    ``objects`` (naturally sorted) and ``findings``: one per distinct (message, fix), with the objects it holds for,
    so a finding shared by 40 trays is written once with the 40 trays."""
    out = []
    for phase in phases:
        for group in check_groups(phase):
            checks = [check for check in group['checks'] if check['status'] == status]
            if not checks:
                continue
            findings, order = {}, []
            for check in checks:
                key = (finding(check), check['fix'])
                if key not in findings:
                    findings[key] = []
                    order.append(key)
                if check['object']:
                    findings[key].append(check['object'])
            out.append(dict(phase=phase['name'], check=group['name'],
                            objects=sorted((check['object'] for check in checks if check['object']), key=natural_key),
                            findings=[dict(message=key[0], fix=key[1], objects=findings[key]) for key in order]))
    return out


def skipped_phases(phases):
    """``[(phase, why)]`` of the phases that judged nothing: their checks' distinct messages, or that none ran."""
    out = []
    for phase in phases:
        if phase_status(phase) != 'skipped':
            continue
        reasons = []
        for check in phase['checks']:
            if finding(check) not in reasons:
                reasons.append(finding(check))
        out.append((phase['name'], ' '.join(reasons) or 'No checks ran in this phase.'))
    return out


def name_ranges(names):
    """Names in natural order with runs of consecutive numbers written as one range:
    ``tray001-tray004, tray006, tray008-tray144`` (for the long lists of passed trays)."""
    runs = []
    for name in sorted(set(names), key=natural_key):
        match = re.match(r'^(.*?)(\d+)$', name)
        if match and runs and runs[-1][0] is not None:
            prefix, number, width = match.group(1), int(match.group(2)), len(match.group(2))
            last = runs[-1]
            # tray001-tray144 (zero-padded: one width), worker-0-worker-143 (unpadded: the width grows)
            same_width = last[3] == width or (str(number) == match.group(2) and str(last[2]) == last[4][len(prefix):])
            if last[0] == prefix and same_width and last[2] + 1 == number:
                last[2] = number
                last[4] = name
                continue
        if match:
            runs.append([match.group(1), int(match.group(2)), int(match.group(2)), len(match.group(2)), name, name])
        else:
            runs.append([None, 0, 0, 0, name, name])
    parts = []
    for prefix, first, last, _width, last_name, first_name in runs:
        if prefix is None or first == last:
            parts.append(first_name)
        else:
            parts.append('%s%s%s' % (first_name, ', ' if last == first + 1 else '-', last_name))
    return ', '.join(parts)


def not_read_line(meta):
    """One line naming the trays the run did not read (meta ``not_read``: ``{unreachable: [...], failed: [...]}``,
    the tray reads that did not answer or failed), '' when it read every tray it asked for: a run that stopped before
    its trays phase names them all the same, in one line however many (issue 54)."""
    unread = (meta or {}).get('not_read') or {}
    labels = (('unreachable', 'unreachable'), ('failed', 'read failed'))
    parts = [(label, list(unread.get(key) or [])) for key, label in labels]
    parts = [(label, names) for label, names in parts if names]
    if not parts:
        return ''
    total = sum(len(names) for _label, names in parts)
    return 'Trays not read (%d): %s - nothing was judged on them.' % (
        total, '; '.join('%s: %s' % (label, name_ranges(names)) for label, names in parts))


def _gb(value):
    return '-' if value is None else '%g GB/s' % value


def nccl_row(check):
    """What an NCCL check measured, as the texts of the reports' NCCL table: ``trays``, ``ranks``, ``busbw`` and
    ``floor`` (the lowest accepted bus bandwidth, with the recipe floor and tolerance it comes from); ``-`` where
    the run did not say (it did not start, or its log had no result)."""
    data = check.get('data') or {}
    floor = _gb(data.get('threshold'))
    minimum, threshold = data.get('min_busbw'), data.get('threshold')
    if minimum and threshold is not None and abs(minimum - threshold) > 1e-9:
        floor += ' (%g GB/s less %g%%)' % (minimum, round((1 - float(threshold) / minimum) * 100, 1))
    elif threshold is None and minimum:
        floor = _gb(minimum)
    return dict(trays='-' if data.get('trays') is None else str(data['trays']),
                ranks='-' if data.get('ranks') is None else str(data['ranks']),
                busbw=_gb(data.get('busbw')), floor=floor)


def _nccl_checks(phases):
    return [check for phase in phases if phase['name'] == 'performance' for group in check_groups(phase)
            if group['name'].startswith('nccl-all-reduce-bw') for check in group['checks']]


def _measured(check):
    if not check_group(check).startswith('nccl-all-reduce-bw') or not check['data']:
        return ''
    row = nccl_row(check)
    return 'Measured: %s trays, %s ranks, bus bandwidth %s, floor %s.' % (row['trays'], row['ranks'], row['busbw'],
                                                                          row['floor'])


def _md(text):
    return str(text).replace('|', '\\|').replace('\n', ' ')


def _overall(phases):
    statuses = [phase_status(phase) for phase in phases]
    if 'failed' in statuses:
        return 'failed', '%d of %d phases failed' % (statuses.count('failed'), len(statuses))
    if statuses and all(status == 'skipped' for status in statuses):
        return 'skipped', 'no phase judged anything'
    return 'passed', 'no check failed'


def _meta_lines(meta):
    return [(label, str(meta[key])) for key, label in (('cluster', 'Cluster'), ('recipe_digest', 'Recipe digest'),
                                                       ('generated', 'Generated')) if meta.get(key)]


DRIFT_ROWS = 50


def _drift_rows(drift):
    """The rows the report shows of a drift report (drift.py evaluate), at most DRIFT_ROWS, and how many more."""
    rows = list(drift.get('rows') or [])
    return rows[:DRIFT_ROWS], max(0, len(rows) - DRIFT_ROWS)


def _drift_markdown(drift):
    """What changed since the last passing run, before what is wrong (meta ``drift``: drift.py evaluate's report)."""
    if not drift:
        return []
    lines = ['', '## Changed since the last passing run', '', drift.get('summary') or '']
    rows, more = _drift_rows(drift)
    if rows:
        lines += ['', '| Where | What | Before | After |', '|---|---|---|---|']
        lines += ['| %s | %s | %s | %s |' % (_md(row['where']), _md(row['what']), _md(row['before']) or '-',
                                             _md(row['after']) or '-') for row in rows]
    if more:
        lines += ['', '%d more changes in drift.json.' % more]
    return lines


def _drift_html(esc, drift):
    if not drift:
        return []
    out = ['<section id="drift">', '<h2>Changed since the last passing run</h2>',
           '<p class="drift-summary">%s</p>' % esc(drift.get('summary') or '')]
    rows, more = _drift_rows(drift)
    if rows:
        out.append('<table class="drift"><tr><th>Where</th><th>What</th><th>Before</th><th>After</th></tr>')
        out += ['<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
            esc(row['where']), esc(row['what']), esc(row['before'] or '-'), esc(row['after'] or '-')) for row in rows]
        out.append('</table>')
    if more:
        out.append('<p>%d more changes in drift.json.</p>' % more)
    out.append('</section>')
    return out


def markdown(phases, meta=None):
    """The report a person reads, in Markdown: a summary (the phases with their counts, the failed checks and the
    warnings grouped by check with the objects they hold for, the skipped phases and why, what the NCCL runs
    measured), then per phase the checks grouped by check, failures first, the passed records of a check that
    judged many objects in one row."""
    phases = [_phase(phase) for phase in phases]
    meta = meta or {}
    lines = ['# Validation report: %s' % (meta.get('recipe') or 'cluster'), '']
    lines += ['- %s: `%s`' % item for item in _meta_lines(meta)]
    note = stale_note(meta.get('recorded_digest'), meta.get('recipe_digest'))
    if note:
        lines += ['', '> **%s**' % note]
    lines += _drift_markdown(meta.get('drift'))
    overall, why = _overall(phases)
    lines += ['', '## Summary', '', '**Result: %s** (%s)' % (overall.upper(), why), '',
              '| Phase | Result | Passed | Failed | Warnings | Skipped |', '|---|---|---|---|---|---|']
    total = _counts([check for phase in phases for check in phase['checks']])
    for phase in phases:
        count = _counts(phase['checks'])
        row = (phase['name'], phase_status(phase).upper(), count['passed'], count['failed'], count['warning'], count['skipped'])
        lines.append('| %s | %s | %d | %d | %d | %d |' % row)
    lines.append('| **all** | %s | %d | %d | %d | %d |' % (
        overall.upper(), total['passed'], total['failed'], total['warning'], total['skipped']))
    unread = not_read_line(meta)
    if unread:
        lines += ['', '**%s**' % unread]
    for status, title in (('failed', 'Failed checks'), ('warning', 'Warnings')):
        groups = status_groups(phases, status)
        if not groups:
            continue
        lines += ['', '### %s' % title, '', '| Check | Phase | Where | Finding | Fix |', '|---|---|---|---|---|']
        for group in groups:
            one_fix = len(set(item['fix'] for item in group['findings'])) == 1
            for index, item in enumerate(group['findings']):
                where = '%s: %s' % (_objects(group['phase'], item['objects']), ', '.join(item['objects'])) \
                    if item['objects'] else '-'
                fix = '(as above)' if index and one_fix else _md(item['fix'])
                lines.append('| %s | %s | %s | %s | %s |' % (
                    '**%s**' % _md(group['check']) if index == 0 else '', group['phase'] if index == 0 else '',
                    _md(where), _md(item['message']), fix))
    skipped = skipped_phases(phases)
    if skipped:
        lines += ['', '### Skipped phases', '']
        lines += ['- **%s**: %s' % (name, why) for name, why in skipped]
    nccl = _nccl_checks(phases)
    if nccl:
        lines += ['', '### NCCL bandwidth', '', '| Check | Result | Trays | Ranks | Bus bandwidth | Floor |',
                  '|---|---|---|---|---|---|']
        for check in nccl:
            row = nccl_row(check)
            lines.append('| %s | %s | %s | %s | %s | %s |' % (
                _md(check['name']), check['status'].upper(), row['trays'], row['ranks'], row['busbw'], _md(row['floor'])))
    for phase in phases:
        lines += ['', '## %s: %s' % (phase['name'], phase_status(phase).upper()), '']
        if not phase['checks']:
            lines.append('No checks ran in this phase.')
            continue
        lines += ['| Check | Status | Object | Finding | Fix |', '|---|---|---|---|---|']
        detailed = []
        for group in check_groups(phase):
            for row in check_rows(group):
                if row[0] == 'fold':
                    _kind, status, checks = row
                    objects = [check['object'] or check['name'] for check in checks]
                    shared = _shared_finding(checks)
                    lines.append('| %s | %s | %s: %s | %s | |' % (
                        _md(group['name']), status.upper(), _objects(phase['name'], objects),
                        _md(name_ranges(objects)), _md(status if shared is None else shared)))
                    detailed += [check for check in checks if check['details'] and status != 'passed']
                    continue
                check = row[1]
                text = ' '.join(part for part in (finding(check), _measured(check)) if part)
                lines.append('| %s | %s | %s | %s | %s |' % (
                    _md(group['name']), check['status'].upper(), _md(check['object']), _md(text), _md(check['fix'])))
                if check['details'] and check['status'] != 'passed':
                    detailed.append(check)
        if detailed:
            lines += ['', 'Details:', '']
            for check in detailed:
                lines.append('- **%s** (%s)' % (check['name'], check['status'].upper()))
                lines += ['  - %s' % line.replace('\n', ' ') for line in check['details']]
    return '\n'.join(lines) + '\n'


_CSS = ('body{font-family:sans-serif;font-size:14px;margin:1em 2em;color:#222}h1{font-size:1.5em;margin:.3em 0}'
        'h2{font-size:1.25em;margin:1em 0 .3em}h3{font-size:1.05em;margin:.8em 0 .2em}'
        'ul.meta{list-style:none;padding:0;margin:0;color:#555}ul.meta li{display:inline;margin-right:2em}'
        'table{border-collapse:collapse;margin:.3em 0;width:100%}'
        'th,td{border:1px solid #bbb;padding:3px 6px;text-align:left;vertical-align:top}th{background:#eee}'
        'table.phases{width:auto}table.phases td.n{text-align:right;min-width:4em}'
        '.failed{background:#fdd}.warning{background:#ffd}.skipped{color:#777}.passed{background:#efe}'
        'tr.group th{background:#dde;font-weight:bold}col.check{width:13%}col.phase{width:8%}col.where{width:21%}'
        'col.finding{width:30%}col.fix{width:28%}table.checks col.check{width:13%}col.status{width:7%}'
        'col.object{width:10%}table.checks col.finding{width:42%}table.phases th.n{text-align:right}'
        'p.result{font-size:1.1em;margin:.3em 0}p.result b.failed{color:#a00;background:none}'
        'p.result b.passed{color:#060;background:none}'
        'details summary{cursor:pointer}td ul{margin:.2em 0;padding-left:1.2em}'
        '.stale{border:2px solid #c00;padding:8px;font-weight:bold}'
        'table.rackmap{width:auto}table.rackmap th{padding:1px 6px;white-space:nowrap}table.rackmap td{padding:1px}'
        'a.cell{display:inline-block;min-width:2.6em;height:1.35em;line-height:1.35em;margin:1px;text-align:center;'
        'font-size:11px;text-decoration:none;color:#222;border:1px solid #999}'
        'a.cell.failed{background:#d22;color:#fff}a.cell.warning{background:#fc3}a.cell.passed{background:#9d9}'
        'a.cell.skipped{background:#ddd}a.cell.unread{background:#fff;color:#999;border-style:dashed}a.cell.drift{outline:2px solid #06c;outline-offset:-1px}'
        'p.legend{margin:.2em 0;color:#555}p.legend a.cell{min-width:1.2em;cursor:default}')


def _html_group_table(esc, title, groups):
    out = ['<h3>%s</h3>' % title,
           '<table class="groups"><colgroup><col class="check"><col class="phase"><col class="where"><col class="finding">'
           '<col class="fix"></colgroup>'
           '<tr><th>Check</th><th>Phase</th><th>Where</th><th>Finding</th><th>Fix</th></tr>']
    for group in groups:
        status = 'failed' if title.startswith('Failed') else 'warning'
        rows = len(group['findings'])
        one_fix = len(set(item['fix'] for item in group['findings'])) == 1
        for index, item in enumerate(group['findings']):
            head = ('<td rowspan="%d"><b>%s</b></td><td rowspan="%d">%s</td>' % (
                rows, esc(group['check']), rows, esc(group['phase'])) if index == 0 else '')
            where = ('%s: %s' % (_objects(group['phase'], item['objects']), esc(', '.join(item['objects'])))
                     if item['objects'] else '-')
            fix = ('<td rowspan="%d">%s</td>' % (rows, esc(item['fix'])) if index == 0 else '') if one_fix \
                else '<td>%s</td>' % esc(item['fix'])
            out.append('<tr class="%s">%s<td>%s</td><td>%s</td>%s</tr>' % (status, head, where, esc(item['message']), fix))
    out.append('</table>')
    return out


def check_rows(group):
    """The rows of one check's group as the reports print them, in order: its failed and warning records one each,
    then its passed records and then its skipped ones, each folded into one row when there are several (``('fold',
    status, checks)``), else one row each (``('row', check)``) - the rows that say something before the skips."""
    out = []
    for status in ('failed', 'warning', 'passed', 'skipped'):
        checks = [check for check in group['checks'] if check['status'] == status]
        if status in ('passed', 'skipped') and len(checks) > 1:
            out.append(('fold', status, checks))
        else:
            out.extend(('row', check) for check in checks)
    return out


def _shared_finding(checks):
    """The one finding a folded row's records share, or None when they differ."""
    return finding(checks[0]) if len(set(finding(check) for check in checks)) == 1 else None


# a tray no record of the run is about (a phase run alone that reads no tray, a tray left out with --limit)
NOT_READ = 'not read'


def tray_status(phases, trays):
    """{tray: its worst real finding across every phase's records about it - failed, warning, passed; skipped only
    where every record about it was a skip; NOT_READ where no record is about it}."""
    worst = dict((tray, None) for tray in trays)
    for phase in phases:
        for check in phase['checks']:
            tray = check['object']
            if tray in worst and (worst[tray] is None or _ORDER[check['status']] < _ORDER[worst[tray]]):
                worst[tray] = check['status']
    return dict((tray, status or NOT_READ) for tray, status in worst.items())


def rack_map(phases, racks, drifted=()):
    """The racks in natural order, each ``{'rack', 'trays': [{'tray', 'status', 'drift'}]}`` (``racks``:
    {tray: rack}, a tray without one in rack ``-``)."""
    status = tray_status(phases, list(racks))
    by_rack = {}
    for tray, rack in racks.items():
        by_rack.setdefault(str(rack or '-'), []).append(tray)
    return [{'rack': rack, 'trays': [{'tray': tray, 'status': status[tray], 'drift': tray in drifted}
                                     for tray in sorted(by_rack[rack], key=natural_key)]}
            for rack in sorted(by_rack, key=natural_key)]


_CELL_CLASS = {NOT_READ: 'unread'}


def _cell_label(tray):
    match = re.search(r'(\d+)$', tray)
    return match.group(1) if match else tray[-4:]


def _rack_map_html(esc, phases, meta):
    """One cell per tray, a row per rack, colored by the tray's worst status, each linking to its first row."""
    racks = meta.get('racks')
    if not racks:
        return []
    drifted = set(row['object'] for row in (meta.get('drift') or {}).get('changes') or [] if row.get('scope') == 'tray')
    rows = rack_map(phases, racks, drifted)
    statuses = [t['status'] for rack in rows for t in rack['trays']]
    kinds = [(status, _CELL_CLASS.get(status, status)) for status in ('failed', 'warning', 'passed', 'skipped', NOT_READ)]
    out = ['<section id="rackmap">', '<h2>Trays by rack</h2>',
           '<p class="legend">%d trays in %d racks: %s%s</p>' % (
               len(racks), len(rows), ', '.join('<a class="cell %s"></a> %d %s' % (cls, statuses.count(status), status)
                                                for status, cls in kinds if statuses.count(status)),
               ', <a class="cell drift"></a> %d changed since the last passing run' % len(drifted & set(racks))
               if drifted & set(racks) else ''),
           '<table class="rackmap">']
    for rack in rows:
        # a tray no record is about has no row to link to: its cell says so
        cells = ''.join('<a class="cell %s%s"%s title="%s: %s%s">%s</a>' % (
            _CELL_CLASS.get(t['status'], t['status']), ' drift' if t['drift'] else '',
            '' if t['status'] == NOT_READ else ' href="#tray-%s"' % esc(t['tray']), esc(t['tray']),
            'not read this run' if t['status'] == NOT_READ else t['status'].upper(),
            ', changed since the last passing run' if t['drift'] else '', esc(_cell_label(t['tray'])))
            for t in rack['trays'])
        out.append('<tr><th>%s</th><td>%s</td></tr>' % (esc(rack['rack']), cells))
    out += ['</table>', '</section>']
    return out


def html_report(phases, meta=None):
    """The same report as markdown(), as one self-contained HTML page (no script): the summary in
    ``<section id="summary">`` first, then the phases; the passed records of a check that judged many objects
    fold into one ``<details>`` row."""
    phases = [_phase(phase) for phase in phases]
    meta = meta or {}
    esc = html.escape
    title = 'Validation report: %s' % (meta.get('recipe') or 'cluster')
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8"><title>%s</title><style>%s</style></head>'
           % (esc(title), _CSS), '<body>', '<h1>%s</h1>' % esc(title), '<ul class="meta">']
    out += ['<li>%s: <code>%s</code></li>' % (label, esc(value)) for label, value in _meta_lines(meta)]
    out.append('</ul>')
    out += _rack_map_html(esc, phases, meta)
    # with a rack map, a tray's cell links to its first row of its worst status (or its line among the folded passed)
    anchored = set() if meta.get('racks') else None
    worst = tray_status(phases, list(meta['racks'])) if meta.get('racks') else {}

    def anchor(check):
        obj = check['object']
        if anchored is None or obj not in worst or obj in anchored or check['status'] != worst[obj]:
            return ''
        anchored.add(obj)
        return ' id="tray-%s"' % esc(obj)
    note = stale_note(meta.get('recorded_digest'), meta.get('recipe_digest'))
    if note:
        out.append('<p class="stale">%s</p>' % esc(note))
    out += _drift_html(esc, meta.get('drift'))
    overall, why = _overall(phases)
    out += ['<section id="summary">', '<h2>Summary</h2>',
            '<p class="result">Result: <b class="%s">%s</b> (%s)</p>' % (overall, overall.upper(), esc(why)),
            '<table class="phases"><tr><th>Phase</th><th>Result</th><th>Passed</th><th>Failed</th><th>Warnings</th>'
            '<th>Skipped</th></tr>']
    for phase in phases:
        status = phase_status(phase)
        count = _counts(phase['checks'])
        out.append('<tr class="%s"><td>%s</td><td>%s</td><td class="n">%d</td><td class="n">%d</td><td class="n">%d</td>'
                   '<td class="n">%d</td></tr>' % (status, esc(phase['name']), status.upper(), count['passed'],
                                                   count['failed'], count['warning'], count['skipped']))
    total = _counts([check for phase in phases for check in phase['checks']])
    out += ['<tr><th>all</th><th>%s</th><th class="n">%d</th><th class="n">%d</th><th class="n">%d</th>'
            '<th class="n">%d</th></tr>' % (overall.upper(), total['passed'], total['failed'], total['warning'],
                                            total['skipped']), '</table>']
    unread = not_read_line(meta)
    if unread:
        out.append('<p class="not-read"><b>%s</b></p>' % esc(unread))
    for status, heading in (('failed', 'Failed checks'), ('warning', 'Warnings')):
        groups = status_groups(phases, status)
        if groups:
            out += _html_group_table(esc, heading, groups)
    skipped = skipped_phases(phases)
    if skipped:
        out += ['<h3>Skipped phases</h3>', '<ul class="skipped-phases">']
        out += ['<li><b>%s</b>: %s</li>' % (esc(name), esc(why)) for name, why in skipped]
        out.append('</ul>')
    nccl = _nccl_checks(phases)
    if nccl:
        out += ['<h3>NCCL bandwidth</h3>', '<table class="nccl"><tr><th>Check</th><th>Result</th><th>Trays</th>'
                '<th>Ranks</th><th>Bus bandwidth</th><th>Floor</th></tr>']
        for check in nccl:
            row = nccl_row(check)
            out.append('<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
                check['status'], esc(check['name']), check['status'].upper(), row['trays'], row['ranks'],
                esc(row['busbw']), esc(row['floor'])))
        out.append('</table>')
    out.append('</section>')
    for phase in phases:
        out.append('<h2>%s: %s</h2>' % (esc(phase['name']), phase_status(phase).upper()))
        if not phase['checks']:
            out.append('<p>No checks ran in this phase.</p>')
            continue
        out.append('<table class="checks"><colgroup><col class="check"><col class="status"><col class="object">'
                   '<col class="finding"><col class="fix"></colgroup>'
                   '<tr><th>Check</th><th>Status</th><th>Object</th><th>Finding</th><th>Fix</th></tr>')
        for group in check_groups(phase):
            many = len(group['checks']) > 1
            if many:
                count = group['counts']
                out.append('<tr class="group"><th colspan="5">%s: %s</th></tr>' % (esc(group['name']), ', '.join(
                    '%d %s' % (count[status], status) for status in ('failed', 'warning', 'passed', 'skipped')
                    if count[status])))
            for row in check_rows(group):
                if row[0] == 'fold':
                    _kind, status, checks = row
                    objects = [check['object'] or check['name'] for check in checks]
                    shared = _shared_finding(checks)
                    out.append('<tr class="%s"><td>%s</td><td>%s</td><td colspan="3"><details><summary>%s: %s%s'
                               '</summary><ul>%s</ul></details></td></tr>' % (
                                   status, esc(group['name']), status.upper(), _objects(phase['name'], objects),
                                   esc(name_ranges(objects)), ' - ' + esc(shared) if shared is not None else '',
                                   ''.join('<li%s>%s: %s</li>' % (
                                       anchor(check), esc(check['object'] or check['name']), esc(finding(check)))
                                       for check in checks)))
                    continue
                check = row[1]
                listed = ('<ul>%s</ul>' % ''.join('<li>%s</li>' % esc(line) for line in check['details'])
                          if check['details'] and check['status'] != 'passed' else '')
                measured = _measured(check)
                out.append('<tr class="%s"%s><td>%s</td><td>%s</td><td>%s</td><td>%s%s%s</td><td>%s</td></tr>' % (
                    check['status'], anchor(check), esc(group['name']), check['status'].upper(), esc(check['object']),
                    esc(finding(check)), '<br>' + esc(measured) if measured else '', listed, esc(check['fix'])))
        out.append('</table>')
    out += ['</body></html>', '']
    return '\n'.join(out)


def evidence_files(phases, meta=None):
    """Every evidence file as ``[{'path': ..., 'content': ...}]`` (the input of gpu_tray.cluster.write_evidence):
    ``ctrf/<phase>.json`` per phase, ``junit.xml``, ``report.md``, ``report.html`` and ``summary.json``
    (recipe, recipe digest, per-phase result: what a later run compares to call this evidence stale)."""
    meta = meta or {}
    phases = [_phase(phase) for phase in phases]
    files = [dict(path='ctrf/%s.json' % phase['name'],
                  content=json.dumps(ctrf(phase, meta), indent=2, sort_keys=True) + '\n') for phase in phases]
    summary = dict(recipe=meta.get('recipe'), recipe_digest=meta.get('recipe_digest'), generated=meta.get('generated'),
                   result='failed' if any(phase_status(phase) == 'failed' for phase in phases) else 'passed',
                   phases=dict((phase['name'], phase_status(phase)) for phase in phases))
    files += [dict(path='junit.xml', content=junit(phases, meta)),
              dict(path='report.md', content=markdown(phases, meta)),
              dict(path='report.html', content=html_report(phases, meta)),
              dict(path='summary.json', content=json.dumps(summary, indent=2, sort_keys=True) + '\n')]
    return files
