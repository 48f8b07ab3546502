#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: nic_firmware
short_description: Check ConnectX firmware settings (SR-IOV, NUM_OF_VFS, link type) with mstconfig
version_added: 0.1.0
description:
  - Runs C(mstconfig -e -d <bdf> q) (mstflint) for each device and parses the C(Default), C(Current) and
    C(Next Boot) columns (output without C(-e), which has only C(Next Boot), is accepted too).
  - Fails when C(SRIOV_EN) is false, when C(NUM_OF_VFS) is below I(min_num_vfs), or when a C(LINK_TYPE_P<n>)
    differs from I(link_type) - in the current or the next-boot column.
  - The fix is always a human-planned maintenance - set the values with the vendor tool (C(mstconfig -d <bdf> -y set
    SRIOV_EN=True NUM_OF_VFS=<n> LINK_TYPE_P1=IB)) and cold power-cycle the tray. This collection never writes
    NIC firmware and never runs C(mstfwreset).
  - A device the tool cannot open (C(-E-) message, rc 3) is reported as a per-device error.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  devices:
    description:
      - PCI addresses (BDFs, for example C(0000:03:00.0)) of the physical functions to query.
      - Default is every ConnectX PF (BlueField and VFs excluded) from I(rdma_facts) when it is given (its
        C(connectx_pci_addresses), or C(rail_pci_addresses) from an older fact), otherwise the ConnectX PFs found
        under I(sysfs_root). That is the rails plus any ConnectX PF whose link layer is not InfiniBand - a rail
        whose firmware link type was switched to Ethernet is no longer a rail by link layer, and would otherwise
        escape the link-type check.
    type: list
    elements: str
  rdma_facts:
    description:
      - The C(ansible_facts.gpu_tray_rdma) dict returned by M(gpu_tray.cluster.rdma_facts). Its
        C(connectx_pci_addresses) are queried when I(devices) is not given.
    type: dict
  mstconfig_path:
    description:
      - The mstconfig executable, a name looked up in C(PATH) or an absolute path (a tool double in tests).
    type: path
    default: mstconfig
  extended:
    description:
      - Pass C(-e) to show the Default/Current/Next Boot columns. Without it only Next Boot is known, and the
        current (running) values cannot be checked.
    type: bool
    default: true
  min_num_vfs:
    description:
      - Minimum C(NUM_OF_VFS) (current and next boot). Must be 0 or more. Not checked when omitted.
    type: int
  require_sriov:
    description:
      - Require C(SRIOV_EN) to be C(True(1)) (current and next boot).
    type: bool
    default: true
  link_type:
    description:
      - Required link type of every C(LINK_TYPE_P<n>). A card that reports no C(LINK_TYPE_P<n>) has a fixed
        link type and passes this check.
    type: str
    choices: [IB, ETH]
    default: IB
  fail_on_error:
    description:
      - Fail when a device has a problem or cannot be queried. With C(false) the module only reports.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.sysfs
  - gpu_tray.cluster.host_paths.proc_unused
requirements:
  - mstflint (C(mstconfig)) on the managed host.
seealso:
  - module: gpu_tray.cluster.rdma_facts
'''

EXAMPLES = r'''
- name: Gather RDMA facts
  gpu_tray.cluster.rdma_facts:

- name: The rails' firmware must have SR-IOV with 16 VFs and InfiniBand link type
  gpu_tray.cluster.nic_firmware:
    rdma_facts: "{{ ansible_facts.gpu_tray_rdma }}"
    min_num_vfs: 16

- name: Query the rails found in sysfs (no rdma_facts needed)
  gpu_tray.cluster.nic_firmware:
    sysfs_root: "{{ gpu_tray_sysfs_root | default('/sys') }}"
    min_num_vfs: 16

- name: Query two functions explicitly, report only
  gpu_tray.cluster.nic_firmware:
    devices: ["0000:03:00.0", "0000:04:00.0"]
    fail_on_error: false
  register: fw
'''

RETURN = r'''
devices:
  description: Per-device results, keyed by PCI address.
  type: dict
  returned: always
  sample:
    "0000:03:00.0":
      ok: false
      error: null
      extended: true
      problems:
        - param: NUM_OF_VFS
          column: next_boot
          found: "8"
          expected: ">= 16"
          detail: "NUM_OF_VFS below 16 (default=16, current=16, next boot=8)"
      params:
        NUM_OF_VFS: {modified: true, default: "16", current: "16", next_boot: "8"}
        SRIOV_EN: {modified: false, default: "False(0)", current: "True(1)", next_boot: "True(1)"}
      info: {device_type: ConnectX7}
failed_devices:
  description: PCI addresses with a problem or a query error.
  type: list
  elements: str
  returned: always
  sample: ["0000:03:00.0"]
msg:
  description: Summary; on failure every device, both values, and the fix.
  type: str
  returned: always
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import TOOL_ENVIRON, hostname
from ansible_collections.gpu_tray.cluster.plugins.module_utils.mstconfig import (
    MstconfigParseError,
    check_firmware,
    parse_mstconfig,
    summarise,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import collect_rdma

FIX = ('Fix (planned by a human, per tray): set the values with the vendor tool, e.g. '
       '"mstconfig -d <bdf> -y set SRIOV_EN=True NUM_OF_VFS=<n> LINK_TYPE_P1=IB", then cold power-cycle the '
       'tray (a warm reboot does not load new firmware settings). gpu_tray.cluster never writes NIC firmware '
       'and never runs mstfwreset.')


def describe_problems(bdf, entry):
    """One line per failing parameter, showing current and next-boot values together."""
    lines = []
    seen = []
    for problem in entry['problems']:
        if problem['param'] in seen:
            continue
        seen.append(problem['param'])
        values = entry['params'].get(problem['param'])
        if values is None:
            lines.append('%s: %s: %s, expected %s' % (bdf, problem['param'], problem['detail'], problem['expected']))
            continue
        shown = ', '.join('%s=%s' % (column.replace('_', ' '), values[column])
                          for column in ('current', 'next_boot') if values.get(column) is not None)
        failing = ' and '.join(p['column'].replace('_', ' ') for p in entry['problems']
                               if p['param'] == problem['param'] and p['column'])
        default = (' (default=%s)' % values['default']) if values.get('default') is not None else ''
        lines.append('%s: %s is %s%s; expected %s in %s'
                     % (bdf, problem['param'], shown, default, problem['expected'], failing))
    return lines


def build_module():
    return AnsibleModule(
        argument_spec=dict(
            proc_root=dict(type='path', default='/proc'),
            sysfs_root=dict(type='path', default='/sys'),
            devices=dict(type='list', elements='str'),
            rdma_facts=dict(type='dict'),
            mstconfig_path=dict(type='path', default='mstconfig'),
            extended=dict(type='bool', default=True),
            min_num_vfs=dict(type='int'),
            require_sriov=dict(type='bool', default=True),
            link_type=dict(type='str', choices=['IB', 'ETH'], default='IB'),
            fail_on_error=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )


def find_tool(module, path):
    if os.path.sep in path:
        return path if os.access(path, os.X_OK) else None
    return module.get_bin_path(path, required=False, opt_dirs=['/usr/sbin', '/usr/local/sbin', '/sbin'])


def query(module, tool, bdf, extended):
    argv = [tool] + (['-e'] if extended else []) + ['-d', bdf, 'q']
    rc, out, err = module.run_command(argv, environ_update=TOOL_ENVIRON)
    entry = {'ok': False, 'error': None, 'extended': None, 'problems': [], 'params': {}, 'info': {},
             'rc': rc, 'command': argv}
    try:
        parsed = parse_mstconfig(out)
    except MstconfigParseError as exc:
        detail = (err or out or '').strip().splitlines()
        entry['error'] = 'mstconfig rc=%d, unparsable output (%s): %s' % (rc, exc, ' | '.join(detail[-3:]))
        return entry, None
    if parsed['errors'] or (rc != 0 and not parsed['params']):
        messages = parsed['errors'] or [(err or out or '').strip()]
        entry['error'] = 'mstconfig rc=%d: %s' % (rc, '; '.join(m for m in messages if m))
        return entry, None
    entry['extended'] = parsed['extended']
    entry['params'] = summarise(parsed)
    entry['info'] = parsed['device']
    return entry, parsed


def main():
    module = build_module()
    host = hostname()
    params = module.params
    if params['min_num_vfs'] is not None and params['min_num_vfs'] < 0:
        module.fail_json(msg='%s: option min_num_vfs must be 0 or more, got %d' % (host, params['min_num_vfs']))
    devices = params['devices']
    if devices is None and params['rdma_facts'] is not None:
        facts = params['rdma_facts']
        devices = facts.get('connectx_pci_addresses') or facts.get('rail_pci_addresses')
        if not isinstance(devices, list) or not devices:
            module.fail_json(msg='%s: option rdma_facts holds no connectx_pci_addresses or rail_pci_addresses '
                                 '(pass the ansible_facts.gpu_tray_rdma result of gpu_tray.cluster.rdma_facts, '
                                 'or devices)' % host)
    elif devices is None:
        facts = collect_rdma(params['sysfs_root'])
        by_name = dict((dev['name'], dev) for dev in facts['devices'])
        devices = [by_name[name]['pci_address'] for name in facts['connectx_pfs']]
        if not devices:
            module.fail_json(msg='%s: no ConnectX NICs under %s to query (devices found: %s). Pass option devices, '
                                 'or check sysfs_root and that mlx5_ib is loaded.'
                                 % (host, facts['class_dir'], ', '.join(sorted(by_name)) or 'none'))
    if not devices:
        module.fail_json(msg='%s: option devices is empty: nothing to check' % host)
    tool = find_tool(module, params['mstconfig_path'])
    if tool is None:
        module.fail_json(msg='%s: mstconfig not found (option mstconfig_path=%s). Install mstflint on the tray.'
                             % (host, params['mstconfig_path']))
    results = {}
    failed = []
    lines = []
    for bdf in devices:
        entry, parsed = query(module, tool, bdf, params['extended'])
        if parsed is not None:
            entry['problems'] = check_firmware(parsed, min_num_vfs=params['min_num_vfs'],
                                               require_sriov=params['require_sriov'],
                                               link_type=params['link_type'])
            entry['ok'] = not entry['problems']
            if not parsed['extended']:
                module.warn('%s: %s: mstconfig output has no Current column (run without -e?); only next-boot '
                            'values were checked' % (host, bdf))
        results[bdf] = entry
        if entry['error']:
            failed.append(bdf)
            lines.append('%s: cannot query firmware: %s' % (bdf, entry['error']))
        elif entry['problems']:
            failed.append(bdf)
            lines.extend(describe_problems(bdf, entry))
    output = dict(changed=False, devices=results, failed_devices=failed)
    if not failed:
        output['msg'] = '%s: firmware settings OK on %s' % (host, ', '.join(devices))
        module.exit_json(**output)
    output['msg'] = '%s: NIC firmware check failed on %d of %d devices:\n  %s\n%s' % (
        host, len(failed), len(devices), '\n  '.join(lines), FIX)
    if params['fail_on_error']:
        module.fail_json(**output)
    module.warn(output['msg'])
    module.exit_json(**output)


if __name__ == '__main__':
    main()
