"""The rolling reboot (roles/rolling_reboot) on lab trays: a tray that does not come back stops the run (the trays
before it are done, the trays after it untouched), a re-run resumes, check mode reboots nothing, and topology
waves never take two trays of one rack down together while different racks reboot in parallel.

The 3-tray module also runs the test Kubernetes cluster (tests/cluster/kcluster: a real kube-apiserver with
nodes tray01..tray03 from the simulated kubelet), reached the way kubernetes.core finds it (K8S_AUTH_KUBECONFIG):
the role cordons and drains a tray's node before its reboot, uncordons it after, and leaves a failed tray's node
cordoned. The 4-tray module has no cluster configured (no K8S_AUTH_*/KUBECONFIG in the environment; on a machine
with a ~/.kube/config the role would use it): trays are not drained, and the report says why; a cluster that is
configured but cannot be read (K8S_AUTH_KUBECONFIG names no file, as a broken AWX credential would) stops the run
before any reboot.

The preparing roles are stood in for by tests/lab/playbooks/fake_prepare.yml (a GRUB drop-in + update-grub and
the facts the roles export), so these tests exercise only the reboot logic. Who was down when comes from the
lab's own records: boot counts, the supervisor log (nspawn exit 133 = a reboot) and each tray's power.log
(`<epoch> down boot N` when a shutdown begins, `<epoch> up boot N` once sshd runs).
"""
import datetime
import json
import subprocess
import sys

import pytest

from labtools import BIN, ROOT, STATE, ansible_env, lab, lab_up, ssh, tray_status

sys.path.insert(0, str(ROOT / "tests" / "cluster"))
from clusterhelpers import running_cluster  # noqa: E402  (tests/cluster is not a package)

PLAYBOOK = ROOT / "tests" / "lab" / "playbooks" / "fake_prepare.yml"
ARG = "gtl_rolling.test=1"
# short lab timeouts: a lab tray boots in seconds; the no-return tray must fail fast
FAST = {"rolling_reboot_timeout": 25, "rolling_reboot_post_reboot_delay": 1}


BROKEN_KUBECONFIG = "/nonexistent/gpu-tray-test-kubeconfig"
K8S_ENV = ("K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_CONTEXT", "KUBECONFIG")


def run(inventory, extra_vars, *args, report=None, kubeconfig=None):
    """ansible-playbook fake_prepare.yml; ``kubeconfig`` None = no cluster configured (no K8S_AUTH_* at all)."""
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory)]
    for extra in args:
        argv += list(extra) if isinstance(extra, (list, tuple)) else [extra]
    argv += [str(PLAYBOOK), "-e", json.dumps(dict(FAST, gpu_tray_report_dir=str(report), **extra_vars))]
    env = dict((k, v) for k, v in ansible_env().items() if k not in K8S_ENV)
    if kubeconfig is not None:
        env["K8S_AUTH_KUBECONFIG"] = kubeconfig
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def cluster():
    """The test cluster's admin kubeconfig: reuses a running cluster with >= 3 trays, else builds (cached) and
    starts one with 3 and stops it afterwards (clusterhelpers.running_cluster: skips only where tests/cluster
    skips, never with KCLUSTER_REQUIRE=1)."""
    with running_cluster(["--platform", "rke2-vr200", "--nodes", "3"], min_nodes=3) as (status, _started):
        yield status["kubeconfig"]


def cordoned(kubeconfig, node):
    from kubernetes import client, config
    api = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig))
    return bool(api.read_node(node).spec.unschedulable)


def boots(*trays):
    return [tray_status(t)["boot_count"] for t in trays]


def cmdline(tray):
    return ssh(tray, "cat /proc/cmdline").split()


def power_windows(tray):
    """[(down, up)] epoch pairs of every reboot of the tray (up is None when it never came back)."""
    path = STATE / "trays" / tray / "merged" / "var" / "log" / "gpu-tray-lab" / "power.log"
    events = [(float(t), what) for t, what, *_rest in (line.split() for line in path.read_text().splitlines())]
    windows, down = [], None
    for when, what in events:
        if what == "down":
            down = when
        elif what == "up" and down is not None:
            windows.append((down, when))
            down = None
    if down is not None:
        windows.append((down, None))
    return windows


def supervisor_reboots(tray):
    """Epochs of the supervisor's `systemd-nspawn exited with code 133` lines (the guest asked for a reboot)."""
    out = []
    for line in (STATE / "trays" / tray / "supervisor.log").read_text().splitlines():
        if "exited with code 133" in line:
            stamp = datetime.datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%f")
            out.append(stamp.timestamp())       # the supervisor logs local time
    return out


def overlap(a, b):
    end_a = a[1] if a[1] is not None else float("inf")
    end_b = b[1] if b[1] is not None else float("inf")
    return a[0] < end_b and b[0] < end_a


def report_row(report, tray):
    return next(r for r in json.loads((report / "rolling-reboot.json").read_text()) if r["tray"] == tray)


# ---------------------------------------------------------------- a tray that does not come back, then a resume

@pytest.fixture(scope="module")
def lab3(cluster):
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "3", "--fault", "no-return-from-reboot@2")
    yield inventory, cluster
    lab("down")


def test_check_mode_lists_the_trays_and_reboots_none(lab3, tmp_path):
    inventory, kubeconfig = lab3
    rc, out = run(inventory, {}, "--check", report=tmp_path, kubeconfig=kubeconfig)
    assert rc == 0, out
    assert "3 of 3 tray(s) need a reboot, in 3 wave(s)" in out, out
    for i, tray in enumerate(("tray01", "tray02", "tray03"), 1):
        assert "wave %d/3: %s (would reboot)" % (i, tray) in out, out
        assert report_row(tmp_path, tray)["status"] == "would reboot"
        assert report_row(tmp_path, tray)["drain"] == "drain"        # it would be drained: a node of the cluster
        assert not cordoned(kubeconfig, tray)
    assert boots("tray01", "tray02", "tray03") == [1, 1, 1]
    assert ssh("tray01", "ls /etc/default/grub.d/98-gtl-rolling-test.cfg 2>/dev/null || true") == "", \
        "check mode wrote the drop-in"


def test_no_return_from_reboot_stops_the_run_at_the_failed_tray(lab3, tmp_path):
    inventory, kubeconfig = lab3
    rc, out = run(inventory, {}, report=tmp_path, kubeconfig=kubeconfig)
    assert rc != 0, out
    # tray01: done - rebooted once, argument verified
    assert boots("tray01") == [2]
    assert ARG in cmdline("tray01")
    assert report_row(tmp_path, "tray01")["status"] == "rebooted"
    assert report_row(tmp_path, "tray01")["cmdline_verified"] == "yes"
    assert report_row(tmp_path, "tray01")["drain"] == "drained, uncordoned"
    assert "TASK [gpu_tray.cluster.rolling_reboot : Cordon and drain the node]" in out
    assert not cordoned(kubeconfig, "tray01")
    # tray02: reported, with what to check
    assert tray_status("tray02")["state"].startswith("down (fault no-return-from-reboot"), tray_status("tray02")
    row = report_row(tmp_path, "tray02")
    assert row["status"] == "FAILED" and row["rebooted"] == "did not come back", row
    assert "BMC console" in row["check"], row
    assert "BMC console" in out and "no further tray was touched" in out, out
    assert cordoned(kubeconfig, "tray02"), "the failed tray's node must stay cordoned"
    assert row["drain"] == "cordoned (left cordoned)", row
    # tray03: untouched - never rebooted, never asked to shut down, still without the argument
    assert boots("tray03") == [1]
    assert power_windows("tray03") == []
    assert ARG not in cmdline("tray03")
    assert report_row(tmp_path, "tray03")["status"] == "not reached"
    assert not cordoned(kubeconfig, "tray03")
    assert "Stopped because tray02 failed in wave 2" in out, out
    md = (tmp_path / "rolling-reboot.md").read_text()
    assert "| tray02 |" in md and "FAILED" in md and "## Failed" in md


def test_rerun_resumes_after_the_failed_tray_is_back(lab3, tmp_path):
    inventory, kubeconfig = lab3
    lab("up", "--platform", "rke2-vr200", "--trays", "3", "--fault", "no-return-from-reboot@2")   # powers tray02 on
    assert boots("tray01", "tray02", "tray03") == [2, 2, 1]
    assert ARG in cmdline("tray02")               # its grub.cfg was regenerated before the reboot that hung
    rc, out = run(inventory, {}, report=tmp_path, kubeconfig=kubeconfig)
    assert rc == 0, out
    assert "1 of 3 tray(s) need a reboot, in 1 wave(s)" in out, out
    assert "wave 1/1: tray03" in out, out
    assert boots("tray01", "tray02", "tray03") == [2, 2, 2]   # only tray03 rebooted
    assert ARG in cmdline("tray03")
    assert [report_row(tmp_path, t)["status"] for t in ("tray01", "tray02", "tray03")] == \
        ["no reboot needed", "no reboot needed", "rebooted"]
    assert not cordoned(kubeconfig, "tray03")
    # tray02 came back in the wanted state without us: skipped, and left cordoned for a person to look at
    assert cordoned(kubeconfig, "tray02")
    # a third run has nothing to do
    rc, out = run(inventory, {}, report=tmp_path, kubeconfig=kubeconfig)
    assert rc == 0 and "0 of 3 tray(s) need a reboot, in 0 wave(s)" in out, out
    assert boots("tray01", "tray02", "tray03") == [2, 2, 2]


# ---------------------------------------------------------------- topology waves

@pytest.fixture(scope="module")
def lab4(tmp_path_factory):
    inventory = lab_up("--platform", "nvke-gb200", "--trays", "4")
    racks = tmp_path_factory.mktemp("racks") / "racks.yml"
    racks.write_text("all:\n  children:\n    gpu_trays:\n      hosts:\n"
                     "        tray01: {rack: A}\n        tray02: {rack: A}\n"
                     "        tray03: {rack: B}\n        tray04: {rack: B}\n")
    yield inventory, racks
    lab("down")


def test_topology_waves_never_take_two_trays_of_a_rack_down_together(lab4, tmp_path):
    inventory, racks = lab4
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack"}, ["-i", str(racks)], report=tmp_path)
    assert rc == 0, out
    assert "4 of 4 tray(s) need a reboot, in 2 wave(s) (batch 1, one batch per rack at a time); up to 2 tray(s) reboot" \
        " at once" in out, out
    assert "wave 1/2: tray01, tray03" in out and "wave 2/2: tray02, tray04" in out, out
    trays = ("tray01", "tray02", "tray03", "tray04")
    assert boots(*trays) == [2, 2, 2, 2]                        # exactly one reboot each
    windows = dict((t, power_windows(t)) for t in trays)
    for tray in trays:
        assert len(windows[tray]) == 1 and windows[tray][0][1] is not None, (tray, windows[tray])
        # the supervisor saw the reboot inside that window
        (exit_133,) = supervisor_reboots(tray)
        down, up = windows[tray][0]
        assert down - 0.5 <= exit_133 <= up + 0.5, (tray, down, exit_133, up)
    rack = {"tray01": "A", "tray02": "A", "tray03": "B", "tray04": "B"}
    for a in trays:
        for b in trays:
            if a < b and rack[a] == rack[b]:
                assert not overlap(windows[a][0], windows[b][0]), ("same rack down together", a, b, windows)
    # and the racks did reboot in parallel: each wave's two trays were down at the same time
    assert overlap(windows["tray01"][0], windows["tray03"][0]), windows
    assert overlap(windows["tray02"][0], windows["tray04"][0]), windows
    rows = dict((t, report_row(tmp_path, t)) for t in trays)
    assert [rows[t]["wave"] for t in trays] == [1, 2, 1, 2]
    assert all(rows[t]["group"] == rack[t] and rows[t]["rebooted"] == "yes" for t in trays), rows
    assert all(rows[t]["changed_roles"] == ["lab_test"] and rows[t]["reboot_required_by"] == ["lab_test"] for t in trays)
    assert all(rows[t]["drain"] == "not drained: no cluster" for t in trays), rows
    report = (tmp_path / "rolling-reboot.md").read_text()
    assert report.count("No cluster configured: trays rebooted without drain") == 1, report


def test_a_wave_wider_than_the_forks_stops_the_run_before_any_reboot(lab4, tmp_path):
    """ansible.builtin.reboot holds a fork for a tray's whole reboot: 2 racks in parallel need 2 forks."""
    inventory, racks = lab4
    before = boots("tray01", "tray02", "tray03", "tray04")
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack", "lab_test_arg": "gtl_rolling.test=4"}, ["-i", str(racks)],
                  ["--forks", "1"], report=tmp_path)
    assert rc != 0, out
    assert "up to 2 tray(s) reboot at once (this run has forks 1)" in out, out
    assert "A wave of 2 trays needs 2 forks to reboot together, this run has 1" in out, out
    assert "Run with --forks 2" in out and "Reboot the trays wave by wave" not in out, out
    assert boots("tray01", "tray02", "tray03", "tray04") == before


def test_a_tray_without_its_group_variable_is_refused_before_any_reboot(lab4, tmp_path):
    inventory, _racks = lab4
    before = boots("tray01", "tray02", "tray03", "tray04")
    # a new argument: every tray needs a reboot again, but the plain lab inventory has no rack variable
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack", "lab_test_arg": "gtl_rolling.test=2"}, report=tmp_path)
    assert rc != 0, out
    assert "rack is not set for tray01, tray02, tray03, tray04" in out, out
    assert boots("tray01", "tray02", "tray03", "tray04") == before


def test_a_configured_cluster_that_cannot_be_read_stops_the_run_before_any_reboot(lab4, tmp_path):
    """A broken credential (here K8S_AUTH_KUBECONFIG naming no file) must not turn into undrained reboots."""
    inventory, _racks = lab4
    before = boots("tray01", "tray02", "tray03", "tray04")
    rc, out = run(inventory, {"lab_test_arg": "gtl_rolling.test=3"}, report=tmp_path, kubeconfig=BROKEN_KUBECONFIG)
    assert rc != 0, out
    assert "The Kubernetes cluster configured by K8S_AUTH_KUBECONFIG=%s cannot be read" % BROKEN_KUBECONFIG in out, out
    assert "set rolling_reboot_drain to never" in out, out
    assert "Reboot the trays wave by wave" not in out, out
    assert boots("tray01", "tray02", "tray03", "tray04") == before
    # with the drain explicitly off the same run reboots (each tray once) and says why nobody was drained
    rc, out = run(inventory, {"lab_test_arg": "gtl_rolling.test=3", "rolling_reboot_drain": "never"},
                  report=tmp_path, kubeconfig=BROKEN_KUBECONFIG)
    assert rc == 0, out
    assert boots("tray01", "tray02", "tray03", "tray04") == [b + 1 for b in before]
    assert report_row(tmp_path, "tray01")["drain"] == "not drained: rolling_reboot_drain is never"
