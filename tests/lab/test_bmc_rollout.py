"""BMC access before the first reboot, and a tray stuck in POST read and recovered through Redfish (issue 26), against
real Redfish services: the lab's BMCs (`lab/lab bmc up`: one OpenStack sushy-tools emulator per tray on loopback,
TLS with the lab's CA + basic auth, lab/gpu_tray_lab/bmc.py), whose ComputerSystem is the lab tray - its serial is
the tray's SMBIOS serial, its PowerState/BootProgress come from the tray's supervisor, and a Reset action really
powers the lab tray (the supervisor stops it and boots it again). `lab/lab bmc up` writes each tray's
gpu_tray_bmc_* into the lab inventory (host_vars), as a site's inventory has them.

- the preflight of prepare_trays.yml with a wrong BMC password, and the read-only preflight.yml (which checks the BMC
  wherever it is required - rke2-vr200's default, set here over the lab inventory's false) with a BMC that does not
  answer, fail before any change (no tray rebooted, no file written) and say how to fix it; with the right ones every tray's
  system is found by its serial;
- `no-return-from-reboot@1` (tray01, the canary - the first tray, as no cluster is configured every tray is idle -
  hangs in POST after its warm reboot): with gpu_tray_bmc_recover none the run stops at the canary, no other tray
  reboots, and the message and the report's BMC section carry PowerState On, BootProgress PCIResourceConfigStarted and
  the SEL's POST hang;
- with power_cycle (`no-return-from-reboot@2`, `stuck-in-post@3`: the canary tray01 comes back, then tray02 and tray03
  reboot together): tray02 is power-cycled once through its BMC, comes back and is verified, while tray03, which hangs
  again after its one power cycle, stops the run - the BMC inspection and recovery of two trays of one wave.

The preparing roles are stood in for by tests/lab/playbooks/fake_prepare.yml, as in test_rolling_reboot.py. No
Kubernetes cluster is configured (no K8S_AUTH_* in the environment): the trays are not drained.
"""
import json
import subprocess

import pytest

from labtools import BIN, ROOT, STATE, ansible_env, lab, lab_up, ssh, tray_status

FAKE_PREPARE = ROOT / "tests" / "lab" / "playbooks" / "fake_prepare.yml"
ARG = "gtl_rolling.test=1"
FAST = {"rolling_reboot_timeout": 25, "rolling_reboot_post_reboot_delay": 1}
K8S_ENV = ("K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_CONTEXT", "KUBECONFIG")
KERNEL_TUNING_DROPIN = "/etc/default/grub.d/99-gpu-tray-kernel-tuning.cfg"


def run(inventory, playbook, extra_vars, report):
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(playbook),
            "-e", json.dumps(dict(extra_vars, gpu_tray_report_dir=str(report)))]
    env = dict((k, v) for k, v in ansible_env().items() if k not in K8S_ENV)
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


def boots(*trays):
    return [tray_status(t)["boot_count"] for t in trays]


def sel(tray):
    path = STATE / "trays" / tray / "sel.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def resets(tray):
    return [e for e in sel(tray) if e["message"].startswith("Host reset through the BMC")]


def report_row(report, tray):
    return next(r for r in json.loads((report / "rolling-reboot.json").read_text()) if r["tray"] == tray)


def bmc_lab(*faults):
    args = ["--platform", "rke2-vr200", "--trays", "3"]
    for fault in faults:
        args += ["--fault", fault]
    inventory = lab_up(*args)
    lab("bmc", "up")
    return inventory


@pytest.fixture(scope="module")
def lab3():
    yield bmc_lab("no-return-from-reboot@1")
    lab("down")


def test_the_lab_bmcs_answer_with_the_trays_identity(lab3):
    hv = (STATE / "inventory" / "host_vars" / "tray02.yml").read_text()
    assert "gpu_tray_bmc_address: \"https://127.0.0.1:" in hv and "gpu_tray_bmc_password:" in hv
    status = json.loads(lab("bmc", "status", "--json").stdout)
    assert [row["tray"] for row in status] == ["tray01", "tray02", "tray03"] and all(row["pid"] for row in status)


def test_a_wrong_bmc_password_fails_the_preflight_before_any_change(lab3, tmp_path):
    rc, out = run(lab3, ROOT / "playbooks" / "prepare_trays.yml",
                  {"gpu_tray_bmc_required": True, "gpu_tray_bmc_password": "wrong-password"}, tmp_path)
    assert rc != 0, out
    assert "Preflight failed (bmc); nothing was changed on the tray." in out, out
    assert "refused the credentials" in out and "HTTP Error 401" in out, out
    assert "wrong-password" not in out                       # no_log wherever the password passes
    evidence = json.loads((tmp_path / "tray02" / "preflight.json").read_text())
    check = next(c for c in evidence["checks"] if c["name"] == "bmc")
    assert check["status"] == "failed" and check["data"]["kind"] == "auth" and "gpu_tray_bmc_password" in check["fix"]
    assert "refused the credentials" in (tmp_path / "preflight-summary.md").read_text()
    # nothing changed: no tray rebooted, no role ran
    assert boots("tray01", "tray02", "tray03") == [1, 1, 1]
    for tray in ("tray01", "tray02", "tray03"):
        assert ssh(tray, "ls %s 2>/dev/null || true" % KERNEL_TUNING_DROPIN) == ""
    assert "TASK [gpu_tray.cluster.kernel_tuning" not in out


def test_an_unreachable_bmc_fails_the_preflight_and_the_right_one_passes(lab3, tmp_path):
    rc, out = run(lab3, ROOT / "playbooks" / "preflight.yml",
                  {"gpu_tray_bmc_required": True, "gpu_tray_bmc_address": "https://127.0.0.1:9"}, tmp_path / "down")
    assert rc != 0, out
    assert "The BMC at https://127.0.0.1:9 does not answer" in out, out
    assert "check that the BMC answers at https://127.0.0.1:9 from the controller" in \
        (tmp_path / "down" / "preflight-summary.md").read_text()
    # the lab inventory's own BMCs: every tray's system found by the tray's serial, On, health OK
    rc, out = run(lab3, ROOT / "playbooks" / "preflight.yml", {"gpu_tray_bmc_required": True}, tmp_path / "up")
    assert rc == 0, out
    for index, tray in enumerate(("tray01", "tray02", "tray03"), 1):
        evidence = json.loads((tmp_path / "up" / tray / "preflight.json").read_text())
        check = next(c for c in evidence["checks"] if c["name"] == "bmc")
        assert check["status"] == "passed" and check["data"]["ok"], check
        assert check["data"]["serial"] == evidence["tray"]["dmi"]["product_serial"] == "LABVR200%04d" % index
        assert check["data"]["power_state"] == "On" and check["data"]["system_id"] == "System_0"
    assert boots("tray01", "tray02", "tray03") == [1, 1, 1]


def test_a_canary_that_does_not_come_back_stops_the_run_and_the_report_carries_what_the_bmc_says(lab3, tmp_path):
    rc, out = run(lab3, FAKE_PREPARE, dict(FAST, gpu_tray_bmc_required=True), tmp_path)
    assert rc != 0, out
    assert "canary tray01, then the other 2 together" in out, out
    assert tray_status("tray01")["state"].startswith("down (fault no-return-from-reboot"), tray_status("tray01")
    row = report_row(tmp_path, "tray01")
    assert row["status"] == "FAILED" and row["rebooted"] == "did not come back" and row["role"] == "canary", row
    bmc = row["bmc"]
    assert bmc["read"] and bmc["power_state"] == "On" and bmc["health"] == "Critical", bmc
    assert bmc["boot_progress"] == "PCIResourceConfigStarted", bmc
    assert bmc["recovery"]["power_cycle"] is False and bmc["recovery"]["done"] is False
    assert bmc["recovery"]["why"] == "no recovery: gpu_tray_bmc_recover is none"
    assert any(e["message"].startswith("POST hang") and e["severity"] == "Critical" for e in bmc["log"]), bmc["log"]
    # no other tray rebooted; the message names the canary and what its BMC says
    assert boots("tray02", "tray03") == [1, 1]
    assert [report_row(tmp_path, t)["status"] for t in ("tray02", "tray03")] == ["not reached", "not reached"]
    assert "The canary tray01 failed (" in out and "so no other tray was rebooted" in out, out
    assert "tray01 BMC: PowerState On, BootProgress PCIResourceConfigStarted, health Critical" in out, out
    assert "no further tray was touched" in out and resets("tray01") == []
    md = (tmp_path / "rolling-reboot.md").read_text()
    assert "## BMC" in md and "### tray01" in md and "BootProgress\n  **PCIResourceConfigStarted**" in md, md
    assert "POST hang" in md and "**tray01** (the canary)" in md and "**Stopped:** The canary tray01 failed" in md


def test_power_cycle_brings_a_hung_tray_back_once_and_a_tray_that_stays_down_stops_the_run(tmp_path):
    inventory = bmc_lab("no-return-from-reboot@2", "stuck-in-post@3")
    rc, out = run(inventory, FAKE_PREPARE, dict(FAST, gpu_tray_bmc_required=True, gpu_tray_bmc_recover="power_cycle"),
                  tmp_path)
    assert rc != 0, out
    # tray02: hung in POST, power-cycled once through its BMC, back, verified; the run went on
    row2 = report_row(tmp_path, "tray02")
    assert row2["status"] == "rebooted (power-cycled once through the BMC)", row2
    assert row2["rebooted"] == "yes, after a power cycle" and row2["cmdline_verified"] == "yes", row2
    assert row2["bmc"]["boot_progress"] == "PCIResourceConfigStarted"
    assert row2["bmc"]["recovery"]["done"] and row2["bmc"]["recovery"]["result"] == "back after the power cycle"
    assert len(resets("tray02")) == 1
    assert ARG in ssh("tray02", "cat /proc/cmdline").split()
    assert tray_status("tray02")["state"].startswith("running"), tray_status("tray02")
    # tray03: hung again after its one power cycle: the run stops as before, no second power cycle
    row3 = report_row(tmp_path, "tray03")
    assert row3["status"] == "FAILED" and row3["rebooted"] == "did not come back", row3
    assert row3["bmc"]["recovery"]["result"] == "still down after the power cycle", row3
    assert row3["bmc"]["after"]["power_state"] == "On"
    assert row3["bmc"]["after"]["boot_progress"] == "PCIResourceConfigStarted"
    assert len(resets("tray03")) == 1
    assert "nor from its power cycle through the BMC" in out, out
    md = (tmp_path / "rolling-reboot.md").read_text()
    assert "### tray02" in md and "### tray03" in md and "still down after the power cycle" in md, md
    assert report_row(tmp_path, "tray01")["status"] == "rebooted" and "bmc" not in report_row(tmp_path, "tray01")
    assert report_row(tmp_path, "tray01")["role"] == "canary"
    assert [report_row(tmp_path, t)["wave"] for t in ("tray02", "tray03")] == [2, 2]       # one wave, two BMCs
