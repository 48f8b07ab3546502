# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_forbidden_values
short_description: Find DOCA-OFED and nvidia-peermem settings in chart values
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Lists every C(ofedDriver) key and every C(driver.rdma) key (at any depth) in the values of the given
    components.
  - On NVKE GB200 the host runs the inbox mlx5_core and the primary CNI rides on it - a DOCA-OFED driver container
    unloads mlx5_core and takes the node primary address with it, C(driver.rdma) deploys nvidia-peermem, which
    has no build for the 64k Grace kernel. A values set that carries either must be refused before anything is
    deployed.
options:
  _input:
    description: Mapping of component name to its merged values.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Refuse DOCA-OFED
  ansible.builtin.assert:
    that: values_by_component | gpu_tray.cluster.stack_forbidden_values | length == 0
'''

RETURN = r'''
  _value:
    description: One C({component, path}) per forbidden key, sorted by component.
    type: list
    elements: dict
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_forbidden_values(values_by_component):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    return stack.forbidden_values(values_by_component)


class FilterModule(object):
    def filters(self):
        return {'stack_forbidden_values': stack_forbidden_values}
