# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation's tray phase: one tray_state read per tray, judged on the controller after the stack is deployed.

The preflight runs before the SR-IOV config daemon has created any VF, so it never sees one. This phase runs after
the deploy and judges, per tray: the VFs the SriovNetworkNodePolicy asked for exist on every rail (``sriov_numvfs``,
``virtfn`` links, each VF bound to mlx5_core and with an RDMA device), every rail PF and VF port is a full member of
the partition, every VF has its IPoIB netdev, ib_core ``netns_mode`` is what role rdma_netns sets, and the rails' PFs
are healthy and as the preflight recorded them, and the service-account token in the tray's multus.kubeconfig is
not about to expire (plugin_utils/multus.py: the Network Operator's multus never rewrites it).

One judge per check for every phase: the P_Key check is the preflight's (plugin_utils/preflight.py ``pkeys`` - the
rails the read found and their VFs, module_utils/judges.py judge_pkeys) and ``netns_mode`` the role's and the rolling
reboot's (judges.judge_netns_mode), so the same finding reads the same, with the same fix, in every phase.

Honest about what the host can see: a VF handed to a pod moves its netdev into the pod's network namespace, and in
``netns_mode`` exclusive its RDMA device too; sysfs of the host no longer shows them. Which VFs are in pods comes
from the kubelet's device-manager checkpoint (``/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint``, the
PCI addresses the SR-IOV device plugin handed out); such a VF is listed as not visible, never counted as passed.

Pure functions; each check is a record (module_utils/check_record.py) named ``<tray>/<check>`` with the tray as its
``object``; its message states the finding without the tray (the report puts the name beside it).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import json
import time

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record, renamed
from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_netns_mode
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import required_pkey
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.platform import NETNS_MODES
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.multus import (
    MULTUS_KUBECONFIG,
    TokenError,
    token_expiry,
)

CHECKS = ('sriov-vfs', 'pkeys', 'vf-ipoib', 'netns-mode', 'pf-state', 'multus-token')
KUBELET_CHECKPOINT = '/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint'
# what the preflight recorded of a rail PF and must still hold after the rollout (sriov_numvfs changes on purpose)
PF_FIELDS = ('pci_address', 'fw_ver', 'sriov_totalvfs')
PORT_FIELDS = ('link_layer', 'state', 'phys_state', 'rate', 'pkeys')

FIX_VFS = ('The SR-IOV config daemon creates the VFs: check the node\'s SriovNetworkNodeState (status.syncStatus, '
           'status.lastSyncError) and the sriov-network-config-daemon log. The firmware must allow the count '
           '(SRIOV_EN, NUM_OF_VFS >= numVfs): with the mellanox plugin disabled the daemon never changes firmware. '
           'A VF bound to another driver than mlx5_core does not match the policy\'s deviceType netdevice.')
FIX_IPOIB = ('Load ib_ipoib on the tray (role rdma_modules writes /etc/modules-load.d; the rolling reboot loads it), '
             'then let the config daemon recreate the VFs (or write sriov_numvfs 0 and back).')
FIX_PF = ('Check the rail\'s cable, its switch port and the subnet manager (state and rate). A firmware, link layer, '
          'VF-limit or P_Key change since the preflight means the NIC or the fabric was reconfigured, or the NIC '
          'replaced: run the preflight again.')
FIX_MULTUS = ('The Network Operator runs multus with --skip-config-watch, so multus never rewrites %s when its '
              'service-account token rotates; the copy stays valid one year from issuance under default API-server '
              'settings. Restart the multus pods%s to rewrite the file with a new token: kubectl -n %s rollout restart '
              'daemonset kube-multus-ds, then validate again.')
MULTUS_WARN_DAYS = 30


class SpecError(ValueError):
    """The spec (the role's variables) is not usable; the text names the variable."""


def _check(host, check, status, message, details=None, fix=None, data=None):
    return record('%s/%s' % (host, check), status, message, fix, details, data, host)


def parse_kubelet_checkpoint(text):
    """PCI addresses handed to pods, from the kubelet device-manager checkpoint (JSON).

    ``{"Data": {"PodDeviceEntries": [{"PodUID", "ContainerName", "ResourceName", "DeviceIDs"}],
    "RegisteredDevices": {...}}, "Checksum": n}``; ``DeviceIDs`` is ``{"<numa node>": [ids]}`` since Kubernetes
    1.20 and a plain list before. Returns ``{device_id: {'pod_uid', 'container', 'resource'}}``; ``None`` for text
    that is not a checkpoint (the caller then cannot tell which VFs are in pods).
    """
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get('Data'), dict):
        return None
    out = {}
    for entry in data['Data'].get('PodDeviceEntries') or []:
        if not isinstance(entry, dict):
            continue
        ids = entry.get('DeviceIDs') or []
        if isinstance(ids, dict):
            ids = [item for numa in sorted(ids) for item in (ids[numa] or [])]
        for device in ids:
            out[str(device)] = {'pod_uid': entry.get('PodUID'), 'container': entry.get('ContainerName'),
                                'resource': entry.get('ResourceName')}
    return out


def _spec(spec):
    try:
        required = required_pkey(spec.get('pkey', '0xffff'))
    except ValueError as exc:
        raise SpecError('gpu_tray_pkey (validate_pkey): %s' % exc)
    mode = spec.get('netns_mode') or 'unmanaged'
    if mode not in NETNS_MODES:
        raise SpecError('gpu_tray_ib_core_netns_mode (validate_netns_mode): %r is not one of %s'
                        % (mode, ', '.join(NETNS_MODES)))
    policies = spec.get('policies') or []
    if not isinstance(policies, list) or not all(isinstance(item, dict) for item in policies):
        raise SpecError('policies must be a list of SriovNetworkNodePolicy objects')
    rails = spec.get('rails') or []
    if isinstance(rails, str):
        rails = rails.split(',')
    try:
        warn_days = int(spec.get('multus_token_warn_days', MULTUS_WARN_DAYS))
    except (TypeError, ValueError):
        raise SpecError('validate_multus_token_warn_days: %r is not a number of days'
                        % spec.get('multus_token_warn_days'))
    if warn_days < 0:
        raise SpecError('validate_multus_token_warn_days: %d is negative' % warn_days)
    return {'pkey': required, 'netns_mode': mode, 'policies': policies,
            'rails': [name.strip() for name in rails if name.strip()],
            'ipoib': bool(spec.get('ipoib', True)),
            'checkpoint_path': spec.get('checkpoint_path') or KUBELET_CHECKPOINT,
            'multus_kubeconfig': spec.get('multus_kubeconfig', MULTUS_KUBECONFIG),
            'multus_token_warn_days': warn_days,
            'multus_namespace': spec.get('multus_namespace') or 'nvidia-network-operator',
            'now': float(spec['now']) if spec.get('now') not in (None, '') else time.time()}


def _allocations(state, path):
    """(allocations or None, note): which PCI functions the kubelet handed to pods."""
    files = state.get('files') or {}
    entry = files.get(path)
    if entry is None:
        return None, 'the kubelet checkpoint %s was not read' % path
    if not entry.get('exists'):
        return {}, None                     # no kubelet (yet), no device plugin allocation: nothing is in a pod
    parsed = parse_kubelet_checkpoint(entry.get('content'))
    if parsed is None:
        return None, ('the kubelet checkpoint %s could not be parsed (%s)'
                      % (path, 'too large to read' if entry.get('content') is None else 'not the device-manager JSON'))
    return parsed, None


def _findings_message(findings, where=''):
    """``<first finding>.`` or ``<first finding> (and 3 more on mlx5_3, mlx5_4).``"""
    more = len(findings) - 1
    tail = ' (and %d more%s)' % (more, ' ' + where if where else '') if more else ''
    return '%s%s.' % (findings[0], tail)


def _vf_label(vf, pf):
    return 'VF %s of %s' % (vf['pci_address'], pf['name'])


def _hex(value):
    text = str(value or '').strip().lower()
    return text[2:] if text.startswith('0x') else text


def policy_selects(policy, pf):
    """True when a SriovNetworkNodePolicy's nicSelector selects the PF (every given selector must match, as the
    SR-IOV operator requires): vendor, deviceID, rootDevices (PCI addresses), pfNames (netdev, ``name#0-7``)."""
    selector = (policy.get('spec') or {}).get('nicSelector') or {}
    if selector.get('vendor') and _hex(selector['vendor']) != _hex(pf.get('pci_vendor_id')):
        return False
    if selector.get('deviceID') and _hex(selector['deviceID']) != _hex(pf.get('pci_device_id')):
        return False
    if selector.get('rootDevices') and pf.get('pci_address') not in selector['rootDevices']:
        return False
    if selector.get('pfNames'):
        names = set(str(name).split('#', 1)[0] for name in selector['pfNames'])
        if not names & set(pf.get('netdevs') or []):
            return False
    return True


def expected_vfs(pf, policies):
    """(numVfs, policy name) of the policies selecting ``pf``: the largest count, as the config daemon applies it."""
    found = [(int((policy.get('spec') or {}).get('numVfs') or 0), (policy.get('metadata') or {}).get('name'))
             for policy in policies if policy.get('kind', 'SriovNetworkNodePolicy') == 'SriovNetworkNodePolicy'
             if policy_selects(policy, pf)]
    return max(found) if found else (None, None)


def _inventory(state, spec):
    """Per rail (and per other PF a policy selects): the PF, the VF count its policy asks for, its VFs (virtfn links)
    with their RDMA device (when the host sees it) and pod allocation."""
    facts = state['ansible_facts']['gpu_tray_rdma']
    devices = facts['devices']
    by_name = dict((dev['name'], dev) for dev in devices)
    by_pci = dict((dev['pci_address'], dev) for dev in devices if dev.get('kind') == 'vf')
    allocations, note = _allocations(state, spec['checkpoint_path'])
    names = list(spec['rails'] or facts['rails'])
    if spec['policies']:
        names += [dev['name'] for dev in devices if dev.get('kind') == 'pf' and dev['name'] not in names
                  if expected_vfs(dev, spec['policies'])[0]]
    rails = []
    for rail in names:
        pf = by_name.get(rail)
        want, policy = expected_vfs(pf, spec['policies']) if pf is not None else (None, None)
        entry = {'rail': rail, 'pf': pf, 'want': want, 'policy': policy, 'vfs': []}
        if pf is not None and pf.get('kind') == 'pf':
            for vf in pf.get('vfs') or []:
                entry['vfs'].append({'pci_address': vf['pci_address'], 'index': vf['index'], 'driver': vf['driver'],
                                     'device': by_pci.get(vf['pci_address']),
                                     'pod': (allocations or {}).get(vf['pci_address'])})
        rails.append(entry)
    return rails, allocations, note


def check_sriov_vfs(host, state, spec, rails, allocations, note):
    wanted = [entry for entry in rails if entry['want']]
    if not spec['policies']:
        return _check(host, 'sriov-vfs', 'skipped', 'The recipe creates no VFs (no SriovNetworkNodePolicy).')
    if not wanted:
        return _check(host, 'sriov-vfs', 'failed', 'No SriovNetworkNodePolicy of the recipe selects a PF of this '
                      'tray.', ['rails %s; the policies select %s' % (
                          ', '.join(entry['rail'] for entry in rails) or 'none',
                          '; '.join(_selector_text(policy) for policy in spec['policies']))],
                      'Check the policies\' nicSelector (rootDevices come from the trays\' rdma facts at deploy time) '
                      'and gpu_tray_rails.', {'rails': []})
    exclusive = state['ansible_facts']['gpu_tray'].get('ib_core_netns_mode') == 'exclusive'
    details, failing, hidden, data = [], [], [], []
    for entry in wanted:
        pf, want = entry['pf'], entry['want']
        row = {'rail': entry['rail'], 'num_vfs': want, 'policy': entry['policy'], 'sriov_numvfs': None,
               'virtfn': len(entry['vfs']), 'problems': []}
        data.append(row)
        if pf is None or pf.get('kind') != 'pf':
            row['problems'].append('rail %s not found under %s' % (entry['rail'], state['rdma']['class_dir']))
        elif pf.get('sriov_totalvfs') is None:
            row['problems'].append('%s (%s) has no sriov_numvfs: SR-IOV is disabled in its firmware (SRIOV_EN)'
                                   % (pf['name'], pf['pci_address']))
        else:
            row['sriov_numvfs'] = pf.get('sriov_numvfs')
            if pf.get('sriov_numvfs') != want:
                row['problems'].append('%s (%s): sriov_numvfs is %s, SriovNetworkNodePolicy %s asks for %d'
                                       % (pf['name'], pf['pci_address'], pf.get('sriov_numvfs'), entry['policy'], want))
            if len(entry['vfs']) != (pf.get('sriov_numvfs') or 0):
                row['problems'].append('%s: sriov_numvfs is %s but %d virtfn links exist'
                                       % (pf['name'], pf.get('sriov_numvfs'), len(entry['vfs'])))
            for vf in entry['vfs']:
                if vf['driver'] != 'mlx5_core':
                    row['problems'].append('%s is %s, not mlx5_core (the policy\'s deviceType netdevice)'
                                           % (_vf_label(vf, pf), 'bound to ' + vf['driver'] if vf['driver']
                                              else 'bound to no driver'))
                elif vf['device'] is None and vf['pod'] and exclusive:
                    hidden.append('%s: RDMA device in the network namespace of pod %s (netns_mode exclusive), '
                                  'not visible on the host' % (_vf_label(vf, pf), vf['pod']['pod_uid']))
                elif vf['device'] is None:
                    row['problems'].append('%s is bound to mlx5_core but has no RDMA device (mlx5_ib not loaded?)'
                                           % _vf_label(vf, pf))
        if row['problems']:
            failing.append(entry['rail'])
            details.extend(row['problems'])
    notes = ([note] if note else []) + hidden
    result = {'rails': data, 'not_visible': hidden}
    if failing:
        message = _findings_message(details, 'on %s' % ', '.join(failing) if len(failing) > 1 else '')
        return _check(host, 'sriov-vfs', 'failed', message, details + notes, FIX_VFS, result)
    total = sum(entry['want'] for entry in wanted)
    return _check(host, 'sriov-vfs', 'passed', 'All %d VFs on %d rails exist, bound to mlx5_core.'
                  % (total, len(wanted)), notes, data=result)


def _selector_text(policy):
    selector = (policy.get('spec') or {}).get('nicSelector') or {}
    return '%s: %s' % ((policy.get('metadata') or {}).get('name'),
                       ', '.join('%s=%s' % (key, selector[key]) for key in sorted(selector)) or 'every NIC')


def check_pkeys(host, state, spec, allocations):
    """The preflight's P_Key check on this read (the rails and every VF of theirs the host sees), VFs in pods named as
    such: the same sentence, fix and record as the preflight's for the same ports."""
    judged = preflight.pkeys(state, spec['pkey'], include_vfs=True, pods=allocations)
    return renamed(judged, '%s/pkeys' % host, host)


def check_vf_ipoib(host, state, spec, rails):
    if not spec['ipoib'] or not spec['policies']:
        return _check(host, 'vf-ipoib', 'skipped', '%s.' % (
            'The recipe creates no VFs' if spec['ipoib'] else 'IPoIB on the VFs is not required'))
    tray = state['ansible_facts']['gpu_tray']
    loaded = 'ib_ipoib' in (tray.get('modules') or [])
    missing, in_pods, checked = [], [], 0
    for entry in rails:
        for vf in entry['vfs']:
            device = vf['device']
            if device is not None and any(port.get('link_layer') != 'InfiniBand' for port in device['ports']):
                continue
            if device is not None and device.get('netdevs'):
                checked += 1
            elif vf['pod']:
                in_pods.append('%s: netdev in the network namespace of pod %s, not visible on the host'
                               % (_vf_label(vf, entry['pf']), vf['pod']['pod_uid']))
            elif vf['driver'] == 'mlx5_core':
                missing.append('%s%s has no IPoIB netdev' % (
                    device['name'] + ' ' if device else '', _vf_label(vf, entry['pf'])))
    data = {'ib_ipoib_loaded': loaded, 'with_netdev': checked, 'missing': missing, 'in_pods': in_pods}
    if missing:
        message = '%d VFs have no IPoIB netdev%s.' % (len(missing), '' if loaded else ' (ib_ipoib is not loaded)')
        return _check(host, 'vf-ipoib', 'failed', message, missing + in_pods, FIX_IPOIB, data)
    if not checked and not in_pods:
        return _check(host, 'vf-ipoib', 'skipped', 'No VF exists to check (see sriov-vfs).')
    return _check(host, 'vf-ipoib', 'passed', 'All %d VFs on the host have their IPoIB netdev%s.'
                  % (checked, ', %d are in pods' % len(in_pods) if in_pods else ''), in_pods, data=data)


def check_netns_mode(host, state, spec):
    """ib_core netns_mode against the mode role rdma_netns sets: the role's and the rolling reboot's judge."""
    judged = judge_netns_mode(state['ansible_facts']['gpu_tray'].get('ib_core_netns_mode'), spec['netns_mode'])
    return renamed(judged, '%s/netns-mode' % host, host)


def _pf_changes(name, pf, before):
    changes = []
    for field in PF_FIELDS:
        if before.get(field) != pf.get(field):
            changes.append('%s %s: %s at the preflight, now %s' % (name, field, before.get(field), pf.get(field)))
    ports_before = dict((port['port'], port) for port in before.get('ports') or [])
    for port in pf.get('ports') or []:
        old = ports_before.get(port['port'])
        if old is None:
            changes.append('%s port %s: not there at the preflight' % (name, port['port']))
            continue
        for field in PORT_FIELDS:
            if old.get(field) != port.get(field):
                changes.append('%s port %s %s: %s at the preflight, now %s'
                               % (name, port['port'], field, old.get(field), port.get(field)))
    return changes


def check_pf_state(host, state, spec, rails, baseline):
    """The rails' PFs up (InfiniBand, ACTIVE / LinkUp) and as the preflight recorded them; their P_Keys are the pkeys
    check's."""
    problems, changes = [], []
    before = dict((dev['name'], dev) for dev in (baseline or {}).get('devices') or [])
    for entry in rails:
        pf = entry['pf']
        if pf is None or pf.get('kind') != 'pf':
            problems.append('rail %s not found under %s' % (entry['rail'], state['rdma']['class_dir']))
            continue
        if not pf.get('ports'):
            problems.append('%s has no ports (mlx5_ib not loaded?)' % pf['name'])
        for port in pf.get('ports') or []:
            label = '%s port %s' % (pf['name'], port['port'])
            if port.get('link_layer') != 'InfiniBand':
                problems.append('%s: link layer %s, not InfiniBand' % (label, port.get('link_layer')))
                continue
            if port.get('state') != 'ACTIVE' or port.get('phys_state') != 'LinkUp':
                problems.append('%s: %s / %s, not ACTIVE / LinkUp' % (label, port.get('state'), port.get('phys_state')))
        if entry['rail'] in before:
            changes += _pf_changes(pf['name'], pf, before[entry['rail']])
    data = {'problems': problems, 'changes': changes, 'baseline': bool(before)}
    notes = [] if before else ['no preflight record of this tray to compare with: judged on the requirements only']
    if problems or changes:
        message = _findings_message(problems + changes)
        if not before:
            message = message[:-1] + ' (no preflight record to compare with).'
        return _check(host, 'pf-state', 'failed', message, problems + changes + notes, FIX_PF, data)
    return _check(host, 'pf-state', 'passed', 'All %d rail PFs are ACTIVE / LinkUp%s.'
                  % (len(rails), ', as at the preflight' if before else
                     '; no preflight record of this tray, so not compared with the preflight'), notes, data=data)


def _day(epoch):
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')


def _in_days(seconds):
    days = int(seconds / 86400.0 + 0.5)
    return 'in less than a day' if days < 1 else 'in %d day%s' % (days, '' if days == 1 else 's')


def check_multus_token(host, state, spec):
    """When the service-account token multus copied into the tray's multus.kubeconfig expires (plugin_utils/multus.py):
    warning within ``multus_token_warn_days`` of its ``exp``, failed once it has lapsed."""
    path = spec['multus_kubeconfig']
    if not path:
        return _check(host, 'multus-token', 'skipped', 'The multus token is not checked '
                      '(validate_multus_kubeconfig is empty).')
    entry = (state.get('files') or {}).get(path)
    if entry is None:
        return _check(host, 'multus-token', 'skipped', '%s was not read in this run.' % path)
    if entry.get('error'):
        return _check(host, 'multus-token', 'warning', '%s could not be read: %s.'
                      % (path, str(entry['error']).rstrip('.')), fix=FIX_MULTUS % (
                          path, '', spec['multus_namespace']), data={'path': path})
    if not entry.get('exists'):
        return _check(host, 'multus-token', 'skipped', 'No %s: multus does not run on this tray.' % path,
                      data={'path': path})
    try:
        if entry.get('content') is None:
            raise TokenError('too large to read')
        token = token_expiry(entry['content'])
    except TokenError as exc:
        return _check(host, 'multus-token', 'warning', 'The token in %s cannot be read: %s.'
                      % (path, str(exc).rstrip('.')), fix=FIX_MULTUS % (path, '', spec['multus_namespace']),
                      data={'path': path})
    data = {'path': path, 'user': token['user'], 'subject': token['subject'], 'exp': token['exp'],
            'iat': token['iat'], 'warn_days': spec['multus_token_warn_days']}
    if token['exp'] is None:
        return _check(host, 'multus-token', 'passed', 'The multus token in %s does not expire (no exp claim).'
                      % path, data=data)
    left = token['exp'] - spec['now']
    data['expires'] = _day(token['exp'])
    data['days_left'] = round(left / 86400.0, 1)
    details = ['issued %s, expires %s (%s)' % (_day(token['iat']) if token['iat'] is not None else 'at an unknown time',
                                               data['expires'], token['subject'] or token['user'])]
    if left <= 0:
        return _check(host, 'multus-token', 'failed', 'The multus token in %s expired on %s: multus on this tray '
                      'cannot read the pods\' network attachments, new pods get no secondary networks.'
                      % (path, data['expires']), details,
                      FIX_MULTUS % (path, '', spec['multus_namespace']), data)
    if left <= spec['multus_token_warn_days'] * 86400:
        return _check(host, 'multus-token', 'warning', 'The multus token in %s expires on %s (%s).'
                      % (path, data['expires'], _in_days(left)), details,
                      FIX_MULTUS % (path, ' before %s' % data['expires'], spec['multus_namespace']), data)
    return _check(host, 'multus-token', 'passed', 'The multus token in %s expires on %s (%s).'
                  % (path, data['expires'], _in_days(left)), details, data=data)


def unread(host, reason):
    """The one check of a tray that could not be read (unreachable, or its read failed)."""
    return [_check(host, 'tray-read', 'failed', 'The tray could not be read: %s.' % reason.rstrip('.'),
                   fix='Bring the tray back (BMC console, network), then validate again; nothing was judged.')]


def evaluate(host, state, spec, baseline=None):
    """Every tray check of ``host`` from its tray_state read ``state`` (see the module docstring)."""
    spec = _spec(spec)
    rails, allocations, note = _inventory(state, spec)
    return [
        check_sriov_vfs(host, state, spec, rails, allocations, note),
        check_pkeys(host, state, spec, allocations),
        check_vf_ipoib(host, state, spec, rails),
        check_netns_mode(host, state, spec),
        check_pf_state(host, state, spec, rails, baseline),
        check_multus_token(host, state, spec),
    ]
