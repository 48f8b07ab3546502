# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one host setting the lab changes: fs.inotify.max_user_instances.

Every tray's processes run as the host's root in the host's user namespace, so their inotify instances all count
against root's limit. A booted tray holds about 15 (systemd 12, logind, dbus, agetty) and more while it boots;
Debian's default of 128 runs out at about 8 trays, and the next tray's units fail with "Too many open files"
(gpu-tray-lab-sriov.path first), leaving it `degraded`. `lab up` raises the limit to what N trays need when it is
lower, records the old value in the state dir, and `lab down` puts it back (unless someone changed it meanwhile).
Inotify watches (fs.inotify.max_user_watches, about 100 per tray) stay far below the default and are not touched.
"""

import pathlib

from gpu_tray_lab import util

INOTIFY_INSTANCES = pathlib.Path("/proc/sys/fs/inotify/max_user_instances")
HOST_SHARE = 128        # left for the host's own users of inotify
PER_TRAY = 40           # measured 15 per booted tray; headroom for boots, SSH logins and units started later


def record_file():
    return util.state_dir() / "host-limits.json"


def needed(trays):
    return HOST_SHARE + PER_TRAY * trays


def _read(path):
    return int(path.read_text().split()[0])


def ensure(trays, path=INOTIFY_INSTANCES):
    """Raise the limit for `trays` trays if needed; returns a line for the log, or None when nothing changed."""
    current = _read(path)
    want = needed(trays)
    if current >= want:
        return None
    record = util.read_json(record_file()) or {}
    record.setdefault("fs.inotify.max_user_instances", {"was": current})
    try:
        path.write_text("%d\n" % want)
    except OSError as exc:
        return ("warning: cannot raise fs.inotify.max_user_instances from %d to %d (%s): trays beyond about %d may "
                "come up degraded with 'Too many open files'; raise it as root with `sysctl -w "
                "fs.inotify.max_user_instances=%d`" % (current, want, exc, current // 16, want))
    record["fs.inotify.max_user_instances"]["set"] = want
    util.write_json(record_file(), record)
    return ("host: fs.inotify.max_user_instances %d -> %d for %d trays (`lab down` restores %d)"
            % (current, want, trays, record["fs.inotify.max_user_instances"]["was"]))


def restore(path=INOTIFY_INSTANCES):
    """Put back what `ensure` changed; returns a line for the log, or None when nothing was changed."""
    record = (util.read_json(record_file()) or {}).get("fs.inotify.max_user_instances")
    if not record or "set" not in record:
        return None
    current = _read(path)
    if current != record["set"]:
        return ("host: fs.inotify.max_user_instances is %d, not the %d the lab set: left as it is"
                % (current, record["set"]))
    path.write_text("%d\n" % record["was"])
    record_file().unlink()
    return "host: fs.inotify.max_user_instances restored to %d" % record["was"]
