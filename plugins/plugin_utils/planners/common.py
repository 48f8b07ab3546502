# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shape every planner returns, and small helpers they share.

A plan (the ``plan`` of the ``tray_plan`` action)::

    role             the preparing role it is for
    refuse           None, or {'msg': one sentence, 'details': [...], 'fix': what to do or ''}: the role fails before
                     it writes anything; a refusal of an input names the variable the user set in its sentence
    writes           what the role's write tasks do (each planner documents its keys); empty when refused
    blocks           the text of the blocks the write tasks write (also when they are current)
    reboot_required  the running tray differs from what the role prepares: a reboot applies it
    reason           why, in words (empty without a reboot)
    verify           what the rolling reboot verifies after the reboot (kernel_cmdline_required / _forbidden,
                     hugepages, netns_mode, modules: module_utils/verify.py)
    exports          facts the role exports, without the role prefix
    marker           the blockinfile marker of the role's files (planners of roles that write files)
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type


def new_plan(role, marker=None):
    return {'role': role, 'refuse': None, 'writes': {}, 'blocks': {}, 'reboot_required': False, 'reason': '',
            'verify': {}, 'exports': {}, 'marker': marker}


def refuse(plan, msg, details=None, fix=''):
    """The plan of a role that must not write anything: only the refusal and what was found (exports) stay."""
    plan.update(refuse={'msg': msg, 'details': list(details or []), 'fix': fix or ''}, writes={},
                reboot_required=False, reason='', verify={})
    return plan


def set_reboot(plan, reasons):
    plan['reboot_required'] = bool(reasons)
    plan['reason'] = '; '.join(reasons)
    return plan


def unique(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def as_bool(value):
    """A yes/no input as Ansible's bool filter reads it (True, 'true', 'yes', 'on', '1', 1)."""
    if isinstance(value, str):
        return value.strip().lower() in ('true', 'yes', 'on', '1', 'y')
    return bool(value)
