# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Preflight decisions over one tray_state result, made on the controller.

Pure functions: ``evaluate(state, spec)`` takes what the tray_state module read and what the platform
requires, and returns one record per check (module_utils/check_record.py: ``name``, ``status``, ``message``,
``fix``, ``details``, ``data``, ``object`` - the tray). The P_Key, firmware, huge page, command line and containerd
verdicts are the check modules' own judges (module_utils.judges), so a tray judged here, by the module on its own,
after the reboot or by the validation gets the same verdict in the same words; the judge's notes (what was not
judged) follow its details.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import posixpath
import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils import judges
from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record, renamed
from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import parse_size_kb
from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import (
    judge_cmdline,
    judge_containerd,
    judge_firmware,
    judge_hugepages,
    judge_pkeys,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import required_pkey, select_devices
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import role_inputs

CHECKS = ('os_image', 'rails', 'pkeys', 'nic_firmware', 'hugepages', 'kernel_cmdline', 'containerd_config')
# the pools are role kernel_tuning's (the preflight checks the sizes it will write): a size without a pool refuses
# the variable the user set them with
HUGEPAGES_VARIABLE = role_inputs.user_variable('kernel_tuning', 'hugepages')


class SpecError(ValueError):
    """The spec (the role's variables) is not usable; the text names the variable."""


def _result(check, failed=False, msg='', details=None, fix=None, data=None):
    return record(check, 'failed' if failed else 'passed', msg, fix, details, data)


def _skip(check, why):
    return record(check, 'skipped', 'Not checked: %s.' % why)


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


def _addresses(value):
    return [value] if isinstance(value, str) else list(value or [])


def check_rails(state, spec):
    """The rails are the expected InfiniBand devices and - where the site gives them (gpu_tray_rail_pci_addresses, the
    PFs the chart stack's SR-IOV policies select) - at the expected PCI addresses. The addresses found are recorded
    (``data.pci``): the values to give that variable."""
    facts = state['ansible_facts']['gpu_tray_rdma']
    found = facts['rails']
    want = wanted_rails(spec)
    pci = dict((d['name'], d.get('pci_address')) for d in facts.get('devices') or []
               if d.get('name') in found and d.get('kind', 'pf') == 'pf')
    data = {'found': found, 'expected': want, 'pci': pci}
    if found and (not want or sorted(found) == sorted(want)):
        expected = spec.get('rail_pci') or {}
        moved = [(rail, pci.get(rail), _addresses(expected[rail])) for rail in found
                 if rail in expected and pci.get(rail) not in _addresses(expected[rail])]
        if moved:
            rail, at, wanted = moved[0]
            return _result('rails', failed=True,
                           msg='Rail %s is at PCI address %s, not at %s as gpu_tray_rail_pci_addresses says.'
                               % (rail, at, ' or '.join(wanted)),
                           details=['%s is at %s; gpu_tray_rail_pci_addresses gives %s' % (r, a, ', '.join(w))
                                    for r, a, w in moved],
                           fix='Set gpu_tray_rail_pci_addresses to the PCI addresses of this tray model\'s rails (a '
                               'list per rail where tray models differ): the SR-IOV policy of each rail selects only '
                               'its PF, so a tray whose rail is elsewhere would get no VFs on that rail.', data=data)
        return _result('rails', msg='Rails %s.' % ', '.join('%s (%s)' % (r, pci.get(r)) for r in found), data=data)
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


def pkeys(state, required, include_vfs=True, pods=None):
    """The P_Key check of a read: the rails (as the read found them) and, with ``include_vfs``, every VF of theirs
    the host sees, against partition ``required`` - the preflight's check, and the validation's after the deploy
    (``pods``: the VFs handed to pods, module_utils.judges.judge_pkeys)."""
    facts = rdma_collection(state)
    devices, _unknown = select_devices(facts, None, include_vfs)
    return judge_pkeys(facts, devices, required, include_vfs, pods=pods)


def check_pkeys_state(state, spec):
    try:
        required = required_pkey(spec.get('pkey', '0xffff'))
    except ValueError as exc:
        raise SpecError('gpu_tray_pkey (preflight_pkey): %s' % exc)
    return pkeys(state, required, bool(spec.get('include_vfs', True)))


def firmware_entry(raw, spec):
    """Judge one device's raw mstconfig output (tray_state firmware.devices[]) as the spec asks."""
    return judges.firmware_entry(raw, min_num_vfs=spec.get('min_num_vfs'),
                                 require_sriov=spec.get('require_sriov', True), link_type=spec.get('link_type', 'IB'))


def check_nic_firmware(state, spec):
    if not spec.get('firmware'):
        return _skip('nic_firmware', 'preflight_check_firmware is false')
    firmware = state.get('firmware') or {}
    if not firmware.get('queried'):
        return _result('nic_firmware', failed=True, msg='The firmware was not queried.',
                       details=['tray_state ran without query_firmware'], fix='Run tray_state with query_firmware.')
    entries = [firmware_entry(raw, spec) for raw in firmware.get('devices', [])]
    return judge_firmware(entries, firmware.get('unknown'), firmware.get('error'), state['rdma']['class_dir'])


def check_hugepages(state, spec):
    requested = spec.get('hugepages') or []
    if not requested:
        return _skip('hugepages', 'the tuning profile requests no huge page pools')
    for index, item in enumerate(requested):
        try:
            parse_size_kb(item['size'])
        except (KeyError, TypeError, ValueError) as exc:
            raise SpecError('%s[%d].size (preflight_hugepages_requested): %s' % (HUGEPAGES_VARIABLE, index, exc))
    hugepages = state['hugepages']
    pools = dict((int(size), pool) for size, pool in hugepages['pools'].items())
    return judge_hugepages(pools, requested, check=spec.get('hugepages_check', 'sizes'), base=hugepages['base'],
                           current_default_kb=hugepages.get('meminfo_default_kb'),
                           proc_root=posixpath.dirname(state['cmdline']['path']),
                           variable=HUGEPAGES_VARIABLE if spec.get('hugepages_check', 'sizes') == 'sizes' else None)


def check_kernel_cmdline(state, spec):
    cmdline = state['cmdline']
    try:
        judged = judge_cmdline(cmdline['text'], spec.get('cmdline_required') or [], spec.get('cmdline_forbidden') or [],
                               path=cmdline['path'], error=cmdline.get('error'))
    except ValueError as exc:
        raise SpecError('preflight_cmdline_forbidden: %s' % exc)
    return judged


def check_containerd(state, spec):
    runtime = state['ansible_facts']['gpu_tray'].get('container_runtime')
    if not spec.get('containerd', True):
        return _skip('containerd_config', 'disabled')
    if runtime != 'containerd':
        return _skip('containerd_config', 'the container runtime is %s, not containerd' % (runtime or 'not running'))
    containerd = state['containerd']
    if not containerd.get('present') or containerd.get('error'):
        judged = judge_containerd(error=containerd.get('error'), config_path=containerd.get('config_path'))
    else:
        judged = judge_containerd(containerd['result'], containerd['problems'], containerd['warnings'])
    return judged


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
    """Every check in ``spec['checks']`` (default :data:`CHECKS`), in that order; each record's object is the tray
    (``spec['host']``)."""
    names = spec.get('checks') or CHECKS
    unknown = [name for name in names if name not in _FUNCTIONS]
    if unknown:
        raise SpecError('unknown checks %s (known: %s)' % (', '.join(unknown), ', '.join(CHECKS)))
    return [renamed(_FUNCTIONS[name](state, spec), name, spec.get('host') or '') for name in names]


def report(host, platform, results):
    """The preflight_report of one tray: the checks that ran (not skipped), whether it passed, the failed and the
    skipped checks' names."""
    ran = [res for res in results if res['status'] != 'skipped']
    return {
        'host': host,
        'platform': platform,
        'passed': not any(res['status'] == 'failed' for res in ran),
        'failed_checks': [res['name'] for res in ran if res['status'] == 'failed'],
        'skipped_checks': [res['name'] for res in results if res['status'] == 'skipped'],
        'checks': ran,
    }
