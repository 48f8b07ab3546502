# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation evidence as pure functions: CTRF JSON per phase, one JUnit XML, a Markdown and an HTML report.

Input is a list of phases, each ``{'name': <phase>, 'checks': [check, ...], 'start': ms, 'stop': ms}``; a check is
the one check record of the collection (module_utils/check_record.py, what the judges, the validation modules and
the trays phase return): ``name``, ``status`` (passed / failed / warning / skipped), ``message``, ``fix``,
``details`` (one text per finding: the devices a message summarises, listed under the phase's table in the reports
and as ``extra.details`` in CTRF), ``object``, ``data`` (not written here: the evidence of the preflight keeps it),
and optionally ``duration`` (ms). A registered result of a module that returns no records (component_version,
nccl_result) becomes one here (:func:`checks_from_result`). The reports read only these keys.

CTRF (https://ctrf.io, the format ``aicr validate`` writes, aicr.md 3.3): ``results.tool``,
``results.summary`` (tests, passed, failed, skipped, pending, other, start, stop) and ``results.tests[]``
(name, status, duration, suite, message, extra). CTRF has no "warning" status: a warning is ``passed``
with ``extra.warning = true`` (it does not fail the run) and is listed separately in the reports.
JUnit XML is built with ElementTree (escaping done by the library); the HTML report is one self-contained
file (inline CSS, no script, no external resource), every value escaped with ``html.escape``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import html
import json
import xml.etree.ElementTree as ET

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import STATUSES, record

PHASES = ('readiness', 'deployment', 'trays', 'conformance', 'performance')
TOOL = 'gpu_tray.cluster'
_ORDER = {'failed': 0, 'warning': 1, 'skipped': 2, 'passed': 3}


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
    return [record(label, status, message, item.get('fix'), obj=item.get('object') or '')]


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
        message = check['message']
        if check['object'] and message.startswith(check['object'] + ': '):
            message = message[len(check['object']) + 2:]
        shown.append('%s: %s' % (check['name'], message.rstrip('.')))
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


def _sorted_checks(phase):
    return sorted(phase['checks'], key=lambda check: _ORDER[check['status']])


def _md(text):
    return str(text).replace('|', '\\|').replace('\n', ' ')


def markdown(phases, meta=None):
    """The one-page report a person reads, in Markdown: summary, then a table per phase, failures first."""
    phases = [_phase(phase) for phase in phases]
    meta = meta or {}
    lines = ['# Validation report: %s' % (meta.get('recipe') or 'cluster'), '']
    for key, label in (('cluster', 'Cluster'), ('recipe_digest', 'Recipe digest'), ('generated', 'Generated')):
        if meta.get(key):
            lines.append('- %s: `%s`' % (label, meta[key]))
    note = stale_note(meta.get('recorded_digest'), meta.get('recipe_digest'))
    if note:
        lines += ['', '> **%s**' % note]
    lines += ['', '| Phase | Result | Passed | Failed | Warnings | Skipped |', '|---|---|---|---|---|---|']
    for phase in phases:
        count = dict((status, sum(1 for check in phase['checks'] if check['status'] == status)) for status in STATUSES)
        row = (phase['name'], phase_status(phase).upper(), count['passed'], count['failed'], count['warning'], count['skipped'])
        lines.append('| %s | %s | %d | %d | %d | %d |' % row)
    for phase in phases:
        lines += ['', '## %s: %s' % (phase['name'], phase_status(phase).upper()), '']
        if not phase['checks']:
            lines.append('No checks ran in this phase.')
            continue
        lines += ['| Check | Status | Finding | Fix |', '|---|---|---|---|']
        for check in _sorted_checks(phase):
            row = (_md(check['name']), check['status'].upper(), _md(check['message']), _md(check['fix']))
            lines.append('| %s | %s | %s | %s |' % row)
        detailed = [check for check in _sorted_checks(phase) if check['details'] and check['status'] != 'passed']
        if detailed:
            lines += ['', 'Details:', '']
            for check in detailed:
                lines.append('- **%s** (%s)' % (check['name'], check['status'].upper()))
                lines += ['  - %s' % line.replace('\n', ' ') for line in check['details']]
    return '\n'.join(lines) + '\n'


_CSS = ('body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0;width:100%}'
        'th,td{border:1px solid #bbb;padding:4px 8px;text-align:left;vertical-align:top}th{background:#eee}'
        '.failed{background:#fdd}.warning{background:#ffd}.skipped{color:#777}.passed{background:#efe}'
        '.stale{border:2px solid #c00;padding:8px;font-weight:bold}')


def html_report(phases, meta=None):
    """The same report as markdown(), as one self-contained HTML page."""
    phases = [_phase(phase) for phase in phases]
    meta = meta or {}
    esc = html.escape
    title = 'Validation report: %s' % (meta.get('recipe') or 'cluster')
    out = ['<!DOCTYPE html>', '<html lang="en"><head><meta charset="utf-8"><title>%s</title><style>%s</style></head>'
           % (esc(title), _CSS), '<body>', '<h1>%s</h1>' % esc(title), '<ul>']
    for key, label in (('cluster', 'Cluster'), ('recipe_digest', 'Recipe digest'), ('generated', 'Generated')):
        if meta.get(key):
            out.append('<li>%s: <code>%s</code></li>' % (label, esc(str(meta[key]))))
    out.append('</ul>')
    note = stale_note(meta.get('recorded_digest'), meta.get('recipe_digest'))
    if note:
        out.append('<p class="stale">%s</p>' % esc(note))
    out.append('<table><tr><th>Phase</th><th>Result</th><th>Passed</th><th>Failed</th><th>Warnings</th>'
               '<th>Skipped</th></tr>')
    for phase in phases:
        status = phase_status(phase)
        count = dict((item, sum(1 for check in phase['checks'] if check['status'] == item)) for item in STATUSES)
        out.append('<tr class="%s"><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td><td>%d</td></tr>' % (
            status, esc(phase['name']), status.upper(), count['passed'], count['failed'], count['warning'],
            count['skipped']))
    out.append('</table>')
    for phase in phases:
        out.append('<h2>%s: %s</h2>' % (esc(phase['name']), phase_status(phase).upper()))
        if not phase['checks']:
            out.append('<p>No checks ran in this phase.</p>')
            continue
        out.append('<table><tr><th>Check</th><th>Status</th><th>Finding</th><th>Fix</th></tr>')
        for check in _sorted_checks(phase):
            listed = ('<ul>%s</ul>' % ''.join('<li>%s</li>' % esc(line) for line in check['details'])
                      if check['details'] and check['status'] != 'passed' else '')
            out.append('<tr class="%s"><td>%s</td><td>%s</td><td>%s%s</td><td>%s</td></tr>' % (
                check['status'], esc(check['name']), check['status'].upper(), esc(check['message']), listed,
                esc(check['fix'])))
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
