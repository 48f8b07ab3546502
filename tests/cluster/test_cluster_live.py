# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Behaviour of the running test cluster: real 1.20 API, TLS + RBAC, the simulated trays, fault injection."""

import json
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

import kcluster as kc
from ansible_env import checkout_env
from clusterhelpers import KCLUSTER, kube_config

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


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


def _raw_get(url, cafile, cert=None):
    ctx = ssl.create_default_context(cafile=cafile)
    if cert:
        ctx.load_cert_chain(*cert)
    with urllib.request.urlopen(url + "/api/v1/namespaces", context=ctx, timeout=10) as resp:
        return resp.status


def test_tls_server_verifies_clients_and_clients_verify_the_server(kcluster, k8s_api, tmp_path):
    cfg = k8s_api.configuration
    assert cfg.verify_ssl is True and cfg.ssl_ca_cert and cfg.host == kcluster.info["apiserver"]
    url, ca = kcluster.info["apiserver"], cfg.ssl_ca_cert
    # with the admin client certificate: allowed (proves the two negative cases below fail for their reason)
    assert _raw_get(url, ca, (cfg.cert_file, cfg.key_file)) == 200
    # no client certificate: anonymous auth is off -> 401, not 403 and not data
    with pytest.raises(urllib.error.HTTPError) as exc:
        _raw_get(url, ca)
    assert exc.value.code == 401
    # a client that trusts another CA refuses the server's certificate
    other = tmp_path / "other-ca"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(other) + ".key", "-out", str(other) + ".crt", "-days", "1", "-subj", "/CN=other-ca"],
                   check=True, capture_output=True)
    with pytest.raises(urllib.error.URLError) as exc:
        _raw_get(url, str(other) + ".crt", (cfg.cert_file, cfg.key_file))
    assert isinstance(exc.value.reason, ssl.SSLCertVerificationError), exc.value
    assert "certificate verify failed" in str(exc.value.reason)


def test_rbac_denies_an_unbound_identity(k8s_api, namespace):
    cfg = k8s_api.configuration
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
    # RBAC is evaluated per request: the binding allows exactly what the role grants, nothing else. The authorizer
    # sees a new binding through its informer, a moment after the create returned (on a loaded machine: seconds)
    deadline = time.monotonic() + 30
    while True:
        try:
            pods = client.CoreV1Api(imp).list_namespaced_pod(namespace).items
            break
        except ApiException as denied:
            if denied.status != 403 or time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    assert pods == []
    with pytest.raises(ApiException) as exc:
        client.CoreV1Api(imp).list_namespaced_secret(namespace)
    assert exc.value.status == 403


def assert_node_shape(core, platform, trays, control_plane):
    """The nodes as the platform shows them (see docs/testing.md, "The simulated kubelet")."""
    nodes = {n.metadata.name: n for n in core.list_node().items}
    assert sorted(nodes) == sorted(trays + [control_plane])
    for name in trays:
        node = nodes[name]
        labels = node.metadata.labels
        assert _ready(node)
        assert labels["nvidia.com/gpu.present"] == "true"
        assert labels["feature.node.kubernetes.io/rdma.available"] == "true"
        assert node.status.allocatable["nvidia.com/gpu"] == "4"
        assert not node.spec.taints
        sriov = sorted(k for k in node.status.allocatable if k.startswith("nvidia.com/sriov_resource_rail_"))
        if platform == "nvke-gb200":
            assert node.spec.provider_id.startswith("nico://")
            assert labels["nvidia.com/gpu.deploy.driver"] == "true"
            assert [node.status.allocatable[k] for k in sriov] == ["16"] * 4 and len(sriov) == 4
            assert node.status.node_info.os_image.startswith("Ubuntu 24.04")
        else:
            assert node.spec.provider_id == "rke2://" + name
            assert labels["nvidia.com/gpu.deploy.driver"] == "pre-installed"
            assert sriov == []       # DRA (dranet) instead of the SR-IOV device plugin
            assert node.status.node_info.os_image.startswith("Ubuntu 26.04")
            assert node.status.node_info.kubelet_version.endswith("+rke2r1")
    cp = nodes[control_plane]
    assert "node-role.kubernetes.io/control-plane" in cp.metadata.labels
    assert "nvidia.com/gpu" not in cp.status.allocatable
    if platform == "nvke-gb200":
        assert cp.metadata.labels["nvidia.com/gpu.present"] == "true"     # unearned
    else:
        assert "nvidia.com/gpu.present" not in cp.metadata.labels
        assert cp.metadata.labels["node-role.kubernetes.io/etcd"] == "true"


def test_nodes_look_like_the_platforms_trays(kcluster, core):
    assert_node_shape(core, kcluster.platform, kcluster.trays, kcluster.control_plane)


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
    res = subprocess.run([KCLUSTER, "fault", "node-notready", "tray99"],
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


# A second cluster next to the session's one: own state directory and ports, so neither touches the other.
HOOK_ENV = {"KCLUSTER_STATE": "/run/gpu-tray-kcluster-hook", "KCLUSTER_ETCD_PORT": "23890",
            "KCLUSTER_ETCD_PEER_PORT": "23900", "KCLUSTER_APISERVER_PORT": "16543",
            "KCLUSTER_KUBELET_PORT": "16550"}


def _playbook(path, env, *extra):
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    return subprocess.run([playbook, str(path)] + list(extra), cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)


def test_cluster_yml_hook_brings_an_rke2_cluster_up_and_down(kcluster, tmp_path):
    """cluster.yml present -> kcluster_kubeconfig set, 2 rke2-vr200 trays; absent -> everything gone."""
    env = checkout_env(REPO, base=dict(os.environ, **HOOK_ENV), keep=True, nocolor=False)
    state = HOOK_ENV["KCLUSTER_STATE"]
    if os.path.exists(state):      # leftovers of an interrupted run of this test
        subprocess.run([KCLUSTER, "down"], env=env, capture_output=True, check=True)
    facts = tmp_path / "facts.json"
    wrapper = tmp_path / "hook.yml"
    wrapper.write_text(json.dumps([
        {"name": "Test cluster", "ansible.builtin.import_playbook": os.path.join(HERE, "cluster.yml")},
        {"name": "Record what the hook published", "hosts": "localhost", "connection": "local", "gather_facts": False,
         "tasks": [{"name": "Write the facts", "ansible.builtin.copy": {
             "dest": str(facts), "mode": "0600",
             "content": "{{ {'kubeconfig': kcluster_kubeconfig | default(''), 'helm': kcluster_helm | default('')} | to_json }}"}}]},
    ]))
    session_before = json.loads(subprocess.run([KCLUSTER, "status", "--json"], capture_output=True, text=True,
                                               check=False).stdout)
    pids = {}
    try:
        res = _playbook(wrapper, env, "-e", "kcluster_state=present", "-e", "kcluster_platform=rke2-vr200",
                        "-e", "kcluster_nodes=2")
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
        with open(os.path.join(state, "pids.json")) as fh:
            pids = json.load(fh)
        published = json.loads(facts.read_text())
        assert published["kubeconfig"] == os.path.join(state, "admin.kubeconfig")
        assert os.path.exists(published["helm"]) and published["helm"] == kcluster.helm
        st = json.loads(subprocess.run([KCLUSTER, "status", "--json"], env=env, capture_output=True, text=True,
                                       check=True).stdout)
        assert st["up"] and st["platform"] == "rke2-vr200" and st["nodes"] == 2
        assert st["apiserver"] == "https://127.0.0.1:%s" % HOOK_ENV["KCLUSTER_APISERVER_PORT"]
        core = client.CoreV1Api(client.ApiClient(configuration=kube_config(published["kubeconfig"])))
        assert_node_shape(core, "rke2-vr200", ["tray01", "tray02"], "cp01")
        # present again = reuse, reported unchanged
        again = _playbook(os.path.join(HERE, "cluster.yml"), env, "-e", "kcluster_state=present",
                          "-e", "kcluster_platform=rke2-vr200", "-e", "kcluster_nodes=2")
        assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout[-3000:]

        res = _playbook(os.path.join(HERE, "cluster.yml"), env, "-e", "kcluster_state=absent")
        assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
        assert "changed=1" in res.stdout, res.stdout[-3000:]
        assert not os.path.exists(state)
        st = json.loads(subprocess.run([KCLUSTER, "status", "--json"], env=env, capture_output=True, text=True,
                                       check=False).stdout)
        assert st["up"] is False and not any(pr["running"] for pr in st["processes"].values()), st
        assert not [n for n, e in pids.items() if kc.alive(e)], pids
    finally:
        if os.path.exists(state):   # a failed assertion above: clean up without masking it
            subprocess.run([KCLUSTER, "down"], env=env, capture_output=True, check=False)
    # the session's cluster was not touched
    session_after = json.loads(subprocess.run([KCLUSTER, "status", "--json"], capture_output=True, text=True,
                                              check=False).stdout)
    assert session_after["up"] and session_after["processes"] == session_before["processes"]
