# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.managed_file_restore: how to take a role's block out of a file, and only that."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: managed_file_restore
version_added: 0.1.0
short_description: Tell how to remove what a role wrote into a file - the whole file, only its block, or nothing
description:
  - >-
    Takes one entry of the C(files) part of a M(gpu_tray.cluster.tray_state) result and the marker of the
    M(ansible.builtin.blockinfile) task that wrote the role's block, and returns C(action) - C(none) when the file is
    absent or holds no block of the role (not the role's: never touched), C(remove_file) when nothing but the block
    and blank lines is in it (the role created it), C(remove_block) when other lines are in it (someone else's lines
    stay), C(unreadable) when the entry could not be read - and C(block), the lines between the markers.
  - The restore entry points of the preparing roles run a write task only when C(action) is not C(none).
positional: marker
options:
  _input:
    description: One C(files[path]) entry of a M(gpu_tray.cluster.tray_state) result.
    type: dict
    required: true
  marker:
    description: The blockinfile marker template, with C({mark}).
    type: str
    required: true
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Remove the role's file
  ansible.builtin.file:
    path: /etc/modprobe.d/example.conf
    state: absent
  when: (state.files['/etc/modprobe.d/example.conf'] | gpu_tray.cluster.managed_file_restore('# {mark} example')).action
        == 'remove_file'
'''

RETURN = r'''
_value:
  description: C({action, block}) - C(block) the lines of the role's block (empty without one).
  type: dict
'''

from ansible.errors import AnsibleFilterError


def managed_file_restore(entry, marker):
    if not isinstance(marker, str) or '{mark}' not in marker:
        raise AnsibleFilterError('managed_file_restore: marker must contain {mark}, got %r' % (marker,))
    if not isinstance(entry, dict) or entry.get('error'):
        return {'action': 'unreadable', 'block': []}
    if not entry.get('exists'):
        return {'action': 'none', 'block': []}
    if not entry.get('is_file') or entry.get('content') is None:
        return {'action': 'unreadable', 'block': []}
    lines = entry['content'].splitlines()
    begin, end = marker.replace('{mark}', 'BEGIN'), marker.replace('{mark}', 'END')
    if begin not in lines or end not in lines or lines.index(begin) > lines.index(end):
        return {'action': 'none', 'block': []}
    first, last = lines.index(begin), lines.index(end)
    others = [line for line in lines[:first] + lines[last + 1:] if line.strip()]
    return {'action': 'remove_block' if others else 'remove_file', 'block': lines[first + 1:last]}


class FilterModule(object):

    def filters(self):
        return {'managed_file_restore': managed_file_restore}
