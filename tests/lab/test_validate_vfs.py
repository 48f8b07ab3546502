"""validate judges what the stack plan deployed, not a module default (issue 44): with gpu_tray_num_vfs 8 the stack
renders numVfs 8 per rail, `lab/lab sriov --num-vfs 8` makes the lab trays' rails carry 8 VFs (what the SR-IOV
config daemon does with that policy) and the test cluster's simulated kubelet advertises 8 VFs per rail resource
(`kcluster fault sriov-vfs all --count 8`). The deployment phase's rail checks and the trays phase's VF checks pass;
a node that advertises 16 where 8 were asked fails, naming the node, the rail's resource and both counts.

Two NVKE trays of the lab and two NVKE nodes of the test cluster (tray01, tray02: the same names). The components of
the recipe are not installed on the test cluster, so the deployment phase as a whole fails: the assertions read the
rail checks' own records."""
import json
import subprocess
import sys

import pytest

from labtools import ROOT, lab, lab_up, playbook, ssh

sys.path.insert(0, str(ROOT / "tests" / "cluster"))
from clusterhelpers import KCLUSTER, running_cluster  # noqa: E402  (tests/cluster is not a package)

TRAYS = ("tray01", "tray02")


def kcluster(*args):
    return subprocess.run([str(KCLUSTER)] + list(args), capture_output=True, text=True, check=True)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "2")
    with running_cluster(["--platform", "nvke-gb200", "--nodes", "2"], min_nodes=2) as (status, _started):
        assert status.get("platform", "nvke-gb200") == "nvke-gb200", status
        lab("sriov", "--num-vfs", "8")
        for tray in TRAYS:
            ssh(tray, "modprobe ib_ipoib")       # what rdma_modules leaves: IPoIB for the VFs
        try:
            yield inventory, status["kubeconfig"], tmp_path_factory
        finally:
            subprocess.run([str(KCLUSTER), "fault", "clear", "all"], capture_output=True, check=False)
            lab("sriov", "--num-vfs", "0", check=False)


def validate(fleet, name):
    inventory, kubeconfig, factory = fleet
    report = factory.mktemp(name)
    run = playbook(inventory, ROOT / "playbooks" / "validate.yml", extra_vars={
        "gpu_tray_report_dir": str(report), "gpu_tray_num_vfs": 8, "gpu_tray_kubeconfig": kubeconfig,
        "gpu_tray_validate_phases": ["deployment", "trays"]})
    tests = {}
    for phase in ("deployment", "trays"):
        ctrf = json.loads((report / "validation" / "ctrf" / ("%s.json" % phase)).read_text())["results"]["tests"]
        tests[phase] = ctrf
    return run, tests


def rail_checks(tests):
    return dict((t["extra"]["object"], t) for t in tests["deployment"] if t["name"] == "sriov-rails")


def test_eight_vfs_asked_and_advertised_pass(fleet):
    kcluster("fault", "sriov-vfs", "all", "--count", "8")
    run, tests = validate(fleet, "eight")
    rails = rail_checks(tests)
    assert sorted(rails) == ["Node tray01", "Node tray02"], tests["deployment"]
    for node, check in rails.items():
        assert check["status"] == "passed", check
        assert check["message"] == "%s advertises 8 VFs on each of 4 rails" % node.replace("Node ", "node "), check
    trays = dict((t["name"], t) for t in tests["trays"])
    for tray in TRAYS:
        assert trays["%s/sriov-vfs" % tray]["status"] == "passed", trays["%s/sriov-vfs" % tray]
        assert trays["%s/sriov-vfs" % tray]["message"] == "All 32 VFs on 4 rails exist, bound to mlx5_core."
    assert "sriov-rails" not in run.stdout.split("Validation of", 1)[-1].split("Every finding")[0], run.stdout[-3000:]


def test_sixteen_advertised_where_eight_were_asked_fails_naming_the_rail(fleet):
    kcluster("fault", "sriov-vfs", "tray02", "--count", "16")
    run, tests = validate(fleet, "sixteen")
    assert run.returncode != 0
    rails = rail_checks(tests)
    assert rails["Node tray01"]["status"] == "passed"
    bad = rails["Node tray02"]
    assert bad["status"] == "failed"
    assert bad["message"].startswith("node tray02: nvidia.com/sriov_resource_rail_0=16 (expected 8), "), bad["message"]
