# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tray life cycle on the host: overlay root, per-tray identity, supervisor start/stop, boot wait."""

import os
import pathlib
import signal
import subprocess
import sys
import time
import uuid

from gpu_tray_lab import cgroups, net, util

SUPERVISOR = pathlib.Path(__file__).resolve().parent / "supervisor.py"


class Tray:
    def __init__(self, index):
        self.index = index
        self.name = util.tray_name(index)
        self.machine = util.machine_name(index)
        self.netns = util.netns_name(index)
        self.addr = util.tray_addr(index)
        self.dir = util.state_dir() / "trays" / self.name
        self.upper, self.work, self.merged = self.dir / "upper", self.dir / "work", self.dir / "merged"

    # ---- processes -------------------------------------------------------------------------------
    def supervisor_pid(self):
        pid = util.read_pid(self.dir / "supervisor.pid")
        if pid and util.pid_alive(pid) and str(SUPERVISOR) in util.pid_cmdline(pid) \
                and str(self.dir) in util.pid_cmdline(pid):
            return pid
        return None

    def nspawn_pid(self):
        pid = util.read_pid(self.dir / "nspawn.pid")
        if pid and util.pid_alive(pid) and self.machine in util.pid_cmdline(pid):
            return pid
        return None

    def boot_count(self):
        txt = util.read_text(self.dir / "boot_count").strip()
        return int(txt) if txt.isdigit() else 0

    def state(self):
        state = util.read_text(self.dir / "state").strip() or "absent"
        if state.startswith(("running", "booting", "starting")) and not self.supervisor_pid():
            if not self.nspawn_pid():
                return "dead (supervisor gone; last state: %s; `lab/lab up` with the same options restarts it)" % state
            return "orphaned (supervisor gone, nspawn still running; last state: %s)" % state
        return state

    # ---- overlay ---------------------------------------------------------------------------------
    def mounted(self):
        return is_mountpoint(self.merged)

    def mount(self, rootfs):
        for d in (self.upper, self.work, self.merged):
            d.mkdir(parents=True, exist_ok=True)
        if not self.mounted():
            util.run(["mount", "-t", "overlay", "overlay", "-o",
                      "lowerdir=%s,upperdir=%s,workdir=%s" % (rootfs, self.upper, self.work),
                      str(self.merged)])

    def umount(self):
        for _ in range(50):
            if not self.mounted():
                return
            if util.run(["umount", str(self.merged)], check=False, capture=True).returncode == 0:
                continue
            time.sleep(0.1)
        raise util.LabError("cannot unmount %s (still busy); see `fuser -vm %s`" % (self.merged, self.merged))

    # ---- first-boot identity ---------------------------------------------------------------------
    def personalize(self, pubkey, platform, faults, fixtures):
        """Write per-tray files into the overlay. Done once, before the first boot."""
        m = self.merged
        marker = self.dir / "populated"
        if marker.exists():
            return
        (m / "etc/hostname").write_text(self.name + "\n")
        hosts = util.read_text(m / "etc/hosts")
        if self.name not in hosts:
            (m / "etc/hosts").write_text(hosts + "127.0.1.1\t%s\n" % self.name)
        (m / "etc/machine-id").write_text(uuid.uuid4().hex + "\n")
        ssh = m / "root/.ssh"
        ssh.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(ssh, 0o700)
        (ssh / "authorized_keys").write_text(pubkey)
        os.chmod(ssh / "authorized_keys", 0o600)
        key = m / "etc/ssh/ssh_host_ed25519_key"
        for p in (key, key.with_name(key.name + ".pub")):
            p.unlink(missing_ok=True)
        util.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "root@" + self.name, "-f", str(key)],
                 capture=True)
        fixtures.populate_tray(m, platform, self.index, frozenset(faults))
        marker.write_text("platform=%s\nfaults=%s\n" % (platform, ",".join(sorted(faults))))

    # ---- supervisor ------------------------------------------------------------------------------
    def start(self, faults):
        if self.supervisor_pid():
            return False
        net.create(self.index)
        util.write_json(self.dir / "tray.json", {
            "root": str(self.merged), "machine": self.machine, "hostname": self.name,
            "netns": self.netns, "faults": sorted(faults),
        })
        (self.dir / "state").write_text("starting\n")
        with open(os.devnull, "rb") as devnull, open(self.dir / "supervisor.log", "ab") as logf:
            proc = subprocess.Popen([sys.executable, str(SUPERVISOR), str(self.dir)],
                                    stdin=devnull, stdout=logf, stderr=logf, close_fds=True,
                                    start_new_session=True, cwd="/")
        # the supervisor writes its own pid file; wait for it so that `down` can always find it
        if not util.wait_for(lambda: util.read_pid(self.dir / "supervisor.pid") == proc.pid or
                             proc.poll() is not None, 30):
            proc.kill()
        if util.read_pid(self.dir / "supervisor.pid") != proc.pid:
            raise util.LabError("%s: supervisor (pid %d) did not start (exit status %s); last lines of %s:\n%s"
                                % (self.name, proc.pid, proc.poll(), self.dir / "supervisor.log", self.log_tail()))
        return True

    def stop(self, timeout=20):
        """Stop by recorded PIDs only: TERM supervisor + nspawn, wait, then KILL what is left.

        If nspawn died without powering its guest off (e.g. it was SIGKILLed), the guest's processes live on
        in the tray's own cgroup (recorded in cgroups.json): those are killed too, and nothing else.
        """
        pids = [p for p in (self.supervisor_pid(), self.nspawn_pid()) if p]
        for pid in pids:
            _kill(pid, signal.SIGTERM)
        if not util.wait_for(lambda: not any(util.pid_alive(p) for p in pids), timeout):
            for pid in pids:
                if util.pid_alive(pid):
                    util.log("%s: pid %d did not stop within %d s, sending KILL" % (self.name, pid, timeout))
                    _kill(pid, signal.SIGKILL)
            util.wait_for(lambda: not any(util.pid_alive(p) for p in pids), 5)
        dirs = cgroups.recorded(self.dir)
        orphans = [p for p in cgroups.pids_in(dirs) if util.pid_alive(p)]
        if orphans:
            util.log("%s: killing %d process(es) left in the tray's cgroup: %s"
                     % (self.name, len(orphans), " ".join(map(str, orphans))))
            for pid in orphans:
                _kill(pid, signal.SIGKILL)
            util.wait_for(lambda: not any(util.pid_alive(p) for p in cgroups.pids_in(dirs)), 5)
        return pids

    # ---- power, as the tray's BMC controls it (lab/gpu_tray_lab/bmc.py) ------------------------------
    def faults(self):
        return list((util.read_json(self.dir / "tray.json") or {}).get("faults", []))

    def power_state(self):
        """'On' while the supervisor runs (booting, running, or hanging in POST), else 'Off'."""
        return "On" if self.supervisor_pid() else "Off"

    def boot_progress(self):
        """Redfish BootProgress.LastState of the tray, from the supervisor's state line."""
        if not self.supervisor_pid():
            return "None"
        state = self.state()
        if state.startswith("down (fault"):
            return "PCIResourceConfigStarted"          # hangs in POST
        if state.startswith("running"):
            return "OSRunning"
        return "OSBootStarted"

    def health(self):
        return "Critical" if self.supervisor_pid() and self.state().startswith("down (fault") else "OK"

    def power(self, action):
        """A Redfish ResetType applied to the tray: On/ForceOn, ForceOff/GracefulShutdown, ForceRestart/
        GracefulRestart/PowerCycle (a reset: the tray boots again, cold), Nmi (nothing). Returns what was done."""
        if action in ("On", "ForceOn"):
            if self.supervisor_pid():
                return "already on"
            self._power_on()
            return "powered on"
        if action in ("ForceOff", "GracefulShutdown"):
            if not self.supervisor_pid():
                return "already off"
            (self.dir / "power_request").write_text("off\n")
            self.stop()
            return "powered off"
        if action in ("ForceRestart", "GracefulRestart", "PowerCycle"):
            pid = self.supervisor_pid()
            if not pid:
                self._power_on()
                return "powered on"
            _kill(pid, signal.SIGUSR1)
            return "reset"
        if action == "Nmi":
            return "nothing (no NMI in the lab)"
        raise util.LabError("unknown reset type %r" % action)

    def _power_on(self):
        if not self.mounted():
            raise util.LabError("%s: not set up (no mounted root); `lab/lab up` first" % self.name)
        self.start(self.faults())

    def remove_cgroups(self):
        left = []
        for d in cgroups.recorded(self.dir):
            left += cgroups.remove_tree(d)
        if left:
            raise util.LabError("%s: cgroups still in use after stop: %s" % (self.name, ", ".join(left)))

    def destroy(self):
        self.stop()
        self.remove_cgroups()
        self.umount()
        net.delete(self.index)
        if self.dir.exists():
            util.run(["rm", "-rf", "--one-file-system", str(self.dir)])

    def log_tail(self, lines=15):
        return "\n".join(util.read_text(self.dir / "supervisor.log").splitlines()[-lines:])


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def is_mountpoint(path):
    path = os.path.realpath(str(path))
    for line in util.read_text("/proc/self/mountinfo").splitlines():
        fields = line.split()
        if len(fields) > 4 and _unescape(fields[4]) == path:
            return True
    return False


def mounts_under(prefix):
    prefix = os.path.realpath(str(prefix))
    out = []
    for line in util.read_text("/proc/self/mountinfo").splitlines():
        fields = line.split()
        if len(fields) > 4:
            mp = _unescape(fields[4])
            if mp == prefix or mp.startswith(prefix + "/"):
                out.append(mp)
    return out


def _unescape(s):
    return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def ssh_base(state):
    return ["ssh", "-F", str(state / "ssh" / "config")]


def wait_booted(trays, timeout, state):
    """Wait until every tray answers `systemctl is-system-running --wait` over SSH. Returns {name: (status, secs)}."""
    import threading
    t0 = time.monotonic()
    results = {}

    def one(tray):
        deadline = t0 + timeout
        last = ""
        while time.monotonic() < deadline:
            if not tray.supervisor_pid():
                results[tray.name] = ("supervisor-exited", time.monotonic() - t0, last)
                return
            left = max(2, int(deadline - time.monotonic()))
            proc = subprocess.run(ssh_base(state) + ["-o", "ConnectTimeout=2", tray.name,
                                                     "timeout", str(left), "systemctl", "is-system-running",
                                                     "--wait"],
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True)
            out = proc.stdout.strip()
            if out in ("running", "degraded"):
                detail = ""
                if out == "degraded":
                    detail = subprocess.run(ssh_base(state) + [tray.name, "systemctl", "--failed", "--no-legend",
                                                               "--plain"],
                                            stdin=subprocess.DEVNULL, capture_output=True, text=True).stdout
                results[tray.name] = (out, time.monotonic() - t0, detail)
                return
            last = (proc.stderr.strip() or out)[-300:]
            time.sleep(0.2)
        results[tray.name] = ("timeout", time.monotonic() - t0, last)

    threads = [threading.Thread(target=one, args=(t,)) for t in trays]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return results
