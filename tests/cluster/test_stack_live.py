# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stack role on the test cluster: deploy_stack / teardown_stack / recover_node_maintenance with a test recipe
of local charts (files/stacktest/vars.yml) reproducing the hard orderings:

* st-operator's chart ships only its own CRD; the Pool CRD st-pools needs appears only after the operator - the
  controller process tests/cluster/stack_controller.py, started here - reconciled the WidgetPolicy CR, and the
  WidgetPolicy turns ready only then (the NicClusterPolicy / nv-ipam IPPool pattern);
* st-dra restarts its kubelet-plugin DaemonSet after an install (DRA driver-migration gate), not on a re-run;
* teardown runs in reverse and waits for every NodeState to be Succeeded after the Pools are deleted before the
  operator's CR goes (the SriovNetworkNodeState wait);
* st-broken crash-loops, rolls back (atomic) and stops the run before st-after-broken;
* a dead API endpoint is retried with back-off, then fails naming the attempts;
* orphaned NodeMaintenance objects (seeded) are recovered: deleted, finalizer cleared, node uncordoned.
"""

import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from clusterhelpers import two_context_kubeconfig
from stackhelpers import recap, run_playbook
from upstreamdata import upstream_crd

HERE = os.path.dirname(os.path.abspath(__file__))
VARS = os.path.join(HERE, "files", "stacktest", "vars.yml")
GROUP = "stacktest.gpu-tray.test"
NAMESPACES = ["stacktest-a", "stacktest-b", "stacktest-op", "stacktest-dra", "stacktest-keep"]
RELEASES = {"st-alpha": "stacktest-a", "st-beta": "stacktest-b", "st-operator": "stacktest-op",
            "st-dra": "stacktest-dra", "st-broken": "stacktest-b", "st-after-broken": "stacktest-b",
            "st-gadgets": "stacktest-keep"}


_REPORT = {}     # the module's report directory (stack-deploy.md / stack-teardown.md), set by the fixture below


@pytest.fixture(scope="module", autouse=True)
def report_dir(tmp_path_factory):
    _REPORT["dir"] = str(tmp_path_factory.mktemp("report"))
    _REPORT["scratch"] = str(tmp_path_factory.mktemp("scratch"))
    yield _REPORT["dir"]


def _report(action):
    with open(os.path.join(_REPORT["dir"], "stack-%s.json" % action)) as fh:
        return json.load(fh)


def _connection(kcluster):
    """The run's cluster connection as a site sets it (issue 44): a kubeconfig whose current context is a closed
    port and gpu_tray_kube_context naming the test cluster's, with no K8S_AUTH_* in the environment - every module
    of deploy, teardown and recovery must take both from the run context (module_defaults) to reach the cluster."""
    path, context = two_context_kubeconfig(kcluster.kubeconfig, os.path.join(_REPORT["scratch"], "two-contexts.kubeconfig"))
    return ["-e", "gpu_tray_kubeconfig=%s" % path, "-e", "gpu_tray_kube_context=%s" % context]


NO_ENV = dict((name, None) for name in ("K8S_AUTH_KUBECONFIG", "K8S_AUTH_CONTEXT", "K8S_AUTH_HOST", "KUBECONFIG"))


def _stack(kcluster, playbook, recipe, *extra, **kw):
    dead = kw.pop("kubeconfig", None)
    connection = ["-e", "gpu_tray_kubeconfig=%s" % dead] if dead else _connection(kcluster)
    args = ["-e", "@" + VARS, "-e", "gpu_tray_report_dir=%s" % _REPORT["dir"], "-e", "stack_test_dir=%s" % HERE,
            "-e", "gpu_tray_recipe=%s" % recipe] + connection + [
            "-e", "stack_helm_binary=%s" % kcluster.helm, "-e", "stack_wait_timeout=120",
            "-e", "stack_settle_seconds=2"] + list(extra)
    return run_playbook("gpu_tray.cluster.%s" % playbook, *args, **NO_ENV)


def _releases(kcluster):
    out = subprocess.run([kcluster.helm, "list", "-A", "-a", "-o", "yaml", "--kubeconfig", kcluster.kubeconfig],
                         capture_output=True, text=True, check=True).stdout
    return dict((r["name"], r) for r in (yaml.safe_load(out) or []) if r["name"] in RELEASES)


def _events(path):
    out = []
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                stamp, name, detail = (line.rstrip("\n").split(" ", 2) + [""])[:3]
                out.append((float(stamp), name, detail))
    return out


def _first(events, name, detail=None):
    times = [t for t, n, d in events if n == name and (detail is None or d == detail)]
    assert times, "controller never logged %s %s: %s" % (name, detail or "", events)
    return times[0]


def _clean(kcluster, k8s_api):
    """Remove what an earlier failed run left (releases, namespaces, test CRDs), waiting until it is gone."""
    for name, ns in RELEASES.items():
        subprocess.run([kcluster.helm, "uninstall", name, "-n", ns, "--wait", "--kubeconfig", kcluster.kubeconfig],
                       capture_output=True, check=False)
    core, ext = client.CoreV1Api(k8s_api), client.ApiextensionsV1Api(k8s_api)
    custom = client.CustomObjectsApi(k8s_api)
    try:    # seeded NodeMaintenance objects keep their finalizer (no operator): clear it or nothing goes away
        for nm in custom.list_cluster_custom_object("maintenance.nvidia.com", "v1alpha1", "nodemaintenances")["items"]:
            custom.patch_namespaced_custom_object("maintenance.nvidia.com", "v1alpha1", nm["metadata"]["namespace"],
                                                  "nodemaintenances", nm["metadata"]["name"],
                                                  {"metadata": {"finalizers": None}})
    except ApiException as exc:
        assert exc.status == 404, exc
    for crd in ext.list_custom_resource_definition().items:
        if crd.spec.group == GROUP or crd.metadata.name == "nodemaintenances.maintenance.nvidia.com":
            ext.delete_custom_resource_definition(crd.metadata.name)
    for ns in NAMESPACES + ["stacktest-maint"]:
        try:
            core.delete_namespace(ns)
        except ApiException as exc:
            assert exc.status == 404, exc
    deadline = time.time() + 120
    while time.time() < deadline:
        left = [n.metadata.name for n in core.list_namespace().items if n.metadata.name.startswith("stacktest-")]
        crds = [c.metadata.name for c in ext.list_custom_resource_definition().items if c.spec.group == GROUP]
        if not left and not crds:
            break
        time.sleep(1)
    else:
        pytest.fail("leftovers of an earlier run do not go away: %s %s" % (left, crds))
    for node in core.list_node().items:
        if node.spec.unschedulable:
            core.patch_node(node.metadata.name, {"spec": {"unschedulable": False}})


@pytest.fixture(scope="module")
def controller(kcluster, k8s_api, tmp_path_factory):
    _clean(kcluster, k8s_api)
    log = str(tmp_path_factory.mktemp("controller") / "events.log")
    proc = subprocess.Popen([sys.executable, os.path.join(HERE, "stack_controller.py"), kcluster.kubeconfig, log],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 20
    while not _events(log) and time.time() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    yield log
    proc.terminate()
    proc.wait(timeout=10)
    _clean(kcluster, k8s_api)


def test_deploy_rerun_teardown(kcluster, k8s_api, controller):
    rc, out = _stack(kcluster, "deploy_stack", "stacktest")
    assert rc == 0, out[-6000:]
    report = _report("deploy")          # written when the run passes too (issue 44)
    assert report["result"] == "passed" and report["stopped"] is None, report
    assert report["tiers"] == [["st-alpha", "st-beta"], ["st-dra", "st-operator"], ["st-pools"]], report
    # one progress line per tier, in order, components of a tier together
    lines = re.findall(r'"msg": "(tier \d/\d: [^"]+)"', out)
    assert lines == ["tier 1/3: st-alpha, st-beta", "tier 2/3: st-dra, st-operator", "tier 3/3: st-pools"], out[-4000:]
    events = _events(controller)
    # the Pool CRD came from the operator after it saw the WidgetPolicy; the pools were applied only after it
    # existed and after the operator reported ready (the stack waited instead of failing)
    seen, crd_made = _first(events, "policy-seen"), _first(events, "crd-created", "pools.%s" % GROUP)
    ready = _first(events, "policy-ready")
    pool_added = _first(events, "pool-added")
    assert seen < crd_made <= ready < pool_added, events
    custom = client.CustomObjectsApi(k8s_api)
    pools = custom.list_namespaced_custom_object(GROUP, "v1alpha1", "stacktest-op", "pools")["items"]
    assert sorted(p["spec"]["subnet"] for p in pools) == ["10.255.0.0/22", "10.255.12.0/22", "10.255.4.0/22",
                                                          "10.255.8.0/22"]
    rels = _releases(kcluster)
    assert sorted(rels) == ["st-alpha", "st-beta", "st-dra", "st-operator"]
    assert all(r["status"] == "deployed" and r["chart"].endswith("-0.1.0") for r in rels.values()), rels
    ds = client.AppsV1Api(k8s_api).read_namespaced_daemon_set("st-dra-kubelet-plugin", "stacktest-dra")
    restarted = (ds.spec.template.metadata.annotations or {}).get("kubectl.kubernetes.io/restartedAt")
    assert restarted, "the DRA gate did not restart the kubelet plugin after its install"

    # re-run: nothing changes on any host (releases, manifests, gates; no second restart)
    rc, out = _stack(kcluster, "deploy_stack", "stacktest")
    assert rc == 0, out[-6000:]
    for host in ["localhost", "stack-st-alpha", "stack-st-beta", "stack-st-operator", "stack-st-pools", "stack-st-dra"]:
        assert recap(out, host)["changed"] == 0, "%s changed on a re-run:\n%s" % (host, out[-6000:])
    ds = client.AppsV1Api(k8s_api).read_namespaced_daemon_set("st-dra-kubelet-plugin", "stacktest-dra")
    assert ds.spec.template.metadata.annotations["kubectl.kubernetes.io/restartedAt"] == restarted

    # check mode with a changed value: reported, not done
    rc, out = _stack(kcluster, "deploy_stack", "stacktest", "--check", "--diff",
                     "-e", '{"gpu_tray_stack_overrides": {"st-beta": {"values": {"replicaCount": 2}}}}')
    assert rc == 0, out[-6000:]
    assert recap(out, "stack-st-beta")["changed"] >= 1 and recap(out, "stack-st-alpha")["changed"] == 0, out[-4000:]
    dep = client.AppsV1Api(k8s_api).read_namespaced_deployment("st-beta", "stacktest-b")
    assert dep.spec.replicas == 1

    # teardown: reverse tiers; the operator's CR goes only after every NodeState is Succeeded again
    rc, out = _stack(kcluster, "teardown_stack", "stacktest")
    assert rc == 0, out[-6000:]
    lines = re.findall(r'"msg": "(teardown tier \d/\d: [^"]+)"', out)
    assert lines == ["teardown tier 3/3: st-pools", "teardown tier 2/3: st-dra, st-operator",
                     "teardown tier 1/3: st-alpha, st-beta"], out[-4000:]
    events = _events(controller)
    deleted = _first(events, "pool-deleted")
    in_progress = [t for t, n, d in events if n == "nodestates" and d == "InProgress" and t >= deleted]
    succeeded = [t for t, n, d in events if n == "nodestates" and d == "Succeeded" and t > deleted]
    policy_gone = _first(events, "policy-deleted")
    assert in_progress and succeeded and max(succeeded) < policy_gone, events
    assert _releases(kcluster) == {}
    assert _report("teardown")["result"] == "passed", _report("teardown")


def _stored_unkept(kcluster, release, namespace):
    """The CRDs of the release as helm stored it that carry no helm.sh/resource-policy keep (what uninstall deletes)."""
    out = subprocess.run([kcluster.helm, "get", "manifest", release, "-n", namespace, "--kubeconfig", kcluster.kubeconfig],
                         capture_output=True, text=True, check=True).stdout
    docs = [d for d in yaml.safe_load_all(out) if isinstance(d, dict)]
    crds = [d for d in docs if d["kind"] == "CustomResourceDefinition"]
    assert crds, "the release holds no CRD: %s" % out[:2000]
    return [d["metadata"]["name"] for d in crds
            if (d["metadata"].get("annotations") or {}).get("helm.sh/resource-policy") != "keep"]


def test_a_chart_whose_templates_create_crds_keeps_them_through_teardown(kcluster, k8s_api):
    """chart_crds templates (agentgateway-crds' case): a release installed before deploy_stack marked its CRDs (plain
    helm, as an earlier collection did) is upgraded once with the post-renderer - kubernetes.core.helm alone sees no
    change -, a re-run changes nothing, check mode reports and does nothing, and teardown_stack uninstalls the release
    (its ConfigMap goes) while the Gadget CRD and a Gadget a user made stay."""
    _clean(kcluster, k8s_api)
    custom, ext = client.CustomObjectsApi(k8s_api), client.ApiextensionsV1Api(k8s_api)
    crd = "gadgets.%s" % GROUP
    try:
        subprocess.run([kcluster.helm, "install", "st-gadgets", os.path.join(HERE, "charts", "stack-crds"),
                        "-n", "stacktest-keep", "--create-namespace", "--kubeconfig", kcluster.kubeconfig],
                       capture_output=True, text=True, check=True)
        assert _stored_unkept(kcluster, "st-gadgets", "stacktest-keep") == [crd]
        # check mode: says it would mark the CRD, marks nothing
        rc, out = _stack(kcluster, "deploy_stack", "stacktest-keep", "--check")
        assert rc == 0, out[-6000:]
        assert "would upgrade release st-gadgets once to mark its CRDs %s keep" % crd in out, out[-4000:]
        assert _stored_unkept(kcluster, "st-gadgets", "stacktest-keep") == [crd]
        rc, out = _stack(kcluster, "deploy_stack", "stacktest-keep")
        assert rc == 0, out[-6000:]
        assert recap(out, "stack-st-gadgets")["changed"] >= 1, out[-4000:]
        assert _stored_unkept(kcluster, "st-gadgets", "stacktest-keep") == []
        rc, out = _stack(kcluster, "deploy_stack", "stacktest-keep")
        assert rc == 0 and recap(out, "stack-st-gadgets")["changed"] == 0, out[-6000:]
        custom.create_namespaced_custom_object(GROUP, "v1alpha1", "stacktest-keep", "gadgets", {
            "apiVersion": "%s/v1alpha1" % GROUP, "kind": "Gadget", "metadata": {"name": "users-own-gadget"},
            "spec": {"size": 3}})
        rc, out = _stack(kcluster, "teardown_stack", "stacktest-keep")
        assert rc == 0, out[-6000:]
        assert "st-gadgets" not in _releases(kcluster)
        with pytest.raises(ApiException) as gone:
            client.CoreV1Api(k8s_api).read_namespaced_config_map("st-gadgets-settings", "stacktest-keep")
        assert gone.value.status == 404
        assert ext.read_custom_resource_definition(crd).metadata.annotations["helm.sh/resource-policy"] == "keep"
        time.sleep(3)   # a deleted CRD takes its custom resources with it asynchronously
        gadget = custom.get_namespaced_custom_object(GROUP, "v1alpha1", "stacktest-keep", "gadgets", "users-own-gadget")
        assert gadget["spec"]["size"] == 3
    finally:
        _clean(kcluster, k8s_api)


def _start_stack(kcluster, playbook, recipe, *extra):
    """deploy_stack started in its own process group (so that kill -9 takes ansible-playbook and the helm it runs)."""
    from stackhelpers import playbook_argv, ansible_env
    argv = playbook_argv("gpu_tray.cluster.%s" % playbook, "-e", "@" + VARS, "-e", "gpu_tray_report_dir=%s" % _REPORT["dir"],
                         "-e", "stack_test_dir=%s" % HERE, "-e", "gpu_tray_recipe=%s" % recipe, *(_connection(kcluster) + [
                             "-e", "stack_helm_binary=%s" % kcluster.helm, "-e", "stack_wait_timeout=120"] + list(extra)))
    return subprocess.Popen(argv, env=ansible_env(**NO_ENV), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _helm_status(kcluster, release, namespace):
    out = subprocess.run([kcluster.helm, "list", "-n", namespace, "-a", "-o", "json", "--kubeconfig", kcluster.kubeconfig],
                         capture_output=True, text=True, check=True).stdout
    found = [r for r in json.loads(out or "[]") if r["name"] == release]
    return (found[0]["status"], int(found[0]["revision"])) if found else (None, 0)


def _kill_when_pending(kcluster, proc, release, namespace, timeout=180):
    import signal
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            status, _rev = _helm_status(kcluster, release, namespace)
            if status and status.startswith("pending-"):
                time.sleep(2)         # helm is waiting for the broken pods: well inside its --wait
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                return _helm_status(kcluster, release, namespace)
            assert proc.poll() is None, "the deploy ended before helm was at work:\n%s" % proc.stdout.read()[-4000:]
            time.sleep(0.5)
        raise AssertionError("helm never left %s pending" % release)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def test_a_deploy_killed_while_helm_works_is_finished_by_the_next_deploy(kcluster, k8s_api):
    """deploy_stack killed (kill -9 of its process group) while helm waits for a release's pods: helm leaves it
    pending-install, then - killed during an upgrade - pending-upgrade; every later helm upgrade would fail "another
    operation is in progress". The next deploy names it in its report and puts it back (uninstall / rollback), then
    finishes: the release deployed with this run's values."""
    _clean(kcluster, k8s_api)
    broken = ["-e", json.dumps({"gpu_tray_stack_overrides": {"st-alpha": {"values": {"image": {"tag": "broken"}},
                                                                          "timeout": "10m"}}})]
    try:
        killed = _kill_when_pending(kcluster, _start_stack(kcluster, "deploy_stack", "stacktest-one", *broken),
                                    "st-alpha", "stacktest-a")
        assert killed == ("pending-install", 1), killed
        rc, out = _stack(kcluster, "deploy_stack", "stacktest-one")
        assert rc == 0, out[-6000:]
        assert _helm_status(kcluster, "st-alpha", "stacktest-a")[0] == "deployed"
        md = open(os.path.join(_REPORT["dir"], "stack-deploy.md")).read()
        assert "## Found" in md and ("- st-alpha: helm left it pending-install at revision 1 (a run cut short while "
                                     "helm was at work) - uninstalled, then installed again") in md, md
        # killed again, mid-upgrade
        killed = _kill_when_pending(kcluster, _start_stack(kcluster, "deploy_stack", "stacktest-one", *broken),
                                    "st-alpha", "stacktest-a")
        assert killed[0] == "pending-upgrade", killed
        rc, out = _stack(kcluster, "deploy_stack", "stacktest-one")
        assert rc == 0, out[-6000:]
        status, revision = _helm_status(kcluster, "st-alpha", "stacktest-a")
        assert status == "deployed" and revision > killed[1], (status, revision, killed)
        md = open(os.path.join(_REPORT["dir"], "stack-deploy.md")).read()
        assert ("- st-alpha: helm left it pending-upgrade at revision %d (a run cut short while helm was at work) - "
                "rolled back to revision %d" % (killed[1], killed[1] - 1)) in md, md
        dep = client.AppsV1Api(k8s_api).read_namespaced_deployment("st-alpha", "stacktest-a")
        assert not dep.spec.template.spec.containers[0].image.endswith(":broken"), dep.spec.template.spec.containers[0]
        # nothing found the time after
        rc, out = _stack(kcluster, "deploy_stack", "stacktest-one")
        assert rc == 0 and "## Found" not in open(os.path.join(_REPORT["dir"], "stack-deploy.md")).read(), out[-4000:]
    finally:
        _clean(kcluster, k8s_api)


def test_broken_chart_rolls_back_and_stops_the_run(kcluster, k8s_api, controller):
    rc, out = _stack(kcluster, "deploy_stack", "stacktest-broken")
    assert rc != 0, out[-6000:]
    assert "Component st-broken" in out and "rolled back" in out, out[-6000:]
    assert '"msg": "tier 3/3' not in out, "the run went on past the failed tier:\n" + out[-6000:]
    rels = _releases(kcluster)
    assert "st-after-broken" not in rels and rels["st-alpha"]["status"] == "deployed", rels
    assert "st-broken" not in rels or rels["st-broken"]["status"] != "deployed", rels
    # the report and the job's artifact name the component, the task and the finding (issue 44)
    stopped = _report("deploy")["stopped"]
    assert stopped["component"] == "st-broken" and "rolled back" in stopped["message"], stopped
    assert stopped["task"] and stopped["task"] in out, stopped
    rc, out = _stack(kcluster, "teardown_stack", "stacktest-broken")
    assert rc == 0, out[-6000:]
    assert _releases(kcluster) == {}


def test_transient_api_errors_are_retried_with_back_off(kcluster, tmp_path):
    with open(kcluster.kubeconfig) as fh:
        cfg = yaml.safe_load(fh)
    for cluster in cfg["clusters"]:
        cluster["cluster"]["server"] = "https://127.0.0.1:1"
    dead = tmp_path / "dead.kubeconfig"
    dead.write_text(yaml.safe_dump(cfg))
    t0 = time.time()
    rc, out = _stack(kcluster, "deploy_stack", "stacktest", "-e", "stack_api_retries=2",
                     "-e", "stack_api_retry_delay=1", kubeconfig=str(dead))
    assert rc != 0
    assert "attempt 3" in out and "attempt 4" not in out, out[-6000:]
    assert "after 3 attempt(s)" in out and "connection refused" in out, out[-6000:]
    assert time.time() - t0 >= 3, "no back-off between attempts (1 s, then 2 s)"


def _nm(name, node, finalizer=True):
    meta = {"name": name, "namespace": "stacktest-maint"}
    if finalizer:
        meta["finalizers"] = ["maintenance.nvidia.com/finalizer"]
    return {"apiVersion": "maintenance.nvidia.com/v1alpha1", "kind": "NodeMaintenance", "metadata": meta,
            "spec": {"requestorID": "nvidia.network.operator", "nodeName": node, "cordon": True}}


def test_orphaned_node_maintenance_is_recovered(kcluster, k8s_api, controller):
    ext, core, custom = client.ApiextensionsV1Api(k8s_api), client.CoreV1Api(k8s_api), client.CustomObjectsApi(k8s_api)
    apps = client.AppsV1Api(k8s_api)
    with open(upstream_crd("maintenance")) as fh:       # the real CRD, from the upstream data
        ext.create_custom_resource_definition(yaml.safe_load(fh))
    time.sleep(2)
    core.create_namespace({"metadata": {"name": "stacktest-maint"}})
    tray1, tray2 = kcluster.trays[0], kcluster.trays[1]
    for body in (_nm("nm-%s" % tray1, tray1), _nm("nm-%s" % tray2, tray2)):
        custom.create_namespaced_custom_object("maintenance.nvidia.com", "v1alpha1", "stacktest-maint",
                                               "nodemaintenances", body)
    for node in (tray1, tray2):
        core.patch_node(node, {"spec": {"unschedulable": True}})

    # a running Maintenance Operator releases its nodes itself: the playbook refuses
    apps.create_namespaced_deployment("stacktest-maint", {
        "metadata": {"name": "maintenance-operator"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "mo"}},
                 "template": {"metadata": {"labels": {"app": "mo"}},
                              "spec": {"containers": [{"name": "m", "image": "registry.invalid/mo:1"}]}}}})
    extra = _connection(kcluster) + ["-e", '{"stack_recover_nodes": ["%s"]}' % tray1,
                                     "-e", "gpu_tray_report_dir=%s" % _REPORT["scratch"]]
    rc, out = run_playbook("gpu_tray.cluster.recover_node_maintenance", *extra, **NO_ENV)
    assert rc != 0 and "Maintenance Operator Deployment(s) stacktest-maint/maintenance-operator exist" in out, out[-4000:]
    assert core.read_node(tray1).spec.unschedulable is True
    apps.delete_namespaced_deployment("maintenance-operator", "stacktest-maint")

    refused = json.loads(open(os.path.join(_REPORT["scratch"], "stack-recover.json")).read())
    assert refused["result"] == "failed" and refused["stopped"]["task"].startswith("Refuse while a Maintenance"), refused
    rc, out = run_playbook("gpu_tray.cluster.recover_node_maintenance", *extra, **NO_ENV)
    assert rc == 0, out[-6000:]
    left = [o["metadata"]["name"] for o in custom.list_namespaced_custom_object(
        "maintenance.nvidia.com", "v1alpha1", "stacktest-maint", "nodemaintenances")["items"]]
    assert left == ["nm-%s" % tray2], left          # only the node asked for
    # the recovery's report names what it released (issue 53: every phase ends through its report)
    done = json.loads(open(os.path.join(_REPORT["scratch"], "stack-recover.json")).read())
    assert done["result"] == "passed" and done["recovered"] == [
        {"namespace": "stacktest-maint", "name": "nm-%s" % tray1, "node": tray1}], done
    assert "released 1 NodeMaintenance object(s) and uncordoned node(s) %s" % tray1 in done["summary"], done
    assert not core.read_node(tray1).spec.unschedulable
    assert core.read_node(tray2).spec.unschedulable is True
    # a second run finds nothing more for that node
    rc, out = run_playbook("gpu_tray.cluster.recover_node_maintenance", *extra, **NO_ENV)
    assert rc == 0 and "Recovery: nothing to recover: no NodeMaintenance pending on" in out, out[-4000:]
    core.patch_node(tray2, {"spec": {"unschedulable": False}})
