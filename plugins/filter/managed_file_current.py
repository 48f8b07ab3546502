# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.managed_file_current: would writing a role's file change it?

The preparing roles read their files once (tray_state ``files``) and run a write task only when this filter says
the file is not what the task would leave; a skipped task costs no round trip to the tray.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: managed_file_current
version_added: 0.1.0
short_description: Tell whether a file already is what a blockinfile or copy task would leave
description:
- Takes one entry of the C(files) part of a M(gpu_tray.cluster.tray_state) result.
- With O(block) and O(marker) - the arguments of an M(ansible.builtin.blockinfile) task - true when the file has the
  begin and end marker lines and exactly the block's lines between them.
- With O(content) - as M(ansible.builtin.copy) would write it - true when the file's content is exactly that.
- In both cases the file must also have O(mode), O(owner_uid) and O(group_gid). An entry that could not be read
  (C(error), or a content too big to be returned) is never current, so the write task runs and decides itself.
positional: _input
options:
  _input:
    description: One C(files[path]) entry of a M(gpu_tray.cluster.tray_state) result.
    type: dict
    required: true
  block:
    description: The block of the blockinfile task (without the marker lines).
    type: str
  marker:
    description: The blockinfile marker template, with C({mark}).
    type: str
    default: "# {mark} ANSIBLE MANAGED BLOCK"
  marker_begin:
    description: What replaces C({mark}) in the first marker line.
    type: str
    default: BEGIN
  marker_end:
    description: What replaces C({mark}) in the last marker line.
    type: str
    default: END
  content:
    description: The whole content of the copy task (exclusive with O(block)).
    type: str
  mode:
    description: The octal mode the task sets.
    type: str
    default: "0644"
  owner_uid:
    description: The owner the task sets, as a uid.
    type: int
    default: 0
  group_gid:
    description: The group the task sets, as a gid.
    type: int
    default: 0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Write the drop-in only when it is not already there
  ansible.builtin.blockinfile:
    path: /etc/default/grub.d/99-example.cfg
    create: true
    mode: "0644"
    marker: "# {mark} example"
    block: GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} earlycon"
  when: >-
    not (state.files['/etc/default/grub.d/99-example.cfg'] | gpu_tray.cluster.managed_file_current(
         block='GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} earlycon"', marker='# {mark} example'))
'''

RETURN = r'''
_value:
  description: True when the task would change nothing.
  type: bool
'''

from ansible.errors import AnsibleFilterError


def block_current(content, block, marker, marker_begin='BEGIN', marker_end='END'):
    """blockinfile's view: the lines between the marker lines are exactly the block's lines."""
    lines = content.splitlines()
    begin = marker.replace('{mark}', marker_begin)
    end = marker.replace('{mark}', marker_end)
    if lines.count(begin) != 1 or lines.count(end) != 1:
        return False
    first, last = lines.index(begin), lines.index(end)
    return first < last and lines[first + 1:last] == (block or '').splitlines() and content.endswith('\n')


def managed_file_current(entry, block=None, marker='# {mark} ANSIBLE MANAGED BLOCK', marker_begin='BEGIN',
                         marker_end='END', content=None, mode='0644', owner_uid=0, group_gid=0):
    if (block is None) == (content is None):
        raise AnsibleFilterError('managed_file_current: give exactly one of block and content')
    if not isinstance(entry, dict):
        return False
    if entry.get('error') or not entry.get('exists') or not entry.get('is_file') or entry.get('content') is None:
        return False
    wanted = (str(mode), int(owner_uid), int(group_gid))
    if (str(entry.get('mode')), entry.get('uid'), entry.get('gid')) != wanted:
        return False
    if content is not None:
        return entry['content'] == content
    return block_current(entry['content'], block, marker, marker_begin, marker_end)


class FilterModule(object):

    def filters(self):
        return {'managed_file_current': managed_file_current}
