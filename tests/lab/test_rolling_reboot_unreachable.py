"""A tray that comes back from its reboot and then stops answering stops the rolling reboot (issue: Ansible runs no
rescue for an UNREACHABLE host, so it used to keep "not reached" and the next wave rebooted the next tray), and the
rolling-reboot report is written all the same and names it unreachable (issue 36).

Lab fault `stops-answering-after-reboot@1`: after its reboot tray01 answers the reboot's probes (boot id, test
command), then sshd goes away at the first module call (lab/trayfs/.../stop-answering). 3 trays, no cluster
configured (all idle, not drained): tray01 is the canary; it is reported as unreachable - it stopped answering after
it came back - and tray02 and tray03 are never rebooted; once tray01 answers again, a re-run resumes with tray02
(the new canary) and tray03. The preparing roles are stood in for by tests/lab/playbooks/fake_prepare.yml, as in
test_rolling_reboot.py.
"""
import subprocess

import pytest

from labtools import STATE, lab, lab_up, ssh, tray_status
from test_rolling_reboot import ARG, boots, cmdline, power_windows, report_row, run


@pytest.fixture(scope="module")
def lab3():
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "3", "--fault", "stops-answering-after-reboot@1")
    yield inventory
    lab("down")


def _fault_log(tray):
    path = STATE / "trays" / tray / "merged" / "var" / "log" / "gpu-tray-lab" / "stop-answering.log"
    return path.read_text() if path.exists() else ""


def _revive_sshd(tray):
    """What an operator does on the BMC console: start sshd again (inside the tray's namespaces, not over SSH)."""
    nspawn = int((STATE / "trays" / tray / "nspawn.pid").read_text())
    init = subprocess.run(["pgrep", "-P", str(nspawn)], capture_output=True, text=True, check=True).stdout.split()[0]
    subprocess.run(["nsenter", "-t", init, "-m", "-u", "-i", "-n", "-p", "systemctl", "start", "ssh.service"],
                   check=True, capture_output=True, text=True)


def test_a_tray_that_stops_answering_after_its_reboot_stops_the_run(lab3, tmp_path):
    rc, out = run(lab3, {}, report=tmp_path)
    assert rc != 0, out
    assert "UNREACHABLE" in out, out
    # tray01: rebooted once, came back, then stopped answering at the first module call (the fault's own record)
    assert boots("tray01") == [2]
    assert "started over SSH: stopping sshd" in _fault_log("tray01"), _fault_log("tray01")
    row = report_row(tmp_path, "tray01")
    assert row["status"] == "FAILED", row
    assert row["failed_step"] == "the tray stopped answering after it came back from its reboot", row
    assert row["rebooted"] == "yes" and row["cmdline_verified"] == "no", row
    assert "BMC console" in row["check"] and "management network" in row["check"], row
    assert row["unreachable"] is True and row["role"] == "canary", row
    # the message names the tray and says what happened; the run stopped at the end of wave 1, the canary's
    assert "The canary tray01 failed (tray01: the tray stopped answering after it came back from its reboot)" in out, \
        out
    assert "Canary tray01: the tray stopped answering after it came back from its reboot failed" in out, out
    # the report exists and names the tray as unreachable
    md = (tmp_path / "rolling-reboot.md").read_text()
    assert "## Failed" in md and "**tray01** (the canary) - UNREACHABLE: the tray stopped answering" in md, md
    assert "| FAILED (unreachable) |" in md, md
    # tray02 and tray03: never rebooted, never asked to shut down, without the argument
    for tray in ("tray02", "tray03"):
        assert report_row(tmp_path, tray)["status"] == "not reached"
        assert power_windows(tray) == []
        assert ARG not in cmdline(tray)
    assert boots("tray02", "tray03") == [1, 1]
    assert out.count("wave 2/2 (2 together): tray02, tray03") == 1, out      # in the plan only: it never started
    assert "wave 2/2 (2 together) started" not in out, out


def test_the_rerun_resumes_once_the_tray_answers_again(lab3, tmp_path):
    _revive_sshd("tray01")
    assert ARG in cmdline("tray01")                  # its reboot did happen
    rc, out = run(lab3, {}, report=tmp_path)
    assert rc == 0, out
    assert "2 of 3 tray(s) need a reboot, in 2 reboot period(s)" in out and "canary tray02" in out, out
    assert boots("tray01", "tray02", "tray03") == [2, 2, 2]
    assert [report_row(tmp_path, t)["status"] for t in ("tray01", "tray02", "tray03")] == \
        ["no reboot needed", "rebooted", "rebooted"]
    assert tray_status("tray01")["state"].startswith("running"), tray_status("tray01")
    assert ssh("tray01", "echo ok").strip() == "ok"
