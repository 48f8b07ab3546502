# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.phase_record: a phase's way out, on the controller (plugin_utils/phase_record.py).

Every role that ends a phase ends with the same two tasks in its ``always:``: this one (run_once) writes the phase's
report files and hands its summary to the job's artifacts (``ansible_stats``, as set_stats does), then a fail task
fails each host that ``failures`` names. With ``find`` it only looks for an earlier run's files. With ``journal`` it
appends one line to the run's journal (plugin_utils/journal.py: a step that cannot be undone, before and after it);
with ``journal_read`` it returns what the last run of the phase left when it was cut short.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import journal, phase_record, report_dir, run_context
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.controller_action import host_facts

ARGUMENT_SPEC = dict(
    phase=dict(type='str', required=True, choices=list(phase_record.PHASES)),
    records=dict(type='raw'),
    hostvars=dict(type='list', elements='str', default=[]),
    stopped=dict(type='str'),
    meta=dict(type='dict', default={}),
    dest=dict(type='path'),
    run_dir=dict(type='path'),
    find=dict(type='list', elements='str'),
    prefer=dict(type='path'),
    journal=dict(type='str', choices=list(journal.STEPS)),
    trays=dict(type='list', elements='str'),
    detail=dict(type='dict', default={}),
    journal_read=dict(type='bool', default=False),
)
MODE = 0o644


def gathered(task_vars, hosts, names):
    """{host: {name: its value}} of each host's facts ``names`` (absent ones left out)."""
    facts = dict((name, host_facts(task_vars.get('hostvars') or {}, hosts, name, task_vars.get('inventory_hostname'),
                                   task_vars)) for name in names)
    return dict((host, dict((name, facts[name][host]) for name in names if facts[name][host] is not None))
                for host in hosts)


def replace_stale(dest, folders, written_paths):
    """Remove the files under ``dest/<folder>`` this record did not write (an earlier run's phases)."""
    removed = []
    keep = set(written_paths)
    for folder in folders:
        top = os.path.join(dest, folder)
        if not os.path.isdir(top):
            continue
        for parent, _dirs, names in os.walk(top):
            for name in names:
                path = os.path.join(parent, name)
                if path not in keep:
                    os.unlink(path)
                    removed.append(path)
    return removed


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def _where(self, task_vars):
        """Where this run's reports go (report_dir.locate over the run's templated report inputs)."""
        return run_context.report_place(run_context.host_values(self._templar, task_vars, list(run_context.REPORT_INPUTS)))

    def _find(self, args, task_vars):
        """{file: its path in the earlier run that left it, '' when none did}: without run folders the phase's own
        directory (``dest``); with them (``prefer``, this run's folder) the newest run folder under the base that holds
        the file at the same place (``dest`` relative to ``prefer``), this run's own first."""
        dest = os.path.realpath(os.path.expanduser(args['dest'])) if args.get('dest') else None
        prefer = os.path.realpath(os.path.expanduser(args['prefer'])) if args.get('prefer') else None
        mine = dest or self._where(task_vars)['dir']
        found = {}
        for name in args['find']:
            if prefer and dest:
                # the one search for an earlier run (report_dir.newest_with, as the preflight records lookup's)
                inside = os.path.relpath(dest, prefer)
                folder = report_dir.newest_with(os.path.dirname(prefer), os.path.normpath(os.path.join(inside, name)),
                                                prefer=prefer)
                found[name] = os.path.join(folder, inside, name) if folder else ''
            else:
                found[name] = os.path.join(mine, name) if os.path.isfile(os.path.join(mine, name)) else ''
        return dict(changed=False, earlier=found)

    def _journal(self, args, task_vars):
        """Append this step to the run's journal (``dest``, default the run's report folder); the trays default to
        this host. A record, not a change: unchanged, written in check mode too (what a check run would do is no
        step taken, and the roles write none there)."""
        where = self._where(task_vars)
        path = os.path.join(os.path.expanduser(args['dest']) if args.get('dest') else where['dir'], journal.JOURNAL)
        trays = args['trays'] if args.get('trays') is not None else [str(task_vars.get('inventory_hostname'))]
        item = journal.entry(journal.run_id(), args['phase'], args['journal'], trays, args['detail'])
        journal.append(path, item)
        return dict(changed=False, journal=os.path.realpath(path), run=item['run'], entry=item)

    def _journal_read(self, args, task_vars):
        """What the last run of the phase left when it was cut short (journal.cut_short), from the journal of this
        run's folder or, with run folders, the newest one beside it that has a journal; and this run's id."""
        where = self._where(task_vars)
        if args.get('dest'):
            folder = os.path.expanduser(args['dest'])
            found = folder if os.path.isfile(os.path.join(folder, journal.JOURNAL)) else ''
        else:
            found = report_dir.newest(where, journal.JOURNAL, prefer=where['dir'])
        path = os.path.join(found, journal.JOURNAL) if found else ''
        mine = journal.run_id()
        summary = journal.cut_short(journal.read(path), args['phase'], current=mine) if path else None
        return dict(changed=False, journal=path, run=mine, cut_short=summary, line=journal.line(summary))

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            if args.get('find'):
                result.update(self._find(args, task_vars))
                return result
            if args.get('journal'):
                result.update(self._journal(args, task_vars))
                return result
            if args.get('journal_read'):
                result.update(self._journal_read(args, task_vars))
                return result
        except (report_dir.ReportDirError, OSError, ValueError) as exc:
            raise AnsibleActionFail('phase_record: %s' % to_native(exc))
        if not args.get('dest'):
            # the run's report directory, and its own run folder (the latest link points at it) when it has one
            try:
                where = self._where(task_vars)
            except report_dir.ReportDirError as exc:
                raise AnsibleActionFail('phase_record: %s' % to_native(exc))
            args['dest'] = where['dir']
            args['run_dir'] = where['dir'] if where['run_id'] else None
        dest = os.path.realpath(os.path.abspath(os.path.expanduser(args['dest'])))
        run_dir = os.path.realpath(os.path.abspath(os.path.expanduser(args['run_dir']))) if args.get('run_dir') else None
        hosts = [str(h) for h in task_vars.get('ansible_play_hosts_all') or []]
        stopped = host_facts(task_vars.get('hostvars') or {}, hosts, args['stopped'], task_vars.get('inventory_hostname'),
                             task_vars) if args.get('stopped') else {}
        values = gathered(task_vars, hosts, args['hostvars'])
        meta, phase = args['meta'], args['phase']
        check_mode = bool(task_vars.get('ansible_check_mode'))
        try:
            if phase == 'preflight':
                out = phase_record.preflight(hosts, values, dest, fail=bool(meta.get('fail', True)))
            elif phase == 'rolling_reboot':
                out = phase_record.rolling_reboot(args['records'], dict(meta, check_mode=check_mode, play_hosts=hosts),
                                                  dest, stopped)
            elif phase in ('stack_deploy', 'stack_teardown'):
                found = [str(v['__stack_found']) for v in values.values() if v.get('__stack_found')]
                out = phase_record.stack(phase.split('_', 1)[1], args['records'], stopped, dest, check_mode, found)
            elif phase == 'stack_recover':
                out = phase_record.stack_recover(args['records'], stopped, dest, meta.get('finalizer', ''), check_mode)
            else:
                out = phase_record.validation(args['records'] or [], meta, dest,
                                              str(task_vars.get('inventory_hostname') or 'localhost'))
        except (KeyError, TypeError, ValueError) as exc:
            raise AnsibleActionFail('phase_record: the %s record cannot be made: %s' % (phase, to_native(exc)))
        written = []
        try:
            paths = []
            for item in out['files']:
                path = report_dir.target(dest, item['path'])
                paths.append(path)
                if report_dir.write_if_changed(path, report_dir.render(item), MODE):
                    written.append(path)
            removed = replace_stale(dest, out.get('replace') or [], paths)
            if run_dir and out['files']:
                report_dir.point_latest(run_dir)
        except (IOError, OSError, report_dir.ReportDirError) as exc:
            raise AnsibleActionFail('phase_record: cannot write the %s record under %s: %s' % (phase, dest, to_native(exc)))
        # a record on the controller, not a change to a tray or the cluster: a second run stays at 0 changed
        result.update(changed=False, dir=dest, written=written, removed=removed, failures=out['failures'],
                      artifact=out['artifact'], summary=out.get('summary') or '',
                      msg='%s: %d of %d report files written under %s.' % (
                          phase, len(written), len(out['files']), dest))
        if out['artifact'] is not None:
            # what ansible.builtin.set_stats returns: AWX shows it on the job's page and hands it to the workflow's
            # next nodes (docs/awx.md); the phases of one job aggregate into one gpu_tray_evidence
            result['ansible_stats'] = {'data': {'gpu_tray_evidence': {phase: out['artifact']}},
                                       'per_host': False, 'aggregate': True}
        return result
