# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planner of role rdma_netns: ib_core netns_mode through the role's modprobe.d file, from one read.

Inputs are the role's variables without the prefix: ``mode`` (exclusive, shared, unmanaged), ``conf_file``,
``modprobe_dirs``, ``sysfs_root``. The option applies when ib_core loads: the reboot, when the running mode differs.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import posixpath
import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_netns_mode
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import role_inputs, tray_read
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import common

NAME = 'rdma_netns'
MARKER = '# {mark} gpu_tray.cluster.rdma_netns - managed by Ansible; delete this file and reboot to undo'
# mode -> what /sys/module/ib_core/parameters/netns_mode reads after the reboot (bool parameter), and the option
SYSFS_VALUE = {'exclusive': 'N', 'shared': 'Y'}
OPTION_VALUE = {'exclusive': '0', 'shared': '1'}


def needs(inputs):
    if inputs['mode'] == 'unmanaged':
        return {}
    return {'sysfs_root': inputs['sysfs_root'],
            'files': [inputs['conf_file']] + tray_read.directories([inputs['conf_file']]),
            'modprobe_dirs': list(inputs['modprobe_dirs']), 'modprobe_modules': ['ib_core']}


def running_mode(state):
    """The running mode as the read names it (exclusive, shared; None when ib_core is not loaded)."""
    return state['ansible_facts']['gpu_tray'].get('ib_core_netns_mode')


def running_value(state):
    """What the running ib_core's netns_mode reads (Y, N), '' when ib_core is not loaded: the role's exports only."""
    return SYSFS_VALUE.get(running_mode(state) or '', '')


def plan(state, inputs):
    """writes: ``file`` (exclusive: the role's block differs) or ``remove`` (shared: the role's file exists). Refuses
    when another modprobe.d file sets another netns_mode (the setting must have one owner)."""
    out = common.new_plan(NAME, MARKER)
    mode = inputs['mode']
    running = running_value(state) if mode != 'unmanaged' else ''
    out['exports'] = {'expected': SYSFS_VALUE.get(mode, ''), 'running': running}
    if mode == 'unmanaged':
        return out
    conf = (state.get('files') or {}).get(inputs['conf_file']) or {}
    own = re.compile('^' + re.escape(inputs['conf_file']) + ':')
    others = [line for line in (state.get('modprobe') or {}).get('options', [])
              if 'netns_mode=' in line and not own.match(line)]
    wanted = re.compile(r'netns_mode=%s(\s|$)' % OPTION_VALUE[mode])
    conflicts = [line for line in others if not wanted.search(line)]
    if conflicts:
        files = common.unique(line.split(':')[0] for line in conflicts)
        return common.refuse(out, '%s sets another ib_core netns_mode than %s (%s); the setting must have one owner.'
                             % (', '.join(files), mode, role_inputs.user_variable(NAME, 'mode')), details=conflicts)
    option = 'options ib_core netns_mode=%s' % OPTION_VALUE[mode]
    block = tray_read.with_created_dir(state, inputs['conf_file'], option, MARKER)
    out['blocks'] = {'file': block}
    if mode == 'exclusive':
        out['writes'] = {'file': not tray_read.block_current(conf, block, MARKER), 'remove': False}
    else:
        out['writes'] = {'file': False, 'remove': conf.get('exists') is not False}
    judged = judge_netns_mode(running_mode(state), mode)
    if judged['status'] == 'failed':
        common.set_reboot(out, ['%s: the role sets it, applied when ib_core loads' % judged['message'].rstrip('.')])
    out['verify'] = {'netns_mode': mode}
    return out


def restore_needs(inputs):
    return {'sysfs_root': inputs['sysfs_root'],
            'files': [inputs['conf_file']] + tray_read.directories([inputs['conf_file']])}


def restore(state, inputs):
    """writes: ``remove_file`` / ``remove_block``; ib_core is back to the kernel's shared mode after the reboot."""
    out = common.new_plan(NAME, MARKER)
    files = state.get('files') or {}
    action = tray_read.restore_action(files.get(inputs['conf_file']), MARKER,
                                      files.get(posixpath.dirname(inputs['conf_file'])), inputs['conf_file'])
    running = running_mode(state)
    # the role's file was there (this run, or a restore interrupted before its reboot: the running mode is still the
    # role's exclusive one while no file of another owner sets it)
    owned = action['action'] != 'none' or (running == 'exclusive' and inputs['mode'] == 'exclusive')
    out['exports'] = {'expected': SYSFS_VALUE['shared'] if owned else '', 'running': running_value(state)}
    if action['action'] == 'unreadable':
        return common.refuse(out, 'Could not read %s; nothing was removed.' % inputs['conf_file'])
    out['writes'] = {'remove_file': action['action'] == 'remove_file',
                     'remove_block': action['action'] == 'remove_block', 'remove_dir': action['directory'] or ''}
    judged = judge_netns_mode(running, 'shared')
    if owned and judged['status'] == 'failed':
        common.set_reboot(out, ['%s: the way back applies shared when ib_core loads' % judged['message'].rstrip('.')])
    if owned:
        out['verify'] = {'netns_mode': 'shared'}
    return out
