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


# SMBIOS identity under sysfs_root/class/dmi/id: the system serial is what a BMC's Redfish ComputerSystem reports as
# SerialNumber (the BMC check finds the tray's system by it). product_serial is readable by root only.
DMI_FIELDS = ('product_serial', 'product_uuid', 'product_name', 'sys_vendor', 'board_serial', 'chassis_serial')
# what firmware writes when the vendor left a field empty
_DMI_PLACEHOLDERS = frozenset(['', 'none', 'not specified', 'not applicable', 'to be filled by o.e.m.',
                               'default string', 'system serial number', '0', '0123456789', 'n/a'])


def parse_dmi_value(text):
    """A DMI field's value, or None for an unreadable or placeholder one."""
    if text is None:
        return None
    value = text.strip()
    if value.lower() in _DMI_PLACEHOLDERS:
        return None
    return value


def read_dmi(sysfs_root):
    """{field: value or None} of :data:`DMI_FIELDS` under ``sysfs_root/class/dmi/id``."""
    base = join_root(sysfs_root, 'class/dmi/id')
    return dict((field, parse_dmi_value(read_text(os.path.join(base, field)))) for field in DMI_FIELDS)


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
        'dmi': read_dmi(params['sysfs_root']),
    }


# What the preparing roles read (tray_state options files, units, grub, modprobe_*, sysctls). Pure parsers
# first, then the readers; every reader reports what it could not read instead of failing.

# The tray_state options that ask for more than the always-read parts: the module echoes them in `requested`
# (plugin_utils/tray_read.py merges requests and tells whether a read answered one, for the tray_plan action).
REQUEST_ROOTS = ('sysfs_root', 'proc_root')
REQUEST_LISTS = ('files', 'units', 'modprobe_dirs', 'modprobe_modules', 'sysctls')
REQUEST_OPTIONS = REQUEST_ROOTS + REQUEST_LISTS + ('grub',)
# defaults of the module's grub suboptions and of modprobe_modules
GRUB_DEFAULTS = {'default_file': '/etc/default/grub', 'args': [], 'cfg': '/boot/grub/grub.cfg'}
MODPROBE_MODULES_DEFAULT = ('ib_core',)
# systemctl show properties read for each requested unit
SHOW_PROPERTIES = ('Id', 'LoadState', 'UnitFileState', 'ActiveState', 'FragmentPath', 'MainPID')
# Role-owned files are small; a bigger file is returned without content (checksum only)
MAX_FILE_BYTES = 65536
# names a directory's read lists at most (a role asks for the directories of its own files)
MAX_DIR_ENTRIES = 256
# update-grub's order of the GRUB defaults: /etc/default/grub, then /etc/default/grub.d/*.cfg sorted (C locale),
# with the role's drop-in in its place (simulated: works before the drop-in is written and in check mode).
# Prints after each file "<file><TAB><GRUB_CMDLINE_LINUX> <GRUB_CMDLINE_LINUX_DEFAULT>". Read-only; sources
# what update-grub would source.
GRUB_SIMULATION = r'''default_file=$1; dropin_dir=$2; ours=$3; shift 3
wanted="$*"
exec 3>&1 >/dev/null 2>&1
GRUB_CMDLINE_LINUX=""
GRUB_CMDLINE_LINUX_DEFAULT=""
emit() { printf '%s\t%s %s\n' "$1" "$GRUB_CMDLINE_LINUX" "$GRUB_CMDLINE_LINUX_DEFAULT" >&3; }
if [ -f "$default_file" ]; then . "$default_file"; fi
emit "$default_file"
list=$( { for x in "$dropin_dir"/*.cfg; do [ -e "$x" ] && printf '%s\n' "$x"; done; printf '%s\n' "$ours"; } | LC_ALL=C sort -u )
set -f; saved_ifs=$IFS; IFS='
'
for x in $list; do
  IFS=$saved_ifs; set +f
  if [ "$x" = "$ours" ]; then GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} $wanted"; else . "$x"; fi
  emit "$x"
done
'''
_LINUX_LINE = re.compile(r'^\s*linux\s')
_STACK_LINE = re.compile(r'^Max stack size\s+(\S+)\s+(\S+)', re.M)
_SYSCTL_KEY = re.compile(r'^[A-Za-z0-9_.\-/]+$')


def parse_systemctl_show(stdout):
    """``systemctl show --property=... u1 u2`` -> one dict per unit (blocks separated by an empty line)."""
    units = []
    for block in re.split(r'\n\s*\n', stdout or ''):
        props = {}
        for line in block.splitlines():
            key, sep, value = line.partition('=')
            if sep and re.match(r'^[A-Za-z]+$', key):
                props[key] = value
        if props:
            units.append(props)
    return units


def parse_stack_limit(text):
    """``/proc/<pid>/limits`` -> [soft, hard] of ``Max stack size`` (strings as printed), None when absent."""
    match = _STACK_LINE.search(text or '')
    return [match.group(1), match.group(2)] if match else None


def parse_grub_steps(stdout):
    """GRUB_SIMULATION output -> [{'file': path, 'tokens': [arg, ...]}] in the order update-grub sources them."""
    steps = []
    for line in (stdout or '').splitlines():
        if '\t' not in line:
            continue
        path, _sep, rest = line.partition('\t')
        steps.append({'file': path, 'tokens': rest.split()})
    return steps


def grub_linux_lines(text):
    """The ``linux`` lines of a grub.cfg (the kernel command lines of its entries), stripped."""
    return [line.strip() for line in (text or '').splitlines() if _LINUX_LINE.match(line)]


def modprobe_option_lines(text, modules):
    """``options <module> ...`` lines of a modprobe.d file for the given modules (comments and others skipped)."""
    wanted = set(modules)
    found = []
    for line in (text or '').splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0] == 'options' and fields[1] in wanted:
            found.append(line)
    return found


def read_file_state(path):
    """exists/mode/uid/gid/size/content of one file; content None when it is bigger than MAX_FILE_BYTES. A directory:
    ``is_dir`` and its ``entries`` (names, sorted; the first MAX_DIR_ENTRIES)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        if getattr(exc, 'errno', None) == 2:
            return {'exists': False, 'error': None}
        return {'exists': None, 'error': 'cannot stat %s: %s' % (path, exc)}
    out = {'exists': True, 'error': None, 'mode': '%04o' % (info.st_mode & 0o7777), 'uid': info.st_uid,
           'gid': info.st_gid, 'size': info.st_size, 'is_file': os.path.isfile(path), 'content': None,
           'is_dir': os.path.isdir(path)}
    if out['is_dir']:
        try:
            out['entries'] = sorted(os.listdir(path))[:MAX_DIR_ENTRIES]
        except OSError as exc:
            out['error'] = 'cannot list %s: %s' % (path, exc)
    if out['is_file'] and info.st_size <= MAX_FILE_BYTES:
        try:
            with open(path, 'rb') as handle:
                out['content'] = handle.read().decode('utf-8', 'backslashreplace')
        except (OSError, IOError) as exc:
            out['error'] = 'cannot read %s: %s' % (path, exc)
    return out


def read_files(paths):
    return dict((path, read_file_state(path)) for path in paths)


def read_sysctls(proc_root, keys):
    """Current values under proc_root/sys (whitespace runs as one space, like sysctl prints), None when absent."""
    out = {}
    for key in keys:
        if not _SYSCTL_KEY.match(key) or '..' in key:
            out[key] = None
            continue
        text = read_text(join_root(proc_root, 'sys/' + key.replace('.', '/')))
        out[key] = ' '.join(text.split()) if text is not None else None
    return out


def read_modprobe(dirs, modules):
    """``options`` lines for ``modules`` in every file under the modprobe.d directories, as ``file:line`` (grep -H)."""
    found = []
    for directory in dirs:
        for base, subdirs, names in os.walk(directory):
            subdirs.sort()
            for name in sorted(names):
                path = os.path.join(base, name)
                found += ['%s:%s' % (path, line) for line in modprobe_option_lines(read_text(path), modules)]
    return {'dirs': list(dirs), 'modules': list(modules), 'options': found}


def read_units(module, tool, units, proc_root):
    """systemctl show of the units (SHOW_PROPERTIES) and the stack limit of each running main process."""
    out = {'error': None, 'units': {}}
    if not units:
        return out
    if tool is None:
        out['error'] = 'systemctl not found'
        return out
    rc, stdout, stderr = module.run_command([tool, 'show', '--property=' + ','.join(SHOW_PROPERTIES)] + list(units),
                                            environ_update=TOOL_ENVIRON)
    blocks = parse_systemctl_show(stdout)
    if rc != 0 or len(blocks) != len(units):
        out['error'] = ('systemctl show %s: rc %d, %d of %d units read: %s'
                        % (' '.join(units), rc, len(blocks), len(units), (stderr or '').strip()[:300]))
        return out
    for unit, props in zip(units, blocks):
        props = dict(props)
        pid = props.get('MainPID') or '0'
        props['stack_limit'] = None
        if pid.isdigit() and pid != '0':
            props['stack_limit'] = parse_stack_limit(read_text(join_root(proc_root, '%s/limits' % pid)))
        out['units'][unit] = props
    return out


def read_grub(module, grub):
    """The GRUB chain simulated with the role's drop-in in place, and the linux lines of the generated grub.cfg."""
    out = {'steps': [], 'simulation_error': None, 'cfg': grub['cfg'], 'cfg_exists': False, 'cfg_linux': [],
           'cfg_error': None, 'args': list(grub['args'])}
    argv = (['/bin/sh', '-c', GRUB_SIMULATION, 'gpu-tray-grub-check', grub['default_file'],
             os.path.dirname(grub['dropin']), grub['dropin']] + list(grub['args']))
    rc, stdout, stderr = module.run_command(argv, environ_update=TOOL_ENVIRON)
    out['steps'] = parse_grub_steps(stdout)
    if rc != 0 or not out['steps']:
        out['simulation_error'] = 'sourcing the GRUB defaults failed (rc %d): %s' % (rc, (stderr or '').strip()[:300])
    text = read_text(grub['cfg'])
    out['cfg_exists'] = text is not None
    if text is None and os.path.exists(grub['cfg']):
        out['cfg_error'] = 'cannot read %s' % grub['cfg']
    out['cfg_linux'] = grub_linux_lines(text)
    return out
