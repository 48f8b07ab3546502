# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-tray supervisor: boots the tray with systemd-nspawn and emulates reboots.

Started by the CLI as ``python3 supervisor.py <tray state dir>`` in its own session (setsid). Reads
``tray.json`` from the state dir and loops:

* nspawn exits 133  -> the guest ran ``systemctl reboot``: boot it again (boot count + 1),
  unless the tray carries the ``no-return-from-reboot`` fault (then it stays down and says why);
* any other exit     -> the tray is powered off; the supervisor ends;
* the tray's boot unit found nothing GRUB could boot (it writes the reason to
  <root>/var/lib/gpu-tray-lab/unbootable and powers off) -> state ``down (unbootable: <reason>)``;
* SIGTERM/SIGINT     -> forwarded to nspawn (which powers the guest off cleanly), then the supervisor ends.

Files in the state dir: supervisor.pid, nspawn.pid (while nspawn runs), boot_count, state (one line),
supervisor.log (nspawn's output + the supervisor's own lines).
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from gpu_tray_lab import cgroups  # noqa: E402

REBOOT_RC = 133
UNBOOTABLE = "var/lib/gpu-tray-lab/unbootable"     # written by the tray's boot unit (traylab.record_unbootable)
# a tray that reboots more often than this is in a reboot loop: stop it instead of burning CPU
LOOP_WINDOW_S, LOOP_MAX = 60, 15


def _write(path, text):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def nspawn_argv(cfg):
    argv = [
        "systemd-nspawn", "-q", "-D", cfg["root"], "-b",
        "--register=no", "--keep-unit",
        "-M", cfg["machine"], "--hostname=" + cfg["hostname"],
        "--network-namespace-path=/run/netns/" + cfg["netns"],
        "--console=passive",
    ]
    return argv


def main(state):
    state = pathlib.Path(state)
    cfg = json.loads((state / "tray.json").read_text())
    logf = open(state / "supervisor.log", "a", buffering=1)

    def log(msg):
        now = time.time()
        logf.write("%s.%03d supervisor[%d] %s: %s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(now)),
                                                         int(now * 1000) % 1000, os.getpid(), cfg["hostname"], msg))

    # own cgroup per tray (see cgroups.py: trays sharing one cgroup race on their units' cgroups)
    cgroups.record(state, cgroups.join_tray_cgroup(cfg["hostname"], log))
    _write(state / "supervisor.pid", "%d\n" % os.getpid())
    child = None
    stopping = False

    def on_signal(signum, _frame):
        nonlocal stopping
        stopping = True
        log("got signal %d, powering the tray off" % signum)
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

    boots = []
    rc = 0
    try:
        while not stopping:
            count = int((state / "boot_count").read_text().strip() or 0) if (state / "boot_count").exists() else 0
            count += 1
            _write(state / "boot_count", "%d\n" % count)
            unbootable = pathlib.Path(cfg["root"]) / UNBOOTABLE
            try:
                unbootable.unlink()                      # a stale reason from an earlier boot
            except FileNotFoundError:
                pass
            except OSError as exc:
                log("cannot remove %s: %s" % (unbootable, exc))
            _write(state / "state", "booting (boot %d)\n" % count)
            argv = nspawn_argv(cfg)
            log("boot %d: %s" % (count, " ".join(argv)))
            boots.append(time.monotonic())
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=logf,
                                     close_fds=True)
            _write(state / "nspawn.pid", "%d\n" % child.pid)
            _write(state / "state", "running (boot %d)\n" % count)
            rc = child.wait()
            (state / "nspawn.pid").unlink(missing_ok=True)
            log("systemd-nspawn exited with code %d" % rc)
            if stopping:
                _write(state / "state", "stopped (lab down)\n")
                break
            reason = unbootable.read_text().strip() if unbootable.is_file() else ""
            if reason:
                log("the tray did not boot: %s; it stays down (`lab/lab reset` gives a fresh tray)" % reason)
                _write(state / "state", "down (unbootable: %s)\n" % reason)
                break
            if rc != REBOOT_RC:
                _write(state / "state", "stopped (powered off, nspawn rc %d)\n" % rc)
                break
            if "no-return-from-reboot" in cfg.get("faults", []):
                log("fault no-return-from-reboot: the tray asked for a reboot and does not come back "
                    "(like a tray hanging in firmware/BIOS); `lab/lab reset` or down+up revives it")
                _write(state / "state", "down (fault no-return-from-reboot: did not come back from reboot)\n")
                break
            recent = [t for t in boots if t > time.monotonic() - LOOP_WINDOW_S]
            if len(recent) >= LOOP_MAX:
                log("reboot loop: %d boots within %d s, giving up" % (len(recent), LOOP_WINDOW_S))
                _write(state / "state", "stopped (reboot loop)\n")
                break
            log("reboot requested (exit %d): booting again" % REBOOT_RC)
    finally:
        (state / "supervisor.pid").unlink(missing_ok=True)
        log("supervisor exits")
    return 0 if rc in (0, REBOOT_RC) else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
