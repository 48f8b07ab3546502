# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.bmc_access: whether a tray's BMC can be used before its reboot (plugin_utils/bmc.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: bmc_access
version_added: 0.1.0
short_description: Judge a tray's BMC from a redfish_info answer before the tray reboots
description:
  - Takes the registered result of C(community.general.redfish_info) (category C(Systems), command
    C(GetSystemInventory)) and tells whether the BMC answered with the inventory's credentials, which of its
    ComputerSystems is the tray (by the tray's SMBIOS serial, or C(system_id) in O(settings)), and whether that system is
    powered on and not C(Critical).
  - A single system whose serial is not the tray's is refused - the address is probably another tray's BMC.
  - The rolling reboot runs it before its first wave on every tray that will reboot; the preflight makes the same
    decision in its C(bmc) check.
positional: _input, settings, serial
options:
  _input:
    description: The registered C(community.general.redfish_info) result (a failed one included).
    type: dict
    required: true
  settings:
    description:
      - C(address), C(username), C(password) (or just whether it is set, a boolean), C(system_id) of the tray's BMC.
    type: dict
    required: true
  serial:
    description: The tray's SMBIOS serial (C(ansible_facts.gpu_tray.dmi.product_serial)); null when unknown.
    type: str
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Judge the BMC
  ansible.builtin.set_fact:
    bmc: "{{ registered_redfish_info | gpu_tray.cluster.bmc_access(settings, ansible_facts.gpu_tray.dmi.product_serial) }}"
'''

RETURN = r'''
_value:
  description:
    - C(ok), C(kind) (V(ok), V(settings), V(unreachable), V(auth), V(tls), V(error), V(no_system), V(power),
      V(health)), C(msg) (one sentence), C(fix), C(address), C(system_id), C(serial), C(power_state), C(health),
      C(boot_progress).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def bmc_access(result, settings, serial=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bmc
    if result is not None and not isinstance(result, dict):
        raise AnsibleFilterError('bmc_access: expects a registered redfish_info result, got %r' % (result,))
    if not isinstance(settings, dict):
        raise AnsibleFilterError('bmc_access: settings must be a dict (address, username, password, system_id)')
    return bmc.access(settings, result, serial)


class FilterModule(object):

    def filters(self):
        return {'bmc_access': bmc_access}
