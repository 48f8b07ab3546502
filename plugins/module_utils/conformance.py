# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure conformance rules (module gpu_tray.cluster.conformance), after AICR's conformance checks.

AICR v1.0.0 ``recipes/validators/catalog.yaml`` (aicr.md 3.2) and the recipes' conformance lists (aicr.md 1.2.2):
- gpu-operator-health: the gpu-operator Deployment, ClusterPolicy ``state=ready``, the DCGM exporter DaemonSet;
- dra-support: a served ``resource.k8s.io`` version, the DRA driver's controller and kubelet-plugin DaemonSet,
  NVIDIA ResourceSlices at that version;
- ai-service-metrics / pod-autoscaling: the custom / external metrics APIs are registered and Available;
- inference-gateway: GatewayClass ``agentgateway`` Accepted, Gateway ``inference-gateway`` Programmed, the Gateway
  API and InferencePool CRDs present;
- secure-accelerator-access: GPUs reached only through DRA or the device plugin - no workload pod mounts
  ``/dev/nvidia*`` from the host or asks for every GPU through ``NVIDIA_VISIBLE_DEVICES`` without requesting one.
AICR runs each as a Job with active probes (an HPA that scales, a PodGroup that co-schedules); these rules only
read the API, so they can run in check mode against a production cluster.

Each rule takes plain API dicts (camelCase, None when absent) and returns one check record
(module_utils/check_record.py): name, status (passed / failed / skipped), message, fix, object, details (the
findings) and ``data.checks`` (a record of every object looked at).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import posixpath

from ansible_collections.gpu_tray.cluster.plugins.module_utils import recipes, resources
from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record

CHECKS = ('gpu-operator-health', 'dra-support', 'ai-service-metrics', 'pod-autoscaling', 'inference-gateway',
          'secure-accelerator-access')
# the conformance checks each recipe runs: the registry's (AICR's lists limited to CHECKS), generated into
# module_utils/recipes.py; an old name is its alias's recipe
RECIPE_CHECKS = dict((name, tuple(r['conformance'])) for name, r in recipes.RECIPES.items())
RECIPE_CHECKS.update((old, RECIPE_CHECKS[new]) for old, new in recipes.ALIASES.items())
# newest first: the version DRA is used at (GA v1 in 1.34, v1beta2 in 1.33, v1beta1 in 1.32)
DRA_VERSIONS = ('v1', 'v1beta2', 'v1beta1')
NVIDIA_DRA_DRIVERS = ('gpu.nvidia.com', 'compute-domain.nvidia.com')
METRICS_APISERVICES = {
    'ai-service-metrics': 'v1beta1.custom.metrics.k8s.io',
    'pod-autoscaling': 'v1beta1.external.metrics.k8s.io',
}
GATEWAY_CRDS = ('gatewayclasses.gateway.networking.k8s.io', 'gateways.gateway.networking.k8s.io',
                'httproutes.gateway.networking.k8s.io', 'inferencepools.inference.networking.k8s.io')


def _check(name, subchecks, passed_message, fix, obj=''):
    """The check's record over its sub-checks (records of every object looked at, in ``data.checks``): failed with
    the failed ones' messages (``details``: each of them), else passed (``details``: what was found)."""
    failed = [item for item in subchecks if item['status'] == 'failed']
    data = {'checks': subchecks}
    if failed:
        return record(name, 'failed', '; '.join(item['message'] for item in failed), fix,
                      [item['message'] for item in failed], data, failed[0]['object'] or obj)
    return record(name, 'passed', passed_message, None, [item['message'] for item in subchecks], data, obj)


def _sub(ok, message, obj):
    return record('detail', 'passed' if ok else 'failed', message, obj=obj)


def _condition(obj, kind):
    for condition in (obj.get('status') or {}).get('conditions') or []:
        if condition.get('type') == kind:
            return condition
    return {}


def gpu_operator_health(namespace, deployment, cluster_policy, dcgm_exporter):
    """gpu-operator Deployment available, ClusterPolicy cluster-policy ready, DCGM exporter rolled out."""
    details = []
    if deployment is None:
        details.append(_sub(False, 'no Deployment %s/gpu-operator' % namespace, 'Deployment %s/gpu-operator' % namespace))
    else:
        details.append(resources.check_deployment(deployment))
    details.append(resources.check_ready({'kind': 'ClusterPolicy', 'name': 'cluster-policy', 'api_version': 'nvidia.com/v1',
                                          'path': 'status.state', 'value': 'ready'}, cluster_policy))
    if dcgm_exporter is None:
        details.append(_sub(False, 'no DaemonSet %s/nvidia-dcgm-exporter (GPU metrics; dcgmExporter.enabled in the '
                            'ClusterPolicy)' % namespace, 'DaemonSet %s/nvidia-dcgm-exporter' % namespace))
    else:
        details.append(resources.check_daemonset(dcgm_exporter))
    for item in details:          # a Deployment short of replicas is a warning for expected_resources, a failure here
        if item['status'] == 'warning':
            item['status'] = 'failed'
    return _check('gpu-operator-health', details,
                  'the GPU Operator runs in %s: Deployment available, ClusterPolicy ready, DCGM exporter rolled out' % namespace,
                  'kubectl -n %s get pods,clusterpolicy; fix the failing operand (its pod logs name the cause), '
                  'then re-run the validation' % namespace)


def served_version(api_groups, group, preferred=DRA_VERSIONS):
    """The first of ``preferred`` that ``group`` is served at, from the /apis group list; None when not served."""
    for item in (api_groups or {}).get('groups') or []:
        if item.get('name') == group:
            versions = [v.get('version') for v in item.get('versions') or []]
            for version in preferred:
                if version in versions:
                    return version
            return None
    return None


def dra_support(server_version, dra_version, namespace, controller, kubelet_plugin, slices):
    """resource.k8s.io served, the NVIDIA DRA driver's controller and kubelet plugin up, NVIDIA ResourceSlices."""
    details = []
    if dra_version is None:
        details.append(_sub(False, 'the API server (%s) serves no resource.k8s.io version of %s (DRA is GA in Kubernetes '
                            '1.34)' % (server_version, ', '.join(DRA_VERSIONS)), 'APIGroup resource.k8s.io'))
        return _check('dra-support', details, '', 'upgrade the cluster to Kubernetes 1.34 or later (the recipe window)')
    details.append(_sub(True, 'resource.k8s.io/%s is served' % dra_version, 'APIGroup resource.k8s.io'))
    if controller is None:
        details.append(_sub(False, 'no Deployment %s/nvidia-dra-driver-gpu-controller' % namespace,
                            'Deployment %s/nvidia-dra-driver-gpu-controller' % namespace))
    else:
        details.append(resources.check_deployment(controller))
    if kubelet_plugin is None:
        details.append(_sub(False, 'no DaemonSet %s/nvidia-dra-driver-gpu-kubelet-plugin' % namespace,
                            'DaemonSet %s/nvidia-dra-driver-gpu-kubelet-plugin' % namespace))
    else:
        details.append(resources.check_daemonset(kubelet_plugin))
    drivers = sorted(set((s.get('spec') or {}).get('driver') for s in slices or []) & set(NVIDIA_DRA_DRIVERS))
    details.append(_sub(bool(drivers), 'ResourceSlices of %s' % ', '.join(drivers) if drivers else
                        'no ResourceSlice of %s at resource.k8s.io/%s (%d slices of other drivers): the kubelet plugin '
                        'publishes none' % (' or '.join(NVIDIA_DRA_DRIVERS), dra_version, len(slices or [])),
                        'ResourceSlices'))
    for item in details:
        if item['status'] == 'warning':
            item['status'] = 'failed'
    return _check('dra-support', details, 'DRA works: resource.k8s.io/%s, the NVIDIA DRA driver runs and publishes '
                  'ResourceSlices (%s)' % (dra_version, ', '.join(drivers)),
                  'kubectl -n %s get pods; kubectl get resourceslices - the kubelet-plugin logs name the cause '
                  '(nvidiaDriverRoot, CDI, the driver version rules of component_version)' % namespace)


def metrics_api(check, apiservice):
    """The custom (ai-service-metrics) or external (pod-autoscaling) metrics APIService is registered and Available."""
    name = METRICS_APISERVICES[check]
    ref = 'APIService %s' % name
    if apiservice is None:
        details = [_sub(False, 'APIService %s is not registered: nothing serves the %s metrics API' % (
            name, 'custom' if check == 'ai-service-metrics' else 'external'), ref)]
    else:
        available = _condition(apiservice, 'Available')
        service = (apiservice.get('spec') or {}).get('service') or {}
        details = [_sub(available.get('status') == 'True', 'APIService %s (service %s/%s) is %sAvailable%s' % (
            name, service.get('namespace'), service.get('name'), '' if available.get('status') == 'True' else 'not ',
            '' if available.get('status') == 'True' else ': %s %s' % (available.get('reason', 'no condition'),
                                                                      available.get('message', ''))), ref)]
    return _check(check, details, 'APIService %s is Available' % name,
                  'install prometheus-adapter (the recipe component) and check its pod and Service', ref)


def inference_gateway(crds, gateway_class, gateway, namespace):
    """Gateway API and InferencePool CRDs, GatewayClass agentgateway Accepted, Gateway inference-gateway Programmed."""
    details = []
    for name in GATEWAY_CRDS:
        details.append(resources.check_crd(name, crds.get(name)))
    ref = 'GatewayClass agentgateway'
    if gateway_class is None:
        details.append(_sub(False, 'no GatewayClass agentgateway', ref))
    else:
        accepted = _condition(gateway_class, 'Accepted')
        details.append(_sub(accepted.get('status') == 'True', 'GatewayClass agentgateway Accepted=%s%s' % (
            accepted.get('status', 'missing'), ' (%s)' % accepted['message'] if accepted.get('message') else ''), ref))
    ref = 'Gateway %s/inference-gateway' % namespace
    if gateway is None:
        details.append(_sub(False, 'no Gateway %s/inference-gateway' % namespace, ref))
    else:
        programmed = _condition(gateway, 'Programmed')
        addresses = [a.get('value') for a in (gateway.get('status') or {}).get('addresses') or []]
        details.append(_sub(programmed.get('status') == 'True', 'Gateway %s/inference-gateway Programmed=%s%s%s' % (
            namespace, programmed.get('status', 'missing'),
            ' (%s)' % programmed['message'] if programmed.get('message') else '',
            ', addresses %s' % ', '.join(addresses) if addresses else ', no address (LoadBalancer pending?)'), ref))
    return _check('inference-gateway', details, 'the inference gateway is Programmed and the Gateway API and '
                  'InferencePool CRDs are Established',
                  'install agentgateway-crds/agentgateway (the recipe components) and a LoadBalancer implementation '
                  '(MetalLB, kube-vip); kubectl -n %s describe gateway inference-gateway' % namespace)


def _gpu_request(container):
    """The container asks for a GPU: an ``nvidia.com/*`` resource or a ResourceClaim it names itself. A claim of
    the pod that the container does not name gives it no device (CDI injects a claim's devices only into the
    containers that reference it), so a sidecar beside a GPU container is judged on its own."""
    for key in ('limits', 'requests'):
        for resource in ((container.get('resources') or {}).get(key) or {}):
            if resource.startswith('nvidia.com/'):
                return True
    return bool((container.get('resources') or {}).get('claims'))


def _judged(pod, exempt_namespaces):
    """A pod the rule looks at: outside the exempt namespaces and not finished (a finished pod holds no device)."""
    namespace = (pod.get('metadata') or {}).get('namespace')
    return namespace not in exempt_namespaces and (pod.get('status') or {}).get('phase') not in ('Succeeded', 'Failed')


def _host_devices(path):
    """A hostPath that reaches the GPUs' device nodes: /dev/nvidia*, /dev/dri and what holds them (/dev, the host's
    root), however the path is spelt (//dev/, /dev/../dev/nvidia0)."""
    clean = posixpath.normpath('/' + path.lstrip('/'))
    return (clean in ('/', '/dev', '/dev/dri') or clean.startswith('/dev/nvidia') or clean.startswith('/dev/dri/'))


def accelerator_access_violations(pods, exempt_namespaces):
    """Pods outside ``exempt_namespaces`` that reach GPUs around DRA and the device plugin: a hostPath volume
    under /dev/nvidia* (or /dev/dri), or NVIDIA_VISIBLE_DEVICES=all|<ids> in a container that requests no GPU."""
    found = []
    for pod in [item for item in pods or [] if _judged(item, exempt_namespaces)]:
        meta = pod.get('metadata') or {}
        namespace = meta.get('namespace')
        spec = pod.get('spec') or {}
        ref = 'Pod %s/%s' % (namespace, meta.get('name'))
        reasons = []
        for volume in spec.get('volumes') or []:
            path = (volume.get('hostPath') or {}).get('path') or ''
            if path and _host_devices(path):
                reasons.append('hostPath volume %s mounts %s' % (volume.get('name'), path))
        # every container kind of the pod: ephemeral containers (kubectl debug) get the node's devices the same way
        containers = (spec.get('initContainers') or []) + (spec.get('containers') or [])
        for container in containers + (spec.get('ephemeralContainers') or []):
            for env in container.get('env') or []:
                value = str(env.get('value') or '')
                visible = env.get('name') == 'NVIDIA_VISIBLE_DEVICES' and value not in ('', 'void', 'none')
                if visible and not _gpu_request(container):
                    reasons.append('container %s sets NVIDIA_VISIBLE_DEVICES=%s without requesting a GPU'
                                   % (container.get('name'), value))
        if reasons:
            found.append(dict(object=ref, message='%s: %s' % (ref, '; '.join(reasons))))
    return found


def secure_accelerator_access(pods, exempt_namespaces):
    violations = accelerator_access_violations(pods, exempt_namespaces)
    details = [_sub(False, v['message'], v['object']) for v in violations]
    checked = len([pod for pod in pods or [] if _judged(pod, exempt_namespaces)])
    return _check('secure-accelerator-access', details,
                  'no pod outside %s reaches GPUs around DRA or the device plugin (%d pods checked)'
                  % (', '.join(sorted(exempt_namespaces)), checked),
                  'request GPUs through nvidia.com/gpu or a ResourceClaim; remove /dev/nvidia* hostPath volumes and '
                  'NVIDIA_VISIBLE_DEVICES from the pod (with ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED '
                  'false the toolkit ignores it)')
