# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.check_record: one check record (module_utils/check_record.py), for a record a role writes
in YAML (a phase that did not run, a phase that stopped) - the same shape as the judges' and the modules'."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: check_record
version_added: 0.1.0
short_description: A check record, built as the judges and the check modules build theirs
description:
  - The one record of a check in every phase (C(name), C(status), C(message), C(fix), C(details), C(data),
    C(object)), for the records a role writes itself - a check that did not run and why, a phase that stopped at a
    task. A status other than C(passed), C(failed), C(warning) or C(skipped) is an error; C(fix) is kept for a
    failed or warning record only.
positional: _input, status, message
options:
  _input:
    description: The check's name.
    type: str
    required: true
  status:
    description: C(passed), C(failed), C(warning) or C(skipped).
    type: str
    required: true
  message:
    description: One sentence stating the finding (or why the check did not run).
    type: str
    required: true
  fix:
    description: What a person does about it (failed and warning records).
    type: str
  object:
    description: What was checked (a tray, a Kubernetes object).
    type: str
  details:
    description: One text per finding.
    type: list
    elements: str
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: A check that did not run
  ansible.builtin.set_fact:
    checks: "{{ ['gpu-trays' | gpu_tray.cluster.check_record('skipped', 'No GPU trays in inventory group gpu_trays.')] }}"
'''

RETURN = r'''
_value:
  description: C({name, status, message, fix, details, data, object}).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def check_record(name, status, message, fix=None, object=None, details=None):  # pylint: disable=redefined-builtin
    from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record
    try:
        return record(str(name), status, ' '.join(str(message).split()), fix=' '.join(str(fix or '').split()),
                      details=[str(item) for item in details or []], obj=str(object or ''))
    except ValueError as exc:
        raise AnsibleFilterError('check_record: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'check_record': check_record}
