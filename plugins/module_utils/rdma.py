# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsers and collectors for /sys/class/infiniband (kernel drivers/infiniband/core/sysfs.c).

Formats (kernel sysfs.c):
  ports/<p>/state       "%d: %s"            -> "4: ACTIVE"
  ports/<p>/phys_state  "%u: %s"            -> "5: LinkUp"
  ports/<p>/rate        "%d%s Gb/sec (%dX%s)" -> "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)"
  ports/<p>/link_layer  InfiniBand | Ethernet | Unknown
  ports/<p>/pkeys/<idx> "0x%04x"
  ports/<p>/gids/<n>    %pI6
  device                symlink to the PCI function (basename = BDF)
  device/physfn         symlink to the PF (VFs only)
  device/device         PCI device id ("0x1021")
  device/virtfn<n>      symlinks to the VFs' PCI functions (PFs with SR-IOV enabled)
  device/driver         symlink to the bound driver (mlx5_core, vfio-pci, ...)
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    format_pkey,
    join_root,
    link_basename,
    list_dir,
    natural_key,
    parse_pkey_option,
    read_text,
    to_int,
)

# PCI device ids (vendor 15b3) of BlueField DPUs: never an east-west rail.
BLUEFIELD_DEVICE_IDS = frozenset(['0xa2d2', '0xa2d6', '0xa2dc', '0xa2df'])
# ConnectX PFs (CX-5 .. CX-9); VFs are 0x101a/0x101c/0x101e and are never rails.
CONNECTX_NAMES = {
    '0x1017': 'ConnectX-5', '0x1019': 'ConnectX-5 Ex', '0x101b': 'ConnectX-6',
    '0x101d': 'ConnectX-6 Dx', '0x101f': 'ConnectX-6 Lx', '0x1021': 'ConnectX-7',
    '0x1023': 'ConnectX-8', '0x1025': 'ConnectX-9', '0x101e': 'ConnectX VF',
    '0xa2d6': 'BlueField-2', '0xa2dc': 'BlueField-3',
}
MELLANOX_VENDOR = '0x15b3'

_STATE = re.compile(r'^\s*(\d+)\s*:\s*(.+?)\s*$')
_RATE = re.compile(r'^\s*(\d+(?:\.\d+)?)\s*Gb/sec\s*(?:\(\s*(\d+)X\s*([^)]*?)\s*\))?\s*$')
_PKEY = re.compile(r'^0x([0-9a-fA-F]{1,4})$')


def parse_state(text):
    """``"4: ACTIVE"`` -> ``(4, "ACTIVE")``; ``(None, None)`` if unparsable."""
    if text is None:
        return None, None
    match = _STATE.match(text)
    if not match:
        return None, text.strip() or None
    return int(match.group(1)), match.group(2)


def parse_rate(text):
    """``"400 Gb/sec (4X NDR)"`` -> dict(gbps=400, width=4, speed='NDR').

    ``"2.5 Gb/sec (1X SDR)"`` gives gbps 2.5. Unparsable text gives
    gbps None (the raw text is kept by the caller).
    """
    result = {'gbps': None, 'width': None, 'speed': None}
    if text is None:
        return result
    match = _RATE.match(text)
    if not match:
        return result
    number = float(match.group(1))
    result['gbps'] = int(number) if number.is_integer() else number
    if match.group(2):
        result['width'] = int(match.group(2))
        result['speed'] = match.group(3) or None
    return result


def parse_pkey(text):
    """``"0xffff"`` -> 65535; None when the slot is not a hex key."""
    if text is None:
        return None
    match = _PKEY.match(text.strip())
    if not match:
        return None
    return int(match.group(1), 16)


def pkey_is_full_member(value):
    return bool(value & 0x8000)


def pkey_base(value):
    """Partition number without the membership bit (low 15 bits)."""
    return value & 0x7fff


def required_pkey(value):
    """The P_Key a port must hold as a full member (membership bit set), from user input (parse_pkey_option);
    ValueError for anything else, and for 0x0000 / 0x8000, which mark empty table slots, not a partition."""
    wanted = parse_pkey_option(value)
    if pkey_base(wanted) == 0:
        raise ValueError('%s is not a usable partition key' % (value,))
    return wanted | 0x8000


def describe_pkey(value):
    """``0x7fff`` -> ``0x7fff (default partition, limited member)``."""
    base = pkey_base(value)
    part = 'default partition' if base == 0x7fff else 'partition %s' % format_pkey(base)
    member = 'full member' if pkey_is_full_member(value) else 'limited member'
    return '%s (%s, %s)' % (format_pkey(value), part, member)


def port_has_full_membership(pkeys, required):
    """True when ``pkeys`` (ints) hold ``required``'s partition as a full member."""
    want = pkey_base(required)
    return any(pkey_base(key) == want and pkey_is_full_member(key) for key in pkeys)


def read_pkeys(port_dir):
    """Non-zero P_Key table entries of a port, in table order, as ints.

    A ``0x0000`` slot is empty; unreadable or malformed slots are skipped.
    (``0x8000`` is kept: it is non-zero, though no valid partition matches it.)
    """
    pkeys_dir = os.path.join(port_dir, 'pkeys')
    keys = []
    for index in sorted(list_dir(pkeys_dir), key=natural_key):
        value = parse_pkey(read_text(os.path.join(pkeys_dir, index)))
        if not value:
            continue
        keys.append(value)
    return keys


def guid_from_gid(gid):
    """Port GUID from a GID (``fe80:0000:0000:0000:b83f:d203:00a1:b2c4``)."""
    if not gid:
        return None
    groups = gid.strip().split(':')
    if len(groups) != 8:
        return None
    return ':'.join(group.zfill(4) for group in groups[4:]).lower()


def read_port(port_dir, port_name):
    state_num, state = parse_state(read_text(os.path.join(port_dir, 'state')))
    phys_num, phys_state = parse_state(read_text(os.path.join(port_dir, 'phys_state')))
    rate_text = read_text(os.path.join(port_dir, 'rate'))
    rate = parse_rate(rate_text)
    gid0 = read_text(os.path.join(port_dir, 'gids', '0'))
    return {
        'port': int(port_name) if port_name.isdigit() else port_name,
        'link_layer': read_text(os.path.join(port_dir, 'link_layer')),
        'state': state,
        'state_num': state_num,
        'phys_state': phys_state,
        'phys_state_num': phys_num,
        'rate': rate_text,
        'rate_gbps': rate['gbps'],
        'width': rate['width'],
        'speed': rate['speed'],
        'lid': read_text(os.path.join(port_dir, 'lid')),
        'port_guid': guid_from_gid(gid0),
        'pkeys': [format_pkey(key) for key in read_pkeys(port_dir)],
    }


def read_virtfns(pci_dir):
    """VFs of a PF from its ``virtfn<n>`` links: ``[{'index', 'pci_address', 'driver'}]`` in index order.

    Unlike /sys/class/infiniband, these links list every VF the PF has created,
    whatever driver it is bound to and whichever network namespace its RDMA
    device lives in.
    """
    out = []
    for name in list_dir(pci_dir):
        if not name.startswith('virtfn') or not name[len('virtfn'):].isdigit():
            continue
        link = os.path.join(pci_dir, name)
        out.append({
            'index': int(name[len('virtfn'):]),
            'pci_address': link_basename(link),
            'driver': link_basename(os.path.join(link, 'driver')),
        })
    return sorted(out, key=lambda item: item['index'])


def read_device(class_dir, name):
    """Everything rdma_facts reports for one /sys/class/infiniband/<name>."""
    dev_dir = os.path.join(class_dir, name)
    pci_dir = os.path.join(dev_dir, 'device')
    is_vf = os.path.lexists(os.path.join(pci_dir, 'physfn'))
    device_id = read_text(os.path.join(pci_dir, 'device'))
    device_id = device_id.lower() if device_id else None
    entry = {
        'name': name,
        'pci_address': link_basename(pci_dir),
        'pci_vendor_id': (read_text(os.path.join(pci_dir, 'vendor')) or '').lower() or None,
        'pci_device_id': device_id,
        'model': CONNECTX_NAMES.get(device_id),
        'kind': 'vf' if is_vf else 'pf',
        'physfn': link_basename(os.path.join(pci_dir, 'physfn')) if is_vf else None,
        'node_guid': read_text(os.path.join(dev_dir, 'node_guid')),
        'fw_ver': read_text(os.path.join(dev_dir, 'fw_ver')),
        'netdevs': list_dir(os.path.join(pci_dir, 'net')),
        'sriov_totalvfs': None,
        'sriov_numvfs': None,
        'vfs': [],
        'ports': [],
    }
    if not is_vf:
        entry['sriov_totalvfs'] = to_int(read_text(os.path.join(pci_dir, 'sriov_totalvfs')))
        entry['sriov_numvfs'] = to_int(read_text(os.path.join(pci_dir, 'sriov_numvfs')))
        entry['vfs'] = read_virtfns(pci_dir)
    ports_dir = os.path.join(dev_dir, 'ports')
    for port_name in sorted(list_dir(ports_dir), key=natural_key):
        entry['ports'].append(read_port(os.path.join(ports_dir, port_name), port_name))
    return entry


def is_bluefield(device):
    return device.get('pci_device_id') in BLUEFIELD_DEVICE_IDS


def is_connectx_pf(device):
    """A Mellanox/NVIDIA PF that is not a BlueField DPU, whatever its link layer."""
    if device.get('kind') != 'pf' or is_bluefield(device) or not device.get('pci_address'):
        return False
    # Soft devices (rxe, siw) have no PCI function; other vendors' HCAs are not ConnectX.
    return device.get('pci_vendor_id') == MELLANOX_VENDOR


def is_rail(device):
    """A rail: a ConnectX PF (not BlueField, not a VF) whose ports are InfiniBand."""
    if not is_connectx_pf(device):
        return False
    ports = device.get('ports') or []
    return bool(ports) and all(port.get('link_layer') == 'InfiniBand' for port in ports)


def collect_rdma(sysfs_root, rails=None):
    """Return ``{'devices': [...], 'rails': [...], 'vfs_by_pf': {...}}``.

    ``rails`` (list of device names) overrides the automatic selection. Either
    way the rails come in natural order (``mlx5_10`` after ``mlx5_9``), once each.
    """
    class_dir = join_root(sysfs_root, 'class/infiniband')
    devices = [read_device(class_dir, name) for name in sorted(list_dir(class_dir), key=natural_key)]
    if rails is None:
        rail_names = [dev['name'] for dev in devices if is_rail(dev)]
    else:
        rail_names = sorted(set(rails), key=natural_key)
    vfs_by_pf = {}
    for dev in devices:
        if dev['kind'] == 'vf' and dev['physfn']:
            vfs_by_pf.setdefault(dev['physfn'], []).append(dev['name'])
    return {
        'class_dir': class_dir,
        'devices': devices,
        'rails': rail_names,
        'connectx_pfs': [dev['name'] for dev in devices if is_connectx_pf(dev)],
        'vfs_by_pf': vfs_by_pf,
    }


def select_devices(facts, names=None, include_vfs=True):
    """Device dicts to check: ``names`` (default the rails) plus their VFs.

    Only VFs with an RDMA device in ``facts`` can be checked. Use
    :func:`unchecked_vfs` for the ones that cannot.
    Returns (selected_devices, unknown_names).
    """
    by_name = dict((dev['name'], dev) for dev in facts['devices'])
    wanted = list(facts['rails'] if names is None else names)
    unknown = [name for name in wanted if name not in by_name]
    selected = []
    seen = set()
    for name in wanted:
        dev = by_name.get(name)
        if dev is None or name in seen:
            continue
        selected.append(dev)
        seen.add(name)
        if include_vfs and dev['kind'] == 'pf':
            for vf_name in sorted(facts['vfs_by_pf'].get(dev['pci_address'], []), key=natural_key):
                if vf_name not in seen:
                    selected.append(by_name[vf_name])
                    seen.add(vf_name)
    return selected, unknown


def _vf_reason(driver):
    if driver is None:
        return 'no driver bound, so no RDMA device'
    if driver != 'mlx5_core':
        return 'bound to %s, not mlx5_core, so no RDMA device on the host' % driver
    return ('bound to mlx5_core but no RDMA device under class/infiniband: moved to a pod network namespace '
            '(ib_core netns_mode exclusive), or mlx5_ib not loaded')


def unchecked_vfs(facts, selected):
    """VFs of the selected PFs whose P_Keys cannot be read from this host's /sys/class/infiniband.

    Compares each selected PF's ``virtfn<n>`` links and ``sriov_numvfs`` with
    the VFs that have an RDMA device. Returns a list of
    ``{'pf', 'physfn', 'pci_address', 'driver', 'reason'}``; ``pci_address`` is
    None for VFs counted by ``sriov_numvfs`` that have no ``virtfn`` link.
    """
    visible = set(dev['pci_address'] for dev in facts['devices'] if dev['kind'] == 'vf')
    out = []
    for dev in selected:
        if dev['kind'] != 'pf':
            continue
        vfs = dev.get('vfs') or []
        for vf in vfs:
            if vf['pci_address'] in visible:
                continue
            out.append({'pf': dev['name'], 'physfn': dev['pci_address'], 'pci_address': vf['pci_address'],
                        'driver': vf['driver'], 'reason': _vf_reason(vf['driver'])})
        numvfs = dev.get('sriov_numvfs') or 0
        for _missing in range(len(vfs), numvfs):
            out.append({'pf': dev['name'], 'physfn': dev['pci_address'], 'pci_address': None, 'driver': None,
                        'reason': 'sriov_numvfs is %d but only %d virtfn links exist' % (numvfs, len(vfs))})
    return out


def port_label(device, port):
    """``mlx5_3 port 1 (VF of 0000:03:00.0)`` / ``mlx5_0 port 1 (PF 0000:03:00.0)``."""
    if device.get('kind') == 'vf':
        where = 'VF of %s' % device.get('physfn')
    else:
        where = 'PF %s' % device.get('pci_address')
    return '%s port %s (%s)' % (device['name'], port['port'], where)


def check_pkeys(devices, required):
    """Per-port P_Key results for ``devices`` against partition ``required``.

    Returns (results, skipped): only InfiniBand ports have partitions, so a
    port with another link layer (Ethernet/RoCE, Unknown) is not judged and is
    listed in ``skipped`` instead.
    """
    results = []
    skipped = []
    for dev in devices:
        for port in dev['ports']:
            if port.get('link_layer') != 'InfiniBand':
                skipped.append({'device': dev['name'], 'port': port['port'], 'kind': dev['kind'],
                                'pci_address': dev['pci_address'], 'link_layer': port.get('link_layer'),
                                'label': port_label(dev, port)})
                continue
            keys = [parse_pkey(key) for key in port['pkeys']]
            keys = [key for key in keys if key is not None]
            same_partition = [key for key in keys if pkey_base(key) == pkey_base(required)]
            ok = port_has_full_membership(keys, required)
            if ok:
                membership = 'full'
            elif same_partition:
                membership = 'limited'
            else:
                membership = 'none'
            results.append({
                'device': dev['name'],
                'port': port['port'],
                'kind': dev['kind'],
                'pci_address': dev['pci_address'],
                'physfn': dev['physfn'],
                'port_guid': port.get('port_guid'),
                'link_layer': port.get('link_layer'),
                'state': port.get('state'),
                'pkeys': port['pkeys'],
                'membership': membership,
                'ok': ok,
                'label': port_label(dev, port),
            })
    return results, skipped
