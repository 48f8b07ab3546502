# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A small controller standing in for the Network Operator + SR-IOV operator in the stack tests.

The simulated kubelet runs no pods, so no operator ever reconciles anything on the test cluster. This process,
started by the test with the admin kubeconfig, does what the operators do that the stack role must wait for:

* when a WidgetPolicy (the stack-operator chart's CR, like a NicClusterPolicy) appears, it waits RECONCILE_DELAY
  seconds, then creates the Pool CRD (as the Network Operator creates the nv-ipam IPPool CRD while reconciling the
  NicClusterPolicy) and the NodeState CRD with one NodeState per node (syncStatus Succeeded), and only then sets
  the WidgetPolicy's status.state to ready;
* when Pool objects are deleted (the SR-IOV policies going away), it sets every NodeState to InProgress and back
  to Succeeded DRAIN_SECONDS after the last deletion of the burst (the config daemon's drain: one at a time).

Every event goes to the log file as "<unix time> <event> <detail>" so the test can check the order in which the
stack role did things. Usage: stack_controller.py KUBECONFIG LOGFILE
"""

import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

GROUP, VERSION = "stacktest.gpu-tray.test", "v1alpha1"
RECONCILE_DELAY = 4
DRAIN_SECONDS = 4


def crd(kind, plural, scope, status_schema):
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "%s.%s" % (plural, GROUP)},
        "spec": {"group": GROUP, "scope": scope,
                 "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": kind + "List"},
                 "versions": [{"name": VERSION, "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                   "status": status_schema}}}}]}}


POOL_CRD = crd("Pool", "pools", "Namespaced", {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
NODESTATE_CRD = crd("NodeState", "nodestates", "Namespaced", {
    "type": "object", "properties": {"syncStatus": {"type": "string", "enum": ["Succeeded", "InProgress", "Failed"]}}})


class Controller(object):
    def __init__(self, kubeconfig, logfile):
        cfg = client.Configuration()
        config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
        self.api = client.ApiClient(cfg)
        self.custom = client.CustomObjectsApi(self.api)
        self.ext = client.ApiextensionsV1Api(self.api)
        self.core = client.CoreV1Api(self.api)
        self.log = open(logfile, "a", buffering=1)
        self.lock = threading.Lock()
        self.drain_lock = threading.Lock()      # one drain at a time, like the config daemon
        self.draining = False
        self.drain_until = 0.0

    def event(self, name, detail=""):
        with self.lock:
            self.log.write("%.3f %s %s\n" % (time.time(), name, detail))

    def ensure_crd(self, body):
        try:
            self.ext.create_custom_resource_definition(body)
            self.event("crd-created", body["metadata"]["name"])
        except ApiException as exc:
            if exc.status != 409:
                raise
        for _ in range(100):
            got = self.ext.read_custom_resource_definition(body["metadata"]["name"])
            if any(c.type == "Established" and c.status == "True" for c in (got.status.conditions or [])):
                return
            time.sleep(0.2)
        raise RuntimeError("CRD %s never Established" % body["metadata"]["name"])

    def set_nodestates(self, status):
        for node in self.core.list_node().items:
            name = node.metadata.name
            try:
                self.custom.get_namespaced_custom_object(GROUP, VERSION, "default", "nodestates", name)
            except ApiException as exc:
                if exc.status != 404:
                    raise
                self.custom.create_namespaced_custom_object(GROUP, VERSION, "default", "nodestates", {
                    "apiVersion": "%s/%s" % (GROUP, VERSION), "kind": "NodeState", "metadata": {"name": name},
                    "spec": {}})
            self.custom.patch_namespaced_custom_object_status(GROUP, VERSION, "default", "nodestates", name,
                                                              {"status": {"syncStatus": status}})
        self.event("nodestates", status)

    def reconcile_policy(self, name):
        time.sleep(RECONCILE_DELAY)
        self.ensure_crd(POOL_CRD)
        self.ensure_crd(NODESTATE_CRD)
        self.set_nodestates("Succeeded")
        self.custom.patch_cluster_custom_object_status(GROUP, VERSION, "widgetpolicies", name,
                                                       {"status": {"state": "ready"}})
        self.event("policy-ready", name)

    def request_drain(self):
        """Pools deleted in a burst make ONE drain, ending DRAIN_SECONDS after the last deletion (the config daemon
        coalesces policy changes; overlapping drains would let one's Succeeded overwrite another's InProgress)."""
        with self.drain_lock:
            self.drain_until = time.time() + DRAIN_SECONDS
            if self.draining:
                return
            self.draining = True
        threading.Thread(target=self.drain, daemon=True).start()

    def drain(self):
        self.set_nodestates("InProgress")
        while True:
            with self.drain_lock:
                remaining = self.drain_until - time.time()
                if remaining <= 0:
                    self.set_nodestates("Succeeded")
                    self.draining = False
                    return
            time.sleep(remaining)

    def watch_policies(self):
        seen = set()
        while True:
            try:
                for ev in watch.Watch().stream(self.custom.list_cluster_custom_object, GROUP, VERSION,
                                               "widgetpolicies", timeout_seconds=30):
                    name = ev["object"]["metadata"]["name"]
                    if ev["type"] == "ADDED" and name not in seen:
                        seen.add(name)
                        self.event("policy-seen", name)
                        threading.Thread(target=self.reconcile_policy, args=(name,), daemon=True).start()
                    elif ev["type"] == "DELETED":
                        seen.discard(name)
                        self.event("policy-deleted", name)
            except ApiException as exc:
                if exc.status != 404:     # the CRD comes with the operator chart
                    raise
                time.sleep(1)

    def watch_pools(self):
        seen = set()       # a watch restarted after its timeout lists existing objects as ADDED again
        while True:
            try:
                for ev in watch.Watch().stream(self.custom.list_cluster_custom_object, GROUP, VERSION, "pools",
                                               timeout_seconds=30):
                    meta = ev["object"]["metadata"]
                    key = "%s/%s" % (meta["namespace"], meta["name"])
                    if ev["type"] == "ADDED" and key not in seen:
                        seen.add(key)
                        self.event("pool-added", key)
                    elif ev["type"] == "DELETED":
                        seen.discard(key)
                        self.event("pool-deleted", key)
                        self.request_drain()
            except ApiException as exc:
                if exc.status != 404:
                    raise
                time.sleep(1)

    def run(self):
        self.event("started")
        threading.Thread(target=self.watch_pools, daemon=True).start()
        self.watch_policies()


if __name__ == "__main__":
    Controller(sys.argv[1], sys.argv[2]).run()
