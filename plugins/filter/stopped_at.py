# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.stopped_at: where a run stopped - the failed task and its result, normalised once for
every role's rescue (validate, the stack's deploy, teardown and recovery, the rolling reboot)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: stopped_at
version_added: 0.1.0
short_description: Where a run stopped, from a rescue's failed task and result
description:
  - The one shape of a stop in every report and job artifact - C({task, message}) - from a rescue's
    C(ansible_failed_result) and C(ansible_failed_task.name).
  - The message is the result's C(msg) (C(no message) when it has none) followed by the messages of a loop's failed
    items (a loop's own C(msg) says only that items failed), without the C(Task failed) / C(Module failed) words
    ansible-core puts in front, on one line, at most O(limit) characters.
positional: _input, task
options:
  _input:
    description: The failed result (C(ansible_failed_result)); none when there is none.
    type: raw
    required: true
  task:
    description: The failed task's name (C(ansible_failed_task.name)); C(?) when unknown.
    type: str
  limit:
    description: The longest message kept.
    type: int
    default: 2000
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Record where the run stopped
  ansible.builtin.set_fact:
    stopped: "{{ ansible_failed_result | gpu_tray.cluster.stopped_at(ansible_failed_task.name | default('?')) }}"
'''

RETURN = r'''
_value:
  description: C({task, message}).
  type: dict
'''

import re

_PREFIX = re.compile(r'^(?:Task failed: )?(?:Action failed: )?(?:Module failed: )?')


def stopped_at(result, task=None, limit=2000):
    result = result if isinstance(result, dict) else {}
    parts = [str(result.get('msg') or 'no message')]
    for item in result.get('results') or []:
        if isinstance(item, dict) and item.get('failed') and item.get('msg'):
            parts.append(str(item['msg']))
    message = ' '.join(': '.join(_PREFIX.sub('', part) for part in parts).split())
    if len(message) > int(limit):
        message = message[:int(limit) - 3].rstrip() + '...'
    return {'task': str(task or '?'), 'message': message}


class FilterModule(object):
    def filters(self):
        return {'stopped_at': stopped_at}
