#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: ib_pkey_check
short_description: Check that InfiniBand ports (PFs and VFs) are full members of a partition
version_added: 0.1.0
description:
  - Reads the P_Key table (C(/sys/class/infiniband/<dev>/ports/<n>/pkeys/<index>)) of every port of the
    selected devices and checks that it holds the required partition with the full-membership bit C(0x8000) set.
  - Only the low 15 bits identify a partition, so C(pkey=0x0123) and C(pkey=0x8123) are the same check.
    C(0xffff) is the default partition as full member; C(0x7fff) is the default partition as limited member,
    with which links come up but every RDMA connection between hosts fails with retry-exceeded.
  - Partition membership is provisioned by the subnet/fabric manager (UFM). VFs are separate virtual ports with
    their own GUIDs, so the fabric must add each VF GUID as a full member too; fixing the PFs alone is not enough.
  - Only InfiniBand ports have partitions. A port of a selected device whose link layer is not C(InfiniBand)
    (Ethernet/RoCE, C(Unknown)) is not judged; it is listed in C(skipped_ports).
  - A VF can only be checked when its RDMA device is visible under C(sysfs_root/class/infiniband). The module
    compares each selected PF's C(device/virtfn<n>) links and C(sriov_numvfs) with the VFs it found and lists the
    ones it could not check in C(unchecked_vfs), with a warning - VFs moved to a pod network namespace (ib_core
    C(netns_mode=0)), bound to C(vfio-pci), or without C(mlx5_ib). Their P_Keys must be checked where they live.
  - Returns per-port results whether or not it fails.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  devices:
    description:
      - RDMA device names to check (for example C([mlx5_0])).
      - Default is the rails as computed by M(gpu_tray.cluster.rdma_facts) (ConnectX PFs with InfiniBand ports,
        BlueField excluded).
      - An unknown device name is a failure.
    type: list
    elements: str
  include_vfs:
    description:
      - Also check every VF (device with C(device/physfn)) whose PF is one of I(devices).
    type: bool
    default: true
  pkey:
    description:
      - The partition key every port must hold as a full member, as a string of 1-4 hexadecimal digits with an
        optional C(0x) prefix. The membership bit in the given value is ignored; the port must have it set.
      - A number is taken as the number it is - YAML reads an unquoted C(0x8123) as 33059 (0x8123) and C(65535) as
        0xffff; a string is hexadecimal (C("8123") is 0x8123).
    type: raw
    default: '0xffff'
  fail_on_error:
    description:
      - Fail when a port is not a full member. With C(false) the module only reports (C(failed_ports)).
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.proc_unused
  - gpu_tray.cluster.host_paths.sysfs
seealso:
  - module: gpu_tray.cluster.rdma_facts
'''

EXAMPLES = r'''
- name: Every rail port and every VF must be a full member of the default partition
  gpu_tray.cluster.ib_pkey_check:

- name: Tenant partition 0x0123 (either 0x0123 or 0x8123 may be given)
  gpu_tray.cluster.ib_pkey_check:
    pkey: "0x8123"

- name: Report only, for a fleet-wide summary
  gpu_tray.cluster.ib_pkey_check:
    sysfs_root: "{{ gpu_tray_sysfs_root | default('/sys') }}"
    fail_on_error: false
  register: pkeys

- name: Show failing ports
  ansible.builtin.debug:
    msg: "{{ pkeys.failed_ports }}"
'''

RETURN = r'''
pkey:
  description: The required partition key with the full-membership bit set.
  type: str
  returned: always
  sample: "0xffff"
checked_devices:
  description: Names of the devices whose ports were checked.
  type: list
  elements: str
  returned: always
  sample: [mlx5_0, mlx5_5, mlx5_6]
ports:
  description: One result per checked (InfiniBand) port.
  type: list
  elements: dict
  returned: always
  contains:
    device:
      description: RDMA device name.
      type: str
      sample: mlx5_3
    port:
      description: Port number.
      type: int
      sample: 1
    kind:
      description: C(pf) or C(vf).
      type: str
      sample: vf
    pci_address:
      description: PCI address of the device.
      type: str
      sample: "0000:03:00.2"
    physfn:
      description: PCI address of the PF for a VF.
      type: str
      sample: "0000:03:00.0"
    port_guid:
      description: Port GUID (from C(gids/0)); what the fabric manager must add to the partition.
      type: str
      sample: "b83f:d203:00a1:b2c4"
    link_layer:
      description: Port link layer.
      type: str
      sample: InfiniBand
    state:
      description: Port logical state.
      type: str
      sample: ACTIVE
    pkeys:
      description: Non-zero P_Key table entries.
      type: list
      elements: str
      sample: ["0x7fff"]
    membership:
      description: C(full), C(limited) (partition present without C(0x8000)) or C(none).
      type: str
      sample: limited
    ok:
      description: Whether the port is a full member of the partition.
      type: bool
      sample: false
    label:
      description: Human-readable port name used in messages.
      type: str
      sample: mlx5_3 port 1 (VF of 0000:03:00.0)
skipped_ports:
  description: Ports of the selected devices that were not checked because their link layer is not InfiniBand.
  type: list
  elements: dict
  returned: always
  sample: [{device: mlx5_7, port: 2, kind: pf, pci_address: "0000:08:00.0", link_layer: Ethernet,
            label: "mlx5_7 port 2 (PF 0000:08:00.0)"}]
unchecked_vfs:
  description:
    - VFs of the selected PFs (from C(virtfn<n>) links and C(sriov_numvfs)) that have no RDMA device under
      C(sysfs_root/class/infiniband), so their P_Keys could not be read. Empty with I(include_vfs=false).
  type: list
  elements: dict
  returned: always
  sample: [{pf: mlx5_3, physfn: "0000:06:00.0", pci_address: "0000:06:00.3", driver: vfio-pci,
            reason: "bound to vfio-pci, not mlx5_core, so no RDMA device on the host"}]
failed_ports:
  description: Labels of the ports that are not full members.
  type: list
  elements: str
  returned: always
  sample: ["mlx5_3 port 1 (VF of 0000:03:00.0)"]
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
  description: One line per failing port (label, port GUID, the keys it holds); empty when the check passed.
  type: list
  elements: str
  returned: always
  sample: ["mlx5_5 port 1 (VF of 0000:06:00.0) GUID b83f:d203:00a1:b214 holds 0x7fff (default partition, limited member)"]
fix:
  description: What to do about the problems, or null when the check passed.
  type: str
  returned: always
msg:
  description:
    - One sentence - which ports are not full members of which partition, grouped by PF (details in RV(problems),
      the fix in RV(fix)). The preflight's and the validation's C(pkeys) checks say the same for the same ports.
  type: str
  returned: always
  sample: "1 InfiniBand port is a limited member of partition 0xffff, not a full member: VF mlx5_5 of mlx5_0."
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    check_argument_spec,
    parse_pkey_option,
    report_verdict,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_pkeys
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import (
    collect_rdma,
    pkey_base,
    select_devices,
)


def build_module():
    return AnsibleModule(
        argument_spec=check_argument_spec(
            devices=dict(type='list', elements='str'),
            include_vfs=dict(type='bool', default=True),
            pkey=dict(type='raw', default='0xffff', no_log=False),
        ),
        supports_check_mode=True,
    )


def main():
    module = build_module()
    params = module.params
    try:
        wanted = parse_pkey_option(params['pkey'])
    except ValueError as exc:
        module.fail_json(msg='option pkey: %s' % exc)
    if pkey_base(wanted) == 0:
        module.fail_json(msg='option pkey: %s is not a usable partition key (0x0000 and 0x8000 mark empty '
                             'table slots)' % params['pkey'])
    facts = collect_rdma(params['sysfs_root'])
    devices, unknown = select_devices(facts, params['devices'], params['include_vfs'])
    if unknown:
        module.fail_json(msg='option devices names %s, which do not exist under %s (found: %s)'
                             % (', '.join(unknown), facts['class_dir'],
                                ', '.join(dev['name'] for dev in facts['devices']) or 'none'))
    judged = judge_pkeys(facts, devices, wanted | 0x8000, params['include_vfs'])
    report_verdict(module, judged, **judged['data'])


if __name__ == '__main__':
    main()
