#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: tray_state
short_description: Read everything a GPU tray check needs in one read-only module call
version_added: 0.1.0
description:
  - Reads the tray's state once - OS and kernel, modules, runtime units (as M(gpu_tray.cluster.tray_facts)), RDMA
    devices, ports and P_Key tables (as M(gpu_tray.cluster.rdma_facts)), huge page pools, the booted kernel command
    line, the containerd configuration and, on request, the raw C(mstconfig) query output of the rails.
  - Judges nothing. The decisions are made on the controller by the preflight planner of the action
    M(gpu_tray.cluster.tray_plan) (which reads the tray with this module), calling the same judges as the check modules (M(gpu_tray.cluster.ib_pkey_check),
    M(gpu_tray.cluster.nic_firmware), M(gpu_tray.cluster.hugepage_check), M(gpu_tray.cluster.kernel_cmdline),
    M(gpu_tray.cluster.containerd_config)). One module call per tray instead of one per check is what keeps a
    fleet-wide preflight close to the cost of a ping.
  - Input it cannot read is returned as an C(error) text in the part concerned, never as a failure of the module,
    so that the filter can name what could not be read.
  - On request it also reads what the host preparation roles decide from (I(files), I(units), I(grub),
    I(modprobe_dirs), I(sysctls)), so that a prepare run reads each tray once and decides on the controller; the
    parts not requested are not read and not returned.
  - Runs only read-only tools - C(systemctl is-enabled/is-active/show), C(mstconfig [-e] -d <bdf> q) and, with
    I(grub), C(/bin/sh) sourcing the GRUB defaults the way C(update-grub) does (nothing is written) - with argv
    lists. The rails' firmware queries run side by side (one per device, at most 8 at a time).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  os_release_path:
    description: The os-release file (C(/usr/lib/os-release) is read when the default is absent).
    type: path
    default: /etc/os-release
  systemctl_path:
    description: Path or name of C(systemctl).
    type: path
    default: systemctl
  query_firmware:
    description:
      - Query the NIC firmware settings of the rails with C(mstconfig) (read-only C(q)).
    type: bool
    default: false
  rails:
    description:
      - Rail device names whose PCI functions are queried with I(query_firmware), whatever their current link layer
        (a rail switched to Ethernet is still queried). Default is the rails found under I(sysfs_root) (ConnectX PFs
        with InfiniBand ports, BlueField excluded). Names that do not exist are returned in C(firmware.unknown).
    type: list
    elements: str
  mstconfig_path:
    description: Path or name of C(mstconfig) on the tray.
    type: path
    default: mstconfig
  extended:
    description:
      - Query with C(-e) (Default, Current and Next Boot columns). An mstconfig that rejects C(-e) is queried again
        without it (C(firmware.devices[].retried_without_e)).
    type: bool
    default: true
  containerd_config_path:
    description: The containerd root configuration. Read only when it exists; its C(imports) are resolved too.
    type: path
    default: /etc/containerd/config.toml
  containerd_root:
    description:
      - Where the file system the containerd configuration belongs to is mounted; I(containerd_config_path) and
        absolute C(imports) globs are read below it (as option C(root) of M(gpu_tray.cluster.containerd_config)).
    type: path
    default: /
  runtime_config_source:
    description:
      - The GPU Operator toolkit's C(RUNTIME_CONFIG_SOURCE), passed to the containerd inspection (warnings only).
    type: str
  files:
    description:
      - Files to return the state of (C(files[path]) - C(exists), C(mode), C(uid), C(gid), C(size), C(is_file) and
        the C(content) of a regular file up to 64 KiB; C(is_dir) and the C(entries) of a directory, its first 256
        names), for example the files a role owns and their directories.
    type: list
    elements: path
  units:
    description:
      - systemd units to read with one C(systemctl show) (C(units.units[unit]) - C(Id), C(LoadState),
        C(UnitFileState), C(ActiveState), C(FragmentPath), C(MainPID) and C(stack_limit), the soft and hard
        C(Max stack size) of the running main process).
    type: list
    elements: str
  grub:
    description:
      - Simulate the GRUB defaults chain with a drop-in in its place (C(grub.steps), the kernel arguments after each
        file) and read the C(linux) lines of the generated configuration (C(grub.cfg_linux)).
    type: dict
    suboptions:
      default_file:
        description: The GRUB defaults file.
        type: path
        default: /etc/default/grub
      dropin:
        description: The drop-in whose effect is simulated (its directory is the drop-in directory).
        type: path
        required: true
      args:
        description: The arguments the drop-in appends to C(GRUB_CMDLINE_LINUX_DEFAULT).
        type: list
        elements: str
        default: []
      cfg:
        description: The generated GRUB configuration.
        type: path
        default: /boot/grub/grub.cfg
  modprobe_dirs:
    description:
      - modprobe.d directories whose files are searched for C(options) lines of I(modprobe_modules)
        (C(modprobe.options), C(file:line) as C(grep -H) prints them).
    type: list
    elements: path
  modprobe_modules:
    description: The modules whose C(options) lines are returned from I(modprobe_dirs).
    type: list
    elements: str
    default: [ib_core]
  sysctls:
    description:
      - Kernel parameters (dotted names) whose current values are read under I(proc_root)C(/sys)
        (C(sysctl[name]), whitespace runs as one space; null when absent).
    type: list
    elements: str
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.sysfs
  - gpu_tray.cluster.host_paths.proc
  - gpu_tray.cluster.host_paths.facts
seealso:
  - module: gpu_tray.cluster.tray_facts
  - module: gpu_tray.cluster.rdma_facts
  - module: gpu_tray.cluster.nic_firmware
'''

EXAMPLES = r'''
- name: Read the tray once (the preflight role does this)
  gpu_tray.cluster.tray_state:
    sysfs_root: "{{ gpu_tray_sysfs_root | default('/sys') }}"
    query_firmware: true
    rails: "{{ gpu_tray_rails }}"
  register: state

- name: Or read and judge with the preflight role (the check modules' rules, on the controller)
  ansible.builtin.include_role:
    name: gpu_tray.cluster.preflight
  vars:
    preflight_fail: false

- name: Its verdict
  ansible.builtin.debug:
    var: preflight_report.failed_checks
'''

RETURN = r'''
ansible_facts:
  description: The facts M(gpu_tray.cluster.tray_facts) and M(gpu_tray.cluster.rdma_facts) return, unchanged in shape.
  type: dict
  returned: always
  contains:
    gpu_tray:
      description: As C(ansible_facts.gpu_tray) of M(gpu_tray.cluster.tray_facts).
      type: dict
    gpu_tray_rdma:
      description: As C(ansible_facts.gpu_tray_rdma) of M(gpu_tray.cluster.rdma_facts) (rails detected, not I(rails)).
      type: dict
rdma:
  description:
    - What the checks need beyond C(ansible_facts.gpu_tray_rdma) - C(class_dir) (where the devices were read) and
      C(vfs_by_pf) (VF device names by PF PCI address).
  type: dict
  returned: always
  sample: {class_dir: /sys/class/infiniband, vfs_by_pf: {"0000:06:00.0": [mlx5_5, mlx5_6]}}
hugepages:
  description: Huge page pools (C(base), C(pools) keyed by size in KiB as strings) and C(meminfo_default_kb).
  type: dict
  returned: always
  sample: {base: /sys/kernel/mm/hugepages, pools: {"2048": {size: 2M, size_kb: 2048, nr_hugepages: 0}},
           meminfo_default_kb: 524288}
cmdline:
  description: The booted command line (C(text)) read from C(path), or C(error) when it could not be read.
  type: dict
  returned: always
  sample: {path: /proc/cmdline, text: "BOOT_IMAGE=/boot/vmlinuz-7.0.0-5-nvidia-bos-64k ro", error: null}
firmware:
  description:
    - With I(query_firmware), the raw mstconfig output per queried PCI function (C(devices) - C(name), C(bdf),
      C(command), C(rc), C(stdout), C(stderr), C(retried_without_e) and C(usage_error), the C(-E-) text of a
      query that rejected C(-e)), rail names that do not exist (C(unknown)) and
      C(error) when mstconfig is missing. C(queried=false) otherwise.
  type: dict
  returned: always
containerd:
  description:
    - C(present) (the root config exists), and when present the inspection M(gpu_tray.cluster.containerd_config)
      makes (C(result), C(problems), C(warnings)) or C(error) when the root config cannot be read.
  type: dict
  returned: always
requested:
  description: Where and what was read besides the always-read parts (I(sysfs_root), I(proc_root), I(files), I(units),
    I(grub), I(modprobe_dirs), I(modprobe_modules), I(sysctls) as given). The C(gpu_tray.cluster.tray_plan) action
    keeps the request it read with itself, to tell whether the read covers a later request.
  type: dict
  returned: always
files:
  description: With I(files), the state of each file by path (see I(files)); C(error) when it could not be read.
  type: dict
  returned: when I(files) is given
  sample: {/etc/sysctl.d/90-gpu-tray-tuning.conf: {exists: true, mode: "0644", uid: 0, gid: 0, size: 16,
           is_file: true, content: "vm.swappiness=1\n", error: null}}
units:
  description: With I(units), C(units) (the properties by unit) and C(error) when systemctl could not be read.
  type: dict
  returned: when I(units) is given
  sample: {error: null, units: {nvidia-imex.service: {Id: nvidia-imex.service, LoadState: masked,
           UnitFileState: masked, ActiveState: inactive, FragmentPath: "", MainPID: "0", stack_limit: null}}}
grub:
  description:
    - With I(grub), C(steps) (C(file) and the kernel argument C(tokens) after it is sourced, in update-grub's
      order), C(simulation_error), C(cfg), C(cfg_exists), C(cfg_linux) (the C(linux) lines) and C(cfg_error).
  type: dict
  returned: when I(grub) is given
modprobe:
  description: With I(modprobe_dirs), C(options) (C(file:line) for each C(options) line of I(modprobe_modules)).
  type: dict
  returned: when I(modprobe_dirs) is given
sysctl:
  description: With I(sysctls), the current value of each parameter (null when the kernel has none).
  type: dict
  returned: when I(sysctls) is given
  sample: {vm.swappiness: "60", net.ipv4.tcp_rmem: "4096 131072 6291456"}
'''

import os
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    find_tool,
    host_paths_argument_spec,
    join_root,
    read_text,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.containerd import (
    HAS_TOML,
    ContainerdConfigError,
    inspect,
    under_root,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.hugepages import (
    meminfo_hugepagesize_kb,
    read_pools,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.mstconfig import query_device
from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import collect_rdma
from ansible_collections.gpu_tray.cluster.plugins.module_utils.tray import (
    GRUB_DEFAULTS,
    MODPROBE_MODULES_DEFAULT,
    REQUEST_OPTIONS,
    read_files,
    read_grub,
    read_modprobe,
    read_sysctls,
    read_tray,
    read_units,
)


def build_module():
    return AnsibleModule(
        argument_spec=host_paths_argument_spec(
            os_release_path=dict(type='path', default='/etc/os-release'),
            systemctl_path=dict(type='path', default='systemctl'),
            query_firmware=dict(type='bool', default=False),
            rails=dict(type='list', elements='str'),
            mstconfig_path=dict(type='path', default='mstconfig'),
            extended=dict(type='bool', default=True),
            containerd_config_path=dict(type='path', default='/etc/containerd/config.toml'),
            containerd_root=dict(type='path', default='/'),
            runtime_config_source=dict(type='str'),
            files=dict(type='list', elements='path'),
            units=dict(type='list', elements='str'),
            grub=dict(type='dict', options=dict(
                default_file=dict(type='path', default=GRUB_DEFAULTS['default_file']),
                dropin=dict(type='path', required=True),
                args=dict(type='list', elements='str', default=[]),
                cfg=dict(type='path', default=GRUB_DEFAULTS['cfg']),
            )),
            modprobe_dirs=dict(type='list', elements='path'),
            modprobe_modules=dict(type='list', elements='str', default=list(MODPROBE_MODULES_DEFAULT)),
            sysctls=dict(type='list', elements='str'),
        ),
        supports_check_mode=True,
    )


def rdma_facts(rdma):
    """The ansible_facts.gpu_tray_rdma dict of rdma_facts (detected rails)."""
    by_name = dict((dev['name'], dev) for dev in rdma['devices'])
    devices = [dict(dev, is_rail=dev['name'] in rdma['rails']) for dev in rdma['devices']]
    return {
        'rails': rdma['rails'],
        'rail_pci_addresses': [by_name[name]['pci_address'] for name in rdma['rails']],
        'connectx_pfs': rdma['connectx_pfs'],
        'connectx_pci_addresses': [by_name[name]['pci_address'] for name in rdma['connectx_pfs']],
        'devices': devices,
    }


def read_cmdline(proc_root):
    path = join_root(proc_root, 'cmdline')
    try:
        with open(path, 'rb') as handle:
            raw = handle.read()
    except (OSError, IOError) as exc:
        return {'path': path, 'text': None, 'error': 'cannot read %s: %s' % (path, exc)}
    # as kernel_cmdline: undecodable bytes stay visible as \xNN, NULs become separators
    text = raw.decode('utf-8', 'backslashreplace').rstrip('\n').replace('\x00', ' ')
    return {'path': path, 'text': text, 'error': None}


def read_hugepages(sysfs_root, proc_root):
    base, pools = read_pools(sysfs_root)
    return {'base': base, 'pools': dict((str(size), pool) for size, pool in pools.items()),
            'meminfo_default_kb': meminfo_hugepagesize_kb(read_text(join_root(proc_root, 'meminfo')))}


def query_firmware(module, params, rdma):
    """Raw mstconfig query output of the rails' PCI functions (read-only ``q``)."""
    by_name = dict((dev['name'], dev) for dev in rdma['devices'])
    names = rdma['rails'] if params['rails'] is None else list(params['rails'])
    unknown = [name for name in names if not (by_name.get(name) or {}).get('pci_address')]
    out = {'queried': True, 'tool': None, 'error': None, 'unknown': unknown, 'devices': []}
    targets = [(name, by_name[name]['pci_address']) for name in names if name not in unknown]
    if not targets:
        return out
    tool = find_tool(module, params['mstconfig_path'])
    if tool is None:
        out['error'] = 'mstconfig not found (mstconfig_path=%s); install mstflint on the tray' % params['mstconfig_path']
        return out
    out['tool'] = tool

    def query(target):
        name, bdf = target
        return dict(query_device(module, tool, bdf, params['extended']), name=name)

    unique = []
    for name, bdf in targets:
        if bdf not in [item[1] for item in unique]:
            unique.append((name, bdf))
    # Each query of a real ConnectX takes a second or more; the devices are independent and the queries
    # read-only, so they run side by side (results keep the rails' order).
    with ThreadPoolExecutor(max_workers=min(8, len(unique))) as pool:
        out['devices'] = list(pool.map(query, unique))
    return out


def read_containerd(params):
    path = under_root(params['containerd_root'], params['containerd_config_path'])
    out = {'present': os.path.isfile(path), 'config_path': path, 'result': None, 'problems': [], 'warnings': [],
           'error': None}
    if not out['present']:
        return out
    if not HAS_TOML:
        out['error'] = 'cannot parse %s: no TOML parser on the tray (tomli, or Python >= 3.11 for tomllib)' % path
        return out
    try:
        found = inspect(params['containerd_config_path'], None, params['runtime_config_source'],
                        root=params['containerd_root'])
        out['result'], out['problems'], out['warnings'] = found
    except ContainerdConfigError as exc:
        out['error'] = str(exc)
    return out


def main():
    module = build_module()
    params = module.params
    rdma = collect_rdma(params['sysfs_root'])
    result = {
        'changed': False,
        'rdma': {'class_dir': rdma['class_dir'], 'vfs_by_pf': rdma['vfs_by_pf']},
        'hugepages': read_hugepages(params['sysfs_root'], params['proc_root']),
        'cmdline': read_cmdline(params['proc_root']),
        'firmware': query_firmware(module, params, rdma) if params['query_firmware'] else {'queried': False},
        'containerd': read_containerd(params),
        'ansible_facts': {'gpu_tray': read_tray(module, params), 'gpu_tray_rdma': rdma_facts(rdma)},
        'requested': dict((key, params[key]) for key in REQUEST_OPTIONS),
    }
    if params['files'] is not None:
        result['files'] = read_files(params['files'])
    if params['units'] is not None:
        result['units'] = read_units(module, find_tool(module, params['systemctl_path']), params['units'],
                                     params['proc_root'])
    if params['grub'] is not None:
        result['grub'] = read_grub(module, params['grub'])
    if params['modprobe_dirs'] is not None:
        result['modprobe'] = read_modprobe(params['modprobe_dirs'], params['modprobe_modules'])
    if params['sysctls'] is not None:
        result['sysctl'] = read_sysctls(params['proc_root'], params['sysctls'])
    module.exit_json(**result)


if __name__ == '__main__':
    main()
