# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The way out of every phase, as pure functions: the twin of run_context (the way in).

A phase - the preflight, the stack's deploy, teardown and NodeMaintenance recovery, the rolling reboot, the
validation - ends through :func:`record`, whatever ended it (it passed, its checks failed, a task stopped it, its
trays were unreachable): from the phase's records, where it stopped (the one shape of a stop, ``{task, message}``,
filter stopped_at) and its meta, it gives the phase's report files (written by the phase_record action), its job
artifact (``gpu_tray_evidence.<key>``, plugin_utils/artifacts.py) and the failure each host must end with.
The one search for an earlier run's files (the validation's digest and drift baseline, the preflight's records) is
plugin_utils/report_dir.py's (the action's ``find``).

The report renderers below replaced the roles' Jinja templates (roles/preflight/templates/summary.md.j2,
roles/rolling_reboot/templates/rolling-reboot.md.j2) and the stack's inline tables, byte for byte:
tests/unit/plugins/plugin_utils/test_phase_record.py holds them to the files those templates wrote.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import time

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import artifacts, evidence

# the phases that end through a record, and the key of each one's job artifact (gpu_tray_evidence.<key>, docs/awx.md)
PHASES = ('preflight', 'rolling_reboot', 'stack_deploy', 'stack_teardown', 'stack_recover', 'validation')


class RecordError(ValueError):
    """Records that cannot be a phase's (the text names what is wrong)."""


def stop(value):
    """The one shape of a stop, ``{task, message}`` (filter stopped_at made it), or None."""
    if not isinstance(value, dict) or not (value.get('task') or value.get('message')):
        return None
    return {'task': str(value.get('task') or '?'), 'message': str(value.get('message') or '')}


def first_stop(stopped):
    """The stop of the first host (in the play's order) that recorded one, from ``{host: stop}``, or None; what the
    stop carries besides its task and message stays (the stack's component and tier)."""
    for value in (stopped or {}).values():
        found = stop(value)
        if found:
            return dict(value, **found)
    return None


def _truncate(text, length=200, end='...', leeway=5):
    """Jinja's truncate (the templates' words, kept): cut at a word before ``length``, ``end`` added."""
    if len(text) <= length + leeway:
        return text
    return text[:length - len(end)].rsplit(' ', 1)[0] + end


def _hms(epoch, fmt='%H:%M:%S'):
    return time.strftime(fmt, time.gmtime(int(float(epoch)))) if epoch is not None else '-'


def _text(value):
    """A value as Jinja printed it (None is 'None', a float its repr)."""
    return str(value)


# ---- preflight ---------------------------------------------------------------------------------------------------

def _preflight_result(report):
    if report.get('passed'):
        return 'PASS'
    if report.get('unreachable'):
        return 'UNREACHABLE'
    return 'NOT READ' if 'tray_read' in (report.get('failed_checks') or []) else 'FAIL'


def preflight_markdown(hosts, reports):
    """preflight-summary.md: ``hosts`` every tray of the play (its order), ``reports`` {tray: preflight_report}."""
    reports = dict((host, report) for host, report in (reports or {}).items() if isinstance(report, dict))
    out = ['# Preflight summary', '']
    unread = [reports[h] for h in hosts if h in reports and 'tray_read' in (reports[h].get('failed_checks') or [])]
    if unread:
        down = sorted(r.get('host') for r in unread if r.get('unreachable'))
        broken = sorted(r.get('host') for r in unread if not r.get('unreachable'))
        out.append('**%d of %d trays not read - nothing was checked on them.**' % (len(unread), len(hosts)))
        # one line each (the template ran them together: "Unreachable: tray03.Read failed: tray04.")
        out += ['Unreachable: %s.' % ', '.join(down)] if down else []
        out += ['Read failed: %s.' % ', '.join(broken)] if broken else []
        out.append('')
    out += ['Huge pages: preflight checks that the requested page sizes exist on the running kernel; the counts are',
            "allocated by the `hugepages=` kernel argument and verified after the tray's reboot. Below the table: "
            'every failed',
            'check of a tray, and every warning (passed, with something that could not be judged), with its details '
            'and fix.',
            '',
            '| tray | platform | result | failed checks | huge pages checked |',
            '|---|---|---|---|---|']
    for host in sorted(hosts):
        report = reports.get(host)
        if report:
            huge = [c for c in report.get('checks') or [] if c.get('name') == 'hugepages']
            out.append('| %s | %s | %s | %s | %s |' % (
                host, report.get('platform'), _preflight_result(report), ', '.join(report.get('failed_checks') or []),
                _text(huge[0].get('data', {}).get('checked')) if huge else '-'))
        else:
            out.append('| %s | | NOT CHECKED (unreachable or failed earlier) | | |' % host)
    for host in sorted(hosts):
        report = reports.get(host)
        shown = [c for c in (report or {}).get('checks') or [] if c.get('status') in ('failed', 'warning')]
        if not shown:
            continue
        out += ['', '## %s' % host, '']
        for check in shown:
            out.append('- **%s**%s: %s' % (check.get('name'), ' (warning)' if check.get('status') == 'warning' else '',
                                           check.get('message')))
            for detail in check.get('details') or []:
                out.append('  - %s' % _text(detail).replace('\n', ' '))
            out.append('  - Fix: %s' % _text(check.get('fix')).replace('\n', ' '))
    out += ['', 'Per-tray evidence: `<tray>/preflight.json` beside this file.']
    return '\n'.join(out) + '\n'


def _preflight_findings(report):
    return ' '.join('%s: %s' % (c.get('name'), c.get('message')) for c in report.get('checks') or []
                    if c.get('status') == 'failed')


def preflight(hosts, values, directory, fail=True):
    """The preflight's record: ``values`` {tray: {preflight_report, __preflight_evidence}} as the role set them."""
    reports = dict((host, (values.get(host) or {}).get('preflight_report')) for host in hosts)
    files = [item for item in ((values.get(host) or {}).get('__preflight_evidence') for host in hosts)
             if isinstance(item, dict)]
    files.append({'path': 'preflight-summary.md', 'content': preflight_markdown(hosts, reports)})
    summary = os.path.join(directory, 'preflight-summary.md')
    failures = {}
    for host in hosts:
        report = reports.get(host)
        if not isinstance(report, dict):
            continue
        if 'tray_read' in (report.get('failed_checks') or []) and report.get('checks'):
            failures[host] = '%s. Nothing was checked on it, nothing was changed. Summary: %s' % (
                report['checks'][0].get('message'), summary)
        elif fail and not report.get('passed'):
            failures[host] = ('Preflight failed (%s); nothing was changed on the tray. %s Details and the fix: %s' % (
                ', '.join(report.get('failed_checks') or []), _preflight_findings(report),
                os.path.join(directory, host, 'preflight.json')))
    present = [reports[h] for h in hosts if isinstance(reports.get(h), dict)]
    return {'files': files, 'artifact': artifacts.preflight(present, directory), 'failures': failures}


# ---- rolling reboot ----------------------------------------------------------------------------------------------

def _or_dash(value):
    return _text(value) if value else '-'


def _row_line(row):
    seconds = row.get('reboot_seconds')
    return '| %s |' % ' | '.join([
        _text(row.get('tray')), _or_dash(row.get('group', '')), _or_dash(row.get('wave')), _or_dash(row.get('role')),
        _text(row.get('idle', '-')), ', '.join(row.get('reboot_required_by') or []) or '-',
        ', '.join(row.get('changed_roles') or []) or '-', _hms(row.get('down_at')), _hms(row.get('up_at')),
        _text(seconds) if seconds is not None else '-', _text(row.get('rebooted')), _text(row.get('cmdline_verified')),
        _text(row.get('drain')), _text(row.get('status')) + (' (unreachable)' if row.get('unreachable') else '')])


def _wave_line(wave):
    secs = [v for v in (wave.get('reboots') or {}).values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not secs:
        reboots = '-'
    elif len(secs) == 1:
        reboots = '%.0f s' % min(secs)
    else:
        reboots = '%.0f-%.0f s' % (min(secs), max(secs))
    return '| %s (%s) | %s | %s | %s | %s | %s | %s |' % (
        wave.get('wave'), wave.get('label'), ', '.join(wave.get('trays') or []),
        _hms(wave.get('started'), '%Y-%m-%d %H:%M:%S'), _hms(wave.get('ended')), '%.0f s' % float(wave.get('seconds')),
        reboots, ', '.join(wave.get('failed') or []) or '-')


def _bmc_lines(row):
    b = row['bmc']
    out = ['', '### %s' % row.get('tray'), '']
    if b.get('read'):
        state = b.get('power_state') or 'not reported'
        out += ['- BMC %s, system %s: PowerState **%s**, BootProgress' % (b.get('address'), b.get('system_id'), state),
                '  **%s**, health **%s**' % (b.get('boot_progress') or 'not reported', b.get('health') or 'not reported')]
    else:
        out.append('- BMC not read: %s' % _text(b.get('error')))
    recovery = b.get('recovery') or {}
    out.append('- Recovery: %s%s' % (recovery.get('why'), (' - %s' % recovery['result']) if recovery.get('result') else ''))
    if b.get('after'):
        out.append('- After the power cycle: %s' % b['after'].get('summary'))
    if b.get('log'):
        out.append('- Latest log entries (oldest first):')
        for entry in b['log']:
            out.append('  - %s [%s] %s' % (entry.get('created') or '-', entry.get('severity') or '-',
                                           entry.get('message') or '-'))
    elif b.get('log_error'):
        out.append('- Log entries not read: %s' % b['log_error'])
    return out


def rolling_reboot_markdown(final, meta):
    """rolling-reboot.md from the reboot_step action's report (``final``) and ``meta``: check_mode, group_by,
    play_hosts (every tray of the play), hosts (the rolling reboot's trays), nodes_msg (what reading the nodes
    said; None when they were not read)."""
    plan, rows, waves = final.get('plan') or {}, final.get('rows') or [], final.get('waves') or []
    check_mode = bool(meta.get('check_mode'))
    out = ['# Rolling reboot%s' % (' (check mode: nothing was rebooted)' if check_mode else ''), '']
    if final.get('earlier'):
        # what a run of ours that was cut short left (plugin_utils/journal.py), before anything of this run
        out += ['**Earlier run:** %s' % final['earlier'], '']
    if final.get('released'):
        # from its journal, or - the run folder gone - from our mark on the nodes alone
        out += ['Released first (their trays came back in the wanted state; the cut-short run held their nodes): '
                '%s.' % ', '.join(final['released']), '']
    planned = final.get('planned') or []
    out.append(_text(planned[0]))
    if len(planned) > 1:
        out.append('')
        out += ['- %s' % line for line in planned[1:]]
    if plan.get('stop'):
        out += ['', '**Stopped:** %s' % plan['stop'].get('msg')]
    elif plan.get('refuse'):
        out += ['', '**Refused:** %s' % plan['refuse']]
    elif final.get('stopped'):
        out += ['', '**Stopped** at task "%s": %s' % (final['stopped'].get('task'), final['stopped'].get('message'))]
    if [r for r in rows if r.get('drain') == 'not drained: no cluster']:
        if check_mode:
            what = 'the trays would reboot without drain'
        elif [r for r in rows if r.get('rebooted') != 'no']:
            what = 'trays rebooted without drain'
        else:
            what = 'no tray was rebooted, none drained'
        said = meta.get('nodes_msg', 'no answer')
        out += ['', 'No cluster configured: %s (%s).' % (what, _truncate(_text(said).split('\n', maxsplit=1)[0]))]
    out += ['', '| tray | %s | wave | as | idle/busy | reboot asked by | changed roles | down (UTC) | up (UTC) | '
                'reboot s | rebooted | cmdline verified | drain | result |' % (meta.get('group_by') or 'group'),
            '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    out += [_row_line(row) for row in rows]
    hosts = meta.get('hosts') or []
    for tray in [t for t in meta.get('play_hosts') or [] if t not in hosts]:
        out.append('| %s | - | - | - | - | - | - | - | - | - | no | n/a | - | not in the run: left the play before the '
                   'rolling reboot (unreachable or failed in an earlier phase) |' % tray)
    if waves:
        out += ['', '## Waves', '', '| wave | trays | started (UTC) | ended (UTC) | took | reboots (send to back) | '
                'failed |', '|---|---|---|---|---|---|---|']
        out += [_wave_line(wave) for wave in waves]
    busy = [r for r in rows if 'idle' in r and r['idle'] == 'busy']
    if busy:
        out += ['', '## Busy trays', '']
        out += ['- **%s**: %s' % (r.get('tray'), r.get('idle_why')) for r in busy]
    failed = [r for r in rows if r.get('status') == 'FAILED']
    if failed:
        out += ['', '## Failed', '']
        for r in failed:
            canary = ' (the canary)' if r.get('role') == 'canary' else ''
            down = ' - UNREACHABLE' if r.get('unreachable') else ''
            out += ['- **%s**%s%s: %s failed: %s' % (r.get('tray'), canary, down, r.get('failed_step'), r.get('error')),
                    '  Check %s. The run stopped after this wave; trays marked "not reached" were not touched.'
                    % r.get('check')]
    with_bmc = [r for r in rows if 'bmc' in r]
    if with_bmc:
        out += ['', '## BMC', '', 'What the BMC said about each tray that did not come back from its reboot, and what '
                'was done about it', '(docs/runbooks/tray-not-back-from-reboot.md starts here).']
        for r in with_bmc:
            out += _bmc_lines(r)
    return '\n'.join(out) + '\n'


def rolling_reboot(final, meta, directory, stopped):
    """The rolling reboot's record: ``final`` the reboot_step action's report (None when the run stopped before the
    role knew its trays: nothing is written)."""
    if not isinstance(final, dict) or 'rows' not in final:
        return {'files': [], 'artifact': None, 'failures': _failures(stopped)}
    files = [{'path': 'rolling-reboot.md', 'content': rolling_reboot_markdown(final, meta)},
             {'path': 'rolling-reboot.json', 'json': final.get('json')}]
    artifact = artifacts.rolling_reboot(final.get('rows'), directory, {'stopped': final.get('stopped')})
    return {'files': files, 'artifact': artifact, 'failures': _failures(stopped)}


# ---- the stack ----------------------------------------------------------------------------------------------------

def _check_note(check_mode):
    return ' (check mode: nothing was changed)' if check_mode else ''


def stack_markdown(summary):
    """stack-<deploy|teardown>.md from the run's summary (stack-<action>.json without its dir)."""
    stopped = summary.get('stopped')
    out = ['# Stack %s%s' % (summary['action'], _check_note(summary.get('check_mode'))), '',
           '**Result: %s**%s' % (summary['result'].upper(), (
               ' - stopped in component %s (tier %d) at task "%s": %s' % (
                   stopped.get('component'), int(stopped.get('tier')) + 1, stopped.get('task'), stopped.get('message'))
           ) if stopped else ''), '', '| tier | components |', '|---|---|']
    out += ['| %d | %s |' % (index, ', '.join(tier)) for index, tier in enumerate(summary.get('tiers') or [], 1)]
    if summary.get('found'):
        out += ['', '## Found', '', 'Left by an earlier run that was cut short, put back before this one went on:', '']
        out += ['- %s' % ' '.join(str(item).split()) for item in summary['found']]
    return '\n'.join(out) + '\n'


def stack(action, tiers, stopped, directory, check_mode=False, found=None):
    """A stack deploy's or teardown's record: ``tiers`` the components in their tiers, ``stopped`` {host: the stop
    with its component and tier} (stack stopped.yml), ``found`` what the components found an earlier run left (a
    release helm left pending: stack pending.yml), one sentence each."""
    stop_with_component = first_stop(stopped)
    summary = {'result': 'failed' if stop_with_component else 'passed', 'action': action,
               'check_mode': bool(check_mode), 'tiers': tiers or [], 'stopped': stop_with_component}
    if found:
        summary['found'] = sorted(' '.join(str(item).split()) for item in found)
    files = [{'path': 'stack-%s.json' % action, 'json': dict(summary, dir=directory)},
             {'path': 'stack-%s.md' % action, 'content': stack_markdown(summary)}]
    return {'files': files, 'artifact': artifacts.stack(summary, directory), 'failures': _failures(stopped)}


def recover_summary(found, stopped, finalizer, check_mode=False):
    """The NodeMaintenance recovery's summary (stack-recover.json): ``found`` the NodeMaintenance objects it released
    (as k8s_info returns them)."""
    items = [{'namespace': nm['metadata']['namespace'], 'name': nm['metadata']['name'], 'node': nm['spec']['nodeName']}
             for nm in found or []]
    nodes = []
    for item in items:
        if item['node'] not in nodes:
            nodes.append(item['node'])
    if stopped:
        said = 'stopped at task "%s": %s' % (stopped['task'], stopped['message'])
    elif not items:
        said = 'nothing to recover: no NodeMaintenance pending on %s' % finalizer
    else:
        said = '%s%d NodeMaintenance object(s) and uncordon%s node(s) %s' % (
            'would release ' if check_mode else 'released ', len(items), '' if check_mode else 'ed', ', '.join(nodes))
    return {'result': 'failed' if stopped else 'passed', 'action': 'recover', 'check_mode': bool(check_mode),
            'recovered': items, 'nodes': nodes, 'stopped': stopped, 'summary': said}


def recover_markdown(summary):
    out = ['# Stack recover: orphaned NodeMaintenance%s' % _check_note(summary.get('check_mode')), '',
           '**Result: %s** - %s' % (summary['result'].upper(), summary['summary']), '',
           '| NodeMaintenance | node |', '|---|---|']
    out += ['| %s/%s | %s |' % (i['namespace'], i['name'], i['node']) for i in summary['recovered']]
    return '\n'.join(out) + '\n'


def stack_recover(found, stopped, directory, finalizer, check_mode=False):
    summary = recover_summary(found, first_stop(stopped), finalizer, check_mode)
    files = [{'path': 'stack-recover.json', 'json': dict(summary, dir=directory)},
             {'path': 'stack-recover.md', 'content': recover_markdown(summary)}]
    return {'files': files, 'artifact': artifacts.stack(summary, directory), 'failures': _failures(stopped),
            'summary': summary['summary']}


# ---- validation ---------------------------------------------------------------------------------------------------

def validation(phases, meta, directory, host):
    """The validation's record: ``phases`` ({name, checks} in the order they ran), ``meta`` the evidence writer's
    (recipe, recipe_digest, recorded_digest, generated, drift, racks) with ``files`` (drift's) and ``record_sources``
    (the preflight records it used); the run fails on ``host`` (the API host) when a phase failed."""
    meta = dict(meta or {})
    extra = list(meta.pop('files', None) or [])
    sources = meta.pop('record_sources', None) or {}
    report_dir_shown = meta.pop('report_dir', '')
    run_dir = meta.pop('run_dir', '')
    files = evidence.evidence_files(phases, meta) + extra
    artifact = artifacts.validation(phases, directory, {'recipe': meta.get('recipe', ''),
                                                        'recipe_digest': meta.get('recipe_digest', '')})
    artifact['preflight_records'] = sources
    results = [dict(evidence.phase_result(phase), name=phase.get('name')) for phase in phases]
    recipe = meta.get('recipe', '')
    missing = sources.get('missing') or [] if isinstance(sources, dict) else []
    beside = ' and the earlier run folders beside it' if run_dir else ''
    no_record = (' No preflight record of %s (looked in %s%s): their PFs were judged on the requirements only, not '
                 'compared with a preflight.' % (', '.join(missing), report_dir_shown, beside)) if missing else ''
    failed = [r['name'] for r in results if r['status'] == 'failed']
    failures, said = {}, ''
    if failed:
        findings = '; '.join(r['findings'] for r in results if r['findings'])
        failures[host] = ('Validation of %s failed in %s%s.%s Every finding and its fix: %s/report.md (report.html, '
                          'junit.xml, ctrf/).' % (recipe, ', '.join(failed), (': ' + findings) if findings else '',
                                                  no_record, directory))
    else:
        said = 'Validation of %s passed; evidence in %s.%s' % (recipe, directory, no_record)
    return {'files': files, 'artifact': artifact, 'failures': failures, 'summary': said, 'replace': ['ctrf']}


def _failures(stopped):
    """{host: the message it fails with} for each host that recorded a stop."""
    out = {}
    for host, value in (stopped or {}).items():
        found = stop(value)
        if found:
            out[host] = found['message']
    return out
