# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight decisions over one tray_state result, made on the controller.

Pure functions: ``evaluate(state, spec)`` takes what the tray_state module read and what the platform
requires, and returns one result per check. Every rule is the check modules' own function
(rdma.check_pkeys, mstconfig.check_firmware, hugepages.check_requests, cmdline.check_cmdline and the
containerd inspection done on the tray), so a tray judged here and by the module on its own agrees.

A result: ``{'check', 'failed', 'skipped', 'msg', 'details', 'fix', 'data'}`` - ``msg`` one short
sentence (Ansible prints the host), ``details`` one text per finding, ``fix`` what a person does about
it, ``data`` the structured findings for the evidence.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils.cmdline import check_cmdline
from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    format_pkey,
    parse_size_kb,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.hugepages import check_requests
from ansible_collections.gpu_tray.cluster.plugins.module_utils.mstconfig import (
    EMPTY_TABLE,
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
    required_pkey,
    select_devices,
    unchecked_vfs,
)

CHECKS = ('os_image', 'rails', 'pkeys', 'nic_firmware', 'hugepages', 'kernel_cmdline', 'containerd_config')

FIRMWARE_FIX = ('Plan the change per tray: set the values with the vendor tool (mstconfig -d <bdf> -y set SRIOV_EN=True '
                'NUM_OF_VFS=<n> LINK_TYPE_P1=IB), then cold power-cycle the tray (a warm reboot does not load new '
                'firmware settings). gpu_tray.cluster never writes NIC firmware and never runs mstfwreset.')
FIRMWARE_QUERY_FIX = ('For a device that could not be queried: check that the PCI address is a ConnectX physical '
                      'function (lspci -D -d 15b3:), that the check runs as root and that mstflint is installed and '
                      'recent enough for the card.')


class SpecError(ValueError):
    """The spec (the role's variables) is not usable; the text names the variable."""


def _result(check, failed=False, msg='', details=None, fix=None, data=None, skipped=False):
    return {'check': check, 'failed': bool(failed), 'skipped': bool(skipped), 'msg': msg,
            'details': list(details or []), 'fix': fix if failed else None, 'data': data or {}}


def _skip(check, why):
    return _result(check, skipped=True, msg='Not checked: %s.' % why)


def rdma_collection(state):
    """collect_rdma()'s shape from a tray_state result (devices from ansible_facts.gpu_tray_rdma)."""
    facts = state['ansible_facts']['gpu_tray_rdma']
    return {
        'class_dir': state['rdma']['class_dir'],
        'devices': facts['devices'],
        'rails': facts['rails'],
        'connectx_pfs': facts['connectx_pfs'],
        'vfs_by_pf': state['rdma']['vfs_by_pf'],
    }


def wanted_rails(spec):
    rails = spec.get('rails') or []
    if isinstance(rails, str):          # "mlx5_0,mlx5_1" from -e
        rails = rails.split(',')
    return [name.strip() for name in rails if name.strip()]


def check_os_image(state, spec):
    tray = state['ansible_facts']['gpu_tray']
    want = spec['os']
    found = '%s %s, kernel %s' % (tray.get('os_id'), tray.get('os_version_id'), tray.get('kernel_release'))
    kernel_ok = re.search(want['kernel_pattern'], tray.get('kernel_release') or '') is not None
    ok = kernel_ok and (tray.get('os_id'), tray.get('os_version_id')) == (want['os_id'], want['os_version_id'])
    data = {'found': found, 'expected': want['kernel_hint']}
    if ok:
        return _result('os_image', msg='Runs %s.' % found, data=data)
    return _result('os_image', failed=True, msg='The OS image is not the %s recipe\'s.' % spec['platform'],
                   details=['runs %s; the recipe needs %s' % (found, want['kernel_hint'])],
                   fix='Reimage the tray with the platform\'s image.', data=data)


def check_rails(state, spec):
    found = state['ansible_facts']['gpu_tray_rdma']['rails']
    want = wanted_rails(spec)
    data = {'found': found, 'expected': want}
    if found and (not want or sorted(found) == sorted(want)):
        return _result('rails', msg='Rails %s.' % ', '.join(found), data=data)
    missing = [name for name in want if name not in found]
    extra = [name for name in found if want and name not in want]
    details = ['found InfiniBand rails %s under %s; expected %s'
               % (', '.join(found) or 'none', state['rdma']['class_dir'], ', '.join(want) or 'at least one')]
    if missing:
        details.append('missing or not InfiniBand: %s' % ', '.join(missing))
    if extra:
        details.append('not in gpu_tray_rails: %s' % ', '.join(extra))
    return _result('rails', failed=True,
                   msg=('Rail %s is missing or not InfiniBand.' % ', '.join(missing)) if missing
                   else 'The InfiniBand rails differ from the expected ones.' if found
                   else 'No InfiniBand rails found.',
                   details=details,
                   fix='Check that every ConnectX rail is cabled, its port is in InfiniBand mode and mlx5_ib is '
                       'loaded; or correct gpu_tray_rails in the inventory.', data=data)


def check_pkeys_state(state, spec):
    try:
        required = required_pkey(spec.get('pkey', '0xffff'))
    except ValueError as exc:
        raise SpecError('preflight_pkey: %s' % exc)
    facts = rdma_collection(state)
    include_vfs = bool(spec.get('include_vfs', True))
    devices, _unknown = select_devices(facts, None, include_vfs)
    results, skipped = check_pkeys(devices, required)
    unchecked = unchecked_vfs(facts, devices) if include_vfs else []
    failing = [res for res in results if not res['ok']]
    data = {'pkey': format_pkey(required), 'ports': results, 'skipped_ports': skipped, 'unchecked_vfs': unchecked,
            'failed_ports': [res['label'] for res in failing]}
    notes = ['%s not checked: link layer %s' % (item['label'], item['link_layer'] or 'unknown') for item in skipped]
    notes += ['VF %s of %s not checked: %s' % (item['pci_address'] or '(no virtfn link)', item['pf'], item['reason'])
              for item in unchecked]
    if not results:
        return _result('pkeys', failed=True, msg='No InfiniBand ports to check.',
                       details=['no InfiniBand rail ports under %s' % facts['class_dir']] + notes,
                       fix='Check that mlx5_ib is loaded and the rails are in InfiniBand mode.', data=data)
    if not failing:
        return _result('pkeys', msg='All %d ports are full members of %s.' % (len(results), format_pkey(required)),
                       details=notes, data=data)
    details = []
    for res in failing:
        keys = [parse_pkey(key) for key in res['pkeys']]
        held = ', '.join(describe_pkey(key) for key in keys if key is not None) or 'no non-zero keys'
        details.append('%s%s holds %s' % (res['label'], (' GUID %s' % res['port_guid']) if res['port_guid'] else '',
                                          held))
    vfs = [res for res in failing if res['kind'] == 'vf']
    fix = ('The fabric manager (UFM, or ib-kubernetes) must add each listed port GUID to partition %s as a full '
           'member (0x8000 bit)' % format_pkey(required))
    if vfs:
        fix += '; %d of them are VFs - each VF GUID must be added too, fixing the PFs alone is not enough' % len(vfs)
    fix += '. Links stay up with limited membership, but RDMA between hosts fails with retry-exceeded.'
    return _result('pkeys', failed=True,
                   msg='%d of %d InfiniBand ports are not full members of %s.'
                       % (len(failing), len(results), format_pkey(required)),
                   details=details + notes, fix=fix, data=data)


def _firmware_lines(bdf, problems, params):
    """One line per failing parameter with current and next-boot values, as nic_firmware words them."""
    lines = []
    for name in sorted(set(problem['param'] for problem in problems)):
        first = next(problem for problem in problems if problem['param'] == name)
        values = params.get(name)
        if name == EMPTY_TABLE or values is None:
            lines.append('%s: %s' % (bdf, first['detail']))
            continue
        shown = ', '.join('%s=%s' % (column.replace('_', ' '), values[column])
                          for column in ('current', 'next_boot') if values.get(column) is not None)
        columns = ' and '.join(problem['column'].replace('_', ' ') for problem in problems
                               if problem['param'] == name and problem['column'])
        default = (' (default=%s)' % values['default']) if values.get('default') is not None else ''
        lines.append('%s: %s is %s%s; expected %s in %s' % (bdf, name, shown, default, first['expected'], columns))
    return lines


def firmware_entry(raw, spec):
    """Judge one device's raw mstconfig output (tray_state firmware.devices[]) with check_firmware."""
    entry = {'name': raw.get('name'), 'bdf': raw['bdf'], 'command': raw.get('command'), 'rc': raw['rc'],
             'ok': False, 'error': None, 'extended': None, 'problems': [], 'params': {}, 'info': {},
             'retried_without_e': raw.get('retried_without_e', False)}
    messages = error_lines(raw['stdout']) + error_lines(raw['stderr'])
    try:
        parsed = parse_mstconfig(raw['stdout'])
    except MstconfigParseError as exc:
        detail = (raw['stderr'] or raw['stdout']).strip().splitlines()
        entry['error'] = ('mstconfig rc=%d: %s' % (raw['rc'], '; '.join(messages)) if messages else
                          'mstconfig rc=%d, unparsable output (%s): %s' % (raw['rc'], exc, ' | '.join(detail[-3:])))
        return entry
    if messages or (raw['rc'] != 0 and not parsed['params']):
        messages = messages or [(raw['stderr'] or raw['stdout']).strip()]
        entry['error'] = 'mstconfig rc=%d: %s' % (raw['rc'], '; '.join(m for m in messages if m))
        return entry
    entry['extended'] = parsed['extended']
    entry['params'] = summarise(parsed)
    entry['info'] = parsed['device']
    entry['problems'] = check_firmware(parsed, min_num_vfs=spec.get('min_num_vfs'),
                                       require_sriov=spec.get('require_sriov', True),
                                       link_type=spec.get('link_type', 'IB'))
    entry['ok'] = not entry['problems']
    return entry


def check_nic_firmware(state, spec):
    if not spec.get('firmware'):
        return _skip('nic_firmware', 'preflight_check_firmware is false')
    firmware = state.get('firmware') or {}
    if not firmware.get('queried'):
        return _result('nic_firmware', failed=True, msg='The firmware was not queried.',
                       details=['tray_state ran without query_firmware'], fix='Run tray_state with query_firmware.')
    entries = [firmware_entry(raw, spec) for raw in firmware.get('devices', [])]
    data = {'devices': entries, 'unknown': firmware.get('unknown', []),
            'failed_devices': [entry['bdf'] for entry in entries if not entry['ok']]}
    details = []
    if firmware.get('error'):
        details.append(firmware['error'])
    if firmware.get('unknown'):
        details.append('rails %s have no PCI function under %s' % (', '.join(firmware['unknown']),
                                                                   state['rdma']['class_dir']))
    if not entries and not details:
        details.append('no ConnectX rails to query')
    unreadable = []
    for entry in entries:
        if entry['error']:
            unreadable.append(entry['bdf'])
            details.append('%s: cannot query firmware: %s' % (entry['bdf'], entry['error']))
        elif entry['problems']:
            if all(problem['param'] == EMPTY_TABLE for problem in entry['problems']):
                unreadable.append(entry['bdf'])
            details.extend(_firmware_lines(entry['bdf'], entry['problems'], entry['params']))
        elif not entry['extended']:
            details.append('%s: mstconfig printed no Current column; only next-boot values were checked'
                           % entry['bdf'])
    failing = data['failed_devices']
    if not failing and not firmware.get('error') and not firmware.get('unknown') and entries:
        return _result('nic_firmware', msg='Firmware settings OK on %d rails.' % len(entries), details=details,
                       data=data)
    unknown = firmware.get('unknown') or []
    fixes = []
    if len(unreadable) < len(failing):
        fixes.append(FIRMWARE_FIX)
    if unreadable or firmware.get('error') or not entries or unknown:
        fixes.append(FIRMWARE_QUERY_FIX)
    if firmware.get('error') or not entries:
        msg = 'The rails\' firmware could not be queried.'
    elif not failing:         # every queried rail is right; a named rail has no PCI function to query
        msg = 'Rail %s has no PCI function, so its firmware was not checked.' % ', '.join(unknown)
    else:
        msg = 'NIC firmware settings are wrong on %d of %d rails%s.' % (
            len(failing), len(entries) + len(unknown),
            '; rail %s has no PCI function' % ', '.join(unknown) if unknown else '')
    return _result('nic_firmware', failed=True, msg=msg, details=details, fix=' '.join(fixes), data=data)


def check_hugepages(state, spec):
    requested = spec.get('hugepages') or []
    if not requested:
        return _skip('hugepages', 'the tuning profile requests no huge page pools')
    mode = spec.get('hugepages_check', 'sizes')
    for index, item in enumerate(requested):
        try:
            parse_size_kb(item['size'])
        except (KeyError, TypeError, ValueError) as exc:
            raise SpecError('preflight_hugepages_requested[%d].size: %s' % (index, exc))
    hugepages = state['hugepages']
    pools = dict((int(size), pool) for size, pool in hugepages['pools'].items())
    sizes = [pools[size]['size'] for size in sorted(pools)]
    results = check_requests(pools, requested, check=mode, base=hugepages['base'])
    data = {'checked': mode, 'results': results, 'available_sizes': sizes}
    problems = [res['problem'] for res in results if not res['ok']]
    if not pools:
        problems.insert(0, 'no huge page pools under %s' % hugepages['base'])
    if not problems:
        shown = ', '.join(res['size'] for res in results) if mode == 'sizes' else ', '.join(
            '%s x %s' % (res['size'], res['nr_hugepages']) for res in results)
        return _result('hugepages', msg='Huge page %s OK (%s).' % ('sizes' if mode == 'sizes' else 'pools', shown),
                       data=data)
    missing = [res['size'] for res in results if not res['pool_exists']]
    if missing:
        msg = 'The running kernel has no %s huge page pool.' % ', '.join(missing)
    else:
        msg = 'Huge page pools hold fewer pages than requested.'
    return _result('hugepages', failed=True, msg=msg, details=problems,
                   fix='Request only sizes the running kernel has (%s; 2M or 512M instead of 1G on a 64k kernel) '
                       'and counts that fit in memory in the tuning profile, or boot a kernel with the needed page '
                       'size.' % (', '.join(sizes) or 'none'), data=data)


def check_kernel_cmdline(state, spec):
    cmdline = state['cmdline']
    if cmdline.get('error'):
        return _result('kernel_cmdline', failed=True, msg='The kernel command line could not be read.',
                       details=[cmdline['error']], fix='Check preflight_proc_root.', data={'path': cmdline['path']})
    try:
        report = check_cmdline(cmdline['text'], spec.get('cmdline_required') or [],
                               spec.get('cmdline_forbidden') or [])
    except ValueError as exc:
        raise SpecError('preflight_cmdline_forbidden: %s' % exc)
    data = dict(report, cmdline=cmdline['text'])
    details = []
    if report['missing']:
        details.append('missing: %s' % ' '.join(report['missing']))
    if report['forbidden_present']:
        details.append('forbidden but present: %s' % ' '.join(report['forbidden_present']))
    if report['duplicates']:
        details.append('duplicated: %s' % ' '.join(
            '%s%s (x%d)' % (dup['arg'], (' after %s' % dup['context']) if dup['context'] else '', dup['count'])
            for dup in report['duplicates']))
    if not details:
        return _result('kernel_cmdline', msg='Kernel command line OK.', data=data)
    return _result('kernel_cmdline', failed=True, msg='The booted kernel command line does not match.',
                   details=details,
                   fix='Fix the boot loader configuration (/etc/default/grub, /etc/default/grub.d/*.cfg - a later '
                       'file can overwrite GRUB_CMDLINE_LINUX_DEFAULT, tuned\'s $tuned_params can add the same '
                       'arguments twice), run update-grub and reboot.', data=data)


def check_containerd(state, spec):
    runtime = state['ansible_facts']['gpu_tray'].get('container_runtime')
    if not spec.get('containerd', True):
        return _skip('containerd_config', 'disabled')
    if runtime != 'containerd':
        return _skip('containerd_config', 'the container runtime is %s, not containerd' % (runtime or 'not running'))
    containerd = state['containerd']
    if not containerd.get('present') or containerd.get('error'):
        return _result('containerd_config', failed=True, msg='The containerd configuration could not be read.',
                       details=[containerd.get('error') or '%s does not exist' % containerd.get('config_path')],
                       fix='Check /etc/containerd/config.toml.', data={})
    result = containerd['result']
    data = dict(result, problems=containerd['problems'], warnings=containerd['warnings'])
    if not containerd['problems']:
        return _result('containerd_config', msg='containerd root is version %s; no drop-in above it.'
                       % result['version'], details=containerd['warnings'], data=data)
    return _result('containerd_config', failed=True, msg='A containerd drop-in is above the root config version.',
                   details=containerd['problems'] + containerd['warnings'],
                   fix='Keep every drop-in at or below the root version: set the GPU Operator toolkit env '
                       'RUNTIME_CONFIG_SOURCE=file, and remove or regenerate the offending drop-in before containerd '
                       'restarts.', data=data)


_FUNCTIONS = {
    'os_image': check_os_image,
    'rails': check_rails,
    'pkeys': check_pkeys_state,
    'nic_firmware': check_nic_firmware,
    'hugepages': check_hugepages,
    'kernel_cmdline': check_kernel_cmdline,
    'containerd_config': check_containerd,
}


def evaluate(state, spec):
    """Every check in ``spec['checks']`` (default :data:`CHECKS`), in that order."""
    names = spec.get('checks') or CHECKS
    unknown = [name for name in names if name not in _FUNCTIONS]
    if unknown:
        raise SpecError('unknown checks %s (known: %s)' % (', '.join(unknown), ', '.join(CHECKS)))
    return [_FUNCTIONS[name](state, spec) for name in names]


def report(host, platform, results):
    """The preflight_report of one tray: checks that ran (not skipped), passed, failed_checks."""
    ran = [res for res in results if not res['skipped']]
    return {
        'host': host,
        'platform': platform,
        'passed': not any(res['failed'] for res in ran),
        'failed_checks': [res['check'] for res in ran if res['failed']],
        'skipped_checks': [res['check'] for res in results if res['skipped']],
        'checks': ran,
    }
