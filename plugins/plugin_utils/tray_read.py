# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a tray read asks for, whether an earlier read answers it, and what a read says about a role's files.

A request is a dict of M(gpu_tray.cluster.tray_state) options. The ``tray_plan`` action keeps the run's read of a
tray (memoised per host and run) and reuses it for every request it covers (:func:`covers`); a request it does not
cover is read fresh together with everything the kept read held (:func:`merge`), so the memo only grows.

Files: the preparing roles write their files with ansible.builtin.blockinfile (markers around the role's block).
Whether a file already is what blockinfile would leave (:func:`block_current`) is decided here, from the file's
content in the read, so that on a prepared tray the write task is skipped without a module call - the one-read
re-run (docs/performance.md). blockinfile itself still decides and reports when it does run.

Directories: blockinfile creates a missing directory with the file. The way back removes such a directory too, and
only such a one: a role that creates a file's directory says so in the file's block (:func:`with_created_dir`, a
comment line that stays there on every later run), and :func:`restore_action` names the directory for removal when
the file goes whole, its block says the role created the directory, and nothing else is in it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import posixpath

from ansible_collections.gpu_tray.cluster.plugins.module_utils.tray import GRUB_DEFAULTS, MODPROBE_MODULES_DEFAULT

ROOTS = ('sysfs_root', 'proc_root')
LISTS = ('files', 'units', 'modprobe_dirs', 'modprobe_modules', 'sysctls', 'rails')
SCALARS = ('mstconfig_path', 'runtime_config_source')
OPTIONS = ROOTS + LISTS + SCALARS + ('grub', 'query_firmware')
# The GRUB chain is read with this one token in place of the drop-in's arguments (tray_state grub.args): the read
# then answers any set of arguments - the planner puts them in (grub_chain) - and does not depend on the intent.
ARGS_TOKEN = '@gpu-tray-args@'


class RequestError(ValueError):
    """A request that cannot be read (unknown option, two GRUB drop-ins)."""


def _grub(value):
    if not value:
        return None
    out = dict((key, val) for key, val in GRUB_DEFAULTS.items() if key != 'args')
    out.update(dict((key, val) for key, val in value.items() if val is not None and key != 'args'))
    return out


def normalise(request):
    """A request with defaults filled in and empty parts dropped (``{}`` asks only for the always-read parts)."""
    if request is None:
        return {}
    if not isinstance(request, dict):
        raise RequestError('a tray read request must be a dict, got %s' % type(request).__name__)
    unknown = sorted(set(request) - set(OPTIONS))
    if unknown:
        raise RequestError('unknown tray read option %s (known: %s)' % (', '.join(unknown), ', '.join(OPTIONS)))
    out = {}
    for key in ROOTS + SCALARS:
        if request.get(key) is not None:
            out[key] = request[key]
    for key in LISTS:
        if request.get(key) is not None:
            out[key] = list(request[key])
    if out.get('modprobe_dirs') is not None and out.get('modprobe_modules') is None:
        out['modprobe_modules'] = list(MODPROBE_MODULES_DEFAULT)
    if request.get('grub'):
        out['grub'] = _grub(request['grub'])
    if request.get('query_firmware'):
        out['query_firmware'] = True
    return out


def merge(first, other):
    """One request that reads everything both ask for. Two different roots, scalars or GRUB drop-ins cannot be read
    in one call: RequestError."""
    first, other = normalise(first), normalise(other)
    out = dict(first)
    for key in ROOTS + SCALARS:
        if key in other:
            if key in out and out[key] != other[key]:
                raise RequestError('%s differs (%s, %s)' % (key, out[key], other[key]))
            out[key] = other[key]
    for key in LISTS:
        if key in other:
            merged = list(out.get(key) or [])
            merged += [item for item in other[key] if item not in merged]
            out[key] = merged
    if other.get('grub'):
        if out.get('grub') and out['grub'] != other['grub']:
            raise RequestError('two GRUB drop-ins (%s, %s)' % (out['grub']['dropin'], other['grub']['dropin']))
        out['grub'] = other['grub']
    if other.get('query_firmware'):
        out['query_firmware'] = True
    return out


def without_firmware(request):
    """The request without the rails' firmware query (query_firmware, rails, mstconfig_path)."""
    return dict((key, value) for key, value in normalise(request).items()
                if key not in ('query_firmware', 'rails', 'mstconfig_path'))


def covers(done, wanted):
    """True when a read made with request ``done`` answers request ``wanted``."""
    done, wanted = normalise(done), normalise(wanted)
    for key in ROOTS + SCALARS:
        if key in wanted and wanted[key] != done.get(key):
            return False
    for key in LISTS:
        if key in wanted and not set(wanted[key]) <= set(done.get(key) or []):
            return False
    if wanted.get('grub') and wanted['grub'] != done.get('grub'):
        return False
    if wanted.get('query_firmware') and not done.get('query_firmware'):
        return False
    return True


def module_args(request):
    """The tray_state module options of a request (the GRUB chain read with ARGS_TOKEN)."""
    args = normalise(request)
    if args.get('grub'):
        args['grub'] = dict(args['grub'], args=[ARGS_TOKEN])
    return args


def _marker_lines(marker):
    return marker.replace('{mark}', 'BEGIN'), marker.replace('{mark}', 'END')


def block_current(entry, block, marker, mode='0644', uid=0, gid=0):
    """True when ``entry`` (one ``files[path]`` of a read) already is what ansible.builtin.blockinfile with this
    block and marker (create, mode, root owner) would leave. An entry that could not be read is never current."""
    if not isinstance(entry, dict) or entry.get('error') or not entry.get('exists') or not entry.get('is_file'):
        return False
    content = entry.get('content')
    if content is None or (str(entry.get('mode')), entry.get('uid'), entry.get('gid')) != (mode, uid, gid):
        return False
    lines = content.splitlines()
    begin, end = _marker_lines(marker)
    if lines.count(begin) != 1 or lines.count(end) != 1:
        return False
    first, last = lines.index(begin), lines.index(end)
    return first < last and lines[first + 1:last] == (block or '').splitlines() and content.endswith('\n')


def directories(paths):
    """The directories of ``paths`` (a role's files), in order, each once: read with the files, they tell whether the
    role creates a directory (:func:`with_created_dir`) and whether its way back may remove it."""
    out = []
    for path in paths:
        directory = posixpath.dirname(path)
        if directory not in out:
            out.append(directory)
    return out


def created_dir_line(path):
    """The comment line of a role's block that records that the role created the directory of ``path``."""
    return '# gpu_tray.cluster created %s/ for this file: restore_trays removes the directory with it' % (
        posixpath.dirname(path))


def with_created_dir(state, path, block, marker):
    """``block`` as the role writes it into ``path``: after :func:`created_dir_line` when the role creates the file's
    directory (the read found it absent) or did so on an earlier run (the file's block carries the line), so the
    block stays the same on every later run and the way back knows the directory is the role's."""
    files = state.get('files') or {}
    directory = files.get(posixpath.dirname(path))
    line = created_dir_line(path)
    created = isinstance(directory, dict) and directory.get('exists') is False and not directory.get('error')
    if created or line in _block_lines(files.get(path), marker):
        return '%s\n%s' % (line, block)
    return block


def _block_lines(entry, marker):
    if not isinstance(entry, dict) or not entry.get('exists') or entry.get('content') is None:
        return []
    lines = entry['content'].splitlines()
    begin, end = _marker_lines(marker)
    if begin not in lines or end not in lines or lines.index(begin) > lines.index(end):
        return []
    return lines[lines.index(begin) + 1:lines.index(end)]


def restore_action(entry, marker, directory=None, path=None):
    """How to take a role's block out of a file: ``{'action', 'block', 'directory'}`` - ``none`` (absent, or no block
    of the role: never touched), ``remove_file`` (nothing but the block and blank lines: the role created it),
    ``remove_block`` (other lines stay), ``unreadable``; ``block`` the lines between the markers; ``directory`` the
    file's directory to remove after the file - only when the file goes whole, its block records that the role
    created the directory and the directory's read (``directory``, the ``files`` entry of ``path``'s directory) lists
    nothing else - else None."""
    out = {'action': 'none', 'block': [], 'directory': None}
    if not isinstance(entry, dict) or entry.get('error'):
        return dict(out, action='unreadable')
    if not entry.get('exists'):
        return out
    if not entry.get('is_file') or entry.get('content') is None:
        return dict(out, action='unreadable')
    lines = entry['content'].splitlines()
    begin, end = _marker_lines(marker)
    if begin not in lines or end not in lines or lines.index(begin) > lines.index(end):
        return out
    first, last = lines.index(begin), lines.index(end)
    others = [line for line in lines[:first] + lines[last + 1:] if line.strip()]
    out.update(action='remove_block' if others else 'remove_file', block=lines[first + 1:last])
    if (out['action'] == 'remove_file' and path and created_dir_line(path) in out['block']
            and isinstance(directory, dict) and directory.get('is_dir') and not directory.get('error')
            and directory.get('entries') == [posixpath.basename(path)]):
        out['directory'] = posixpath.dirname(path)
    return out


def read_errors(state, files=()):
    """The texts of every part of a read that could not be read (units, GRUB chain, grub.cfg, cmdline, files)."""
    errors = []
    for part, key in (('units', 'error'), ('grub', 'simulation_error'), ('grub', 'cfg_error'), ('cmdline', 'error')):
        text = (state.get(part) or {}).get(key)
        if text:
            errors.append(text)
    for path in files:
        text = ((state.get('files') or {}).get(path) or {}).get('error')
        if text:
            errors.append(text)
    return errors
