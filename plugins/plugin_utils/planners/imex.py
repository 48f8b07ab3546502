# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planner of role imex: the host nvidia-imex.service masked (VR200) or back to enabled and running, from one read.

Inputs are the role's variables without the prefix: ``host_service`` (masked, enabled, unmanaged), ``unit``.
Masking or starting a unit takes effect at once: the role never needs the reboot.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import common

NAME = 'imex'
# unit file states `systemctl disable` changes, and active states `systemctl stop` ends
ENABLED_STATES = ('enabled', 'enabled-runtime', 'linked', 'linked-runtime', 'alias')
RUNNING_STATES = ('active', 'activating', 'reloading', 'deactivating')
_LOCAL_UNIT = re.compile(r'^/etc/systemd/system/[^/]+$')


def needs(inputs):
    return {'units': [inputs['unit']]} if inputs['host_service'] != 'unmanaged' else {}


def plan(state, inputs):
    """writes: ``relocate`` (move a unit file out of /etc/systemd/system so that it can be masked), ``disable``,
    ``mask`` - or ``unmask``, ``enable`` - each true when the unit's state calls for it."""
    out = common.new_plan(NAME)
    service = inputs['host_service']
    if service == 'unmanaged':
        return out
    units = state.get('units') or {}
    unit = dict({'LoadState': '', 'UnitFileState': '', 'ActiveState': '', 'FragmentPath': ''},
                **((units.get('units') or {}).get(inputs['unit']) or {}))
    out['exports'] = {'unit_state': unit}
    if not unit['LoadState']:
        return common.refuse(out, 'Could not read the state of %s: %s; nothing was changed.'
                             % (inputs['unit'], units.get('error') or 'no systemctl show output'))
    if service == 'masked':
        out['writes'] = {
            # a unit file in /etc/systemd/system cannot be masked: `systemctl mask` refuses to replace it with the link
            'relocate': unit['LoadState'] != 'masked' and bool(_LOCAL_UNIT.match(unit['FragmentPath'])),
            'disable': (unit['LoadState'] not in ('not-found', 'masked')
                        and (unit['UnitFileState'] in ENABLED_STATES or unit['ActiveState'] in RUNNING_STATES)),
            'mask': unit['UnitFileState'] != 'masked',
        }
        out['verify'] = {}
        return out
    if unit['LoadState'] == 'not-found':
        return common.refuse(out, '%s is not installed, so it cannot be enabled.' % inputs['unit'])
    out['writes'] = {'unmask': unit['UnitFileState'] in ('masked', 'masked-runtime'),
                     'enable': unit['UnitFileState'] != 'enabled' or unit['ActiveState'] != 'active'}
    return out
