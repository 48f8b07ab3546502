# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: foreign_reboot_controllers
short_description: NodeWright / Skyhook objects that would reboot or restart the trays of a run
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Of the given NodeWright or Skyhook objects, those with a package whose C(interrupt) or C(configInterrupts) is of
    type C(reboot), C(service) or C(restartAllServices) and whose C(spec.nodeSelectors) label selector matches the
    node of at least one tray of the run (an absent selector matches every node).
  - The rolling reboot refuses to run beside them (a second controller rebooting the same nodes, the RKE2 VR200
    guide's aicr#2572) unless C(rolling_reboot_foreign_controllers) is C(allow).
positional: nodes, trays
options:
  _input:
    description: NodeWright / Skyhook objects as the API returns them.
    type: list
    elements: dict
    required: true
  nodes:
    description: Node name to its labels.
    type: dict
    required: true
  trays:
    description: Node names of the trays of the run.
    type: list
    elements: str
    required: true
'''

EXAMPLES = r'''
- name: Objects that would reboot our trays
  ansible.builtin.debug:
    msg: "{{ skyhooks.resources | gpu_tray.cluster.foreign_reboot_controllers({'tray01': {'nvidia.com/gpu.present': 'true'}}, ['tray01']) }}"
'''

RETURN = r'''
  _value:
    description: One C({kind, name, interrupts, trays}) per object, sorted by kind and name.
    type: list
    elements: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def foreign_reboot_controllers(objects, nodes, trays):
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import reboot_controllers
    try:
        return reboot_controllers.foreign_reboot_controllers(objects, nodes, trays)
    except reboot_controllers.SelectorError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'foreign_reboot_controllers': foreign_reboot_controllers}
