# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.reboot_result: a tray's rolling-reboot report row after its wave (plugin_utils/reboot_plan.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: reboot_result
version_added: 0.1.0
short_description: A tray's row of the rolling-reboot report from what its wave registered
description:
  - Rebooted and verified (C(status) rebooted, power-cycled once when it was), or FAILED with the step, the error,
    what to check and how the tray is left; the send and back times (C(down_at), C(up_at), C(reboot_seconds)), the
    BMC section of a tray that did not come back, and whether it stopped answering (C(unreachable)).
positional: _input, outcome
options:
  _input:
    description: The tray's row so far.
    type: dict
    required: true
  outcome:
    description:
      - C(step) (the failed step; null - all went well), C(task), C(error), C(check), C(sent), C(back) (the
        M(gpu_tray.cluster.reboot_tray) results), C(bmc) (P(gpu_tray.cluster.bmc_state#filter)), C(cycled), C(cycle_failed),
        C(cycled_back), C(verified), C(unreachable), C(came_back), C(drained), C(left), C(released) - see
        C(plugins/plugin_utils/reboot_plan.py) C(result).
    type: dict
    required: true
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Record the tray's result
  ansible.builtin.set_fact:
    row: "{{ row | gpu_tray.cluster.reboot_result({'step': none, 'sent': sent, 'back': back, 'verified': 'yes'}) }}"
'''

RETURN = r'''
_value:
  description: The row with C(status), C(rebooted), C(cmdline_verified), C(drain), C(down_at), C(up_at),
    C(reboot_seconds), C(unreachable), and for a failed tray C(failed_step), C(error), C(check), C(message), C(bmc).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def reboot_result(row, outcome):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_plan as planner
    if not isinstance(row, dict) or not isinstance(outcome, dict):
        raise AnsibleFilterError('reboot_result: expects the row and the outcome as dicts')
    return planner.result(row, outcome)


class FilterModule(object):

    def filters(self):
        return {'reboot_result': reboot_result}
