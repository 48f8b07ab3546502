# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Behaviour of the running test cluster: real 1.20 API, TLS + RBAC, the simulated trays, fault injection."""

import os
import subprocess
import time
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

import simkubelet as sk


def _wait(what, check, timeout=45.0, every=0.5):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError("timed out after %ds waiting for %s (last: %r)" % (timeout, what, last))


@pytest.fixture
def core(k8s_api):
    return client.CoreV1Api(k8s_api)


@pytest.fixture
def namespace(core):
    name = "t-" + uuid.uuid4().hex[:8]
    core.create_namespace({"metadata": {"name": name}})
    _wait("default service account token in %s" % name,
          lambda: [s for s in core.list_namespaced_secret(name).items if s.type == "kubernetes.io/service-account-token"])
    yield name
    core.delete_namespace(name)   # not waited for here; test_namespace_with_pods_is_really_deleted does


def _pod(name, image="registry.invalid/app:1.0", limits=None, **spec):
    container = {"name": "app", "image": image}
    if limits:
        container["resources"] = {"limits": limits}
    body = {"metadata": {"name": name}, "spec": {"containers": [container]}}
    body["spec"].update(spec)
    return body


def _pod_condition(core, namespace, name, ctype):
    conds = core.read_namespaced_pod(name, namespace).status.conditions or []
    return next((c.status for c in conds if c.type == ctype), None)


def _ready(node):
    return any(c.type == "Ready" and c.status == "True" for c in node.status.conditions or [])


def test_api_level_is_honestly_1_20(k8s_api):
    version = client.VersionApi(k8s_api).get_code()
    assert version.git_version == "v1.20.2"
    groups = [g.name for g in client.ApisApi(k8s_api).get_api_versions().groups]
    assert "apiextensions.k8s.io" in groups and "rbac.authorization.k8s.io" in groups
    # the platforms' DRA API does not exist here: that layer is covered offline (test_cluster_offline.py)
    assert "resource.k8s.io" not in groups


def test_tls_is_verified_and_rbac_denies_an_unbound_identity(kcluster, k8s_api, namespace):
    cfg = k8s_api.configuration
    assert cfg.verify_ssl is True and cfg.ssl_ca_cert and cfg.host == "https://127.0.0.1:16443"
    core = client.CoreV1Api(k8s_api)
    core.create_namespaced_service_account(namespace, {"metadata": {"name": "nobody"}})
    imp = client.ApiClient(configuration=cfg)
    imp.set_default_header("Impersonate-User", "system:serviceaccount:%s:nobody" % namespace)
    with pytest.raises(ApiException) as exc:
        client.CoreV1Api(imp).list_namespaced_pod(namespace)
    assert exc.value.status == 403
    rbac = client.RbacAuthorizationV1Api(k8s_api)
    rbac.create_namespaced_role(namespace, {"metadata": {"name": "pod-reader"},
                                            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]})
    rbac.create_namespaced_role_binding(namespace, {
        "metadata": {"name": "nobody-reads-pods"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "nobody", "namespace": namespace}]})
    # RBAC is evaluated per request: the binding allows exactly what the role grants, nothing else
    assert client.CoreV1Api(imp).list_namespaced_pod(namespace).items == []
    with pytest.raises(ApiException) as exc:
        client.CoreV1Api(imp).list_namespaced_secret(namespace)
    assert exc.value.status == 403


def test_nodes_look_like_the_platforms_trays(kcluster, core):
    nodes = {n.metadata.name: n for n in core.list_node().items}
    assert sorted(nodes) == sorted(kcluster.trays + [kcluster.control_plane])
    for name in kcluster.trays:
        node = nodes[name]
        assert _ready(node)
        assert node.metadata.labels["nvidia.com/gpu.present"] == "true"
        assert node.metadata.labels["feature.node.kubernetes.io/rdma.available"] == "true"
        assert node.status.allocatable["nvidia.com/gpu"] == "4"
        assert not node.spec.taints
        if kcluster.platform == "nvke-gb200":
            assert node.spec.provider_id.startswith("nico://")
            assert [node.status.allocatable["nvidia.com/sriov_resource_rail_%d" % r] for r in range(4)] == ["16"] * 4
        else:
            assert node.spec.provider_id == "rke2://" + name
    cp = nodes[kcluster.control_plane]
    assert "node-role.kubernetes.io/control-plane" in cp.metadata.labels
    assert "nvidia.com/gpu" not in cp.status.allocatable
    if kcluster.platform == "nvke-gb200":
        assert cp.metadata.labels["nvidia.com/gpu.present"] == "true"     # unearned


def _daemonset(name, selector):
    labels = {"app": name}
    return {"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}, "spec": {
            "nodeSelector": selector, "containers": [{"name": "c", "image": "registry.invalid/ds:1"}]}}}}


def test_daemonsets_land_where_their_selector_points(kcluster, k8s_api, core, namespace):
    apps = client.AppsV1Api(k8s_api)
    apps.create_namespaced_daemon_set(namespace, _daemonset("by-gpu-present", {"nvidia.com/gpu.present": "true"}))
    apps.create_namespaced_daemon_set(namespace, _daemonset("by-rdma", {"feature.node.kubernetes.io/rdma.available": "true"}))
    gpu_nodes = kcluster.trays + ([kcluster.control_plane] if kcluster.platform == "nvke-gb200" else [])

    def ready(name, want):
        ds = apps.read_namespaced_daemon_set(name, namespace)
        return ds.status.number_ready == want and ds.status.desired_number_scheduled == want
    _wait("by-gpu-present ready on %s" % gpu_nodes, lambda: ready("by-gpu-present", len(gpu_nodes)))
    _wait("by-rdma ready on the trays", lambda: ready("by-rdma", len(kcluster.trays)))
    pods = core.list_namespaced_pod(namespace).items
    placed = sorted(p.spec.node_name for p in pods if p.metadata.labels["app"] == "by-gpu-present")
    # on NVKE the unearned gpu.present label pulls the DaemonSet onto the control plane too
    assert placed == sorted(gpu_nodes)
    assert kcluster.control_plane not in [p.spec.node_name for p in pods if p.metadata.labels["app"] == "by-rdma"]


def test_broken_image_crash_loops(core, namespace):
    core.create_namespaced_pod(namespace, _pod("crasher", "registry.invalid/app:broken"))

    def restarted():
        p = core.read_namespaced_pod("crasher", namespace)
        cs = (p.status.container_statuses or [None])[0]
        return cs and cs.restart_count >= 1 and p
    pod = _wait("restartCount >= 1", restarted, timeout=40)
    cs = pod.status.container_statuses[0]
    assert pod.status.phase == "Running"
    assert cs.ready is False and cs.state.waiting.reason == "CrashLoopBackOff"
    assert cs.last_state.terminated.exit_code == 1
    assert [c.status for c in pod.status.conditions if c.type == "Ready"] == ["False"]


def test_gpu_requests_are_bounded_by_allocatable(kcluster, core, namespace):
    core.create_namespaced_pod(namespace, _pod("four-gpus", limits={"nvidia.com/gpu": "4"}))
    core.create_namespaced_pod(namespace, _pod("five-gpus", limits={"nvidia.com/gpu": "5"}))
    _wait("four-gpus running on a tray", lambda: core.read_namespaced_pod("four-gpus", namespace).status.phase == "Running")
    assert core.read_namespaced_pod("four-gpus", namespace).spec.node_name in kcluster.trays

    def unschedulable():
        p = core.read_namespaced_pod("five-gpus", namespace)
        return [c for c in p.status.conditions or [] if c.type == "PodScheduled" and c.reason == "Unschedulable"]
    cond = _wait("five-gpus unschedulable", unschedulable)[0]
    assert "Insufficient nvidia.com/gpu" in cond.message
    assert core.read_namespaced_pod("five-gpus", namespace).spec.node_name is None


def test_fault_injection_node_notready(kcluster, core, namespace):
    tray = kcluster.trays[-1]
    on_tray = {"kubernetes.io/hostname": tray}
    core.create_namespaced_pod(namespace, _pod("before", nodeSelector=on_tray))
    _wait("pod ready on %s" % tray, lambda: _pod_condition(core, namespace, "before", "Ready") == "True")
    kcluster.kcluster("fault", "node-notready", tray)
    try:
        _wait("%s NotReady" % tray, lambda: not _ready(core.read_node(tray)))
        ready = [c for c in core.read_node(tray).status.conditions if c.type == "Ready"][0]
        assert ready.status == "False" and ready.reason == "KubeletNotReady"
        # kube-controller-manager's node lifecycle controller reacts like on a real cluster
        _wait("not-ready taint", lambda: any(t.key == "node.kubernetes.io/not-ready" for t in core.read_node(tray).spec.taints or []))
        _wait("pod on %s not ready" % tray, lambda: _pod_condition(core, namespace, "before", "Ready") == "False")
        core.create_namespaced_pod(namespace, _pod("after", nodeSelector=on_tray))
        _wait("pod 'after' unschedulable", lambda: _pod_condition(core, namespace, "after", "PodScheduled") == "False")
        others = [n for n in kcluster.trays if n != tray]
        assert all(_ready(core.read_node(n)) for n in others)
    finally:
        kcluster.kcluster("fault", "clear", tray)
    _wait("%s Ready again" % tray, lambda: _ready(core.read_node(tray)))
    _wait("pod 'after' running on %s" % tray, lambda: core.read_namespaced_pod("after", namespace).status.phase == "Running", 60)


def test_fault_command_rejects_unknown_nodes(kcluster):
    res = subprocess.run([os.path.join(os.path.dirname(sk.__file__), "kcluster"), "fault", "node-notready", "tray99"],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 1 and "no simulated node 'tray99'" in res.stderr


def test_namespace_with_pods_is_really_deleted(core, k8s_api):
    name = "t-del-" + uuid.uuid4().hex[:6]
    core.create_namespace({"metadata": {"name": name}})
    _wait("service account token", lambda: [s for s in core.list_namespaced_secret(name).items
                                            if s.type == "kubernetes.io/service-account-token"])
    core.create_namespaced_pod(name, _pod("runner"))
    _wait("runner running", lambda: core.read_namespaced_pod("runner", name).status.phase == "Running")
    core.delete_namespace(name)
    # graceful pod deletion needs a kubelet to confirm; the simulated one does, so the namespace goes
    _wait("namespace %s deleted" % name, lambda: name not in [n.metadata.name for n in core.list_namespace().items], 90)


def test_fault_injection_node_unreachable(kcluster, core, namespace):
    tray = kcluster.trays[0]
    core.create_namespaced_pod(namespace, _pod("victim", nodeSelector={"kubernetes.io/hostname": tray}))
    _wait("victim ready", lambda: _pod_condition(core, namespace, "victim", "Ready") == "True")
    kcluster.kcluster("fault", "node-unreachable", tray)
    try:
        # no heartbeat any more: after the 20 s grace period the node lifecycle controller takes over
        def unknown():
            conds = core.read_node(tray).status.conditions
            return [c for c in conds if c.type == "Ready" and c.status == "Unknown"]
        cond = _wait("%s Ready=Unknown" % tray, unknown, timeout=60)[0]
        assert cond.reason == "NodeStatusUnknown"
        _wait("unreachable taint", lambda: any(t.key == "node.kubernetes.io/unreachable" for t in core.read_node(tray).spec.taints or []))
        _wait("victim marked not ready by the controller", lambda: _pod_condition(core, namespace, "victim", "Ready") == "False")
    finally:
        kcluster.kcluster("fault", "clear", tray)
    _wait("%s Ready again" % tray, lambda: _ready(core.read_node(tray)), timeout=30)
    _wait("taints gone", lambda: not core.read_node(tray).spec.taints, timeout=30)
