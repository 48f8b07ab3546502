# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small helpers shared by the gpu_tray.cluster host modules.

Everything here is pure or touches only the path it is given, so tests can
point it at a simulated tray (a fixture sysfs/proc tree).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re
import socket

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import findings

# Environment for every external tool we parse: stable, untranslated output.
TOOL_ENVIRON = {'LC_ALL': 'C', 'LANG': 'C', 'LANGUAGE': 'C'}

_HEX_PKEY = re.compile(r'^(?:0[xX])?([0-9a-fA-F]{1,4})$')
_SIZE = re.compile(r'^\s*(\d+)\s*([kKmMgGtT])(?:i?[bB])?\s*$')
_SIZE_UNITS = {'k': 1, 'm': 1024, 'g': 1024 * 1024, 't': 1024 * 1024 * 1024}


def hostname():
    """Name of the host the module runs on, for failure messages."""
    try:
        return socket.gethostname() or 'unknown-host'
    except Exception:  # pragma: no cover - gethostname practically never fails
        return 'unknown-host'


def join_root(root, path):
    """Join an absolute kernel path (``/class/infiniband``) below ``root``.

    ``join_root('/sys', '/class/infiniband')`` gives ``/sys/class/infiniband``;
    ``join_root('/lab/sys', 'class/infiniband')`` gives
    ``/lab/sys/class/infiniband``.
    """
    return os.path.join(root, path.lstrip('/'))


def read_text(path, default=None):
    """Return the stripped content of a (sysfs) file or ``default``.

    sysfs attributes can exist and still fail to read (``rate`` on a port in
    a bad state returns EINVAL), so every OSError yields ``default``.
    """
    try:
        with open(path, 'r') as handle:
            return handle.read().strip()
    except (OSError, IOError, UnicodeDecodeError):
        return default


def list_dir(path):
    """Sorted entries of a directory, empty list when absent/unreadable."""
    try:
        return sorted(os.listdir(path))
    except (OSError, IOError):
        return []


def link_basename(path):
    """Basename of a symlink's target (``device`` -> ``0000:03:00.0``)."""
    try:
        target = os.readlink(path)
    except (OSError, IOError):
        return None
    return os.path.basename(target.rstrip('/')) or None


def natural_key(text):
    """Sort key that orders ``mlx5_10`` after ``mlx5_9`` and ``tray2`` before ``tray10`` (numbers compared as
    numbers). Total: a number and a text at the same place compare too (a number first), so any two names sort."""
    return [(0, int(part), '') if part.isdigit() else (1, 0, part) for part in re.split(r'(\d+)', str(text)) if part]


def to_int(text):
    """``int(text)``, or None when ``text`` is None or not an integer (sysfs counters, ids)."""
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def find_tool(module, path, opt_dirs=('/usr/sbin', '/usr/local/sbin', '/sbin')):
    """Resolve a tool option: an absolute/relative path must be an executable regular file,
    a bare name is looked up in PATH and ``opt_dirs``. None when not found."""
    if os.path.sep in path:
        return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
    return module.get_bin_path(path, required=False, opt_dirs=list(opt_dirs))


def parse_pkey_option(value):
    """Parse a user-supplied partition key: a string of 1-4 hex digits (``0xffff``, ``0x8123``, ``8123``) or a number.

    Returns the int value. An integer is the number it is: YAML turns an unquoted ``0x8123`` into 33059 (0x8123)
    and ``65535`` into 0xffff, so both mean what they say (an unquoted ``0123`` is YAML's octal 83, 0x0053). Raises
    ValueError with a readable message - naming the value, never an internal type name (Ansible passes tagged ints
    and strings) - on anything else: a bool, a number outside 1-0xffff, a string that is not 1-4 hex digits.
    """
    if isinstance(value, bool):
        raise ValueError('%s is not a partition key such as 0xffff or 0x8123' % ('true' if value else 'false'))
    if isinstance(value, int):
        number = int(value)
        if not 0 < number <= 0xffff:
            raise ValueError('%d is not a partition key: a key is 0x0001-0xffff (1-65535)' % number)
        return number
    if not isinstance(value, str):
        kind = 'a list' if isinstance(value, (list, tuple)) else 'a mapping' if isinstance(value, dict) else \
            'no value' if value is None else 'the value %r' % (value,)
        raise ValueError('got %s, not a partition key such as 0xffff or 0x8123' % kind)
    text = value.strip()
    match = _HEX_PKEY.match(text)
    if not match:
        raise ValueError('%r is not a hexadecimal partition key such as 0xffff or 0x8123' % (value,))
    return int(match.group(1), 16)


def format_pkey(value):
    """Kernel format for P_Keys: lower-case ``0x%04x``."""
    return '0x%04x' % value


def parse_size_kb(text):
    """Parse a page size (``2M``, ``1G``, ``16G``, ``2048kB``, ``64K``) to KiB.

    Raises ValueError on anything else (bytes without a unit are refused:
    they are far more often a typo than a real page size).
    """
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError('%r is not a page size such as 2M, 1G, 16G or 2048kB' % (text,))
    number = int(match.group(1))
    if number <= 0:
        raise ValueError('%r is not a positive page size' % (text,))
    return number * _SIZE_UNITS[match.group(2).lower()]


def format_size_kb(kb):
    """Human name of a page size in KiB: 2048 -> ``2M``, 1048576 -> ``1G``."""
    for unit, factor in (('T', 1024 ** 3), ('G', 1024 ** 2), ('M', 1024)):
        if kb % factor == 0:
            return '%d%s' % (kb // factor, unit)
    return '%dK' % kb


def host_paths_argument_spec(**options):
    """Argument spec of the options every host module takes (doc fragment gpu_tray.cluster.host_paths:
    sysfs_root, proc_root - so module_defaults for the host_checks action group apply to all of them),
    plus the module's own options."""
    spec = dict(
        sysfs_root=dict(type='path', default='/sys'),
        proc_root=dict(type='path', default='/proc'),
    )
    spec.update(options)
    return spec


def check_argument_spec(**options):
    """host_paths_argument_spec plus fail_on_error, the option of every check module."""
    spec = host_paths_argument_spec(**options)
    spec['fail_on_error'] = dict(type='bool', default=True)
    return spec


def report_failure(module, output):
    """A failed check: fail with output (its msg names the object, found, expected and fix; Ansible prints the host), or with
    fail_on_error=false (a report-only run) warn with the same msg and return the same output."""
    if module.params['fail_on_error']:
        module.fail_json(**output)
    module.warn(output['msg'])
    module.exit_json(**output)


def report_verdict(module, check, **output):
    """End a check module with a judge's record (module_utils.judges, module_utils.check_record): warn with its
    notes, return ``output`` with ``msg`` (the record's message), ``problems`` (its findings), ``fix`` (null when it
    passed) and ``checks`` (the record itself, the shape every phase reports), and fail when it failed (or only
    warn, with fail_on_error=false)."""
    for note in check['data'].get('notes') or []:
        module.warn(note)
    output.pop('notes', None)
    output.update(changed=False, msg=check['message'], problems=findings(check), fix=check['fix'] or None,
                  checks=[check])
    if check['status'] == 'failed':
        report_failure(module, output)
    module.exit_json(**output)
