# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One judge per host check, for every phase: the verdict on what was already read from a tray.

Pure functions. The check modules (ib_pkey_check, nic_firmware, hugepage_check, kernel_cmdline,
containerd_config) read the tray and call them; on the controller, with what one tray_state call read, the
preflight (plugin_utils/preflight.py), the preparing roles' planners, the rolling reboot's verification and the
validation's trays phase (plugin_utils/tray_validation.py) call them. A tray judged anywhere gets the same verdict in
the same words, with the same fix, as the same record.

A verdict is a check record (module_utils/check_record.py): ``name``, ``status`` (failed; warning when it passed but
something could not be judged; passed), ``message`` (one sentence: the object and what is wrong, never the host),
``fix`` (what a person does; '' when it passed), ``details`` (one text per finding, then the notes - what could not be
judged or only in part), ``data`` (the structured findings; ``data.notes`` the notes again, which the modules warn
with), ``object``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record
from ansible_collections.gpu_tray.cluster.plugins.module_utils.cmdline import check_cmdline
from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    format_pkey,
    natural_key,
    format_size_kb,
    join_root,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.containerd import effective_version
from ansible_collections.gpu_tray.cluster.plugins.module_utils.hugepages import check_requests
from ansible_collections.gpu_tray.cluster.plugins.module_utils.mstconfig import (
    MstconfigParseError,
    check_firmware,
    error_lines,
    parse_mstconfig,
    summarise,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import (
    check_pkeys,
    describe_pkey,
    parse_pkey,
    unchecked_vfs,
)

# How many names a message lists before it says "and N more" (the details and data list them all).
NAMES_IN_MSG = 4

FIRMWARE_FIX = ('Planned by a human, per tray: set the values with the vendor tool, e.g. '
                '"mstconfig -d <bdf> -y set SRIOV_EN=True NUM_OF_VFS=<n> LINK_TYPE_P1=IB", then cold power-cycle '
                'the tray (a warm reboot does not load new firmware settings). gpu_tray.cluster never writes NIC '
                'firmware and never runs mstfwreset.')
FIRMWARE_QUERY_FIX = ('For the devices that could not be queried (their firmware settings are unknown): check that '
                      'the PCI address exists and is a ConnectX physical function (lspci -D -d 15b3:), run the check '
                      'as root (become: true), and that mstflint is installed and recent enough for the card (for '
                      '/dev/mst/* device names the mst driver must be loaded: mst start).')
FIRMWARE_RAIL_FIX = ('For the rails without a PCI function: check the rail names (gpu_tray_rails) against the RDMA '
                     'devices of the tray, and that the rail\'s card is present and bound to mlx5_core '
                     '(lspci -D -d 15b3: -k).')
PKEY_NO_PORTS_FIX = 'Check that mlx5_ib is loaded, the rails are in InfiniBand mode and sysfs_root is right.'
CMDLINE_FIX = ('Expected every required argument once and no forbidden one in %s. Fix the boot loader '
               'configuration (/etc/default/grub, /etc/default/grub.d/*.cfg - a later file can overwrite '
               'GRUB_CMDLINE_LINUX_DEFAULT, tuned\'s /etc/tuned/bootcmdline and $tuned_params can add the same '
               'arguments twice), run update-grub and reboot.')
CONTAINERD_VERSION_FIX = ('Keep every drop-in at or below the root version - set the GPU Operator toolkit env '
                          'RUNTIME_CONFIG_SOURCE=file so it writes its drop-in at the root\'s version, and remove or '
                          'regenerate the offending drop-in before containerd restarts.')
CONTAINERD_READ_FIX = ('Check the containerd root config path (config_path and root of containerd_config, '
                       'containerd_config_path and containerd_root of tray_state) and that containerd can load the file '
                       '(valid TOML, an integer version such as version = 3, imports a list of strings).')
CONTAINERD_LOAD_FIX = ('Fix or remove the files containerd cannot load (valid TOML, an integer version such as '
                       'version = 3, imports a list of strings) before containerd restarts.')


def verdict(name, failed, msg, details=None, notes=None, fix=None, data=None):
    """The record every judge returns: failed, else warning when ``notes`` say what could not be judged, else passed;
    the notes follow the details and stay in ``data.notes``; ``fix`` only when failed."""
    notes = list(notes or [])
    data = dict(data if data is not None else {}, notes=notes)
    return record(name, 'failed' if failed else 'warning' if notes else 'passed', msg, fix if failed else None,
                  list(details or []) + notes, data)


def name_list(names, limit=NAMES_IN_MSG, sep=', '):
    """``a, b, c`` - or ``a, b, c, d and 2 more`` beyond ``limit`` names."""
    names = list(names)
    if len(names) <= limit:
        return sep.join(names)
    return '%s and %d more' % (sep.join(names[:limit]), len(names) - limit)


def sentence(clauses, join='; ', capitalise=True):
    """Clauses as one sentence: the first letter upper case (unless the sentence starts with a name that keeps its
    spelling), a full stop at the end."""
    text = join.join(clauses)
    return (text[:1].upper() + text[1:] if capitalise else text) + '.'


def _and(parts):
    """``a``, ``a and b``, ``a, b and c``."""
    if len(parts) < 2:
        return ''.join(parts)
    return '%s and %s' % (', '.join(parts[:-1]), parts[-1])


# ---- P_Keys -------------------------------------------------------------------------------------------

def _held(keys):
    values = [parse_pkey(key) for key in keys]
    return ', '.join(describe_pkey(value) for value in values if value is not None) or 'no non-zero keys'


def _failing_ports(failing, facts):
    """The failing ports by device, grouped by PF: ``PF mlx5_0``, ``VFs mlx5_5, mlx5_6 and 14 more of mlx5_4``."""
    pf_name = dict((dev['pci_address'], dev['name']) for dev in facts['devices'] if dev.get('kind') == 'pf')
    pfs, vfs = [], {}
    for res in failing:
        if res['kind'] == 'vf':
            names = vfs.setdefault(pf_name.get(res['physfn'], res['physfn'] or 'an unknown PF'), [])
        else:
            names = pfs
        if res['device'] not in names:
            names.append(res['device'])
    parts = ['%s %s' % ('PF' if len(pfs) == 1 else 'PFs', name_list(pfs))] if pfs else []
    for pf in sorted(vfs, key=natural_key):
        names = sorted(vfs[pf], key=natural_key)
        parts.append('%s %s of %s' % ('VF' if len(names) == 1 else 'VFs', name_list(names), pf))
    return '; '.join(parts)


def judge_pkeys(facts, devices, required, include_vfs=True, pods=None, name='pkeys'):
    """P_Key full membership of ``devices`` (rdma.select_devices) in partition ``required`` (with 0x8000).

    ``facts``: collect_rdma()'s shape (``class_dir``, ``devices``, ``rails``, ``vfs_by_pf``) - where the
    devices were read, for the VFs that cannot be checked and for the message when there is no port. ``pods``: the
    VFs handed to pods (``{pci_address: {'pod_uid', ...}}``, the kubelet's checkpoint), named as such when their
    RDMA device is not on the host. The message names the failing ports, not how many were checked: the same
    finding reads the same whichever phase checked which ports.
    ``data``: ``pkey``, ``checked_devices``, ``ports``, ``skipped_ports``, ``unchecked_vfs``, ``failed_ports``.
    """
    results, skipped = check_pkeys(devices, required)
    unchecked = unchecked_vfs(facts, devices) if include_vfs else []
    for item in unchecked:
        pod = (pods or {}).get(item['pci_address'])
        if pod:
            item['reason'] = 'its RDMA device is in the network namespace of pod %s' % pod.get('pod_uid')
    failing = [res for res in results if not res['ok']]
    data = {'pkey': format_pkey(required), 'checked_devices': [dev['name'] for dev in devices], 'ports': results,
            'skipped_ports': skipped, 'unchecked_vfs': unchecked, 'failed_ports': [res['label'] for res in failing]}
    notes = []
    if skipped:
        notes.append('not checked (link layer is not InfiniBand, no partitions): %s'
                     % ', '.join('%s %s' % (item['label'], item['link_layer'] or 'unknown') for item in skipped))
    if unchecked:
        notes.append('%d VFs of the checked PFs have no RDMA device under %s, so their P_Keys were not checked: %s. '
                     'Check them where they live (the pod network namespace, or the VM/vfio user).'
                     % (len(unchecked), facts['class_dir'],
                        '; '.join('%s of %s (%s)' % (item['pci_address'] or 'a VF without virtfn link', item['pf'],
                                                     item['reason']) for item in unchecked)))
    if not results:
        found = ', '.join(dev['name'] for dev in facts['devices']) or 'none'
        skipped_text = ('; ports skipped as not InfiniBand: %s' % ', '.join(
            '%s (%s)' % (item['label'], item['link_layer'] or 'unknown') for item in skipped)) if skipped else ''
        return verdict(name, True, 'No InfiniBand ports to check under %s.' % facts['class_dir'],
                       ['no InfiniBand ports under %s (devices found: %s; rails: %s%s); expected the ConnectX rails'
                        % (facts['class_dir'], found, ', '.join(facts['rails']) or 'none', skipped_text)],
                       notes, PKEY_NO_PORTS_FIX, data)
    partition = 'partition %s' % format_pkey(required)
    if not failing:
        return verdict(name, False, 'All %d InfiniBand ports are full members of %s.' % (len(results), partition),
                       notes=notes, data=data)
    details = ['%s%s holds %s' % (res['label'], (' GUID %s' % res['port_guid']) if res['port_guid'] else '',
                                  _held(res['pkeys'])) for res in failing]
    fix = ('The fabric manager (UFM, or ib-kubernetes) must add each listed port GUID to %s as a full member (0x8000 '
           'bit)' % partition)
    vfs = [res for res in failing if res['kind'] == 'vf']
    if vfs:
        fix += ('; %d of the failing ports are VFs - each VF GUID must be added too (in UFM, or by ib-kubernetes: its '
                'GUID pool and the SriovIBNetwork\'s pKey), fixing the PFs alone is not enough' % len(vfs))
    fix += '. Links stay up with limited membership, but RDMA between hosts fails with retry-exceeded.'
    one = len(failing) == 1
    memberships = set(res['membership'] for res in failing)
    if memberships == set(['limited']):
        finding = ('is a limited member of %s, not a full member' if one
                   else 'are limited members of %s, not full members') % partition
    elif memberships == set(['none']):
        finding = ('is not a member of %s' if one else 'are not members of %s') % partition
    else:
        finding = ('is not a full member of %s' if one else 'are not full members of %s') % partition
    message = '%d InfiniBand %s %s: %s.' % (len(failing), 'port' if one else 'ports', finding,
                                            _failing_ports(failing, facts))
    return verdict(name, True, message, details, notes, fix, data)


# ---- ib_core netns_mode ---------------------------------------------------------------------------------

NETNS_FIX = ('Set gpu_tray_ib_core_netns_mode and run prepare_trays: role rdma_netns writes the modprobe.d option and '
             'the rolling reboot applies it (it takes effect when ib_core loads). Only one owner may set it (not also '
             'SriovNetworkPoolConfig rdmaMode).')


def judge_netns_mode(running, wanted, name='netns_mode'):
    """The running ib_core ``netns_mode`` - as tray facts name it (``exclusive``, ``shared``; None when ib_core is not
    loaded) - against the mode wanted (``exclusive``, ``shared``; ``unmanaged`` or empty: not judged).
    ``data``: ``running``, ``expected``."""
    data = {'running': running, 'expected': wanted}
    found = running or 'unknown (ib_core is not loaded: /sys/module/ib_core/parameters/netns_mode does not exist)'
    if not wanted or wanted == 'unmanaged':
        return record(name, 'skipped', 'ib_core netns_mode is %s; the platform does not manage it.' % found, data=data)
    if running == wanted:
        return record(name, 'passed', 'ib_core netns_mode is %s.' % running, data=data)
    return record(name, 'failed', 'ib_core netns_mode is %s, not %s.' % (found, wanted), NETNS_FIX, data=data)


# ---- NIC firmware ---------------------------------------------------------------------------------------

def firmware_entry(raw, min_num_vfs=None, require_sriov=True, link_type='IB'):
    """Judge one device's raw mstconfig record (mstconfig.query_device, tray_state ``firmware.devices[]``).

    Returns ``{'name', 'bdf', 'command', 'rc', 'retried_without_e', 'usage_error', 'ok', 'error', 'extended', 'problems',
    'params', 'info'}``: ``error`` when the tool could not query the device (a ``-E-`` line on stdout or
    stderr, output without a table), else the problems of mstconfig.check_firmware.
    """
    entry = {'name': raw.get('name'), 'bdf': raw['bdf'], 'command': raw.get('command'), 'rc': raw['rc'],
             'retried_without_e': bool(raw.get('retried_without_e')), 'usage_error': raw.get('usage_error'),
             'ok': False, 'error': None, 'extended': None, 'problems': [], 'params': {}, 'info': {}}
    stdout, stderr = raw['stdout'] or '', raw['stderr'] or ''
    messages = error_lines(stdout) + error_lines(stderr)
    try:
        parsed = parse_mstconfig(stdout)
    except MstconfigParseError as exc:
        if messages:
            entry['error'] = 'mstconfig rc=%d: %s' % (raw['rc'], '; '.join(messages))
        else:
            tail = (stderr or stdout).strip().splitlines()[-3:]
            entry['error'] = 'mstconfig rc=%d, unparsable output (%s): %s' % (raw['rc'], exc, ' | '.join(tail))
        return entry
    if messages or (raw['rc'] != 0 and not parsed['params']):
        messages = messages or [(stderr or stdout).strip()]
        entry['error'] = 'mstconfig rc=%d: %s' % (raw['rc'], '; '.join(message for message in messages if message))
        return entry
    entry['extended'] = parsed['extended']
    entry['params'] = summarise(parsed)
    entry['info'] = parsed['device']
    entry['problems'] = check_firmware(parsed, min_num_vfs=min_num_vfs, require_sriov=require_sriov,
                                       link_type=link_type)
    entry['ok'] = not entry['problems']
    return entry


def firmware_lines(entry):
    """The detail lines of one judged device: the query error, or one line per failing parameter with its
    current and next-boot values (an unreadable value or a table that cannot be trusted: the parser's text)."""
    bdf = entry['bdf']
    if entry['error']:
        return ['%s: cannot query firmware: %s' % (bdf, entry['error'])]
    lines = []
    seen = []
    for problem in entry['problems']:
        name = problem['param']
        if name in seen:
            continue
        seen.append(name)
        same = [item for item in entry['problems'] if item['param'] == name]
        values = entry['params'].get(name)
        if problem.get('unreadable'):           # a value, a table or -E- errors: the parser's own words
            lines.extend('%s: %s' % (bdf, item['detail']) for item in same)
        elif values is None:
            lines.append('%s: %s; expected %s' % (bdf, problem['detail'], problem['expected']))
        else:
            shown = ', '.join('%s=%s' % (column.replace('_', ' '), values[column])
                              for column in ('current', 'next_boot') if values.get(column) is not None)
            columns = ' and '.join(item['column'].replace('_', ' ') for item in same if item['column'])
            default = (' (default=%s)' % values['default']) if values.get('default') is not None else ''
            lines.append('%s: %s is %s%s; expected %s in %s'
                         % (bdf, name, shown, default, problem['expected'], columns))
    return lines


def _unreadable_entry(entry):
    """Queried but not read: the tool failed, or every problem is a value or table that cannot be read."""
    problems = entry['problems']
    return bool(entry['error']) or (bool(problems) and all(problem.get('unreadable') for problem in problems))


def judge_firmware(entries, unknown=None, error=None, class_dir='/sys/class/infiniband', name='nic_firmware'):
    """The NIC firmware verdict over judged devices (:func:`firmware_entry`).

    ``unknown``: rail names without a PCI function (not queried); ``error``: why nothing could be queried
    (mstconfig missing). ``data``: ``devices`` (the entries), ``unknown``, ``failed_devices``.
    """
    unknown = list(unknown or [])
    failed = [entry['bdf'] for entry in entries if not entry['ok']]
    unreadable = [entry['bdf'] for entry in entries if _unreadable_entry(entry)]
    wrong = [bdf for bdf in failed if bdf not in unreadable]
    data = {'devices': entries, 'unknown': unknown, 'failed_devices': failed}
    details = [error] if error else []
    if unknown:
        details.append('rails %s have no PCI function under %s' % (', '.join(unknown), class_dir))
    if not entries and not details:
        details.append('no devices to query')
    notes = []
    for entry in entries:
        details.extend(firmware_lines(entry))
        if entry['retried_without_e']:
            notes.append('%s: mstconfig rejected its arguments (%s); retried once without -e, so only next-boot '
                         'values can be checked. Install a current mstflint to check the running values too.'
                         % (entry['bdf'], entry['usage_error'] or 'an mstflint without -e'))
        elif entry['extended'] is False:
            notes.append('%s: mstconfig printed no Current column (queried without -e); only next-boot values were '
                         'checked' % entry['bdf'])
    if entries and not failed and not error and not unknown:
        return verdict(name, False, 'NIC firmware settings OK on %s.' % name_list([entry['bdf'] for entry in entries]),
                       notes=notes, data=data)
    fixes = []
    if wrong:
        fixes.append(FIRMWARE_FIX)
    if unreadable or error or not entries:
        fixes.append(FIRMWARE_QUERY_FIX)
    if unknown:
        fixes.append(FIRMWARE_RAIL_FIX)
    one = len(unknown) == 1
    no_function = '%s %s %s no PCI function' % ('rail' if one else 'rails', ', '.join(unknown), 'has' if one else 'have')
    if error or not entries:
        msg = 'The NIC firmware could not be queried%s.' % ((': ' + no_function) if unknown and not error else '')
    elif not failed:
        msg = sentence(['%s, so %s firmware was not checked' % (no_function, 'its' if one else 'their')])
    else:
        clauses = []
        if wrong:
            clauses.append('NIC firmware settings are wrong on %d of %d devices (%s)'
                           % (len(wrong), len(entries), name_list(wrong)))
        if unreadable:
            clauses.append('the firmware settings of %d of %d devices could not be read (%s)'
                           % (len(unreadable), len(entries), name_list(unreadable)))
        if unknown:
            clauses.append(no_function)
        msg = sentence(clauses)
    return verdict(name, True, msg, details, notes, ' '.join(fixes), data)


# ---- huge pages -----------------------------------------------------------------------------------------

def judge_hugepages(pools, requested, check='counts', base='', meminfo_read=True, default_size_kb=None,
                    current_default_kb=None, proc_root='/proc', variable=None, name='hugepages'):
    """Huge page pools (hugepages.read_pools) against the tuning profile's ``requested`` pools.

    ``check``: ``sizes`` (before the change: the pools must exist) or ``counts`` (after the reboot: they hold
    their counts too). ``default_size_kb``: the default huge page size wanted (None: not checked) - with
    ``sizes`` only a pool of that size must exist, with ``counts`` it must be the running default
    (``current_default_kb``, Hugepagesize in meminfo; ``meminfo_read`` False when meminfo could not be read).
    Sizes must be valid (hugepages.check_requests raises ValueError). ``variable``: the input the user set the
    pools with (``gpu_tray_tuning_hugepages``, a module's ``option requested``): a size without a pool is a refusal
    of that input, and the message names it first. ``data``: ``checked``, ``results``, ``available_sizes``,
    ``default_hugepage_size``.
    """
    results = check_requests(pools, requested, check=check, base=base)
    sizes = [pools[size]['size'] for size in sorted(pools)]
    current = format_size_kb(current_default_kb) if current_default_kb else None
    meminfo = join_root(proc_root, 'meminfo')
    data = {'checked': check, 'results': results, 'available_sizes': sizes, 'default_hugepage_size': current}
    details = [res['problem'] for res in results if not res['ok']]
    missing = [res['size'] for res in results if not res['pool_exists']]
    unreadable = [res['size'] for res in results if res['pool_exists'] and not res['ok'] and res['nr_hugepages'] is None]
    short = [res for res in results if res['pool_exists'] and not res['ok'] and res['nr_hugepages'] is not None]
    clauses = []
    fixes = []
    if not pools:
        details.insert(0, 'no huge page pools under %s' % base)
        fixes.append('Check that sysfs_root is the tray\'s /sys (%s has no pools).' % base)
    elif missing:
        fix = ('Request only sizes the running kernel has (pools on this kernel: %s) in %s, or boot a kernel with '
               'the needed page size, then reboot.' % (', '.join(sizes), variable or 'the tuning profile'))
        if '1G' in missing and 524288 in pools:
            fix += ' On this 64k-page kernel request 2M or 512M pages instead of 1G.'
        fixes.append(fix)
    if missing and variable:
        clauses.append('%s asks for %s huge pages, but the running kernel has no %s huge page pool'
                       % (variable, ', '.join(missing), ', '.join(missing)))
    elif missing:
        clauses.append('the running kernel has no %s huge page pool' % ', '.join(missing))
    if unreadable:
        clauses.append('the page count of the %s huge page pool cannot be read' % ', '.join(unreadable))
        fixes.append('Check that sysfs_root is right and that nr_hugepages of each requested pool is readable.')
    if short:
        if len(short) == 1:
            clauses.append('the %s huge page pool holds %d of the %d requested pages'
                           % (short[0]['size'], short[0]['nr_hugepages'], short[0]['count']))
        else:
            clauses.append('the %s huge page pools hold fewer pages than requested'
                           % ', '.join(res['size'] for res in short))
        fixes.append('Compare MemTotal in %s with the pages requested, make sure no later /etc/default/grub.d '
                     'drop-in overrides GRUB_CMDLINE_LINUX_DEFAULT, and that %s carries the hugepages= arguments '
                     '(else the tray booted another entry); then reboot.' % (meminfo, join_root(proc_root, 'cmdline')))
    if default_size_kb is not None:
        wanted = format_size_kb(default_size_kb)
        if check == 'sizes':
            if pools and default_size_kb not in pools:
                details.append('the running kernel has no %s huge page pool for default_size' % wanted)
                clauses.append('the running kernel has no %s huge page pool for the default size' % wanted)
                fixes.append('Set default_hugepagesz to a size this kernel has (%s).' % ', '.join(sizes))
        elif not meminfo_read:
            details.append('cannot read %s for the default huge page size' % meminfo)
            clauses.append('the default huge page size cannot be read')
            fixes.append('Check that proc_root is the tray\'s /proc.')
        elif current is None:
            details.append('cannot read the default huge page size: no Hugepagesize line in %s' % meminfo)
            clauses.append('the default huge page size cannot be read')
            fixes.append('Check that proc_root is the proc file system of the tray.')
        elif current_default_kb != default_size_kb:
            details.append('the default huge page size is %s (Hugepagesize in %s), expected %s'
                           % (current, meminfo, wanted))
            clauses.append('the default huge page size is %s, not %s' % (current, wanted))
            fixes.append('Add default_hugepagesz=%s to the kernel command line, then reboot.' % wanted)
    if not details:
        shown = ', '.join(('%s x %s' % (res['size'], res['nr_hugepages'])) if check == 'counts' else res['size']
                          for res in results)
        return verdict(name, False, 'Huge page %s OK (%s).' % (check, shown), data=data)
    # a clause that starts with the variable keeps its spelling
    return verdict(name, True, sentence(clauses, capitalise=not (missing and variable)), details,
                   fix=' '.join(fixes), data=data)


# ---- kernel command line -----------------------------------------------------------------------------------

def _duplicate_text(duplicates):
    return ' '.join('%s%s (x%d)' % (dup['arg'], (' after %s' % dup['context']) if dup['context'] else '', dup['count'])
                    for dup in duplicates)


def judge_cmdline(text, required=None, forbidden=None, fail_on_duplicates=True, path='/proc/cmdline', error=None,
                  name='kernel_cmdline'):
    """The booted command line ``text`` (read from ``path``; ``error`` when it could not be read) against the
    ``required`` and ``forbidden`` arguments; an identical argument twice fails with ``fail_on_duplicates``.

    A spec that is not one kernel argument raises ValueError (cmdline.parse_spec). ``data``: cmdline.check_cmdline's
    report (``tokens``, ``present``, ``missing``, ``forbidden_present``, ``duplicates``) and ``cmdline``;
    only ``path`` when the command line could not be read.
    """
    if error is not None:
        return verdict(name, True, 'The kernel command line could not be read.', [error],
                       fix='Check that proc_root is the tray\'s /proc (%s could not be read).' % path,
                       data={'path': path})
    report = check_cmdline(text, required or [], forbidden or [])
    data = dict(report, cmdline=text)
    details = []
    notes = []
    clauses = []
    if report['missing']:
        details.append('missing: %s' % ' '.join(report['missing']))
        clauses.append('lacks %s' % name_list(report['missing'], sep=' '))
    if report['forbidden_present']:
        details.append('forbidden but present: %s' % ' '.join(report['forbidden_present']))
        clauses.append('has the forbidden %s' % name_list(report['forbidden_present'], sep=' '))
    if report['duplicates'] and fail_on_duplicates:
        details.append('duplicated: %s' % _duplicate_text(report['duplicates']))
        clauses.append('repeats %s' % name_list((dup['arg'] for dup in report['duplicates']), sep=' '))
    elif report['duplicates']:
        notes.append('duplicated (not failing the check): %s' % _duplicate_text(report['duplicates']))
    if not details:
        return verdict(name, False, 'Kernel command line OK (%d required arguments present).' % len(report['present']),
                       notes=notes, data=data)
    return verdict(name, True, 'The booted kernel command line %s.' % _and(clauses), details, notes, CMDLINE_FIX % path,
                   data)


# ---- containerd ------------------------------------------------------------------------------------------

def judge_containerd(result=None, problems=(), warnings=(), error=None, config_path=None, name='containerd_config'):
    """containerd.inspect()'s ``(result, problems, warnings)``, or ``error`` when the root config could not be
    read (``result`` None without ``error``: ``config_path`` does not exist).

    ``data``: the inspection result (``config_path``, ``version``, ``imports``, ``dropins``,
    ``runtime_config_source``, ``toolkit_reads_command``) with ``problems`` and ``warnings``; ``{}`` when
    the root config could not be read.
    """
    if result is None:
        return verdict(name, True, 'The containerd configuration could not be read.',
                       [error or '%s does not exist' % config_path], fix=CONTAINERD_READ_FIX)
    data = dict(result, problems=list(problems), warnings=list(warnings))
    root = effective_version(result['version'])
    shown = result['version'] if result['version'] is not None else '1 (no version key)'
    dropins = result['dropins']
    if not problems:
        found = ('it has no drop-ins' if not dropins else 'its drop-in is not above it' if len(dropins) == 1
                 else 'none of its %d drop-ins is above it' % len(dropins))
        return verdict(name, False, 'The containerd root config is version %s; %s.' % (shown, found), notes=warnings,
                       data=data)
    above = [entry['path'] for entry in dropins
             if entry['imported'] and not entry['error'] and effective_version(entry['version']) > root]
    broken = [entry['path'] for entry in dropins if entry['error']]
    clauses = []
    fixes = []
    if above:
        clauses.append('%s %s %s a version above the root config\'s %s' % (
            'the containerd drop-in' if len(above) == 1 else 'the containerd drop-ins', name_list(above),
            'declares' if len(above) == 1 else 'declare', root))
        fixes.append(CONTAINERD_VERSION_FIX)
    if broken:
        clauses.append('containerd cannot load %s' % name_list(broken))
        fixes.append(CONTAINERD_LOAD_FIX)
    return verdict(name, True, sentence(clauses), problems, warnings, ' '.join(fixes), data)
