"""Drift against lab trays (issue 46 item 3): two NVKE trays with their VFs, a first validation (trays phase) that
passes and becomes the baseline; then on tray02 the fabric manager changes one VF's P_Key and a firmware update
leaves one rail at 8 VFs; the second validation opens its report with that change - the tray, the value before and
after - before what is wrong, and the evidence keeps the first run as the last passing one."""
import json
import shlex
import subprocess
import sys

import pytest

from labtools import ROOT, STATE, lab, lab_up, playbook, ssh

sys.path.insert(0, str(ROOT / "lab"))
from gpu_tray_lab import cli  # noqa: E402  (the lab's stand-in for the SR-IOV config daemon)

SYS = "/var/lib/gpu-tray-lab/sys/class/infiniband"
# the tray's sysfs is read-only like the kernel's; the lab's writable view of it stands in for the subnet manager
RW_SYS = "/run/gpu-tray-lab/sys-rw/class/infiniband"
TRAYS_ONLY = {"gpu_tray_validate_phases": ["trays"]}


def one_rail_at(tray, rail, count):
    """One rail's VF count changed as the SR-IOV config daemon changes it (the lab's stand-in script: through 0, the
    new count once the old VFs are gone, then until every new VF has its RDMA device)."""
    argv = ["ssh", "-F", str(STATE / "ssh" / "config"), tray, "sh", "-c", shlex.quote(cli.SRIOV_SCRIPT), "sriov",
            str(count), "120", rail]
    proc = subprocess.run(argv, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=200)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "2")
    lab("sriov")
    for tray in ("tray01", "tray02"):
        ssh(tray, "modprobe ib_ipoib")
    report = tmp_path_factory.mktemp("report")
    first = playbook(inventory, ROOT / "playbooks" / "validate.yml",
                     extra_vars=dict(TRAYS_ONLY, gpu_tray_report_dir=str(report)))
    vf = ssh("tray02", "basename $(ls -d %s/mlx5_0/device/virtfn0/infiniband/*)" % SYS).strip()
    ssh("tray02", "echo 0x8001 > %s/%s/ports/1/pkeys/0" % (RW_SYS, vf))
    one_rail_at("tray02", "mlx5_4", 8)
    second = playbook(inventory, ROOT / "playbooks" / "validate.yml",
                      extra_vars=dict(TRAYS_ONLY, gpu_tray_report_dir=str(report)))
    yield report, first, second, vf
    lab("sriov", "--num-vfs", "0", check=False)


def test_the_first_run_passes_and_is_the_baseline(runs):
    report, first, _second, _vf = runs
    assert first.returncode == 0, first.stdout[-4000:]
    last = json.loads((report / "validation" / "last-pass.json").read_text())
    assert last["result"] == "passed" and last["trays"]["tray02"]["mlx5_4 VFs"] == 16


def test_the_second_run_opens_with_the_change_on_tray02(runs):
    report, first, second, vf = runs
    assert second.returncode != 0, second.stdout[-4000:]
    text = (report / "validation" / "report.md").read_text()
    assert text.index("## Changed since the last passing run") < text.index("## Summary") < text.index("### Failed checks")
    drift = text.split("## Changed since the last passing run", 1)[1].split("## Summary", 1)[0]
    assert "| tray02 | mlx5_4 VFs | 16 | 8 |" in drift, drift
    assert "| tray02 | %s port 1 P_Keys | 0xffff | 0x8001 |" % vf in drift, drift
    assert "tray01" not in drift
    changes = json.loads((report / "validation" / "drift.json").read_text())["changes"]
    assert set(c["object"] for c in changes) == {"tray02"}
    # the failed run is not the next baseline
    first_pass = json.loads((report / "validation" / "last-pass.json").read_text())
    assert first_pass["result"] == "passed" and first_pass["trays"]["tray02"]["mlx5_4 VFs"] == 16
    html = (report / "validation" / "report.html").read_text()
    assert html.index('<section id="drift">') < html.index('<section id="summary">')
    # and the attested bundle of the run
    assert (report / "validation" / "summary-bundle" / "statement.intoto.json").exists()
