#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: conformance
short_description: Check that a deployed cluster offers what an AI workload needs (AICR's conformance checks, read-only)
version_added: 0.1.0
description:
  - Reads the cluster through the Kubernetes API and runs the conformance checks of the recipe (AICR's conformance
    phase). Each check returns C(passed) or C(failed) with a message naming the objects, what was found
    and the fix; C(details) lists every object looked at.
  - C(gpu-operator-health) - Deployment C(gpu-operator) available, ClusterPolicy C(cluster-policy) C(status.state=ready),
    DaemonSet C(nvidia-dcgm-exporter) rolled out, in I(gpu_operator_namespace).
  - C(dra-support) - the API server serves C(resource.k8s.io) (v1, v1beta2 or v1beta1), the NVIDIA DRA driver's
    C(nvidia-dra-driver-gpu-controller) Deployment is available and its C(nvidia-dra-driver-gpu-kubelet-plugin)
    DaemonSet rolled out in I(dra_namespace), and ResourceSlices of C(gpu.nvidia.com) or C(compute-domain.nvidia.com)
    exist.
  - C(ai-service-metrics) - the custom metrics API (APIService C(v1beta1.custom.metrics.k8s.io)) is Available.
  - C(pod-autoscaling) - the external metrics API (APIService C(v1beta1.external.metrics.k8s.io)) that HPAs on GPU
    metrics use is Available.
  - C(inference-gateway) - the Gateway API and InferencePool CRDs are Established, GatewayClass C(agentgateway) is
    Accepted and Gateway C(inference-gateway) in I(gateway_namespace) is Programmed.
  - C(secure-accelerator-access) - no pod outside I(exempt_namespaces) reaches GPUs around DRA and the device plugin
    (a hostPath volume under C(/dev/nvidia*) or C(/dev/dri), or C(NVIDIA_VISIBLE_DEVICES) set in a container that
    requests no GPU itself - an C(nvidia.com/*) resource or a ResourceClaim the container names; the pod's claims
    reach only the containers that name them).
  - Unlike AICR, no check starts a workload (AICR scales an HPA and co-schedules a PodGroup); the module only reads.
    AICR's C(platform-health) is module M(gpu_tray.cluster.expected_resources).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  recipe:
    description:
      - The recipe whose conformance checks run (the inference recipes add C(inference-gateway)).
    type: str
    required: true
    choices:
      - gb200-nvke-ubuntu-training
      - gb200-nvke-ubuntu-kubeflow
      - vr200-rke2-ubuntu-training
      - vr200-rke2-ubuntu-inference
      - vr200-rke2-ubuntu-inference-dynamo
  checks:
    description:
      - The checks to run (default the recipe's list).
    type: list
    elements: str
    choices: [gpu-operator-health, dra-support, ai-service-metrics, pod-autoscaling, inference-gateway,
              secure-accelerator-access]
  gpu_operator_namespace:
    description: Namespace of the GPU Operator.
    type: str
    default: gpu-operator
  dra_namespace:
    description: Namespace of the NVIDIA DRA driver.
    type: str
    default: nvidia-dra-driver
  gateway_namespace:
    description: Namespace of the Gateway C(inference-gateway).
    type: str
    default: agentgateway-system
  exempt_namespaces:
    description:
      - Namespaces whose pods may reach GPU devices directly (the operators' own driver, toolkit, device plugin and
        monitoring pods), for C(secure-accelerator-access).
    type: list
    elements: str
    default: [kube-system, gpu-operator, nvidia-dra-driver, nvsentinel, nvidia-network-operator, node-feature-discovery,
              nodewright, monitoring]
  fail_on_error:
    description: Fail when a check fails. With C(false) the module only reports.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.k8s_auth
seealso:
  - module: gpu_tray.cluster.expected_resources
  - module: gpu_tray.cluster.cluster_preflight
'''

EXAMPLES = r'''
- name: Conformance of a VR200 inference cluster
  gpu_tray.cluster.conformance:
    recipe: vr200-rke2-ubuntu-inference
  register: conformance

- name: Only DRA, report without failing
  gpu_tray.cluster.conformance:
    recipe: gb200-nvke-ubuntu-training
    checks: [dra-support]
    fail_on_error: false
'''

RETURN = r'''
checks:
  description: One record per check - C(name), C(status) (passed, failed), C(message), C(fix), C(object),
    C(details) (the findings - what failed, or what was found) and C(data.checks) (every object looked at, a record
    with its own status and message).
  type: list
  elements: dict
  returned: always
  sample: [{name: dra-support, status: failed, object: APIGroup resource.k8s.io, fix: upgrade the cluster to Kubernetes 1.34 or later,
            message: 'the API server (v1.20.15) serves no resource.k8s.io version of v1, v1beta2, v1beta1 (DRA is GA in Kubernetes 1.34)'}]
failed_checks:
  description: Names of the failed checks.
  type: list
  elements: str
  returned: always
dra_version:
  description: The C(resource.k8s.io) version the API server serves (null when none, or when C(dra-support) did not run).
  type: str
  returned: always
msg:
  description: Summary naming the API server and every failed check.
  type: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils import conformance as rules
from ansible_collections.gpu_tray.cluster.plugins.module_utils.kube import (
    AUTH_ARG_SPEC,
    Reader,
    connect,
    finish,
    k8s_client,
    read_or_fail,
)


def build_module():
    spec = dict(AUTH_ARG_SPEC)
    spec.update(
        recipe=dict(type='str', required=True, choices=sorted(rules.RECIPE_CHECKS)),
        checks=dict(type='list', elements='str', choices=list(rules.CHECKS)),
        gpu_operator_namespace=dict(type='str', default='gpu-operator'),
        dra_namespace=dict(type='str', default='nvidia-dra-driver'),
        gateway_namespace=dict(type='str', default='agentgateway-system'),
        exempt_namespaces=dict(type='list', elements='str', default=[
            'kube-system', 'gpu-operator', 'nvidia-dra-driver', 'nvsentinel', 'nvidia-network-operator',
            'node-feature-discovery', 'nodewright', 'monitoring']),
        fail_on_error=dict(type='bool', default=True),
    )
    return AnsibleModule(argument_spec=spec, supports_check_mode=True)


class Cluster(Reader):
    """The reads of the conformance checks."""

    def __init__(self, api):
        super(Cluster, self).__init__(api)
        self.registration = k8s_client.ApiregistrationV1Api(api)

    def deployment(self, namespace, name):
        return self.get(self.apps.read_namespaced_deployment, name, namespace)

    def daemonset(self, namespace, name):
        return self.get(self.apps.read_namespaced_daemon_set, name, namespace)

    def cluster_object(self, group, version, plural, name):
        return self.get(self.custom.get_cluster_custom_object, group, version, plural, name)

    def namespaced_object(self, group, version, namespace, plural, name):
        return self.get(self.custom.get_namespaced_custom_object, group, version, namespace, plural, name)

    def crd(self, name):
        return self.get(self.ext.read_custom_resource_definition, name)

    def apiservice(self, name):
        return self.get(self.registration.read_api_service, name)

    def api_groups(self):
        return self.get(k8s_client.ApisApi(self.api).get_api_versions)

    def version(self):
        return k8s_client.VersionApi(self.api).get_code().git_version

    def resource_slices(self, version):
        return self.items(self.custom.list_cluster_custom_object, 'resource.k8s.io', version, 'resourceslices')

    def pods(self):
        return self.items(self.core.list_pod_for_all_namespaces)


def run_checks(cluster, params, output):
    selected = params['checks'] or rules.RECIPE_CHECKS[params['recipe']]
    results = []
    gpu_ns, dra_ns, gw_ns = params['gpu_operator_namespace'], params['dra_namespace'], params['gateway_namespace']
    for name in rules.CHECKS:
        if name not in selected:
            continue
        if name == 'gpu-operator-health':
            results.append(rules.gpu_operator_health(
                gpu_ns, cluster.deployment(gpu_ns, 'gpu-operator'),
                cluster.cluster_object('nvidia.com', 'v1', 'clusterpolicies', 'cluster-policy'),
                cluster.daemonset(gpu_ns, 'nvidia-dcgm-exporter')))
        elif name == 'dra-support':
            version = rules.served_version(cluster.api_groups(), 'resource.k8s.io')
            output['dra_version'] = version
            results.append(rules.dra_support(
                cluster.version(), version, dra_ns,
                cluster.deployment(dra_ns, 'nvidia-dra-driver-gpu-controller') if version else None,
                cluster.daemonset(dra_ns, 'nvidia-dra-driver-gpu-kubelet-plugin') if version else None,
                cluster.resource_slices(version) if version else []))
        elif name in rules.METRICS_APISERVICES:
            results.append(rules.metrics_api(name, cluster.apiservice(rules.METRICS_APISERVICES[name])))
        elif name == 'inference-gateway':
            crds = dict((crd, cluster.crd(crd)) for crd in rules.GATEWAY_CRDS)
            served = crds['gateways.gateway.networking.k8s.io'] is not None
            version = rules.served_version(cluster.api_groups(), 'gateway.networking.k8s.io', ('v1', 'v1beta1')) if served else None
            results.append(rules.inference_gateway(
                crds,
                cluster.cluster_object('gateway.networking.k8s.io', version, 'gatewayclasses', 'agentgateway') if version else None,
                cluster.namespaced_object('gateway.networking.k8s.io', version, gw_ns, 'gateways', 'inference-gateway')
                if version else None, gw_ns))
        elif name == 'secure-accelerator-access':
            results.append(rules.secure_accelerator_access(cluster.pods(), set(params['exempt_namespaces'])))
    return results


def main():
    module = build_module()
    params = module.params
    api = connect(module)
    server = api.configuration.host
    output = dict(changed=False, recipe=params['recipe'], api_server=server, dra_version=None)
    results = read_or_fail(module, server, lambda: run_checks(Cluster(api), params, output),
                           'the cluster (check the credentials and that they may read workloads, pods, CRDs, '
                           'APIServices and custom resources)', output)
    failed = [item['name'] for item in results if item['status'] == 'failed']
    output.update(checks=results, failed_checks=failed)
    if not failed:
        output['msg'] = '%s: conformance of %s passed (%s)' % (server, params['recipe'],
                                                               ', '.join(item['name'] for item in results))
    else:
        output['msg'] = '%s: conformance of %s failed: %s' % (server, params['recipe'], ' | '.join(
            '%s: %s (fix: %s)' % (item['name'], item['message'], item['fix']) for item in results if item['status'] == 'failed'))
    finish(module, output, failed=bool(failed))


if __name__ == '__main__':
    main()
