#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: reboot_tray
short_description: Send a reboot to a tray, or wait until it is back (ansible.builtin.reboot in two halves)
version_added: 0.1.0
description:
  - O(state=sent) reads the tray's boot id (O(boot_time_command)) and runs O(reboot_command); it returns at once,
    while the tray goes down, with the boot id and the time the reboot was sent.
  - O(state=back) waits - up to O(reboot_timeout) - until O(boot_time_command) prints another boot id than
    the one O(sent) read before the shutdown, then until O(test_command) succeeds, and returns when it was first seen back.
  - The rolling reboot sends the reboot to every tray of a wave, then waits for each, so a wave's trays are down
    together however many forks the run has. Both halves run ansible.builtin.reboot's own code.
options:
  state:
    description: V(sent) - send the reboot; V(back) - wait for the tray to come back.
    type: str
    choices: [sent, back]
    required: true
  boot_time_command:
    description: Command whose output changes with every boot.
    type: str
    default: cat /proc/sys/kernel/random/boot_id
  reboot_command:
    description: The shutdown command with its arguments; an absolute path spares a search of the tray for it.
    type: str
    default: /sbin/shutdown -r 0 "Reboot initiated by Ansible"
  sent:
    description:
      - What O(state=sent) returned for this tray (its registered result); required with O(state=back).
      - The wait compares with the boot id read before the shutdown (its C(boot_id)) and counts O(post_reboot_delay)
        from its C(sent_at). Only that result is taken - never a boot id read later, which a tray still answering
        with its old boot id for a few reads would make look back already.
    type: dict
  post_reboot_delay:
    description: Seconds after the send before the first look at the tray (against early answers,
      ansible/ansible#78007). Already over for a tray whose wait starts late.
    type: int
    default: 0
  reboot_timeout:
    description: Seconds to wait for the new boot id, and again for the test command.
    type: int
    default: 600
  test_command:
    description: Runs until it succeeds once the boot id changed.
    type: str
    default: whoami
attributes:
  action:
    support: full
    description: An action plugin - ansible.builtin.reboot's code runs on the controller and sends commands to the tray.
  async:
    support: none
    description: Not as an asynchronous job (O(state=sent) returns at once by itself).
  bypass_host_loop:
    support: none
    description: Runs once per host.
  check_mode:
    support: full
    description: Nothing is sent or waited for; O(state=sent) reports C(changed).
  diff_mode:
    support: none
    description: Reboots change no file.
  platform:
    support: full
    platforms: posix
    description: Needs the boot id command and the shutdown command on the tray.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
seealso:
  - module: ansible.builtin.reboot
'''

EXAMPLES = r'''
- name: Send the reboot to every tray of the wave (returns at once)
  gpu_tray.cluster.reboot_tray:
    state: sent
    reboot_command: /sbin/shutdown -r 0 "rolling reboot"
  register: sent

- name: Wait for each tray to come back with a new boot id
  gpu_tray.cluster.reboot_tray:
    state: back
    sent: "{{ sent }}"
    reboot_timeout: 1800
'''

RETURN = r'''
boot_id:
  description: The boot id before the reboot (O(state=sent)).
  type: str
  returned: state is sent
sent_at:
  description: When the reboot was sent, epoch seconds (controller clock).
  type: float
  returned: state is sent
back_at:
  description: When the tray was first seen back - new boot id and the test command passing - epoch seconds; with
    fewer forks than trays a tray whose wait starts late is seen later than it came back.
  type: float
  returned: state is back and the tray came back
rebooted:
  description: Whether the tray came back from its reboot.
  type: bool
  returned: state is back
'''
