#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: rdma_facts
short_description: Gather RDMA device, port and SR-IOV facts from /sys/class/infiniband
version_added: 0.1.0
description:
  - Reads C(/sys/class/infiniband/<dev>) for every RDMA device and returns one entry per device with its PCI
    address, PCI device id, PF/VF kind, netdevs, SR-IOV counts and per-port link layer, state, physical state,
    rate and non-zero P_Key table entries.
  - Computes the east-west I(rails) - the ConnectX physical functions whose ports are InfiniBand, excluding
    BlueField DPUs (on a GB200 NVKE tray C(mlx5_0), C(mlx5_1), C(mlx5_3), C(mlx5_4); C(mlx5_2) is the
    BlueField-3 and is not a rail).
  - Reads only sysfs; runs no tools.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  rails:
    description:
      - Explicit list of rail device names (for example C([mlx5_0, mlx5_1])). Overrides the automatic selection.
      - Every name must exist under C(sysfs_root/class/infiniband), otherwise the module fails.
      - The returned I(rails) are sorted in natural order and listed once, whatever the order given here.
    type: list
    elements: str
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.proc_unused
  - gpu_tray.cluster.host_paths.sysfs
  - gpu_tray.cluster.host_paths.facts
seealso:
  - module: gpu_tray.cluster.ib_pkey_check
  - module: gpu_tray.cluster.nic_firmware
'''

EXAMPLES = r'''
- name: Gather RDMA facts
  gpu_tray.cluster.rdma_facts:

- name: Gather RDMA facts from the rehearsal lab's simulated tray
  gpu_tray.cluster.rdma_facts:
    sysfs_root: "{{ gpu_tray_sysfs_root | default('/sys') }}"

- name: Show the rails
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpu_tray_rdma.rails }}"

- name: Pin the rails explicitly
  gpu_tray.cluster.rdma_facts:
    rails: [mlx5_0, mlx5_1, mlx5_3, mlx5_4]
'''

RETURN = r'''
ansible_facts:
  description: Facts to add to the host's facts.
  returned: always
  type: dict
  contains:
    gpu_tray_rdma:
      description: RDMA devices and rails of the tray.
      returned: always
      type: dict
      contains:
        sysfs_root:
          description: The sysfs root that was read.
          type: str
          returned: always
          sample: /sys
        rails:
          description:
            - Names of the rail devices (automatic or the C(rails) option), in natural order (C(mlx5_10) after
              C(mlx5_9)), each once.
          type: list
          elements: str
          returned: always
          sample: [mlx5_0, mlx5_1, mlx5_3, mlx5_4]
        rail_pci_addresses:
          description: PCI addresses of the rails, in the order of I(rails).
          type: list
          elements: str
          returned: always
          sample: ["0000:03:00.0", "0000:04:00.0"]
        connectx_pfs:
          description:
            - Every ConnectX physical function (BlueField and VFs excluded), whatever its link layer.
            - A rail whose firmware link type was switched to Ethernet is missing from I(rails) but listed here.
              M(gpu_tray.cluster.nic_firmware) queries only the rails by default; it queries these too with
              I(include_non_rail_connectx=true).
          type: list
          elements: str
          returned: always
          sample: [mlx5_0, mlx5_1, mlx5_3, mlx5_4]
        connectx_pci_addresses:
          description: PCI addresses of I(connectx_pfs), in the same order.
          type: list
          elements: str
          returned: always
          sample: ["0000:03:00.0", "0000:04:00.0"]
        devices:
          description: One entry per C(/sys/class/infiniband/<dev>).
          type: list
          elements: dict
          returned: always
          contains:
            name:
              description: RDMA device name.
              type: str
              sample: mlx5_0
            pci_address:
              description: PCI BDF (basename of the C(device) symlink).
              type: str
              sample: "0000:03:00.0"
            pci_vendor_id:
              description: PCI vendor id from C(device/vendor).
              type: str
              sample: "0x15b3"
            pci_device_id:
              description: PCI device id from C(device/device), e.g. C(0x1021) ConnectX-7, C(0xa2dc) BlueField-3.
              type: str
              sample: "0x1021"
            model:
              description: Model name for known Mellanox/NVIDIA device ids, else null.
              type: str
              sample: ConnectX-7
            kind:
              description: C(pf) or C(vf); a VF has a C(device/physfn) link.
              type: str
              sample: pf
            physfn:
              description: PCI address of the parent PF for a VF, null for a PF.
              type: str
              sample: null
            node_guid:
              description: Content of C(node_guid).
              type: str
              sample: "b83f:d203:00a1:b2c4"
            fw_ver:
              description: Content of C(fw_ver).
              type: str
              sample: "28.43.1014"
            netdevs:
              description: Network interfaces under C(device/net/).
              type: list
              elements: str
              sample: [ibp3s0]
            sriov_totalvfs:
              description: C(device/sriov_totalvfs) for a PF (null for VFs or when absent).
              type: int
              sample: 16
            sriov_numvfs:
              description: C(device/sriov_numvfs) for a PF (null for VFs or when absent).
              type: int
              sample: 0
            vfs:
              description:
                - For a PF, every VF from its C(device/virtfn<n>) links, whatever driver it is bound to and whether
                  or not its RDMA device is visible on the host (a VF moved to a pod network namespace, bound to
                  C(vfio-pci), or without C(mlx5_ib) has none). Empty for a VF.
              type: list
              elements: dict
              sample: [{index: 0, pci_address: "0000:06:00.1", driver: mlx5_core}]
              contains:
                index:
                  description: The C(<n>) of C(virtfn<n>).
                  type: int
                pci_address:
                  description: PCI address of the VF.
                  type: str
                driver:
                  description: Name of the driver bound to the VF, or null.
                  type: str
            is_rail:
              description: Whether the device is one of I(rails).
              type: bool
              sample: true
            ports:
              description: One entry per C(ports/<n>).
              type: list
              elements: dict
              contains:
                port:
                  description: Port number.
                  type: int
                  sample: 1
                link_layer:
                  description: C(InfiniBand), C(Ethernet) or C(Unknown).
                  type: str
                  sample: InfiniBand
                state:
                  description: Logical state name from C(state) (C(4 ACTIVE) gives C(ACTIVE)).
                  type: str
                  sample: ACTIVE
                state_num:
                  description: Numeric logical state.
                  type: int
                  sample: 4
                phys_state:
                  description: Physical state name from C(phys_state).
                  type: str
                  sample: LinkUp
                phys_state_num:
                  description: Numeric physical state.
                  type: int
                  sample: 5
                rate:
                  description: Raw C(rate) text.
                  type: str
                  sample: 400 Gb/sec (4X NDR)
                rate_gbps:
                  description: Rate in Gb/s (int, or float for 2.5/5 Gb/s links); null if unreadable.
                  type: raw
                  sample: 400
                width:
                  description: Link width (the C(4) of C(4X)).
                  type: int
                  sample: 4
                speed:
                  description: Lane speed name (C(NDR), C(HDR), C(XDR), ...).
                  type: str
                  sample: NDR
                lid:
                  description: Content of C(lid).
                  type: str
                  sample: "0x12"
                port_guid:
                  description: Port GUID (low 64 bits of C(gids/0)).
                  type: str
                  sample: "b83f:d203:00a1:b2c4"
                pkeys:
                  description: Non-zero P_Key table entries, lower-case C(0x%04x), table order.
                  type: list
                  elements: str
                  sample: ["0xffff"]
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    host_paths_argument_spec,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import collect_rdma


def build_module():
    return AnsibleModule(
        argument_spec=host_paths_argument_spec(
            rails=dict(type='list', elements='str'),
        ),
        supports_check_mode=True,
    )


def main():
    module = build_module()
    sysfs_root = module.params['sysfs_root']
    rails = module.params['rails']
    facts = collect_rdma(sysfs_root, rails=rails)
    names = [dev['name'] for dev in facts['devices']]
    if rails is not None:
        unknown = [name for name in rails if name not in names]
        if unknown:
            module.fail_json(
                msg='option rails names %s, which do not exist under %s (found: %s)'
                    % (', '.join(unknown), facts['class_dir'], ', '.join(names) or 'no RDMA devices'),
                fix='Fix the rails list or check that the mlx5 driver is loaded.')
    by_name = dict((dev['name'], dev) for dev in facts['devices'])
    for dev in facts['devices']:
        dev['is_rail'] = dev['name'] in facts['rails']
    result = {
        'sysfs_root': sysfs_root,
        'rails': facts['rails'],
        'rail_pci_addresses': [by_name[name]['pci_address'] for name in facts['rails']],
        'connectx_pfs': facts['connectx_pfs'],
        'connectx_pci_addresses': [by_name[name]['pci_address'] for name in facts['connectx_pfs']],
        'devices': facts['devices'],
    }
    module.exit_json(changed=False, ansible_facts={'gpu_tray_rdma': result})


if __name__ == '__main__':
    main()
