# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A preparing role's inputs as the role makes them on this host (plugin_utils/role_inputs.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: role_inputs
short_description: The inputs a preparing role of the collection decides from, as the role makes them on this host
version_added: 0.1.0
description:
  - Returns, per role name, the dict the role hands its planner (C(__<role>_inputs) in the role's C(vars/main.yml)) -
    its variables without the role prefix, made by the role's own defaults from this host's variables (the
    inventory's C(gpu_tray_*) values and the platform profile), exactly as the role resolves them when it runs.
  - For code that must agree with a role before it runs, without restating its defaults - the preflight checks the
    huge page sizes C(kernel_tuning) will write, the validation the ib_core C(netns_mode) C(rdma_netns) sets.
  - A role that is not one of the preparing roles fails, naming them. Errors of the role's own defaults (an unknown
    platform) pass through.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _terms:
    description: Preparing roles - C(kernel_tuning), C(imex), C(rdma_modules), C(rdma_netns).
    type: list
    elements: str
    required: true
'''

EXAMPLES = r'''
- name: The huge page pools kernel_tuning will request on this tray
  ansible.builtin.debug:
    msg: "{{ lookup('gpu_tray.cluster.role_inputs', 'kernel_tuning').hugepages }}"
'''

RETURN = r'''
_raw:
  description: One dict per role (the keys of the role's planner inputs, plugins/plugin_utils/planners/<role>.py).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import role_inputs


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        out = []
        for role in terms:
            try:
                out.append(role_inputs.resolve(self._templar, self._loader, role, variables or {}))
            except role_inputs.RoleInputsError as exc:
                raise AnsibleLookupError('role_inputs: %s' % exc)
        return out
