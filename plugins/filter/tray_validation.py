# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation's tray phase, judged on the controller (pure functions in plugin_utils/tray_validation.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: tray_validation
short_description: Judge every GPU tray after the chart stack - VFs, their partition membership, IPoIB, netns mode, PFs
version_added: 0.1.0
description:
  - Takes one M(gpu_tray.cluster.tray_state) read per tray (made after the deploy) and returns the checks of the
    validation's C(trays) phase as check records (the one shape of every phase and report, with C(name), C(status),
    C(message), C(fix), C(details), C(data), C(object)) - for each tray C(<tray>/sriov-vfs), C(<tray>/pkeys),
    C(<tray>/vf-ipoib), C(<tray>/netns-mode), C(<tray>/pf-state) and C(<tray>/multus-token), each with the tray as its C(object) and a
    one-sentence C(message) naming the device.
  - C(sriov-vfs) - per rail, C(sriov_numvfs) and the C(virtfn) links equal the VF count the SriovNetworkNodePolicy
    asks for, every VF is bound to mlx5_core and has an RDMA device. C(pkeys) - every rail PF and VF port is a full
    member of the partition, judged as the preflight judges it (the same sentence, fix and record for the same
    ports). C(vf-ipoib) - every VF has its IPoIB netdev. C(netns-mode) - ib_core C(netns_mode) is the mode role
    C(rdma_netns) sets, judged as the role and the rolling reboot judge it. C(pf-state) - every rail PF is
    InfiniBand and ACTIVE / LinkUp, and its PCI address, firmware version, VF limit, link layer, state, rate and
    P_Keys are what the preflight recorded (O(_input)'s C(baseline)); without a baseline its message says so.
    C(multus-token) - the service-account token in the tray's C(multus.kubeconfig) (read as one of the C(files))
    does not expire within C(multus_token_warn_days) (a warning, with the fix - restart the multus pods) and has
    not expired (failed).
  - A VF handed to a pod (the kubelet's device-manager checkpoint, read in the same M(gpu_tray.cluster.tray_state)
    call as C(files)) whose netdev or RDMA device is in the pod's network namespace is listed as not visible, never
    counted as passed.
  - A tray without a read (unreachable, or its read failed) gets one failed C(<tray>/tray-read) check.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _input:
    description:
      - Mapping of tray name to C({state, spec, baseline, error}) - C(state) the registered
        M(gpu_tray.cluster.tray_state) result (none when the tray was not read), C(error) why it was not read,
        C(baseline) the C(gpu_tray_rdma) facts the preflight recorded (optional).
      - C(spec) - C(rails) (the rail device names), C(policies) (the SriovNetworkNodePolicy objects the recipe
        deploys; a PF's expected VF count is the C(numVfs) of the policies whose C(nicSelector) - vendor, deviceID,
        rootDevices, pfNames - selects it; empty when the recipe creates no VFs), C(pkey), C(netns_mode) (exclusive,
        shared or unmanaged), C(ipoib) (VFs must have an IPoIB netdev, default true), C(checkpoint_path) (the
        kubelet checkpoint, read by M(gpu_tray.cluster.tray_state) as one of its C(files)), C(multus_kubeconfig)
        (multus's kubeconfig, one of the C(files); empty skips C(multus-token)), C(multus_token_warn_days)
        (default 30), C(multus_namespace) (named in the fix, default C(nvidia-network-operator)) and C(now) (seconds
        since the epoch the expiry is compared with; default the current time).
      - Or the list of trays (inventory hostnames), with their reads, specs and baselines in O(states), O(specs) and
        O(baselines) (one entry per tray, in order), O(common) merged into every spec and O(error) as the reason of a
        tray without a read - how the validate role calls it.
    type: raw
    required: true
  states:
    description: With a list input, each tray's registered M(gpu_tray.cluster.tray_state) result (none when not read).
    type: list
    elements: raw
  specs:
    description: With a list input, each tray's spec (see O(_input)).
    type: list
    elements: dict
  baselines:
    description: With a list input, each tray's preflight C(gpu_tray_rdma) facts (none when not recorded).
    type: list
    elements: raw
  common:
    description: With a list input, what every tray's spec gets on top of its own (the recipe's policies, C(now), ...).
    type: dict
  error:
    description: With a list input, why a tray without a read was not read.
    type: str
'''

EXAMPLES = r'''
- name: Judge the trays
  ansible.builtin.set_fact:
    tray_checks: >-
      {{ {'tray01': {'state': hostvars['tray01'].tray_read,
                     'spec': {'rails': ['mlx5_0', 'mlx5_1'], 'policies': sriov_node_policies,
                              'pkey': '0xffff', 'netns_mode': 'unmanaged'}}}
         | gpu_tray.cluster.tray_validation }}
'''

RETURN = r'''
_value:
  description: The checks, tray by tray in natural order, each C({name, status, message, fix, details, data, object}).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def _by_tray(trays, states, specs, baselines, common, error):
    """The mapping form of a list of trays with their parallel reads, specs and baselines."""
    lists = {'states': states or [], 'specs': specs or [], 'baselines': baselines or []}
    short = [name for name, values in lists.items() if len(values) != len(trays)]
    if short:
        raise AnsibleFilterError('tray_validation: %s must have one entry per tray (%d trays)'
                                 % (', '.join(sorted(short)), len(trays)))
    return dict((tray, {'state': state, 'error': error, 'spec': dict(spec or {}, **(common or {})), 'baseline': base})
                for tray, state, spec, base in zip(trays, lists['states'], lists['specs'], lists['baselines']))


def tray_validation(trays, states=None, specs=None, baselines=None, common=None, error=None):
    from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import natural_key
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.tray_validation import evaluate, SpecError, unread
    if isinstance(trays, (list, tuple)):
        trays = _by_tray([str(t) for t in trays], states, specs, baselines, common, error)
    if not isinstance(trays, dict):
        raise AnsibleFilterError('tray_validation: expects a mapping of tray name to {state, spec} or a list of trays, got %s'
                                 % type(trays).__name__)
    checks = []
    for host in sorted(trays, key=natural_key):
        item = trays[host] or {}
        state = item.get('state')
        if not isinstance(state, dict) or state.get('failed') or state.get('unreachable') or 'ansible_facts' not in state:
            reason = item.get('error') or (state or {}).get('msg') or 'no tray_state read of this run'
            checks.extend(unread(host, to_native(reason)))
            continue
        try:
            checks.extend(evaluate(host, state, item.get('spec') or {}, item.get('baseline')))
        except SpecError as exc:
            raise AnsibleFilterError('tray_validation: %s: %s' % (host, to_native(exc)))
        except (KeyError, TypeError) as exc:
            raise AnsibleFilterError('tray_validation: the tray_state result of %s lacks %s (a tray_state of another '
                                     'collection version?)' % (host, to_native(exc)))
    return checks


class FilterModule(object):

    def filters(self):
        return {'tray_validation': tray_validation}
