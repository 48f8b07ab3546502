# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure helpers for tray_facts: os-release, kernel flavour, module state, systemctl output."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import shlex

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    TOOL_ENVIRON,
    find_tool,
    join_root,
    list_dir,
    read_text,
)

# Units whose activity tells which container runtime owns the node.
RUNTIME_UNITS = ('containerd.service', 'rke2-server.service', 'rke2-agent.service', 'k3s.service', 'k3s-agent.service')
RUNTIME_NAMES = {
    'containerd.service': 'containerd',
    'rke2-server.service': 'rke2-server',
    'rke2-agent.service': 'rke2-agent',
    'k3s.service': 'k3s',
    'k3s-agent.service': 'k3s',
}
# Preference when several are active: RKE2/k3s run their own containerd.
RUNTIME_PREFERENCE = ('rke2-server.service', 'rke2-agent.service', 'k3s.service', 'k3s-agent.service',
                      'containerd.service')
IMEX_UNIT = 'nvidia-imex.service'

_ENABLED_STATES = frozenset(['enabled', 'enabled-runtime', 'linked', 'linked-runtime', 'alias', 'masked',
                             'masked-runtime', 'static', 'indirect', 'disabled', 'generated', 'transient',
                             'bad', 'not-found'])
_ACTIVE_STATES = frozenset(['active', 'reloading', 'inactive', 'failed', 'activating', 'deactivating',
                            'maintenance', 'refreshing', 'unknown'])
# The page-size flavour: Ubuntu ``-64k`` (``6.8.0-1021-nvidia-64k``), RHEL family ``+64k``
# (``5.14.0-427.13.1.el9_4.aarch64+64k``); either may be followed by another suffix (``+64k-debug``).
_PAGE_FLAVOUR = re.compile(r'[-+](\d+)k(?:[-+]|$)')


def parse_os_release(text):
    """Parse os-release(5): KEY=value lines with shell quoting."""
    out = {}
    for line in (text or '').splitlines():
        line = line.strip()
        if not line or line.startswith('#') or '=' not in line:
            continue
        key, _sep, value = line.partition('=')
        key = key.strip()
        if not re.match(r'^[A-Za-z_][A-Za-z0-9_]*$', key):
            continue
        try:
            parts = shlex.split(value, comments=False, posix=True)
        except ValueError:
            parts = [value.strip('"\'')]
        out[key] = ' '.join(parts) if parts else ''
    return out


def kernel_flavour_page_size(release):
    """Page size implied by the kernel flavour suffix, in bytes.

    Ubuntu/NVIDIA arm64 kernels name a 64 KiB-page build ``-64k``
    (``6.8.0-1021-nvidia-64k``, ``7.0.0-5-nvidia-bos-64k``), RHEL-family
    kernel-64k builds ``+64k`` (``5.14.0-427.13.1.el9_4.aarch64+64k``).
    Without such a suffix the flavour implies 4 KiB; ``None`` when no
    release is known.
    """
    if not release:
        return None
    match = _PAGE_FLAVOUR.search(release)
    if match:
        return int(match.group(1)) * 1024
    return 4096


def parse_netns_mode(text):
    """``Y`` -> 'shared', ``N`` -> 'exclusive', absent -> None (ib_core not loaded)."""
    if text is None:
        return None
    value = text.strip().upper()
    if value in ('Y', '1'):
        return 'shared'
    if value in ('N', '0'):
        return 'exclusive'
    return 'unknown'


def read_modules(sysfs_root):
    """Module names under sysfs_root/module and which of them are loadable (initstate)."""
    base = join_root(sysfs_root, 'module')
    names = list_dir(base)
    loadable = [name for name in names if read_text(os.path.join(base, name, 'initstate')) is not None]
    return names, loadable


def parse_systemctl_lines(stdout, units, valid):
    """Map ``units`` to the per-line states of ``systemctl is-active/is-enabled u1 u2``.

    systemctl prints one line per unit in order; a unit file that does not
    exist gives ``not-found`` (is-enabled, newer systemd) or ``inactive``
    (is-active). Lines we do not recognise become 'unknown'.
    """
    lines = [line.strip() for line in (stdout or '').splitlines() if line.strip()]
    states = {}
    if len(lines) != len(units):
        for unit in units:
            states[unit] = 'unknown'
        return states
    for unit, line in zip(units, lines):
        states[unit] = line if line in valid else 'unknown'
    return states


def parse_is_enabled(stdout, units):
    return parse_systemctl_lines(stdout, units, _ENABLED_STATES)


def parse_is_active(stdout, units):
    return parse_systemctl_lines(stdout, units, _ACTIVE_STATES)


def active_runtime(states):
    """(primary runtime name or None, list of active runtime units)."""
    active = [unit for unit in RUNTIME_PREFERENCE if states.get(unit) == 'active']
    if not active:
        return None, []
    return RUNTIME_NAMES[active[0]], active


# Reading a tray (needs an AnsibleModule for run_command; shared by tray_facts and tray_state)

def systemctl(module, tool, verb, units):
    """``systemctl <verb> units...`` -> (stdout, error text or None)."""
    rc, out, err = module.run_command([tool, verb] + list(units), environ_update=TOOL_ENVIRON)
    text = (err or '').strip()
    if (not out.strip() and text) or 'not been booted with systemd' in text or 'Failed to connect to bus' in text:
        return '', text
    return out, None


def unit_states(module, tool):
    """({imex: enabled state}, {unit: active state}, error or None) - systemctl's view of the imex and runtime units."""
    units = [IMEX_UNIT] + list(RUNTIME_UNITS)
    if tool is None:
        return {IMEX_UNIT: 'unknown'}, dict((unit, 'unknown') for unit in units), 'systemctl not found'
    out, error = systemctl(module, tool, 'is-enabled', [IMEX_UNIT])
    if error and ('No such file' in error or 'not found' in error.lower()) and 'bus' not in error:
        enabled, error = {IMEX_UNIT: 'not-found'}, None
    else:
        enabled = parse_is_enabled(out, [IMEX_UNIT]) if error is None else {IMEX_UNIT: 'unknown'}
    out, active_error = systemctl(module, tool, 'is-active', units)
    active = parse_is_active(out, units) if active_error is None else dict((unit, 'unknown') for unit in units)
    return enabled, active, error or active_error


def read_tray(module, params):
    """The ansible_facts.gpu_tray dict (tray_facts, tray_state): OS, kernel, modules, netns_mode, units."""
    os_text = read_text(params['os_release_path'])
    if os_text is None and params['os_release_path'] == '/etc/os-release':
        os_text = read_text('/usr/lib/os-release')
    os_release = parse_os_release(os_text)
    release = read_text(join_root(params['proc_root'], 'sys/kernel/osrelease'))
    try:
        page_size = os.sysconf('SC_PAGE_SIZE')
    except (ValueError, OSError, AttributeError):
        page_size = None
    modules, loadable = read_modules(params['sysfs_root'])
    enabled, active, error = unit_states(module, find_tool(module, params['systemctl_path']))
    runtime, runtime_units = active_runtime(active)
    return {
        'os_id': os_release.get('ID'),
        'os_version_id': os_release.get('VERSION_ID'),
        'os_release': os_release,
        'kernel_release': release,
        'page_size': page_size,
        'kernel_flavour_page_size': kernel_flavour_page_size(release),
        'ib_core_netns_mode': parse_netns_mode(
            read_text(join_root(params['sysfs_root'], 'module/ib_core/parameters/netns_mode'))),
        'modules': modules,
        'loadable_modules': loadable,
        'nvidia_imex': {'unit': IMEX_UNIT, 'enabled': enabled[IMEX_UNIT], 'active': active[IMEX_UNIT]},
        'container_runtime_units': dict((unit, active[unit]) for unit in RUNTIME_UNITS),
        'container_runtime': runtime,
        'container_runtime_active_units': runtime_units,
        'systemd_error': error,
    }
