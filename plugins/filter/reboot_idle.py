# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.reboot_idle: is a tray idle or busy (plugin_utils/reboot_plan.py tray_state)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: reboot_idle
version_added: 0.1.0
short_description: Whether a tray carries work - idle or busy - from its Node and the pods on it
description:
  - Idle - the tray is not a node of the cluster (O(node) null), or its node runs no pod but DaemonSet-owned and
    static (mirror) pods and finished ones (what a drain leaves alone) and was not cordoned before the run.
  - Busy - its node runs any other pod, was cordoned by someone before the run, or its pods could not be read.
positional: _input, node
options:
  _input:
    description: The registered C(kubernetes.core.k8s_info) read of the pods on the tray's node (field selector
      C(spec.nodeName=<node>), the read C(kubernetes.core.k8s_drain) makes); null when not read.
    type: dict
  node:
    description: The tray's Node object as the API returns it; null when the cluster has no node of that name.
    type: dict
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Idle or busy
  ansible.builtin.set_fact:
    state: "{{ pods_read | gpu_tray.cluster.reboot_idle(node_object) }}"
'''

RETURN = r'''
_value:
  description: C(node) (a node of the cluster), C(idle), C(why) (in words), C(workloads) (namespace/name of the pods
    that make it busy), C(cordoned) (before the run).
  type: dict
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def reboot_idle(pods, node=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_plan as planner
    return planner.tray_state(node if isinstance(node, dict) else None, pods)


class FilterModule(object):

    def filters(self):
        return {'reboot_idle': reboot_idle}
