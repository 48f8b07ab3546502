# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's verdict on one read: every check of plugin_utils/preflight.py, and the tray's evidence.

Inputs: the preflight spec (roles/preflight/vars/main.yml ``__preflight_spec``: platform, os, rails, pkey,
include_vfs, firmware, min_num_vfs, hugepages, hugepages_check, cmdline_forbidden, containerd) and ``host``; ``bmc``
(``settings`` and the redfish_info ``answer``) adds the BMC check, judged with the serial of the same read
(plugin_utils/bmc.py).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bmc, preflight
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import common

NAME = 'preflight'


def needs(inputs):
    """The always-read parts, and the rails' firmware where the spec checks it."""
    out = {'sysfs_root': inputs['sysfs_root'], 'proc_root': inputs['proc_root']}
    if inputs.get('firmware'):
        out.update(query_firmware=True, mstconfig_path=inputs['mstconfig_path'])
        rails = preflight.wanted_rails(inputs)
        if rails:
            out['rails'] = rails
    if inputs.get('runtime_config_source'):
        out['runtime_config_source'] = inputs['runtime_config_source']
    return out


def tray_serial(state):
    """The tray's SMBIOS serial from the read (tray_state's gpu_tray.dmi), or None."""
    return ((state.get('ansible_facts') or {}).get('gpu_tray') or {}).get('dmi', {}).get('product_serial')


def plan(state, inputs):
    """``report`` (preflight.report of every check) and ``evidence`` (the report with the tray's facts)."""
    out = common.new_plan(NAME)
    results = preflight.evaluate(state, inputs)
    if inputs.get('bmc'):
        judged = bmc.preflight_check(inputs['bmc'].get('settings'), inputs['bmc'].get('answer'), serial=tray_serial(state))
        results.append(dict(judged, object=inputs['host']))
    report = preflight.report(inputs['host'], inputs['platform'], results)
    out['report'] = report
    facts = state['ansible_facts']
    out['evidence'] = dict(report, tray=facts['gpu_tray'], rdma=facts['gpu_tray_rdma'])
    if not report['passed']:
        findings = ['%s: %s' % (check['name'], check['message']) for check in report['checks']
                    if check['status'] == 'failed']
        common.refuse(out, 'Preflight failed (%s); nothing was changed on the tray.'
                      % ', '.join(report['failed_checks']), details=findings)
    return out
