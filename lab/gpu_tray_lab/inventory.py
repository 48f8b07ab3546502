# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Write the lab's Ansible inventory and ssh_config.

<state>/inventory/hosts.yml        group gpu_trays > the platform group, lab connection/host vars
                                   (LAB_VARS are HOST vars: they must win over any platform group_vars)
<state>/inventory/group_vars  ->   <repo>/inventories/<platform>/group_vars (the real platform vars)
<state>/ssh/config                 `ssh -F` / testinfra `--ssh-config` file with one Host per tray
"""

import json
import os

from gpu_tray_lab import util

PLATFORM_GROUP = {"nvke-gb200": "nvke_gb200", "rke2-vr200": "rke2_vr200"}

LAB_VARS = {
    "gpu_tray_lab": True,
    "gpu_tray_sysfs_root": "/var/lib/gpu-tray-lab/sys",
    "gpu_tray_proc_root": "/proc",
    "gpu_tray_boot_time_command": "cat /run/gpu-tray-lab/boot_id",
    # /proc/sys is read-only in a tray (a container shares the host kernel): roles write sysctl.d files but
    # do not set the values live (kernel_tuning_sysctl_apply)
    "gpu_tray_sysctl_apply": False,
    # a lab tray boots in seconds: a tray that does not come back is reported after 3 minutes, not the
    # bare-metal 30 (rolling_reboot_timeout; the reboot module applies it to going down and to coming back)
    "gpu_tray_reboot_timeout": 180,
    # and it answers again 2-3 s after the reboot was sent: the bare-metal 10 s wait before the first look at a
    # rebooting tray (counted from the send; the new boot id, not this wait, proves the reboot) is 2 s here
    "gpu_tray_post_reboot_delay": 2,
    # a lab tray has a BMC only after `lab/lab bmc up` (it writes gpu_tray_bmc_* into host_vars/): without one the
    # lab prepares its trays as a site that opted out does
    "gpu_tray_bmc_required": False,
    # the lab's own variables share the collection's prefix: the preflight refuses unknown gpu_tray_* names
    "gpu_tray_site_variables": ["gpu_tray_lab", "gpu_tray_lab_faults", "gpu_tray_lab_index"],
}


def _scalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    return json.dumps(str(v))          # a JSON string is a valid double-quoted YAML scalar


def to_yaml(obj, indent=0):
    pad = " " * indent
    lines = []
    if isinstance(obj, dict):
        if not obj:
            return [pad + "{}"]
        for k, v in obj.items():
            if isinstance(v, (dict, list)) and v:
                lines.append("%s%s:" % (pad, k))
                lines += to_yaml(v, indent + 2)
            elif isinstance(v, dict):
                lines.append("%s%s: {}" % (pad, k))
            elif isinstance(v, list):
                lines.append("%s%s: []" % (pad, k))
            else:
                lines.append("%s%s: %s" % (pad, k, _scalar(v)))
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, (dict, list)) and v:
                sub = to_yaml(v, indent + 2)
                lines.append("%s- %s" % (pad, sub[0].lstrip()))
                lines += sub[1:]
            else:
                lines.append("%s- %s" % (pad, _scalar(v) if not isinstance(v, (dict, list)) else "{}"))
    else:
        lines.append(pad + _scalar(obj))
    return lines


def inventory_dir():
    return util.state_dir() / "inventory"


def hosts_file():
    return inventory_dir() / "hosts.yml"


def ssh_config_file():
    return util.state_dir() / "ssh" / "config"


def key_file():
    return util.state_dir() / "ssh" / "id_ed25519"


def ensure_ssh_key():
    key = key_file()
    key.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(key.parent, 0o700)
    if not key.exists():
        util.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpu-tray-lab", "-f", str(key)],
                 capture=True)
    return key.with_name(key.name + ".pub").read_text()


def write(platform, trays, tray_faults, host_vars=None):
    """trays: list of indexes; tray_faults: {index: set of faults}; host_vars: {index: dict} (fault vars)."""
    if platform not in PLATFORM_GROUP:
        raise util.LabError("unknown platform %r" % platform)
    inv = inventory_dir()
    inv.mkdir(parents=True, exist_ok=True)
    common_args = "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
    group_vars = {
        "ansible_user": "root",
        "ansible_ssh_private_key_file": str(key_file()),
        # lab only: tray host keys are regenerated on every `lab up`
        "ansible_ssh_common_args": common_args,
        "ansible_python_interpreter": "/usr/bin/python3",
    }
    hosts = {}
    for i in trays:
        # host level: a platform group_vars file (a more specific group than gpu_trays) that ever sets
        # gpu_tray_sysfs_root would otherwise silently send the lab's code to the real /sys
        hv = dict(LAB_VARS)
        hv.update({
            "ansible_host": util.tray_addr(i),
            "gpu_tray_lab_index": i,
            "gpu_tray_lab_faults": sorted(tray_faults.get(i, ())),
        })
        hv.update(rail_pci_addresses(platform))
        hv.update((host_vars or {}).get(i, {}))
        hosts[util.tray_name(i)] = hv
    # the platform group is a child of gpu_trays: each tray is listed once
    doc = {"all": {"children": {
        "gpu_trays": {"children": {PLATFORM_GROUP[platform]: {"hosts": hosts}}, "vars": group_vars},
    }}}
    header = ("# Generated by `lab/lab up --platform %s --trays %d` - do not edit; re-generated on every up.\n"
              "# Platform group_vars: group_vars/ -> %s\n---\n"
              % (platform, len(trays), platform_group_vars(platform)))
    tmp = hosts_file().with_name("hosts.yml.tmp")
    tmp.write_text(header + "\n".join(to_yaml(doc)) + "\n")
    os.replace(tmp, hosts_file())
    link = inv / "group_vars"
    target = platform_group_vars(platform)
    if link.is_symlink() or link.exists():
        if not link.is_symlink() or os.readlink(link) != str(target):
            link.unlink()
    if not link.is_symlink():
        os.symlink(str(target), str(link))
    write_ssh_config(trays)
    return hosts_file()


def rail_pci_addresses(platform):
    """The site fact gpu_tray_rail_pci_addresses of the lab's tray model (its rails' PF addresses), for a platform
    whose recipes create SR-IOV networks (the stack refuses to plan them without it)."""
    from gpu_tray_lab import platforms
    spec = platforms.PLATFORMS[platform]
    if not spec.get('sriov_num_vfs'):
        return {}
    return {"gpu_tray_rail_pci_addresses": dict((h['name'], h['bdf']) for h in spec['hcas']
                                                if h.get('rail') is not None)}


def platform_group_vars(platform):
    return util.REPO_DIR / "inventories" / platform / "group_vars"


def write_ssh_config(trays):
    lines = ["# Generated by lab/lab - lab only (host keys change on every lab up)"]
    for i in trays:
        lines += [
            "Host %s %s" % (util.tray_name(i), util.tray_addr(i)),
            "  HostName %s" % util.tray_addr(i),
            "  User root",
            "  IdentityFile %s" % key_file(),
            "  IdentitiesOnly yes",
            "  StrictHostKeyChecking no",
            "  UserKnownHostsFile /dev/null",
            "  LogLevel ERROR",
            "  BatchMode yes",
            "  ConnectTimeout 5",
            "",
        ]
    ssh_config_file().write_text("\n".join(lines))
