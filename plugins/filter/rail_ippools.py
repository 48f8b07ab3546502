# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: rail_ippools
short_description: nv-ipam IPPools, one subnet per InfiniBand rail
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Rail n gets the n-th subnet of size I(prefix) inside I(_input), computed with netaddr (the library the
    ansible.utils ipaddr filters use) - C(10.255.0.0/16) with prefix 22 gives C(10.255.<4n>.0/22), as the NVKE
    GB200 guide requires (outside the 192.168.0.0/16 pod network).
  - Fails when the base is not a network, has host bits set, or is too small for the rails.
positional: rails, prefix, per_node_block_size, name_format
options:
  _input:
    description: Base network in CIDR notation.
    type: str
    required: true
  rails:
    description: The rail list, or the number of rails.
    type: raw
    required: true
  prefix:
    description: Prefix length of each rail's subnet.
    type: int
    default: 22
  per_node_block_size:
    description: nv-ipam C(perNodeBlockSize), addresses handed to each node.
    type: int
    default: 50
  name_format:
    description: Pool name; C({rail}) is replaced by the rail index.
    type: str
    default: sriov-ib-rail-{rail}
'''

EXAMPLES = r'''
- name: Pools
  ansible.builtin.debug:
    msg: "{{ '10.255.0.0/16' | gpu_tray.cluster.rail_ippools(4) | map(attribute='subnet') }}"
    # [10.255.0.0/22, 10.255.4.0/22, 10.255.8.0/22, 10.255.12.0/22]
'''

RETURN = r'''
  _value:
    description: One C({rail, name, subnet, per_node_block_size}) per rail.
    type: list
    elements: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def rail_ippools(base, rails, prefix=22, per_node_block_size=50, name_format='sriov-ib-rail-{rail}'):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    try:
        return stack.rail_ippools(base, rails, prefix, per_node_block_size, name_format)
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'rail_ippools': rail_ippools}
