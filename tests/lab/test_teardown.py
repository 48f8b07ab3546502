"""`lab down` stops everything by PID and leaves no process, mount, namespace or veth behind;
the no-return-from-reboot fault keeps a tray down after `systemctl reboot`."""
import os
import pathlib
import subprocess
import time

from labtools import STATE, lab, lab_status, lab_up, ssh, tray_status

MACHINES = ("gtl-tray01", "gtl-tray02")


def _alive(pid):
    """Alive and not a zombie waiting for its reaper."""
    try:
        stat = pathlib.Path("/proc/%d/stat" % pid).read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _processes():
    """(pid, argv, root, cgroup file) of every process. A tray's processes (its systemd, sshd, ...) read
    from the host show root "/" (nspawn pivots into the overlay in their own mount namespace), so the
    root alone does not find them; their cgroup does: every tray runs below .../gpu-tray-lab/trayNN."""
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                yield (int(d.name), d.joinpath("cmdline").read_bytes().split(b"\0"), os.readlink(d / "root"),
                       d.joinpath("cgroup").read_text())
            except OSError:
                continue


def _wait_gone(pids, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


def test_no_return_from_reboot_then_down_leaves_nothing_behind():
    lab_up("--platform", "rke2-vr200", "--trays", "2", "--fault", "no-return-from-reboot@2")
    recorded = []
    for name in ("tray01", "tray02"):                      # each tray runs in its own cgroup
        assert "/gpu-tray-lab/%s" % name in pathlib.Path("/proc/%d/cgroup" % tray_status(name)["nspawn_pid"]).read_text()
    # the check below can fail: while the lab is up it finds the trays' own processes (sshd, systemd, ...)
    in_tray_cgroups = [pid for pid, _argv, _root, cgroup in _processes() if "/gpu-tray-lab/" in cgroup]
    assert len(in_tray_cgroups) > 4, in_tray_cgroups
    for t in lab_status()["trays"]:
        assert t["supervisor_pid"] and t["nspawn_pid"], t
        recorded += [t["supervisor_pid"], t["nspawn_pid"]]
    state_dir = str(STATE.resolve())

    # tray02 asks for a reboot and stays down: it hangs "in POST", powered on - its OS is gone, its supervisor
    # stays and waits for a reset through the BMC (issue 26), so `lab down` must stop a supervisor with no guest
    ssh("tray02", "systemctl reboot")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not tray_status("tray02")["state"].startswith("down"):
        time.sleep(0.2)
    t2 = tray_status("tray02")
    assert t2["nspawn_pid"] is None and t2["supervisor_pid"] in recorded, t2
    assert t2["state"].startswith("down (fault no-return-from-reboot"), t2
    assert "no-return-from-reboot" in (STATE / "trays" / "tray02" / "supervisor.log").read_text()
    assert tray_status("tray01")["state"].startswith("running")

    lab("down")
    assert _wait_gone(recorded) == [], "recorded PIDs still alive after lab down"
    left = [(pid, argv) for pid, argv, root, cgroup in _processes()
            if (argv and argv[0].endswith(b"systemd-nspawn") and any(m.encode() in argv for m in MACHINES))
            or root.startswith(state_dir) or "/gpu-tray-lab/" in cgroup]
    assert left == [], "processes of the lab still running: %s" % left
    mounts = [line.split()[4] for line in pathlib.Path("/proc/self/mountinfo").read_text().splitlines()
              if line.split()[4].startswith(state_dir)]
    assert mounts == []
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert "gtl-tray" not in netns
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    assert "gtl01-h" not in links and "gtl02-h" not in links
    assert not STATE.exists()
    cgroup_dirs = [str(p) for p in pathlib.Path("/sys/fs/cgroup").glob("**/gpu-tray-lab")]
    assert cgroup_dirs == [], "per-tray cgroups left behind: %s" % cgroup_dirs
    # and down is idempotent
    lab("down")
