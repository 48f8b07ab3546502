# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""After the reboot: did the tray come back in the state the roles prepared? Judged with the preflight's rules.

The rolling reboot gives the result records of the roles that asked for the reboot; their ``verify`` parts are
merged (:func:`merge`) and judged on one fresh read (:func:`judge`): the kernel command line and the huge page pools
with the preflight's own checks (plugin_utils/preflight.py: the kernel_cmdline and hugepage_check rules), ib_core
netns_mode with its judge (module_utils/judges.py, as the role and the validation judge it), the loaded modules as
the roles export them.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_netns_mode
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import common

NAME = 'verify'
LISTS = ('cmdline_required', 'cmdline_forbidden', 'hugepages', 'modules')


def merge(records):
    """One verification of every record's ``verify`` (lists joined; one netns_mode)."""
    spec = dict((key, []) for key in LISTS)
    spec['netns_mode'] = ''
    for record in records or []:
        part = (record or {}).get('verify') or {}
        for key in LISTS:
            spec[key] = common.unique(spec[key] + list(part.get(key) or []))
        if part.get('netns_mode'):
            spec['netns_mode'] = part['netns_mode']
    return spec


def needs(inputs):
    """The always-read parts of a read hold all of it (command line, pools, modules, netns_mode)."""
    return {'sysfs_root': inputs['sysfs_root'], 'proc_root': inputs['proc_root']}


def judge(state, spec):
    """The problems found (one text each; empty when the tray is as prepared)."""
    checks = []
    if spec['cmdline_required'] or spec['cmdline_forbidden']:
        checks.append('kernel_cmdline')
    if spec['hugepages']:
        checks.append('hugepages')
    found = dict((result['name'], result) for result in preflight.evaluate(state, {
        'checks': checks, 'cmdline_required': spec['cmdline_required'],
        'cmdline_forbidden': spec['cmdline_forbidden'], 'hugepages': spec['hugepages'],
        'hugepages_check': 'counts'})) if checks else {}
    problems = []
    cmdline = found.get('kernel_cmdline')
    if cmdline and cmdline['status'] == 'failed':
        problems.append('kernel command line: %s' % ('; '.join(cmdline['details'])
                                                     if 'cmdline' in cmdline['data'] else cmdline['message']))
    pools = found.get('hugepages')
    if pools and pools['status'] == 'failed':
        problems.extend(pools['details'])
    tray = state['ansible_facts']['gpu_tray']
    netns = judge_netns_mode(tray.get('ib_core_netns_mode'), spec['netns_mode'])
    if netns['status'] == 'failed':
        problems.append(netns['message'].rstrip('.'))
    missing = [name for name in spec['modules'] if name not in tray['modules']]
    if missing:
        problems.append('modules not loaded: %s' % ', '.join(missing))
    return problems


def message(spec, problems):
    """The one sentence of a failed verification."""
    return 'Came back without its %s state: %s.' % ('restored' if spec['cmdline_forbidden'] else 'prepared',
                                                    '; '.join(problems))


def plan(state, inputs):
    """Inputs: ``records`` (the result records of the roles that asked for the reboot), ``sysfs_root``,
    ``proc_root``. The plan's ``verify`` is the merged verification, ``problems`` what differs; refused (the
    rolling reboot fails the tray) when anything does. ``exports.cmdline_verified``: yes, or n/a when no kernel
    argument was to be checked."""
    spec = merge(inputs['records'])
    out = common.new_plan(NAME)
    out['problems'] = judge(state, spec)
    out['exports'] = {'cmdline_verified': 'yes' if spec['cmdline_required'] or spec['cmdline_forbidden'] else 'n/a'}
    if out['problems']:
        common.refuse(out, message(spec, out['problems']), details=out['problems'])
    out['verify'] = spec
    return out
