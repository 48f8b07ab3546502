# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the simulated kubelet's pure logic (no cluster needed)."""

import json

import pytest

import simkubelet as sk

NOW = 1_800_000_000.0


def _node(platform="nvke-gb200", name="tray01", index=1, cp=False, ready=True, taints=None):
    node = sk.build_node(platform, name, index, cp)
    node["status"] = sk.node_status(platform, name, index, cp, NOW, ready=ready)
    if taints:
        node["spec"]["taints"] = taints
    return node


def _pod(image="registry.invalid/app:1.0", restart="Always", start=None, **spec):
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u-1"},
           "spec": {"containers": [{"name": "app", "image": image}], "restartPolicy": restart},
           "status": {}}
    pod["spec"].update(spec)
    if start is not None:
        pod["status"]["startTime"] = sk.rfc3339(start)
    return pod


def _cond(status, ctype):
    return next(c["status"] for c in status["conditions"] if c["type"] == ctype)


# ------------------------------------------------------------- nodes per platform

def test_nvke_tray_labels_capacity_provider():
    node = _node("nvke-gb200")
    labels = node["metadata"]["labels"]
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["feature.node.kubernetes.io/rdma.available"] == "true"
    assert labels["nvidia.com/gpu.deploy.driver"] == "true"
    assert node["spec"]["providerID"].startswith("nico://")
    # a UUID after the scheme, stable per host name
    assert len(node["spec"]["providerID"].split("://")[1]) == 36
    assert node["spec"]["providerID"] == sk.build_node("nvke-gb200", "tray01", 1)["spec"]["providerID"]
    assert node["spec"]["providerID"] != sk.build_node("nvke-gb200", "tray02", 2)["spec"]["providerID"]
    assert "taints" not in node["spec"]
    cap = node["status"]["capacity"]
    assert cap["nvidia.com/gpu"] == "4"
    for rail in range(4):
        assert cap["nvidia.com/sriov_resource_rail_%d" % rail] == "16"
        assert node["status"]["allocatable"]["nvidia.com/sriov_resource_rail_%d" % rail] == "16"
    assert "nvidia.com/sriov_resource_rail_4" not in cap
    assert node["status"]["addresses"][0] == {"type": "InternalIP", "address": "198.18.1.2"}
    assert node["status"]["nodeInfo"]["architecture"] == "arm64"
    assert "nvidia-64k" in node["status"]["nodeInfo"]["kernelVersion"]


def test_nvke_control_plane_carries_unearned_gpu_labels_but_no_gpu():
    cp = _node("nvke-gb200", "cp01", 250, cp=True)
    labels = cp["metadata"]["labels"]
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["nvidia.com/gpu.deploy.driver"] == "true"
    assert labels["feature.node.kubernetes.io/pci-15b3.present"] == "true"
    assert "node-role.kubernetes.io/control-plane" in labels
    # ... but not the label the SR-IOV policies select on, and no GPUs or VFs to offer
    assert "feature.node.kubernetes.io/rdma.available" not in labels
    assert "nvidia.com/gpu" not in cp["status"]["capacity"]
    assert not [k for k in cp["status"]["capacity"] if k.startswith("nvidia.com/sriov")]


def test_rke2_tray_differs_from_nvke():
    node = _node("rke2-vr200")
    labels = node["metadata"]["labels"]
    assert node["spec"]["providerID"] == "rke2://tray01"
    assert labels["nvidia.com/gpu.deploy.driver"] == "pre-installed"
    assert not [k for k in node["status"]["capacity"] if k.startswith("nvidia.com/sriov")]
    assert node["status"]["nodeInfo"]["osImage"].startswith("Ubuntu 26.04")
    cp = _node("rke2-vr200", "cp01", 250, cp=True)
    assert "nvidia.com/gpu.present" not in cp["metadata"]["labels"]
    assert cp["metadata"]["labels"]["node-role.kubernetes.io/etcd"] == "true"


def test_unknown_platform_is_rejected():
    with pytest.raises(ValueError, match="unknown platform"):
        sk.build_node("eks-h100", "tray01", 1)


def test_notready_node_status():
    node = _node(ready=False)
    assert not sk.node_ready(node)
    ready = [c for c in node["status"]["conditions"] if c["type"] == "Ready"][0]
    assert ready["reason"] == "KubeletNotReady"
    assert sk.node_ready(_node())


def test_heartbeat_keeps_transition_time_unless_the_status_changes():
    first = sk.node_status("nvke-gb200", "tray01", 1, False, NOW, ready=True)
    later = NOW + 60
    beat = sk.node_status("nvke-gb200", "tray01", 1, False, later, ready=True, previous=first["conditions"])
    for cond in beat["conditions"]:
        assert cond["lastTransitionTime"] == sk.rfc3339(NOW), cond
        assert cond["lastHeartbeatTime"] == sk.rfc3339(later), cond
    # Ready flips: only that condition gets a new transition time
    flipped = sk.node_status("nvke-gb200", "tray01", 1, False, later, ready=False, previous=first["conditions"])
    times = {c["type"]: c["lastTransitionTime"] for c in flipped["conditions"]}
    assert times["Ready"] == sk.rfc3339(later)
    assert times["MemoryPressure"] == sk.rfc3339(NOW)
    # the node lifecycle controller set Ready=Unknown meanwhile: back to True is a transition
    unknown = [dict(c, status="Unknown") if c["type"] == "Ready" else c for c in first["conditions"]]
    back = sk.node_status("nvke-gb200", "tray01", 1, False, later, ready=True, previous=unknown)
    assert [c["lastTransitionTime"] for c in back["conditions"] if c["type"] == "Ready"] == [sk.rfc3339(later)]


def test_tray_names():
    assert sk.tray_names(3) == ["tray01", "tray02", "tray03"]


# ------------------------------------------------------------- scheduling

def test_quantities():
    assert sk.parse_quantity("500m") == 0.5
    assert sk.parse_quantity("4Gi") == 4 * 2 ** 30
    assert sk.parse_quantity("16") == 16
    assert sk.parse_quantity("1e3") == 1000


def test_gpu_requests_fit_then_exhaust_allocatable():
    node = _node()
    gpu_pod = _pod(containers=[{"name": "c", "image": "x:1", "resources": {"limits": {"nvidia.com/gpu": "4"}}}])
    assert sk.unfit_reason(gpu_pod, node, []) is None
    assert sk.unfit_reason(gpu_pod, node, [gpu_pod]) == "Insufficient nvidia.com/gpu"
    cp = _node("nvke-gb200", "cp01", 250, cp=True)
    assert sk.unfit_reason(gpu_pod, cp, []) == "Insufficient nvidia.com/gpu"


def test_node_selector_on_unearned_label_also_selects_control_plane():
    pod = _pod(nodeSelector={"nvidia.com/gpu.present": "true"})
    nodes = [_node(), _node("nvke-gb200", "cp01", 250, cp=True)]
    assert [sk.unfit_reason(pod, n, []) for n in nodes] == [None, None]
    rdma = _pod(nodeSelector={"feature.node.kubernetes.io/rdma.available": "true"})
    assert sk.unfit_reason(rdma, nodes[1], []) == "node(s) didn't match node selector"


def test_daemonset_match_fields_and_affinity_operators():
    aff = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["tray02"]}]}]}}}
    pod = _pod(affinity=aff)
    assert sk.unfit_reason(pod, _node(name="tray02", index=2), []) is None
    assert sk.unfit_reason(pod, _node(name="tray01"), []) == "node(s) didn't match node selector"
    notcp = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"}]}]}}}
    assert sk.unfit_reason(_pod(affinity=notcp), _node(), []) is None
    assert sk.unfit_reason(_pod(affinity=notcp), _node("nvke-gb200", "cp01", 250, cp=True), []) is not None


def test_taints_and_tolerations():
    taint = {"key": "skyhook.nvidia.com", "value": "runtime-required", "effect": "NoSchedule"}
    node = _node(taints=[taint])
    assert "had taint {skyhook.nvidia.com" in sk.unfit_reason(_pod(), node, [])
    assert sk.unfit_reason(_pod(tolerations=[{"key": "skyhook.nvidia.com", "operator": "Exists"}]), node, []) is None
    assert sk.unfit_reason(_pod(tolerations=[{"operator": "Exists"}]), node, []) is None
    wrong_value = [{"key": "skyhook.nvidia.com", "operator": "Equal", "value": "other"}]
    assert sk.unfit_reason(_pod(tolerations=wrong_value), node, []) is not None
    # PreferNoSchedule does not block
    assert sk.unfit_reason(_pod(), _node(taints=[dict(taint, effect="PreferNoSchedule")]), []) is None


def test_not_ready_nodes_are_skipped_and_reported():
    nodes = [_node(ready=False), _node(name="tray02", index=2, ready=False)]
    name, why = sk.choose_node(_pod(), nodes, {})
    assert name is None
    assert why == "0/2 nodes are available: 2 node(s) were not ready."
    nodes.append(_node(name="tray03", index=3))
    assert sk.choose_node(_pod(), nodes, {}) == ("tray03", None)


def test_choose_node_spreads_by_pod_count():
    nodes = [_node(), _node(name="tray02", index=2)]
    assert sk.choose_node(_pod(), nodes, {"tray01": [_pod()]})[0] == "tray02"


# ------------------------------------------------------------- pod status

def test_healthy_pod_runs_ready():
    st = sk.desired_pod_status(_pod(), NOW)
    assert st["phase"] == "Running"
    assert _cond(st, "Ready") == "True" and _cond(st, "ContainersReady") == "True"
    assert st["containerStatuses"][0]["ready"] is True
    assert "running" in st["containerStatuses"][0]["state"]


def test_pod_on_notready_node_is_not_ready():
    st = sk.desired_pod_status(_pod(), NOW, node_is_ready=False)
    assert st["phase"] == "Running"
    assert _cond(st, "Ready") == "False"


@pytest.mark.parametrize("image,broken", [
    ("registry.invalid/app:broken", True),
    ("localhost:5000/app:broken", True),
    ("app:broken@sha256:abc", True),
    ("registry.invalid/broken:1.0", False),
    ("localhost:5000/app", False),
    ("app:broken-not", False),
])
def test_broken_tag_detection(image, broken):
    assert sk.is_broken_image(image) is broken


def test_broken_image_crashloops_with_growing_restarts():
    first = sk.desired_pod_status(_pod("r/app:broken", start=NOW), NOW)
    later = sk.desired_pod_status(_pod("r/app:broken", start=NOW - 75), NOW)
    for st in (first, later):
        cs = st["containerStatuses"][0]
        assert st["phase"] == "Running"
        assert _cond(st, "Ready") == "False"
        assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
        assert cs["lastState"]["terminated"]["exitCode"] == 1
        assert cs["ready"] is False
    assert first["containerStatuses"][0]["restartCount"] == 0
    # back-off 10, 20, 40 s: restarts at 10, 30, 70 s
    assert later["containerStatuses"][0]["restartCount"] == 3
    assert sk.status_digest(first) != sk.status_digest(later)


def test_crashloop_backoff_is_capped():
    assert [sk.crashloop_restarts(t) for t in (0, 9.9, 10, 29.9, 30, 70)] == [0, 0, 1, 1, 2, 3]
    # 10+20+40+80+160 = 310, then every 300 s
    assert sk.crashloop_restarts(310) == 5
    assert sk.crashloop_restarts(610) == 6


def test_run_to_completion_pods():
    running = sk.desired_pod_status(_pod(restart="Never", start=NOW), NOW)
    assert running["phase"] == "Running"
    done = sk.desired_pod_status(_pod(restart="Never", start=NOW - 5), NOW)
    assert done["phase"] == "Succeeded"
    assert done["containerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    failed = sk.desired_pod_status(_pod("r/job:broken", restart="Never", start=NOW - 5), NOW)
    assert failed["phase"] == "Failed"
    onfailure = sk.desired_pod_status(_pod("r/job:broken", restart="OnFailure", start=NOW - 5), NOW)
    assert onfailure["containerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"


def test_broken_init_container_blocks_pod():
    pod = _pod(initContainers=[{"name": "init", "image": "r/init:broken"}])
    st = sk.desired_pod_status(pod, NOW)
    assert st["phase"] == "Pending"
    assert _cond(st, "Initialized") == "False"
    assert st["initContainerStatuses"][0]["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    ok = sk.desired_pod_status(_pod(initContainers=[{"name": "init", "image": "r/init:1"}]), NOW)
    assert ok["phase"] == "Running"
    assert ok["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"


def test_status_digest_ignores_timestamps_only():
    a = sk.desired_pod_status(_pod(start=NOW), NOW)
    b = sk.desired_pod_status(_pod(start=NOW), NOW + 3)
    assert sk.status_digest(a) == sk.status_digest(b)
    assert sk.status_digest(a) != sk.status_digest({})


def test_read_faults(tmp_path):
    f = tmp_path / "faults.json"
    assert sk.read_faults(str(f)) == {}
    f.write_text(json.dumps({"tray01": "notready", "tray02": "unreachable", "tray03": "bogus"}))
    assert sk.read_faults(str(f)) == {"tray01": "notready", "tray02": "unreachable"}
    f.write_text("{garbled")
    assert sk.read_faults(str(f)) == {}


@pytest.mark.parametrize("image, tag", [("repo/app:hang", "hang"), ("reg:5000/app:broken@sha256:ab", "broken"),
                                        ("reg:5000/app", None), ("app", None)])
def test_image_tags(image, tag):
    assert sk.image_tag(image) == tag


def test_hanging_image_never_completes_a_run_to_completion_pod():
    pod = {"metadata": {"uid": "u1", "name": "launcher"},
           "spec": {"restartPolicy": "Never", "containers": [{"name": "node", "image": "r/nccl:hang"}]},
           "status": {"startTime": "2026-12-04T10:00:00Z"}}
    start = sk.parse_time("2026-12-04T10:00:00Z")
    status = sk.desired_pod_status(pod, start + 3600)
    assert status["phase"] == "Running" and "running" in status["containerStatuses"][0]["state"]
    pod["spec"]["containers"][0]["image"] = "r/nccl:ok"
    assert sk.desired_pod_status(pod, start + 3600)["phase"] == "Succeeded"


def test_log_endpoint_serves_the_mapped_file_for_the_containers_image(tmp_path):
    log = tmp_path / "out.log"
    log.write_text("# nThread 1 nGpus 1\n")
    pod = {"spec": {"containers": [{"name": "node", "image": "r/nccl:ok"}],
                    "initContainers": [{"name": "init", "image": "r/other:1"}]}}
    mapping = {"r/nccl:ok": str(log)}
    assert sk.container_log(pod, "node", mapping) == "# nThread 1 nGpus 1\n"
    assert sk.container_log(pod, "init", mapping) == ""          # printed nothing
    assert sk.container_log(pod, "nope", mapping) is None        # the kubelet answers 400
    assert sk.log_request_path("/containerLogs/ns1/pod-a/node?tailLines=10") == ("ns1", "pod-a", "node")
    assert sk.log_request_path("/containerLogs/ns1/pod-a") is None and sk.log_request_path("/pods") is None
    (tmp_path / "map.json").write_text('{"r/nccl:ok": "%s"}' % log)
    assert sk.read_log_map(str(tmp_path / "map.json")) == mapping
    assert sk.read_log_map(str(tmp_path / "missing.json")) == {}


def test_node_advertises_its_log_endpoint():
    status = sk.node_status("nvke-gb200", "tray01", 1, False, 0.0, kubelet_endpoint=("localhost", 16250))
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 16250}}
    assert status["addresses"][0] == {"type": "InternalIP", "address": "198.18.1.2"}
    assert {"type": "InternalDNS", "address": "localhost"} in status["addresses"]
    plain = sk.node_status("nvke-gb200", "tray01", 1, False, 0.0)
    assert plain["daemonEndpoints"]["kubeletEndpoint"]["Port"] == 10250
    assert all(a["type"] != "InternalDNS" for a in plain["addresses"])
