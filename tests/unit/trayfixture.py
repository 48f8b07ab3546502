# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build a simulated tray's sysfs/procfs tree in the kernel's real layout.

Layout reproduced (drivers/infiniband/core/sysfs.c, PCI sysfs):

  sys/devices/pci0000:00/0000:00:00.0/<bdf>/          PCI function: vendor, device,
                                                      sriov_totalvfs, sriov_numvfs (PF),
                                                      virtfn<n> -> ../<vf bdf> (PF),
                                                      physfn -> ../<pf bdf> (VF), net/<ifname>/,
                                                      driver -> ../../../../bus/pci/drivers/<drv>
  sys/devices/.../<bdf>/infiniband/<dev>/              node_guid, fw_ver, device -> ../../../<bdf>,
                                                      ports/<p>/{state,phys_state,rate,link_layer,lid,
                                                      gids/0,pkeys/<idx>}
  sys/class/infiniband/<dev> -> ../../devices/.../<bdf>/infiniband/<dev>
  sys/bus/pci/devices/<bdf> -> ../../../devices/.../<bdf>
  sys/bus/pci/drivers/<drv>/
  sys/kernel/mm/hugepages/hugepages-<n>kB/{nr,free,resv,surplus}_hugepages
  sys/module/<mod>/{initstate,parameters/<p>}
  proc/cmdline, proc/meminfo (Hugepagesize), proc/sys/kernel/osrelease

A device spec with ``'name': None`` is a PCI function without an RDMA device (a VF bound to
vfio-pci, or moved to a pod network namespace); ``'driver'`` names its driver (default mlx5_core
for devices with an RDMA device, none otherwise).

Usable as a script too: ``python trayfixture.py DEST`` writes the default GB200 tray.
"""

import copy
import os
import sys

PCI_PARENT = 'devices/pci0000:00/0000:00:00.0'
PKEY_SLOTS = 8


def _write(path, text):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    with open(path, 'w') as handle:
        handle.write(text + '\n')


def _symlink(target, path):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    os.symlink(target, path)


def port(state='4: ACTIVE', phys_state='5: LinkUp', rate='400 Gb/sec (4X NDR)', link_layer='InfiniBand',
         pkeys=('0xffff',), lid='0x12', guid='b83f:d203:00a1:b2c4'):
    return {'state': state, 'phys_state': phys_state, 'rate': rate, 'link_layer': link_layer,
            'pkeys': list(pkeys), 'lid': lid, 'guid': guid}


def _guid(index):
    return 'b83f:d203:00a1:%04x' % (0xb200 + index)


def gb200_devices():
    """The GB200 NVKE reference tray (nvke-gb200-setup guide, nodeprep.md 2.2).

    mlx5_0/1/3/4: ConnectX-7 PFs, InfiniBand, NDR, firmware NUM_OF_VFS 16.
    mlx5_2: the BlueField-3 (host side, Ethernet, carries OVN-Kubernetes).
    mlx5_5/mlx5_6: two VFs of mlx5_3 (0000:06:00.0).
    """
    devs = []
    rails = [('mlx5_0', '0000:03:00.0'), ('mlx5_1', '0000:04:00.0'),
             ('mlx5_3', '0000:06:00.0'), ('mlx5_4', '0000:07:00.0')]
    for index, (name, bdf) in enumerate(rails):
        devs.append({'name': name, 'bdf': bdf, 'device_id': '0x1021', 'totalvfs': 16,
                     'numvfs': 2 if name == 'mlx5_3' else 0, 'netdevs': [],
                     'ports': {1: port(guid=_guid(index))}})
    devs.append({'name': 'mlx5_2', 'bdf': '0000:05:00.0', 'device_id': '0xa2dc', 'totalvfs': 0, 'numvfs': 0,
                 'netdevs': ['enP5p5s0f0np0'],
                 'ports': {1: port(link_layer='Ethernet', rate='200 Gb/sec (2X NDR)', lid='0x0', guid=_guid(9))}})
    for index, (name, bdf) in enumerate([('mlx5_5', '0000:06:00.1'), ('mlx5_6', '0000:06:00.2')]):
        devs.append({'name': name, 'bdf': bdf, 'device_id': '0x101e', 'physfn': '0000:06:00.0', 'netdevs': [],
                     'ports': {1: port(guid=_guid(20 + index))}})
    return devs


def gb200_devices_with_hidden_vfs():
    """The GB200 tray with sriov_numvfs 4 on mlx5_3: two VFs visible, one bound to vfio-pci (no RDMA device), one
    counted but without a virtfn link - the VFs a host-side P_Key check cannot see."""
    devices = gb200_devices()
    for dev in devices:
        if dev['name'] == 'mlx5_3':
            dev['numvfs'] = 4
    devices.append({'name': None, 'bdf': '0000:06:00.3', 'device_id': '0x101e', 'physfn': '0000:06:00.0',
                    'driver': 'vfio-pci'})
    return devices


DEFAULT_HUGEPAGES = {2048: 5128, 524288: 0, 16777216: 0}   # a 64k-page kernel: 2M, 512M, 16G
DEFAULT_MODULES = {
    'ib_core': {'initstate': 'live', 'parameters': {'netns_mode': 'Y'}},
    'mlx5_core': {'initstate': 'live', 'parameters': {}},
    'mlx5_ib': {'initstate': 'live', 'parameters': {}},
    'printk': {'parameters': {'time': 'Y'}},               # built-in: no initstate
}
DEFAULT_CMDLINE = ('BOOT_IMAGE=/vmlinuz-6.8.0-1021-nvidia-64k root=UUID=0b5a7d2e-1f3c-4f7b-9a3d-6c2b1e0f9a11 ro '
                   'console=tty0 console=ttyS0,115200n8 iommu.passthrough=1 init_on_alloc=0 '
                   'numa_balancing=disable earlycon hugepagesz=2M hugepages=5128 hugepagesz=1G hugepages=2')


MEMINFO = '''MemTotal:       1003263424 kB
MemFree:        984915200 kB
MemAvailable:   990126080 kB
HugePages_Total:    5128
HugePages_Free:     5128
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:     %d kB
Hugetlb:        10502144 kB'''


def build_tray(root, devices=None, hugepages=None, modules=None, cmdline=DEFAULT_CMDLINE,
               osrelease='6.8.0-1021-nvidia-64k', default_hugepage_kb=524288):
    """Create ``root/sys`` and ``root/proc``; return a dict with the paths and the spec used."""
    devices = copy.deepcopy(gb200_devices() if devices is None else devices)
    hugepages = DEFAULT_HUGEPAGES if hugepages is None else hugepages
    modules = DEFAULT_MODULES if modules is None else modules
    sys_root = os.path.join(root, 'sys')
    proc_root = os.path.join(root, 'proc')
    os.makedirs(os.path.join(sys_root, 'class', 'infiniband'))
    os.makedirs(os.path.join(sys_root, 'bus', 'pci', 'devices'))
    os.makedirs(proc_root)
    # PCI functions first (VF links need their PF).
    for dev in devices:
        pci_rel = '%s/%s' % (PCI_PARENT, dev['bdf'])
        pci_dir = os.path.join(sys_root, pci_rel)
        _write(os.path.join(pci_dir, 'vendor'), dev.get('vendor', '0x15b3'))
        _write(os.path.join(pci_dir, 'device'), dev['device_id'])
        if dev.get('physfn'):
            _symlink('../%s' % dev['physfn'], os.path.join(pci_dir, 'physfn'))
        else:
            _write(os.path.join(pci_dir, 'sriov_totalvfs'), str(dev.get('totalvfs', 0)))
            _write(os.path.join(pci_dir, 'sriov_numvfs'), str(dev.get('numvfs', 0)))
        os.makedirs(os.path.join(pci_dir, 'net'))
        for ifname in dev.get('netdevs', []):
            _write(os.path.join(pci_dir, 'net', ifname, 'ifindex'), '7')
        _symlink('../../../%s' % pci_rel, os.path.join(sys_root, 'bus', 'pci', 'devices', dev['bdf']))
        driver = dev.get('driver', 'mlx5_core' if dev.get('name') else None)
        if driver:
            drivers = os.path.join(sys_root, 'bus', 'pci', 'drivers', driver)
            if not os.path.isdir(drivers):
                os.makedirs(drivers)
            _symlink('../../../../bus/pci/drivers/%s' % driver, os.path.join(pci_dir, 'driver'))
    vf_index = {}
    for dev in devices:
        if dev.get('physfn'):
            n = vf_index.get(dev['physfn'], 0)
            vf_index[dev['physfn']] = n + 1
            _symlink('../%s' % dev['bdf'],
                     os.path.join(sys_root, PCI_PARENT, dev['physfn'], 'virtfn%d' % n))
        if not dev.get('name'):
            continue
        pci_rel = '%s/%s' % (PCI_PARENT, dev['bdf'])
        ib_dir = os.path.join(sys_root, pci_rel, 'infiniband', dev['name'])
        _write(os.path.join(ib_dir, 'node_guid'), dev.get('node_guid', 'b83f:d203:00a1:b2c0'))
        _write(os.path.join(ib_dir, 'fw_ver'), dev.get('fw_ver', '28.43.1014'))
        _symlink('../../../%s' % dev['bdf'], os.path.join(ib_dir, 'device'))
        for number, spec in sorted(dev['ports'].items()):
            port_dir = os.path.join(ib_dir, 'ports', str(number))
            for name in ('state', 'phys_state', 'rate', 'link_layer', 'lid'):
                if spec.get(name) is not None:
                    _write(os.path.join(port_dir, name), spec[name])
            _write(os.path.join(port_dir, 'gids', '0'), 'fe80:0000:0000:0000:%s' % spec['guid'])
            slots = list(spec['pkeys']) + ['0x0000'] * max(0, PKEY_SLOTS - len(spec['pkeys']))
            for index, value in enumerate(slots):
                _write(os.path.join(port_dir, 'pkeys', str(index)), value)
        _symlink('../../%s/infiniband/%s' % (pci_rel, dev['name']),
                 os.path.join(sys_root, 'class', 'infiniband', dev['name']))
    for size_kb, count in hugepages.items():
        pool = os.path.join(sys_root, 'kernel', 'mm', 'hugepages', 'hugepages-%dkB' % size_kb)
        for name, value in (('nr_hugepages', count), ('free_hugepages', count), ('resv_hugepages', 0),
                            ('surplus_hugepages', 0), ('nr_overcommit_hugepages', 0)):
            _write(os.path.join(pool, name), str(value))
    for name, spec in modules.items():
        mod_dir = os.path.join(sys_root, 'module', name)
        os.makedirs(os.path.join(mod_dir, 'parameters'))
        if spec.get('initstate'):
            _write(os.path.join(mod_dir, 'initstate'), spec['initstate'])
        for param, value in spec.get('parameters', {}).items():
            _write(os.path.join(mod_dir, 'parameters', param), value)
    if cmdline is not None:
        _write(os.path.join(proc_root, 'cmdline'), cmdline)
    if default_hugepage_kb is not None:
        _write(os.path.join(proc_root, 'meminfo'), MEMINFO % default_hugepage_kb)
    if osrelease is not None:
        _write(os.path.join(proc_root, 'sys', 'kernel', 'osrelease'), osrelease)
    return {'root': root, 'sys': sys_root, 'proc': proc_root, 'devices': devices}


def set_pkeys(tray, name, pkeys, port_number=1):
    """Rewrite a port's P_Key table (slots beyond ``pkeys`` become 0x0000)."""
    port_dir = os.path.join(tray['sys'], 'class', 'infiniband', name, 'ports', str(port_number), 'pkeys')
    slots = list(pkeys) + ['0x0000'] * max(0, PKEY_SLOTS - len(pkeys))
    for index, value in enumerate(slots):
        _write(os.path.join(port_dir, str(index)), value)


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit('usage: trayfixture.py DEST')
    print(build_tray(sys.argv[1])['sys'])
