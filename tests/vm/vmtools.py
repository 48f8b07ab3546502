"""Helpers for the VM lab suite (tests/vm): real Debian VMs under qemu as trays (lab/vm/vmlab).

Ansible runs from the repo root with the repo's ansible.cfg and the venv's ansible, as a user runs it; the
VM inventory (written by `vmlab up`) sets ssh timeout 10 and pipelining.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "lab"))
from labtools import ansible_env as _lab_ansible_env  # noqa: E402  (tests/lab is not a package)
VMLAB = ROOT / "lab" / "vm" / "vmlab"
BIN = pathlib.Path(sys.executable).parent          # the venv's bin (pytest runs from .venv/bin/pytest)
STATE = pathlib.Path(os.environ.get("GPU_TRAY_VM_STATE", "/var/tmp/gpu-tray-vmlab"))

# Printed at the end of the session (conftest.py): phase -> seconds, plus notes
TIMINGS = {}
NOTES = []


def ansible_env():
    """The lab suite's Ansible environment (tests/lab/labtools.py), with one fork per VM and an ssh timeout of
    10 s that keeps reboot polling quick (slirp accepts TCP while the guest is down)."""
    env = _lab_ansible_env()
    env.update(ANSIBLE_FORKS="2", ANSIBLE_TIMEOUT="10")
    return env


def vmlab(*args, check=True):
    proc = subprocess.run([str(VMLAB)] + [str(a) for a in args], cwd=ROOT, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, "vmlab %s failed (rc %d):\n%s\n%s" % (
            " ".join(map(str, args)), proc.returncode, proc.stdout, proc.stderr)
    return proc


def status():
    return json.loads(vmlab("status", "--json").stdout)


def ssh(tray, command, check=True):
    proc = subprocess.run([str(VMLAB), "ssh", tray, command], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    if check:
        assert proc.returncode == 0, "%s: `%s` failed (rc %d): %s" % (tray, command, proc.returncode, proc.stderr)
    return proc.stdout


def playbook(inventory, path, log, extra_vars=None, options=()):
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(ROOT / path)] + list(options)
    for value in extra_vars or ():
        argv += ["-e", value if isinstance(value, str) else json.dumps(value)]
    start = time.time()
    proc = subprocess.run(argv, cwd=ROOT, env=ansible_env(), capture_output=True, text=True)
    elapsed = time.time() - start
    log.write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
    return proc, elapsed


def recap(stdout):
    """{host: {"ok": n, "changed": n, ...}} from the PLAY RECAP of a playbook run."""
    out = {}
    if "PLAY RECAP" not in stdout:
        return out
    for line in stdout.split("PLAY RECAP", 1)[1].splitlines():
        match = re.match(r"^(\S+)\s+:\s+(.*)$", line.strip())
        if match:
            out[match.group(1)] = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", match.group(2)))
    return out


def changed_tasks(stdout):
    """Names of the tasks that reported a change for some host ("TASK [name]" followed by "changed: [...]")."""
    out, task = [], None
    for line in stdout.splitlines():
        match = re.match(r"^TASK \[(.*)\]", line)
        if match:
            task = match.group(1)
        elif line.startswith("changed: [") and task and task not in out:
            out.append(task)
    return out


def boots(tray):
    """The VM's boot record (/var/log/gpu-tray-vm/boots.log): [(event, boot_id, btime, at)]."""
    rows = []
    for line in ssh(tray, "cat /var/log/gpu-tray-vm/boots.log").splitlines():
        event, boot_id, btime, at = line.split()
        rows.append((event, boot_id, None if btime == "-" else int(btime), float(at)))
    return rows


def reboot_window(tray, records, boot_id):
    """(down, up) of the one reboot in a VM's boot record, or an AssertionError saying what is wrong: exactly
    one reboot, the old boot's shutdown before the new kernel's boot time, that no later than 'up', and the new
    boot is the running one (boot_id)."""
    ups = [r for r in records if r[0] == "up"]
    downs = [r for r in records if r[0] == "down"]
    assert len(ups) == 2 and len(downs) == 1, "%s: expected one reboot, boot record %s" % (tray, records)
    assert downs[0][1] == ups[0][1] and ups[1][1] == boot_id, "%s: boot ids do not chain: %s" % (tray, records)
    down, up = downs[0][3], ups[1][3]
    assert down < ups[1][2] <= up, "%s: kernel boot time outside its reboot window %s" % (tray, records)
    return down, up


def overlapping(windows):
    """Pairs of trays whose reboot windows {tray: (down, up)} overlap, with the order they went down in."""
    ordered = sorted(windows.items(), key=lambda item: item[1][0])
    out = []
    for i, (first, (_down1, up1)) in enumerate(ordered):
        for second, (down2, _up2) in ordered[i + 1:]:
            if down2 <= up1:
                out.append((first, second))
    return out


def snapshot(tray):
    """What the tests compare before and after: all read from the real kernel/systemd of the VM."""
    script = r"""
echo "boot_id=$(cat /proc/sys/kernel/random/boot_id)"
echo "cmdline=$(cat /proc/cmdline)"
echo "netns_mode=$(cat /sys/module/ib_core/parameters/netns_mode 2>/dev/null || echo absent)"
echo "rdma_system=$(rdma system show 2>&1 | tr '\n' ' ')"
echo "modules=$(cut -d' ' -f1 /proc/modules | sort | tr '\n' ' ')"
echo "numa_balancing=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null || echo absent)"
echo "hugepages_2m=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)"
echo "rmem_max=$(cat /proc/sys/net/core/rmem_max)"
echo "imex_enabled=$(systemctl is-enabled nvidia-imex.service 2>&1 | tr '\n' ' ')"
echo "imex_active=$(systemctl is-active nvidia-imex.service 2>&1 | tr '\n' ' ')"
echo "rke2_stack=$(awk '/^Max stack size/ {print $4}' /proc/$(systemctl show -p MainPID --value rke2-agent.service)/limits)"
echo "modules_loaded_journal=$(journalctl -b -o cat -u systemd-modules-load.service | grep -o "Inserted module '[a-z_0-9]*'" | tr '\n' ' ')"
echo "refused=$(grep -c REFUSED /var/log/gpu-tray-lab/calls.log 2>/dev/null || echo 0)"
"""
    out = {}
    for line in ssh(tray, script).splitlines():
        key, _, value = line.partition("=")
        out[key] = value.strip()
    out["modules"] = out["modules"].split()
    out["boots"] = boots(tray)
    for rel in ("/etc/modules-load.d/gpu-tray-rdma.conf", "/etc/modprobe.d/gpu-tray-ib-core-netns.conf",
                "/etc/default/grub.d/99-gpu-tray-kernel-tuning.cfg",
                "/etc/systemd/system/rke2-agent.service.d/90-gpu-tray-limitstack.conf"):
        out[rel] = ssh(tray, "cat %s 2>/dev/null || true" % rel)
    return out
