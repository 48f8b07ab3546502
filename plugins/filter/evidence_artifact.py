# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.evidence_artifact: a phase's summary for the AWX job's artifacts (plugin_utils/artifacts.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: evidence_artifact
version_added: 0.1.0
short_description: The summary of a phase for an AWX job's artifacts (set_stats)
description:
  - Returns the summary a role hands to C(ansible.builtin.set_stats) as C(gpu_tray_evidence.<phase>), which AWX shows
    on the job's page and passes to the workflow's next nodes as extra variables - the result, how many trays
    passed and failed, the failed checks with their tray and fix (at most 50; C(failed_checks_total) counts them
    all, the report files list every one) and where the report files are.
  - C(preflight) - from every tray's C(preflight_report); C(rolling_reboot) - from the rows of
    C(rolling-reboot.json); C(validation) - from the validation's phases (C({name, checks})) and its meta (C(recipe),
    C(recipe_digest)); C(stack) - from a stack run's summary (deploy, teardown or NodeMaintenance recovery, a
    mapping as C(stack-<action>.json) holds it), for C(gpu_tray_evidence.stack_<action>).
positional: _input, kind, directory
options:
  _input:
    description: The preflight reports, the rolling reboot's rows, the validation's phases (lists), or the stack
      run's summary (a mapping).
    type: raw
    required: true
  kind:
    description: Which phase.
    type: str
    choices: [preflight, rolling_reboot, validation, stack]
    required: true
  directory:
    description: Where the phase's report files are (absolute).
    type: str
    required: true
  meta:
    description:
      - With C(validation), C(recipe) and C(recipe_digest).
      - With C(rolling_reboot), C(stopped) (C({task, message}), the task that stopped the run; fails the result).
    type: dict
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: The preflight's summary in the job's artifacts
  ansible.builtin.set_stats:
    data:
      gpu_tray_evidence:
        preflight: >-
          {{ ansible_play_hosts_all | map('extract', hostvars, 'preflight_report') | list
             | gpu_tray.cluster.evidence_artifact('preflight', '/var/lib/gpu-tray-report/awx-job-41') }}
  run_once: true
'''

RETURN = r'''
_value:
  description:
    - C(result) (passed or failed), C(dir) and C(files) (the report files), and per kind the counts and the failed
      entries - C(preflight) C(trays), C(passed), C(failed_trays), C(unreachable), C(failed_checks)
      (C({tray, check, message, fix})), C(failed_checks_total); C(rolling_reboot) C(stopped), C(trays), C(statuses),
      C(failed_trays), C(failed) (C({tray, step, message, fix})), C(failed_total); C(validation) C(recipe),
      C(recipe_digest), C(phases) (name to status), C(counts), C(failed_checks) (C({phase, check, object, message,
      fix})), C(failed_checks_total), C(warnings), C(warnings_total); C(stack) the summary as given.
  type: dict
'''

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

# the collection's own code is imported inside the function (docs/performance.md "Filter plugins and the workers")


def evidence_artifact(items, kind, directory, meta=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import artifacts
    if kind not in artifacts.KINDS:
        raise AnsibleFilterError('evidence_artifact: kind %r is not one of %s' % (kind, ', '.join(sorted(artifacts.KINDS))))
    if not isinstance(items, dict if kind == 'stack' else list):
        raise AnsibleFilterError('evidence_artifact: expects a %s, got %s' % (
            'mapping' if kind == 'stack' else 'list', type(items).__name__))
    try:
        if kind in ('validation', 'rolling_reboot'):
            return artifacts.KINDS[kind](items, str(directory), meta)
        return artifacts.KINDS[kind](items, str(directory))
    except (ValueError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError('evidence_artifact: %s' % to_native(exc))


class FilterModule(object):

    def filters(self):
        return {'evidence_artifact': evidence_artifact}
