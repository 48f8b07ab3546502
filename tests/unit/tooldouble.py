# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tool doubles (mstconfig, systemctl) for module tests: executables that replay fixtures and log argv."""

import json
import os
import stat
import sys

from unithelpers import fixture_path

_MSTCONFIG = r'''#!%(python)s
import json, os, sys
LOG = %(log)r
TABLE = %(table)r
NO_E = %(no_e)r
ERRORS = getattr(sys, %(error_stream)r)
with open(LOG, 'a') as handle:
    handle.write(json.dumps({'argv': sys.argv[1:], 'LC_ALL': os.environ.get('LC_ALL')}) + '\n')
args = sys.argv[1:]
extended = '-e' in args
if NO_E and extended:
    # an mstflint without -e: its argument parser reports the flag (mlxcfg err() prints to stdout)
    sys.stdout.write('-E- invalid argument: -e\n')
    sys.exit(1)
bdf = args[args.index('-d') + 1] if '-d' in args else None
if bdf not in TABLE:
    ERRORS.write('-E- Failed to open the device\n')
    sys.exit(3)
entry = TABLE[bdf]
name = entry['e'] if extended else entry['plain']
with open(name) as handle:
    sys.stdout.write(handle.read())
sys.exit(entry.get('rc', 0))
'''

_SYSTEMCTL = r'''#!%(python)s
import json, os, sys
LOG = %(log)r
STATES = %(states)r
with open(LOG, 'a') as handle:
    handle.write(json.dumps({'argv': sys.argv[1:], 'LC_ALL': os.environ.get('LC_ALL')}) + '\n')
verb, units = sys.argv[1], sys.argv[2:]
if STATES is None:
    sys.stderr.write('System has not been booted with systemd as init system (PID 1). Can\'t operate.\n')
    sys.stderr.write('Failed to connect to bus: Host is down\n')
    sys.exit(1)
if verb == 'show':
    # systemctl show --property=A,B u1 u2: one block of the asked properties per unit, blank line between
    props = [p for arg in units if arg.startswith('--property=') for p in arg.split('=', 1)[1].split(',')]
    blocks = []
    for unit in [u for u in units if not u.startswith('-')]:
        known = STATES.get('show', {}).get(unit, {'Id': unit, 'LoadState': 'not-found', 'UnitFileState': '',
                                                    'ActiveState': 'inactive', 'FragmentPath': '', 'MainPID': '0'})
        blocks.append(''.join('%%s=%%s\n' %% (p, known.get(p, '')) for p in props))
    sys.stdout.write('\n'.join(blocks))
    sys.exit(0)
rc = 0
for unit in units:
    state = STATES.get(verb, {}).get(unit)
    if state is None:
        if verb == 'is-enabled':
            sys.stderr.write('Failed to get unit file state for %%s: No such file or directory\n' %% unit)
            rc = 1
            continue
        state = 'inactive'
    sys.stdout.write(state + '\n')
    if state not in ('active', 'enabled'):
        rc = rc or 3
sys.exit(rc)
'''


def _install(path, text):
    with open(path, 'w') as handle:
        handle.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def mstconfig(directory, table, no_e=False, error_stream='stdout'):
    """``table``: bdf -> {'e': fixture name, 'plain': fixture name, 'rc': int}. Returns (tool path, log path).

    An address not in ``table`` gets ``-E- Failed to open the device`` (rc 3) on ``error_stream``;
    ``no_e`` plays an mstflint that rejects ``-e``.
    """
    resolved = {}
    for bdf, entry in table.items():
        resolved[bdf] = dict(entry)
        for key in ('e', 'plain'):
            resolved[bdf][key] = fixture_path('mstconfig', entry.get(key, entry.get('e')))
    log = os.path.join(directory, 'mstconfig.log')
    tool = _install(os.path.join(directory, 'mstconfig'),
                    _MSTCONFIG % {'python': sys.executable, 'log': log, 'table': resolved, 'no_e': no_e,
                                  'error_stream': error_stream})
    return tool, log


def systemctl(directory, states):
    """``states``: {'is-enabled': {unit: state}, 'is-active': {unit: state}} or None (no systemd)."""
    log = os.path.join(directory, 'systemctl.log')
    tool = _install(os.path.join(directory, 'systemctl'),
                    _SYSTEMCTL % {'python': sys.executable, 'log': log, 'states': states})
    return tool, log


def read_log(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]
