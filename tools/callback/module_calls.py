# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Callback for tools/prep_bench.py (not shipped): counts, per host, the tasks that ran a module ON the host.

A task counts when it ran (ok, changed or failed; not skipped) and is not controller-only: not delegated to
localhost, not one of the actions that run in the controller process (set_fact, assert, fail, debug, meta,
include_*), and for gpu_tray.cluster.tray_plan only when it read the tray (its result's read.module_call). A loop
counts each item it ran. ansible.builtin.reboot counts as one. Written as JSON to $GPU_TRAY_MODULE_CALLS at the end.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from ansible.plugins.callback import CallbackBase

CONTROLLER_ONLY = {'set_fact', 'assert', 'fail', 'debug', 'meta', 'include_tasks', 'include_role', 'import_role',
                   'import_tasks', 'include_vars', 'validate_argument_spec', 'write_evidence', 'add_host', 'group_by'}


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'aggregate'
    CALLBACK_NAME = 'module_calls'
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.calls = {}

    def _count(self, result):
        task = result._task
        action = (task.action or '').split('.')[-1]
        if action in CONTROLLER_ONLY or task.delegate_to in ('localhost', '127.0.0.1'):
            return
        items = result._result.get('results') if isinstance(result._result.get('results'), list) else [result._result]
        ran = 0
        for item in items:
            if item.get('skipped'):
                continue
            if action == 'tray_plan' and not (item.get('read') or {}).get('module_call'):
                continue
            ran += 1
        host = result._host.get_name()
        self.calls[host] = self.calls.get(host, 0) + ran

    def v2_runner_on_ok(self, result):
        self._count(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result)

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get('GPU_TRAY_MODULE_CALLS')
        if path:
            with open(path, 'w') as handle:
                json.dump(self.calls, handle, sort_keys=True)
