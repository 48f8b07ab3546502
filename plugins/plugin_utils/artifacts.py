# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The summary of a phase that travels in an AWX job's artifacts (``ansible.builtin.set_stats``), as pure functions.

AWX shows a job's artifacts on the job's page and hands them to the workflow's next nodes as extra variables, so the
summary outlives the job even where its files do not. Each role sets ``gpu_tray_evidence: {<phase>: <summary>}``
(set_stats aggregates the phases of one job into one mapping): the result, how many trays passed and failed, the
failed checks with their tray and fix - at most :data:`LISTED` of them, the report files have all - and where the
files are. Small by design: an artifact is stored with the job and copied into every later node's variables.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

# the failed checks listed in an artifact (their total is given; the files list every one)
LISTED = 50


def _listed(items):
    return items[:LISTED], len(items)


def preflight(reports, directory):
    """From every tray's preflight_report (``{host, passed, failed_checks, checks, unreachable?}``; each check the
    collection's check record, module_utils/check_record.py)."""
    reports = sorted((report for report in reports or [] if isinstance(report, dict)), key=lambda r: r.get('host', ''))
    failed = [report for report in reports if not report.get('passed')]
    checks = [{'tray': report.get('host'), 'check': check.get('name'), 'message': check.get('message') or '',
               'fix': check.get('fix') or ''}
              for report in failed for check in report.get('checks') or [] if check.get('status') == 'failed']
    listed, total = _listed(checks)
    return {
        'result': 'failed' if failed or not reports else 'passed',
        'trays': len(reports),
        'passed': len(reports) - len(failed),
        'failed_trays': [report.get('host') for report in failed],
        'unreachable': [report.get('host') for report in reports if report.get('unreachable')],
        'failed_checks': listed,
        'failed_checks_total': total,
        'dir': directory,
        'files': {'summary': os.path.join(directory, 'preflight-summary.md'),
                  'per_tray': os.path.join(directory, '<tray>', 'preflight.json')},
    }


def rolling_reboot(rows, directory, meta=None):
    """From the rolling reboot's rows (rolling-reboot.json: ``{tray, status, failed_step, error, check, ...}``) and
    its meta: ``stopped`` (``{task, message}``: the task that stopped the run, a refusal before any wave too), which
    fails the result."""
    stopped = (meta or {}).get('stopped') or None
    if stopped is not None:
        stopped = {'task': str(stopped.get('task') or ''), 'message': str(stopped.get('message') or '')}
    rows = [row for row in rows or [] if isinstance(row, dict)]
    statuses = {}
    for row in rows:
        statuses[str(row.get('status'))] = statuses.get(str(row.get('status')), 0) + 1
    failed = [row for row in rows if str(row.get('status', '')).upper() == 'FAILED']
    listed, total = _listed([{'tray': row.get('tray'), 'step': row.get('failed_step') or '',
                              'message': str(row.get('error') or ''), 'fix': str(row.get('check') or '')}
                             for row in failed])
    return {
        'result': 'failed' if failed or stopped else 'passed',
        'stopped': stopped,
        'trays': len(rows),
        'statuses': statuses,
        'failed_trays': [row.get('tray') for row in failed],
        'failed': listed,
        'failed_total': total,
        'dir': directory,
        'files': {'report': os.path.join(directory, 'rolling-reboot.md'),
                  'json': os.path.join(directory, 'rolling-reboot.json')},
    }


def validation(phases, directory, meta=None):
    """From the validation's phases as the evidence writer takes them (``{name, checks}``, each check normalised by
    plugin_utils/evidence.py), the evidence directory and its meta (recipe, recipe_digest)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import evidence
    meta = meta or {}
    statuses, counts, failed, warnings = {}, dict((status, 0) for status in evidence.STATUSES), [], []
    for phase in phases or []:
        checks = [evidence.normalise_check(check) for item in phase.get('checks') or []
                  for check in evidence.checks_from_result(item)]
        statuses[phase.get('name')] = evidence.phase_status({'checks': checks})
        for check in checks:
            counts[check['status']] += 1
            entry = {'phase': phase.get('name'), 'check': check['name'], 'object': check['object'],
                     'message': check['message'], 'fix': check['fix']}
            if check['status'] == 'failed':
                failed.append(entry)
            elif check['status'] == 'warning':
                warnings.append(entry)
    listed, total = _listed(failed)
    warned, warned_total = _listed(warnings)
    return {
        'result': 'failed' if 'failed' in statuses.values() else 'passed',
        'recipe': meta.get('recipe', ''),
        'recipe_digest': meta.get('recipe_digest', ''),
        'phases': statuses,
        'counts': counts,
        'failed_checks': listed,
        'failed_checks_total': total,
        'warnings': warned,
        'warnings_total': warned_total,
        'dir': directory,
        'files': dict((key, os.path.join(directory, name)) for key, name in (
            ('report', 'report.md'), ('html', 'report.html'), ('junit', 'junit.xml'), ('summary', 'summary.json'))),
    }


def stack(summary, directory, meta=None):
    """From a stack run's summary (``{result, action, ...}``: deploy, teardown or recover, as stack-<action>.json
    holds it): the summary with where its files are. ValueError for an action the stack has no report of."""
    if not isinstance(summary, dict) or summary.get('action') not in STACK_ACTIONS:
        raise ValueError('a stack summary has an action of %s, got %r' % (
            ', '.join(STACK_ACTIONS), summary.get('action') if isinstance(summary, dict) else summary))
    if summary.get('result') not in ('passed', 'failed'):
        raise ValueError('a stack summary has a result of passed or failed, got %r' % (summary.get('result'),))
    name = 'stack-%s' % summary['action']
    return dict(summary, dir=directory, files={'report': os.path.join(directory, name + '.md'),
                                               'json': os.path.join(directory, name + '.json')})


# the stack's runs and the artifact key of each (gpu_tray_evidence.stack_<action>, docs/awx.md)
STACK_ACTIONS = ('deploy', 'teardown', 'recover')
KINDS = {'preflight': preflight, 'rolling_reboot': rolling_reboot, 'validation': validation, 'stack': stack}
