# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build and cache the tray root file system.

Two cache levels, both under ${GPU_TRAY_CACHE:-/var/cache/gpu-tray-cluster}:

* ``rootfs-base-<key>``: the debootstrap result. Key = suite + variant + package list + BASE_RECIPE.
  This is the slow part (about a minute) and does not change when the lab's tray files change.
* ``rootfs-<key>``: a copy of the base plus ``gpu_tray_lab.fixtures.prepare_rootfs()`` (tool doubles,
  boot-time units, grub-probe diversion). Key = base key + every file of lab/trayfs/**, fixtures.py,
  platforms.py + PREP_RECIPE.

Each level is built in a temporary directory next to its final place and renamed when complete, so a
half-built tree is never used; a lock file serialises concurrent builders.
"""

import fcntl
import hashlib
import os
import pathlib
import shutil
import time

from gpu_tray_lab import trays, util

SUITE = "bookworm"
VARIANT = "minbase"
PACKAGES = (
    "systemd", "systemd-sysv", "dbus", "openssh-server", "python3", "kmod", "iproute2", "procps",
    "grub2-common", "rdma-core",
)
# Bump when the post-debootstrap steps of build_base() change.
BASE_RECIPE = "base-1"
# Bump when the steps of build_prepared() (outside fixtures.prepare_rootfs) change.
PREP_RECIPE = "prep-1"

SSHD_DROPIN = """\
# gpu-tray-lab: host keys are generated per tray by the lab (never shared through the cached rootfs)
HostKey /etc/ssh/ssh_host_ed25519_key
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UseDNS no
"""


def _sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def base_key():
    return _sha(SUITE, VARIANT, ",".join(sorted(PACKAGES)), BASE_RECIPE)


def lab_input_files():
    """Files of the lab that end up in the prepared rootfs (cache-key inputs)."""
    files = []
    trayfs = util.LAB_DIR / "trayfs"
    if trayfs.is_dir():
        files += sorted(p for p in trayfs.rglob("*") if p.is_file() or p.is_symlink())
    for name in ("fixtures.py", "platforms.py"):
        p = util.LAB_DIR / "gpu_tray_lab" / name
        if p.exists():
            files.append(p)
    return files


def prepared_key():
    parts = [base_key(), PREP_RECIPE]
    for p in lab_input_files():
        rel = p.relative_to(util.LAB_DIR).as_posix()
        if p.is_symlink():
            data = b"symlink:" + os.readlink(p).encode()
        else:
            data = p.read_bytes() + (b"x" if os.access(p, os.X_OK) else b"-")
        parts += [rel, data]
    return _sha(*parts)


def base_path():
    return util.cache_dir() / ("rootfs-base-%s" % base_key())


def prepared_path():
    return util.cache_dir() / ("rootfs-%s" % prepared_key())


def mirror():
    """First URIs: entry of the system's deb822 sources (the mirror this machine is allowed to use)."""
    src = pathlib.Path("/etc/apt/sources.list.d/debian.sources")
    for line in util.read_text(src).splitlines():
        if line.startswith("URIs:"):
            return line.split()[1]
    for line in util.read_text("/etc/apt/sources.list").splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == "deb":
            return f[1]
    return "http://deb.debian.org/debian"


class _Lock:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            util.log("waiting for another rootfs build (lock %s)" % self.path)
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


def _tmp_for(final):
    return final.with_name(final.name + ".tmp-%d" % os.getpid())


def _remove_stale_tmps(final):
    """Remove half-built trees of builders that died. A killed debootstrap can leave proc, sys, dev/pts
    mounted inside its tree: unmount them (deepest first), then delete without crossing into any mount."""
    for p in final.parent.glob(final.name + ".tmp-*"):
        pid = p.name.rsplit("-", 1)[-1]
        if pid.isdigit() and util.pid_alive(int(pid)):
            continue
        for mp in sorted(trays.mounts_under(p), key=len, reverse=True):
            util.log("unmounting %s left by a killed rootfs build" % mp)
            if util.run(["umount", mp], check=False, capture=True).returncode != 0:
                util.run(["umount", "-l", mp], check=False, capture=True)
        left = trays.mounts_under(p)
        if left:
            raise util.LabError("cannot remove the stale rootfs build %s: still mounted: %s" % (p, ", ".join(left)))
        util.run(["rm", "-rf", "--one-file-system", str(p)])


def build_base(timings):
    final = base_path()
    if final.is_dir():
        return final
    with _Lock(util.cache_dir() / "rootfs.lock"):
        if final.is_dir():
            return final
        _remove_stale_tmps(final)
        tmp = _tmp_for(final)
        logf = util.cache_dir() / ("rootfs-base-%s.log" % base_key())
        util.log("building base rootfs %s with debootstrap (about a minute; log: %s)" % (final.name, logf))
        t0 = time.monotonic()
        with open(logf, "w") as fh:
            util.run(["debootstrap", "--variant=" + VARIANT, "--include=" + ",".join(PACKAGES),
                      SUITE, str(tmp), mirror()], stdout=fh, stderr=fh)
        for sub in ("var/cache/apt/archives", "var/lib/apt/lists"):
            d = tmp / sub
            for p in d.glob("*"):
                if p.is_file():
                    p.unlink()
        # host keys from openssh-server's postinst would be shared by every tray: drop them
        for p in (tmp / "etc/ssh").glob("ssh_host_*"):
            p.unlink()
        (tmp / "etc/ssh/sshd_config.d").mkdir(parents=True, exist_ok=True)
        (tmp / "etc/ssh/sshd_config.d/gpu-tray-lab.conf").write_text(SSHD_DROPIN)
        # every tray gets its own machine-id (written by the lab into the overlay)
        (tmp / "etc/machine-id").write_text("")
        (tmp / "var/lib/dbus/machine-id").unlink(missing_ok=True)
        (tmp / ".gpu-tray-lab-base").write_text("key=%s\npackages=%s\nsuite=%s\n" % (base_key(), ",".join(PACKAGES), SUITE))
        os.rename(tmp, final)
        timings["rootfs_base_s"] = round(time.monotonic() - t0, 1)
        util.log("base rootfs built in %.1f s" % timings["rootfs_base_s"])
    return final


def _fixtures():
    from gpu_tray_lab import fixtures
    return fixtures


def build_prepared(timings):
    final = prepared_path()
    if final.is_dir():
        return final
    base = build_base(timings)
    with _Lock(util.cache_dir() / "rootfs.lock"):
        if final.is_dir():
            return final
        _remove_stale_tmps(final)
        tmp = _tmp_for(final)
        t0 = time.monotonic()
        util.log("preparing rootfs %s from %s" % (final.name, base.name))
        util.run(["cp", "-a", "--reflink=auto", str(base), str(tmp)])
        _fixtures().prepare_rootfs(tmp)
        (tmp / ".gpu-tray-lab-rootfs").write_text("key=%s\nbase=%s\n" % (prepared_key(), base.name))
        os.rename(tmp, final)
        timings["rootfs_prepare_s"] = round(time.monotonic() - t0, 1)
        util.log("rootfs prepared in %.1f s" % timings["rootfs_prepare_s"])
    return final


def ensure(timings=None):
    """Return the path of the prepared rootfs for the current lab sources, building what is missing."""
    return build_prepared(timings if timings is not None else {})


def lowerdirs_in_use():
    """Cached trees that a mounted overlay (any lab tray on this machine) uses as lowerdir."""
    used = set()
    for line in util.read_text("/proc/self/mountinfo").splitlines():
        _left, _, right = line.partition(" - ")
        f = right.split()
        if len(f) >= 3 and f[0] == "overlay":
            for opt in f[2].split(","):
                if opt.startswith("lowerdir="):
                    used.update(pathlib.Path(d).name for d in opt[len("lowerdir="):].split(":"))
    return used


def prune(in_use=(), bases=False):
    """Remove cached rootfs trees that are neither current nor in use (lowerdir of a mounted overlay).

    Prepared trees (about 250 MB each; every change of lab/trayfs makes a new one) are pruned; base trees
    (the slow debootstrap) only when bases=True.
    """
    keep = {base_path().name, prepared_path().name} | {pathlib.Path(p).name for p in in_use}
    keep |= lowerdirs_in_use()
    removed = []
    with _Lock(util.cache_dir() / "rootfs.lock"):
        for p in sorted(util.cache_dir().glob("rootfs-*")):
            if not p.is_dir() or ".tmp-" in p.name or p.name in keep:
                continue
            if p.name.startswith("rootfs-base-") and not bases:
                continue
            shutil.rmtree(p)
            removed.append(p.name)
    return removed
