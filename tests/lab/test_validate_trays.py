"""The validation's trays phase against lab trays: the VF P_Key fault the preflight cannot see in a first rollout.

Three NVKE trays, `pkey-limited-vf@2` (every VF created on tray02's last rail holds only 0x7fff) and
`multus-token-expiring@3` (the token in tray03's multus.kubeconfig expires in 10 days: F26). The preflight runs
first, before any VF exists, and passes every tray - the gap. Then `lab/lab sriov` does what the SR-IOV config
daemon does after the deploy (writes sriov_numvfs = the recipe's numVfs on every rail, the lab's kernel stand-in
creates the VFs), and playbooks/validate.yml runs its trays phase (the lab has no cluster): tray02's VFs are named
as limited members, trays 1 and 3 pass, tray03's multus token is warned about with the date and the fix, and the
run fails with the tray and the VFs in its message. A tray that stops answering is recorded as tray-read failed,
never skipped - and the preflight, run while it is down, still writes its summary, naming the tray unreachable, and
fails tray02 (its P_Key check) in the same run: its PLAY RECAP line says failed, not only the summary.
"""
import json
import re
import subprocess

import pytest

from labtools import ROOT, STATE, lab, lab_up, playbook, recap, ssh

SYSFS = "/var/lib/gpu-tray-lab/sys"
TRAYS_ONLY = {"gpu_tray_validate_phases": ["trays"]}


@pytest.fixture(scope="module")
def rollout(tmp_path_factory):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "3", "--fault", "pkey-limited-vf@2",
                       "--fault", "multus-token-expiring@3")
    lab("sriov", "--num-vfs", "0")                       # a first rollout: no VF exists before the deploy
    for tray in ("tray01", "tray02", "tray03"):
        # what host preparation leaves (role rdma_modules, applied by the rolling reboot): IPoIB for the VFs
        ssh(tray, "modprobe ib_ipoib")
    report = tmp_path_factory.mktemp("report")
    preflight = playbook(inventory, ROOT / "playbooks" / "preflight.yml", extra_vars={"gpu_tray_report_dir": str(report)})
    created = lab("sriov")
    run = playbook(inventory, ROOT / "playbooks" / "validate.yml",
                   extra_vars=dict(TRAYS_ONLY, gpu_tray_report_dir=str(report)))
    yield inventory, report, preflight, created, run
    lab("sriov", "--num-vfs", "0", check=False)


def ctrf_tests(report):
    ctrf = json.loads((report / "validation" / "ctrf" / "trays.json").read_text())["results"]
    return dict((test["name"], test) for test in ctrf["tests"])


def test_the_preflight_passes_before_the_vfs_exist(rollout):
    _inventory, report, preflight, _created, _run = rollout
    assert preflight.returncode == 0, preflight.stdout[-4000:]
    assert "| tray02 | nvke-gb200 | PASS |" in (report / "preflight-summary.md").read_text()


def test_the_config_daemon_stand_in_creates_the_policies_vfs(rollout):
    _inventory, _report, _preflight, created, _run = rollout
    assert "tray02: sriov_numvfs mlx5_0=16 mlx5_1=16 mlx5_3=16 mlx5_4=16" in created.stdout, created.stdout
    vfs = ssh("tray02", "ls -d %s/class/infiniband/mlx5_4/device/virtfn* | wc -l" % SYSFS).strip()
    assert vfs == "16"


def test_trays_phase_names_tray02_vfs_as_limited_members(rollout):
    _inventory, report, _preflight, _created, run = rollout
    assert run.returncode != 0, run.stdout[-4000:]
    tests = ctrf_tests(report)
    limited = tests["tray02/pkeys"]
    assert limited["status"] == "failed"
    assert re.match(r"16 InfiniBand ports are limited members of partition 0xffff, not full members: VFs "
                    r"(mlx5_\d+, ){3}mlx5_\d+ and 12 more of mlx5_4\.$", limited["message"]), limited["message"]
    assert len(limited["extra"]["details"]) == 16
    assert all(" GUID b83f:d203:" in line and "holds 0x7fff (default partition, limited member)" in line
               for line in limited["extra"]["details"])
    assert "UFM" in limited["extra"]["fix"] and "ib-kubernetes" in limited["extra"]["fix"]
    assert limited["extra"]["object"] == "tray02"
    for tray in ("tray01", "tray03"):
        assert [tests["%s/%s" % (tray, c)]["status"] for c in ("sriov-vfs", "pkeys", "vf-ipoib", "pf-state")] \
            == ["passed"] * 4, tray
        assert tests["%s/netns-mode" % tray]["status"] == "skipped"        # NVKE does not manage netns_mode
    # only the VFs fail: the PFs are as the preflight recorded them (its evidence is the baseline)
    assert tests["tray02/pf-state"]["message"].endswith(", as at the preflight.")
    assert tests["tray02/sriov-vfs"]["message"] == "All 64 VFs on 4 rails exist, bound to mlx5_core."
    # the failure where the user looks: the task message names the tray and the VFs, the report has the fix
    assert re.search(r"Validation of gb200-nvke-ubuntu-training failed in trays: tray02/pkeys: 16 InfiniBand ports "
                     r"are limited members of partition 0xffff, not full members: VFs mlx5_\d+", run.stdout), \
        run.stdout[-4000:]
    markdown = (report / "validation" / "report.md").read_text()
    assert "| pkeys | FAILED | tray02 |" in markdown and "- **tray02/pkeys** (FAILED)" in markdown
    assert re.search(r"\| \*\*pkeys\*\* \| trays \| \d+ trays?: [^|]*tray02", markdown.split("## readiness")[0])  # summary


def test_trays_phase_warns_of_the_multus_token_that_expires_in_10_days(rollout):
    """F26: tray03's multus.kubeconfig (the lab's, as multus's entrypoint writes it) holds a token that expires in 10
    days: a warning with the date and the fix (restart the multus pods); the others' expire in a year and pass."""
    _inventory, report, _preflight, _created, run = rollout
    tests = ctrf_tests(report)
    token = tests["tray03/multus-token"]
    assert token["status"] == "passed" and token["extra"].get("warning") is True, token      # CTRF: a warning passes
    assert re.match(r"The multus token in /etc/cni/net\.d/multus\.d/multus\.kubeconfig expires on "
                    r"\d{4}-\d\d-\d\d \d\d:\d\d UTC \(in (9|10) days\)\.$", token["message"]), token["message"]
    assert "rollout restart daemonset kube-multus-ds" in token["extra"]["fix"]
    for tray in ("tray01", "tray02"):
        assert tests["%s/multus-token" % tray]["message"].endswith("(in 365 days).") or \
            tests["%s/multus-token" % tray]["message"].endswith("(in 364 days)."), tests["%s/multus-token" % tray]
    markdown = (report / "validation" / "report.md").read_text()
    assert "| multus-token | WARNING | tray03 |" in markdown
    assert re.search(r"\| \*\*multus-token\*\* \| trays \| \d+ trays?: [^|]*tray03", markdown)      # the summary


def _sshd(tray, action):
    """Stop sshd inside the tray's namespaces, every session too (the tray stops answering: Ansible's multiplexed
    connection from the run before goes with it), or start it again (an operator on the BMC console)."""
    nspawn = int((STATE / "trays" / tray / "nspawn.pid").read_text())
    init = subprocess.run(["pgrep", "-P", str(nspawn)], capture_output=True, text=True, check=True).stdout.split()[0]
    script = ("systemctl stop ssh.socket ssh.service; pkill -KILL -x sshd; true" if action == "stop"
              else "systemctl start ssh.service")
    subprocess.run(["nsenter", "-t", init, "-m", "-u", "-i", "-n", "-p", "sh", "-c", script],
                   check=True, capture_output=True, text=True)


def test_a_tray_that_does_not_answer_is_a_failed_read_not_a_skip(rollout, tmp_path):
    inventory, report, _preflight, _created, _run = rollout
    _sshd("tray03", "stop")
    try:
        run = playbook(inventory, ROOT / "playbooks" / "validate.yml",
                       extra_vars=dict(TRAYS_ONLY, gpu_tray_report_dir=str(report)))
        down = tmp_path / "preflight"
        preflight = playbook(inventory, ROOT / "playbooks" / "preflight.yml",
                             extra_vars={"gpu_tray_report_dir": str(down)})
    finally:
        _sshd("tray03", "start")
    # the preflight stops, and its summary is written all the same, naming the tray that did not answer
    assert preflight.returncode != 0
    assert re.search(r"tray03 is unreachable: .*Nothing was checked on it, nothing was changed\. Summary: "
                     + re.escape(str(down / "preflight-summary.md")), preflight.stdout), preflight.stdout[-4000:]
    summary = (down / "preflight-summary.md").read_text()
    assert "Unreachable: tray03." in summary and "| tray03 | nvke-gb200 | UNREACHABLE | tray_read |" in summary, summary
    # tray02's VFs exist by now (lab sriov), with their limited P_Keys: this preflight sees them
    assert "| tray01 | nvke-gb200 | PASS |" in summary and "| tray02 | nvke-gb200 | FAIL | pkeys |" in summary, summary
    record = json.loads((down / "tray03" / "preflight.json").read_text())
    assert record["unreachable"] is True and record["failed_checks"] == ["tray_read"], record
    # issue 44: tray02's failed checks fail tray02 in the same run, also when tray03 did not answer - its recap line
    # says failed (the run used to stop at tray03's failure, before tray02's fail task: failed=0); tray01 passed
    assert re.search(r"fatal: \[tray02\]: FAILED! => .*Preflight failed \(pkeys\); nothing was changed",
                     preflight.stdout), preflight.stdout[-4000:]
    counts = recap(preflight.stdout)
    assert {tray: counts[tray]["failed"] for tray in ("tray01", "tray02", "tray03")} == \
        {"tray01": 0, "tray02": 1, "tray03": 1}, counts
    assert run.returncode != 0
    tests = ctrf_tests(report)
    assert tests["tray03/tray-read"]["status"] == "failed", tests.get("tray03/tray-read")
    assert tests["tray03/tray-read"]["message"].startswith("The tray could not be read: ")
    assert not [name for name in tests if name.startswith("tray03/") and name != "tray03/tray-read"]
    assert tests["tray01/pkeys"]["status"] == "passed" and tests["tray02/pkeys"]["status"] == "failed"
