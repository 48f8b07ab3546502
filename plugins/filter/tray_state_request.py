# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.tray_state_request: merge what several roles ask tray_state to read."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: tray_state_request
version_added: 0.1.0
short_description: Merge the tray_state requests of several roles into one
description:
- Returns one set of M(gpu_tray.cluster.tray_state) options that reads everything both requests ask for, so that
  one module call per tray serves every role of a run (playbook C(gpu_tray.cluster.prepare_trays) collects the
  preparing roles' requests and the preflight read answers them all).
- C(sysfs_root) and C(proc_root) - O(other)'s value wins, so a role that reads with the merged request reads
  where it needs to (another role with other roots then reads itself).
- List options (C(files), C(units), C(modprobe_dirs), C(modprobe_modules), C(sysctls)) are joined without duplicates,
  in order. C(grub) can be asked for by one role only; two different C(grub) requests are an error.
positional: _input, other
options:
  _input:
    description: A request (tray_state options); empty or null for none.
    type: dict
    required: true
  other:
    description: Another request.
    type: dict
    required: true
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Add this role's request to the run's
  ansible.builtin.set_fact:
    gpu_tray_state_request: "{{ gpu_tray_state_request | default({}) | gpu_tray.cluster.tray_state_request(my_request) }}"
'''

RETURN = r'''
_value:
  description: The merged request.
  type: dict
'''

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.module_utils.tray import (
    REQUEST_LISTS as LISTS,
    REQUEST_OPTIONS as KNOWN,
    REQUEST_ROOTS as SCALARS,
)


def tray_state_request(first, other):
    out = {}
    for name, request in (('_input', first), ('other', other)):
        if request is None:
            continue
        if not isinstance(request, dict):
            raise AnsibleFilterError('tray_state_request: %s must be a dict, got %s' % (name, type(request).__name__))
        unknown = sorted(set(request) - set(KNOWN))
        if unknown:
            raise AnsibleFilterError('tray_state_request: unknown option %s (known: %s)'
                                     % (', '.join(unknown), ', '.join(KNOWN)))
        for key in SCALARS:
            if request.get(key) is not None:
                out[key] = request[key]
        for key in LISTS:
            if request.get(key) is None:
                continue
            merged = list(out.get(key) or [])
            merged += [item for item in request[key] if item not in merged]
            out[key] = merged
        if request.get('grub'):
            if out.get('grub') and dict(out['grub']) != dict(request['grub']):
                raise AnsibleFilterError('tray_state_request: two different grub requests (%s, %s); only one role '
                                         'may simulate the GRUB chain' % (out['grub'].get('dropin'),
                                                                          request['grub'].get('dropin')))
            out['grub'] = dict(request['grub'])
    return out


class FilterModule(object):

    def filters(self):
        return {'tray_state_request': tray_state_request}
