# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: sriov_rails
short_description: Per-rail PF addresses and VF count for SriovNetworkNodePolicies
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - From the C(gpu_tray_rdma) facts of every tray (M(gpu_tray.cluster.rdma_facts)), the PCI address of each rail
    PF on each tray, for C(nicSelector.rootDevices).
  - Fails when a tray lacks a rail, and when I(num_vfs) is above the smallest C(sriov_totalvfs) (the firmware
    NUM_OF_VFS) a tray reports for the rail - with the SR-IOV config daemon mellanox plugin disabled, more VFs
    than the firmware allows cannot be created.
positional: rails, num_vfs
options:
  _input:
    description: Mapping of tray name to its C(gpu_tray_rdma) facts; empty when no tray was reached (then I(root_devices) are empty).
    type: dict
    required: true
  rails:
    description: Rail device names in rail order (C(mlx5_0), C(mlx5_1), C(mlx5_3), C(mlx5_4) on GB200).
    type: list
    elements: str
    required: true
  num_vfs:
    description: VFs to request per rail PF.
    type: int
    default: 16
'''

EXAMPLES = r'''
- name: Rails
  ansible.builtin.debug:
    msg: "{{ {'tray01': hostvars['tray01'].ansible_facts.gpu_tray_rdma} | gpu_tray.cluster.sriov_rails(['mlx5_0', 'mlx5_1'], 16) }}"
'''

RETURN = r'''
  _value:
    description: One C({rail, device, root_devices, num_vfs}) per rail.
    type: list
    elements: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def sriov_rails(facts, rails, num_vfs=16):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    try:
        return stack.sriov_rails(facts, rails, num_vfs)
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'sriov_rails': sriov_rails}
