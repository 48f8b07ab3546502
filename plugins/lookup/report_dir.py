# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where this run's reports go (pure functions in plugin_utils/report_dir.py); the roles' report directories
(preflight_report_dir, rolling_reboot_report_dir, validate_report_dir) default to it."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: report_dir
short_description: The directory this run writes its reports into (a run folder per AWX job or workflow)
version_added: 0.1.0
description:
  - Returns the directory on the controller that this run's reports go to, from the variables of the host it is
    templated for - C(gpu_tray_report_dir) (the base directory; default C(gpu-tray-report), relative to where
    ansible-playbook was started, and C(/var/lib/gpu-tray-report) in an AWX or AAP job, which AWX marks with
    C(awx_job_id)), and the run's id - C(gpu_tray_run_id), else in AWX C(awx-workflow-job-<awx_workflow_job_id>) for
    every job of one workflow, else C(awx-job-<awx_job_id>).
  - A run with an id writes into C(<base>/<run id>); C(gpu_tray.cluster.write_evidence) points C(<base>/latest) at
    it. A run without one writes into the base directory itself.
  - C(newest) returns the run folder under the base directory that holds the file O(containing) and was written
    last (O(prefer) first, when it holds it), or an empty string - how the validation finds the preflight record
    an earlier job left.
options:
  _terms:
    description: What to return - C(dir) (default), C(base), C(run_id), C(latest) (the link, empty without a run
      id) or C(newest).
    type: list
    elements: str
    required: false
  containing:
    description: With C(newest), the file (relative to a run folder) the folder must hold.
    type: str
  prefer:
    description: With C(newest), the run folder returned when it holds O(containing) (this run's own).
    type: str
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
seealso:
  - module: gpu_tray.cluster.write_evidence
'''

EXAMPLES = r'''
- name: Where this run writes its reports
  ansible.builtin.debug:
    msg: "{{ lookup('gpu_tray.cluster.report_dir') }}"

- name: The newest earlier preflight record of tray01
  ansible.builtin.set_fact:
    record: "{{ lookup('gpu_tray.cluster.report_dir', 'newest', containing='tray01/preflight.json') }}"
'''

RETURN = r'''
_raw:
  description: One string - the path asked for (empty where there is none).
  type: list
  elements: str
'''


from ansible.errors import AnsibleLookupError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.lookup import LookupBase

# the variables read (gpu_tray_run_id and gpu_tray_report_dir are set by the user; awx_* by AWX on every job)
INPUTS = ('gpu_tray_report_dir', 'gpu_tray_run_id', 'awx_job_id', 'awx_workflow_job_id')
WHAT = ('dir', 'base', 'run_id', 'latest', 'newest')


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import report_dir
        self.set_options(var_options=variables, direct=kwargs)
        what = (terms or ['dir'])[0]
        if what not in WHAT:
            raise AnsibleLookupError('report_dir: %r is not one of %s' % (what, ', '.join(WHAT)))
        values = {}
        for name in INPUTS:
            value = (variables or {}).get(name)
            values[name] = self._templar.template(value) if value is not None else None
        try:
            where = report_dir.locate(values['gpu_tray_report_dir'], values['gpu_tray_run_id'], values['awx_job_id'],
                                      values['awx_workflow_job_id'])
        except report_dir.ReportDirError as exc:
            raise AnsibleLookupError(to_native(exc))
        if what != 'newest':
            return [where[what]]
        containing = self.get_option('containing')
        if not containing:
            raise AnsibleLookupError('report_dir: newest needs containing=<file in a run folder>')
        return [report_dir.newest(where, containing, prefer=self.get_option('prefer'))]
