# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.reboot_waves: the rolling strategy's waves (plugin_utils/reboot_plan.py plan_waves).

The rolling reboot plans with the filter gpu_tray.cluster.reboot_plan, which uses the same function; this filter
stays for playbooks that want the rolling waves of their own hosts.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: reboot_waves
short_description: Split the trays that need a reboot into topology-aware waves
version_added: 0.1.0
description:
  - Returns the waves of a rolling reboot, each a list of hosts that reboot together; wave N+1 starts only when
    every tray of wave N is back and verified.
  - Without O(group_of) every wave holds at most O(batch) trays.
  - With O(group_of) (for example each tray's rack or NVLink domain) each group contributes at most one batch per
    wave, and different groups reboot in the same wave. 8 racks of 18 trays with O(batch=1) take 18 waves, not 144.
  - Hosts keep the order of O(_input) (the inventory order) inside a group and inside a wave; groups are ordered by
    their first host.
  - O(batch) as a percentage is taken of the group's size in O(_input) (of every host in O(_input) without
    O(group_of)), rounded down and at least 1, like Ansible's C(serial).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: pending, batch, group_of
options:
  _input:
    description: Every host of the play, in inventory order (C(ansible_play_batch)).
    type: list
    elements: str
    required: true
  pending:
    description: The hosts that need a reboot (a subset of O(_input)). Only these appear in the waves.
    type: list
    elements: str
    required: true
  batch:
    description:
      - How many trays of one group reboot at the same time. A positive integer (C(2), C('2')) or a percentage of
        the group (C('25%')).
    type: raw
    default: 1
  group_of:
    description:
      - Maps each host to its group (rack, NVLink domain). Empty or omitted means one group of all hosts.
      - Every pending host must have a group (a tray without one could share a rack with any other).
    type: dict
    default: {}
  group_by_name:
    description: The variable the groups come from, used in error messages.
    type: str
    default: group
'''

EXAMPLES = r'''
- name: One tray at a time
  ansible.builtin.debug:
    msg: "{{ ['t1', 't2', 't3'] | gpu_tray.cluster.reboot_waves(['t1', 't3']) }}"
  # [['t1'], ['t3']]

- name: One tray per rack at a time, racks in parallel
  ansible.builtin.debug:
    msg: >-
      {{ ansible_play_batch | gpu_tray.cluster.reboot_waves(
           pending=ansible_play_batch,
           batch=1,
           group_of=dict(ansible_play_batch | zip(ansible_play_batch | map('extract', hostvars, 'rack'))),
           group_by_name='rack') }}
  # racks r1 = [t1, t2], r2 = [t3, t4]  ->  [['t1', 't3'], ['t2', 't4']]
'''

RETURN = r'''
_value:
  description: The waves in reboot order; each is a non-empty list of hosts. Empty when nothing is pending.
  type: list
  elements: list
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def reboot_waves(hosts, pending, batch=1, group_of=None, group_by_name='group'):
    from ansible.module_utils.common.text.converters import to_text
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_plan as planner
    try:
        return planner.plan_waves([to_text(h) for h in hosts], [to_text(h) for h in pending], batch,
                                  dict((to_text(k), v) for k, v in (group_of or {}).items()), group_by_name)
    except ValueError as exc:
        raise AnsibleFilterError('reboot_waves: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'reboot_waves': reboot_waves}
