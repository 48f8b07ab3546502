# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of an action plugin that works only on the controller's files (evidence_bundle, verify_evidence): no
connection, no file sent to the target, its options checked against ``ARGUMENT_SPEC`` before ``act`` runs; and
:func:`host_facts`, how such an action reads what the play's hosts set (phase_record, reboot_step)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible.plugins.action import ActionBase


class ControllerAction(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False
    ARGUMENT_SPEC = {}
    MUTUALLY_EXCLUSIVE = None

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerAction, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC,
                                                        mutually_exclusive=self.MUTUALLY_EXCLUSIVE)
        result.update(self.act(args))
        return result

    def act(self, args):
        """The action's result (a dict merged into the task's) from its validated ``args``."""
        raise NotImplementedError


def host_facts(hostvars, hosts, name, me=None, my_vars=None):
    """{host: its fact ``name``, None where it has none}, read from ``hostvars`` (an action's task_vars['hostvars']).
    The implicit localhost (a play on localhost without an inventory entry) is not in hostvars: for ``me`` (the
    task's host) its own vars ``my_vars`` are read."""
    out = {}
    for host in hosts:
        try:
            values = hostvars[host]
        except KeyError:
            values = my_vars if host == me and my_vars is not None else None
        out[host] = values.get(name) if hasattr(values, 'get') else None
    return out
