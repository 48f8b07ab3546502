# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The result of one validation phase and a one-line summary of its failures (plugin_utils/evidence.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: validation_phase_result
short_description: Whether a validation phase failed, and its failed checks in one line for a task message
version_added: 0.1.0
description:
  - >-
    Takes one phase as P(gpu_tray.cluster.validation_evidence#filter) does (C({name, checks})) and returns C(status)
    (failed when a check failed, passed, or skipped when the phase has no checks) and C(findings) - the first
    O(limit) failed checks as C(<check>: <finding>), joined by C(; ), with C(N more) after them.
  - >-
    A finding drops the check's object from the front of a message that starts with it (C(tray02/pkeys: 16
    InfiniBand ports are ...), not C(tray02/pkeys: tray02: 16 ...)).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: limit
options:
  _input:
    description: The phase, C({name, checks}).
    type: dict
    required: true
  limit:
    description: How many failed checks the line names.
    type: int
    default: 3
'''

EXAMPLES = r'''
- name: Fail with the findings
  ansible.builtin.fail:
    msg: "Validation failed: {{ (phase | gpu_tray.cluster.validation_phase_result).findings }}"
  when: (phase | gpu_tray.cluster.validation_phase_result).status == 'failed'
'''

RETURN = r'''
_value:
  description: C({status, findings}).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def validation_phase_result(phase, limit=3):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.evidence import phase_result
    if not isinstance(phase, dict):
        raise AnsibleFilterError('validation_phase_result: the input must be a phase dict, got %s' % type(phase).__name__)
    try:
        return phase_result(phase, int(limit))
    except (ValueError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError('validation_phase_result: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'validation_phase_result': validation_phase_result}
