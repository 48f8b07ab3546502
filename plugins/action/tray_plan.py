# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.tray_plan: read a tray once per run, decide on the controller.

    read (memoised per host and run)  ->  plan (plugin_utils/planners/<planner>.py)  ->  the role's write tasks

A planner names what it reads (``needs``); the run's read of the tray - kept in the host fact ``gpu_tray_read``,
tagged with the run it belongs to - answers it when it covers it (no module call), else the tray is read once more
with module gpu_tray.cluster.tray_state for everything the kept read held plus what is asked, and that read is kept.
``prefetch`` adds the needs of the preparing roles' planners to the same read, with the inputs each role will hand its
planner - the role's own ``__<role>_inputs``, templated from its defaults and vars with this host's variables
(plugin_utils/role_inputs.py): the preflight reads what the preparing roles of the run will decide from. ``fresh``
reads even when the kept read covers the request (after a write or a reboot).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.preflight import SpecError
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform, role_inputs, tray_read
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import (
    imex,
    kernel_tuning,
    preflight,
    rdma_modules,
    rdma_netns,
    verify,
)

PLANNERS = {module.NAME: module for module in (kernel_tuning, imex, rdma_modules, rdma_netns, preflight, verify)}
PREPARING = role_inputs.PREPARING
MEMO = 'gpu_tray_read'

ARGUMENT_SPEC = dict(
    planner=dict(type='str', required=True, choices=sorted(PLANNERS)),
    entry=dict(type='str', default='main', choices=['main', 'restore']),
    inputs=dict(type='dict', required=True),
    prefetch=dict(type='list', elements='str', default=[], choices=list(PREPARING)),
    fresh=dict(type='bool', default=False),
)


def run_id():
    """This ansible-playbook run: the controller process the worker was forked from, with its start time (a pid alone
    may come back in a later run, and a fact cache could carry a read across runs)."""
    parent = os.getppid()
    try:
        with open('/proc/%d/stat' % parent) as handle:
            started = handle.read().rsplit(')', 1)[1].split()[19]
    except (IOError, OSError, IndexError):
        started = ''
    return '%d:%s' % (parent, started)


def kept_read(memo, run):
    """The kept read of this run (None for none, another run's, or a malformed one)."""
    if not isinstance(memo, dict) or memo.get('run') != run or not isinstance(memo.get('state'), dict):
        return None
    return memo


def decide(planner, entry, state, inputs):
    module = PLANNERS[planner]
    if entry == 'restore':
        if not hasattr(module, 'restore'):
            raise AnsibleActionFail('tray_plan: planner %s has no entry point restore' % planner)
        return module.restore(state, inputs)
    return module.plan(state, inputs)


def needs(planner, entry, inputs):
    module = PLANNERS[planner]
    if entry == 'restore' and hasattr(module, 'restore_needs'):
        return module.restore_needs(inputs)
    return module.needs(inputs)


def summary(plan):
    """One sentence: the refusal, or the writes the plan calls for and whether the tray needs the reboot."""
    if plan.get('refuse'):
        return plan['refuse']['msg']
    writes = sorted(key for key, value in (plan.get('writes') or {}).items() if value)
    text = '%s: %s' % (plan['role'], ('writes %s' % ', '.join(writes)) if writes else 'nothing to write')
    if plan.get('reboot_required'):
        text += '; reboot required (%s)' % plan['reason']
    return text + '.'


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def _prefetch(self, names, task_vars):
        """The needs of the preparing roles ``names``, with the inputs the roles make on this host."""
        request = {}
        for name in names:
            try:
                inputs = role_inputs.resolve(self._templar, self._loader, name, task_vars)
            except (AnsibleError, role_inputs.RoleInputsError) as exc:
                raise AnsibleActionFail('tray_plan: cannot read ahead for %s: %s' % (name, to_native(exc)))
            request = tray_read.merge(request, PLANNERS[name].needs(inputs))
        return request

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        task_vars = task_vars or {}
        planner, entry, inputs = args['planner'], args['entry'], args['inputs']
        try:
            wanted = tray_read.merge(needs(planner, entry, inputs), self._prefetch(args['prefetch'], task_vars))
        except (KeyError, tray_read.RequestError) as exc:
            raise AnsibleActionFail('tray_plan: planner %s: cannot tell what to read: %s' % (planner, to_native(exc)))
        run = run_id()
        memo = kept_read((task_vars.get('ansible_facts') or {}).get(MEMO), run)
        if memo and not args['fresh'] and tray_read.covers(memo['request'], wanted):
            state, request, read = memo['state'], memo['request'], False
        else:
            request = wanted
            if memo:
                kept = memo['request']
                if args['fresh']:
                    # a fresh read (after a write or a reboot) keeps the kept read's parts for the planners still to
                    # come, but not the rails' firmware query (seconds per rail on a real ConnectX) unless asked
                    kept = tray_read.without_firmware(kept)
                try:
                    request = tray_read.merge(kept, wanted)
                except tray_read.RequestError:
                    request = wanted          # other roots: this read replaces the kept one
            state = self._execute_module(module_name='gpu_tray.cluster.tray_state',
                                         module_args=tray_read.module_args(request), task_vars=task_vars)
            if state.get('failed') or state.get('unreachable'):
                result.update(failed=True, unreachable=state.get('unreachable', False),
                              msg='Could not read the tray: %s' % state.get('msg', 'no answer'), read=state)
                return result
            state = dict((key, value) for key, value in state.items() if not key.startswith('_ansible'))
            read = True
            facts = dict(state.get('ansible_facts') or {})
            facts[MEMO] = {'run': run, 'request': request, 'state': state}
            result['ansible_facts'] = facts
        try:
            plan = decide(planner, entry, state, inputs)
        except (KeyError, SpecError, platform.ProfileError) as exc:
            raise AnsibleActionFail('tray_plan: planner %s: %s' % (planner, to_native(exc)))
        result.update(changed=False, plan=plan, read={'module_call': read, 'request': request}, msg=summary(plan))
        return result
