# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hardware fixtures of the simulated trays (stdlib only).

- ``prepare_rootfs(rootfs)``: once per cached rootfs: installs lab/trayfs (tool
  doubles, boot-time and SR-IOV units), diverts grub-probe and kmod's
  modprobe/rmmod to the doubles, enables the boot unit.
- ``populate_tray(root, platform, index, faults)``: per tray, before its first
  boot: the sysfs fixture tree, the hardware description the in-tray doubles read
  (``/var/lib/gpu-tray-lab/hw.json``), os-release, kernel image names in /boot,
  /etc/default/grub (+ drop-ins), vendor units, and the tray's faults.

The kernel objects themselves are written by ``traylab`` (lab/trayfs/usr/local/
lib/gpu-tray-lab/traylab.py), the same code the tray runs, so what the host lays
down and what the tray creates at run time (VFs, IB devices, netdevs) cannot
drift apart. docs/lab-hardware.md describes formats and faults.
"""

import base64
import hashlib
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import time
import uuid

from gpu_tray_lab import platforms as _platforms

LAB_DIR = pathlib.Path(__file__).resolve().parent.parent
TRAYFS = LAB_DIR / 'trayfs'
_TRAYLAB_PATH = TRAYFS / 'usr/local/lib/gpu-tray-lab/traylab.py'

PLATFORMS = _platforms.PLATFORMS
FAULTS = dict((name, desc) for name, (_scope, desc) in _platforms.FAULT_TABLE.items())

SYS_REL = 'var/lib/gpu-tray-lab/sys'
HW_REL = 'var/lib/gpu-tray-lab/hw.json'
DMI_REL = SYS_REL + '/class/dmi/id'
ROOT_DEVICE = '/dev/vda1'
PLATFORM_CMDLINE = 'console=ttyAMA0,115200n8'
OVERRIDE_DROPIN = 'etc/default/grub.d/99-zz-override.cfg'
# where multus's entrypoint writes its kubeconfig on the host (MULTUS_KUBECONFIG_FILE_HOST)
MULTUS_KUBECONFIG_REL = 'etc/cni/net.d/multus.d/multus.kubeconfig'
MULTUS_EXPIRING_DAYS = 10
PLATFORM_DROPIN = 'etc/default/grub.d/50-gpu-tray-platform.cfg'


def _load_traylab():
    spec = importlib.util.spec_from_file_location('gpu_tray_lab_traylab', str(_TRAYLAB_PATH))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


traylab = _load_traylab()


def fault_scope(name):
    """'tray' (populate_tray applies it), 'inventory' (host vars) or 'supervisor'."""
    if name not in _platforms.FAULT_TABLE:
        raise ValueError('unknown fault %r (expected one of: %s)' % (name, ', '.join(sorted(FAULTS))))
    return _platforms.FAULT_TABLE[name][0]


def tray_faults(name):
    """The interface's two-way split: 'inventory' for inventory-level faults, else 'tray'
    (supervisor faults are tray faults the supervisor acts on; populate_tray ignores them)."""
    return 'inventory' if fault_scope(name) == 'inventory' else 'tray'


def inventory_vars(platform, faults):
    """Host vars for inventory-level faults of one tray."""
    out = {}
    if 'hugepage-1g' in faults:
        out['gpu_tray_tuning_hugepages'] = [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}]
    return out


# ----------------------------------------------------------------- prepare_rootfs

def _copy_tree(src, dst):
    for dirpath, dirnames, filenames in os.walk(str(src)):
        rel = os.path.relpath(dirpath, str(src))
        target_dir = os.path.join(str(dst), rel) if rel != '.' else str(dst)
        os.makedirs(target_dir, exist_ok=True)
        for name in filenames:
            if name.endswith('.pyc'):
                continue
            source = os.path.join(dirpath, name)
            target = os.path.join(target_dir, name)
            if os.path.lexists(target):
                os.unlink(target)
            shutil.copy2(source, target)
        dirnames[:] = [d for d in dirnames if d != '__pycache__']


def _divert(rootfs, path, replacement):
    """dpkg-divert a packaged file away and put the lab's double in its place."""
    target = rootfs / path.lstrip('/')
    distrib = pathlib.Path(str(target) + '.distrib')
    if not os.path.lexists(str(distrib)):
        subprocess.run(['chroot', str(rootfs), 'dpkg-divert', '--local', '--rename', '--add', path],
                       check=True, stdout=subprocess.DEVNULL)
    if os.path.lexists(str(target)):
        target.unlink()
    target.symlink_to(replacement)


def _link(rootfs, link, target):
    link_path = rootfs / link
    link_path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(str(link_path)):
        link_path.unlink()
    link_path.symlink_to(target)


def prepare_rootfs(rootfs):
    """Platform-independent changes to the cached rootfs (run once after debootstrap)."""
    rootfs = pathlib.Path(rootfs)
    _copy_tree(TRAYFS, rootfs)
    _divert(rootfs, '/usr/sbin/grub-probe', '/usr/local/lib/gpu-tray-lab/grub-probe')
    # kmod's modprobe/rmmod (used with absolute paths by units, e.g. ExecStartPre=/sbin/modprobe)
    _divert(rootfs, '/sbin/modprobe', '/usr/local/sbin/modprobe')
    _divert(rootfs, '/sbin/rmmod', '/usr/local/sbin/rmmod')
    _link(rootfs, 'etc/systemd/system/sysinit.target.wants/gpu-tray-lab-boot.service',
          '/usr/lib/systemd/system/gpu-tray-lab-boot.service')
    _link(rootfs, 'etc/systemd/system/multi-user.target.wants/gpu-tray-lab-power.service',
          '/usr/lib/systemd/system/gpu-tray-lab-power.service')
    for rel in ('var/log/gpu-tray-lab', 'var/lib/gpu-tray-lab', 'boot/grub', 'etc/default/grub.d',
                'etc/modules-load.d', 'etc/modprobe.d'):
        (rootfs / rel).mkdir(parents=True, exist_ok=True)


# ----------------------------------------------------------------- populate_tray

def _set_mst(rows, name, current, next_boot):
    for row in rows:
        if row[0] == name:
            row[2], row[3] = current, next_boot
            return
    raise KeyError(name)


def hardware(platform, index, faults=frozenset()):
    """The tray's hardware description (written to /var/lib/gpu-tray-lab/hw.json)."""
    faults = frozenset(faults)
    for fault in faults:
        fault_scope(fault)
    data = _platforms.platform(platform)
    if 'imex-reenabled' in faults and 'nvidia-imex.service' not in data['services']:
        raise ValueError('fault imex-reenabled: platform %s has no nvidia-imex.service (the GB200 host driver '
                         'comes from GPU Operator); use it with rke2-vr200' % platform)
    if 'multus-token-expiring' in faults and not data.get('multus_token_days'):
        raise ValueError('fault multus-token-expiring: platform %s runs no multus (its recipes have no '
                         'secondary networks); use it with nvke-gb200' % platform)
    target = _platforms.fault_rail(data)['name']
    hcas = []
    for number, hca in enumerate(data['hcas']):
        hca = dict(hca)
        guid = 0xb83fd20300000000 | ((index & 0xffff) << 16) | (number << 8)
        hca.update({
            'guid': guid,
            'vf_guid_base': guid | 0x80,
            'lid': (index & 0xff) * 0x100 + number * 0x20 + 1,
            'sm_lid': 0x1,
            'pkeys': ['0xffff'],
            'vf_pkeys': ['0xffff'],
            'pkey_table_len': _platforms.IB_PKEY_TABLE_LEN,
            'vf_device': _platforms.MLX_VF_DEVICE,
        })
        if hca['name'] == target:
            if 'pkey-limited-pf' in faults:
                hca['pkeys'] = ['0x7fff']
            if 'pkey-limited-vf' in faults:
                hca['vf_pkeys'] = ['0x7fff']
            if 'num-vfs-8' in faults:
                _set_mst(hca['mstconfig'], 'NUM_OF_VFS', '8', '8')
                hca['sriov_totalvfs'] = 8
            if 'sriov-disabled' in faults:
                _set_mst(hca['mstconfig'], 'SRIOV_EN', 'False(0)', 'False(0)')
                hca['sriov_totalvfs'] = None
            if 'link-type-eth' in faults:
                _set_mst(hca['mstconfig'], 'LINK_TYPE_P1', 'ETH(2)', 'ETH(2)')
                hca['link_layer'] = 'Ethernet'
        hcas.append(hca)
    override = 'grub-dropin-override' in faults
    default_args = 'quiet splash' if override else PLATFORM_CMDLINE
    return {
        'platform': platform,
        'index': index,
        'faults': sorted(faults),
        'kernel_release': data['kernel_release'],
        'numa_nodes': data['numa_nodes'],
        'memory_kb': data['memory_kb'],
        'hcas': hcas,
        'modules': data['modules'],
        'aliases': data['aliases'],
        'boot_modules': data['boot_modules'],
        'hugepage_sizes_kb': list(data['hugepage_sizes_kb']),
        'default_hugepage_kb': data['default_hugepage_kb'],
        # What update-grub writes for the files populate_tray installs (used until a grub.cfg exists)
        'baseline_cmdline': 'BOOT_IMAGE=/boot/vmlinuz-%s root=%s ro %s' % (data['kernel_release'], ROOT_DEVICE,
                                                                           default_args),
    }


ETC_DEFAULT_GRUB = """# If you change this file or add new ones under /etc/default/grub.d/*.cfg,
# run 'update-grub' afterwards to update /boot/grub/grub.cfg.
# For full documentation of the options in these files, see:
#   info -f grub -n 'Simple configuration'

GRUB_DEFAULT=0
GRUB_TIMEOUT_STYLE=hidden
GRUB_TIMEOUT=0
GRUB_DISTRIBUTOR=`( . /etc/os-release; echo ${NAME:-Ubuntu} ) 2>/dev/null || echo Ubuntu`
GRUB_CMDLINE_LINUX_DEFAULT=""
GRUB_CMDLINE_LINUX=""

# If your computer has multiple operating systems installed, then you
# probably want to run os-prober. However, if your computer is a host
# for guest OSes installed via LVM or raw disk devices, running
# os-prober can cause damage to those guest OSes as it mounts
# filesystems to look for things.
#GRUB_DISABLE_OS_PROBER=false

# Uncomment to enable BadRAM filtering, modify to suit your needs
# This works with Linux (no patch required) and with any kernel that obtains
# the memory map information from GRUB (GNU Mach, kernel of FreeBSD ...)
#GRUB_BADRAM="0x01234567,0xfefefefe,0x89abcdef,0xefefefef"

# Uncomment to disable graphical terminal
#GRUB_TERMINAL=console

# Uncomment if you don't want GRUB to pass "root=UUID=xxx" parameter to Linux
#GRUB_DISABLE_LINUX_UUID=true

# Uncomment to disable generation of recovery mode menu entries
#GRUB_DISABLE_RECOVERY="true"
"""

PLATFORM_DROPIN_TEXT = """# gpu-tray lab: the tray image's serial console (platform arguments that a
# later drop-in must append to, not replace).
GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} %s"
""" % PLATFORM_CMDLINE

OVERRIDE_DROPIN_TEXT = """# gpu-tray lab fault grub-dropin-override: a drop-in that sorts after
# 99-nvidia-tuned-cmdline.cfg and sets the value wholesale.
GRUB_CMDLINE_LINUX_DEFAULT="quiet splash"
"""

LSB_RELEASE = {
    '24.04': ('DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=24.04\nDISTRIB_CODENAME=noble\n'
              'DISTRIB_DESCRIPTION="Ubuntu 24.04.3 LTS"\n'),
    '26.04': ('DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=26.04\nDISTRIB_CODENAME=resolute\n'
              'DISTRIB_DESCRIPTION="Ubuntu 26.04 LTS"\n'),
}
DEBIAN_VERSION = {'24.04': 'trixie/sid\n', '26.04': 'forky/sid\n'}

IMEX_CONFIG = """# gpu-tray lab: /etc/nvidia-imex/config.cfg as shipped with the host driver
LOG_LOCAL_FILE_NAME=/var/log/nvidia-imex.log
LOG_LEVEL=4
LOG_APPEND_TO_LOG=1
LOG_FILE_MAX_SIZE=1024
LOG_USE_SYSLOG=0
SERVER_BIND_IP=
SERVER_PORT=50000
ENABLE_AUTH_ENCRYPTION=0
IMEX_CONN_WAIT_TIMEOUT=70
IMEX_CMD_BIND_INTERFACE_IP=
IMEX_CMD_PORT=50005
IMEX_CMD_ENABLED=0
IMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg
"""

SERVICE_BINARIES = {
    'nvidia-imex.service': 'usr/bin/nvidia-imex',
    'rke2-agent.service': 'usr/local/bin/rke2',
    'containerd.service': 'usr/bin/containerd',
}


def _write(root, rel, text, mode=None):
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(str(target)):
        target.unlink()
    target.write_text(text)
    if mode is not None:
        target.chmod(mode)


def _remove(root, rel):
    target = root / rel
    if os.path.lexists(str(target)):
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(str(target))
        else:
            target.unlink()


def _install_services(root, data, faults):
    share = TRAYFS / 'usr/local/share/gpu-tray-lab'
    wants = 'etc/systemd/system/multi-user.target.wants'
    for unit, spec in data['services'].items():
        _write(root, '%s/%s' % (spec['dir'], unit), (share / 'units' / unit).read_text(), 0o644)
        binary = SERVICE_BINARIES[unit]
        _write(root, binary, (share / 'bin/daemon-double').read_text(), 0o755)
        _link(root, 'usr/local/lib/gpu-tray-lab/idle/%s' % os.path.basename(binary), '/bin/sleep')
        if spec['enabled']:
            _link(root, '%s/%s' % (wants, unit), '/%s/%s' % (spec['dir'], unit))
        else:
            _remove(root, '%s/%s' % (wants, unit))
    if 'nvidia-imex.service' in data['services']:
        _write(root, 'etc/nvidia-imex/config.cfg', IMEX_CONFIG)
        _write(root, 'etc/nvidia-imex/nodes_config.cfg', '')
    if 'rke2-agent.service' in data['services']:
        _write(root, 'etc/rancher/rke2/config.yaml', 'server: https://198.18.0.1:9345\ntoken: gpu-tray-lab\n')
        _write(root, 'var/lib/rancher/rke2/agent/etc/containerd/config.toml',
               '# Generated by RKE2 (gpu-tray lab stand-in)\nversion = 3\nroot = "/var/lib/rancher/rke2/agent/'
               'containerd"\nstate = "/run/k3s/containerd"\n')
    if data.get('containerd_config_version'):
        _write(root, 'etc/containerd/config.toml', 'version = %d\n' % data['containerd_config_version'])
    for fault, unit in (('imex-reenabled', 'gpu-tray-lab-imex-postinst.service'),
                        ('stops-answering-after-reboot', 'gpu-tray-lab-stop-answering.service')):
        if fault in faults:
            _link(root, '%s/%s' % (wants, unit), '/usr/lib/systemd/system/%s' % unit)
        else:
            _remove(root, '%s/%s' % (wants, unit))


def _sriov_path_unit(hw):
    lines = ['# gpu-tray lab: generated by populate_tray; a write of sriov_numvfs starts the reconcile',
             '[Unit]', 'Description=gpu-tray lab: watch sriov_numvfs of the PFs and nr_hugepages of the pools',
             'DefaultDependencies=no',
             'After=gpu-tray-lab-boot.service', 'Before=paths.target', '', '[Path]']
    for hca in hw['hcas']:
        # also PFs without SR-IOV: a write there creates a file the reconcile removes again
        lines.append('PathChanged=/%s/%s/sriov_numvfs' % (SYS_REL, traylab.pci_rel(hca['bdf'])))
    for size in hw['hugepage_sizes_kb']:
        lines.append('PathChanged=/%s/kernel/mm/hugepages/hugepages-%dkB/nr_hugepages' % (SYS_REL, size))
    lines += ['Unit=gpu-tray-lab-sriov.service', '', '[Install]', 'WantedBy=paths.target', '']
    return '\n'.join(lines)


def identity(platform, index):
    """The tray's SMBIOS identity (sysfs class/dmi/id), illustrative values: the serial and UUID are what the lab's
    BMC (lab/gpu_tray_lab/bmc.py) reports as the ComputerSystem's SerialNumber and UUID, as a real BMC does."""
    tag = {'nvke-gb200': 'GB200', 'rke2-vr200': 'VR200'}.get(platform, platform.upper())
    return {
        'product_serial': 'LAB%s%04d' % (tag, index),
        'product_uuid': str(uuid.uuid5(uuid.NAMESPACE_DNS, 'tray%02d.%s.gpu-tray-lab' % (index, platform))),
        'product_name': '%s compute tray (gpu-tray lab)' % tag,
        'sys_vendor': 'gpu-tray lab',
        'board_serial': 'LABBOARD%s%04d' % (tag, index),
        'chassis_serial': 'Not Specified',
    }


def _b64url(data):
    return base64.urlsafe_b64encode(data).decode('ascii').rstrip('=')


def multus_kubeconfig(issued, expires, namespace='nvidia-network-operator', node='tray01'):
    """The kubeconfig multus's entrypoint writes to the host: the API server address, and the projected
    service-account token of the multus pod copied in (a JWT signed by the API server; here the signature is a
    stand-in - only the claims are read)."""
    header = {'alg': 'RS256', 'kid': hashlib.sha256(namespace.encode()).hexdigest()[:43]}
    claims = {'aud': ['https://kubernetes.default.svc.cluster.local'], 'exp': int(expires), 'iat': int(issued),
              'nbf': int(issued), 'iss': 'https://kubernetes.default.svc.cluster.local',
              'sub': 'system:serviceaccount:%s:multus' % namespace,
              'kubernetes.io': {'namespace': namespace, 'node': {'name': node},
                                'pod': {'name': 'kube-multus-ds-%s' % node},
                                'serviceaccount': {'name': 'multus'}, 'warnafter': int(issued) + 3607}}
    token = '.'.join([_b64url(json.dumps(header).encode()), _b64url(json.dumps(claims).encode()),
                      _b64url(hashlib.sha512(json.dumps(claims).encode()).digest() * 4)])
    return ('# Kubeconfig file for Multus CNI plugin.\n'
            '# Generated at %s\n'
            'apiVersion: v1\nkind: Config\nclusters:\n- name: local\n  cluster:\n'
            '    server: https://[10.96.0.1]:443\n    certificate-authority-data: %s\n'
            'users:\n- name: multus\n  user:\n    token: "%s"\n'
            'contexts:\n- name: multus-context\n  context:\n    cluster: local\n    user: multus\n'
            'current-context: multus-context\n'
            % (time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime(issued)),
               _b64url(b'-----BEGIN CERTIFICATE-----lab-----END CERTIFICATE-----'), token))


def populate_tray(root, platform, index, faults=frozenset()):
    """Write one tray's hardware fixtures into its (not yet booted) root. Idempotent."""
    root = pathlib.Path(root)
    faults = frozenset(faults)
    data = _platforms.platform(platform)
    hw = hardware(platform, index, faults)

    # sysfs fixture tree: static PCI functions of the PFs, hugepage pools, module dir
    sysdir = root / SYS_REL
    if sysdir.exists():
        for child in sysdir.iterdir():
            if child.name == 'module' and os.path.ismount(str(child)):
                continue
            _remove(sysdir, child.name)
    sysdir.mkdir(parents=True, exist_ok=True)
    (sysdir / 'module').mkdir(exist_ok=True)
    for hca in hw['hcas']:
        traylab.write_pf(str(sysdir), hca, hw['numa_nodes'])
    traylab.write_hugepages(str(sysdir), dict((size, 0) for size in hw['hugepage_sizes_kb']))
    for field, value in identity(platform, index).items():
        _write(root, '%s/%s' % (DMI_REL, field), value + '\n')
    _write(root, HW_REL, json.dumps(hw, indent=1, sort_keys=True) + '\n')
    # derived objects (IB devices, netdevs) exist only once the tray "loads" its drivers at boot

    # OS identity
    _write(root, 'usr/lib/os-release', data['os_release'])
    _link(root, 'etc/os-release', '../usr/lib/os-release')
    version = [line.split('=', 1)[1].strip('"') for line in data['os_release'].splitlines()
               if line.startswith('VERSION_ID=')][0]
    _write(root, 'etc/lsb-release', LSB_RELEASE[version])
    _write(root, 'etc/debian_version', DEBIAN_VERSION[version])

    # kernel image + GRUB configuration (the REAL update-grub turns these into grub.cfg)
    release = data['kernel_release']
    for stale in (root / 'boot').glob('vmlinuz-*') if (root / 'boot').is_dir() else []:
        if stale.name != 'vmlinuz-' + release:
            stale.unlink()
    for stale in (root / 'boot').glob('initrd.img-*') if (root / 'boot').is_dir() else []:
        if stale.name != 'initrd.img-' + release:
            stale.unlink()
    _write(root, 'boot/vmlinuz-%s' % release, '')
    _write(root, 'boot/initrd.img-%s' % release, '')
    _write(root, 'boot/config-%s' % release, 'CONFIG_ARM64_64K_PAGES=y\nCONFIG_MODULES=y\nCONFIG_INFINIBAND=m\n')
    (root / 'boot/grub').mkdir(parents=True, exist_ok=True)
    _write(root, 'etc/default/grub', ETC_DEFAULT_GRUB)
    _write(root, PLATFORM_DROPIN, PLATFORM_DROPIN_TEXT)
    if 'grub-dropin-override' in faults:
        _write(root, OVERRIDE_DROPIN, OVERRIDE_DROPIN_TEXT)
    else:
        _remove(root, OVERRIDE_DROPIN)

    # multus's kubeconfig (platforms whose recipe runs multus): issued when the lab comes up, valid for the platform's
    # token lifetime, or expiring in MULTUS_EXPIRING_DAYS with the fault multus-token-expiring
    if data.get('multus_token_days'):
        now = int(time.time())
        expires = now + (MULTUS_EXPIRING_DAYS if 'multus-token-expiring' in faults else data['multus_token_days']) * 86400
        issued = expires - data['multus_token_days'] * 86400
        _write(root, MULTUS_KUBECONFIG_REL, multus_kubeconfig(issued, expires, node='tray%02d' % index), 0o600)
    else:
        _remove(root, MULTUS_KUBECONFIG_REL)

    # vendor services and the lab's SR-IOV watcher
    _install_services(root, data, faults)
    _write(root, 'etc/systemd/system/gpu-tray-lab-sriov.path', _sriov_path_unit(hw))
    _link(root, 'etc/systemd/system/paths.target.wants/gpu-tray-lab-sriov.path',
          '/etc/systemd/system/gpu-tray-lab-sriov.path')
    (root / 'var/log/gpu-tray-lab').mkdir(parents=True, exist_ok=True)
