# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.reboot_plan: the rolling reboot's plan of the remaining run (plugin_utils/reboot_plan.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: reboot_plan
version_added: 0.1.0
short_description: The waves of a rolling reboot - rolling, canary, or canary for idle trays and rolling for busy ones
description:
  - Plans what is left of a rolling reboot from what the role read and what is done, and is called again before
    every wave (a tray found busy just before its wave leaves an idle wave; a failed tray stops the run).
  - C(rolling) - at most C(batch) trays of a group at a time, groups in parallel. C(canary) - the canary trays first
    (C(canaries) of them, one per group in turn, or one of every group with C(per_group)), then every other tray
    together. C(auto) - canary for the idle trays, rolling for the busy ones, in the same run; the busy trays' first
    batch goes down with the idle ones, after the canary.
  - A tray is idle when it is not a node of the cluster, or its node runs no pod but DaemonSet-owned and static
    (mirror) pods and was not cordoned before the run (filter P(gpu_tray.cluster.reboot_idle#filter)); with no cluster
    configured every tray is idle, with C(drain=never) every tray counts as busy. A cluster that any one source
    configures (C(cluster.sources)) but that was not read is refused (C(refuse)) - it never makes a tray idle.
positional: _input
options:
  _input:
    description:
      - C(hosts), C(trays) (per tray C(reasons), C(group), C(node), C(state), C(status), C(row)), C(strategy),
        C(canaries), C(batch), C(group_by), C(drain), C(via), C(via_insisted), C(cluster) (C(read), C(why), C(sources), C(error)),
        C(check_mode), C(waves_done), C(only), C(now) - see C(plugins/plugin_utils/reboot_plan.py) C(plan).
    type: dict
    required: true
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Plan the rolling reboot (once, on the controller)
  ansible.builtin.set_fact:
    plan: "{{ inputs | gpu_tray.cluster.reboot_plan }}"
  run_once: true
'''

RETURN = r'''
_value:
  description:
    - C(refuse) (a sentence - nothing may be rebooted), C(stop) (C(msg), C(failed), C(canary) - a tray of this run
      failed), C(strategy), C(idle), C(busy), C(pending), C(canaries), C(waves) (C(trays), C(canary), C(together),
      C(rolling), C(label)), C(periods), C(trays) (per tray C(idle), C(why), C(role), C(wave), C(via), C(drain),
      C(pending)), C(lines) (the plan line and one per wave), C(summary), C(next) (the wave to run now), C(progress)
      (its start line with an estimate), C(last) (the line of the wave that just ended).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def reboot_plan(inputs):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_plan as planner
    if not isinstance(inputs, dict):
        raise AnsibleFilterError('reboot_plan: expects a dict of inputs, got %r' % (inputs,))
    try:
        return planner.plan(inputs)
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError('reboot_plan: %s' % exc)


class FilterModule(object):

    def filters(self):
        return {'reboot_plan': reboot_plan}
