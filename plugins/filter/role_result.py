# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.role_result: the one result record a preparing role exports (<role>_result)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: role_result
version_added: 0.1.0
short_description: The result record of a preparing role, from its plan and its write tasks
description:
  - Each preparing role (C(kernel_tuning), C(imex), C(rdma_modules), C(rdma_netns)) exports one record,
    C(<role>_result) - C(role), C(changed), C(reboot_required), C(reason), C(verify). The rolling reboot reboots the
    trays whose records ask for it and verifies each record's C(verify) after the reboot, with the preflight's rules.
  - C(changed) is true when any of the role's write tasks changed the tray; the rest comes from the plan the role
    made with the C(gpu_tray.cluster.tray_plan) action.
positional: _input, tasks
options:
  _input:
    description: The C(plan) of a registered C(gpu_tray.cluster.tray_plan) result.
    type: dict
    required: true
  tasks:
    description: The registered results of the role's write tasks (skipped ones included).
    type: list
    elements: dict
    required: true
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Export what the role did
  ansible.builtin.set_fact:
    my_role_result: "{{ my_plan.plan | gpu_tray.cluster.role_result([my_write, my_other_write]) }}"
'''

RETURN = r'''
_value:
  description: C({role, changed, reboot_required, reason, verify}).
  type: dict
'''

from ansible.errors import AnsibleFilterError


def _changed(result):
    if not isinstance(result, dict):
        return False
    if result.get('changed'):
        return True
    return any(_changed(item) for item in result.get('results') or [])


def role_result(plan, tasks):
    if not isinstance(plan, dict) or 'role' not in plan:
        raise AnsibleFilterError('role_result: expects the plan of a gpu_tray.cluster.tray_plan result, got %r'
                                 % (plan,))
    if not isinstance(tasks, list):
        raise AnsibleFilterError('role_result: tasks must be a list of registered results')
    return {'role': plan['role'], 'changed': any(_changed(task) for task in tasks),
            'reboot_required': bool(plan.get('reboot_required')), 'reason': plan.get('reason') or '',
            'verify': plan.get('verify') or {}}


class FilterModule(object):

    def filters(self):
        return {'role_result': role_result}
