"""The site playbook's preflight phase against lab trays: healthy trays pass and the run is idempotent;
each injected hardware fault fails the right tray, with a message that names the tray, the device, what was
found, what was expected and the fix; nothing is changed on any tray."""
import json
import re

import pytest

from labtools import ROOT, lab, lab_up, playbook, ssh

SITE = ROOT / "playbooks" / "site.yml"


@pytest.fixture(scope="module", autouse=True)
def lab_down_at_the_end():
    yield
    lab("down")


def recap(stdout):
    """{host: {"ok": n, "changed": n, ...}} from the PLAY RECAP of a playbook run."""
    out = {}
    for line in stdout.split("PLAY RECAP", 1)[1].splitlines():
        match = re.match(r"^(\S+)\s+:\s+(.*)$", line.strip())
        if match:
            out[match.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(2))}
    return out


def run_site(inventory, report):
    """The site playbook against the lab inventory, evidence written to report."""
    return playbook(inventory, SITE, extra_vars={"gpu_tray_report_dir": str(report)})


def check_msg(ev, check):
    """The message a check recorded in a tray's evidence."""
    return next(c["msg"] for c in ev["checks"] if c["check"] == check)


def evidence(report_dir, tray):
    return json.loads((report_dir / tray / "preflight.json").read_text())


def test_healthy_gb200_trays_pass_and_rerun_changes_nothing(tmp_path):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "2")
    report = tmp_path / "report"
    first = run_site(inventory, report)
    assert first.returncode == 0, first.stdout[-6000:]
    for tray in ("tray01", "tray02"):
        ev = evidence(report, tray)
        assert ev["passed"] is True and ev["failed_checks"] == [], ev["checks"]
        assert ev["platform"] == "nvke-gb200"
        assert sorted(ev["rdma"]["rails"]) == ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4"]
        assert {c["check"] for c in ev["checks"]} >= {"os_image", "rails", "pkeys", "nic_firmware", "kernel_cmdline"}
    summary = (report / "preflight-summary.md").read_text()
    assert "| tray01 | nvke-gb200 | PASS |" in summary and "| tray02 | nvke-gb200 | PASS |" in summary
    second = run_site(inventory, report)
    assert second.returncode == 0, second.stdout[-6000:]
    counts = recap(second.stdout)
    assert set(counts) == {"tray01", "tray02"}, second.stdout[-3000:]
    assert all(c["changed"] == 0 and c["failed"] == 0 for c in counts.values()), counts


@pytest.fixture(scope="module")
def faulty_gb200(tmp_path_factory):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "3",
                       "--fault", "pkey-limited-vf@2", "--fault", "num-vfs-8@3")
    # the SR-IOV operator creates the VFs on a real tray; do it the same way (a sysfs write) on tray02
    ssh("tray02", "for d in /var/lib/gpu-tray-lab/sys/class/infiniband/mlx5_[0134]; do echo 2 > $d/device/sriov_numvfs; done")
    report = tmp_path_factory.mktemp("report")
    run = run_site(inventory, report)
    return run, report


def test_faulty_run_fails_and_names_every_failing_tray(faulty_gb200):
    run, report = faulty_gb200
    assert run.returncode != 0, run.stdout[-6000:]
    assert evidence(report, "tray01")["passed"] is True
    summary = (report / "preflight-summary.md").read_text()
    assert "| tray02 | nvke-gb200 | FAIL | pkeys |" in summary, summary
    assert "| tray03 | nvke-gb200 | FAIL | nic_firmware |" in summary, summary


def test_limited_vf_pkey_message_names_vf_ports_and_fabric_fix(faulty_gb200):
    _, report = faulty_gb200
    ev = evidence(report, "tray02")
    assert ev["failed_checks"] == ["pkeys"]
    msg = check_msg(ev, "pkeys")
    assert "tray02" in msg and "VF of" in msg and "0x7fff" in msg
    assert "UFM" in msg and "fixing the PFs alone is not enough" in msg
    failing = [p for p in ev["pkeys"] if not p["ok"]]
    assert failing and all(p["kind"] == "vf" for p in failing), failing


def test_firmware_message_names_device_values_and_human_fix(faulty_gb200):
    _, report = faulty_gb200
    ev = evidence(report, "tray03")
    msg = check_msg(ev, "nic_firmware")
    assert "tray03" in msg and "NUM_OF_VFS" in msg and "8" in msg and "16" in msg
    assert "mstfwreset" in msg


def test_preflight_changed_nothing_on_the_trays(faulty_gb200):
    for tray in ("tray01", "tray02", "tray03"):
        calls = ssh(tray, "cat /var/log/gpu-tray-lab/calls.log 2>/dev/null || true")
        writes = [line for line in calls.splitlines() if line.startswith(("mstconfig", "mstfwreset", "modprobe"))
                  and ((" set" in line) or ("mstfwreset" in line) or (" -r" in line))]
        assert not writes, "%s: preflight ran a changing tool: %s" % (tray, writes)


def test_vr200_1g_hugepage_request_fails_naming_existing_pools(tmp_path):
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "1", "--fault", "hugepage-1g")
    report = tmp_path / "report"
    run = run_site(inventory, report)
    assert run.returncode != 0, run.stdout[-6000:]
    ev = evidence(report, "tray01")
    assert ev["failed_checks"] == ["hugepages"], ev["checks"]
    msg = check_msg(ev, "hugepages")
    assert "1G" in msg and "2M" in msg and "512M" in msg and "16G" in msg


def test_rail_switched_to_ethernet_fails_rails_and_firmware(tmp_path):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "1", "--fault", "link-type-eth")
    report = tmp_path / "report"
    run = run_site(inventory, report)
    assert run.returncode != 0, run.stdout[-6000:]
    ev = evidence(report, "tray01")
    assert set(ev["failed_checks"]) == {"rails", "nic_firmware"}, ev["checks"]
    firmware = check_msg(ev, "nic_firmware")
    assert "LINK_TYPE" in firmware and "ETH" in firmware and "IB" in firmware, firmware
