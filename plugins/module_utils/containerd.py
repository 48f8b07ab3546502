# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""containerd root config / drop-in version checks (NVIDIA/aicr#1688).

containerd refuses to start when an imported drop-in declares a higher
``version`` than the root config (``drop-in config version 4 higher than root
config version 2``). The NVIDIA container toolkit writes its drop-in
(``99-nvidia.toml``) at the version of the config it read: with
``RUNTIME_CONFIG_SOURCE`` starting with ``command`` it reads
``containerd config dump``, which containerd 2.2+ migrates to version 4.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import glob
import os
import traceback

TOML_IMPORT_ERROR = None
try:
    import tomllib as _toml  # Python >= 3.11
except ImportError:
    try:
        import tomli as _toml  # pylint: disable=import-error
    except ImportError:
        _toml = None
        TOML_IMPORT_ERROR = traceback.format_exc()

HAS_TOML = _toml is not None

# Version containerd's `config dump` emits on containerd 2.2/2.3.
DUMP_VERSION = 4
TOOLKIT_DEFAULT_SOURCE = 'command,file'


class ContainerdConfigError(ValueError):
    pass


def loads(text, path='<string>'):
    if _toml is None:
        raise ContainerdConfigError('no TOML parser available (Python >= 3.11 tomllib or the tomli package)')
    try:
        return _toml.loads(text)
    except Exception as exc:  # tomllib.TOMLDecodeError, kept generic for tomli
        raise ContainerdConfigError('%s is not valid TOML: %s' % (path, exc))


def load_file(path):
    try:
        with open(path, 'rb') as handle:
            raw = handle.read()
    except (OSError, IOError) as exc:
        raise ContainerdConfigError('cannot read %s: %s' % (path, exc))
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise ContainerdConfigError('%s is not UTF-8: %s' % (path, exc))
    return loads(text, path)


def config_version(data, path='<string>'):
    """The ``version`` key as int, or None when absent.

    containerd reads ``version`` into an integer field, so anything else
    (``version = "2"``) stops it from loading the file: ContainerdConfigError.
    """
    if 'version' not in data:
        return None
    value = data['version']
    if isinstance(value, bool) or not isinstance(value, int):
        raise ContainerdConfigError('%s: version = %r is not an integer; containerd cannot load it (write e.g. '
                                    'version = 3, without quotes)' % (path, value))
    return value


def effective_version(version):
    """The version containerd works with: a missing (or 0) version is the version 1 format."""
    return 1 if not version else version


def config_imports(data, path='<string>'):
    """The ``imports`` globs. containerd reads them into a list of strings; anything else is an error."""
    if 'imports' not in data:
        return []
    value = data['imports']
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ContainerdConfigError('%s: imports = %r is not a list of strings; containerd cannot load it (write '
                                    'e.g. imports = ["/etc/containerd/conf.d/*.toml"])' % (path, value))
    return list(value)


def under_root(root, path):
    """``path`` as seen by a host whose file system is mounted at ``root`` (``/`` gives ``path`` itself)."""
    return os.path.join(root or '/', path.lstrip('/')) if os.path.isabs(path) else path


def resolve_imports(imports, root_dir, root='/'):
    """Expand import globs like containerd: relative paths are relative to the importing file's dir
    (``root_dir``, a real path); absolute ones are paths of the host whose file system is at ``root``."""
    files = []
    for pattern in imports:
        full = under_root(root, pattern) if os.path.isabs(pattern) else os.path.join(root_dir, pattern)
        for match in sorted(glob.glob(full)):
            if os.path.isfile(match) and match not in files:
                files.append(match)
    return files


def load_imports(config_path, imports, root='/'):
    """Follow ``imports`` recursively, like containerd's LoadConfig: breadth first, each file once.

    ``config_path`` is the real path of the root config; absolute imports resolve under ``root``.

    Returns a list of ``{'path', 'imported_by', 'version', 'error'}`` in load
    order. A file that cannot be read/parsed gets ``error`` (its own imports
    are then unknown); a file already loaded (a cycle, or the root itself) is
    not loaded again.
    """
    config = os.path.abspath(config_path)
    loaded = set([config])
    pending = [(path, config) for path in resolve_imports(imports, os.path.dirname(config), root)]
    out = []
    while pending:
        path, parent = pending.pop(0)
        path = os.path.abspath(path)
        if path in loaded:
            continue
        loaded.add(path)
        entry = {'path': path, 'imported_by': parent, 'version': None, 'error': None}
        nested = []
        try:
            data = load_file(path)
            entry['version'] = config_version(data, path)
            nested = config_imports(data, path)
        except ContainerdConfigError as exc:
            entry['error'] = str(exc)
        out.append(entry)
        pending.extend((child, path) for child in resolve_imports(nested, os.path.dirname(path), root))
    return out


def parse_source(value):
    """``"command,file=/etc/containerd/config.toml"`` -> ['command', 'file=...']."""
    if value is None:
        value = TOOLKIT_DEFAULT_SOURCE
    return [part.strip() for part in str(value).split(',') if part.strip()]


def toolkit_reads_command(sources):
    """True when the toolkit's first config source is ``command``."""
    return bool(sources) and sources[0].split('=', 1)[0] == 'command'


def inspect(config_path, dropin_dir=None, runtime_config_source=None, root='/'):
    """Read the root and drop-ins; return (result, errors, warnings).

    ``root`` is where the file system of the host the config belongs to is (``/``, or a mounted image
    or a test tree): ``config_path``, ``dropin_dir`` and every absolute ``imports`` glob are paths of
    that host and are read under ``root``; the returned paths are the real ones read.

    Raises ContainerdConfigError when the root config cannot be read/parsed,
    or its ``version``/``imports`` have a type containerd cannot load.
    """
    config_path = under_root(root, config_path)
    data = load_file(config_path)
    root_version = config_version(data, config_path)
    imports = config_imports(data, config_path)
    root_effective = effective_version(root_version)
    root_shown = root_version if root_version is not None else '1 (no version key)'
    loaded = load_imports(config_path, imports, root)
    imported = [entry['path'] for entry in loaded]
    in_dir = []
    if dropin_dir:
        dropin_dir = under_root(root, dropin_dir)
        in_dir = sorted(os.path.abspath(path) for path in glob.glob(os.path.join(dropin_dir, '*.toml'))
                        if os.path.isfile(path))
    errors = []
    warnings = []
    dropins = []
    for entry in loaded:
        entry = dict(entry, imported=True)
        dropins.append(entry)
        if entry['error']:
            errors.append(entry['error'])
            continue
        version = effective_version(entry['version'])
        if version > root_effective:
            errors.append('drop-in %s declares version %s, higher than root %s version %s: containerd '
                          'refuses to start ("drop-in config version %s higher than root config version %s")'
                          % (entry['path'], entry['version'], config_path, root_shown, entry['version'],
                             root_effective))
    for path in in_dir:
        if path in imported:
            continue
        entry = {'path': path, 'imported': False, 'imported_by': None, 'version': None, 'error': None}
        try:
            entry['version'] = config_version(load_file(path), path)
        except ContainerdConfigError as exc:
            entry['error'] = str(exc)
            errors.append(str(exc))
        dropins.append(entry)
        if not entry['error']:
            warnings.append('%s is not matched by the root config imports %s: containerd does not read it'
                            % (path, imports or '(none)'))
    sources = parse_source(runtime_config_source)
    reads_command = toolkit_reads_command(sources)
    if root_version is None:
        warnings.append('%s has no version key: containerd treats it as version 1, and any drop-in with a '
                        'higher version stops containerd from starting' % config_path)
    if reads_command and root_effective < DUMP_VERSION:
        warnings.append('%s is version %s and the GPU Operator toolkit would read its source config with '
                        '"command" (RUNTIME_CONFIG_SOURCE=%s): containerd config dump migrates to version %s, '
                        'so the toolkit writes a version %s drop-in that containerd refuses. Set the toolkit '
                        'env RUNTIME_CONFIG_SOURCE=file (NVIDIA/aicr#1688).'
                        % (config_path, root_shown, ','.join(sources), DUMP_VERSION, DUMP_VERSION))
    result = {
        'config_path': config_path,
        'version': root_version,
        'imports': imports,
        'dropins': dropins,
        'runtime_config_source': sources,
        'toolkit_reads_command': reads_command,
    }
    return result, errors, warnings
