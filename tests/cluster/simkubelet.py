# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Simulated kubelet (+ minimal scheduler) for the gpu_tray.cluster test cluster.

It plays the role kwok plays elsewhere: there is no container runtime, pods never run, but the API
server sees what a cluster of GPU trays would show.

* registers one Node per lab tray (tray01..trayNN) and one control-plane node, with the labels,
  taints, capacity/allocatable, addresses, nodeInfo and providerID of the chosen platform;
* heartbeats (node status + Lease in kube-node-lease), so kube-controller-manager's node lifecycle
  controller treats the nodes as alive;
* schedules pending pods (nodeSelector, required node affinity incl. DaemonSet matchFields,
  taints/tolerations, resource requests against allocatable, NotReady/unschedulable nodes);
* marks bound pods Running/Ready; containers whose image tag is ``:broken`` crash-loop
  (CrashLoopBackOff, Ready=False, restartCount growing with kubelet's back-off); pods with
  restartPolicy Never/OnFailure complete (Succeeded) unless broken, or unless their image tag is
  ``:hang`` (a container that never ends: it keeps running until the pod is deleted);
* serves container logs the way a kubelet does (``GET /containerLogs/<ns>/<pod>/<container>`` over
  TLS, which the API server proxies for ``kubectl logs``): the log of a container is the file the log
  map (``--log-map``, JSON ``{"<image>": "<file>"}``, re-read on every request) names for its image,
  empty for any other image - a stand-in for what the container printed;
* finishes graceful deletion (a real kubelet deletes the pod object once containers stopped);
* fault injection: a JSON file ``{"<node>": "notready" | "unreachable"}`` re-read every loop:
  ``notready`` = the kubelet reports Ready=False (its pods become not ready), ``unreachable`` = the
  kubelet stops heartbeating for that node (the node lifecycle controller marks it Unknown).

The pure parts (node objects, scheduling predicates, pod status) are plain functions on JSON-shaped
dicts, unit-tested in tests/cluster/test_cluster_simkubelet.py.
"""

import argparse
import datetime
import json
import logging
import re
import signal
import sys
import time
import uuid

PLATFORMS = ("nvke-gb200", "rke2-vr200")
SIM_ANNOTATION = "gpu-tray.test/simulated"
GPUS_PER_TRAY = 4
SRIOV_RAILS = 4
SRIOV_VFS_PER_RAIL = 16
CRASHLOOP_BASE = 10.0     # kubelet back-off: 10 s, doubled per restart, capped at 300 s
CRASHLOOP_CAP = 300.0
COMPLETE_AFTER = 2.0      # seconds a run-to-completion pod "runs" before it terminates
HEARTBEAT_EVERY = 10.0
NAMESPACE_UUID = uuid.UUID("6f1b7c0e-6a63-4d55-9a39-1d3d0f9a7f41")

# What a tray of each platform looks like once the platform's operators ran (NFD, GPU Feature
# Discovery, SR-IOV device plugin). Sources: the NVKE GB200 and RKE2 VR200 setup guides (providerID
# nico://<uuid> on NVKE, nvidia.com/sriov_resource_rail_0..3 = 16 each, untainted GPU nodes,
# control-plane nodes carrying unearned GPU-node labels, Ubuntu 24.04 -nvidia-64k / Ubuntu 26.04
# 7.0 -nvidia-bos-64k kernels, containerd 2.3.0 on NVKE v0.22.0, RKE2's containerd 2.1 at
# v1.34.1+rke2r1). Core counts and memory sizes are representative, not measured.
PLATFORM_FACTS = {
    "nvke-gb200": {
        "os_image": "Ubuntu 24.04.3 LTS",
        "kernel": "6.8.0-1040-nvidia-64k",
        "container_runtime": "containerd://2.3.0",
        "kubelet_version": "v1.34.2",
        "gpu_product": "NVIDIA-GB200",
        "cpu": "144",
        "memory_gi": 960,
        "driver_label": "true",       # GPU Operator deploys the driver container
        "sriov_rails": SRIOV_RAILS,
        "control_plane_labels": {
            # Labels the NVKE control plane carries without earning them (no GPU, no ConnectX-7;
            # a BlueField-3 gives it the Mellanox PCI label).
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.deploy.driver": "true",
            "feature.node.kubernetes.io/pci-15b3.present": "true",
            "feature.node.kubernetes.io/pci-0302_10de.present": "true",
            "node-role.kubernetes.io/control-plane": "",
        },
    },
    "rke2-vr200": {
        "os_image": "Ubuntu 26.04 LTS",
        "kernel": "7.0.0-1004-nvidia-bos-64k",
        "container_runtime": "containerd://2.1.4-k3s1",
        "kubelet_version": "v1.34.1+rke2r1",
        "gpu_product": None,          # GFD product string for VR200 not confirmed: not set
        "cpu": "176",
        "memory_gi": 1536,
        "driver_label": "pre-installed",   # host-managed driver stack
        "sriov_rails": 0,                  # RKE2 VR200 uses DRA (dranet), no SR-IOV device plugin
        "control_plane_labels": {
            "node-role.kubernetes.io/control-plane": "true",
            "node-role.kubernetes.io/etcd": "true",
            "node-role.kubernetes.io/master": "true",
        },
    },
}


def tray_names(count):
    """Lab tray host names: tray01, tray02, ..."""
    return ["tray%02d" % i for i in range(1, count + 1)]


def provider_id(platform, name):
    if platform == "nvke-gb200":
        return "nico://%s" % uuid.uuid5(NAMESPACE_UUID, name)
    return "rke2://%s" % name


def _resources(cpu, memory_gi, gpus, rails, vfs=None):
    res = {
        "cpu": cpu,
        "memory": "%dGi" % memory_gi,
        "pods": "110",
        "ephemeral-storage": "3500Gi",
        "hugepages-2Mi": "0",
    }
    if gpus:
        res["nvidia.com/gpu"] = str(gpus)
    for rail in range(rails):
        res["nvidia.com/sriov_resource_rail_%d" % rail] = str(SRIOV_VFS_PER_RAIL if vfs is None else vfs)
    return res


def _allocatable(capacity):
    alloc = dict(capacity)
    alloc["cpu"] = "%dm" % (int(capacity["cpu"]) * 1000 - 500)
    alloc["memory"] = "%dGi" % (int(capacity["memory"][:-2]) - 8)
    alloc["ephemeral-storage"] = "3400Gi"
    return alloc


def build_node(platform, name, index, control_plane=False):
    """The Node object (metadata + spec) a tray or control-plane node of `platform` registers.

    `index` is the lab index: trayNN -> NN, its InternalIP is 198.18.NN.2 as in the lab.
    Status (capacity, conditions, ...) comes from `node_status`.
    """
    if platform not in PLATFORM_FACTS:
        raise ValueError("unknown platform %r (expected one of %s)" % (platform, ", ".join(PLATFORMS)))
    facts = PLATFORM_FACTS[platform]
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "arm64",
        "gpu-tray.test/platform": platform,
    }
    if control_plane:
        labels.update(facts["control_plane_labels"])
    else:
        labels.update({
            "nvidia.com/gpu.present": "true",
            "nvidia.com/gpu.count": str(GPUS_PER_TRAY),
            "nvidia.com/gpu.deploy.driver": facts["driver_label"],
            "feature.node.kubernetes.io/pci-10de.present": "true",
            "feature.node.kubernetes.io/pci-0302_10de.present": "true",
            "feature.node.kubernetes.io/pci-15b3.present": "true",
            "feature.node.kubernetes.io/rdma.available": "true",
        })
        if facts["gpu_product"]:
            labels["nvidia.com/gpu.product"] = facts["gpu_product"]
    if platform == "rke2-vr200":
        labels["node.kubernetes.io/instance-type"] = "rke2"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {
                SIM_ANNOTATION: "true",
                "gpu-tray.test/lab-index": str(index),
                "node.alpha.kubernetes.io/ttl": "0",
            },
        },
        # GPU trays are untainted on both platforms; so are the control-plane nodes (RKE2 servers
        # by default; on NVKE operator pods were observed landing on the control plane).
        "spec": {"providerID": provider_id(platform, name)},
    }


def node_status(platform, name, index, control_plane, now, ready=True, message=None, previous=None,
                kubelet_endpoint=None, sriov_vfs=None):
    """The node's status as its kubelet would post it at `now`.

    `previous`: the conditions the node has on the server; like the kubelet, a condition whose status did
    not change keeps its lastTransitionTime (only lastHeartbeatTime moves).
    `kubelet_endpoint`: (host, port) where this simulated kubelet serves logs; the host is added as the
    node's InternalDNS address (kcluster makes the API server prefer that type) and the port is the
    kubelet endpoint. None: port 10250 and no such address (nothing serves it).
    """
    facts = PLATFORM_FACTS[platform]
    if control_plane:
        capacity = _resources("32", 256, 0, 0)
    else:
        capacity = _resources(facts["cpu"], facts["memory_gi"], GPUS_PER_TRAY, facts["sriov_rails"], sriov_vfs)
    ts = rfc3339(now)
    conditions = [
        _node_cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available", ts),
        _node_cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", ts),
        _node_cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available", ts),
    ]
    if ready:
        conditions.append(_node_cond("Ready", "True", "KubeletReady", "kubelet is posting ready status", ts))
    else:
        conditions.append(_node_cond("Ready", "False", "KubeletNotReady",
                                     message or "container runtime network not ready (simulated fault)", ts))
    before = {c.get("type"): c for c in previous or []}
    for cond in conditions:
        prev = before.get(cond["type"])
        if prev and prev.get("status") == cond["status"] and prev.get("lastTransitionTime"):
            cond["lastTransitionTime"] = prev["lastTransitionTime"]
    addresses = [
        {"type": "InternalIP", "address": "198.18.%d.2" % index},
        {"type": "Hostname", "address": name},
    ]
    if kubelet_endpoint:
        addresses.append({"type": "InternalDNS", "address": kubelet_endpoint[0]})
    return {
        "capacity": capacity,
        "allocatable": _allocatable(capacity),
        "conditions": conditions,
        "addresses": addresses,
        "daemonEndpoints": {"kubeletEndpoint": {"Port": kubelet_endpoint[1] if kubelet_endpoint else 10250}},
        "nodeInfo": {
            "machineID": uuid.uuid5(NAMESPACE_UUID, "machine-" + name).hex,
            "systemUUID": str(uuid.uuid5(NAMESPACE_UUID, "system-" + name)),
            "bootID": str(uuid.uuid5(NAMESPACE_UUID, "boot-" + name)),
            "kernelVersion": facts["kernel"],
            "osImage": facts["os_image"],
            "containerRuntimeVersion": facts["container_runtime"],
            "kubeletVersion": facts["kubelet_version"],
            "kubeProxyVersion": facts["kubelet_version"],
            "operatingSystem": "linux",
            "architecture": "arm64",
        },
    }


def _node_cond(ctype, status, reason, message, ts):
    return {"type": ctype, "status": status, "reason": reason, "message": message,
            "lastHeartbeatTime": ts, "lastTransitionTime": ts}


def rfc3339(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(value):
    if not value:
        return None
    return datetime.datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


# ---------------------------------------------------------------- scheduling predicates

_SUFFIX = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
           "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}


def parse_quantity(value):
    """Kubernetes quantity ("500m", "4Gi", "2", "1e3") -> float."""
    text = str(value).strip()
    for suffix in sorted(_SUFFIX, key=len, reverse=True):
        if text.endswith(suffix) and text[:-len(suffix)]:
            return float(text[:-len(suffix)]) * _SUFFIX[suffix]
    return float(text)


def pod_requests(pod):
    """Effective requests: max(sum of containers, any init container), limits stand in for requests."""
    spec = pod.get("spec", {})
    total = {}
    for c in spec.get("containers", []):
        for k, v in _container_requests(c).items():
            total[k] = total.get(k, 0.0) + v
    for c in spec.get("initContainers", []) or []:
        for k, v in _container_requests(c).items():
            total[k] = max(total.get(k, 0.0), v)
    total["pods"] = 1.0
    return total


def _container_requests(container):
    res = container.get("resources") or {}
    merged = dict(res.get("limits") or {})
    merged.update(res.get("requests") or {})
    return {k: parse_quantity(v) for k, v in merged.items()}


def tolerates(tolerations, taint):
    for t in tolerations or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        op = t.get("operator", "Equal")
        if not t.get("key") and op == "Exists":
            return True
        if t.get("key") != taint.get("key"):
            continue
        if op == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _match_expression(expr, value, present):
    op = expr.get("operator")
    values = expr.get("values") or []
    if op == "In":
        return present and value in values
    if op == "NotIn":
        return not present or value not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present:
        try:
            return (int(value) > int(values[0])) if op == "Gt" else (int(value) < int(values[0]))
        except (ValueError, IndexError):
            return False
    return False


def _term_matches(term, node):
    labels = node.get("metadata", {}).get("labels", {}) or {}
    for expr in term.get("matchExpressions") or []:
        key = expr.get("key")
        if not _match_expression(expr, labels.get(key), key in labels):
            return False
    for expr in term.get("matchFields") or []:
        if expr.get("key") != "metadata.name":
            return False
        if not _match_expression(expr, node["metadata"]["name"], True):
            return False
    return True


def node_ready(node):
    for cond in node.get("status", {}).get("conditions", []) or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def unfit_reason(pod, node, pods_on_node):
    """Why `pod` cannot be placed on `node` (a short scheduler-like reason), or None if it fits."""
    spec = pod.get("spec", {})
    labels = node.get("metadata", {}).get("labels", {}) or {}
    if not node_ready(node):
        return "node(s) were not ready"
    if node.get("spec", {}).get("unschedulable"):
        if not tolerates(spec.get("tolerations"), {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
            return "node(s) were unschedulable"
    for key, value in (spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return "node(s) didn't match node selector"
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if terms and not any(_term_matches(t, node) for t in terms):
        return "node(s) didn't match node selector"
    for taint in node.get("spec", {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(spec.get("tolerations"), taint):
            return "node(s) had taint {%s: %s}, that the pod didn't tolerate" % (taint.get("key"), taint.get("value", ""))
    alloc = {k: parse_quantity(v) for k, v in (node.get("status", {}).get("allocatable") or {}).items()}
    used = {}
    for other in pods_on_node:
        for k, v in pod_requests(other).items():
            used[k] = used.get(k, 0.0) + v
    for k, v in pod_requests(pod).items():
        if v <= 0:
            continue
        if used.get(k, 0.0) + v > alloc.get(k, 0.0) + 1e-9:
            return "Insufficient %s" % k
    return None


def choose_node(pod, nodes, pods_by_node):
    """Pick the feasible node with the fewest pods; returns (node_name, None) or (None, message)."""
    reasons = {}
    feasible = []
    for node in nodes:
        name = node["metadata"]["name"]
        reason = unfit_reason(pod, node, pods_by_node.get(name, []))
        if reason is None:
            feasible.append((len(pods_by_node.get(name, [])), name))
        else:
            reasons[reason] = reasons.get(reason, 0) + 1
    if feasible:
        return sorted(feasible)[0][1], None
    detail = ", ".join("%d %s" % (n, r) for r, n in sorted(reasons.items()))
    return None, "0/%d nodes are available: %s." % (len(nodes), detail)


def is_terminal(pod):
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


# ---------------------------------------------------------------- pod status

def image_tag(image):
    """The tag of an image reference (also `repo:tag@sha256:...`), None without one."""
    ref = (image or "").split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last else None


def is_broken_image(image):
    """`:broken` tag (also `repo:broken@sha256:...`)."""
    return image_tag(image) == "broken"


def is_hanging_image(image):
    """`:hang` tag: the container never ends by itself."""
    return image_tag(image) == "hang"


def crashloop_restarts(elapsed):
    """Restarts a crash-looping container has had after `elapsed` seconds under kubelet's back-off."""
    restarts, t, delay = 0, 0.0, CRASHLOOP_BASE
    while True:
        t += delay
        if t > elapsed:
            return restarts
        restarts += 1
        delay = min(delay * 2, CRASHLOOP_CAP)


def _image_repo(image):
    ref = image.split("@", 1)[0]
    head, last = ref.rpartition("/")[::2]
    name = last.split(":", 1)[0]
    return head + "/" + name if head else name


def _cid(pod, cname, restarts=0):
    return "containerd://" + uuid.uuid5(NAMESPACE_UUID, "%s/%s/%d" % (pod["metadata"].get("uid", ""), cname, restarts)).hex


def _cstatus(pod, c, state, ready, restarts=0, last=None, started=None):
    st = {"name": c["name"], "image": c.get("image", ""),
          "imageID": "docker-pullable://%s@sha256:%s" % (_image_repo(c.get("image", "")),
                                                         uuid.uuid5(NAMESPACE_UUID, c.get("image", "")).hex * 2),
          "containerID": _cid(pod, c["name"], restarts), "ready": ready, "restartCount": restarts,
          "state": state, "lastState": last or {}}
    if started is not None:
        st["started"] = started
    return st


def _cond(ctype, status, ts, reason=None, message=None):
    c = {"type": ctype, "status": status, "lastProbeTime": None, "lastTransitionTime": ts}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def desired_pod_status(pod, now, node_is_ready=True, host_ip="198.18.1.2", pod_ip="198.19.1.10"):
    """The status a kubelet would report for a bound pod at time `now` (epoch seconds).

    Healthy containers run and are Ready; `:broken` images crash-loop; run-to-completion pods
    (restartPolicy Never/OnFailure) end Succeeded (or Failed when broken and Never).
    On a NotReady node every container is reported not ready.
    """
    spec = pod.get("spec", {})
    status = pod.get("status", {}) or {}
    start = parse_time(status.get("startTime")) or now
    start_ts = rfc3339(start)
    elapsed = max(0.0, now - start)
    policy = spec.get("restartPolicy", "Always")
    out = {"hostIP": host_ip, "podIP": pod_ip, "podIPs": [{"ip": pod_ip}], "startTime": start_ts,
           "qosClass": status.get("qosClass", "BestEffort")}

    def crashing(c, restarts):
        finished = rfc3339(now)
        return _cstatus(pod, c, {"waiting": {"reason": "CrashLoopBackOff",
                                             "message": "back-off restarting failed container %s (simulated: image tag :broken)" % c["name"]}},
                        False, restarts,
                        last={"terminated": {"exitCode": 1, "reason": "Error", "startedAt": start_ts,
                                             "finishedAt": finished, "containerID": _cid(pod, c["name"], restarts)}},
                        started=False)

    # init containers run first, in order
    init_statuses = []
    init_blocked = None
    for c in spec.get("initContainers") or []:
        if is_broken_image(c.get("image")):
            if policy == "Never":
                init_statuses.append(_cstatus(pod, c, {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": start_ts,
                                                                      "finishedAt": start_ts, "containerID": _cid(pod, c["name"])}}, False))
                init_blocked = "Failed"
            else:
                init_statuses.append(crashing(c, crashloop_restarts(elapsed)))
                init_blocked = "CrashLoop"
            break
        init_statuses.append(_cstatus(pod, c, {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": start_ts,
                                                              "finishedAt": start_ts, "containerID": _cid(pod, c["name"])}}, False))
    if init_statuses:
        out["initContainerStatuses"] = init_statuses

    containers = spec.get("containers", [])
    if init_blocked:
        out["phase"] = "Failed" if init_blocked == "Failed" else "Pending"
        out["containerStatuses"] = [_cstatus(pod, c, {"waiting": {"reason": "PodInitializing"}}, False, started=False)
                                    for c in containers]
        out["conditions"] = [
            _cond("Initialized", "False", start_ts, "ContainersNotInitialized", "containers with incomplete status: [%s]" % init_statuses[-1]["name"]),
            _cond("Ready", "False", start_ts, "ContainersNotReady", "containers with unready status: [%s]" % " ".join(c["name"] for c in containers)),
            _cond("ContainersReady", "False", start_ts, "ContainersNotReady", "containers with unready status: [%s]" % " ".join(c["name"] for c in containers)),
            _cond("PodScheduled", "True", start_ts),
        ]
        return out

    run_to_completion = policy in ("Never", "OnFailure")
    statuses = []
    for c in containers:
        broken = is_broken_image(c.get("image"))
        if broken and policy == "Never":
            statuses.append(_cstatus(pod, c, {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": start_ts,
                                                             "finishedAt": rfc3339(start + COMPLETE_AFTER), "containerID": _cid(pod, c["name"])}},
                                     False, started=False))
        elif broken:
            statuses.append(crashing(c, crashloop_restarts(elapsed)))
        elif run_to_completion and elapsed >= COMPLETE_AFTER and not is_hanging_image(c.get("image")):
            statuses.append(_cstatus(pod, c, {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": start_ts,
                                                             "finishedAt": rfc3339(start + COMPLETE_AFTER), "containerID": _cid(pod, c["name"])}},
                                     False, started=False))
        else:
            statuses.append(_cstatus(pod, c, {"running": {"startedAt": start_ts}}, node_is_ready, started=True))
    out["containerStatuses"] = statuses

    terminated = [s for s in statuses if "terminated" in s["state"]]
    if run_to_completion and containers and len(terminated) == len(statuses):
        failed = any(s["state"]["terminated"]["exitCode"] != 0 for s in terminated)
        out["phase"] = "Failed" if failed else "Succeeded"
        reason = "PodCompleted"
        out["conditions"] = [
            _cond("Initialized", "True", start_ts, reason),
            _cond("Ready", "False", start_ts, reason),
            _cond("ContainersReady", "False", start_ts, reason),
            _cond("PodScheduled", "True", start_ts),
        ]
        return out

    out["phase"] = "Running"
    unready = [s["name"] for s in statuses if not s["ready"]]
    if unready:
        msg = "containers with unready status: [%s]" % " ".join(unready)
        ready_conds = [_cond("Ready", "False", start_ts, "ContainersNotReady", msg),
                       _cond("ContainersReady", "False", start_ts, "ContainersNotReady", msg)]
    else:
        ready_conds = [_cond("Ready", "True", start_ts), _cond("ContainersReady", "True", start_ts)]
    out["conditions"] = [_cond("Initialized", "True", start_ts)] + ready_conds + [_cond("PodScheduled", "True", start_ts)]
    return out


def status_digest(status):
    """The parts of a pod status whose change is worth a PATCH (timestamps excluded)."""
    def cs(lst):
        return [(s.get("name"), s.get("ready"), s.get("restartCount"), sorted((s.get("state") or {}).keys()),
                 json.dumps((s.get("state") or {}).get("waiting", {}).get("reason")))
                for s in lst or []]
    conds = sorted((c.get("type"), c.get("status")) for c in status.get("conditions") or [])
    return (status.get("phase"), status.get("podIP"), conds, cs(status.get("containerStatuses")),
            cs(status.get("initContainerStatuses")))


def read_faults(path):
    """{"node": "notready"|"unreachable"|"sriov-vfs=N"} from the fault file; missing/garbled file = no faults.
    sriov-vfs=N: the node advertises N VFs on each SR-IOV rail (the SR-IOV config daemon applied another numVfs)."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items()
            if v in ("notready", "unreachable") or re.match(r"^sriov-vfs=[0-9]+$", str(v))}


def read_log_map(path):
    """{"<image>": "<file>"} from the log map file; missing/garbled file = no logs."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError, TypeError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def container_log(pod, container, log_map):
    """What `container` of `pod` printed, for the log endpoint: the log map's file for its image ("" for an
    image the map does not name); None when the pod has no such container (the kubelet answers 400)."""
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if c.get("name") == container:
            path = log_map.get(c.get("image", ""))
            if not path:
                return ""
            with open(path, "rb") as fh:
                return fh.read().decode("utf-8", "replace")
    return None


def log_request_path(path):
    """(namespace, pod, container) of a kubelet ``/containerLogs/<ns>/<pod>/<container>`` path, else None."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    if len(parts) == 4 and parts[0] == "containerLogs" and all(parts[1:]):
        return tuple(parts[1:])
    return None


# ---------------------------------------------------------------- the daemon

class SimKubelet(object):
    def __init__(self, kubeconfig, platform, trays, control_plane, fault_file, kubelet_endpoint=None, log_map=None):
        from kubernetes import client, config  # imported here so the pure parts need no client
        self.client_mod = client
        api_client = config.new_client_from_config(config_file=kubeconfig)
        self.kubeconfig = kubeconfig
        self.kubelet_endpoint = kubelet_endpoint
        self.log_map = log_map
        self.core = client.CoreV1Api(api_client)
        self.coord = client.CoordinationV1Api(api_client)
        self.platform = platform
        self.nodes = [(name, i, False) for i, name in enumerate(trays, start=1)]
        # the control plane takes lab index 250 (198.18.250.2) to stay clear of tray indexes
        self.nodes.append((control_plane, 250, True))
        self.fault_file = fault_file
        self.last_beat = {}
        self.reported_ready = {}
        self.reported_vfs = {}
        self.stop = False
        self.ip_alloc = {}
        self.log = logging.getLogger("simkubelet")

    def _json(self, resp):
        return json.loads(resp.data)

    def register(self):
        api = self.client_mod
        for name, index, cp in self.nodes:
            body = build_node(self.platform, name, index, cp)
            try:
                self.core.create_node(body)
                self.log.info("registered node %s", name)
            except api.exceptions.ApiException as exc:
                if exc.status != 409:
                    raise
                self.core.patch_node(name, {"metadata": {"labels": body["metadata"]["labels"]},
                                            "spec": body["spec"]})
            self.heartbeat(name, index, cp, ready=True, force=True)

    def heartbeat(self, name, index, cp, ready, force=False, vfs=None):
        now = time.time()
        if not force and self.reported_ready.get(name) == ready and self.reported_vfs.get(name) == vfs \
                and now - self.last_beat.get(name, 0) < HEARTBEAT_EVERY:
            return
        try:
            previous = (self._json(self.core.read_node_status(name, _preload_content=False)).get("status") or {}).get("conditions")
        except self.client_mod.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
            previous = None
        status = node_status(self.platform, name, index, cp, now, ready=ready, previous=previous,
                             kubelet_endpoint=self.kubelet_endpoint, sriov_vfs=vfs)
        self.core.patch_node_status(name, {"status": status})
        self._renew_lease(name, now)
        self.last_beat[name] = now
        if self.reported_ready.get(name) != ready:
            self.log.info("node %s reports Ready=%s", name, ready)
        self.reported_ready[name] = ready
        self.reported_vfs[name] = vfs

    def _renew_lease(self, name, now):
        api = self.client_mod
        ts = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body = {"metadata": {"name": name, "namespace": "kube-node-lease"},
                "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": ts}}
        try:
            self.coord.patch_namespaced_lease(name, "kube-node-lease", body)
        except api.exceptions.ApiException as exc:
            if exc.status != 404:
                raise
            self.coord.create_namespaced_lease("kube-node-lease", body)

    def _pod_ip(self, node_index, pod):
        uid = pod["metadata"]["uid"]
        if uid not in self.ip_alloc:
            used = set(self.ip_alloc.values())
            n = 10
            while "198.19.%d.%d" % (node_index, n) in used:
                n += 1
            self.ip_alloc[uid] = "198.19.%d.%d" % (node_index, n)
        return self.ip_alloc[uid]

    def loop_once(self):
        api = self.client_mod
        faults = read_faults(self.fault_file)
        for name, index, cp in self.nodes:
            fault = faults.get(name)
            if fault == "unreachable":
                continue          # no heartbeat at all: the node lifecycle controller notices
            vfs = int(fault.split("=", 1)[1]) if fault and fault.startswith("sriov-vfs=") else None
            self.heartbeat(name, index, cp, ready=(fault != "notready"), vfs=vfs)
        nodes = self._json(self.core.list_node(_preload_content=False))["items"]
        ours = {n["metadata"]["name"]: n for n in nodes
                if (n["metadata"].get("annotations") or {}).get(SIM_ANNOTATION) == "true"}
        index_of = {node[0]: node[1] for node in self.nodes}
        pods = self._json(self.core.list_pod_for_all_namespaces(_preload_content=False))["items"]
        by_node = {}
        for p in pods:
            nn = p.get("spec", {}).get("nodeName")
            if nn and not is_terminal(p):
                by_node.setdefault(nn, []).append(p)
        now = time.time()
        for p in pods:
            meta, spec = p["metadata"], p.get("spec", {})
            ns, pname = meta["namespace"], meta["name"]
            nn = spec.get("nodeName")
            if faults.get(nn) == "unreachable":
                continue
            try:
                if meta.get("deletionTimestamp"):
                    if nn in ours or not nn:
                        # a kubelet confirms graceful deletion once the containers are gone
                        self.core.delete_namespaced_pod(pname, ns, grace_period_seconds=0,
                                                        body=api.V1DeleteOptions(grace_period_seconds=0))
                        self.ip_alloc.pop(meta.get("uid"), None)
                    continue
                if not nn:
                    if spec.get("schedulerName", "default-scheduler") != "default-scheduler":
                        continue
                    target, why = choose_node(p, [ours[n] for n in sorted(ours)], by_node)
                    if target:
                        self.core.create_namespaced_binding(
                            ns, {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": pname},
                                 "target": {"apiVersion": "v1", "kind": "Node", "name": target}},
                            _preload_content=False)
                        by_node.setdefault(target, []).append(p)
                        self.log.info("bound %s/%s to %s", ns, pname, target)
                    else:
                        cur = [c for c in (p.get("status", {}).get("conditions") or []) if c.get("type") == "PodScheduled"]
                        if not cur or cur[0].get("message") != why:
                            self.core.patch_namespaced_pod_status(pname, ns, {"status": {"conditions": [
                                _cond("PodScheduled", "False", rfc3339(now), "Unschedulable", why)]}})
                            self.log.info("cannot schedule %s/%s: %s", ns, pname, why)
                    continue
                if nn not in ours or is_terminal(p):
                    continue
                want = desired_pod_status(p, now, node_is_ready=faults.get(nn) != "notready",
                                          host_ip="198.18.%d.2" % index_of.get(nn, 0),
                                          pod_ip=self._pod_ip(index_of.get(nn, 0), p))
                if status_digest(want) != status_digest(p.get("status") or {}):
                    self.core.patch_namespaced_pod_status(pname, ns, {"status": want})
                    self.log.info("pod %s/%s on %s -> %s", ns, pname, nn, want["phase"])
            except api.exceptions.ApiException as exc:
                if exc.status not in (404, 409):
                    self.log.warning("pod %s/%s: %s %s", ns, pname, exc.status, exc.reason)

    def serve_logs(self, cert, key, client_ca):
        """The kubelet's log endpoint on the kubelet endpoint, over TLS, for API server clients with a
        certificate of the cluster CA (kube-apiserver --kubelet-client-certificate), in a daemon thread."""
        import http.server
        import ssl
        import threading
        from kubernetes import client, config
        core = client.CoreV1Api(config.new_client_from_config(config_file=self.kubeconfig))
        sim = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, fmt, *args):
                sim.log.info("log endpoint: " + fmt, *args)

            def _answer(self, code, text):
                body = text.encode("utf-8")
                self.send_response(code)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                target = log_request_path(self.path)
                if target is None:
                    return self._answer(404, "404 page not found\n")
                ns, name, container = target
                try:
                    pod = json.loads(core.read_namespaced_pod(name, ns, _preload_content=False).data)
                except client.exceptions.ApiException as exc:
                    return self._answer(exc.status or 500, "pod %s/%s: %s\n" % (ns, name, exc.reason))
                try:
                    text = container_log(pod, container, read_log_map(sim.log_map))
                except OSError as exc:
                    return self._answer(500, "cannot read the log of %s/%s/%s: %s\n" % (ns, name, container, exc))
                if text is None:
                    return self._answer(400, "container %s is not valid for pod %s\n" % (container, name))
                return self._answer(200, text)

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.kubelet_endpoint[1]), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        thread = threading.Thread(target=server.serve_forever, name="log-endpoint", daemon=True)
        thread.start()
        self.log.info("serving container logs on https://127.0.0.1:%d", self.kubelet_endpoint[1])
        return server

    def run(self, interval):
        self.register()
        while not self.stop:
            try:
                self.loop_once()
            except Exception as exc:  # keep the simulated kubelet alive across API hiccups
                self.log.warning("loop error: %s", exc)
            time.sleep(interval)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--platform", choices=PLATFORMS, default="nvke-gb200")
    ap.add_argument("--nodes", type=int, default=2, help="number of GPU trays (tray01..trayNN)")
    ap.add_argument("--control-plane-name", default="cp01")
    ap.add_argument("--fault-file", required=True)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--log-port", type=int, default=0, help="serve container logs on 127.0.0.1:PORT (0: off)")
    ap.add_argument("--tls-cert", help="serving certificate of the log endpoint")
    ap.add_argument("--tls-key", help="its key")
    ap.add_argument("--client-ca", help="CA of the API server's kubelet client certificate")
    ap.add_argument("--log-map", help='JSON file {"<image>": "<log file>"}, re-read on every log request')
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stdout)
    endpoint = ("localhost", args.log_port) if args.log_port else None
    sk = SimKubelet(args.kubeconfig, args.platform, tray_names(args.nodes), args.control_plane_name, args.fault_file,
                    kubelet_endpoint=endpoint, log_map=args.log_map)
    if endpoint:
        sk.serve_logs(args.tls_cert, args.tls_key, args.client_ca)

    def _term(_signum, _frame):
        sk.stop = True
    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    sk.run(args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
