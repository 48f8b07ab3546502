# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.tray_state_covers: does an earlier tray_state read hold what a role needs?

The preparing roles decide from one tray_state read per tray. When the preflight (or another role) of the same run
already read the tray with the role's request, the role reuses that result instead of reading again.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: tray_state_covers
version_added: 0.1.0
short_description: Tell whether a tray_state result holds everything a request asks for
description:
- Compares the C(requested) part of a registered M(gpu_tray.cluster.tray_state) result with a request (the same
  options - C(sysfs_root), C(proc_root), C(files), C(units), C(grub), C(modprobe_dirs), C(modprobe_modules),
  C(sysctls)).
- True when the roots the request names are the ones read, every file, unit, modprobe directory and module and
  sysctl of the request was read and the C(grub) request equals the one read (the simulation depends on its
  arguments). False for anything that is not a successful tray_state result (undefined, skipped, failed, of an older
  collection version without C(requested)).
positional: _input, request
options:
  _input:
    description: A registered M(gpu_tray.cluster.tray_state) result, or anything else (then the answer is false).
    type: raw
    required: true
  request:
    description: The tray_state options the caller needs (omitted keys are not needed).
    type: dict
    required: true
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Read the tray only when the preflight of this run did not read what the role needs
  gpu_tray.cluster.tray_state: "{{ request }}"
  register: own_read
  when: not (gpu_tray_state | default({}) | gpu_tray.cluster.tray_state_covers(request))
'''

RETURN = r'''
_value:
  description: Whether the result covers the request.
  type: bool
'''

from ansible.errors import AnsibleFilterError

# the module's own request options and defaults, so a read and a request are compared as the module reads them
from ansible_collections.gpu_tray.cluster.plugins.module_utils.tray import (
    GRUB_DEFAULTS,
    MODPROBE_MODULES_DEFAULT,
    REQUEST_LISTS as LISTS,
    REQUEST_ROOTS as SCALARS,
)


def _grub(value):
    if not value:
        return None
    out = dict(GRUB_DEFAULTS)
    out.update(dict((k, v) for k, v in value.items() if v is not None))
    out['args'] = list(out['args'])
    return out


def tray_state_covers(state, request):
    if not isinstance(request, dict):
        raise AnsibleFilterError('tray_state_covers: request must be a dict, got %s' % type(request).__name__)
    if not isinstance(state, dict) or state.get('failed') or state.get('skipped'):
        return False
    done = state.get('requested')
    if not isinstance(done, dict):
        return False
    for key in SCALARS:
        if request.get(key) is not None and request[key] != done.get(key):
            return False
    for key in LISTS:
        wanted = request.get(key)
        if wanted is None:
            continue
        if key == 'modprobe_modules' and request.get('modprobe_dirs') is None:
            continue
        have = done.get(key)
        if have is None or not set(wanted) <= set(have):
            return False
    if request.get('modprobe_dirs') is not None and request.get('modprobe_modules') is None:
        if not set(MODPROBE_MODULES_DEFAULT) <= set(done.get('modprobe_modules') or []):
            return False
    wanted = _grub(request.get('grub'))
    if wanted is not None and wanted != _grub(done.get('grub')):
        return False
    return True


class FilterModule(object):

    def filters(self):
        return {'tray_state_covers': tray_state_covers}
