# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How many hosts this ansible-playbook run works on at once (its forks).

No magic variable carries it, and the ansible.builtin.config lookup returns the configured DEFAULT_FORKS, which
the command line's --forks overrides: the rolling reboot needs the value the run really has, because
ansible.builtin.reboot holds one worker for a tray's whole reboot, so a wave wider than the forks reboots in
several rounds.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: forks
short_description: The number of forks of the running ansible-playbook
version_added: 0.1.0
description:
  - Returns one integer, the forks the running ansible-playbook (or ansible-runner job) uses - C(--forks) on the
    command line, else the C(forks) setting of the configuration (C(ANSIBLE_FORKS), C(ansible.cfg)), else
    Ansible's default of 5.
  - Unlike C(lookup('ansible.builtin.config', 'DEFAULT_FORKS')) it sees the command line's C(--forks).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options: {}
'''

EXAMPLES = r'''
- name: Refuse a wave wider than the run can reboot at once
  ansible.builtin.assert:
    that: wave | length <= lookup('gpu_tray.cluster.forks')
'''

RETURN = r'''
_raw:
  description: The forks of the run, one integer.
  type: list
  elements: int
'''

from ansible import constants as C
from ansible import context
from ansible.plugins.lookup import LookupBase


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        forks = context.CLIARGS.get('forks') if context.CLIARGS else None
        return [int(forks or C.config.get_config_value('DEFAULT_FORKS') or 5)]
