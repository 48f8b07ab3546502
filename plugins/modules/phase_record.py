#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: phase_record
short_description: End a phase through its one record - report files, job artifact, the failure of each host
version_added: 0.1.0
description:
  - The way out of every phase (the preflight, the rolling reboot, the stack's deploy, teardown and NodeMaintenance
    recovery, the validation), whatever ended it. From the phase's records and where it stopped, writes its report files
    on the controller, hands its summary to the job's artifacts as C(gpu_tray_evidence.<phase>) (what
    M(ansible.builtin.set_stats) does - AWX shows it on the job's page and passes it to the workflow's next nodes), and
    returns in RV(failures) the message each host must fail with. A role ends with this task (C(run_once)) and an
    M(ansible.builtin.fail) task for the hosts RV(failures) names.
  - Runs in the controller process (an action plugin). Files are replaced atomically and only when their content
    differs; the record is not a change (the task always reports unchanged) and is written in check mode too.
  - With O(find), only looks for an earlier run's files (the validation's summary and drift baseline).
  - With O(journal), only appends one line to the run's journal C(journal.jsonl) in the run's report folder - a step
    that cannot be undone, written before and after it (a reboot sent, a tray back and verified, a node held or
    released) - so that the next run knows what a run killed in the middle left. With O(journal_read), only reads
    what the last run of the phase left when it was cut short (RV(cut_short), RV(line)).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  phase:
    description:
      - The phase, and the key of its job artifact.
      - C(preflight) - every tray's C(<tray>/preflight.json) and C(preflight-summary.md) from the facts O(hostvars)
        names (C(preflight_report), C(__preflight_evidence)); O(meta) C(fail) (false - only unread trays fail).
      - C(rolling_reboot) - C(rolling-reboot.md) and C(.json) from O(records), the result of
        M(gpu_tray.cluster.reboot_step) with C(step=report); O(meta) C(group_by), C(hosts) (the trays of the rolling
        reboot), C(nodes_msg).
      - C(stack_deploy), C(stack_teardown) - C(stack-<action>.md) and C(.json) from O(records), the components in
        their tiers.
      - C(stack_recover) - C(stack-recover.md) and C(.json) from O(records), the NodeMaintenance objects released;
        O(meta) C(finalizer).
      - C(validation) - the evidence directory (C(ctrf/) per phase, C(junit.xml), C(report.md), C(report.html),
        C(summary.json)) from O(records), the phases C({name, checks}); O(meta) C(recipe), C(recipe_digest),
        C(recorded_digest), C(generated), C(drift), C(files) (drift's), C(racks), C(record_sources), C(report_dir),
        C(run_dir). Files of an earlier run under C(ctrf/) are removed.
    type: str
    required: true
    choices: [preflight, rolling_reboot, stack_deploy, stack_teardown, stack_recover, validation]
  records:
    description: The phase's records (see O(phase)).
    type: raw
  hostvars:
    description: Facts read from every host of the play (C(ansible_play_hosts_all)); the preflight's records.
    type: list
    elements: str
    default: []
  stopped:
    description:
      - The name of the fact a host's rescue set where the phase stopped (C({task, message}), filter
        P(gpu_tray.cluster.stopped_at#filter)); each host that has one fails with its message.
    type: str
  meta:
    description: What the phase's report says besides its records (see O(phase)).
    type: dict
    default: {}
  dest:
    description:
      - The directory the phase's files are written to. Default the run's report directory
        (P(gpu_tray.cluster.report_dir#lookup)), with its run folder as O(run_dir) when the run has one.
      - With O(find), the directory the earlier run's files are looked for in.
    type: path
  run_dir:
    description: The run's own folder (O(dest) or above it); the link C(latest) beside it is pointed at it.
    type: path
  find:
    description: Files (relative to O(dest)) to look for in the earlier run that left them; nothing is written.
    type: list
    elements: str
  prefer:
    description:
      - With O(find), the run's own folder when runs are kept apart (AWX, C(gpu_tray_run_id)); the newest run folder
        beside it that holds the file is found, this one first. Without it, O(dest) itself.
    type: path
  journal:
    description:
      - Append this step to the run's journal (in O(dest), default the run's report folder) and nothing else.
      - C(planned) (the trays the plan reboots), C(held) (a node about to be cordoned or put under maintenance),
        C(sending), C(sent), C(back), C(verified), C(released), C(failed), C(end) (the run ended, whatever its result).
    type: str
    choices: [planned, held, sending, sent, back, verified, released, failed, end]
  trays:
    description: With O(journal), the trays the step is about; default this host.
    type: list
    elements: str
  detail:
    description: With O(journal), what else the line keeps (the node, how it is held, the boot id).
    type: dict
    default: {}
  journal_read:
    description:
      - Read what the last run of O(phase) left when it did not end (its journal has no C(end)), from this run's folder
        or, with run folders, the newest one that has a journal; nothing is written.
    type: bool
    default: false
extends_documentation_fragment:
  - gpu_tray.cluster.controller_action
attributes:
  check_mode:
    support: full
    description: Writes in check mode too - the record says what a check-mode run found; nothing else is changed.
  diff_mode:
    support: none
    description: No diff is shown; the files written are listed in RV(written).
seealso:
  - module: gpu_tray.cluster.write_evidence
  - module: gpu_tray.cluster.reboot_step
'''

EXAMPLES = r'''
- name: Record the rolling reboot
  gpu_tray.cluster.phase_record:
    phase: rolling_reboot
    records: "{{ __rolling_reboot_final }}"
    stopped: __rolling_reboot_stopped
    meta: {group_by: rack, hosts: "{{ ansible_play_hosts }}"}
  register: record
  run_once: true

- name: Fail where the phase stopped, now that its report is written
  ansible.builtin.fail:
    msg: "{{ record.failures[inventory_hostname] }}"
  when: inventory_hostname in record.failures

- name: Find the earlier validation's drift baseline
  gpu_tray.cluster.phase_record:
    phase: validation
    find: [last-pass.json]
    dest: /var/lib/gpu-tray-report/awx-job-41/validation
    prefer: /var/lib/gpu-tray-report/awx-job-41
  register: earlier
  run_once: true

- name: Journal the reboot about to be sent to this tray
  gpu_tray.cluster.phase_record:
    phase: rolling_reboot
    journal: sending
'''

RETURN = r'''
dir:
  description: The directory the record was written to (absolute).
  type: str
  returned: when a record is written
written:
  description: Files whose content changed and were written.
  type: list
  elements: str
  returned: when a record is written
removed:
  description: Files of an earlier run removed (C(ctrf/) of a validation).
  type: list
  elements: str
  returned: when a record is written
artifact:
  description: The phase's summary, as handed to the job's artifacts under C(gpu_tray_evidence.<phase>).
  type: dict
  returned: when a record is written
failures:
  description: The hosts that must fail, each with the one-sentence message it fails with.
  type: dict
  returned: when a record is written
  sample: {gb200-r01-t03: "gb200-r01-t03 is unreachable: ... Nothing was checked on it, nothing was changed."}
summary:
  description: One sentence of what the phase did (the validation's and the recovery's), '' where it has none.
  type: str
  returned: when a record is written
earlier:
  description: With O(find), each file's path in the earlier run that left it, '' when none did.
  type: dict
  returned: with O(find)
journal:
  description: The journal written to (O(journal)) or read (O(journal_read); '' when there is none).
  type: str
  returned: with O(journal) or O(journal_read)
run:
  description: This controller run's id (C(<UTC start of ansible-playbook>-<its pid>)), the one its journal lines carry.
  type: str
  returned: with O(journal) or O(journal_read)
entry:
  description: The line appended.
  type: dict
  returned: with O(journal)
cut_short:
  description:
    - With O(journal_read), what the last run left when it was cut short, none when it ended - C(run), C(step) and
      C(at) (its last line), C(sent_down), C(back), C(verified), C(still_down), C(failed), C(held) (node, how it is
      held, per tray), C(trays) (each tray's last step).
  type: dict
  returned: with O(journal_read)
line:
  description: With O(journal_read), the report's opening sentence about the cut-short run, '' when none was.
  type: str
  returned: with O(journal_read)
  sample: "Run 20261207T145100Z-4242 was cut short at sent (2026-12-07 14:52:10 UTC): sent down: tray02, tray03; ..."
msg:
  description: How many report files were written.
  type: str
  returned: when a record is written
'''
