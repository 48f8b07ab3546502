# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-tray supervisor: boots the tray with systemd-nspawn and emulates reboots.

Started by the CLI as ``python3 supervisor.py <tray state dir>`` in its own session (setsid). Reads
``tray.json`` from the state dir and loops:

* nspawn exits 133  -> the guest ran ``systemctl reboot``: boot it again (boot count + 1),
  unless the tray carries the ``no-return-from-reboot`` or ``stuck-in-post`` fault: then it hangs "in POST" -
  powered on, the OS never starts, state ``down (fault ...)`` - until its BMC resets it (SIGUSR1) or the lab
  stops it;
* any other exit     -> the tray is powered off; the supervisor ends;
* the tray's boot unit found nothing GRUB could boot (it writes the reason to
  <root>/var/lib/gpu-tray-lab/unbootable and powers off) -> state ``down (unbootable: <reason>)``;
* SIGUSR1            -> a reset through the tray's BMC (lab/gpu_tray_lab/bmc.py, Redfish ForceRestart): nspawn is
  stopped (the guest powers off) and the tray boots again - a cold boot, which a ``no-return-from-reboot`` tray
  survives; a ``stuck-in-post`` tray hangs again (it stays down whatever is done, until ``lab/lab reset``);
* SIGTERM/SIGINT     -> forwarded to nspawn (which powers the guest off cleanly), then the supervisor ends
  (``power_request`` ``off`` in the state dir: a power-off through the BMC, so the state says so).

Files in the state dir: supervisor.pid, nspawn.pid (while nspawn runs), boot_count, state (one line),
supervisor.log (nspawn's output + the supervisor's own lines), sel.jsonl (the events a BMC would keep in its System
Event Log: power on, warm reset, POST hang, resets and power-offs through the BMC; the lab's BMC serves them),
hung (while a stuck-in-post tray hangs: it hangs again on every power-on).
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
HANG_FAULTS = ("no-return-from-reboot", "stuck-in-post")
# the state line of a tray hanging in POST (the lab's BMC reports it powered on, BootProgress stuck)
HUNG_STATE = "down (fault %s: did not come back from reboot)"


def sel(state, severity, message):
    """Append one System Event Log entry (what the tray's BMC would record) to <state>/sel.jsonl."""
    path = pathlib.Path(state) / "sel.jsonl"
    try:
        count = sum(1 for _ in path.open()) if path.exists() else 0
    except OSError:
        count = 0
    entry = {"id": count + 1, "created": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
             "severity": severity, "message": message}
    with path.open("a") as handle:
        handle.write(json.dumps(entry) + "\n")


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
    reset = False
    hang_fault = next((f for f in HANG_FAULTS if f in cfg.get("faults", [])), None)

    def on_signal(signum, _frame):
        nonlocal stopping
        stopping = True
        log("got signal %d, powering the tray off" % signum)
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    def on_reset(_signum, _frame):
        nonlocal reset
        reset = True
        log("reset through the BMC: powering the tray off and booting it again")
        if child is not None and child.poll() is None:
            child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGUSR1, on_reset)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def hang(why):
        """Powered on, stuck in POST: wait for a reset through the BMC or the lab's stop. True = reset."""
        nonlocal reset
        (state / "hung").write_text(why + "\n")
        _write(state / "state", HUNG_STATE % hang_fault + "\n")
        sel(state, "Critical", "POST hang: PCIe resource configuration did not complete (%s)" % why)
        while not stopping and not reset:
            time.sleep(0.2)
        if reset:
            reset = False
            sel(state, "Warning", "Host reset through the BMC (ForceRestart) while hanging in POST")
            return True
        return False

    boots = []
    rc = 0
    sel(state, "OK", "Host power on")
    try:
        while not stopping:
            if hang_fault == "stuck-in-post" and (state / "hung").exists():
                log("fault stuck-in-post: the tray hangs in POST again (power-on or reset does not help; "
                    "`lab/lab reset` gives a fresh tray)")
                if hang("lab fault stuck-in-post, again after a power cycle"):
                    continue
                break
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
                break
            if reset:
                reset = False
                sel(state, "Warning", "Host reset through the BMC (ForceRestart)")
                continue
            reason = unbootable.read_text().strip() if unbootable.is_file() else ""
            if reason:
                log("the tray did not boot: %s; it stays down (`lab/lab reset` gives a fresh tray)" % reason)
                _write(state / "state", "down (unbootable: %s)\n" % reason)
                break
            if rc != REBOOT_RC:
                _write(state / "state", "stopped (powered off, nspawn rc %d)\n" % rc)
                break
            if hang_fault:
                sel(state, "OK", "Warm reset requested by the OS (boot %d)" % count)
                log("fault %s: the tray asked for a reboot and does not come back (it hangs in POST, powered "
                    "on); a reset through its BMC%s, `lab/lab up` or `lab/lab reset` revives it"
                    % (hang_fault, " brings it back" if hang_fault == "no-return-from-reboot" else " does not help"))
                if hang("lab fault %s, after a warm reset" % hang_fault):
                    continue
                break
            recent = [t for t in boots if t > time.monotonic() - LOOP_WINDOW_S]
            if len(recent) >= LOOP_MAX:
                log("reboot loop: %d boots within %d s, giving up" % (len(recent), LOOP_WINDOW_S))
                _write(state / "state", "stopped (reboot loop)\n")
                break
            log("reboot requested (exit %d): booting again" % REBOOT_RC)
    finally:
        if stopping:
            by_bmc = (state / "power_request").is_file() and (state / "power_request").read_text().strip() == "off"
            _write(state / "state", "off (powered off through the BMC)\n" if by_bmc else "stopped (lab down)\n")
            sel(state, "Warning" if by_bmc else "OK", "Host powered off" + (" through the BMC" if by_bmc else ""))
        (state / "power_request").unlink(missing_ok=True)
        (state / "supervisor.pid").unlink(missing_ok=True)
        log("supervisor exits")
    return 0 if rc in (0, REBOOT_RC) else rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
