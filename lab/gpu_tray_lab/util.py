# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared paths and small helpers of the lab (stdlib only)."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

LAB_DIR = pathlib.Path(__file__).resolve().parent.parent          # <repo>/lab
REPO_DIR = LAB_DIR.parent                                          # <repo>


def state_dir():
    return pathlib.Path(os.environ.get("GPU_TRAY_LAB_STATE", "/var/tmp/gpu-tray-lab"))


def cache_dir():
    return pathlib.Path(os.environ.get("GPU_TRAY_CACHE", "/var/cache/gpu-tray-cluster"))


# Naming of everything the lab creates on the host. Index N is 1-based.
NETNS_PREFIX = "gtl-tray"


def tray_name(index):
    return "tray%02d" % index


def machine_name(index):
    # systemd-nspawn machine name; distinct from the hostname so that our processes are easy to tell apart
    return "gtl-tray%02d" % index


def netns_name(index):
    return "%s%02d" % (NETNS_PREFIX, index)


def host_veth(index):
    return "gtl%02d-h" % index      # <= 15 characters (IFNAMSIZ)


def host_addr(index):
    return "198.18.%d.1" % index


def tray_addr(index):
    return "198.18.%d.2" % index


MAX_TRAYS = 64


class LabError(Exception):
    """An error the CLI reports as one line (plus hint) without a traceback."""


def log(msg):
    print("lab: %s" % msg, file=sys.stderr, flush=True)


def run(argv, check=True, capture=False, **kw):
    """Run argv (a list, never a shell string)."""
    if capture:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("text", True)
    proc = subprocess.run(argv, **kw)
    if check and proc.returncode != 0:
        err = (proc.stderr or "").strip() if capture else ""
        raise LabError("command failed (rc %d): %s%s" % (proc.returncode, " ".join(map(str, argv)), (": " + err) if err else ""))
    return proc


def require_root():
    if os.geteuid() != 0:
        raise LabError("the lab needs root (mounts, network namespaces, systemd-nspawn); run it with sudo")


APT_TOOLS = {
    "systemd-nspawn": "systemd-container",
    "debootstrap": "debootstrap",
    "ssh": "openssh-client",
    "ssh-keygen": "openssh-client",
    "ip": "iproute2",
}


def missing_packages():
    return sorted({pkg for tool, pkg in APT_TOOLS.items() if shutil.which(tool) is None})


def ensure_deps(install=True):
    missing = missing_packages()
    if not missing:
        return []
    if not install:
        raise LabError("missing host packages: %s (run `lab/lab deps` or apt-get install -y %s)"
                       % (" ".join(missing), " ".join(missing)))
    log("installing host packages: %s" % " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = run(["apt-get", "install", "-y", "--no-install-recommends"] + missing, check=False, env=env)
    if proc.returncode != 0:
        run(["apt-get", "update"], env=env)
        run(["apt-get", "install", "-y", "--no-install-recommends"] + missing, env=env)
    return missing


def read_json(path, default=None):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return default


def write_json(path, data):
    path = pathlib.Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh, indent=2, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


def read_text(path, default=""):
    try:
        return pathlib.Path(path).read_text()
    except OSError:
        return default


def pid_alive(pid):
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not alive for our purposes
    stat = read_text("/proc/%d/stat" % pid)
    if stat:
        state = stat.rsplit(")", 1)[-1].split()[0:1]
        if state == ["Z"]:
            return False
    return True


def pid_cmdline(pid):
    raw = read_text("/proc/%d/cmdline" % pid) if pid else ""
    return [a for a in raw.split("\0") if a]


def read_pid(path):
    txt = read_text(path).strip()
    return int(txt) if txt.isdigit() else None


def wait_for(pred, timeout, interval=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(interval)
    return pred()
