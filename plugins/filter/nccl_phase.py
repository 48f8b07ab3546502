# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the validation's performance phase decides before it takes the NCCL run lock (plugin_utils/nccl_launch.py
phase_plan): the variants' plans, the NET preflight, the runs that cannot start and the ones that can."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: nccl_phase
short_description: The NCCL performance phase before the run lock - plans, NET preflight, what can start
version_added: 0.1.0
description:
  - Plans each NCCL variant asked for (M(gpu_tray.cluster.nccl_result) judges their logs later) against the
    cluster's nodes, with placeholder SSH keys (the key pair is made per run).
  - >-
    With the C(net) variant, the NET preflight over the GPU trays' reads: GPUDirect RDMA over dma-buf to the PCIe
    NICs of a Grace tray needs C(NVreg_GrdmaPciTopoCheckOverride=1) on the R580 driver (the NVKE GB200 guide; AICR's
    GB200 C(-net) preflight) - each tray's C(/proc/driver/nvidia/params) must show C(GrdmaPciTopoCheckOverride: 1);
    a driver after R580 no longer has the parameter and passes. One check, C(nccl-net-preflight): failed when a tray
    fails or was not read, a warning when there is no tray, a line per tray in C(details).
  - A variant that cannot start is a record of its own - skipped when the NET preflight failed, failed when the
    cluster has too few eligible nodes (named in C(object), with the fix).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: _input, variants, nodes, trays, states, proc_roots
options:
  _input:
    description: The run's spec (C(run_id), C(workload), C(image), C(trays), C(gpus_per_tray), C(timeout), the
      byte range, C(rails), C(node_selector)) without C(variant) and keys.
    type: dict
    required: true
  variants:
    description: The variants asked for, in order (V(nvls), V(net)).
    type: list
    elements: str
    required: true
  nodes:
    description: The cluster's Node objects (C(kubernetes.core.k8s_info) resources).
    type: list
    elements: dict
    required: true
  trays:
    description: The GPU trays (inventory hostnames), for the NET preflight.
    type: list
    elements: str
    default: []
  states:
    description: Each tray's registered M(gpu_tray.cluster.tray_state) result (none when not read), in the order of O(trays).
    type: list
    elements: raw
    default: []
  proc_roots:
    description: Each tray's proc root, in the order of O(trays).
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: The performance phase's plan
  ansible.builtin.set_fact:
    phase: >-
      {{ spec | gpu_tray.cluster.nccl_phase(['nvls', 'net'], nodes.resources, ['tray01'],
                                            [hostvars['tray01'].tray_read], ['/proc']) }}
'''

RETURN = r'''
_value:
  description: C(plans) (per variant), C(preflight) (the NET preflight check or none), C(checks) (the preflight and
    the variants that cannot start), C(to_run) (the variants that can), C(lock_name) (the run lock's Lease).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def nccl_phase(spec, variants, nodes, trays=None, states=None, proc_roots=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.nccl_launch import PlanError, phase_plan
    if not isinstance(spec, dict):
        raise AnsibleFilterError('nccl_phase: the input must be the run spec (a dict), got %s' % type(spec).__name__)
    trays = list(trays or [])
    states, proc_roots = list(states or []), list(proc_roots or [])
    if len(states) != len(trays) or len(proc_roots) != len(trays):
        raise AnsibleFilterError('nccl_phase: states and proc_roots must have one entry per tray (%d trays, %d states, '
                                 '%d proc roots)' % (len(trays), len(states), len(proc_roots)))
    reads = dict((tray, {'state': state, 'proc_root': root or '/proc'})
                 for tray, state, root in zip(trays, states, proc_roots))
    try:
        return phase_plan(spec, list(variants or []), nodes or [], reads)
    except (PlanError, KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError('nccl_phase: %s' % exc)


class FilterModule(object):

    def filters(self):
        return {'nccl_phase': nccl_phase}
