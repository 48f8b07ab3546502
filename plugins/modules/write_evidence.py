#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: write_evidence
short_description: Write report and evidence files on the controller in one task
version_added: 0.1.0
description:
  - Writes a list of files under one directory on the controller, in the controller process (an action plugin,
    no module is sent anywhere). With C(run_once), one task writes every tray's evidence and the summary.
  - A file is replaced atomically and only when its content differs, so a re-run with the same findings reports
    no change.
  - Evidence is a record of what was found, so it is written in check mode too.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  dest:
    description: Directory on the controller; created when missing.
    type: path
    required: true
  files:
    description: The files to write.
    type: list
    elements: dict
    required: true
    suboptions:
      path:
        description: Path relative to O(dest) (no C(..), not absolute); parent directories are created.
        type: str
        required: true
      content:
        description: Text content, written as given. Mutually exclusive with O(files[].json).
        type: str
      json:
        description: Data written as indented JSON with sorted keys and a final newline.
        type: raw
  mode:
    description: Octal permissions of the files written.
    type: str
    default: '0644'
  run_dir:
    description:
      - The run's own folder (O(dest) or a directory above it) where runs are kept apart, one folder per run. After
        writing, the link C(latest) beside it is pointed at it (a relative symbolic link, replaced atomically).
        The roles pass the run folder of P(gpu_tray.cluster.report_dir#lookup).
      - A C(latest) there that is not a link is not replaced (the task fails).
    type: path
extends_documentation_fragment:
  - gpu_tray.cluster.controller_action
attributes:
  bypass_host_loop:
    support: none
    description: Runs once per host of the loop; use C(run_once) to write every tray's files in one task.
  check_mode:
    support: none
    description: Writes in check mode too - the evidence records what a check-mode run found.
  diff_mode:
    support: none
    description: No diff is shown; the files written are listed in RV(written).
seealso:
  - module: gpu_tray.cluster.tray_state
'''

EXAMPLES = r'''
- name: Write every tray's report and a summary, once for the play
  gpu_tray.cluster.write_evidence:
    dest: /srv/gpu-tray-report
    files: "{{ ansible_play_hosts_all | map('extract', hostvars, 'my_evidence') | list
               + [{'path': 'summary.md', 'content': lookup('ansible.builtin.template', 'summary.md.j2')}] }}"
  run_once: true
  delegate_to: localhost
  # where each tray set before: my_evidence: {path: "{{ inventory_hostname }}/report.json", json: "{{ result }}"}

- name: Write into this AWX job's own folder and point <base>/latest at it
  gpu_tray.cluster.write_evidence:
    dest: "{{ lookup('gpu_tray.cluster.report_dir') }}/validation"
    run_dir: "{{ lookup('gpu_tray.cluster.report_dir') }}"
    files: [{path: summary.json, json: "{{ summary }}"}]
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
dest:
  description: The directory written to (absolute).
  type: str
  returned: always
written:
  description: Files whose content changed and were written.
  type: list
  elements: str
  returned: always
latest:
  description: The C(latest) link beside O(run_dir), pointing at it.
  type: str
  returned: when O(run_dir) is given
  sample: /var/lib/gpu-tray-report/latest
msg:
  description: How many files were written.
  type: str
  returned: always
'''
