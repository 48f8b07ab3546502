# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape of an action plugin that works only on the controller's files (evidence_bundle, verify_evidence): no
connection, no file sent to the target, its options checked against ``ARGUMENT_SPEC`` before ``act`` runs."""

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
