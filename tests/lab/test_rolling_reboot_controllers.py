"""The rolling reboot beside the other controllers that take GPU nodes down, on the test cluster with lab trays as
its nodes:

* it drains through NVIDIA's Maintenance Operator when the cluster runs one, so our reboots and the SR-IOV config
  daemon's drains share one budget (MaintenanceOperatorConfig maxParallelOperations: 1 on NVKE);
* it refuses to run beside NodeWright / Skyhook objects that would reboot the same trays (aicr#2572).

On the test cluster (real kube-apiserver; nodes tray01, tray02 from the simulated kubelet) with the REAL NodeMaintenance
CRD (from the upstream data, ../shared/upstream: tests/cluster/upstreamdata.py) and tests/cluster/maintenance_controller.py standing
in for the operator (it schedules NodeMaintenance objects oldest first within maxParallelOperations 1, cordons,
reports Ready, uncordons and drops its finalizer on deletion, and logs every event with its time). A Deployment named
maintenance-operator makes `rolling_reboot_drain_via: auto` choose the operator, as on a real NVKE cluster.

tray01 runs a workload pod, so it is busy and strategy auto reboots it the rolling way, through the operator (an idle
tray would be drained directly: it has nothing the budget protects). While an SR-IOV NodeMaintenance (requestor
nvidia.network-operator-drain-controller) holds the budget on tray02, the reboot of lab tray01 waits; it is
scheduled only after that one is released, and tray01 goes down only after that.
A reboot whose NodeMaintenance never becomes Ready stops the run with the NodeMaintenance left in place.

The Skyhook CRD is the real one (the upstream data); the NodeWright CRD is made from it (the v0.18 rename kept the
spec; no NodeWright CRD is public yet, charts/nodewright/SOURCE there).
"""
import json
import pathlib
import subprocess
import sys
import time

import pytest
import yaml

from labtools import BIN, ROOT, ansible_env, lab, lab_up
from test_rolling_reboot import (ARG, FAST, K8S_ENV, PLAYBOOK, WORKLOADS, boots, cmdline, cordoned, power_windows,
                                 report_row, workloads)

sys.path.insert(0, str(ROOT / "tests" / "cluster"))
from clusterhelpers import running_cluster  # noqa: E402  (tests/cluster is not a package)
from upstreamdata import upstream_crd  # noqa: E402

GROUP, VERSION, PLURAL = "maintenance.nvidia.com", "v1alpha1", "nodemaintenances"
OURS = "gpu-tray-rolling-reboot-tray01"
SRIOV = "sriov-drain-tray02"


@pytest.fixture(scope="module")
def mo(tmp_path_factory):
    from kubernetes import client, config
    with running_cluster(["--platform", "rke2-vr200", "--nodes", "2"], min_nodes=2) as (status, _started):
        kubeconfig = status["kubeconfig"]
        api = config.new_client_from_config(config_file=kubeconfig)
        ext, core, apps = client.ApiextensionsV1Api(api), client.CoreV1Api(api), client.AppsV1Api(api)
        custom = client.CustomObjectsApi(api)
        skyhook = yaml.safe_load(pathlib.Path(upstream_crd("skyhook")).read_text())
        # kube-apiserver 1.20 reads the empty-string default of status.packageList (a printer-column field the
        # operator fills) as null and rejects the CRD; newer servers take it. Only that default is dropped here.
        status = skyhook["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
        assert status["packageList"].pop("default") == ""
        nodewright = json.loads(json.dumps(skyhook).replace("skyhook.nvidia.com", "nodewright.nvidia.com")
                                .replace('"Skyhook"', '"NodeWright"').replace('"SkyhookList"', '"NodeWrightList"')
                                .replace('"skyhooks', '"nodewrights').replace('"skyhook"', '"nodewright"'))
        crds = [yaml.safe_load(pathlib.Path(upstream_crd("maintenance")).read_text()), skyhook, nodewright]
        for body in crds:
            ext.create_custom_resource_definition(body)
        deadline = time.time() + 60
        for body in crds:
            while not any(c.type == "Established" and c.status == "True" for c in
                          ext.read_custom_resource_definition(body["metadata"]["name"]).status.conditions or []):
                assert time.time() < deadline, "CRD %s is not Established" % body["metadata"]["name"]
                time.sleep(0.5)
        core.create_namespace({"metadata": {"name": "mo-test"}})
        apps.create_namespaced_deployment("mo-test", {
            "metadata": {"name": "maintenance-operator"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "mo"}},
                     "template": {"metadata": {"labels": {"app": "mo"}},
                                  "spec": {"containers": [{"name": "m", "image": "registry.invalid/mo:1"}]}}}})
        log = tmp_path_factory.mktemp("mo") / "events.log"
        operator = subprocess.Popen([sys.executable, str(ROOT / "tests" / "cluster" / "maintenance_controller.py"),
                                     kubeconfig, str(log), "1"])
        # the stand-in opens its log once it has imported the kubernetes client: seconds on a loaded machine
        deadline = time.time() + 60
        while not log.exists():
            assert operator.poll() is None, "the maintenance controller stand-in exited (rc %s)" % operator.returncode
            assert time.time() < deadline, "the maintenance controller stand-in did not open %s in 60 s" % log
            time.sleep(0.25)
        inventory = lab_up("--platform", "rke2-vr200", "--trays", "2")
        workloads(kubeconfig, busy=("tray01",), nodes=("tray01", "tray02"))
        try:
            yield {"inventory": inventory, "kubeconfig": kubeconfig, "log": log, "custom": custom}
        finally:
            lab("down")
            for obj in custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)["items"]:
                custom.delete_namespaced_custom_object(GROUP, VERSION, obj["metadata"]["namespace"], PLURAL,
                                                       obj["metadata"]["name"])
            time.sleep(2)                           # the stand-in releases them (uncordon, finalizer)
            operator.terminate()
            operator.wait(timeout=30)
            for obj in custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)["items"]:
                custom.patch_namespaced_custom_object(GROUP, VERSION, obj["metadata"]["namespace"], PLURAL,
                                                      obj["metadata"]["name"], {"metadata": {"finalizers": []}})
            for body in crds:
                ext.delete_custom_resource_definition(body["metadata"]["name"])
            core.delete_namespace("mo-test")
            core.delete_namespace(WORKLOADS)
            for node in ("tray01", "tray02"):
                core.patch_node(node, {"spec": {"unschedulable": False}})


def events(log):
    out = []
    for line in (log.read_text() if log.exists() else "").splitlines():
        stamp, what, name, node, requestor = line.split()
        out.append((float(stamp), what, name, node, requestor))
    return out


def when(log, what, name, timeout=60, after=0.0):
    """The time of the first `what` event of `name` after `after`, waiting for it up to `timeout` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        hit = [e[0] for e in events(log) if e[1] == what and e[2] == name and e[0] >= after]
        if hit:
            return hit[0]
        time.sleep(0.25)
    raise AssertionError("no %s %s in %s" % (what, name, log.read_text()))


def hold_budget(mo):
    """The SR-IOV config daemon's drain of tray02, through the network operator's drain controller."""
    t0 = time.time()
    mo["custom"].create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, {
        "apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "NodeMaintenance", "metadata": {"name": SRIOV},
        "spec": {"requestorID": "nvidia.network-operator-drain-controller", "nodeName": "tray02", "cordon": True}})
    return when(mo["log"], "ready", "default/" + SRIOV, after=t0)


def start(mo, report, **extra):
    argv = [str(BIN / "ansible-playbook"), "-i", str(mo["inventory"]), "--limit", "tray01", str(PLAYBOOK),
            "-e", json.dumps(dict(FAST, gpu_tray_report_dir=str(report), **extra))]
    env = dict((k, v) for k, v in ansible_env().items() if k not in K8S_ENV)
    env["K8S_AUTH_KUBECONFIG"] = mo["kubeconfig"]
    return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def ours_exists(mo):
    from kubernetes.client.rest import ApiException
    try:
        return mo["custom"].get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, OURS)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_the_reboot_waits_for_the_budget_and_never_overlaps_an_sriov_drain(mo, tmp_path):
    hold_budget(mo)
    proc = start(mo, tmp_path)
    pending = when(mo["log"], "pending", "default/" + OURS, timeout=180)
    time.sleep(8)                                   # the budget is held: our NodeMaintenance stays pending
    assert proc.poll() is None, proc.communicate()[0]
    assert boots("tray01") == [1] and power_windows("tray01") == []
    assert not [e for e in events(mo["log"]) if e[1] == "scheduled" and e[2] == "default/" + OURS]
    mo["custom"].delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, SRIOV)
    out = proc.communicate(timeout=900)[0]
    assert proc.returncode == 0, out
    released = when(mo["log"], "released", "default/" + SRIOV)
    scheduled = when(mo["log"], "scheduled", "default/" + OURS)
    ready = when(mo["log"], "ready", "default/" + OURS)
    assert pending < released < scheduled < ready, events(mo["log"])
    down, up = power_windows("tray01")[0]
    assert down > ready and up is not None, (down, ready)      # tray01 went down only once it held the budget
    assert when(mo["log"], "released", "default/" + OURS) > up   # and released its slot after it came back
    assert boots("tray01", "tray02") == [2, 1] and ARG in cmdline("tray01")
    assert ours_exists(mo) is None and not cordoned(mo["kubeconfig"], "tray01")
    assert "Wait for the Maintenance Operator to cordon and drain the node (Ready)" in out
    assert "TASK [gpu_tray.cluster.rolling_reboot : Cordon and drain the node]" not in out or \
        "skipping: [tray01]" in out.split("Cordon and drain the node]")[1].split("TASK [")[0], out
    assert report_row(tmp_path, "tray01")["drain"] == \
        "NodeMaintenance default/%s (Maintenance Operator), released" % OURS
    assert (report_row(tmp_path, "tray01")["idle"], report_row(tmp_path, "tray01")["role"]) == ("busy", "rolling")


def test_a_nodemaintenance_that_never_becomes_ready_stops_the_run_and_stays(mo, tmp_path):
    t0 = hold_budget(mo)
    before = boots("tray01")
    proc = start(mo, tmp_path, rolling_reboot_maintenance_timeout=6, lab_test_arg="gtl_rolling.test=5")
    out = proc.communicate(timeout=600)[0]
    assert proc.returncode != 0, out
    assert boots("tray01") == before                          # never rebooted
    assert ours_exists(mo) is not None                        # left in place: it still holds its request
    row = report_row(tmp_path, "tray01")
    assert row["status"] == "FAILED" and row["rebooted"] == "no", row
    assert "left in place" in row["drain"] and "orphaned-node-maintenance.md" in row["drain"], row
    assert "another requestor's NodeMaintenance" in row["check"], row
    assert "cordoned by NodeMaintenance default/%s" % OURS in out, out
    mo["custom"].delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, SRIOV)
    mo["custom"].delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, OURS)
    when(mo["log"], "released", "default/" + OURS, after=t0)


def _killed_when(mo, report, arg, step, tray="tray01", timeout=300, also=None):
    """Start the run in its own process group and kill -9 it once the journal has ``step`` for ``tray`` (and
    ``also()`` holds)."""
    import os
    import signal
    argv = [str(BIN / "ansible-playbook"), "-i", str(mo["inventory"]), "--limit", "tray01", str(PLAYBOOK),
            "-e", json.dumps(dict(FAST, gpu_tray_report_dir=str(report), lab_test_arg=arg))]
    env = dict((k, v) for k, v in ansible_env().items() if k not in K8S_ENV)
    env["K8S_AUTH_KUBECONFIG"] = mo["kubeconfig"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    journal = pathlib.Path(report) / "journal.jsonl"
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            lines = [json.loads(x) for x in (journal.read_text().splitlines() if journal.exists() else []) if x.strip()]
            if any(e["step"] == step and tray in e["trays"] for e in lines) and (also is None or also()):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                return lines
            assert proc.poll() is None, proc.stdout.read()[-4000:]
            time.sleep(0.1)
        raise AssertionError("no %s for %s in %d s" % (step, tray, timeout))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def test_a_run_killed_while_it_holds_a_busy_tray_is_finished_from_the_clusters_marks_alone(mo, tmp_path):
    """Issue 55 with the Maintenance Operator: the run killed (kill -9) with its NodeMaintenance Ready (tray01
    cordoned, drained, not yet rebooted), its report folder deleted - the next run knows the cordon is ours from the
    cluster alone (the mark on the Node and on the NodeMaintenance), reboots tray01 once and releases it. Killed again
    after tray01 came back and was verified (the NodeMaintenance still there): the next run, folder deleted again,
    finds nothing to reboot and releases the node - no NodeMaintenance of ours is left, every node schedulable."""
    import shutil
    from kubernetes import client, config
    core = client.CoreV1Api(config.new_client_from_config(config_file=mo["kubeconfig"]))
    before = boots("tray01")[0]
    t0 = time.time()

    def ready():
        return any(e[1] == "ready" and e[2] == "default/" + OURS and e[0] >= t0 for e in events(mo["log"]))

    # killed once the operator reported our NodeMaintenance Ready: cordoned, drained, the reboot not sent
    dead = _killed_when(mo, tmp_path / "one", "gtl_rolling.killed=1", "held", also=ready)
    assert dead and not [e for e in dead if e["step"] == "sending"], dead
    assert cordoned(mo["kubeconfig"], "tray01") and boots("tray01") == [before]
    mark = json.loads(core.read_node("tray01").metadata.annotations["gpu-tray.cluster/rolling-reboot"])
    assert mark["run"] == dead[0]["run"] and mark["via"] == "maintenance_operator", mark
    assert json.loads(ours_exists(mo)["metadata"]["annotations"]["gpu-tray.cluster/rolling-reboot"])["run"] == mark["run"]
    shutil.rmtree(str(tmp_path / "one"))
    proc = start(mo, tmp_path / "two", lab_test_arg="gtl_rolling.killed=1")
    out = proc.communicate(timeout=900)[0]
    assert proc.returncode == 0, out[-6000:]
    assert boots("tray01") == [before + 1] and "gtl_rolling.killed=1" in cmdline("tray01")
    row = report_row(tmp_path / "two", "tray01")
    assert row["status"] == "rebooted" and "cordoned by a run of ours that was cut short" in row["idle_why"], row
    assert ours_exists(mo) is None and not cordoned(mo["kubeconfig"], "tray01")
    assert "gpu-tray.cluster/rolling-reboot" not in (core.read_node("tray01").metadata.annotations or {})

    # killed after tray01 was back and verified, before its node was released
    dead = _killed_when(mo, tmp_path / "three", "gtl_rolling.killed=2", "verified")
    assert ours_exists(mo) is not None and cordoned(mo["kubeconfig"], "tray01")
    shutil.rmtree(str(tmp_path / "three"))
    proc = start(mo, tmp_path / "four", lab_test_arg="gtl_rolling.killed=2")
    out = proc.communicate(timeout=900)[0]
    assert proc.returncode == 0, out[-6000:]
    assert boots("tray01") == [before + 2]               # not rebooted again: it came back in the wanted state
    assert report_row(tmp_path / "four", "tray01")["status"] == "no reboot needed"
    md = (tmp_path / "four" / "rolling-reboot.md").read_text()
    assert "Released first (their trays came back in the wanted state; the cut-short run held their nodes): " \
           "tray01." in md, md
    assert ours_exists(mo) is None and not cordoned(mo["kubeconfig"], "tray01") \
        and not cordoned(mo["kubeconfig"], "tray02")
    assert "gpu-tray.cluster/rolling-reboot" not in (core.read_node("tray01").metadata.annotations or {})


# ---------------------------------------------------------------- a second controller that reboots the same trays

def tuning_cr(kind, name, packages, selector=None):
    group = "nodewright.nvidia.com" if kind == "NodeWright" else "skyhook.nvidia.com"
    spec = {"packages": packages, "interruptionBudget": {"count": 1}}
    if selector is not None:
        spec["nodeSelectors"] = selector
    return group, kind.lower() + "s", {"apiVersion": group + "/v1alpha1", "kind": kind, "metadata": {"name": name},
                                       "spec": spec}


def test_a_nodewright_cr_that_reboots_the_trays_stops_the_run_before_any_reboot(mo, tmp_path):
    custom = mo["custom"]
    tuned = {"nvidia-tuned": {"image": "ghcr.io/nvidia/nodewright-packages/nvidia-tuned", "version": "0.10.0",
                              "interrupt": {"type": "reboot"}, "configInterrupts": {"intent": {"type": "reboot"}}}}
    harmless = {"shellscript": {"image": "ghcr.io/nvidia/skyhook-packages/shellscript", "version": "1.1.1",
                                "interrupt": {"type": "noop"}}}
    objects = [tuning_cr("NodeWright", "tuning", tuned, {"matchLabels": {"kubernetes.io/hostname": "tray01"}}),
               tuning_cr("Skyhook", "elsewhere", tuned, {"matchLabels": {"kubernetes.io/hostname": "tray09"}}),
               tuning_cr("Skyhook", "no-interrupt", harmless)]
    for group, plural, body in objects:
        custom.create_cluster_custom_object(group, "v1alpha1", plural, body)
    try:
        before = boots("tray01")
        proc = start(mo, tmp_path, lab_test_arg="gtl_rolling.test=6")
        out = proc.communicate(timeout=600)[0]
        assert proc.returncode != 0, out
        assert "NodeWright tuning would also interrupt tray01 (nvidia-tuned: reboot)" in out, out
        assert "nothing was rebooted" in out and "rolling_reboot_foreign_controllers to allow" in out, out
        assert "Skyhook elsewhere" not in out and "no-interrupt" not in out, out   # other nodes; no interrupt
        assert boots("tray01") == before and ours_exists(mo) is None
        # the operator says it knows: the same run reboots
        proc = start(mo, tmp_path, lab_test_arg="gtl_rolling.test=6", rolling_reboot_foreign_controllers="allow",
                     rolling_reboot_drain_via="drain")
        out = proc.communicate(timeout=900)[0]
        assert proc.returncode == 0, out
        assert boots("tray01") == [before[0] + 1]
    finally:
        for group, plural, body in objects:
            custom.delete_cluster_custom_object(group, "v1alpha1", plural, body["metadata"]["name"])
