# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan the waves of a rolling reboot on the controller (pure functions; unit-tested).

Ansible's own knobs do not express "at most one batch per rack at a time, racks in parallel": ``serial`` and
``throttle`` limit the whole play, so 8 racks x 18 trays would take 144 reboot slots instead of 18. The role
therefore computes the waves here and reboots them one after another in a single play.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: reboot_waves
short_description: Split the trays that need a reboot into topology-aware waves
version_added: 0.1.0
description:
  - Returns the waves of a rolling reboot, each a list of hosts that reboot together; wave N+1 starts only when
    every tray of wave N is back and verified.
  - Without O(group_of) every wave holds at most O(batch) trays.
  - With O(group_of) (for example each tray's rack or NVLink domain) each group contributes at most one batch per
    wave, and different groups reboot in the same wave. 8 racks of 18 trays with O(batch=1) take 18 waves, not 144.
  - Hosts keep the order of O(_input) (the inventory order) inside a group and inside a wave; groups are ordered by
    their first host.
  - O(batch) as a percentage is taken of the group's size in O(_input) (of every host in O(_input) without
    O(group_of)), rounded down and at least 1, like Ansible's C(serial).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: pending, batch, group_of
options:
  _input:
    description: Every host of the play, in inventory order (C(ansible_play_batch)).
    type: list
    elements: str
    required: true
  pending:
    description: The hosts that need a reboot (a subset of O(_input)). Only these appear in the waves.
    type: list
    elements: str
    required: true
  batch:
    description:
      - How many trays of one group reboot at the same time. A positive integer (C(2), C('2')) or a percentage of
        the group (C('25%')).
    type: raw
    default: 1
  group_of:
    description:
      - Maps each host to its group (rack, NVLink domain). Empty or omitted means one group of all hosts.
      - Every pending host must have a group (a tray without one could share a rack with any other).
    type: dict
    default: {}
  group_by_name:
    description: The variable the groups come from, used in error messages.
    type: str
    default: group
'''

EXAMPLES = r'''
- name: One tray at a time
  ansible.builtin.debug:
    msg: "{{ ['t1', 't2', 't3'] | gpu_tray.cluster.reboot_waves(['t1', 't3']) }}"
  # [['t1'], ['t3']]

- name: One tray per rack at a time, racks in parallel
  ansible.builtin.debug:
    msg: >-
      {{ ansible_play_batch | gpu_tray.cluster.reboot_waves(
           pending=ansible_play_batch,
           batch=1,
           group_of=dict(ansible_play_batch | zip(ansible_play_batch | map('extract', hostvars, 'rack'))),
           group_by_name='rack') }}
  # racks r1 = [t1, t2], r2 = [t3, t4]  ->  [['t1', 't3'], ['t2', 't4']]
'''

RETURN = r'''
_value:
  description: The waves in reboot order; each is a non-empty list of hosts. Empty when nothing is pending.
  type: list
  elements: list
'''

import math

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text


def parse_batch(batch):
    """Return (count, percent): exactly one is not None. Raises ValueError naming what is wrong."""
    if isinstance(batch, bool):
        raise ValueError('expected a positive integer or a percentage such as "25%%", got %r' % (batch,))
    if isinstance(batch, int):
        if batch < 1:
            raise ValueError('expected a positive integer or a percentage such as "25%%", got %d' % batch)
        return batch, None
    if isinstance(batch, str):
        text = batch.strip()
        try:
            if text.endswith('%'):
                percent = float(text[:-1])
                if not 0 < percent <= 100:
                    raise ValueError('out of range')
                return None, percent
            count = int(text)
        except ValueError:
            count = 0
        if count >= 1:
            return count, None
    raise ValueError('expected a positive integer or a percentage such as "25%%" (above 0, at most 100%%), got %r'
                     % (batch,))


def batch_size(batch, group_size):
    """Trays of a group of group_size that may reboot together (at least 1)."""
    count, percent = parse_batch(batch)
    if count is not None:
        return count
    return max(1, int(math.floor(group_size * percent / 100.0 + 1e-9)))


def plan_waves(hosts, pending, batch=1, group_of=None, group_by_name='group'):
    """The waves (lists of hosts) of a rolling reboot; see DOCUMENTATION."""
    hosts = [to_text(h) for h in hosts]
    pending_set = set(to_text(h) for h in pending)
    unknown = sorted(pending_set - set(hosts))
    if unknown:
        raise ValueError('hosts to reboot that are not in the play: %s' % ', '.join(unknown))
    parse_batch(batch)
    group_of = dict((to_text(k), v) for k, v in (group_of or {}).items())
    use_groups = bool(group_of)
    if use_groups:
        missing = [h for h in hosts if h in pending_set and (h not in group_of or group_of[h] in (None, ''))]
        if missing:
            raise ValueError('%s is not set for %s: without it the tray could share a %s with any other, so its '
                             'reboot cannot be placed safely; set it in the inventory or do not group by it'
                             % (group_by_name, ', '.join(missing), group_by_name))
    members = {}     # group key -> every host of the group in the play (percentages are of the group)
    order = []
    for host in hosts:
        key = group_of.get(host) if use_groups else None
        try:
            hash(key)
        except TypeError:
            raise ValueError('%s of %s is %r; expected a name or a number' % (group_by_name, host, key))
        if key not in members:
            members[key] = []
            order.append(key)
        members[key].append(host)
    chunks = []      # per group: its pending hosts cut into batches
    for key in order:
        todo = [h for h in members[key] if h in pending_set]
        if not todo:
            continue
        size = batch_size(batch, len(members[key]))
        chunks.append([todo[i:i + size] for i in range(0, len(todo), size)])
    position = dict((h, i) for i, h in enumerate(hosts))
    waves = []
    for index in range(max([len(c) for c in chunks] or [0])):
        wave = [h for c in chunks if index < len(c) for h in c[index]]
        waves.append(sorted(wave, key=position.get))
    return waves


def reboot_waves(hosts, pending, batch=1, group_of=None, group_by_name='group'):
    try:
        return plan_waves(hosts, pending, batch, group_of, group_by_name)
    except ValueError as exc:
        raise AnsibleFilterError('reboot_waves: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'reboot_waves': reboot_waves}
