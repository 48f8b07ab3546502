# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.reboot_step: the rolling reboot's bookkeeping, on the controller, once per step.

    the role reads and acts (tasks)  ->  this action: what it means (plugin_utils/reboot_run.py)  ->  registered

Run with ``run_once: true``: one worker reads what the role's tasks registered on every tray of the run
(``hostvars``: REGISTERED below) and the previous step's result (``run``), and returns the next
- the plan, every tray's report row, the waves done - which the role registers (a registered run_once result reaches
every host of the play). The role's options are not in ``hostvars``: what a step needs of a tray's own settings the
role keeps in the tray's fact ``__rolling_reboot_tray``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_run
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.controller_action import host_facts

# the results the role's tasks register on each tray (their register: names), by the short names the planner's steps
# take them by: the role's names stay here, plugin_utils/reboot_plan.py and reboot_run.py know none
REGISTERED = {
    'pods': '__rolling_reboot_pods', 'bmc_answer': '__rolling_reboot_bmc_answer', 'sent': '__rolling_reboot_sent',
    'back': '__rolling_reboot_back', 'bmc_system': '__rolling_reboot_bmc_system', 'bmc_logs': '__rolling_reboot_bmc_logs',
    'bmc_seen': '__rolling_reboot_bmc_seen', 'bmc_final': '__rolling_reboot_bmc_final',
    'bmc_cycle': '__rolling_reboot_bmc_cycle', 'cycled_back': '__rolling_reboot_cycled_back',
    'bmc_system_after': '__rolling_reboot_bmc_system_after', 'verified': '__rolling_reboot_verified',
    'failure': '__rolling_reboot_failure', 'stopped': '__rolling_reboot_stopped', 'tray': '__rolling_reboot_tray',
    'facts': 'ansible_facts',
}
STEPS = ('plan', 'wave', 'not_back', 'record', 'report')
ARGUMENT_SPEC = dict(
    step=dict(type='str', required=True, choices=list(STEPS)),
    inputs=dict(type='dict'),
    run=dict(type='raw'),
    nodes=dict(type='raw'),
    maintenance_operator=dict(type='raw'),
    foreign=dict(type='raw'),
    final=dict(type='bool', default=False),
    timeout=dict(type='raw'),
    journal=dict(type='raw'),
)
# what step not_back reads of the tray's own results
NOT_BACK = ('bmc_system', 'bmc_logs', 'bmc_system_after', 'back', 'bmc_cycle', 'bmc_seen', 'facts')
# what a step returns (and the next one takes back as ``run``)
KEPT = ('plan', 'planned', 'rows', 'states', 'via', 'waves_done', 'bmc', 'wave', 'wave_index', 'started', 'earlier',
        'held', 'release')


def registered(hostvars, hosts, name):
    """{tray: what the role registered on it as REGISTERED[name]} (None where it was never registered)."""
    return host_facts(hostvars, hosts, REGISTERED[name])


def previous(run):
    """The run the previous step returned (its kept keys), None when there is none."""
    if not isinstance(run, dict) or not isinstance(run.get('rows'), dict) or not isinstance(run.get('plan'), dict):
        return None
    return dict((key, run[key]) for key in KEPT if key in run)


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        task_vars = task_vars or {}
        step, inputs, run = args['step'], args['inputs'] or {}, previous(args['run'])
        if step == 'not_back':          # once for the tray that did not come back, not run_once
            regs = dict((name, task_vars.get(REGISTERED[name])) for name in NOT_BACK)
            tray = task_vars.get(REGISTERED['tray'])
            out = reboot_run.not_back(tray if isinstance(tray, dict) else {}, regs, args['timeout'], args['final'])
            if args['final']:
                result.update(out, failed=True, changed=False)
            else:
                result.update(bmc=out['bmc'], changed=False, msg=out['warning'],
                              warnings=['%s did not come back from its reboot. %s' % (
                                  task_vars.get('inventory_hostname'), out['warning'])])
            return result
        if not isinstance(inputs.get('hosts'), list):
            raise AnsibleActionFail('reboot_step: inputs.hosts must be the trays of the run (a list)')
        hosts = [str(h) for h in inputs['hosts']]
        hostvars = task_vars.get('hostvars') or {}
        in_play = [str(h) for h in task_vars.get('ansible_play_hosts') or []]
        trays = dict((h, v if isinstance(v, dict) else {}) for h, v in registered(hostvars, hosts, 'tray').items())
        if step != 'plan' and step != 'report' and run is None:
            raise AnsibleActionFail('reboot_step: step %s needs run, the result of the previous step' % step)
        now = time.time()
        try:
            if step == 'plan':
                # what a run of ours that was cut short left (phase_record journal_read), and the trays that left
                # this play before the rolling reboot (a tray it sent down and that does not answer stops the run)
                read = args['journal'] if isinstance(args['journal'], dict) else {}
                everyone = [str(h) for h in task_vars.get('ansible_play_hosts_all') or hosts]
                out = reboot_run.begin(inputs, trays, nodes=args['nodes'], pods=registered(hostvars, hosts, 'pods'),
                                       mo_reads=(args['maintenance_operator'] or {}).get('results'), now=now,
                                       foreign=(args['foreign'] or {}).get('results'),
                                       bmc_answers=registered(hostvars, hosts, 'bmc_answer'),
                                       cut_short=read.get('cut_short'), run_id=read.get('run'),
                                       gone=[h for h in everyone if h not in in_play])
            elif step == 'wave':
                out = reboot_run.start_wave(run, inputs, args['nodes'],
                                            registered(hostvars, [h for h in hosts if h in in_play], 'pods'), now)
            elif step == 'record':
                members = (run.get('wave') or {}).get('trays') or []
                regs = dict((h, {}) for h in members)
                for name in ('failure', 'sent', 'back', 'bmc_seen', 'bmc_final', 'bmc_cycle', 'cycled_back', 'verified'):
                    for host, value in registered(hostvars, members, name).items():
                        regs[host][name] = value
                out = reboot_run.record_wave(run, inputs, trays, regs, in_play, now)
            else:
                stopped = [v for v in registered(hostvars, hosts, 'stopped').values() if isinstance(v, dict)]
                play_hosts_all = [str(h) for h in task_vars.get('ansible_play_hosts_all') or hosts]
                out = reboot_run.report(run, inputs, trays, play_hosts_all, stopped[0] if stopped else None)
                result.update(out, changed=False)
                return result
        except (KeyError, TypeError, ValueError) as exc:
            # the run so far stays registered (the report is written from it)
            result.update(run or {}, failed=True, msg='reboot_plan: %s' % to_native(exc))
            return result
        result.update(out, changed=False, msg=(out.get('plan') or {}).get('summary', ''))
        return result
