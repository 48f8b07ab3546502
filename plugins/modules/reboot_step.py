#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: reboot_step
short_description: The rolling reboot's plan and record, step by step, from what the role registered
version_added: 0.2.0
description:
  - The bookkeeping of role C(gpu_tray.cluster.rolling_reboot), on the controller (C(plugins/plugin_utils/reboot_plan.py)).
    Run once per step (C(run_once)); reads what the role's tasks registered on every tray of the run through
    C(hostvars), and the previous step's result (O(run)); returns the next, which the role registers (a registered
    C(run_once) result reaches every host of the play).
  - C(plan) - each tray idle or busy (its Node in O(nodes), the pods read it registered), how busy nodes are drained
    (O(maintenance_operator), C(rolling_reboot_drain_via)), what refuses the run (a configured cluster that cannot
    be read, another controller that reboots these trays in O(foreign), a Maintenance Operator insisted on that the
    cluster does not have, a tray without its group, ...), the first plan, every tray's report row with its place in
    it and each rebooting tray's BMC access (the BMC answers the trays registered; a warning for a BMC that cannot be
    used where it is not required). C(wave) - the next wave, planned once more with the pods of its idle trays read
    just before it. C(not_back) - for one tray that did not come back, not C(run_once) - what its BMC says (the reads
    it registered) and whether it is power-cycled once, shown as a warning; with O(final), the tray still down, the
    step fails with what the BMC said last. C(record) - each tray's outcome (the send, the wait, what C(not_back)
    said, the power cycle, the verify, the failure its rescue recorded; a tray that left the play counts as failed,
    unreachable), the wave's record, the plan of the rest. C(report) - the rows, the waves and where the run stopped,
    for C(rolling-reboot.md), C(rolling-reboot.json) and the job's artifacts.
  - Changes nothing; runs in check mode too.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  step:
    description: Which step of the run.
    type: str
    required: true
    choices: [plan, wave, not_back, record, report]
  inputs:
    description:
      - The plan's inputs (the role's C(__rolling_reboot_plan_inputs)) - C(hosts), C(reasons), C(groups), C(nodes),
        C(strategy), C(canaries), C(batch), C(group_by), C(drain), C(drain_via), C(via_insisted), C(cluster),
        C(check_mode); see C(plugins/plugin_utils/reboot_plan.py) C(plan) and C(begin). Every step but C(not_back).
    type: dict
  run:
    description: The previous step's result (every step but C(plan); C(report) without it shows the rows before the plan).
    type: raw
  nodes:
    description: The registered C(kubernetes.core.k8s_info) read of the cluster's Nodes (steps C(plan), C(wave)).
    type: raw
  maintenance_operator:
    description: The registered looped read of the Maintenance Operator's CRD and Deployments (step C(plan)).
    type: raw
  foreign:
    description: The registered looped read of NodeWright and Skyhook objects (step C(plan)).
    type: raw
  final:
    description: Step C(not_back) - the tray is still down (not from its reboot, nor from the one power cycle).
    type: bool
    default: false
  timeout:
    description: Step C(not_back) with O(final) - the reboot timeout the failure names, in seconds.
    type: raw
  journal:
    description:
      - Step C(plan) - what M(gpu_tray.cluster.phase_record) with C(journal_read) returned (C(run), C(cut_short)),
        what a run of ours that was cut short left. Its line opens the report (RV(earlier)); the nodes it held are
        ours, not somebody's at work (RV(held)); those whose tray needs no reboot now are released first
        (RV(release)); a tray it sent down that left this play unreachable refuses the run before any reboot.
    type: raw
extends_documentation_fragment:
  - gpu_tray.cluster.controller_action
attributes:
  check_mode:
    support: full
    description: Changes nothing; runs the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing.
seealso:
  - module: gpu_tray.cluster.reboot_tray
  - module: gpu_tray.cluster.tray_plan
'''

EXAMPLES = r'''
- name: Plan the reboot
  gpu_tray.cluster.reboot_step:
    step: plan
    inputs: "{{ __rolling_reboot_plan_inputs }}"
    nodes: "{{ __rolling_reboot_nodes }}"
    maintenance_operator: "{{ __rolling_reboot_mo }}"
  register: __rolling_reboot_run
  run_once: true

- name: Record the wave and plan the rest
  gpu_tray.cluster.reboot_step:
    step: record
    inputs: "{{ __rolling_reboot_plan_inputs }}"
    run: "{{ __rolling_reboot_run }}"
  register: __rolling_reboot_run
  run_once: true
'''

RETURN = r'''
plan:
  description: The plan of the remaining run (C(refuse), C(stop), C(trays), C(lines), C(next), C(progress), C(last), ...).
  type: dict
  returned: except for a plan that could not be made
planned:
  description: The first plan's lines (the report's head).
  type: list
  elements: str
  returned: except for a plan that could not be made
rows:
  description: Per tray its report row (step C(report) - a list in the run's order).
  type: raw
  returned: except for a plan that could not be made
states:
  description: Per tray idle or busy (C(node), C(idle), C(why), C(workloads), C(cordoned)), null when not read.
  type: dict
  returned: except for steps C(report) and a plan that could not be made
via:
  description: How busy nodes are drained - C(drain) or C(maintenance_operator).
  type: str
  returned: except for steps C(report) and a plan that could not be made
earlier:
  description: The sentence about the run of ours that was cut short ('' when none was) - step C(plan) on.
  type: str
  returned: except for a plan that could not be made
held:
  description: Per tray whose node a run of ours left held (its journal, our mark on the Node) - C(node), C(via), C(run).
  type: dict
  returned: except for steps C(report) and a plan that could not be made
release:
  description: Those of RV(held) whose tray needs no reboot in this run - the role releases their nodes before the first wave.
  type: dict
  returned: except for steps C(report) and a plan that could not be made
waves_done:
  description: The waves run so far (C(wave), C(label), C(trays), C(started), C(ended), C(seconds), C(reboots), C(failed)).
  type: list
  elements: dict
  returned: except for steps C(report) and a plan that could not be made
bmc:
  description:
    - Per rebooting tray its BMC access (C(ok), C(kind), C(msg), C(fix), ...) - steps C(plan) on.
    - Step C(not_back) - what the tray's BMC says (C(read), C(power_state), C(boot_progress), C(health), C(log),
      C(summary), C(system_id), C(recovery) - C(power_cycle), C(command), C(why)).
  type: dict
  returned: from step C(plan) on; step C(not_back)
after:
  description: Step C(not_back) with O(final) - what the BMC said after the power cycle (as RV(bmc)), null when not read.
  type: dict
  returned: step C(not_back) with O(final)
wave:
  description: The wave being run (the plan's C(next)), with C(wave_index) and C(started) (epoch seconds).
  type: dict
  returned: from step C(wave) on
json:
  description: The rows of C(rolling-reboot.json) - each with its wave's timing, then the trays that left the play before.
  type: list
  elements: dict
  returned: step C(report)
stopped:
  description: Where the run stopped (C(task), C(message)), null when it did not.
  type: dict
  returned: step C(report)
'''
