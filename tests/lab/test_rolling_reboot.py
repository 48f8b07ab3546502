"""The rolling reboot (roles/rolling_reboot) on lab trays: the strategies' waves as the lab's power records show them,
a tray that does not come back stops the run (the trays before it are done, the trays after it untouched), a re-run
resumes, check mode reboots nothing, and a wave's trays are down together whatever the run's forks.

The 4-tray module also runs the test Kubernetes cluster (tests/cluster/kcluster: a real kube-apiserver with nodes
tray01..tray04 from the simulated kubelet), reached the way kubernetes.core finds it (K8S_AUTH_KUBECONFIG). tray01 and
tray02 (rack A) run a workload pod each and so are busy; tray03 and tray04 (rack B) run only a DaemonSet's pods and so
are idle. Strategy auto: the canary tray03 alone, then tray04 together with the busy trays' first rolling batch
(tray01), then tray02 - the busy ones drained, one of rack A at a time; a tray that does not come back (tray01) stops
the run with its node left cordoned.

The 8-tray module has no cluster configured (no K8S_AUTH_*/KUBECONFIG in the environment; on a machine with a
~/.kube/config the role would use it): every tray is idle and nobody is drained, and the report says why. Two racks of
four: the canary, then the other seven down together with --forks 2; strategy rolling one tray per rack at a time; a
cluster that is configured but cannot be read (K8S_AUTH_KUBECONFIG names no file, as a broken AWX credential would)
stops the run before any reboot.

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
sys.path.insert(0, str(ROOT / "lab"))
from clusterhelpers import running_cluster, two_context_kubeconfig  # noqa: E402  (tests/cluster is not a package)
from gpu_tray_lab import powerlog  # noqa: E402  (the lab's own reading of the power logs)

PLAYBOOK = ROOT / "tests" / "lab" / "playbooks" / "fake_prepare.yml"
ARG = "gtl_rolling.test=1"
# short lab timeouts: a lab tray boots in seconds; the no-return tray must fail fast
FAST = {"rolling_reboot_timeout": 25, "rolling_reboot_post_reboot_delay": 1}


BROKEN_KUBECONFIG = "/nonexistent/gpu-tray-test-kubeconfig"
K8S_ENV = ("K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_CONTEXT", "KUBECONFIG")


def run(inventory, extra_vars, *args, report=None, kubeconfig=None):
    """ansible-playbook fake_prepare.yml; ``kubeconfig`` None = no cluster configured (no K8S_AUTH_* at all). The test
    cluster is named as a site names it (issue 44): gpu_tray_kubeconfig, a kubeconfig whose current context is a
    closed port, and gpu_tray_kube_context naming the cluster's - the drain and the node reads reach it only through
    the run's connection. BROKEN_KUBECONFIG comes as an AWX credential does (K8S_AUTH_KUBECONFIG)."""
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory)]
    for extra in args:
        argv += list(extra) if isinstance(extra, (list, tuple)) else [extra]
    connection = {}
    env = dict((k, v) for k, v in ansible_env().items() if k not in K8S_ENV)
    if kubeconfig == BROKEN_KUBECONFIG:
        env["K8S_AUTH_KUBECONFIG"] = kubeconfig
    elif kubeconfig is not None:
        path, context = two_context_kubeconfig(kubeconfig, report / "two-contexts.kubeconfig")
        connection = {"gpu_tray_kubeconfig": path, "gpu_tray_kube_context": context}
    argv += [str(PLAYBOOK), "-e", json.dumps(dict(FAST, gpu_tray_report_dir=str(report), **dict(connection, **extra_vars)))]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def cluster():
    """The test cluster's admin kubeconfig: reuses a running cluster with >= 4 trays, else builds (cached) and
    starts one with 4 and stops it afterwards (clusterhelpers.running_cluster: skips only where tests/cluster
    skips, never with KCLUSTER_REQUIRE=1)."""
    with running_cluster(["--platform", "rke2-vr200", "--nodes", "4"], min_nodes=4) as (status, _started):
        yield status["kubeconfig"]


def racks(tmp_path_factory, **rack_of):
    """An inventory that adds each tray's rack (the group variable of gpu_tray_reboot_group_by)."""
    path = tmp_path_factory.mktemp("racks") / "racks.yml"
    path.write_text("all:\n  children:\n    gpu_trays:\n      hosts:\n" + "".join(
        "        %s: {rack: %s}\n" % (tray, rack) for tray, rack in sorted(rack_of.items())))
    return path


WORKLOADS = "rr-test"


def workloads(kubeconfig, busy, nodes):
    """A DaemonSet on every node (leaves a node idle) and one Deployment pinned to each tray of ``busy`` (makes it
    busy); returns (the core API) once each of ``nodes`` has its DaemonSet pod and every workload pod runs."""
    import time
    from kubernetes import client, config
    api = config.new_client_from_config(config_file=kubeconfig)
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    core.create_namespace({"metadata": {"name": WORKLOADS}})
    container = {"name": "c", "image": "registry.invalid/idle:1"}
    apps.create_namespaced_daemon_set(WORKLOADS, {
        "metadata": {"name": "node-agent"},
        "spec": {"selector": {"matchLabels": {"app": "node-agent"}},
                 "template": {"metadata": {"labels": {"app": "node-agent"}}, "spec": {"containers": [container]}}}})
    for tray in busy:
        apps.create_namespaced_deployment(WORKLOADS, {
            "metadata": {"name": "work-" + tray},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "work-" + tray}},
                     "template": {"metadata": {"labels": {"app": "work-" + tray}},
                                  "spec": {"nodeSelector": {"kubernetes.io/hostname": tray},
                                           "containers": [container]}}}})
    deadline = time.time() + 120
    while True:
        running = [(p.metadata.name, p.spec.node_name) for p in core.list_namespaced_pod(WORKLOADS).items
                   if p.status.phase == "Running"]
        agents = set(node for name, node in running if name.startswith("node-agent"))
        work = set(node for name, node in running if name.startswith("work-"))
        if agents >= set(nodes) and work == set(busy):
            return core
        assert time.time() < deadline, "workloads not running: %s" % running
        time.sleep(1)


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
    return powerlog.windows(tray, STATE)


def periods(*trays):
    """The reboot periods the trays' power logs show (lab/gpu_tray_lab/powerlog.py), as lists of trays."""
    return [sorted(p["trays"]) for p in powerlog.periods(dict((t, power_windows(t)) for t in trays))]


def supervisor_reboots(tray):
    """Epochs of the supervisor's `systemd-nspawn exited with code 133` lines (the guest asked for a reboot)."""
    out = []
    for line in (STATE / "trays" / tray / "supervisor.log").read_text().splitlines():
        if "exited with code 133" in line:
            stamp = datetime.datetime.strptime(line.split()[0], "%Y-%m-%dT%H:%M:%S.%f")
            out.append(stamp.timestamp())       # the supervisor logs local time
    return out


overlap = powerlog.overlap


def report_row(report, tray):
    return next(r for r in json.loads((report / "rolling-reboot.json").read_text()) if r["tray"] == tray)


# ---------------------------------------------------------------- auto on a cluster: idle canary, busy rolling

TRAYS4 = ("tray01", "tray02", "tray03", "tray04")
RACKS4 = {"tray01": "A", "tray02": "A", "tray03": "B", "tray04": "B"}


@pytest.fixture(scope="module")
def lab4(cluster, tmp_path_factory):
    """4 rke2-vr200 trays; tray01 and tray02 (rack A) run a workload pod, tray03 and tray04 (rack B) only a
    DaemonSet's; tray01 hangs in POST after its reboot (no-return-from-reboot)."""
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "4", "--fault", "no-return-from-reboot@1")
    core = workloads(cluster, busy=("tray01", "tray02"), nodes=TRAYS4)
    try:
        yield inventory, cluster, racks(tmp_path_factory, **RACKS4)
    finally:
        lab("down")
        core.delete_namespace(WORKLOADS)
        for tray in TRAYS4:
            core.patch_node(tray, {"spec": {"unschedulable": False}})


def test_check_mode_prints_the_plan_idle_and_busy_and_reboots_none(lab4, tmp_path):
    inventory, kubeconfig, rack_file = lab4
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack"}, ["-i", str(rack_file)], "--check",
                  report=tmp_path, kubeconfig=kubeconfig)
    assert rc == 0, out
    assert "4 of 4 tray(s) need a reboot, in 3 reboot period(s) (strategy auto): 2 idle (tray03, tray04), 2 busy " \
           "(tray01, tray02); canary tray03, then the other 1 idle together, the 2 busy rolling (batch 1, one batch " \
           "per rack at a time). Check mode: nothing is rebooted." in out, out
    assert "wave 1/3 (canary): tray03 (would reboot)" in out, out
    assert "wave 2/3 (1 together + 1 rolling): tray01, tray04 (would reboot)" in out, out
    assert "wave 3/3 (1 rolling): tray02 (would reboot)" in out, out
    assert "busy: tray01 - runs 1 workload pod(s): rr-test/work-tray01-" in out, out
    for tray in TRAYS4:
        row = report_row(tmp_path, tray)
        assert row["status"] == "would reboot" and row["drain"] == "drain", row      # each a node: it would be drained
        assert not cordoned(kubeconfig, tray)
    assert report_row(tmp_path, "tray03")["idle_why"] == "runs only DaemonSet and static pods"
    assert boots(*TRAYS4) == [1, 1, 1, 1]
    assert ssh("tray01", "ls /etc/default/grub.d/98-gtl-rolling-test.cfg 2>/dev/null || true") == "", \
        "check mode wrote the drop-in"


def test_idle_trays_canary_then_together_busy_ones_rolling_and_a_tray_that_does_not_come_back_stops_the_run(
        lab4, tmp_path):
    inventory, kubeconfig, rack_file = lab4
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack"}, ["-i", str(rack_file)], report=tmp_path,
                  kubeconfig=kubeconfig)
    assert rc != 0, out
    # tray03, the canary, alone: nothing else was down while it was
    assert periods(*TRAYS4)[0] == ["tray03"], periods(*TRAYS4)
    # then tray04 (idle) and tray01 (busy, the first of rack A) down together
    (down4, up4), = power_windows("tray04")
    (down1, up1), = power_windows("tray01")
    assert up1 is None and overlap((down4, up4), (down1, up1)), (power_windows("tray04"), power_windows("tray01"))
    assert power_windows("tray03")[0][1] < min(down1, down4)
    # tray03 and tray04: done - rebooted once, argument verified, drained (nothing to evict) and uncordoned
    assert boots("tray03", "tray04") == [2, 2]
    for tray, role in (("tray03", "canary"), ("tray04", "together")):
        row = report_row(tmp_path, tray)
        assert (row["status"], row["role"], row["idle"], row["cmdline_verified"], row["drain"]) == \
            ("rebooted", role, "idle", "yes", "drained, uncordoned"), row
        assert ARG in cmdline(tray) and not cordoned(kubeconfig, tray)
        assert row["down_at"] < row["up_at"] and row["reboot_seconds"] > 0, row
    # tray01: busy, drained - its workload pod evicted - then it did not come back: reported, left cordoned
    assert tray_status("tray01")["state"].startswith("down (fault no-return-from-reboot"), tray_status("tray01")
    row = report_row(tmp_path, "tray01")
    assert (row["status"], row["role"], row["idle"], row["rebooted"]) == \
        ("FAILED", "rolling", "busy", "did not come back"), row
    assert row["idle_why"].startswith("runs 1 workload pod(s): rr-test/work-tray01-"), row
    assert "BMC console" in row["check"] and row["drain"] == "cordoned (left cordoned)", row
    assert cordoned(kubeconfig, "tray01"), "the failed tray's node must stay cordoned"
    assert "TASK [gpu_tray.cluster.rolling_reboot : Cordon and drain the node]" in out
    assert "Stopped because tray01 failed in wave 2" in out and "no further tray was touched" in out, out
    # tray02: busy, of tray01's rack, planned for the wave after: untouched
    assert boots("tray02") == [1] and power_windows("tray02") == [] and ARG not in cmdline("tray02")
    assert report_row(tmp_path, "tray02")["status"] == "not reached" and not cordoned(kubeconfig, "tray02")
    # progress: when each wave started, how many trays went down, the last reboot and an estimate
    assert "wave 1/3 (canary) started " in out and "UTC: 1 tray(s) going down; no reboot measured yet" in out, out
    assert "wave 2/3 (1 together + 1 rolling) started " in out, out
    assert "UTC: 2 tray(s) going down; the last reboot took " in out, out
    assert "(tray03, wave 1); 2 period(s) left with this one, about " in out, out
    assert "wave 2/3 (1 together + 1 rolling) done in " in out and "; FAILED: tray01." in out, out
    md = (tmp_path / "rolling-reboot.md").read_text()
    assert "| tray01 |" in md and "## Failed" in md and "## Waves" in md and "## Busy trays" in md, md
    assert "**Stopped:** Stopped because tray01 failed in wave 2" in md, md


def test_the_rerun_resumes_with_the_busy_tray_rolling_drained(lab4, tmp_path):
    inventory, kubeconfig, rack_file = lab4
    lab("up", "--platform", "rke2-vr200", "--trays", "4", "--fault", "no-return-from-reboot@1")   # powers tray01 on
    assert boots(*TRAYS4) == [2, 1, 2, 2]
    assert ARG in cmdline("tray01")               # its grub.cfg was regenerated before the reboot that hung
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack"}, ["-i", str(rack_file)], report=tmp_path,
                  kubeconfig=kubeconfig)
    assert rc == 0, out
    assert "1 of 4 tray(s) need a reboot, in 1 reboot period(s) (strategy auto): 0 idle, 1 busy (tray02); busy " \
           "trays rolling" in out, out
    assert boots(*TRAYS4) == [2, 2, 2, 2]         # only tray02 rebooted
    row = report_row(tmp_path, "tray02")
    assert (row["status"], row["role"], row["drain"]) == ("rebooted", "rolling", "drained, uncordoned"), row
    assert ARG in cmdline("tray02") and not cordoned(kubeconfig, "tray02")
    # tray01 came back in the wanted state without us: skipped, and left cordoned for a person to look at
    assert report_row(tmp_path, "tray01")["status"] == "no reboot needed" and cordoned(kubeconfig, "tray01")


# ---------------------------------------------------------------- a fresh fleet: a canary, then everything else

TRAYS8 = tuple("tray%02d" % i for i in range(1, 9))
RACKS8 = dict((t, "A" if i < 4 else "B") for i, t in enumerate(TRAYS8))


@pytest.fixture(scope="module")
def lab8(tmp_path_factory):
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "8")
    yield inventory, racks(tmp_path_factory, **RACKS8)
    lab("down")


def test_a_fresh_fleet_comes_up_in_two_reboot_periods_whatever_the_forks(lab8, tmp_path):
    """2 racks x 4, no cluster, --forks 2: the canary alone, then the other 7 down together (the forks bound only how
    fast the reboots are sent and waited for); each tray rebooted once and verified; a re-run reboots nothing."""
    inventory, rack_file = lab8
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack"}, ["-i", str(rack_file)], ["--forks", "2"],
                  report=tmp_path)
    assert rc == 0, out
    assert "8 of 8 tray(s) need a reboot, in 2 reboot period(s) (strategy auto): 8 idle, 0 busy - no cluster " \
           "configured: every tray counts as idle; canary tray01, then the other 7 together." in out, out
    assert periods(*TRAYS8) == [["tray01"], list(TRAYS8[1:])], periods(*TRAYS8)
    # the 7 were down at the same moment: every window of the second period holds the latest "down" of them
    second = [power_windows(t)[0] for t in TRAYS8[1:]]
    last_down = max(down for down, _up in second)
    assert all(down <= last_down < up for down, up in second), second
    assert boots(*TRAYS8) == [2] * 8                                # exactly one reboot each
    for tray in TRAYS8:
        (exit_133,) = supervisor_reboots(tray)
        (down, up), = power_windows(tray)
        assert down - 0.5 <= exit_133 <= up + 0.5, (tray, down, exit_133, up)
        row = report_row(tmp_path, tray)
        assert (row["status"], row["cmdline_verified"], row["rebooted"]) == ("rebooted", "yes", "yes"), row
        assert row["role"] == ("canary" if tray == "tray01" else "together") and row["group"] == RACKS8[tray]
        assert row["drain"] == "not drained: no cluster" and row["reboot_required_by"] == ["lab_test"]
        assert row["wave_timing"]["wave"] == row["wave"] and row["wave_timing"]["seconds"] > 0, row
    # progress and report: per-wave start, trays down, the last reboot, an estimate; per-tray down/up times
    assert "wave 2/2 (7 together) started " in out and "UTC: 7 tray(s) going down; the last reboot took " in out, out
    assert "(tray01, wave 1); 1 period(s) left with this one, about " in out, out
    assert "wave 2/2 (7 together) done in " in out and ": 7 tray(s) back, reboots took " in out, out
    md = (tmp_path / "rolling-reboot.md").read_text()
    assert md.count("No cluster configured: trays rebooted without drain") == 1, md
    assert "## Waves" in md and "| 1 (canary) | tray01 |" in md and "| 2 (7 together) | tray02, tray03" in md, md
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack"}, ["-i", str(rack_file)], report=tmp_path)
    assert rc == 0 and "0 of 8 tray(s) need a reboot, in 0 reboot period(s)" in out, out
    assert boots(*TRAYS8) == [2] * 8


def test_rolling_never_takes_two_trays_of_a_rack_down_together(lab8, tmp_path):
    inventory, rack_file = lab8
    trays = ("tray01", "tray02", "tray05", "tray06")
    before = dict((t, len(power_windows(t))) for t in trays)
    rc, out = run(inventory, {"gpu_tray_reboot_group_by": "rack", "gpu_tray_reboot_strategy": "rolling",
                              "lab_test_arg": "gtl_rolling.test=2"}, ["-i", str(rack_file)],
                  ["--limit", ",".join(trays)], report=tmp_path)
    assert rc == 0, out
    assert "4 of 4 tray(s) need a reboot, in 2 reboot period(s) (strategy rolling, batch 1, one batch per rack at a " \
           "time)." in out, out
    assert "wave 1/2 (2 rolling): tray01, tray05" in out and "wave 2/2 (2 rolling): tray02, tray06" in out, out
    windows = dict((t, power_windows(t)[before[t]:]) for t in trays)
    assert all(len(w) == 1 and w[0][1] is not None for w in windows.values()), windows
    assert not overlap(windows["tray01"][0], windows["tray02"][0]) and \
        not overlap(windows["tray05"][0], windows["tray06"][0]), windows        # never two of a rack
    assert overlap(windows["tray01"][0], windows["tray05"][0]), windows        # the racks in parallel
    assert overlap(windows["tray02"][0], windows["tray06"][0]), windows
    assert [report_row(tmp_path, t)["wave"] for t in trays] == [1, 2, 1, 2]


def test_a_tray_without_its_group_variable_is_refused_before_any_reboot(lab8, tmp_path):
    before = boots(*TRAYS8)
    # a new argument: every tray needs a reboot again, but the plain lab inventory has no rack variable
    rc, out = run(lab8[0], {"gpu_tray_reboot_group_by": "rack", "lab_test_arg": "gtl_rolling.test=3"},
                  report=tmp_path)
    assert rc != 0, out
    assert "rack is not set for tray01, tray02, tray03, tray04, tray05, tray06, tray07, tray08" in out, out
    assert boots(*TRAYS8) == before
    # the report is written all the same, saying why nothing was rebooted
    assert "**Refused:** rack is not set for tray01" in (tmp_path / "rolling-reboot.md").read_text()


def test_a_configured_cluster_that_cannot_be_read_stops_the_run_before_any_reboot(lab8, tmp_path):
    """A broken credential (here K8S_AUTH_KUBECONFIG naming no file) must not turn into undrained reboots."""
    inventory, rack_file = lab8
    before = boots(*TRAYS8)
    extra = {"lab_test_arg": "gtl_rolling.test=4", "gpu_tray_reboot_group_by": "rack"}
    limit = ["--limit", "tray01,tray05"]
    rc, out = run(inventory, extra, ["-i", str(rack_file)], limit, report=tmp_path, kubeconfig=BROKEN_KUBECONFIG)
    assert rc != 0, out
    assert "The Kubernetes cluster configured by K8S_AUTH_KUBECONFIG=%s cannot be read" % BROKEN_KUBECONFIG in out, out
    assert "set rolling_reboot_drain to never" in out and "Reboot the trays wave by wave" not in out, out
    assert boots(*TRAYS8) == before
    # with the drain explicitly off the same run reboots; the cluster is not read, so every tray counts as busy
    rc, out = run(inventory, dict(extra, rolling_reboot_drain="never"), ["-i", str(rack_file)], limit,
                  report=tmp_path, kubeconfig=BROKEN_KUBECONFIG)
    assert rc == 0, out
    assert "rolling_reboot_drain is never: every tray counts as busy; busy trays rolling" in out, out
    assert boots("tray01", "tray05") == [before[0] + 1, before[4] + 1]
    assert report_row(tmp_path, "tray01")["drain"] == "not drained: rolling_reboot_drain is never"
