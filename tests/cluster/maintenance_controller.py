# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A stand-in for NVIDIA's Maintenance Operator on the test cluster (the simulated kubelet runs no pods, so the real
operator never runs there). It serves the real NodeMaintenance CRD (the upstream data, upstreamdata.py) the way the operator does, as far
as the rolling reboot depends on it:

* a new NodeMaintenance gets the finalizer maintenance.nvidia.com/finalizer and Ready=False reason Pending;
* pending objects are scheduled oldest first while fewer than MAX_PARALLEL objects are active (the
  MaintenanceOperatorConfig's maxParallelOperations): scheduled means cordoned (spec.unschedulable) and, after
  DRAIN_SECONDS, Ready=True reason Ready - an active object holds the budget until it is deleted;
* a deleted object (deletionTimestamp) has its node uncordoned - unless another active object holds the same node -
  and its finalizer removed, which frees its slot.

Every event goes to the log as "<unix time> <event> <namespace>/<name> <node> <requestorID>" (events: pending,
ready, released) so a test can prove two maintenances never overlapped. Usage:
maintenance_controller.py KUBECONFIG LOGFILE [MAX_PARALLEL]
"""

import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

GROUP, VERSION, PLURAL = "maintenance.nvidia.com", "v1alpha1", "nodemaintenances"
FINALIZER = "maintenance.nvidia.com/finalizer"
DRAIN_SECONDS = 2
POLL_SECONDS = 0.5


def ready_status(obj):
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status"), cond.get("reason")
    return None, None


class MaintenanceOperator(object):
    def __init__(self, kubeconfig, logfile, max_parallel=1):
        cfg = client.Configuration()
        config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
        api = client.ApiClient(cfg)
        self.custom = client.CustomObjectsApi(api)
        self.core = client.CoreV1Api(api)
        self.log = open(logfile, "a", buffering=1)
        self.max_parallel = max_parallel
        self.scheduled = {}         # "<ns>/<name>" -> time it was scheduled (cordoned)

    def event(self, what, obj):
        meta, spec = obj["metadata"], obj.get("spec") or {}
        self.log.write("%.3f %s %s/%s %s %s\n" % (time.time(), what, meta["namespace"], meta["name"],
                                                  spec.get("nodeName"), spec.get("requestorID")))

    def set_ready(self, obj, status, reason):
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        body = {"status": {"conditions": [{"type": "Ready", "status": status, "reason": reason, "message": reason,
                                           "lastTransitionTime": now}]}}
        self.custom.patch_namespaced_custom_object_status(GROUP, VERSION, obj["metadata"]["namespace"], PLURAL,
                                                          obj["metadata"]["name"], body)

    def cordon(self, node, value):
        self.core.patch_node(node, {"spec": {"unschedulable": value}})

    def step(self):
        items = sorted(self.custom.list_cluster_custom_object(GROUP, VERSION, PLURAL)["items"],
                       key=lambda o: (o["metadata"]["creationTimestamp"], o["metadata"]["name"]))
        live = []
        for obj in items:
            meta = obj["metadata"]
            key = "%s/%s" % (meta["namespace"], meta["name"])
            if meta.get("deletionTimestamp"):
                if FINALIZER in (meta.get("finalizers") or []):
                    others = [o for o in items if o is not obj and not o["metadata"].get("deletionTimestamp")
                              and o["spec"]["nodeName"] == obj["spec"]["nodeName"]
                              and "%s/%s" % (o["metadata"]["namespace"], o["metadata"]["name"]) in self.scheduled]
                    if key in self.scheduled and not others:
                        self.cordon(obj["spec"]["nodeName"], False)
                    self.custom.patch_namespaced_custom_object(
                        GROUP, VERSION, meta["namespace"], PLURAL, meta["name"],
                        {"metadata": {"finalizers": [f for f in meta["finalizers"] if f != FINALIZER]}})
                    self.event("released", obj)
                self.scheduled.pop(key, None)
                continue
            if FINALIZER not in (meta.get("finalizers") or []):
                self.custom.patch_namespaced_custom_object(GROUP, VERSION, meta["namespace"], PLURAL, meta["name"],
                                                           {"metadata": {"finalizers": [FINALIZER]}})
                self.set_ready(obj, "False", "Pending")
                self.event("pending", obj)
            live.append((key, obj))
        for key, obj in live:
            if key in self.scheduled:
                status, _reason = ready_status(obj)
                if status != "True" and time.time() - self.scheduled[key] >= DRAIN_SECONDS:
                    self.set_ready(obj, "True", "Ready")
                    self.event("ready", obj)
            elif len(self.scheduled) < self.max_parallel:
                self.scheduled[key] = time.time()
                self.cordon(obj["spec"]["nodeName"], True)
                self.set_ready(obj, "False", "Draining")
                self.event("scheduled", obj)

    def run(self):
        while True:
            try:
                self.step()
            except ApiException as exc:
                if exc.status not in (404, 409):
                    self.log.write("%.3f error %s\n" % (time.time(), exc.reason))
            time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    MaintenanceOperator(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1).run()
