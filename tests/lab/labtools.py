"""Helpers for the rehearsal-lab tests (tests/lab): they boot real lab trays, so they run as root.

Every module that needs trays gets them from `lab_up()`, which runs `lab/lab reset` (replacing whatever lab is
up: the lab is one per machine); `lab/lab down` at the end. Ansible runs from the repo root with the repo's
ansible.cfg and the venv's ansible, exactly as a user runs it.

(A module with a unique name, not conftest.py: several test layers run in one pytest session and each has a
conftest.py, so `from conftest import ...` would pick whichever was imported first.)
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import time

from ansible_env import checkout_env

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAB = ROOT / "lab" / "lab"
BIN = pathlib.Path(sys.executable).parent          # the venv's bin (pytest runs from .venv/bin/pytest)
STATE = pathlib.Path(os.environ.get("GPU_TRAY_LAB_STATE", "/var/tmp/gpu-tray-lab"))


def ansible_env():
    return checkout_env(ROOT, bin_path=str(BIN), force_color_off=True, ANSIBLE_DEPRECATION_WARNINGS="0")


def lab(*args, check=True):
    proc = subprocess.run([str(LAB)] + [str(a) for a in args], cwd=ROOT, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, "lab %s failed (rc %d):\n%s\n%s" % (
            " ".join(map(str, args)), proc.returncode, proc.stdout, proc.stderr)
    return proc


def lab_status():
    return json.loads(lab("status", "--json").stdout)


def tray_status(name):
    return next(t for t in lab_status()["trays"] if t["name"] == name)


def ansible_json(inventory, pattern, module, args=None, extra=()):
    """Run an ad-hoc module with the json callback; return {host: result}."""
    env = ansible_env()
    env.update(ANSIBLE_LOAD_CALLBACK_PLUGINS="1", ANSIBLE_STDOUT_CALLBACK="ansible.posix.json")
    argv = [str(BIN / "ansible"), "-i", str(inventory), pattern, "-m", module]
    if args:
        argv += ["-a", args]
    proc = subprocess.run(argv + list(extra), cwd=ROOT, env=env, capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("ansible %s: no JSON output (rc %d):\n%s\n%s"
                             % (module, proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc.returncode, data["plays"][0]["tasks"][0]["hosts"]


def playbook(inventory, path, limit=None, extra_vars=None):
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(path)]
    if limit:
        argv += ["--limit", limit]
    if extra_vars:
        argv += ["-e", json.dumps(extra_vars)]
    return subprocess.run(argv, cwd=ROOT, env=ansible_env(), capture_output=True, text=True)


def recap(stdout):
    """{host: {"ok": n, "changed": n, ...}} from the PLAY RECAP of a playbook run."""
    out = {}
    for line in stdout.split("PLAY RECAP", 1)[1].splitlines():
        match = re.match(r"^(\S+)\s+:\s+(.*)$", line.strip())
        if match:
            out[match.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(2))}
    return out


def ssh(tray, command):
    """Run a command in a tray over real SSH (the lab's ssh_config); return stdout, assert rc 0."""
    proc = subprocess.run(["ssh", "-F", str(STATE / "ssh" / "config"), tray, command],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, "%s: `%s` failed (rc %d): %s" % (tray, command, proc.returncode, proc.stderr)
    return proc.stdout


def lab_up(*args):
    """Fresh lab for one test module: reset replaces any lab that is up."""
    lab("reset", *args)
    return pathlib.Path(lab("inventory").stdout.strip())


def ssh_rc(tray, command):
    """Run a command in a tray over SSH; return (rc, stdout, stderr) without asserting."""
    proc = subprocess.run(["ssh", "-F", str(STATE / "ssh" / "config"), tray, command],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def reboot_tray(tray, timeout=90):
    """`systemctl reboot` in the tray over SSH and wait until it answers with a new boot id (the way
    ansible.builtin.reboot's boot_time_command does it, without the Ansible start-up cost)."""
    before = ssh(tray, "cat /run/gpu-tray-lab/boot_id").strip()
    ssh_rc(tray, "systemctl reboot")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rc, out, _err = ssh_rc(tray, "cat /run/gpu-tray-lab/boot_id && systemctl is-system-running --wait")
        lines = out.split()
        if rc in (0, 1) and lines and lines[0] != before and lines[-1] in ("running", "degraded"):
            return lines[0]
        time.sleep(0.3)
    raise AssertionError("%s did not come back from reboot within %d s" % (tray, timeout))
