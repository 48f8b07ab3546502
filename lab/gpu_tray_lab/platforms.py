# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-platform hardware data of the simulated trays, in one place.

Everything the lab shows about a tray's hardware (kernel release, os-release,
HCAs with their PCI addresses, link state, firmware configuration, modules the
kernel knows, hugepage pools, vendor services) comes from this file, so a change
of the emulated hardware is a change of data here, not of code.

Formats are the kernel's and the tools' (docs/lab-hardware.md lists them):
``state`` ``4: ACTIVE``, ``phys_state`` ``5: LinkUp``, ``rate``
``400 Gb/sec (4X NDR)``, P_Keys ``0x%04x``, GUIDs ``%04x:%04x:%04x:%04x``.
Values the public references do not give (part numbers, firmware versions,
exact GUIDs, the VR200 rail count and rate) are marked ``illustrative``.
"""

import copy

MELLANOX_VENDOR = 0x15B3
CX7_DEVICE = 0x1021
CX9_DEVICE = 0x1025
BF3_DEVICE = 0xA2DC
MLX_VF_DEVICE = 0x101E

# Files a 64k-page arm64 kernel has under kernel/mm/hugepages: 2M (contiguous
# PTEs), 512M (PMD) and 16G (contiguous PMDs). There is no 1G pool.
HUGEPAGE_SIZES_KB_64K = (2048, 524288, 16777216)
# On a 64k-page kernel the default huge page size is the PMD size (512M).
DEFAULT_HUGEPAGE_KB_64K = 524288

IB_PKEY_TABLE_LEN = 128

# ConnectX-7 firmware configuration (mstconfig): name -> (default, current, next boot).
# Order is the order mstconfig prints them in (a representative subset).
_CX7_MSTCONFIG = [
    ('MEMIC_BAR_SIZE', '0', '0', '0'),
    ('MEMIC_SIZE_LIMIT', '_256KB(1)', '_256KB(1)', '_256KB(1)'),
    ('FLEX_PARSER_PROFILE_ENABLE', '0', '0', '0'),
    ('NUM_OF_VFS', '16', '16', '16'),
    ('NUM_OF_PF', '1', '1', '1'),
    ('SRIOV_EN', 'False(0)', 'True(1)', 'True(1)'),
    ('PF_LOG_BAR_SIZE', '5', '5', '5'),
    ('VF_LOG_BAR_SIZE', '1', '1', '1'),
    ('NUM_PF_MSIX', '63', '63', '63'),
    ('NUM_VF_MSIX', '11', '11', '11'),
    ('INT_LOG_MAX_PAYLOAD_SIZE', 'AUTOMATIC(0)', 'AUTOMATIC(0)', 'AUTOMATIC(0)'),
    ('ADVANCED_PCI_SETTINGS', 'False(0)', 'False(0)', 'False(0)'),
    ('SAFE_MODE_THRESHOLD', '10', '10', '10'),
    ('SAFE_MODE_ENABLE', 'True(1)', 'True(1)', 'True(1)'),
    ('LINK_TYPE_P1', 'IB(1)', 'IB(1)', 'IB(1)'),
    ('KEEP_IB_LINK_UP_P1', 'False(0)', 'False(0)', 'False(0)'),
    ('KEEP_LINK_UP_ON_BOOT_P1', 'False(0)', 'False(0)', 'False(0)'),
]

# BlueField-3 in DPU mode (the ECPF owns the eSwitch; sriov-network-operator's
# mlxutils reads these to refuse firmware changes on DPUs).
_BF3_MSTCONFIG = [
    ('NUM_OF_VFS', '0', '0', '0'),
    ('SRIOV_EN', 'False(0)', 'True(1)', 'True(1)'),
    ('INTERNAL_CPU_MODEL', 'EMBEDDED_CPU(1)', 'EMBEDDED_CPU(1)', 'EMBEDDED_CPU(1)'),
    ('INTERNAL_CPU_PAGE_SUPPLIER', 'ECPF(0)', 'ECPF(0)', 'ECPF(0)'),
    ('INTERNAL_CPU_ESWITCH_MANAGER', 'ECPF(0)', 'ECPF(0)', 'ECPF(0)'),
    ('INTERNAL_CPU_IB_VPORT0', 'ECPF(0)', 'ECPF(0)', 'ECPF(0)'),
    ('INTERNAL_CPU_OFFLOAD_ENGINE', 'ENABLED(0)', 'ENABLED(0)', 'ENABLED(0)'),
    ('LINK_TYPE_P1', 'ETH(2)', 'ETH(2)', 'ETH(2)'),
    ('LINK_TYPE_P2', 'ETH(2)', 'ETH(2)', 'ETH(2)'),
]

_CX9_MSTCONFIG = [row for row in _CX7_MSTCONFIG]

# Kernel modules the tray's kernel "has" (modprobe accepts them), their
# dependencies (loaded first, like modprobe does) and parameters
# (name -> (type, default)). Types: bool (shown Y/N), int, uint, charp.
_RDMA_MODULES = {
    'mlx5_core': {'deps': [], 'params': {
        'prof_sel': ('int', '2'), 'debug_mask': ('uint', '0'), 'probe_vf': ('bool', 'Y')}},
    'mlx5_ib': {'deps': ['mlx5_core', 'ib_uverbs', 'ib_core'], 'params': {'dc_cnak_qp_depth': ('int', '0')}},
    'ib_core': {'deps': [], 'params': {
        'netns_mode': ('bool', 'Y'), 'recv_queue_size': ('int', '512'), 'send_queue_size': ('int', '128'),
        'force_mr': ('bool', 'N')}},
    'ib_uverbs': {'deps': ['ib_core'], 'params': {}},
    'ib_umad': {'deps': ['ib_core'], 'params': {}},
    'ib_cm': {'deps': ['ib_core'], 'params': {}},
    'iw_cm': {'deps': ['ib_core'], 'params': {}},
    'rdma_cm': {'deps': ['ib_core', 'ib_cm', 'iw_cm'], 'params': {}},
    'rdma_ucm': {'deps': ['rdma_cm', 'ib_uverbs', 'ib_core'], 'params': {}},
    'ib_ipoib': {'deps': ['ib_core', 'ib_cm'], 'params': {
        'send_queue_size': ('int', '256'), 'recv_queue_size': ('int', '256'), 'max_nonsrq_conn_qp': ('int', '128')}},
    'ib_iser': {'deps': ['rdma_cm', 'ib_core'], 'params': {}},
    'rpcrdma': {'deps': ['rdma_cm', 'ib_core'], 'params': {}},
    'configfs': {'deps': [], 'params': {}},
    'overlay': {'deps': [], 'params': {'metacopy': ('bool', 'N'), 'redirect_dir': ('bool', 'N')}},
    'br_netfilter': {'deps': ['bridge'], 'params': {}},
    'bridge': {'deps': [], 'params': {}},
    'nf_conntrack': {'deps': [], 'params': {'hashsize': ('uint', '262144')}},
    'ip_tables': {'deps': [], 'params': {}},
    'iptable_nat': {'deps': ['ip_tables'], 'params': {}},
    'vxlan': {'deps': [], 'params': {}},
    'tcp_bbr': {'deps': [], 'params': {}},
    'sch_fq': {'deps': [], 'params': {}},
}

# modprobe aliases (kmod resolves them to the real module name)
_ALIASES = {'xprtrdma': 'rpcrdma', 'svcrdma': 'rpcrdma'}

_NVIDIA_MODULES = {
    'nvidia': {'deps': [], 'params': {
        'NVreg_GrdmaPciTopoCheckOverride': ('int', '0'), 'NVreg_EnableGpuFirmware': ('int', '18')}},
    'nvidia_uvm': {'deps': ['nvidia'], 'params': {}},
    'nvidia_modeset': {'deps': ['nvidia'], 'params': {}},
    'nvidia_drm': {'deps': ['nvidia_modeset'], 'params': {'modeset': ('bool', 'N')}},
    'nvidia_peermem': {'deps': ['nvidia', 'ib_core'], 'params': {}},
}

OS_RELEASE_NOBLE = """PRETTY_NAME="Ubuntu 24.04.3 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.3 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
"""

OS_RELEASE_RESOLUTE = """PRETTY_NAME="Ubuntu 26.04 LTS"
NAME="Ubuntu"
VERSION_ID="26.04"
VERSION="26.04 LTS (Resolute Raccoon)"
VERSION_CODENAME=resolute
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=resolute
LOGO=ubuntu-logo
"""


def _hca(name, bdf, device_id, kind, numa_node, link_layer, rate, fw_ver, mstconfig,
         part, description, totalvfs, rail=None):
    return {
        'name': name,            # IB device name at first boot (mlx5_N)
        'bdf': bdf,
        'vendor': MELLANOX_VENDOR,
        'device': device_id,
        'kind': kind,            # 'rail' (east-west PF) or 'dpu'
        'rail': rail,            # rail number 0..n-1 for kind == 'rail'
        'numa_node': numa_node,
        'link_layer': link_layer,
        'rate': rate,
        'fw_ver': fw_ver,
        'mstconfig': [list(row) for row in mstconfig],
        'part': part,
        'description': description,
        'sriov_totalvfs': totalvfs,
    }


_CX7_DESC = ('NVIDIA ConnectX-7 InfiniBand adapter; NDR IB (400Gb/s) and 400GbE; '
             'single-port OSFP; PCIe 5.0 x16 (illustrative part data)')
_BF3_DESC = 'NVIDIA BlueField-3 DPU; 200GbE; dual-port QSFP112; PCIe 5.0 x16 (illustrative part data)'
_CX9_DESC = 'NVIDIA ConnectX-9 SuperNIC; XDR IB; PCIe 6.0 x16 (illustrative part data)'

PLATFORMS = {
    'nvke-gb200': {
        'description': 'GB200 NVL tray on NVKE: Ubuntu 24.04, -nvidia-64k kernel, 4 ConnectX-7 NDR rails + BlueField-3',
        'service': 'nvke',
        'accelerator': 'gb200',
        # Ubuntu noble's linux-nvidia-64k flavour (6.8.0-10xx-nvidia-64k)
        'kernel_release': '6.8.0-1028-nvidia-64k',
        'os_release': OS_RELEASE_NOBLE,
        'page_size_kb': 64,
        'numa_nodes': 2,
        # two Grace CPUs with 480 GiB LPDDR5X each
        'memory_kb': 2 * 480 * 1024 * 1024,
        'hugepage_sizes_kb': HUGEPAGE_SIZES_KB_64K,
        'default_hugepage_kb': DEFAULT_HUGEPAGE_KB_64K,
        'hcas': [
            _hca('mlx5_0', '0000:03:00.0', CX7_DEVICE, 'rail', 0, 'InfiniBand', '400 Gb/sec (4X NDR)',
                 '28.43.1014', _CX7_MSTCONFIG, 'MCX750500B-0D00_Ax', _CX7_DESC, 16, rail=0),
            _hca('mlx5_1', '0002:03:00.0', CX7_DEVICE, 'rail', 0, 'InfiniBand', '400 Gb/sec (4X NDR)',
                 '28.43.1014', _CX7_MSTCONFIG, 'MCX750500B-0D00_Ax', _CX7_DESC, 16, rail=1),
            _hca('mlx5_2', '0006:01:00.0', BF3_DEVICE, 'dpu', 0, 'Ethernet', '200 Gb/sec (4X HDR)',
                 '32.43.1014', _BF3_MSTCONFIG, '900-9D3B6-00CV-AA0', _BF3_DESC, 16),
            _hca('mlx5_3', '0010:03:00.0', CX7_DEVICE, 'rail', 1, 'InfiniBand', '400 Gb/sec (4X NDR)',
                 '28.43.1014', _CX7_MSTCONFIG, 'MCX750500B-0D00_Ax', _CX7_DESC, 16, rail=2),
            _hca('mlx5_4', '0012:03:00.0', CX7_DEVICE, 'rail', 1, 'InfiniBand', '400 Gb/sec (4X NDR)',
                 '28.43.1014', _CX7_MSTCONFIG, 'MCX750500B-0D00_Ax', _CX7_DESC, 16, rail=3),
        ],
        # Modules the hardware implies at boot (udev would load them for the PCI devices).
        'boot_modules': ['mlx5_core', 'mlx5_ib'],
        # NVKE: GPU Operator installs the driver in a container; the host has no
        # nvidia modules and no nvidia_peermem build exists for the 64k kernel.
        'modules': dict(_RDMA_MODULES),
        'aliases': dict(_ALIASES),
        'services': {
            # unit name -> (unit dir, enabled at install, ExecStart double)
            'containerd.service': {'dir': 'usr/lib/systemd/system', 'enabled': True},
        },
        'containerd_config_version': 3,
        # what the recipe's SriovNetworkNodePolicies ask for on every rail (gpu_tray_num_vfs): `lab sriov`, the
        # lab's stand-in for the SR-IOV config daemon, writes it to sriov_numvfs
        'sriov_num_vfs': 16,
        # the recipe's NicClusterPolicy runs multus (secondaryNetwork.multus): the kubeconfig its entrypoint leaves on
        # the host, with the token valid one year from issuance (the API server's legacy-token extension)
        'multus_token_days': 365,
    },
    'rke2-vr200': {
        'description': 'VR200 NVL72 tray on RKE2: Ubuntu 26.04, 7.0 -nvidia-bos-64k kernel, ConnectX-9 XDR rails',
        'service': 'rke2',
        'accelerator': 'vr200',
        'kernel_release': '7.0.0-14-nvidia-bos-64k',
        'os_release': OS_RELEASE_RESOLUTE,
        'page_size_kb': 64,
        'numa_nodes': 2,
        # illustrative: two Vera CPUs with 1.5 TiB LPDDR5X each
        'memory_kb': 2 * 1536 * 1024 * 1024,
        'hugepage_sizes_kb': HUGEPAGE_SIZES_KB_64K,
        'default_hugepage_kb': DEFAULT_HUGEPAGE_KB_64K,
        # The references give ConnectX-9 (15b3:1025) for VR200 rails and nothing
        # more; 4 rails at 4X XDR with these addresses are illustrative. The
        # BlueField-4 (device id not public) is not emulated.
        'hcas': [
            _hca('mlx5_0', '0000:03:00.0', CX9_DEVICE, 'rail', 0, 'InfiniBand', '800 Gb/sec (4X XDR)',
                 '44.46.1010', _CX9_MSTCONFIG, 'CX9-ILLUSTRATIVE_Ax', _CX9_DESC, 16, rail=0),
            _hca('mlx5_1', '0002:03:00.0', CX9_DEVICE, 'rail', 0, 'InfiniBand', '800 Gb/sec (4X XDR)',
                 '44.46.1010', _CX9_MSTCONFIG, 'CX9-ILLUSTRATIVE_Ax', _CX9_DESC, 16, rail=1),
            _hca('mlx5_2', '0010:03:00.0', CX9_DEVICE, 'rail', 1, 'InfiniBand', '800 Gb/sec (4X XDR)',
                 '44.46.1010', _CX9_MSTCONFIG, 'CX9-ILLUSTRATIVE_Ax', _CX9_DESC, 16, rail=2),
            _hca('mlx5_3', '0012:03:00.0', CX9_DEVICE, 'rail', 1, 'InfiniBand', '800 Gb/sec (4X XDR)',
                 '44.46.1010', _CX9_MSTCONFIG, 'CX9-ILLUSTRATIVE_Ax', _CX9_DESC, 16, rail=3),
        ],
        # VR200: host-managed 615 driver stack, so nvidia modules load at boot.
        'boot_modules': ['mlx5_core', 'mlx5_ib', 'nvidia', 'nvidia_uvm', 'nvidia_modeset'],
        'modules': dict(_RDMA_MODULES, **_NVIDIA_MODULES),
        'aliases': dict(_ALIASES),
        'services': {
            'nvidia-imex.service': {'dir': 'usr/lib/systemd/system', 'enabled': True},
            # RKE2's install script puts its units under /usr/local/lib/systemd/system
            'rke2-agent.service': {'dir': 'usr/local/lib/systemd/system', 'enabled': True},
            # containerd from the distribution is installed but RKE2 runs its own
            'containerd.service': {'dir': 'usr/lib/systemd/system', 'enabled': False},
        },
        'containerd_config_version': None,
    },
}

# Faults: name -> (scope, one-line description). scope "tray": populate_tray
# applies it to the tray's files; "inventory": the inventory writer sets host
# vars; "supervisor": the lab supervisor implements it.
FAULT_TABLE = {
    'pkey-limited-pf': ('tray', "the last rail's PF holds only the limited default P_Key 0x7fff"),
    'pkey-limited-vf': ('tray', "PFs are fine; every VF created on the last rail holds only 0x7fff"),
    'num-vfs-8': ('tray', 'firmware NUM_OF_VFS is 8 on the last rail (sriov_totalvfs 8)'),
    'sriov-disabled': ('tray', 'firmware SRIOV_EN False(0) on the last rail (no sriov_* files in sysfs)'),
    'link-type-eth': ('tray', 'LINK_TYPE_P1 ETH(2) on the last rail (link_layer Ethernet)'),
    'grub-dropin-override': ('tray', '/etc/default/grub.d/99-zz-override.cfg sorts last and sets '
                                     'GRUB_CMDLINE_LINUX_DEFAULT="quiet splash", dropping earlier additions'),
    'no-return-from-reboot': ('supervisor', 'the tray does not come back after a reboot: it hangs in POST, powered on, '
                                            'until a reset through its BMC (a cold boot) brings it back'),
    'stuck-in-post': ('supervisor', 'the tray does not come back after a reboot, and a reset or power cycle through '
                                    'its BMC does not bring it back either (until `lab/lab reset`)'),
    'stops-answering-after-reboot': ('tray', 'after a reboot the tray answers the reboot check, then stops answering '
                                             'SSH at the first module call (sshd stopped, sessions killed)'),
    'imex-reenabled': ('tray', 'every boot re-enables and starts nvidia-imex.service like a package '
                               'postinst (a mask survives, a disable does not)'),
    'hugepage-1g': ('inventory', 'the tuning request asks for 1G huge pages, which a 64k-page kernel lacks'),
    'multus-token-expiring': ('tray', 'the service-account token in the multus kubeconfig expires 10 days after the '
                                      'lab came up (issued 355 days before)'),
}


def platform(name):
    """A deep copy of one platform's data; ValueError names the valid ones."""
    if name not in PLATFORMS:
        raise ValueError('unknown platform %r (expected one of: %s)' % (name, ', '.join(sorted(PLATFORMS))))
    return copy.deepcopy(PLATFORMS[name])


def rails(data):
    return [h for h in data['hcas'] if h['kind'] == 'rail']


def fault_rail(data):
    """The rail single-rail faults apply to: the last one (so code that only
    looks at the first rail misses it)."""
    return rails(data)[-1]
