# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.bmc_state: what the BMC says about a tray that did not come back (plugin_utils/bmc.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: bmc_state
version_added: 0.1.0
short_description: The BMC's view of a tray that did not come back from its reboot, and whether to power-cycle it
description:
  - From the registered results of C(community.general.redfish_info) (C(GetSystemInventory) and C(GetLogs)) - the
    tray's PowerState, BootProgress (C(LastState)), health and the latest log (SEL) entries, and a one-line
    C(summary) for the failure message; the rolling-reboot report's BMC section.
  - C(recovery) says whether the role power-cycles the tray now - only with O(recover=power_cycle), only once per
    tray and run (O(attempted)), only when the BMC could be read; C(PowerForceRestart) for a tray that is on (hangs
    in POST), C(PowerOn) for one that is off.
positional: _input, settings, logs, serial, count, recover, attempted
options:
  _input:
    description: The registered C(redfish_info) C(GetSystemInventory) result (failed or skipped ones included).
    type: dict
    required: true
  settings:
    description: C(address), C(username), C(password) (or whether it is set), C(system_id) of the tray's BMC.
    type: dict
    required: true
  logs:
    description: The registered C(redfish_info) C(GetLogs) result, or null.
    type: dict
  serial:
    description: The tray's SMBIOS serial; null when unknown.
    type: str
  count:
    description: How many of the latest log entries to keep.
    type: int
    default: 10
  recover:
    description: The role's C(rolling_reboot_bmc_recover).
    type: str
    choices: [none, power_cycle]
    default: none
  attempted:
    description: Whether the tray was already power-cycled in this run.
    type: bool
    default: false
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: What the BMC says about the tray
  ansible.builtin.set_fact:
    bmc_section: "{{ system_info | gpu_tray.cluster.bmc_state(settings, logs_info, serial, 10, 'power_cycle', false) }}"
'''

RETURN = r'''
_value:
  description:
    - C(read), C(error), C(address), C(system_id), C(power_state), C(boot_progress), C(health), C(log) (C(created),
      C(severity), C(message), C(log); oldest first), C(log_error), C(summary), C(recovery) (C(power_cycle),
      C(command), C(why)).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def bmc_state(result, settings, logs=None, serial=None, count=None, recover='none', attempted=False):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bmc
    if result is not None and not isinstance(result, dict):
        raise AnsibleFilterError('bmc_state: expects a registered redfish_info result, got %r' % (result,))
    if not isinstance(settings, dict):
        raise AnsibleFilterError('bmc_state: settings must be a dict (address, username, password, system_id)')
    try:
        count = bmc.DEFAULT_LOG_ENTRIES if count is None else int(count)
        return bmc.state(settings, result, logs, serial=serial, count=count, recover=recover, attempted=bool(attempted))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError('bmc_state: %s' % exc)


class FilterModule(object):

    def filters(self):
        return {'bmc_state': bmc_state}
