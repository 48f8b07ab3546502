# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hardware emulation of a simulated GPU tray (runs inside the tray; stdlib only).

One implementation of the emulated kernel objects, used by:
- the host side (``gpu_tray_lab.fixtures.populate_tray``) to lay down a tray's
  PCI functions before its first boot;
- the tray's tool doubles (``modprobe``, ``mstconfig``) and its boot-time and
  SR-IOV units (``gpu-tray-lab-hw boot|reconcile``).

All paths are relative to ``GPU_TRAY_LAB_ROOT`` (default ``/``), so the same
code runs against a temporary tree in unit tests.

Kernel objects and their lifetime, as on a real kernel:
- PCI functions of the PFs (``devices/pci<dom>:00/<bdf>``): static, written by
  populate_tray; ``bus/pci/devices/<bdf>`` links to them.
- ``module/<name>``: a tmpfs the boot unit mounts, filled by ``modprobe``.
- ``class/infiniband/mlx5_N``: exist while ``mlx5_ib`` is loaded.
- netdevs: Ethernet ports while ``mlx5_core`` is loaded, IPoIB ones
  (``ibp3s0``) only while ``ib_ipoib`` is loaded.
- VFs: created/removed when ``sriov_numvfs`` changes (``reconcile``), all gone
  at boot (``sriov_numvfs`` reads 0 after a reboot).
"""

import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid

LAB_DIR = 'var/lib/gpu-tray-lab'
SYS_REL = LAB_DIR + '/sys'
HW_JSON = LAB_DIR + '/hw.json'
LOG_DIR = 'var/log/gpu-tray-lab'
RUN_DIR = 'run/gpu-tray-lab'
# In a booted tray the fixture tree is mounted read-only (like sysfs, whose attributes are mostly 0444 and
# refuse writes even from root); the lab's own code writes through this writable bind of the same tree.
RW_SYS_REL = RUN_DIR + '/sys-rw'
UNBOOTABLE_REL = LAB_DIR + '/unbootable'


def root():
    return os.environ.get('GPU_TRAY_LAB_ROOT', '/')


def path(rel, base=None):
    return os.path.join(base if base is not None else root(), rel.lstrip('/'))


def mountpoints():
    """Mount points of this mount namespace (os.path.ismount misses binds within one file system)."""
    out = set()
    for line in (read('/proc/self/mountinfo', '') or '').splitlines():
        fields = line.split()
        if len(fields) > 4:
            out.add(fields[4].replace('\\040', ' ').replace('\\011', '\t').replace('\\012', '\n')
                    .replace('\\134', '\\'))
    return out


def is_mount(target, mounts=None):
    return os.path.realpath(target) in (mounts if mounts is not None else mountpoints())


def sys_root(base=None):
    """Where the lab writes kernel objects: the writable view when the boot unit made the tree read-only."""
    rw_view = path(RW_SYS_REL, base)
    if is_mount(rw_view):
        return rw_view
    return path(SYS_REL, base)


def writable_files(hw):
    """Fixture files a root process may write, as on a real kernel (relative to the sysfs root):
    ``sriov_numvfs`` of PFs with SR-IOV and ``nr_hugepages`` of each pool. Everything else is read-only."""
    out = []
    for hca in hw['hcas']:
        if hca.get('sriov_totalvfs') is not None:
            out.append('%s/sriov_numvfs' % pci_rel(hca['bdf']))
    for size in hw['hugepage_sizes_kb']:
        out.append('kernel/mm/hugepages/hugepages-%dkB/nr_hugepages' % size)
    return out


def load_hw(base=None):
    with open(path(HW_JSON, base)) as handle:
        return json.load(handle)


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def log_call(tool, args, note=None, base=None):
    """Append one line per tool call to /var/log/gpu-tray-lab/calls.log."""
    log_dir = path(LOG_DIR, base)
    os.makedirs(log_dir, exist_ok=True)
    line = '%s %s %s' % (now(), tool, ' '.join(shlex.quote(a) for a in args))
    if note:
        line += '  # ' + note
    with open(os.path.join(log_dir, 'calls.log'), 'a') as handle:
        handle.write(line.rstrip() + '\n')


def log_refused(tool, reason, base=None):
    """A call the lab refuses (firmware writes, unloading mlx5_core): logged on its own line."""
    log_dir = path(LOG_DIR, base)
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, 'calls.log'), 'a') as handle:
        handle.write('%s REFUSED %s: %s\n' % (now(), tool, reason))


def write(file_path, text):
    try:
        handle = open(file_path, 'w')
    except FileNotFoundError:
        os.makedirs(os.path.dirname(file_path), exist_ok=True)
        handle = open(file_path, 'w')
    with handle:
        handle.write(text)


def read(file_path, default=None):
    try:
        with open(file_path) as handle:
            return handle.read()
    except (IOError, OSError):
        return default


def symlink(target, link):
    """Create or replace a symlink (relative target, as sysfs has)."""
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.islink(link):
        if os.readlink(link) == target:
            return
        os.unlink(link)
    elif os.path.exists(link):
        shutil.rmtree(link)
    os.symlink(target, link)


def remove(node):
    if os.path.islink(node) or os.path.isfile(node):
        os.unlink(node)
    elif os.path.isdir(node):
        shutil.rmtree(node)


# ---------------------------------------------------------------- PCI / names

def parse_bdf(bdf):
    match = re.match(r'^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$', bdf)
    if not match:
        raise ValueError('not a PCI address: %r' % bdf)
    return tuple(int(g, 16) for g in match.groups())


def format_bdf(domain, bus, dev, fn):
    return '%04x:%02x:%02x.%d' % (domain, bus, dev, fn)


def vf_bdf(pf_bdf, index, offset=1, stride=1):
    """BDF of VF number ``index`` (0-based): routing ID = PF RID + offset + index * stride."""
    domain, bus, dev, fn = parse_bdf(pf_bdf)
    rid = (bus << 8) | (dev << 3) | fn
    rid += offset + index * stride
    return format_bdf(domain, (rid >> 8) & 0xff, (rid >> 3) & 0x1f, rid & 7)


def host_bridge(bdf):
    domain = parse_bdf(bdf)[0]
    return 'pci%04x:00' % domain


def pci_rel(bdf):
    """Path of a PCI function below the sysfs root."""
    return 'devices/%s/%s' % (host_bridge(bdf), bdf)


def ifname(bdf, link_layer, is_vf):
    """systemd's predictable name for the function's netdev (ID_NET_NAME_PATH)."""
    domain, bus, dev, fn = parse_bdf(bdf)
    prefix = 'ib' if link_layer == 'InfiniBand' else 'en'
    name = prefix
    if domain:
        name += 'P%d' % domain
    name += 'p%ds%d' % (bus, dev)
    if is_vf or fn:
        name += 'f%d' % fn
    if link_layer != 'InfiniBand':
        name += 'np0'
    return name


def guid_text(value):
    """64-bit GUID as sysfs prints it: ``%04x:%04x:%04x:%04x``."""
    return ':'.join('%04x' % ((value >> shift) & 0xffff) for shift in (48, 32, 16, 0))


def gid_text(prefix, guid):
    """GID as ``%pI6``: eight groups of four lower-case hex digits."""
    value = (prefix << 64) | guid
    return ':'.join('%04x' % ((value >> (112 - 16 * i)) & 0xffff) for i in range(8))


def ipoib_hwaddr(qpn, gid):
    """IPoIB 20-byte hardware address: 4 bytes flags/QPN + 16 bytes GID."""
    raw = '%08x' % qpn + gid.replace(':', '')
    return ':'.join(raw[i:i + 2] for i in range(0, 40, 2))


# ---------------------------------------------------------------- device writers

def _pci_files(sysdir, bdf, device_id, class_code, numa_node, cpulist, driver, extra=None):
    pdir = os.path.join(sysdir, pci_rel(bdf))
    os.makedirs(pdir, exist_ok=True)
    files = {
        'vendor': '0x15b3\n',
        'device': '0x%04x\n' % device_id,
        'subsystem_vendor': '0x15b3\n',
        'subsystem_device': '0x0001\n',
        'class': '0x%06x\n' % class_code,
        'numa_node': '%d\n' % numa_node,
        'local_cpulist': cpulist + '\n',
        'enable': '1\n',
        'uevent': ('DRIVER=%s\nPCI_CLASS=%X\nPCI_ID=15B3:%04X\nPCI_SUBSYS_ID=15B3:0001\n'
                   'PCI_SLOT_NAME=%s\nMODALIAS=pci:v000015B3d0000%04Xsv000015B3sd00000001bc%02Xsc%02Xi00\n'
                   % (driver, class_code, device_id, bdf, device_id, class_code >> 16, (class_code >> 8) & 0xff)),
    }
    files.update(extra or {})
    for name, text in files.items():
        write(os.path.join(pdir, name), text)
    symlink('../../../bus/pci/drivers/%s' % driver, os.path.join(pdir, 'driver'))
    symlink('../../../%s' % pci_rel(bdf), os.path.join(sysdir, 'bus/pci/devices', bdf))
    symlink('../../../../%s' % pci_rel(bdf), os.path.join(sysdir, 'bus/pci/drivers', driver, bdf))
    return pdir


def cpulist(numa_node, numa_nodes, cpus=144):
    per = cpus // max(numa_nodes, 1)
    return '%d-%d' % (numa_node * per, numa_node * per + per - 1)


def write_pf(sysdir, hca, numa_nodes):
    """The PF's PCI function (static part of the tree)."""
    class_code = 0x020700 if hca['link_layer'] == 'InfiniBand' else 0x020000
    extra = {}
    if hca.get('sriov_totalvfs') is not None:
        extra = {
            'sriov_totalvfs': '%d\n' % hca['sriov_totalvfs'],
            'sriov_numvfs': '0\n',
            'sriov_offset': '1\n',
            'sriov_stride': '1\n',
            'sriov_vf_device': '%x\n' % hca['vf_device'],
            'sriov_drivers_autoprobe': '1\n',
        }
    pdir = _pci_files(sysdir, hca['bdf'], hca['device'], class_code, hca['numa_node'],
                      cpulist(hca['numa_node'], numa_nodes), 'mlx5_core', extra)
    for name in ('sriov_totalvfs', 'sriov_numvfs', 'sriov_offset', 'sriov_stride', 'sriov_vf_device',
                 'sriov_drivers_autoprobe'):
        if name not in extra and os.path.exists(os.path.join(pdir, name)):
            os.unlink(os.path.join(pdir, name))
    return pdir


def _ib_device(sysdir, bdf, ibname, hca_type, fw_ver, guid, link_layer, rate, lid, sm_lid, pkeys,
               pkey_table_len):
    """Write ``<pci dir>/infiniband/<ibname>`` and the class/infiniband link."""
    pdir = os.path.join(sysdir, pci_rel(bdf))
    idir = os.path.join(pdir, 'infiniband', ibname)
    if os.path.isdir(idir):
        shutil.rmtree(idir)
    files = {
        'node_type': '1: CA\n',
        'node_guid': guid_text(guid) + '\n',
        'sys_image_guid': guid_text(guid) + '\n',
        'fw_ver': fw_ver + '\n',
        'hca_type': hca_type + '\n',
        'hw_rev': '0x0\n',
        'board_id': 'MT_%010d\n' % int(hca_type[2:]),
    }
    for name, text in files.items():
        write(os.path.join(idir, name), text)
    symlink('../../../%s' % bdf, os.path.join(idir, 'device'))
    port = os.path.join(idir, 'ports', '1')
    ib = link_layer == 'InfiniBand'
    port_files = {
        'state': '4: ACTIVE\n',
        'phys_state': '5: LinkUp\n',
        'rate': rate + '\n',
        'link_layer': link_layer + '\n',
        'lid': '0x%x\n' % (lid if ib else 0),
        'sm_lid': '0x%x\n' % (sm_lid if ib else 0),
        'sm_sl': '0\n',
        'lid_mask_count': '0\n',
        'cap_mask': '0x%08x\n' % (0xa751e848 if ib else 0x04010000),
    }
    for name, text in port_files.items():
        write(os.path.join(port, name), text)
    if ib:
        write(os.path.join(port, 'gids', '0'), gid_text(0xfe80000000000000, guid) + '\n')
    else:
        mac_guid = guid
        write(os.path.join(port, 'gids', '0'), gid_text(0xfe80000000000000, mac_guid) + '\n')
    if not ib:
        # RoCE (mlx5, link layer Ethernet): the port's P_Key table has a single entry, the default key
        pkeys, pkey_table_len = ['0xffff'], 1
    table = list(pkeys) + ['0x0000'] * (pkey_table_len - len(pkeys))
    for index, value in enumerate(table[:pkey_table_len]):
        write(os.path.join(port, 'pkeys', str(index)), value + '\n')
    symlink('../../%s/infiniband/%s' % (pci_rel(bdf), ibname), os.path.join(sysdir, 'class/infiniband', ibname))
    return idir


def _netdev(sysdir, bdf, name, link_layer, guid, dev_index):
    pdir = os.path.join(sysdir, pci_rel(bdf))
    ndir = os.path.join(pdir, 'net', name)
    ib = link_layer == 'InfiniBand'
    if ib:
        address = ipoib_hwaddr(0x00001000 + dev_index, gid_text(0xfe80000000000000, guid))
    else:
        mac = guid & 0xffffffffffff
        address = ':'.join('%02x' % ((mac >> (40 - 8 * i)) & 0xff) for i in range(6))
    files = {
        'address': address + '\n',
        'type': ('32\n' if ib else '1\n'),
        'operstate': 'down\n',
        'carrier': '0\n',
        'mtu': ('4092\n' if ib else '1500\n'),
        'dev_id': '0x0\n',
        'dev_port': '0\n',
        'ifindex': '%d\n' % (10 + dev_index),
    }
    for fname, text in files.items():
        write(os.path.join(ndir, fname), text)
    symlink('../../../%s' % bdf, os.path.join(ndir, 'device'))
    symlink('../../%s/net/%s' % (pci_rel(bdf), name), os.path.join(sysdir, 'class/net', name))


# ---------------------------------------------------------------- reconcile

def module_loaded(sysdir, name):
    return os.path.isdir(os.path.join(sysdir, 'module', name))


def _functions(sysdir, hw):
    """Yield every PCI function the tray has now: PFs and their VFs."""
    for hca in hw['hcas']:
        yield hca, hca['bdf'], None
        pdir = os.path.join(sysdir, pci_rel(hca['bdf']))
        for index in range(_count_vfs(pdir)):
            yield hca, vf_bdf(hca['bdf'], index), index


def _count_vfs(pdir):
    count = 0
    while os.path.islink(os.path.join(pdir, 'virtfn%d' % count)):
        count += 1
    return count


def _vf_guid(hca, index):
    return hca['vf_guid_base'] + index


def _sync_vfs(sysdir, hca, messages, derive=None):
    """Apply a write of ``sriov_numvfs`` the way the kernel's sriov_numvfs_store does."""
    pdir = os.path.join(sysdir, pci_rel(hca['bdf']))
    numvfs_file = os.path.join(pdir, 'sriov_numvfs')
    if hca.get('sriov_totalvfs') is None:
        if os.path.lexists(numvfs_file):
            # sysfs cannot gain files: a write to a PF without SR-IOV fails there (No such file or directory)
            remove(numvfs_file)
            messages.append('%s: has no sriov_numvfs (SR-IOV disabled in firmware); the write would have failed '
                            'with ENOENT' % hca['bdf'])
        return
    if not os.path.exists(numvfs_file):
        return
    current = _count_vfs(pdir)
    raw = read(numvfs_file, '').strip()
    if not raw:
        # truncated by a write still in progress: the path unit starts the reconcile again once the writer closed it
        # (rewriting the current count here would undo that write)
        return
    try:
        wanted = int(raw, 0)
    except ValueError:
        wanted = None
    error = None
    if wanted is None or wanted < 0:
        error = 'EINVAL (Invalid argument): %r is not a number' % raw
    elif wanted == current:
        pass
    elif wanted > hca['sriov_totalvfs']:
        error = 'ERANGE (Numerical result out of range): %d > sriov_totalvfs %d' % (wanted, hca['sriov_totalvfs'])
    elif wanted and current:
        error = ('EBUSY (Device or resource busy): %d VFs already enabled. Disable before enabling %d VFs'
                 % (current, wanted))
    if error:
        messages.append('%s: write of sriov_numvfs refused as the kernel would: %s' % (hca['bdf'], error))
        write(numvfs_file, '%d\n' % current)
        return
    if raw != str(wanted):
        write(numvfs_file, '%d\n' % wanted)
    if wanted == current:
        return
    if wanted == 0:
        for index in range(current):
            bdf = vf_bdf(hca['bdf'], index)
            remove_function(sysdir, bdf)
            remove(os.path.join(pdir, 'virtfn%d' % index))
        messages.append('%s: disabled %d VFs' % (hca['bdf'], current))
        return
    numa_nodes = hca.get('numa_nodes', 1)
    for index in range(wanted):
        bdf = vf_bdf(hca['bdf'], index)
        vdir = _pci_files(sysdir, bdf, hca['vf_device'], 0x020700 if hca['link_layer'] == 'InfiniBand' else 0x020000,
                          hca['numa_node'], cpulist(hca['numa_node'], numa_nodes), 'mlx5_core')
        symlink('../%s' % hca['bdf'], os.path.join(vdir, 'physfn'))
        if derive is not None:
            derive(hca, bdf, index)
        # the PF's virtfnN link comes last: once virtfn<N-1> exists, VF N is complete
        symlink('../%s' % bdf, os.path.join(pdir, 'virtfn%d' % index))
    messages.append('%s: enabled %d VFs' % (hca['bdf'], wanted))


def remove_function(sysdir, bdf):
    """Remove a (VF) PCI function with its IB device and netdevs."""
    pdir = os.path.join(sysdir, pci_rel(bdf))
    for sub, cls in (('infiniband', 'class/infiniband'), ('net', 'class/net')):
        sdir = os.path.join(pdir, sub)
        if os.path.isdir(sdir):
            for name in os.listdir(sdir):
                remove(os.path.join(sysdir, cls, name))
    for link_dir in ('bus/pci/devices', 'bus/pci/drivers/mlx5_core'):
        remove(os.path.join(sysdir, link_dir, bdf))
    remove(pdir)


def _ib_name_of(sysdir, bdf):
    idir = os.path.join(sysdir, pci_rel(bdf), 'infiniband')
    names = sorted(os.listdir(idir)) if os.path.isdir(idir) else []
    return names[0] if names else None


def _lowest_free_ibname(sysdir, reserved):
    cdir = os.path.join(sysdir, 'class/infiniband')
    used = set(os.listdir(cdir)) if os.path.isdir(cdir) else set()
    used |= reserved
    index = 0
    while 'mlx5_%d' % index in used:
        index += 1
    return 'mlx5_%d' % index


def reconcile(base=None, hw=None):
    """Bring the derived kernel objects in line with module state and sriov_numvfs.

    Returns a list of messages (what changed, writes refused as the kernel would).
    Loops until no sriov_numvfs write is pending (a write that lands while a
    reconcile runs is picked up by the same run).
    """
    hw = hw if hw is not None else load_hw(base)
    sysdir = sys_root(base)
    messages = []
    mlx5_core = module_loaded(sysdir, 'mlx5_core')
    mlx5_ib = module_loaded(sysdir, 'mlx5_ib') and mlx5_core
    ipoib = module_loaded(sysdir, 'ib_ipoib') and mlx5_ib
    pf_names = set(h['name'] for h in hw['hcas'])

    def derive(hca, bdf, vf_index):
        pdir = os.path.join(sysdir, pci_rel(bdf))
        is_vf = vf_index is not None
        guid = _vf_guid(hca, vf_index) if is_vf else hca['guid']
        dev_index = hw['hcas'].index(hca) * 64 + (vf_index + 1 if is_vf else 0)
        current = _ib_name_of(sysdir, bdf)
        if mlx5_ib and current is not None and not os.path.islink(os.path.join(sysdir, 'class/infiniband', current)):
            # a PF's device kept across a reboot (same content): only the class link is re-registered
            symlink('../../%s/infiniband/%s' % (pci_rel(bdf), current),
                    os.path.join(sysdir, 'class/infiniband', current))
        elif mlx5_ib and current is None:
            name = _lowest_free_ibname(sysdir, pf_names) if is_vf else hca['name']
            pkeys = hca['vf_pkeys'] if is_vf else hca['pkeys']
            device_id = hca['vf_device'] if is_vf else hca['device']
            lid = hca['lid'] + (vf_index + 1 if is_vf else 0)
            _ib_device(sysdir, bdf, name, 'MT%d' % device_id, hca['fw_ver'], guid, hca['link_layer'],
                       hca['rate'], lid, hca['sm_lid'], pkeys, hca.get('pkey_table_len', 128))
        elif not mlx5_ib and current is not None:
            remove(os.path.join(sysdir, 'class/infiniband', current))
            remove(os.path.join(pdir, 'infiniband'))
        want_netdev = ipoib if hca['link_layer'] == 'InfiniBand' else mlx5_core
        name = ifname(bdf, hca['link_layer'], is_vf)
        ndir = os.path.join(pdir, 'net', name)
        if want_netdev and not os.path.isdir(ndir):
            _netdev(sysdir, bdf, name, hca['link_layer'], guid, dev_index)
        elif not want_netdev and os.path.isdir(ndir):
            remove(os.path.join(sysdir, 'class/net', name))
            remove(os.path.join(pdir, 'net'))

    for _round in range(10):
        for hca in hw['hcas']:
            hca.setdefault('numa_nodes', hw.get('numa_nodes', 1))
            _sync_vfs(sysdir, hca, messages, derive)
        if not _pending_writes(sysdir, hw):
            break
    for hca, bdf, vf_index in _functions(sysdir, hw):
        derive(hca, bdf, vf_index)
    sync_hugepages(sysdir, hw, messages)
    return messages


def _pending_writes(sysdir, hw):
    for hca in hw['hcas']:
        pdir = os.path.join(sysdir, pci_rel(hca['bdf']))
        numvfs = os.path.join(pdir, 'sriov_numvfs')
        if hca.get('sriov_totalvfs') is None or not os.path.exists(numvfs):
            continue
        if read(numvfs, '').strip() != str(_count_vfs(pdir)):
            return True
    return False


def power_on_reset(base=None, hw=None):
    """What a reboot does to the derived objects: no VFs, drivers not yet bound."""
    hw = hw if hw is not None else load_hw(base)
    sysdir = sys_root(base)
    for hca in hw['hcas']:
        pdir = os.path.join(sysdir, pci_rel(hca['bdf']))
        for index in range(_count_vfs(pdir)):
            remove_function(sysdir, vf_bdf(hca['bdf'], index))
            remove(os.path.join(pdir, 'virtfn%d' % index))
        if hca.get('sriov_totalvfs') is not None and os.path.exists(os.path.join(pdir, 'sriov_numvfs')):
            write(os.path.join(pdir, 'sriov_numvfs'), '0\n')
        # The PF's infiniband/<dev> directory is kept (its content is the same every boot; writing 128
        # P_Key files per device each boot costs boot time); it is visible again only through
        # class/infiniband, which the reconcile re-creates once mlx5_ib is loaded.
        remove(os.path.join(pdir, 'net'))
    for cls in ('class/infiniband', 'class/net'):
        cdir = os.path.join(sysdir, cls)
        if os.path.isdir(cdir):
            for name in os.listdir(cdir):
                remove(os.path.join(cdir, name))


# ---------------------------------------------------------------- modules / modprobe

class ModprobeError(Exception):
    def __init__(self, message, rc=1):
        Exception.__init__(self, message)
        self.rc = rc


def norm_module(name):
    return name.replace('-', '_')


def _conf_files(dirs, suffix, base):
    """kmod/systemd semantics: files by basename; earlier directories win; sorted by name."""
    chosen = {}
    for directory in dirs:
        full = path(directory, base)
        if not os.path.isdir(full):
            continue
        for name in os.listdir(full):
            if name.endswith(suffix) and name not in chosen:
                chosen[name] = os.path.join(full, name)
    return [chosen[name] for name in sorted(chosen)]


MODPROBE_DIRS = ('etc/modprobe.d', 'run/modprobe.d', 'usr/local/lib/modprobe.d', 'usr/lib/modprobe.d',
                 'lib/modprobe.d')
MODULES_LOAD_DIRS = ('etc/modules-load.d', 'run/modules-load.d', 'usr/local/lib/modules-load.d',
                     'usr/lib/modules-load.d', 'lib/modules-load.d')


def _logical_lines(text):
    buf = ''
    for line in text.splitlines():
        if line.endswith('\\'):
            buf += line[:-1] + ' '
            continue
        buf += line
        yield buf
        buf = ''
    if buf:
        yield buf


def modprobe_config(base=None):
    """Parse modprobe.d: {'options': {module: [tokens]}, 'blacklist': set, 'install': {}, 'alias': {}}."""
    conf = {'options': {}, 'blacklist': set(), 'install': {}, 'alias': {}}
    for conf_file in _conf_files(MODPROBE_DIRS, '.conf', base):
        for line in _logical_lines(read(conf_file, '')):
            words = line.split('#', 1)[0].split()
            if len(words) < 2:
                continue
            keyword, module = words[0], norm_module(words[1])
            if keyword == 'options':
                conf['options'].setdefault(module, []).extend(words[2:])
            elif keyword == 'blacklist':
                conf['blacklist'].add(module)
            elif keyword == 'install':
                conf['install'][module] = ' '.join(words[2:])
            elif keyword == 'alias' and len(words) >= 3:
                conf['alias'][words[1]] = norm_module(words[2])
    return conf


def cmdline_module_options(cmdline):
    """``ib_core.netns_mode=0`` on the kernel command line -> {'ib_core': ['netns_mode=0']}."""
    options = {}
    for token in cmdline.split():
        key, eq, value = token.partition('=')
        if '.' not in key or key.startswith('.'):
            continue
        module, param = key.split('.', 1)
        options.setdefault(norm_module(module), []).append(param + eq + value)
    return options


def _param_value(kind, value, module, param):
    if kind == 'bool':
        low = value.lower()
        if low in ('', 'y', '1', 'on', 'yes', 'true'):
            return 'Y'
        if low in ('n', '0', 'off', 'no', 'false'):
            return 'N'
        raise ModprobeError("modprobe: ERROR: could not insert '%s': Invalid argument" % module)
    if kind in ('int', 'uint'):
        try:
            number = int(value, 0)
        except ValueError:
            raise ModprobeError("modprobe: ERROR: could not insert '%s': Invalid argument" % module)
        if kind == 'uint' and number < 0:
            raise ModprobeError("modprobe: ERROR: could not insert '%s': Invalid argument" % module)
        return str(number)
    return value


def _load_one(sysdir, hw, module, options, messages):
    spec = hw['modules'][module]
    mdir = os.path.join(sysdir, 'module', module)
    params = {}
    for name, (kind, default) in spec.get('params', {}).items():
        params[name] = default
    for option in options:
        name, _, value = option.partition('=')
        name = norm_module(name) if name not in spec.get('params', {}) else name
        if name not in spec.get('params', {}):
            messages.append('%s: unknown parameter \'%s\' ignored' % (module, name))
            continue
        params[name] = _param_value(spec['params'][name][0], value, module, name)
    os.makedirs(os.path.join(mdir, 'holders'), exist_ok=True)
    write(os.path.join(mdir, 'initstate'), 'live\n')
    write(os.path.join(mdir, 'refcnt'), '0\n')
    write(os.path.join(mdir, 'coresize'), '65536\n')
    write(os.path.join(mdir, 'taint'), '\n')
    for name, value in params.items():
        write(os.path.join(mdir, 'parameters', name), value + '\n')


def resolve_module(hw, name, conf):
    name = norm_module(name)
    if name in hw['modules']:
        return name
    alias = conf['alias'].get(name) or hw.get('aliases', {}).get(name)
    if alias and alias in hw['modules']:
        return alias
    return None


def dependency_order(hw, module):
    order = []

    def visit(mod, seen):
        if mod in seen:
            return
        seen.add(mod)
        for dep in hw['modules'][mod].get('deps', []):
            visit(dep, seen)
        order.append(mod)
    visit(module, set())
    return order


def read_cmdline(base=None):
    return read(path('proc/cmdline', base), '') or ''


def modprobe_load(name, extra_options=(), base=None, hw=None, dry_run=False, first_time=False,
                  messages=None):
    """Load ``name`` and its dependencies like modprobe: options from modprobe.d,
    then the kernel command line, then the command line of modprobe itself."""
    hw = hw if hw is not None else load_hw(base)
    messages = messages if messages is not None else []
    sysdir = sys_root(base)
    conf = modprobe_config(base)
    module = resolve_module(hw, name, conf)
    if module is None:
        raise ModprobeError('modprobe: FATAL: Module %s not found in directory /lib/modules/%s'
                            % (name, hw['kernel_release']))
    if first_time and module_loaded(sysdir, module):
        raise ModprobeError("modprobe: ERROR: could not insert '%s': Module already in kernel" % module)
    cmd_opts = cmdline_module_options(read_cmdline(base))
    loaded = []
    for mod in dependency_order(hw, module):
        if module_loaded(sysdir, mod):
            continue
        options = list(conf['options'].get(mod, [])) + cmd_opts.get(mod, [])
        if mod == module:
            options += list(extra_options)
        if dry_run:
            loaded.append(mod)
            continue
        _load_one(sysdir, hw, mod, options, messages)
        loaded.append(mod)
    return loaded


def holders(hw, sysdir, module):
    return sorted(m for m, spec in hw['modules'].items()
                  if module in spec.get('deps', []) and module_loaded(sysdir, m))


def modprobe_remove(name, base=None, hw=None, dry_run=False, first_time=False):
    """``modprobe -r``, as kmod (>= 30) does it: an unknown name fails (``Module X not found.``); a known
    module that is not loaded is a silent no-op unless ``--first-time`` (``Module X is not in kernel.``)."""
    hw = hw if hw is not None else load_hw(base)
    sysdir = sys_root(base)
    conf = modprobe_config(base)
    module = resolve_module(hw, name, conf)
    if module is None:
        raise ModprobeError('modprobe: FATAL: Module %s not found.' % name)
    if module in ('mlx5_core',):
        log_refused('modprobe', 'unload of %s requested (modprobe -r %s): gpu_tray.cluster must never '
                    'unload mlx5_core; the primary network of a tray rides on it' % (module, name), base)
        raise ModprobeError('modprobe: ERROR: gpu-tray-lab refuses to unload mlx5_core: on a real tray this takes '
                            'down the BlueField-3/OVN primary network (never unload mlx5_core)')
    if not module_loaded(sysdir, module):
        if first_time:
            raise ModprobeError('modprobe: FATAL: Module %s is not in kernel.' % module)
        return []
    users = holders(hw, sysdir, module)
    if users:
        raise ModprobeError('modprobe: FATAL: Module %s is in use.' % module)
    if not dry_run:
        remove(os.path.join(sysdir, 'module', module))
    return [module]


def rmmod(name, base=None, hw=None):
    """kmod's ``rmmod``: removes exactly this module, which must be loaded and have no holders."""
    hw = hw if hw is not None else load_hw(base)
    sysdir = sys_root(base)
    base_name = os.path.basename(name)
    module = norm_module(base_name[:-3] if base_name.endswith('.ko') else base_name)
    if module == 'mlx5_core':
        log_refused('rmmod', 'unload of mlx5_core requested (rmmod %s): gpu_tray.cluster must never unload '
                    'mlx5_core; the primary network of a tray rides on it' % name, base)
        raise ModprobeError('rmmod: ERROR: gpu-tray-lab refuses to unload mlx5_core: on a real tray this takes '
                            'down the BlueField-3/OVN primary network (never unload mlx5_core)')
    if not module_loaded(sysdir, module):
        raise ModprobeError('rmmod: ERROR: Module %s is not currently loaded' % module)
    users = holders(hw, sysdir, module)
    if users:
        raise ModprobeError('rmmod: ERROR: Module %s is in use by: %s' % (module, ' '.join(users)))
    remove(os.path.join(sysdir, 'module', module))
    return [module]


# ---------------------------------------------------------------- GRUB -> cmdline

_MENU_OPEN = re.compile(r"^\s*(menuentry|submenu)\s+(.*)\{\s*$")


def _grub_words(text, variables):
    def expand(match):
        return variables.get(match.group(1) or match.group(2), '')
    text = re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)', expand, text)
    return shlex.split(text)


def parse_grub_cfg(text):
    """Parse grub.cfg into ({'default': spec, 'vars': {}}, [items]); an item is
    {'type': 'menuentry'|'submenu', 'title', 'id', 'linux': [args] or None, 'children': []}."""
    top = {'type': 'submenu', 'title': None, 'id': None, 'linux': None, 'children': []}
    stack = [top]
    variables = {}
    defaults = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith('#'):
            continue
        match = _MENU_OPEN.match(line)
        if match:
            words = _grub_words(match.group(2), {'menuentry_id_option': '--id'})
            title = words[0] if words else ''
            entry_id = None
            if '--id' in words:
                pos = words.index('--id')
                if pos + 1 < len(words):
                    entry_id = words[pos + 1]
            item = {'type': match.group(1), 'title': title, 'id': entry_id, 'linux': None, 'children': []}
            stack[-1]['children'].append(item)
            stack.append(item)
            continue
        if stripped == '}' or stripped.startswith('}'):
            if len(stack) > 1 and stripped == '}':
                stack.pop()
            continue
        words_raw = stripped.split(None, 1)
        if len(stack) == 1 and words_raw[0] == 'set' and len(words_raw) > 1:
            assignment = words_raw[1]
            name, _, value = assignment.partition('=')
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
                value = value[1:-1]
            if name == 'default':
                defaults.append(value)
            else:
                variables[name] = value
            continue
        if len(stack) > 1 and words_raw[0] in ('linux', 'linuxefi', 'linux16'):
            stack[-1]['linux'] = _grub_words(words_raw[1] if len(words_raw) > 1 else '', variables)
    default = '0'
    for value in defaults:
        if value not in ('${next_entry}', '$next_entry'):
            default = value
            break
    return {'default': default, 'vars': variables}, top['children']


def _pick(items, component):
    if re.match(r'^\d+$', component):
        index = int(component)
        return items[index] if index < len(items) else None
    for item in items:
        if component in (item['id'], item['title']):
            return item
    return None


def default_entry(text, grubenv_text=''):
    header, items = parse_grub_cfg(text)
    spec = header['default']
    if spec in ('${saved_entry}', '$saved_entry'):
        spec = '0'
        for line in (grubenv_text or '').splitlines():
            if line.startswith('saved_entry='):
                spec = line.split('=', 1)[1]
    current = items
    item = None
    for component in spec.split('>'):
        item = _pick(current, component)
        if item is None:
            item = _pick(items, '0')
            break
        current = item['children']
    while item is not None and item['type'] == 'submenu':
        item = item['children'][0] if item['children'] else None
    return item


def cmdline_from_grub(text, grubenv_text=''):
    """The /proc/cmdline GRUB would hand the kernel for the default entry:
    ``BOOT_IMAGE=<image> <args...>`` (GRUB joins the words with single spaces)."""
    item = default_entry(text, grubenv_text)
    if item is None or not item['linux']:
        raise ValueError('grub.cfg has no default menuentry with a linux line')
    image = item['linux'][0]
    return ' '.join(['BOOT_IMAGE=' + image] + item['linux'][1:])


# ---------------------------------------------------------------- hugepages

def _size_kb(text):
    match = re.match(r'^(\d+)([KkMmGg]?)$', text)
    if not match:
        return None
    number = int(match.group(1))
    unit = match.group(2).upper()
    return number * {'': 1.0 / 1024, 'K': 1, 'M': 1024, 'G': 1024 * 1024}[unit]


def hugepages_from_cmdline(cmdline, sizes_kb, default_kb):
    """Pool sizes the kernel sets up from ``hugepagesz=``/``hugepages=``/``default_hugepagesz=``.

    Unsupported sizes (1G on a 64k-page kernel) are ignored together with the
    ``hugepages=`` that follows them, as the kernel does
    (``HugeTLB: unsupported hugepagesz=1G``)."""
    pools = dict((size, 0) for size in sizes_kb)
    messages = []
    tokens = cmdline.split()
    for token in tokens:
        if token.startswith('default_hugepagesz='):
            size = _size_kb(token.split('=', 1)[1])
            if size in pools:
                default_kb = int(size)
    current = default_kb
    valid = True
    for token in tokens:
        key, _, value = token.partition('=')
        if key == 'hugepagesz':
            size = _size_kb(value)
            if size in pools:
                current, valid = int(size), True
            else:
                valid = False
                messages.append('HugeTLB: unsupported hugepagesz=%s' % value)
        elif key == 'hugepages':
            if valid:
                try:
                    pools[current] = int(value)
                except ValueError:
                    messages.append('HugeTLB: invalid hugepages=%s' % value)
            else:
                messages.append('HugeTLB: hugepages=%s does not follow a valid hugepagesz, ignoring' % value)
            valid = True
            current = default_kb
    return pools, default_kb, messages


def cap_hugepages(pools, memory_kb, fixed=None):
    """What the kernel manages to allocate: pools are filled in size order until 90% of
    the tray's memory is used (``fixed``: pools whose size stays as it is)."""
    if not memory_kb:
        return dict(pools)
    budget = memory_kb * 9 // 10
    out = {}
    for size in sorted(pools, key=lambda s: (0 if fixed and s in fixed else 1, s)):
        count = max(0, min(pools[size], budget // size))
        out[size] = count
        budget -= count * size
    return out


def sync_hugepages(sysdir, hw, messages):
    """A run-time write to ``nr_hugepages``: the kernel allocates what it can and
    ``free_hugepages`` follows; a value that is not a number is refused (EINVAL).
    ``nr_hugepages_mempolicy`` holds the count last applied."""
    base = os.path.join(sysdir, 'kernel/mm/hugepages')
    applied, wanted, stale = {}, {}, False
    for size in hw['hugepage_sizes_kb']:
        hdir = os.path.join(base, 'hugepages-%dkB' % size)
        try:
            applied[size] = int((read(os.path.join(hdir, 'nr_hugepages_mempolicy'), '0') or '0').strip() or 0)
        except ValueError:
            applied[size] = 0
        raw = read(os.path.join(hdir, 'nr_hugepages'), '') or ''
        stale = stale or raw != '%d\n' % applied[size]
        try:
            wanted[size] = int(raw.strip())
            if wanted[size] < 0:
                raise ValueError(raw)
        except ValueError:
            messages.append('hugepages-%dkB: write of nr_hugepages refused as the kernel would: EINVAL (%r)'
                            % (size, raw.strip()))
            wanted[size] = applied[size]
    if not stale:
        return
    unchanged = set(size for size in wanted if wanted[size] == applied[size])
    pools = cap_hugepages(wanted, hw.get('memory_kb'), fixed=unchanged)
    for size in sorted(wanted):
        if size in unchanged:
            continue
        if pools[size] != wanted[size]:
            messages.append('hugepages-%dkB: asked for %d, allocated %d (not enough memory)'
                            % (size, wanted[size], pools[size]))
        else:
            messages.append('hugepages-%dkB: nr_hugepages %d -> %d' % (size, applied[size], pools[size]))
    write_hugepages(sysdir, pools)


def write_hugepages(sysdir, pools):
    for size, count in pools.items():
        hdir = os.path.join(sysdir, 'kernel/mm/hugepages/hugepages-%dkB' % size)
        for name, value in (('nr_hugepages', count), ('nr_hugepages_mempolicy', count), ('free_hugepages', count),
                            ('resv_hugepages', 0), ('surplus_hugepages', 0), ('nr_overcommit_hugepages', 0)):
            write(os.path.join(hdir, name), '%d\n' % value)


# ---------------------------------------------------------------- modules-load.d replay

def modules_load_list(base=None, cmdline=''):
    names = []
    for conf_file in _conf_files(MODULES_LOAD_DIRS, '.conf', base):
        for line in read(conf_file, '').splitlines():
            line = line.strip()
            if not line or line[0] in '#;':
                continue
            names.append(line)
    for token in cmdline.split():
        for key in ('modules_load=', 'modules-load=', 'rd.modules_load=', 'rd.modules-load='):
            if token.startswith(key):
                names.extend(n for n in token[len(key):].split(',') if n)
    return names


# ---------------------------------------------------------------- boot

def _bind(source, target, messages, read_only=False):
    if not os.path.exists(target):
        messages.append('bind %s: target does not exist, skipped' % target)
        return False
    subprocess.call(['umount', target], stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    rc = subprocess.call(['mount', '--bind', source, target])
    if rc == 0 and read_only:
        rc = subprocess.call(['mount', '-o', 'remount,bind,ro', target])
    if rc != 0:
        messages.append('bind mount of %s over %s failed (rc %d)' % (source, target, rc))
        return False
    return True


def _mount(argv):
    if subprocess.call(argv) != 0:
        raise RuntimeError('gpu-tray lab boot: `%s` failed' % ' '.join(argv))


def protect_sysfs(base, hw):
    """Make the fixture tree behave like sysfs for writers: read-only, except the files the kernel
    accepts writes to (``writable_files``). Returns the writable view the lab's own code uses.

    1. the tree is bound to /run/gpu-tray-lab/sys-rw (writable: the doubles and units write there);
    2. a fresh tmpfs on sys-rw/module (a reboot empties it, as a kernel forgets its modules);
    3. the tree is bound over itself read-only, and the module tmpfs over its module/ read-only;
    4. each writable file is bound read-write over itself.
    A write anywhere else fails with EROFS (a real kernel says EACCES/EPERM/EIO); the value never changes.
    """
    sysdir = path(SYS_REL, base)
    rw_view = path(RW_SYS_REL, base)
    os.makedirs(rw_view, exist_ok=True)
    if not is_mount(rw_view):
        # private mounts: what is mounted on one view must not propagate to the other (nspawn's root is shared)
        _mount(['mount', '--bind', sysdir, rw_view])
        _mount(['mount', '--make-private', rw_view])
    rw_module = os.path.join(rw_view, 'module')
    os.makedirs(rw_module, exist_ok=True)
    if not is_mount(rw_module):
        _mount(['mount', '-t', 'tmpfs', '-o', 'mode=0755,size=16m', 'gpu-tray-lab-module', rw_module])
    if not is_mount(sysdir):
        _mount(['mount', '--bind', sysdir, sysdir])
        _mount(['mount', '--make-private', sysdir])
        _mount(['mount', '-o', 'remount,bind,ro', sysdir])
    module_dir = os.path.join(sysdir, 'module')
    if not is_mount(module_dir):
        _mount(['mount', '--bind', rw_module, module_dir])
        _mount(['mount', '-o', 'remount,bind,ro', module_dir])
    for rel in writable_files(hw):
        target = os.path.join(sysdir, rel)
        if os.path.exists(target) and not is_mount(target):
            _mount(['mount', '--bind', os.path.join(rw_view, rel), target])
    return rw_view


class Unbootable(Exception):
    """The tray's firmware would not find a kernel to boot (the boot unit powers the tray off)."""


def boot(base=None, do_mounts=True):
    """What the tray's "kernel" does at boot, before sysinit: see module docstring.

    Raises Unbootable when GRUB would not boot the tray: a grub.cfg without a usable default entry, or a
    default entry whose kernel image does not exist."""
    hw = load_hw(base)
    messages = []
    marker = path(UNBOOTABLE_REL, base)
    if os.path.lexists(marker):
        os.unlink(marker)
    run_dir = path(RUN_DIR, base)
    os.makedirs(run_dir, exist_ok=True)
    if do_mounts:
        sysdir = protect_sysfs(base, hw)
    else:
        sysdir = sys_root(base)
        mdir = os.path.join(sysdir, 'module')
        os.makedirs(mdir, exist_ok=True)
        for name in os.listdir(mdir):
            remove(os.path.join(mdir, name))
    power_on_reset(base, hw)

    # kernel command line: GRUB's default entry (no grub.cfg yet: what update-grub would write)
    grub_cfg = path('boot/grub/grub.cfg', base)
    if os.path.exists(grub_cfg):
        try:
            cmdline = cmdline_from_grub(read(grub_cfg, ''), read(path('boot/grub/grubenv', base), ''))
        except ValueError as exc:
            raise Unbootable('/boot/grub/grub.cfg is unusable (%s): GRUB stops at its prompt' % exc)
        source = grub_cfg
    else:
        cmdline = hw['baseline_cmdline']
        source = 'baseline'
    image = cmdline.split()[0].split('=', 1)[1]
    if not os.path.isfile(path(image, base)):
        raise Unbootable("GRUB default entry boots %s, which does not exist (GRUB: error: file `%s' not found)"
                         % (image, image))
    release = hw['kernel_release']
    if os.path.basename(image).startswith('vmlinuz-'):
        release = os.path.basename(image)[len('vmlinuz-'):]
    write(os.path.join(run_dir, 'cmdline'), cmdline + '\n')
    write(os.path.join(run_dir, 'cmdline.source'), source + '\n')
    write(os.path.join(run_dir, 'osrelease'), release + '\n')
    numa = '0' if 'numa_balancing=disable' in cmdline.split() else '1'
    write(os.path.join(run_dir, 'numa_balancing'), numa + '\n')
    if do_mounts:
        # read-only like the kernel's files; numa_balancing is a sysctl the kernel lets root write
        _bind(os.path.join(run_dir, 'cmdline'), '/proc/cmdline', messages, read_only=True)
        _bind(os.path.join(run_dir, 'osrelease'), '/proc/sys/kernel/osrelease', messages, read_only=True)
        _bind(os.path.join(run_dir, 'numa_balancing'), '/proc/sys/kernel/numa_balancing', messages)
    else:
        write(path('proc/cmdline', base), cmdline + '\n')
        write(path('proc/sys/kernel/osrelease', base), release + '\n')

    # hugepage pools from the command line
    pools, _default, hp_messages = hugepages_from_cmdline(cmdline, hw['hugepage_sizes_kb'], hw['default_hugepage_kb'])
    messages.extend(hp_messages)
    write_hugepages(sysdir, cap_hugepages(pools, hw.get('memory_kb')))

    # boot identity
    write(os.path.join(run_dir, 'boot_id'), str(uuid.uuid4()) + '\n')
    count_file = path(LAB_DIR + '/boot_count', base)
    try:
        count = int(read(count_file, '0').strip() or 0) + 1
    except ValueError:
        count = 1
    write(count_file, '%d\n' % count)

    # modules: what the hardware implies (udev), then modules-load.d / modules_load=
    blacklist = modprobe_config(base)['blacklist'] | set(
        norm_module(t.split('=', 1)[1]) for t in cmdline.split() if t.startswith('module_blacklist='))
    implied = []
    for name in hw['boot_modules']:
        if norm_module(name) in blacklist:
            messages.append('%s: blacklisted in modprobe.d, not loaded for the hardware (udev)' % name)
        else:
            implied.append(name)
    wanted = implied + modules_load_list(base, cmdline)
    for name in wanted:
        try:
            loaded = modprobe_load(name, base=base, hw=hw, messages=messages)
            log_call('modprobe', [name], note='boot: loaded %s' % (','.join(loaded) or 'nothing new'), base=base)
        except ModprobeError as exc:
            messages.append(str(exc))
            log_call('modprobe', [name], note='boot: ' + str(exc), base=base)
    messages.extend(reconcile(base, hw))
    log_dir = path(LOG_DIR, base)
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, 'boot.log'), 'a') as handle:
        handle.write('%s boot %d cmdline(%s): %s\n' % (now(), count, source, cmdline))
        for message in messages:
            handle.write('%s   %s\n' % (now(), message))
    return messages


def record_unbootable(reason, base=None):
    """Leave the reason where the host's supervisor finds it (the tray's disk) and in the boot log."""
    write(path(UNBOOTABLE_REL, base), reason + '\n')
    log_dir = path(LOG_DIR, base)
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, 'boot.log'), 'a') as handle:
        handle.write('%s boot FAILED, unbootable: %s\n' % (now(), reason))


def main(argv):
    if len(argv) < 2 or argv[1] not in ('boot', 'reconcile', 'cmdline'):
        sys.stderr.write('usage: gpu-tray-lab-hw boot|reconcile|cmdline [--no-mount]\n')
        return 2
    if argv[1] == 'boot':
        try:
            messages = boot(do_mounts='--no-mount' not in argv)
        except Unbootable as exc:
            # the unit's FailureAction=poweroff-force powers the tray off; the supervisor reports the reason
            record_unbootable(str(exc))
            sys.stderr.write('gpu-tray lab: tray is unbootable: %s\n' % exc)
            return 1
        except Exception as exc:  # pylint: disable=broad-except
            record_unbootable('the lab\'s emulated kernel boot failed: %s: %s' % (type(exc).__name__, exc))
            raise
        for message in messages:
            print(message)
        return 0
    if argv[1] == 'reconcile':
        for message in reconcile():
            print(message)
        return 0
    grub_cfg = path('boot/grub/grub.cfg')
    print(cmdline_from_grub(read(grub_cfg, ''), read(path('boot/grub/grubenv'), '')))
    return 0
