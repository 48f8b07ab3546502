# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One cgroup per tray.

The host's PID 1 is not systemd, so `systemd-nspawn --keep-unit` leaves the container in the cgroup of its
caller. Without this module every tray would run in the same cgroup, and the trays' systemds would share
(and race on) the same `/system.slice/<unit>` directories: one tray's systemd removes a unit's cgroup while
another attaches to it (seen as `status=219/CGROUP ... Failed to attach to cgroup
/system.slice/systemd-user-sessions.service: No such file or directory` with 8 trays booting at once).

The supervisor moves itself into `<its current cgroup>/gpu-tray-lab/<tray>` in every mounted hierarchy
(cgroup v1 controllers, name=systemd, the unified v2 tree) before it starts nspawn, and records the
directories in `<tray state>/cgroups.json`; `lab down` removes them bottom-up once the tray is stopped.
Creating children of the current cgroup keeps every limit the machine puts on us.
"""

import errno
import json
import os

LAB_CGROUP = "gpu-tray-lab"


def _unescape(s):
    return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def _mounts():
    """[(mountpoint, fstype, super options set)] of cgroup file systems."""
    out = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if len(rfields) >= 3 and rfields[0] in ("cgroup", "cgroup2"):
                out.append((_unescape(fields[4]), rfields[0], set(rfields[2].split(","))))
    return out


def hierarchies(pid="self"):
    """[(mountpoint, path of pid's cgroup in it, controllers)] for every mounted hierarchy."""
    mounts = _mounts()
    res = []
    with open("/proc/%s/cgroup" % pid) as fh:
        for line in fh:
            hid, ctrls, path = line.rstrip("\n").split(":", 2)
            if hid == "0" and not ctrls:
                mps = [m for m, fs, _o in mounts if fs == "cgroup2"]
            else:
                want = set(ctrls.split(","))
                mps = [m for m, fs, opts in mounts if fs == "cgroup" and want <= opts]
            if mps:
                res.append((mps[0], path, ctrls))
    return res


def _copy_cpuset(parent, child):
    for name in ("cpuset.cpus", "cpuset.mems"):
        src, dst = os.path.join(parent, name), os.path.join(child, name)
        if os.path.exists(src) and os.path.exists(dst):
            with open(dst) as fh:
                if fh.read().strip():
                    continue
            with open(src) as fh:
                val = fh.read().strip()
            with open(dst, "w") as fh:
                fh.write(val)


def join_tray_cgroup(tray, log):
    """Move the calling process into <current>/gpu-tray-lab/<tray> in every hierarchy; return the dirs."""
    created = []
    for mount, path, ctrls in hierarchies():
        base = os.path.join(mount, path.lstrip("/"))
        parts = [LAB_CGROUP, tray]
        cur = base
        try:
            for part in parts:
                nxt = os.path.join(cur, part)
                try:
                    os.mkdir(nxt)
                except FileExistsError:       # trays start in parallel: another one made the parent
                    pass
                if "cpuset" in ctrls.split(","):
                    _copy_cpuset(cur, nxt)
                cur = nxt
            with open(os.path.join(cur, "cgroup.procs"), "w") as fh:
                fh.write(str(os.getpid()))
            created.append(cur)
        except OSError as exc:
            if ctrls == "name=systemd":
                raise
            log("cgroup %s: cannot join %s (%s); the tray shares its parent's cgroup there" % (ctrls or "v2", cur, exc))
    return created


def record(state_dir, dirs):
    with open(os.path.join(str(state_dir), "cgroups.json"), "w") as fh:
        json.dump(sorted(dirs), fh)


def recorded(state_dir):
    try:
        with open(os.path.join(str(state_dir), "cgroups.json")) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return []


def pids_in(dirs):
    """PIDs of every process in the given cgroups and their children."""
    pids = set()
    for d in dirs:
        if LAB_CGROUP not in d.split(os.sep):
            continue
        for root, _dirs, files in os.walk(d):
            if "cgroup.procs" in files:
                try:
                    with open(os.path.join(root, "cgroup.procs")) as fh:
                        pids.update(int(x) for x in fh.read().split())
                except (OSError, ValueError):
                    pass
    pids.discard(os.getpid())
    return sorted(pids)


def remove_tree(path):
    """rmdir a cgroup and its children bottom-up. Returns the directories that could not be removed."""
    left = []
    if not os.path.isdir(path) or LAB_CGROUP not in path.split(os.sep):
        return left
    for root, dirs, _files in os.walk(path, topdown=False):
        for d in dirs:
            _rmdir(os.path.join(root, d), left)
    _rmdir(path, left)
    parent = os.path.dirname(path)
    if os.path.basename(parent) == LAB_CGROUP:
        try:
            os.rmdir(parent)            # only succeeds once the last tray's cgroup is gone
        except OSError:
            pass
    return left


def _rmdir(path, left):
    try:
        os.rmdir(path)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            left.append("%s (%s)" % (path, exc.strerror))
