# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planner of role rdma_modules: the RDMA upper-layer modules loaded now and at every boot, from one read.

Inputs are the role's variables without the prefix: ``managed`` (this tray gets the modules: the role decides it
from rdma_modules_enabled, the list and the tray's groups), ``load``, ``load_file``, ``sysfs_root``. The modules are
loaded at once; the file only repeats that at every boot: the role never needs the reboot.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import posixpath

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import tray_read
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import common

NAME = 'rdma_modules'
MARKER = '# {mark} gpu_tray.cluster.rdma_modules - managed by Ansible; delete this file to undo'


def kernel_name(module):
    """The name the kernel lists a module under in sysfs (modprobe accepts - and _ alike)."""
    return module.replace('-', '_')


def needs(inputs):
    if not common.as_bool(inputs['managed']):
        return {}
    return {'sysfs_root': inputs['sysfs_root'],
            'files': [inputs['load_file']] + tray_read.directories([inputs['load_file']])}


def plan(state, inputs):
    """writes: ``load`` - the modules not loaded now (modprobe each); ``file`` - the modules-load.d block differs."""
    out = common.new_plan(NAME, MARKER)
    if not common.as_bool(inputs['managed']):
        out['exports'] = {'names': []}
        return out
    loaded = state['ansible_facts']['gpu_tray']['modules']
    block = tray_read.with_created_dir(state, inputs['load_file'], '\n'.join(inputs['load']), MARKER)
    out['blocks'] = {'file': block}
    out['writes'] = {
        'load': [module for module in inputs['load'] if kernel_name(module) not in loaded],
        'file': not tray_read.block_current((state.get('files') or {}).get(inputs['load_file']), block, MARKER),
    }
    out['exports'] = {'names': list(inputs['load'])}
    out['verify'] = {'modules': [kernel_name(module) for module in inputs['load']]}
    return out


def restore_needs(inputs):
    return needs(dict(inputs, managed=True))


def restore(state, inputs):
    """writes: ``remove_file`` / ``remove_block`` (the role's file, whole or only its block). The loaded modules
    stay loaded (unloading RDMA modules under a running fabric is not safe); they are gone after the next boot."""
    out = common.new_plan(NAME, MARKER)
    files = state.get('files') or {}
    action = tray_read.restore_action(files.get(inputs['load_file']), MARKER,
                                      files.get(posixpath.dirname(inputs['load_file'])), inputs['load_file'])
    out['exports'] = {'names': []}
    if action['action'] == 'unreadable':
        return common.refuse(out, 'Could not read %s; nothing was removed.' % inputs['load_file'])
    out['writes'] = {'remove_file': action['action'] == 'remove_file',
                     'remove_block': action['action'] == 'remove_block', 'remove_dir': action['directory'] or ''}
    return out
