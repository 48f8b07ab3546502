# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each tray's preflight record, where the validation finds it (plugin_utils/preflight_records.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: preflight_records
short_description: Each tray's preflight record (PF state and checks), from this run or the run folders
version_added: 0.1.0
description:
  - For every tray named, its preflight record - this run's preflight evidence when O(this_run) has it, else
    C(<dir>/<tray>/preflight.json) in the first of O(dirs) that holds one, else in the newest run folder under the
    report base that does (C(gpu_tray.cluster.report_dir) C(newest)).
  - Returns one dict - C(records) (per tray C(source), C(dir), C(rdma), C(checks); all empty when none was found),
    C(found) (folder -> trays) and C(missing) (trays without a record).
  - How the validation compares each tray's PFs with the preflight's and puts the preflight's checks into its
    attested bundle as a phase.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _terms:
    description: The trays (inventory hostnames).
    type: list
    elements: str
    required: true
  this_run:
    description: This run's preflight evidence of the trays whose preflight ran in this run (the list of their
      C(preflight_evidence), each naming its C(host)).
    type: list
    elements: dict
    default: []
  dirs:
    description: The folders to look in first, in order (empty ones are skipped).
    type: list
    elements: str
    default: []
'''

EXAMPLES = r'''
- name: Find each tray's preflight record
  ansible.builtin.set_fact:
    records: "{{ lookup('gpu_tray.cluster.preflight_records', *groups['gpu_trays'], dirs=[report_dir]) }}"
'''

RETURN = r'''
_raw:
  description: One dict - records, found, missing.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleLookupError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight_records, report_dir, run_context


def _read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except (IOError, OSError):
        return None


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        variables = variables or {}
        try:
            where = run_context.report_place(run_context.host_values(self._templar, variables,
                                                                     list(run_context.REPORT_INPUTS)))
            this_run = dict((item.get('host'), item) for item in self.get_option('this_run')
                            if isinstance(item, dict))
            return [preflight_records.find([str(t) for t in terms], this_run, self.get_option('dirs') or [], _read,
                                           lambda relative: report_dir.newest(where, relative))]
        except (ValueError, report_dir.ReportDirError) as exc:
            raise AnsibleLookupError('preflight_records: %s' % to_native(exc))
