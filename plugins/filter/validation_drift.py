# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.validation_drift: what changed since the last passing validation (plugin_utils/drift.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: validation_drift
version_added: 0.2.0
short_description: What changed since the last passing validation, per tray and per component
description:
  - Compares this run's values with the last passing run's (C(last-pass.json), carried from run to run) - per tray
    its kernel, kernel arguments, GPU driver, each PF's VF count and each InfiniBand port's P_Keys (from its
    C(tray_state) read); per component of the recipe its version and the images its namespace runs.
  - Returns the changes, the report's drift section (the same change on many trays folded into one row) and the
    files the evidence directory gets - C(state.json) (this run's values), C(drift.json) (the changes) and
    C(last-pass.json) (this run's values when it passed, else the baseline it found).
options:
  _input:
    description: "The trays' reads, C({tray: tray_state result}) (a tray not read is null and compared with nothing)."
    type: dict
    required: true
  plan:
    description: The stack plan of the recipe (C(components) with C(name), C(namespace), C(version)).
    type: dict
    required: true
  pods:
    description: The pods the cluster runs (C(kubernetes.core.k8s_info) resources); null when they were not read.
    type: list
    elements: dict
  previous:
    description: The last-pass record found (the parsed C(last-pass.json) of an earlier run), or null.
    type: dict
  generated:
    description: This run's time.
    type: str
  result:
    description: This run's result.
    type: str
    choices: [passed, failed]
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: What changed since the last passing run
  ansible.builtin.set_fact:
    drift: "{{ reads | gpu_tray.cluster.validation_drift(plan, pods, previous, '2026-12-06T05:00:00Z', 'passed') }}"
'''

RETURN = r'''
_value:
  description: C(changes) (C({scope, object, what, before, after})), C(report) (C(summary), C(baseline), C(rows)
    - C({scope, what, before, after, objects, where}) - and C(changes)) and C(files) (C({path, json}) for
    M(gpu_tray.cluster.write_evidence)).
  type: dict
'''

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

# the collection's own code is imported inside the function (docs/performance.md "Filter plugins and the workers")


def validation_drift(trays, plan, pods=None, previous=None, generated=None, result='passed'):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import drift
    if not isinstance(trays, dict):
        raise AnsibleFilterError('validation_drift: expects the trays\' reads as a dict, got %s' % type(trays).__name__)
    if not isinstance(plan, dict):
        raise AnsibleFilterError('validation_drift: plan must be the stack plan (a dict), got %s' % type(plan).__name__)
    try:
        return drift.evaluate(trays, plan, pods, previous, generated, result)
    except (ValueError, TypeError, AttributeError, KeyError) as exc:
        raise AnsibleFilterError('validation_drift: %s' % to_native(exc))


class FilterModule(object):

    def filters(self):
        return {'validation_drift': validation_drift}
