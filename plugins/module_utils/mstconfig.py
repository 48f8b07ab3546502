# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parser for ``mstconfig [-e] -d <bdf> q`` (mstflint) output.

With ``-e`` the table has three value columns::

    Configurations:                              Default         Current         Next Boot
    *        NUM_OF_VFS                          16              16              8
             LINK_TYPE_P1                        IB(1)           IB(1)           IB(1)

Without ``-e`` only ``Next Boot`` is printed. A leading ``*`` marks a
parameter whose next-boot value differs from the default/current value.
Values are ``Label(n)`` (``True(1)``, ``IB(1)``, ``ETH(2)``) or plain numbers.

This module only reads. Nothing in gpu_tray.cluster writes NIC firmware or
runs ``mstfwreset``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import TOOL_ENVIRON

COLUMN_KEYS = {'default': 'default', 'current': 'current', 'next boot': 'next_boot'}
_VALUE = re.compile(r'^(?P<label>[A-Za-z_][\w\-]*)\((?P<num>-?(?:0x[0-9a-fA-F]+|\d+))\)$')
_INT = re.compile(r'^-?\d+$')
_HEX = re.compile(r'^0x[0-9a-fA-F]+$')
_ERROR = re.compile(r'^\s*-E-\s*(.*)$')
_PARAM = re.compile(r'^\s*(?P<star>\*)?\s*(?P<name>[A-Z][A-Z0-9_]*(?:\[\d+\])?)\s+(?P<rest>\S.*?)\s*$')


class MstconfigParseError(ValueError):
    pass


# mstconfig's own argument errors ("-E- invalid argument: -e" from an mstflint that has no -e).
_USAGE_ERROR = re.compile(r'invalid argument|unrecognized|unknown (?:flag|option)|usage', re.IGNORECASE)

EMPTY_TABLE = 'CONFIGURATIONS'
# Pseudo-parameter of the problem raised for ``-E-`` lines printed with (part of) a table.
QUERY_ERRORS = 'MSTCONFIG_ERRORS'


def error_lines(text):
    """The ``-E- ...`` messages of a tool output (stdout or stderr), in order."""
    out = []
    for line in (text or '').splitlines():
        match = _ERROR.match(line)
        if match and match.group(1).strip():
            out.append(match.group(1).strip())
    return out


def is_usage_error(messages):
    """True when mstconfig rejected its arguments (not the device)."""
    return any(_USAGE_ERROR.search(message) for message in messages)


def query_argv(tool, bdf, extended=True):
    """The read-only query: ``[tool, '-e', '-d', bdf, 'q']`` (without ``-e`` when not ``extended``)."""
    return [tool] + (['-e'] if extended else []) + ['-d', bdf, 'q']


def query_device(module, tool, bdf, extended=True):
    """Run ``mstconfig [-e] -d <bdf> q`` (an argv list, untranslated output) and return the raw record.

    An mstconfig that rejects its arguments (``-E- invalid argument: -e`` from an mstflint without ``-e``) is
    asked once more without ``-e``. The record: ``{'bdf', 'command', 'rc', 'stdout', 'stderr',
    'retried_without_e', 'usage_error'}`` - ``usage_error`` is the rejected call's ``-E-`` text when it was
    retried, else None. Only ``q`` (query) is ever run: nothing here writes NIC firmware.
    """
    def run(with_e):
        argv = query_argv(tool, bdf, with_e)
        rc, out, err = module.run_command(argv, environ_update=TOOL_ENVIRON)
        return {'bdf': bdf, 'command': argv, 'rc': rc, 'stdout': out or '', 'stderr': err or '',
                'retried_without_e': False, 'usage_error': None}

    record = run(extended)
    messages = error_lines(record['stdout']) + error_lines(record['stderr'])
    if extended and record['rc'] != 0 and is_usage_error(messages):
        rejected = '; '.join(messages)
        record = run(False)
        record.update(retried_without_e=True, usage_error=rejected)
    return record


def parse_value(raw):
    """``True(1)`` -> {'raw': 'True(1)', 'label': 'True', 'value': 1}.

    ``16`` -> label None, value 16; anything else keeps value None.
    """
    raw = raw.strip()
    match = _VALUE.match(raw)
    if match:
        num = match.group('num')
        return {'raw': raw, 'label': match.group('label'), 'value': int(num, 0)}
    if _INT.match(raw):
        return {'raw': raw, 'label': None, 'value': int(raw)}
    if _HEX.match(raw):
        return {'raw': raw, 'label': None, 'value': int(raw, 16)}
    return {'raw': raw, 'label': None, 'value': None}


_HEADER_WORD = re.compile(r'next\s+boot|\S+', re.IGNORECASE)


def _split_header(line):
    """``Configurations:   Default   Current   Next Boot`` -> column keys (any spacing, even one space)."""
    after = line.split(':', 1)[1]
    columns = []
    for match in _HEADER_WORD.finditer(after):
        name = ' '.join(match.group(0).lower().split())
        if name not in COLUMN_KEYS:
            raise MstconfigParseError('unknown mstconfig column %r in header %r' % (match.group(0), line.strip()))
        columns.append(COLUMN_KEYS[name])
    if not columns:
        # Some mstflint versions print a bare "Configurations:" header and a
        # single value column: that column is the next-boot value.
        columns = ['next_boot']
    return columns


def split_values(rest, count):
    """Split a parameter line's values into ``count`` columns.

    Columns are padded with two or more spaces, so a split there keeps a value
    that contains a single space; when a column is only one space away from
    the next (a long value) a split at any whitespace is right as long as no
    value contains a space. When neither gives ``count`` values the line is
    ambiguous: every column keeps the whole text (whose value is then
    unreadable, so a check on it fails) rather than a guessed alignment.
    """
    for pattern in (r'\s{2,}', r'\s+'):
        values = re.split(pattern, rest.strip())
        if len(values) == count:
            return values
    return [rest.strip()] * count


def parse_mstconfig(text):
    """Parse one device's query output.

    Returns ``{'device': {...header fields...}, 'columns': [...], 'extended': bool,
    'params': {NAME: {'modified': bool, 'default': v|None, 'current': v|None,
    'next_boot': v}}, 'errors': [...]}`` where each v is a :func:`parse_value` dict.
    Raises MstconfigParseError when no configuration table is found.
    """
    device = {}
    params = {}
    errors = []
    columns = None
    for line in text.splitlines():
        err = _ERROR.match(line)
        if err:
            errors.append(err.group(1).strip())
            continue
        if not line.strip():
            continue
        stripped = line.strip()
        if stripped.startswith('Configurations:'):
            columns = _split_header(stripped)
            continue
        if columns is None:
            if ':' in stripped and not stripped.startswith('Device #'):
                key, _sep, value = stripped.partition(':')
                device[key.strip().lower().replace(' ', '_')] = value.strip()
            continue
        match = _PARAM.match(line)
        if not match:
            # Trailing notes such as "The '*' shows parameters with next value ..."
            continue
        values = split_values(match.group('rest'), len(columns))
        entry = {'modified': bool(match.group('star')), 'default': None, 'current': None, 'next_boot': None}
        for column, raw in zip(columns, values):
            entry[column] = parse_value(raw)
        params[match.group('name')] = entry
    if columns is None:
        if errors:
            return {'device': device, 'columns': [], 'extended': False, 'params': {}, 'errors': errors}
        raise MstconfigParseError('no "Configurations:" table in mstconfig output')
    return {
        'device': device,
        'columns': columns,
        'extended': 'current' in columns,
        'params': params,
        'errors': errors,
    }


def _values(entry):
    """(column, parsed value) pairs worth checking: current and next boot."""
    out = []
    for column in ('current', 'next_boot'):
        if entry.get(column) is not None:
            out.append((column, entry[column]))
    return out


def _sriov_state(value):
    """True / False for ``True(1)``/``False(0)`` (or a bare 1/0), None when the value cannot be read."""
    label = (value['label'] or '').lower()
    if label in ('true', 'false'):
        return label == 'true'
    if value['label'] is None and value['value'] in (0, 1):
        return value['value'] == 1
    return None


def _link_label(value):
    """``IB``/``ETH`` for ``IB(1)``, ``ETH(2)`` or unlabelled 1/2 (as the sriov-network-operator reads them),
    None when the value cannot be read."""
    label = (value['label'] or '').upper()
    if 'ETH' in label:
        return 'ETH'
    if 'IB' in label:
        return 'IB'
    if value['label'] is None and value['value'] == 1:
        return 'IB'
    if value['label'] is None and value['value'] == 2:
        return 'ETH'
    return None


def _unreadable(param, column, value, expected, what):
    return {'param': param, 'column': column, 'found': value['raw'], 'expected': expected, 'unreadable': True,
            'detail': 'cannot read %s (%s): %r is not %s' % (param, column.replace('_', ' '), value['raw'], what)}


def _show(entry):
    parts = []
    for column in ('default', 'current', 'next_boot'):
        if entry.get(column) is not None:
            parts.append('%s=%s' % (column.replace('_', ' '), entry[column]['raw']))
    return ', '.join(parts)


def check_firmware(parsed, min_num_vfs=None, require_sriov=True, link_type=None):
    """Evaluate a parsed table. Returns a list of problem dicts (empty = ok).

    Each problem: {'param', 'column', 'found', 'expected', 'detail'}, plus
    ``'unreadable': True`` when the value could not be read. Missing parameters
    and values that cannot be read are problems too (a check that cannot see
    the value cannot pass), except missing LINK_TYPE_P*: a card without them
    has a fixed ("preconfigured") link type. A table without any parameter is
    one problem (param ``EMPTY_TABLE``) whatever the options, and so are
    ``-E-`` errors printed with a table (param ``QUERY_ERRORS``): the table
    may be partial.
    """
    params = parsed['params']
    problems = []
    if parsed.get('errors'):
        problems.append({'param': QUERY_ERRORS, 'column': None, 'found': '; '.join(parsed['errors']),
                         'expected': 'no -E- errors', 'unreadable': True,
                         'detail': 'mstconfig reported errors (%s): the table it printed may be partial, so '
                                   'its values cannot be trusted' % '; '.join(parsed['errors'])})
    if not params:
        # A header and nothing else: cut-off output, or a tool that cannot read this device's
        # configuration. Nothing was verified, so this cannot pass whatever the options say.
        return [{'param': EMPTY_TABLE, 'column': None, 'found': 'no parameters',
                 'expected': 'the configuration parameters', 'unreadable': True,
                 'detail': 'mstconfig printed a "Configurations:" table without parameters (output cut off, or '
                           'the tool cannot read this device\'s configuration)'}] + problems
    if require_sriov:
        entry = params.get('SRIOV_EN')
        if entry is None:
            problems.append({'param': 'SRIOV_EN', 'column': None, 'found': None, 'expected': 'True(1)',
                             'detail': 'SRIOV_EN is not reported by the tool'})
        else:
            for column, value in _values(entry):
                state = _sriov_state(value)
                if state is None:
                    problems.append(_unreadable('SRIOV_EN', column, value, 'True(1)', 'True(n)/False(n) or 1/0'))
                elif not state:
                    problems.append({'param': 'SRIOV_EN', 'column': column, 'found': value['raw'],
                                     'expected': 'True(1)', 'detail': 'SR-IOV disabled (%s)' % _show(entry)})
    if min_num_vfs is not None:
        entry = params.get('NUM_OF_VFS')
        if entry is None:
            problems.append({'param': 'NUM_OF_VFS', 'column': None, 'found': None,
                             'expected': '>= %d' % min_num_vfs, 'detail': 'NUM_OF_VFS is not reported by the tool'})
        else:
            for column, value in _values(entry):
                if value['value'] is None:
                    problems.append(_unreadable('NUM_OF_VFS', column, value, '>= %d' % min_num_vfs, 'a number'))
                elif value['value'] < min_num_vfs:
                    problems.append({'param': 'NUM_OF_VFS', 'column': column, 'found': value['raw'],
                                     'expected': '>= %d' % min_num_vfs,
                                     'detail': 'NUM_OF_VFS below %d (%s)' % (min_num_vfs, _show(entry))})
    if link_type:
        for name in sorted(params):
            if not re.match(r'^LINK_TYPE_P\d+$', name):
                continue
            entry = params[name]
            for column, value in _values(entry):
                found = _link_label(value)
                if found is None:
                    problems.append(_unreadable(name, column, value, link_type.upper(), 'IB(n)/ETH(n) or 1/2'))
                elif found != link_type.upper():
                    problems.append({'param': name, 'column': column, 'found': value['raw'],
                                     'expected': link_type.upper(),
                                     'detail': 'link type is not %s (%s)' % (link_type.upper(), _show(entry))})
    return problems


def summarise(parsed):
    """Flat view for RETURN: NAME -> {default, current, next_boot, modified} as raw strings."""
    out = {}
    for name, entry in parsed['params'].items():
        out[name] = {
            'modified': entry['modified'],
            'default': entry['default']['raw'] if entry['default'] else None,
            'current': entry['current']['raw'] if entry['current'] else None,
            'next_boot': entry['next_boot']['raw'] if entry['next_boot'] else None,
        }
    return out
