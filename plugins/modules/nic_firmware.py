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
  - Also fails when the configuration table has no parameters (cut-off output) - nothing could be verified.
  - The fix for a firmware setting is always a human-planned maintenance - set the values with the vendor tool
    (C(mstconfig -d <bdf> -y set SRIOV_EN=True NUM_OF_VFS=<n> LINK_TYPE_P1=IB)) and cold power-cycle the tray.
    This collection never writes NIC firmware and never runs C(mstfwreset).
  - A device the tool cannot query (a C(-E-) message on stdout or stderr, for example rc 3 C(Failed to open the
    device)) is reported as a per-device error, with its own fix (the address, root privileges, mstflint / the
    mst driver) - the firmware fix is only given for devices whose settings were read.
  - When mstconfig rejects C(-e) as an unknown argument (an old mstflint), the query is retried once without
    C(-e), with a warning; then only the next-boot values are checked.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  devices:
    description:
      - PCI addresses (BDFs, for example C(0000:03:00.0)) of the physical functions to query.
      - Default is the rails - the C(rail_pci_addresses) of I(rdma_facts) when it is given (which honours an
        explicit C(rails) list given to M(gpu_tray.cluster.rdma_facts)), otherwise the rails found under
        I(sysfs_root) (ConnectX PFs with InfiniBand ports, BlueField excluded). A ConnectX card deliberately run as
        Ethernet (storage, front-end) is not a rail and is not queried unless I(include_non_rail_connectx=true).
      - A rail whose firmware link type was switched to Ethernet is no longer a rail by link layer. Pass the
        expected rail names in I(rails) (for example the inventory's C(gpu_tray_rails)) so that it is still queried
        and fails the link-type check, or check the rail list separately (the preflight role's C(rails) check
        compares it with C(gpu_tray_rails)).
      - Mutually exclusive with I(rails); I(include_non_rail_connectx) does not apply to an explicit list.
    type: list
    elements: str
  rails:
    description:
      - Expected rail device names (for example C([mlx5_0, mlx5_1, mlx5_3, mlx5_4])). Their PCI functions are queried
        whatever their current link layer, so a rail whose firmware was switched to Ethernet fails the link-type
        check. Names are looked up in I(rdma_facts) C(devices) when given, otherwise under I(sysfs_root); an
        unknown name is a failure.
      - Replaces the rails of I(rdma_facts) / I(sysfs_root). Mutually exclusive with I(devices).
    type: list
    elements: str
  include_non_rail_connectx:
    description:
      - Also query every other ConnectX PF (BlueField and VFs excluded) - the C(connectx_pci_addresses) of
        I(rdma_facts), or the ConnectX PFs under I(sysfs_root) - whatever its link layer. With the default
        I(link_type=IB) an Ethernet card then fails the link-type check, so use this for a tray whose ConnectX
        cards are all meant to be rails.
      - Ignored when I(devices) is given.
    type: bool
    default: false
  rdma_facts:
    description:
      - The C(ansible_facts.gpu_tray_rdma) dict returned by M(gpu_tray.cluster.rdma_facts). Its
        C(rail_pci_addresses) are queried when neither I(devices) nor I(rails) is given.
    type: dict
  mstconfig_path:
    description:
      - The mstconfig executable, a name looked up in C(PATH) (and C(/usr/sbin), C(/usr/local/sbin), C(/sbin)) or a
        path to an executable file (a tool double in tests).
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

- name: Query the expected rails, even one whose firmware now says ETH
  gpu_tray.cluster.nic_firmware:
    rdma_facts: "{{ ansible_facts.gpu_tray_rdma }}"
    rails: "{{ gpu_tray_rails }}"
    min_num_vfs: 16

- name: Query two functions explicitly, report only
  gpu_tray.cluster.nic_firmware:
    devices: ["0000:03:00.0", "0000:04:00.0"]
    fail_on_error: false
  register: fw
'''

RETURN = r'''
devices:
  description:
    - Per-device results, keyed by PCI address - C(ok), C(error) (why the device could not be queried), C(extended),
      C(problems), C(params), C(info), and the query itself (C(bdf), C(name), C(command), C(rc),
      C(retried_without_e), C(usage_error)).
    - The same entries the preflight keeps in its C(nic_firmware) evidence (there C(name) is the rail name).
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
checks:
  description:
    - The check as one record (module_utils/check_record.py) - C(name), C(status) (C(passed); C(failed); C(warning)
      when it passed but something could not be judged), C(message) (RV(msg)), C(fix), C(details) (RV(problems),
      then what could not be judged), C(data) and C(object) - the shape the preflight, the validation and their
      reports give every check.
  type: list
  elements: dict
  returned: always
problems:
  description: One line per failing parameter or device that could not be queried, naming the device and both values.
  type: list
  elements: str
  returned: always
  sample: ["0000:04:00.0: NUM_OF_VFS is current=16, next boot=8 (default=16); expected >= 16 in next boot"]
fix:
  description:
    - What to do, or null when the check passed - the firmware fix for devices whose settings are wrong, the query
      fix for devices that could not be queried.
  type: str
  returned: always
msg:
  description:
    - One sentence naming the devices whose settings are wrong and those that could not be read (details in
      RV(problems), the fix in RV(fix)). The preflight's C(nic_firmware) check says the same for the same tray.
  type: str
  returned: always
  sample: NIC firmware settings are wrong on 1 of 4 devices (0000:04:00.0).
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    check_argument_spec,
    find_tool,
    report_verdict,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import firmware_entry, judge_firmware
from ansible_collections.gpu_tray.cluster.plugins.module_utils.mstconfig import query_device
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import collect_rdma


def build_module():
    return AnsibleModule(
        argument_spec=check_argument_spec(
            devices=dict(type='list', elements='str'),
            rails=dict(type='list', elements='str'),
            include_non_rail_connectx=dict(type='bool', default=False),
            rdma_facts=dict(type='dict'),
            mstconfig_path=dict(type='path', default='mstconfig'),
            extended=dict(type='bool', default=True),
            min_num_vfs=dict(type='int'),
            require_sriov=dict(type='bool', default=True),
            link_type=dict(type='str', choices=['IB', 'ETH'], default='IB'),
        ),
        mutually_exclusive=[['devices', 'rails']],
        supports_check_mode=True,
    )


def _facts_devices(module, facts):
    devices = facts.get('devices')
    if not isinstance(devices, list) or not all(isinstance(dev, dict) for dev in devices):
        module.fail_json(msg='option rdma_facts has no devices list (pass the ansible_facts.gpu_tray_rdma result '
                             'of gpu_tray.cluster.rdma_facts)')
    return devices


def select_targets(module, params):
    """BDFs to query when option devices is not given: the rails (or option rails), plus other ConnectX PFs
    with include_non_rail_connectx."""
    facts = params['rdma_facts']
    if facts is not None:
        where = 'option rdma_facts'
        rail_bdfs = facts.get('rail_pci_addresses')
        other_bdfs = facts.get('connectx_pci_addresses') or []
        if params['rails'] is None and not isinstance(rail_bdfs, list):
            module.fail_json(msg='option rdma_facts has no rail_pci_addresses (pass the '
                                 'ansible_facts.gpu_tray_rdma result of gpu_tray.cluster.rdma_facts, or devices)')
        all_devices = _facts_devices(module, facts) if params['rails'] is not None else []
    else:
        collected = collect_rdma(params['sysfs_root'])
        where = collected['class_dir']
        by_name = dict((dev['name'], dev) for dev in collected['devices'])
        rail_bdfs = [by_name[name]['pci_address'] for name in collected['rails']]
        other_bdfs = [by_name[name]['pci_address'] for name in collected['connectx_pfs']]
        all_devices = collected['devices']
    if params['rails'] is not None:
        by_name = dict((dev.get('name'), dev) for dev in all_devices)
        unknown = [name for name in params['rails'] if name not in by_name or not by_name[name].get('pci_address')]
        if unknown:
            module.fail_json(msg='option rails names %s, which %s does not list as PCI RDMA devices (found: %s)'
                                 % (', '.join(unknown), where, ', '.join(sorted(by_name)) or 'none'),
                             fix='Fix the rails list, or check that the rail is cabled, mlx5_ib is loaded and '
                                 'sysfs_root is right.')
        rail_bdfs = [by_name[name]['pci_address'] for name in params['rails']]
    targets = []
    for bdf in list(rail_bdfs or []) + (list(other_bdfs) if params['include_non_rail_connectx'] else []):
        if bdf not in targets:
            targets.append(bdf)
    if not targets:
        module.fail_json(msg='no ConnectX rails to query (%s lists none%s); expected the ConnectX InfiniBand rails'
                             % (where, '' if facts is not None else
                                ', devices found: %s' % (', '.join(dev['name'] for dev in all_devices) or 'none')),
                         fix='Check that mlx5_ib is loaded and sysfs_root is right, or pass option rails, devices, '
                             'or include_non_rail_connectx=true.')
    return targets


def main():
    module = build_module()
    params = module.params
    if params['min_num_vfs'] is not None and params['min_num_vfs'] < 0:
        module.fail_json(msg='option min_num_vfs must be 0 or more, got %d' % params['min_num_vfs'])
    devices = params['devices']
    if devices is None:
        devices = select_targets(module, params)
    if not devices:
        module.fail_json(msg='option devices is empty: nothing to check')
    tool = find_tool(module, params['mstconfig_path'])
    if tool is None:
        module.fail_json(msg='mstconfig not found (option mstconfig_path=%s)' % params['mstconfig_path'],
                         fix='Install mstflint on the tray.')
    entries = [firmware_entry(query_device(module, tool, bdf, params['extended']),
                              min_num_vfs=params['min_num_vfs'], require_sriov=params['require_sriov'],
                              link_type=params['link_type']) for bdf in devices]
    judged = judge_firmware(entries)
    report_verdict(module, judged, devices=dict((entry['bdf'], entry) for entry in entries),
                   failed_devices=judged['data']['failed_devices'])


if __name__ == '__main__':
    main()
