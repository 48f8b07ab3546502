#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: tray_facts
short_description: Gather the host facts the GPU tray host-prep roles decide from
version_added: 0.1.0
description:
  - OS C(ID)/C(VERSION_ID) from os-release, the running kernel release from C(proc_root/sys/kernel/osrelease),
    the page size, the ib_core C(netns_mode), the modules present under C(sysfs_root/module), the state of the
    host C(nvidia-imex.service) and which container runtime unit is active.
  - C(page_size) is the page size of the kernel the module runs on (C(os.sysconf("SC_PAGE_SIZE"))), so it reflects
    the real running kernel even when I(proc_root) points at a fixture. C(kernel_flavour_page_size) is what the
    release name in I(proc_root) implies - C(65536) for a 64k flavour in the Ubuntu spelling
    (C(6.8.0-1021-nvidia-64k), C(7.0.0-5-nvidia-bos-64k)) or the RHEL-family one
    (C(5.14.0-427.13.1.el9_4.aarch64+64k)), else C(4096). On a real tray both agree; use
    C(kernel_flavour_page_size) to decide, because it follows I(proc_root).
  - C(ib_core_netns_mode) is C(shared) (C(Y)), C(exclusive) (C(N)) or null when
    C(sysfs_root/module/ib_core/parameters/netns_mode) is absent (ib_core not loaded).
  - Runs C(systemctl is-enabled) and C(systemctl is-active) (read-only) with C(LC_ALL=C). When systemctl is missing or
    systemd is not PID 1 the unit states are C(unknown).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  os_release_path:
    description:
      - The os-release file. C(/usr/lib/os-release) is read when the default is absent.
    type: path
    default: /etc/os-release
  systemctl_path:
    description:
      - The systemctl executable, a name looked up in C(PATH) (and C(/usr/sbin), C(/usr/local/sbin), C(/sbin)) or a
        path to an executable file (a tool double in tests). When it is not found the unit states are C(unknown).
    type: path
    default: systemctl
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.sysfs
  - gpu_tray.cluster.host_paths.proc
  - gpu_tray.cluster.host_paths.facts
seealso:
  - module: gpu_tray.cluster.rdma_facts
'''

EXAMPLES = r'''
- name: Gather tray facts
  gpu_tray.cluster.tray_facts:
    sysfs_root: "{{ gpu_tray_sysfs_root | default('/sys') }}"
    proc_root: "{{ gpu_tray_proc_root | default('/proc') }}"

- name: The host nvidia-imex service must be masked before the DRA driver
  ansible.builtin.assert:
    that: ansible_facts.gpu_tray.nvidia_imex.enabled == 'masked'
'''

RETURN = r'''
ansible_facts:
  description: Facts to add to the host's facts.
  returned: always
  type: dict
  contains:
    gpu_tray:
      description: Tray facts.
      returned: always
      type: dict
      contains:
        os_id:
          description: os-release C(ID).
          type: str
          sample: ubuntu
        os_version_id:
          description: os-release C(VERSION_ID).
          type: str
          sample: "24.04"
        os_release:
          description: Every os-release key.
          type: dict
          sample: {ID: ubuntu, VERSION_ID: "24.04", VERSION_CODENAME: noble}
        kernel_release:
          description: Content of C(proc_root/sys/kernel/osrelease).
          type: str
          sample: 6.8.0-1021-nvidia-64k
        page_size:
          description: Page size in bytes of the kernel the module runs on.
          type: int
          sample: 65536
        kernel_flavour_page_size:
          description: Page size in bytes implied by the kernel release name (C(-64k) gives 65536, else 4096).
          type: int
          sample: 65536
        ib_core_netns_mode:
          description: C(shared), C(exclusive), C(unknown), or null when ib_core is not loaded.
          type: str
          sample: exclusive
        modules:
          description: Names under C(sysfs_root/module) (loaded modules and built-ins that have parameters).
          type: list
          elements: str
          sample: [ib_core, mlx5_core, mlx5_ib]
        loadable_modules:
          description: The subset of I(modules) with an C(initstate) file, i.e. loaded loadable modules.
          type: list
          elements: str
          sample: [ib_core, mlx5_core]
        nvidia_imex:
          description: State of C(nvidia-imex.service).
          type: dict
          sample: {unit: nvidia-imex.service, enabled: masked, active: inactive}
        container_runtime_units:
          description: C(systemctl is-active) of each runtime unit.
          type: dict
          sample: {containerd.service: inactive, rke2-agent.service: active}
        container_runtime:
          description: >-
            The active container runtime - C(rke2-server), C(rke2-agent), C(k3s) or C(containerd) (RKE2/k3s win
            over a stand-alone containerd), or null.
          type: str
          sample: rke2-agent
        container_runtime_active_units:
          description: Every active runtime unit.
          type: list
          elements: str
          sample: [rke2-agent.service]
        systemd_error:
          description: Why unit states are C(unknown), or null.
          type: str
          sample: null
        dmi:
          description:
            - The SMBIOS identity under C(sysfs_root/class/dmi/id) - C(product_serial), C(product_uuid),
              C(product_name), C(sys_vendor), C(board_serial), C(chassis_serial); null where a field is missing,
              unreadable (C(product_serial) needs root) or a firmware placeholder (C(To Be Filled By O.E.M.)).
            - The serial is how the BMC check of roles C(preflight) and C(rolling_reboot) finds the tray's Redfish
              ComputerSystem.
          type: dict
          sample: {product_serial: "1794523000123", product_uuid: "2b1f0c1e-7d7a-4c55-9a44-0f0e7c3b5a01",
                   product_name: "P4486", sys_vendor: "NVIDIA", board_serial: null, chassis_serial: null}
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import host_paths_argument_spec
from ansible_collections.gpu_tray.cluster.plugins.module_utils.tray import read_tray


def build_module():
    return AnsibleModule(
        argument_spec=host_paths_argument_spec(
            os_release_path=dict(type='path', default='/etc/os-release'),
            systemctl_path=dict(type='path', default='systemctl'),
        ),
        supports_check_mode=True,
    )


def main():
    module = build_module()
    module.exit_json(changed=False, ansible_facts={'gpu_tray': read_tray(module, module.params)})


if __name__ == '__main__':
    main()
