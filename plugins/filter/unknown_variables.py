# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inventory variables with the collection's prefix that the collection does not know (a misspelt name)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: unknown_variables
short_description: The inventory variables with a prefix that nothing reads, each with the closest known name
version_added: 0.1.0
description:
  - >-
    From the variable names of a host (C(hostvars[inventory_hostname].keys())), those starting with O(prefix) that
    are neither in O(known) nor in O(allowed), in sorted order, each as C({name, suggestion}) - C(suggestion) the
    closest known name, compared without the prefix (Python's C(difflib.get_close_matches), cutoff 0.7), or none.
  - >-
    A misspelt inventory variable is otherwise ignored without a word - a plural of C(gpu_tray_pkey) leaves the preflight
    checking the default partition - so the preflight role refuses them before any tray is read.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: known, allowed, prefix
options:
  _input:
    description: The variable names of the host.
    type: list
    elements: str
    required: true
  known:
    description: The names the collection reads.
    type: list
    elements: str
    required: true
  allowed:
    description: Names the site uses with the same prefix (C(gpu_tray_site_variables)).
    type: list
    elements: str
    default: []
  prefix:
    description: The prefix of the collection's inventory variables.
    type: str
    default: gpu_tray_
'''

EXAMPLES = r'''
- name: Refuse misspelt inventory variables
  ansible.builtin.fail:
    msg: "{{ __unknown | map(attribute='name') | join(', ') }} is not a variable of gpu_tray.cluster"
  vars:
    __unknown: "{{ hostvars[inventory_hostname].keys() | list | gpu_tray.cluster.unknown_variables(known) }}"
  when: __unknown | length > 0
'''

RETURN = r'''
_value:
  description: C({name, suggestion}) per unknown name; C(suggestion) is null when no known name is close.
  type: list
  elements: dict
'''

import difflib

from ansible.errors import AnsibleFilterError


def unknown_variables(names, known, allowed=None, prefix='gpu_tray_'):
    if not isinstance(names, (list, tuple)) or not isinstance(known, (list, tuple)):
        raise AnsibleFilterError('unknown_variables: the input and known must be lists of names')
    known = sorted(set(str(name) for name in known))
    skip = set(known) | set(str(name) for name in (allowed or []))
    out = []
    for name in sorted(set(str(name) for name in names)):
        if not name.startswith(prefix) or name in skip:
            continue
        # compared without the shared prefix, which would make every name look alike
        close = difflib.get_close_matches(name[len(prefix):], [item[len(prefix):] for item in known
                                                               if item.startswith(prefix)], n=1, cutoff=0.7)
        out.append({'name': name, 'suggestion': prefix + close[0] if close else None})
    return out


class FilterModule(object):
    def filters(self):
        return {'unknown_variables': unknown_variables}
