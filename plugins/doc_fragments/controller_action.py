# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    """Attributes of the action plugins that run on the controller (the inputs check, the evidence, its bundle and its
    verification); a module overrides an attribute by naming it."""

    DOCUMENTATION = r'''
attributes:
  action:
    support: full
    description: Runs on the controller as an action plugin.
  async:
    support: none
    description: Runs in the controller process.
  bypass_host_loop:
    support: none
    description: Runs once per host; use C(run_once).
  platform:
    support: full
    platforms: posix
    description: The controller.
'''
