# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL run lock (pure function in plugin_utils/nccl_launch.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: nccl_lease
short_description: Whether this NCCL run may take the run lock (a coordination.k8s.io Lease), and the Lease to write
version_added: 0.1.0
description:
  - Two benchmark runs on the same trays would measure each other, so runs hold one Lease with the run's
    identity and an expiry (C(renewTime) + C(leaseDurationSeconds)).
  - C(state) - C(free) (no Lease, or no holder), C(ours) (this holder), C(expired) (another holder whose time
    passed - a run that died without releasing it; taken over) or C(held) (another run holds it now).
  - C(body) is the Lease to write (none when C(held)); when it replaces a Lease it carries the read
    C(resourceVersion), so a concurrent taker makes the write fail with a conflict instead of sharing the lock.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: holder, duration, now, namespace, name
options:
  _input:
    description: The Lease as read (M(kubernetes.core.k8s_info) C(resources[0])), or none when there is none.
    type: raw
    required: true
  holder:
    description: This run's identity (C(<run id>@<controller>)).
    type: str
    required: true
  duration:
    description: Seconds the lock is held without renewal (the runs' timeouts plus clean-up).
    type: int
    required: true
  now:
    description: The current time, seconds since the epoch.
    type: float
    required: true
  namespace:
    description: The Lease's namespace.
    type: str
    required: true
  name:
    description: The Lease's name.
    type: str
    default: gpu-tray-nccl-run-lock
  variants:
    description: The NCCL variants this run would start; given, the result carries C(held) - a failed check per variant
      when another run holds the lock (empty otherwise).
    type: list
    elements: str
'''

EXAMPLES = r'''
- name: Decide
  ansible.builtin.set_fact:
    lock: "{{ lease.resources[0] | default(none) | gpu_tray.cluster.nccl_lease('r1@ctl', 3900, now().timestamp(), 'default') }}"
'''

RETURN = r'''
_value:
  description: C({state, holder, expires, message, body}), and C(held) when O(variants) is given.
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def nccl_lease(lease, holder, duration, now, namespace, name=None, variants=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.nccl_launch import (
        LOCK_NAME, PlanError, held_checks, lease_decision)
    if lease is not None and not isinstance(lease, dict):
        raise AnsibleFilterError('nccl_lease: the input must be the Lease (a dict) or none, got %s' % type(lease).__name__)
    name = LOCK_NAME if name is None else name
    try:
        decision = lease_decision(lease or None, holder, int(duration), float(now), namespace, name)
    except (PlanError, TypeError, ValueError) as exc:
        raise AnsibleFilterError('nccl_lease: %s' % exc)
    if variants is not None:
        # the record of each variant this run cannot start while another run holds the lock
        decision['held'] = held_checks(list(variants), decision, namespace, name) if decision['state'] == 'held' else []
    return decision


class FilterModule(object):
    def filters(self):
        return {'nccl_lease': nccl_lease}
