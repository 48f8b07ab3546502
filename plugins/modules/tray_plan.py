#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: tray_plan
short_description: Read a GPU tray once per run and decide on the controller what a role writes
version_added: 0.1.0
description:
  - "The host preparation in one picture: B(read) the tray (M(gpu_tray.cluster.tray_state), read-only) -> B(plan) on
    the controller (a planner of C(plugins/plugin_utils/planners)) -> the role's B(write) tasks, each run only where
    the plan says the tray differs -> the rolling B(reboot) -> B(verify) with the preflight's rules."
  - The read is kept for the run in the host fact C(gpu_tray_read), tagged with the run it belongs to. A later call
    whose planner needs nothing more reuses it (no module call); else the tray is read once more for everything the
    kept read held plus what is asked, and that read is kept. A read kept by an earlier run (a fact cache) is never
    reused.
  - With O(prefetch) the read also takes what the named preparing roles will decide from, with the inputs each role
    will hand its planner - the role's own C(__<role>_inputs), made from its defaults and vars with the host's
    variables, as the role makes them when it runs (the lookup P(gpu_tray.cluster.role_inputs#lookup) gives the same)
    - the preflight of C(gpu_tray.cluster.prepare_trays) reads once for the whole run, and a prepared tray costs one
    module call.
  - Decides nothing by itself and changes nothing on the tray; a refusal is returned in RV(plan) (its C(refuse)) for the role
    to act on.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  planner:
    description:
      - Which decision to make - a preparing role's (C(kernel_tuning), C(imex), C(rdma_modules), C(rdma_netns)), the
        preflight's verdict (C(preflight)), or the check after a reboot (C(verify)).
    type: str
    required: true
    choices: [imex, kernel_tuning, preflight, rdma_modules, rdma_netns, verify]
  entry:
    description: C(main) prepares; C(restore) plans the way back (roles C(kernel_tuning), C(rdma_modules), C(rdma_netns)).
    type: str
    choices: [main, restore]
    default: main
  inputs:
    description:
      - What the planner decides with - the role's variables without the role prefix (the role passes them; see
        each role's C(vars/main.yml)), the preflight's spec, or for C(verify) the result records (C(records)) and
        C(sysfs_root), C(proc_root).
    type: dict
    required: true
  prefetch:
    description: Preparing roles whose reads go into this read (with the inputs the roles make on the host).
    type: list
    elements: str
    choices: [kernel_tuning, imex, rdma_modules, rdma_netns]
    default: []
  fresh:
    description: Read the tray even when the kept read covers the request (after a write or a reboot).
    type: bool
    default: false
attributes:
  action:
    support: full
    description: An action plugin - the decisions run on the controller; only the read runs on the tray.
  async:
    support: none
    description: Not as an asynchronous job.
  bypass_host_loop:
    support: none
    description: Runs once per host.
  check_mode:
    support: full
    description: Reads and decides in check mode too; it changes nothing in any mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to diff; the role's write tasks show their diffs.
  platform:
    support: full
    platforms: posix
    description: The tray's read runs M(gpu_tray.cluster.tray_state) on it.
seealso:
  - module: gpu_tray.cluster.tray_state
  - plugin: gpu_tray.cluster.role_result
    plugin_type: filter
'''

EXAMPLES = r'''
- name: Plan ib_core netns_mode from the tray's state
  gpu_tray.cluster.tray_plan:
    planner: rdma_netns
    inputs:
      mode: exclusive
      conf_file: /etc/modprobe.d/gpu-tray-ib-core-netns.conf
      modprobe_dirs: [/etc/modprobe.d, /lib/modprobe.d]
      sysfs_root: /sys
  register: netns_plan

- name: Write the option only where the plan says so
  ansible.builtin.blockinfile:
    path: /etc/modprobe.d/gpu-tray-ib-core-netns.conf
    create: true
    mode: "0644"
    marker: "{{ netns_plan.plan.marker }}"
    block: "{{ netns_plan.plan.blocks.file }}"
  when: netns_plan.plan.writes.file
'''

RETURN = r'''
plan:
  description:
    - The decision - C(role), C(refuse) (null, or C(msg) and C(details) - the role fails before writing anything),
      C(writes) (what the role's write tasks do; per planner), C(blocks) (the text its blockinfile tasks write),
      C(marker), C(reboot_required), C(reason), C(verify) (what the rolling reboot checks after the reboot),
      C(exports) (facts the role exports).
    - The C(preflight) planner adds C(report) and C(evidence); C(verify) adds C(problems).
  type: dict
  returned: always
read:
  description: C(module_call) - whether the tray was read by this call (false - the run's kept read answered), C(request).
  type: dict
  returned: always
msg:
  description: The refusal, or what was planned, in one sentence.
  type: str
  returned: always
'''
