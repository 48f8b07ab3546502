"""The preflight phase (playbooks/preflight.yml, phase 1 of site.yml) against lab trays: healthy trays pass and
the run is idempotent; each injected hardware fault fails the right tray with a one-sentence message and the
device, what was found, what was expected and the fix in the evidence; nothing is changed on any tray (the
doubles' calls.log proves it, and a planted firmware write proves that proof can fail). Issue 13: a fresh
VR200 tray passes preflight (page sizes only), and the 2M count is enforced after the reboot that allocates it."""
import json
import re
import subprocess

import pytest
import yaml

from labtools import BIN, ROOT, ansible_env, ansible_json, lab, lab_up, playbook, recap, ssh, ssh_rc

PREFLIGHT = ROOT / "playbooks" / "preflight.yml"
GRUB_DROPIN = ROOT / "tests" / "lab" / "playbooks" / "grub_dropin.yml"
CALLS_LOG = "/var/log/gpu-tray-lab/calls.log"
SYSFS = "/var/lib/gpu-tray-lab/sys"


@pytest.fixture(scope="module", autouse=True)
def lab_down_at_the_end():
    yield
    lab("down")


def run_preflight(inventory, report):
    """The preflight playbook against the lab inventory, evidence written to report."""
    return playbook(inventory, PREFLIGHT, extra_vars={"gpu_tray_report_dir": str(report)})


def check_result(ev, check):
    """One check's result in a tray's evidence."""
    return next(c for c in ev["checks"] if c["name"] == check)


def evidence(report_dir, tray):
    return json.loads((report_dir / tray / "preflight.json").read_text())


# calls.log (lab/trayfs/usr/local/lib/gpu-tray-lab/traylab.py log_call/log_refused, the mstfwreset double):
#   2026-12-03T00:10:05.123456Z mstconfig -e -d 0000:03:00.0 q
#   2026-12-03T00:10:05.123456Z REFUSED mstconfig: <reason>
CALL_LINE = re.compile(r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z) (?P<refused>REFUSED )?(?P<tool>[\w.-]+):?"
                       r"(?: (?P<args>.*))?$")
MSTCONFIG_READ_VERBS = ("q", "query")


def firmware_writes(log_text):
    """Lines of a tray's calls.log that tried to change NIC firmware or unload a driver: every REFUSED line,
    every mstfwreset, every mstconfig verb other than q/query, every modprobe -r / rmmod. A line that does not
    parse fails the test (a changed log format must not make this check blind)."""
    bad = []
    for line in log_text.splitlines():
        if not line.strip():
            continue
        match = CALL_LINE.match(line)
        assert match, "calls.log line in an unknown format: %r" % line
        args = (match.group("args") or "").split("  # ", 1)[0].split()
        tool = match.group("tool")
        words = [a for a in args if not a.startswith("-")]
        if tool == "mstconfig":
            # mstconfig [-e] [-y] -d <bdf> <verb> ...: the verb is the first word after the device
            after = args[args.index("-d") + 2:] if "-d" in args else words
            write = bool(after) and after[0] not in MSTCONFIG_READ_VERBS
        else:
            write = tool in ("mstfwreset", "rmmod") or (tool == "modprobe" and ("-r" in args or "--remove" in args))
        if match.group("refused") or write:
            bad.append(line)
    return bad


def calls_log(tray):
    """The tray's calls.log; a missing log fails (the lab's boot writes it, and so does every double)."""
    rc, out, err = ssh_rc(tray, "cat %s" % CALLS_LOG)
    assert rc == 0, "%s: cannot read %s (rc %d): %s" % (tray, CALLS_LOG, rc, err)
    return out


def test_firmware_writes_parses_the_log_format():
    log = ("2026-12-03T00:10:05.123456Z modprobe mlx5_ib  # boot: loaded mlx5_ib\n"
           "2026-12-03T00:10:06.000001Z mstconfig -e -d 0000:03:00.0 q\n"
           "2026-12-03T00:10:06.000002Z mstconfig -d 0000:03:00.0 query SRIOV_EN\n")
    assert firmware_writes(log) == []
    for planted in ("2026-12-03T00:10:07.000001Z mstconfig -d 0000:03:00.0 -y set NUM_OF_VFS=8",
                    "2026-12-03T00:10:07.000001Z REFUSED mstconfig: set would write NIC firmware",
                    "2026-12-03T00:10:07.000001Z mstfwreset -d 0000:03:00.0 -y reset",
                    "2026-12-03T00:10:07.000001Z modprobe -r mlx5_core"):
        assert firmware_writes(log + planted + "\n") == [planted]
    with pytest.raises(AssertionError, match="unknown format"):
        firmware_writes("mstconfig -d 0000:03:00.0 set NUM_OF_VFS=8\n")


def test_healthy_gb200_trays_pass_and_rerun_changes_nothing(tmp_path):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "2")
    report = tmp_path / "report"
    first = run_preflight(inventory, report)
    assert first.returncode == 0, first.stdout[-6000:]
    for tray in ("tray01", "tray02"):
        ev = evidence(report, tray)
        assert ev["passed"] is True and ev["failed_checks"] == [], ev["checks"]
        assert ev["platform"] == "nvke-gb200"
        assert sorted(ev["rdma"]["rails"]) == ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4"]
        assert {c["name"] for c in ev["checks"]} >= {"os_image", "rails", "pkeys", "nic_firmware", "kernel_cmdline"}
        assert ev["skipped_checks"] == ["hugepages"]          # NVKE requests no huge page pools
    summary = (report / "preflight-summary.md").read_text()
    assert "| tray01 | nvke-gb200 | PASS |" in summary and "| tray02 | nvke-gb200 | PASS |" in summary
    # the chart stack the preflight checked (after it read the trays: their rdma facts are set) is the one a GitOps
    # bundle of the same inventory holds - the stack plan depends on the inventory only, not on the trays' facts
    checked = re.findall(r"gb200-nvke-ubuntu-training: \d+ components, .*\(digest ([0-9a-f]{64})\)", first.stdout)
    render = playbook(inventory, ROOT / "playbooks" / "render_bundle.yml",
                      extra_vars={"gpu_tray_bundle_dir": str(tmp_path / "bundle")})
    assert render.returncode == 0, render.stdout[-4000:]
    bundle_plan = yaml.safe_load((tmp_path / "bundle" / "plan.yaml").read_text())
    assert checked == [bundle_plan["recipe_digest"]], first.stdout[-3000:]
    policies = list(yaml.safe_load_all(
        (tmp_path / "bundle" / "components" / "sriov-ib-networks" / "sriov-node-policies.yaml").read_text()))
    selected = sorted(a for p in policies for a in p["spec"]["nicSelector"]["rootDevices"])
    for tray in ("tray01", "tray02"):
        pci = [c for c in evidence(report, tray)["checks"] if c["name"] == "rails"][0]["data"]["pci"]
        assert sorted(pci.values()) == selected, (tray, pci, selected)
    second = run_preflight(inventory, report)
    assert second.returncode == 0, second.stdout[-6000:]
    counts = recap(second.stdout)
    assert set(counts) == {"tray01", "tray02"}, second.stdout[-3000:]
    assert all(c["changed"] == 0 and c["failed"] == 0 for c in counts.values()), counts


def test_check_mode_writes_evidence_too(tmp_path):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "1")
    report = tmp_path / "report"
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(PREFLIGHT), "--check",
            "-e", json.dumps({"gpu_tray_report_dir": str(report)})]
    run = subprocess.run(argv, cwd=ROOT, env=ansible_env(), capture_output=True, text=True)
    assert run.returncode == 0, run.stdout[-6000:]
    assert evidence(report, "tray01")["passed"] is True
    assert "| tray01 | nvke-gb200 | PASS |" in (report / "preflight-summary.md").read_text()


@pytest.fixture(scope="module")
def faulty_gb200(tmp_path_factory):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "3",
                       "--fault", "pkey-limited-vf@2", "--fault", "num-vfs-8@3")
    # the SR-IOV operator creates the VFs on a real tray; do it the same way (a sysfs write) on tray02
    ssh("tray02", "for d in %s/class/infiniband/mlx5_[0134]; do echo 2 > $d/device/sriov_numvfs; done" % SYSFS)
    report = tmp_path_factory.mktemp("report")
    run = run_preflight(inventory, report)
    return run, report


def test_faulty_run_fails_and_names_every_failing_tray(faulty_gb200):
    run, report = faulty_gb200
    assert run.returncode != 0, run.stdout[-6000:]
    assert evidence(report, "tray01")["passed"] is True
    summary = (report / "preflight-summary.md").read_text()
    assert "| tray02 | nvke-gb200 | FAIL | pkeys |" in summary, summary
    assert "| tray03 | nvke-gb200 | FAIL | nic_firmware |" in summary, summary
    # the failure message Ansible prints is one line per tray, without the host name (Ansible prints it)
    assert re.search(r"fatal: \[tray02\]: FAILED! => .*Preflight failed \(pkeys\); nothing was changed", run.stdout)
    # the finding itself, not only the check's name, where the terminal and the AWX job log show it
    assert re.search(r"Preflight failed \(nic_firmware\); nothing was changed on the tray\. nic_firmware: NIC firmware "
                     r"settings are wrong on 1 of 4 devices \(\S+\)\. Details and the fix: ", run.stdout), run.stdout[-3000:]
    assert "- **pkeys**: " in summary and "  - Fix: The fabric manager (UFM" in summary, summary


def test_limited_vf_pkey_names_vf_ports_and_fabric_fix(faulty_gb200):
    _, report = faulty_gb200
    ev = evidence(report, "tray02")
    assert ev["failed_checks"] == ["pkeys"]
    res = check_result(ev, "pkeys")
    assert re.match(r"\d+ InfiniBand ports are limited members of partition 0xffff, not full members: VFs mlx5_\d+",
                    res["message"]) and "tray02" not in res["message"], res["message"]
    assert res["status"] == "failed" and res["object"] == "tray02"
    assert all("VF of" in line and "0x7fff" in line and "GUID" in line for line in res["details"]), res["details"]
    assert "UFM" in res["fix"] and "fixing the PFs alone is not enough" in res["fix"]
    failing = [p for p in res["data"]["ports"] if not p["ok"]]
    assert failing and all(p["kind"] == "vf" for p in failing), failing


def test_firmware_names_device_values_and_human_fix(faulty_gb200):
    _, report = faulty_gb200
    res = check_result(evidence(report, "tray03"), "nic_firmware")
    assert res["message"].startswith("NIC firmware settings are wrong on 1 of 4 devices (")
    assert any("NUM_OF_VFS is current=8, next boot=8" in line and ">= 16" in line for line in res["details"]), res
    assert "mstfwreset" in res["fix"] and "cold power-cycle" in res["fix"]


def test_preflight_changed_nothing_on_the_trays(faulty_gb200):
    for tray in ("tray01", "tray02", "tray03"):
        log = calls_log(tray)
        assert re.search(r"Z mstconfig -e -d \S+ q$", log, re.MULTILINE), log   # the log holds preflight's queries
        assert firmware_writes(log) == [], "%s: preflight ran a changing tool" % tray
    # the assertion can fail: a write through the lab's mstconfig double (refused, but logged) is found
    rc, _out, _err = ssh_rc("tray01", "mstconfig -d 0000:03:00.0 -y set NUM_OF_VFS=8")
    assert rc != 0
    planted = firmware_writes(calls_log("tray01"))
    assert any(" mstconfig " in line and " set NUM_OF_VFS=8" in line for line in planted), planted
    assert any(" REFUSED mstconfig" in line for line in planted), planted


def test_vr200_1g_hugepage_request_fails_naming_existing_pools(tmp_path):
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "1", "--fault", "hugepage-1g")
    report = tmp_path / "report"
    run = run_preflight(inventory, report)
    assert run.returncode != 0, run.stdout[-6000:]
    ev = evidence(report, "tray01")
    assert ev["failed_checks"] == ["hugepages"], ev["checks"]
    res = check_result(ev, "hugepages")
    # the variable the user set, in the first sentence
    assert res["message"] == ("gpu_tray_tuning_hugepages asks for 1G huge pages, but the running kernel has no 1G huge "
                              "page pool.")
    assert res["details"] == ["the running kernel has no 1G huge page pool (pools on this kernel: 2M, 512M, 16G)"]
    assert "in gpu_tray_tuning_hugepages" in res["fix"]
    assert res["data"]["checked"] == "sizes"


def test_fresh_vr200_trays_pass_preflight_sizes_only(tmp_path):
    """Issue 13: fresh VR200 trays hold 0 2M pages (hugepages= takes effect only after host preparation's
    reboot); preflight checks the sizes, passes, and says so in the evidence and the summary."""
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "2")
    assert ssh("tray01", "cat %s/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages" % SYSFS).strip() == "0"
    report = tmp_path / "report"
    run = run_preflight(inventory, report)
    assert run.returncode == 0, run.stdout[-6000:]
    for tray in ("tray01", "tray02"):
        ev = evidence(report, tray)
        assert ev["passed"] is True and ev["platform"] == "rke2-vr200", ev["checks"]
        res = check_result(ev, "hugepages")
        assert res["data"]["checked"] == "sizes" and res["message"] == "Huge page sizes OK (2M)."
        assert res["data"]["results"][0]["count"] == 5128 and res["data"]["results"][0]["nr_hugepages"] == 0
        assert "nic_firmware" in ev["skipped_checks"]           # VR200: no firmware check by default
    summary = (report / "preflight-summary.md").read_text()
    assert "| tray01 | rke2-vr200 | PASS |  | sizes |" in summary, summary


def hugepage_counts(inventory):
    rc, hosts = ansible_json(inventory, "tray01", "gpu_tray.cluster.hugepage_check", json.dumps({
        "sysfs_root": SYSFS, "requested": [{"size": "2M", "count": 5128}], "check": "counts"}))
    return rc, hosts["tray01"]


def test_vr200_hugepage_count_is_enforced_after_the_reboot():
    """Issue 13, the other half: before the reboot the count check fails naming pool and count; after a GRUB
    drop-in with the hugepages arguments, the real update-grub and a reboot, the pool holds the pages."""
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "1")
    rc, before = hugepage_counts(inventory)
    assert rc != 0 and before["checked"] == "counts", before
    assert before["msg"] == "The 2M huge page pool holds 0 of the 5128 requested pages.", before["msg"]
    assert before["problems"][0].startswith("the 2M pool holds 0 of the 5128 requested pages"), before["problems"]
    run = playbook(inventory, GRUB_DROPIN, extra_vars={"test_kernel_arg": "hugepagesz=2M hugepages=5128"})
    assert run.returncode == 0, run.stdout[-6000:]
    assert "CMDLINE_AFTER=" in run.stdout and "hugepagesz=2M hugepages=5128" in run.stdout.split("CMDLINE_AFTER=")[1]
    rc, after = hugepage_counts(inventory)
    assert rc == 0 and after["checked"] == "counts" and after["problems"] == [], after
    assert [r["nr_hugepages"] for r in after["results"]] == [5128]
