# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Conformance rules (module_utils/conformance.py) on objects shaped as the API returns them."""

import json

import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils import conformance as cf


def deployment(name, namespace, available=1):
    return {'metadata': {'name': name, 'namespace': namespace, 'generation': 1},
            'spec': {'replicas': 1}, 'status': {'observedGeneration': 1, 'availableReplicas': available}}


def daemonset(name, namespace, desired=2, ready=2):
    return {'metadata': {'name': name, 'namespace': namespace, 'generation': 1},
            'status': {'observedGeneration': 1, 'desiredNumberScheduled': desired, 'numberReady': ready,
                       'updatedNumberScheduled': desired}}


def pod(namespace, name, volumes=(), env=(), resources=None, claims=None, phase='Running', sidecars=()):
    spec = {'volumes': list(volumes), 'containers': [{'name': 'main', 'env': list(env), 'resources': resources or {}}]
            + list(sidecars)}
    if claims:
        spec['resourceClaims'] = claims
    return {'metadata': {'namespace': namespace, 'name': name}, 'spec': spec, 'status': {'phase': phase}}


def test_recipe_lists_follow_aicr():
    assert 'inference-gateway' in cf.RECIPE_CHECKS['vr200-rke2-ubuntu-inference']
    assert 'inference-gateway' not in cf.RECIPE_CHECKS['vr200-rke2-ubuntu-training']
    assert all(set(checks) <= set(cf.CHECKS) for checks in cf.RECIPE_CHECKS.values())


def test_gpu_operator_health():
    policy = {'status': {'state': 'ready'}}
    good = cf.gpu_operator_health('gpu-operator', deployment('gpu-operator', 'gpu-operator'), policy,
                                  daemonset('nvidia-dcgm-exporter', 'gpu-operator'))
    assert good['status'] == 'passed' and len(good['data']['checks']) == 3
    # the one record shape: the findings as texts, every object looked at as a record in data.checks
    assert good['details'] == [item['message'] for item in good['data']['checks']]
    bad = cf.gpu_operator_health('gpu-operator', deployment('gpu-operator', 'gpu-operator'), {'status': {'state': 'notReady'}},
                                 None)
    assert bad['status'] == 'failed' and 'ClusterPolicy cluster-policy has status.state=notReady' in bad['message']
    assert 'no DaemonSet gpu-operator/nvidia-dcgm-exporter' in bad['message'] and 'kubectl -n gpu-operator' in bad['fix']
    scaled = cf.gpu_operator_health('gpu-operator', dict(deployment('gpu-operator', 'gpu-operator'),
                                                         spec={'replicas': 2}), policy,
                                    daemonset('nvidia-dcgm-exporter', 'gpu-operator'))
    assert scaled['status'] == 'failed' and '1 of 2 replicas' in scaled['message']
    missing = cf.gpu_operator_health('gpu-operator', None, policy, daemonset('nvidia-dcgm-exporter', 'gpu-operator'))
    assert missing['status'] == 'failed' and missing['message'] == 'no Deployment gpu-operator/gpu-operator'
    assert missing['object'] == 'Deployment gpu-operator/gpu-operator'
    assert [item['status'] for item in missing['data']['checks']] == ['failed', 'passed', 'passed']
    # no ClusterPolicy at all: the finding names the API group a user looks it up in (kubectl get clusterpolicies.nvidia.com)
    no_policy = cf.gpu_operator_health('gpu-operator', deployment('gpu-operator', 'gpu-operator'), None,
                                       daemonset('nvidia-dcgm-exporter', 'gpu-operator'))
    assert no_policy['status'] == 'failed'
    assert no_policy['message'] == 'ClusterPolicy cluster-policy (nvidia.com/v1) does not exist'


def test_dra_support_fails_on_what_other_checks_only_warn_about():
    """A DRA driver controller rolling out (1 of 2 replicas: a warning where check_deployment judges alone) cannot
    serve claims reliably: dra-support turns it into a failure, with the controller as the object."""
    slices = [{'spec': {'driver': 'gpu.nvidia.com'}}]
    rolling = dict(deployment('nvidia-dra-driver-gpu-controller', 'ns'), spec={'replicas': 2})
    result = cf.dra_support('v1.34.2', 'v1', 'ns', rolling, daemonset('k', 'ns'), slices)
    assert result['status'] == 'failed' and result['object'] == 'Deployment ns/nvidia-dra-driver-gpu-controller'
    assert [item['status'] for item in result['data']['checks']] == ['passed', 'failed', 'passed', 'passed']
    assert 'warning' not in [item['status'] for item in result['data']['checks']]


def test_served_version_and_dra_support():
    groups = {'groups': [{'name': 'resource.k8s.io', 'versions': [{'version': 'v1beta1'}, {'version': 'v1'}]}]}
    assert cf.served_version(groups, 'resource.k8s.io') == 'v1'
    assert cf.served_version({'groups': [{'name': 'apps', 'versions': [{'version': 'v1'}]}]}, 'resource.k8s.io') is None
    none = cf.dra_support('v1.20.15', None, 'nvidia-dra-driver', None, None, [])
    assert none['status'] == 'failed' and 'v1.20.15' in none['message'] and '1.34' in none['fix']
    slices = [{'spec': {'driver': 'gpu.nvidia.com'}}, {'spec': {'driver': 'dra.net'}}]
    good = cf.dra_support('v1.34.2', 'v1', 'ns', deployment('c', 'ns'), daemonset('k', 'ns'), slices)
    assert good['status'] == 'passed' and 'gpu.nvidia.com' in good['message']
    bad = cf.dra_support('v1.34.2', 'v1', 'ns', None, daemonset('k', 'ns', desired=2, ready=1), slices[1:])
    assert bad['status'] == 'failed'
    assert 'no Deployment ns/nvidia-dra-driver-gpu-controller' in bad['message'] and '1 of 2 pods ready' in bad['message']
    assert 'no ResourceSlice of gpu.nvidia.com or compute-domain.nvidia.com at resource.k8s.io/v1 (1 slices' in bad['message']
    # the served version is a detail of its own; the controller and the kubelet plugin are each judged
    assert good['data']['checks'][0] == {'name': 'detail', 'status': 'passed', 'message': 'resource.k8s.io/v1 is served',
                                         'object': 'APIGroup resource.k8s.io', 'fix': '', 'details': [], 'data': {}}
    # the failed ones are the findings
    assert bad['details'] == [item['message'] for item in bad['data']['checks'] if item['status'] == 'failed']
    assert [item['status'] for item in good['data']['checks']] == ['passed'] * 4
    down = cf.dra_support('v1.34.2', 'v1', 'ns', deployment('nvidia-dra-driver-gpu-controller', 'ns', available=0),
                          None, slices)
    assert down['status'] == 'failed' and down['object'] == 'Deployment ns/nvidia-dra-driver-gpu-controller'
    assert 'Deployment ns/nvidia-dra-driver-gpu-controller has 0 of 1 replicas available' in down['message']
    assert 'no DaemonSet ns/nvidia-dra-driver-gpu-kubelet-plugin' in down['message']
    assert [item['status'] for item in down['data']['checks']] == ['passed', 'failed', 'failed', 'passed']


def test_metrics_api():
    assert 'is not registered' in cf.metrics_api('ai-service-metrics', None)['message']
    down = {'spec': {'service': {'namespace': 'monitoring', 'name': 'prometheus-adapter'}},
            'status': {'conditions': [{'type': 'Available', 'status': 'False', 'reason': 'ServiceNotFound',
                                       'message': 'service/prometheus-adapter in "monitoring" is not present'}]}}
    result = cf.metrics_api('pod-autoscaling', down)
    assert result['status'] == 'failed' and 'v1beta1.external.metrics.k8s.io' in result['message']
    assert 'not Available: ServiceNotFound' in result['message'] and 'prometheus-adapter' in result['fix']
    down['status']['conditions'][0]['status'] = 'True'
    assert cf.metrics_api('pod-autoscaling', down)['status'] == 'passed'
    assert cf.metrics_api('pod-autoscaling', down)['data']['checks'][0]['message'] == (
        'APIService v1beta1.external.metrics.k8s.io (service monitoring/prometheus-adapter) is Available')
    assert cf.metrics_api('ai-service-metrics', None)['message'] == (
        'APIService v1beta1.custom.metrics.k8s.io is not registered: nothing serves the custom metrics API')
    assert cf.metrics_api('pod-autoscaling', None)['message'] == (
        'APIService v1beta1.external.metrics.k8s.io is not registered: nothing serves the external metrics API')
    # registered before its aggregator set any condition, and with no service (a local APIService has none)
    fresh = cf.metrics_api('ai-service-metrics', {'metadata': {'name': 'v1beta1.custom.metrics.k8s.io'}})
    assert fresh['status'] == 'failed' and fresh['message'] == (
        'APIService v1beta1.custom.metrics.k8s.io (service None/None) is not Available: no condition ')


ESTABLISHED = {'status': {'conditions': [{'type': 'Established', 'status': 'True'}]}}
ACCEPTED = {'status': {'conditions': [{'type': 'Accepted', 'status': 'True'}]}}


def programmed(address):
    return {'status': {'conditions': [{'type': 'Programmed', 'status': 'True'}], 'addresses': [{'value': address}]}}


def test_inference_gateway():
    crds, accepted, up = dict((name, ESTABLISHED) for name in cf.GATEWAY_CRDS), ACCEPTED, programmed('10.0.0.9')
    assert cf.inference_gateway(crds, accepted, up, 'gw')['status'] == 'passed'
    pending = {'status': {'conditions': [{'type': 'Programmed', 'status': 'False', 'message': 'no address'}]}}
    result = cf.inference_gateway(dict(crds, **{'inferencepools.inference.networking.k8s.io': None}), None, pending, 'gw')
    assert result['status'] == 'failed'
    assert 'CRD inferencepools.inference.networking.k8s.io does not exist' in result['message']
    assert 'no GatewayClass agentgateway' in result['message'] and 'Programmed=False (no address)' in result['message']
    assert result['data']['checks'][-1]['message'] == (
        'Gateway gw/inference-gateway Programmed=False (no address), no address (LoadBalancer pending?)')
    good = cf.inference_gateway(crds, accepted, up, 'gw')
    assert good['data']['checks'][-1]['message'] == 'Gateway gw/inference-gateway Programmed=True, addresses 10.0.0.9'
    assert good['data']['checks'][-2]['message'] == 'GatewayClass agentgateway Accepted=True'
    # a GatewayClass another controller refused, a Gateway not created (yet), one the controller never saw
    refused = {'status': {'conditions': [{'type': 'Accepted', 'status': 'False', 'message': 'unknown controllerName'}]}}
    result = cf.inference_gateway(crds, refused, None, 'gw')
    assert result['status'] == 'failed' and result['object'] == 'GatewayClass agentgateway'
    assert result['message'] == ('GatewayClass agentgateway Accepted=False (unknown controllerName); '
                                 'no Gateway gw/inference-gateway')
    result = cf.inference_gateway(crds, accepted, {'metadata': {'name': 'inference-gateway'}}, 'gw')
    assert result['status'] == 'failed' and result['object'] == 'Gateway gw/inference-gateway'
    assert result['message'] == 'Gateway gw/inference-gateway Programmed=missing, no address (LoadBalancer pending?)'


def test_secure_accelerator_access():
    exempt = {'gpu-operator'}
    pods = [
        pod('gpu-operator', 'driver', volumes=[{'name': 'dev', 'hostPath': {'path': '/dev'}}]),       # exempt
        pod('team', 'ok', env=[{'name': 'NVIDIA_VISIBLE_DEVICES', 'value': 'all'}],
            resources={'limits': {'nvidia.com/gpu': '1'}}),
        pod('team', 'claim', env=[{'name': 'NVIDIA_VISIBLE_DEVICES', 'value': 'all'}],
            resources={'claims': [{'name': 'gpu'}]}, claims=[{'name': 'gpu', 'resourceClaimTemplateName': 'one-gpu'}]),
        pod('team', 'void', env=[{'name': 'NVIDIA_VISIBLE_DEVICES', 'value': 'void'}]),
        pod('team', 'sneaky', env=[{'name': 'NVIDIA_VISIBLE_DEVICES', 'value': 'all'}]),
        pod('team', 'mounter', volumes=[{'name': 'gpu0', 'hostPath': {'path': '/dev/nvidia0'}},
                                        {'name': 'data', 'hostPath': {'path': '/data'}}]),
    ]
    found = cf.accelerator_access_violations(pods, exempt)
    assert [item['object'] for item in found] == ['Pod team/sneaky', 'Pod team/mounter']
    result = cf.secure_accelerator_access(pods, exempt)
    assert result['status'] == 'failed' and 'NVIDIA_VISIBLE_DEVICES=all without requesting a GPU' in result['message']
    assert 'hostPath volume gpu0 mounts /dev/nvidia0' in result['message'] and '/data' not in result['message']
    assert cf.secure_accelerator_access(pods[:4], exempt)['status'] == 'passed'


def test_secure_accelerator_access_judges_each_container_and_running_pods_only():
    everything = {'name': 'NVIDIA_VISIBLE_DEVICES', 'value': 'all'}
    claim = [{'name': 'gpu', 'resourceClaimTemplateName': 'one-gpu'}]
    # the pod claims a GPU for its main container; a sidecar that names no claim gets no device from it, so its
    # NVIDIA_VISIBLE_DEVICES=all reaches every GPU of the node around DRA
    sidecar = pod('team', 'sidecar', env=[everything], resources={'claims': [{'name': 'gpu'}]}, claims=claim,
                  sidecars=[{'name': 'probe', 'env': [everything]}])
    unnamed = pod('team', 'unnamed', env=[everything], claims=claim)       # the claim is the pod's, not main's
    done = pod('team', 'done', env=[everything], phase='Succeeded')
    failed = pod('team', 'failed', volumes=[{'name': 'dev', 'hostPath': {'path': '/dev/nvidiactl'}}], phase='Failed')
    found = cf.accelerator_access_violations([sidecar, unnamed, done, failed], {'gpu-operator'})
    assert found == [
        {'object': 'Pod team/sidecar', 'message': 'Pod team/sidecar: container probe sets NVIDIA_VISIBLE_DEVICES=all '
                                                  'without requesting a GPU'},
        {'object': 'Pod team/unnamed', 'message': 'Pod team/unnamed: container main sets NVIDIA_VISIBLE_DEVICES=all '
                                                  'without requesting a GPU'}]
    ok = pod('team', 'ok', env=[everything], resources={'requests': {'nvidia.com/gpu': '1'}})
    operator = pod('gpu-operator', 'driver', volumes=[{'name': 'dev', 'hostPath': {'path': '/dev'}}])
    result = cf.secure_accelerator_access([ok, operator, done], {'gpu-operator', 'kube-system'})
    assert result['status'] == 'passed' and result['message'] == (
        'no pod outside gpu-operator, kube-system reaches GPUs around DRA or the device plugin (1 pods checked)')
    assert '(0 pods checked)' in cf.secure_accelerator_access([done, operator], {'gpu-operator'})['message']


# Every kind of container a pod spec holds (PodSpec: containers, initContainers, ephemeralContainers - the ones
# ``kubectl debug`` adds to a running pod): each reaches the node's GPUs the same way, so each is judged. The verdict
# (passed / failed, and which container the finding names) is what is asserted, not the record's layout.
CONTAINER_KINDS = ('containers', 'initContainers', 'ephemeralContainers')
EVERY_GPU = {'name': 'NVIDIA_VISIBLE_DEVICES', 'value': 'all'}


def _verdict(check):
    status = check.get('status')
    if status is None and 'passed' in check:
        status = 'passed' if check['passed'] else 'failed'
    return status, json.dumps(check)


def _pod_with(kind, container):
    spec = {'containers': [{'name': 'main', 'resources': {'limits': {'nvidia.com/gpu': '1'}}}]}
    spec.setdefault(kind, []).append(container)
    return {'metadata': {'namespace': 'team', 'name': 'p'}, 'spec': spec, 'status': {'phase': 'Running'}}


@pytest.mark.parametrize('kind', CONTAINER_KINDS)
def test_secure_accelerator_access_judges_every_container_kind(kind):
    sneaky = _pod_with(kind, {'name': 'sneaky-%s' % kind.lower(), 'env': [EVERY_GPU]})
    status, text = _verdict(cf.secure_accelerator_access([sneaky], {'gpu-operator'}))
    assert status == 'failed' and 'sneaky-%s' % kind.lower() in text, text
    assert 'container main' not in text, 'the GPU container that requests its GPU is not a finding'


@pytest.mark.parametrize('kind', ('containers', 'initContainers'))
@pytest.mark.parametrize('request_kind', ('limits', 'requests', 'claims'))
def test_a_container_of_every_kind_that_requests_its_gpu_passes(kind, request_kind):
    resources = ({'claims': [{'name': 'gpu'}]} if request_kind == 'claims'
                 else {request_kind: {'nvidia.com/gpu': '1'}})
    ok = _pod_with(kind, {'name': 'worker', 'env': [EVERY_GPU], 'resources': resources})
    ok['spec']['resourceClaims'] = [{'name': 'gpu', 'resourceClaimTemplateName': 'one-gpu'}]
    status, text = _verdict(cf.secure_accelerator_access([ok], {'gpu-operator'}))
    assert status == 'passed', text


# Every hostPath shape against secure-accelerator-access: the GPUs' device nodes (/dev/nvidia*, /dev/dri) and what
# holds them (/dev, the host's root) are reached however the path is spelt; a path beside them is not.
@pytest.mark.parametrize('path, reaches', [
    ('/dev/nvidia0', True), ('/dev/nvidiactl', True), ('/dev/nvidia-uvm', True), ('/dev/dri', True),
    ('/dev/dri/', True), ('/dev/dri/card0', True), ('/dev', True), ('/dev/', True), ('//dev', True), ('/', True),
    ('/dev/../dev/nvidia0', True),
    ('/data', False), ('/devices', False), ('/dev-data', False), ('/var/dev/nvidia0', False), ('/dev/null', False),
    ('/dev/shm', False), ('', False),
])
def test_secure_accelerator_access_judges_every_hostpath_shape(path, reaches):
    mounter = pod('team', 'mounter', volumes=[{'name': 'v', 'hostPath': {'path': path}}])
    status, text = _verdict(cf.secure_accelerator_access([mounter], {'gpu-operator'}))
    assert status == ('failed' if reaches else 'passed'), (path, text)


@pytest.mark.parametrize('value, reaches', [('all', True), ('0', True), ('0,1', True), ('GPU-8e9a-uuid', True),
                                            ('', False), ('void', False), ('none', False)])
def test_secure_accelerator_access_judges_every_nvidia_visible_devices_value(value, reaches):
    env_pod = pod('team', 'env', env=[{'name': 'NVIDIA_VISIBLE_DEVICES', 'value': value}])
    status, text = _verdict(cf.secure_accelerator_access([env_pod], {'gpu-operator'}))
    assert status == ('failed' if reaches else 'passed'), (value, text)


@pytest.mark.parametrize('served, used', [(['v1', 'v1beta2', 'v1beta1'], 'v1'), (['v1beta2', 'v1beta1'], 'v1beta2'),
                                          (['v1beta1'], 'v1beta1'), (['v1alpha3'], None), ([], None)])
def test_dra_support_uses_the_newest_served_resource_api(served, used):
    """Kubernetes 1.34 serves resource.k8s.io/v1 (GA), 1.33 v1beta2, 1.32 v1beta1; v1alpha3 is not DRA as the NVIDIA
    driver publishes it."""
    groups = {'groups': [{'name': 'resource.k8s.io', 'versions': [{'version': v} for v in served]}]}
    assert cf.served_version(groups, 'resource.k8s.io') == used


GATEWAY_API = ['gatewayclasses.gateway.networking.k8s.io', 'gateways.gateway.networking.k8s.io',
               'httproutes.gateway.networking.k8s.io', 'inferencepools.inference.networking.k8s.io']


@pytest.mark.parametrize('missing', GATEWAY_API)
def test_inference_gateway_needs_each_crd_of_the_gateway_api_and_the_inference_extension(missing):
    """RKE2 VR200 guide / AICR: the Gateway API and InferencePool CRDs present (rke2-inference installs them)."""
    everything = dict((name, dict(ESTABLISHED, metadata={'name': name})) for name in GATEWAY_API)
    crds = dict((name, crd) for name, crd in everything.items() if name != missing)
    status, text = _verdict(cf.inference_gateway(crds, ACCEPTED, programmed('10.0.0.1'), 'agentgateway-system'))
    assert status == 'failed' and missing in text, text
    status, text = _verdict(cf.inference_gateway(everything, ACCEPTED, programmed('10.0.0.1'), 'agentgateway-system'))
    assert status == 'passed', text


def test_a_dra_kubelet_plugin_rolled_out_to_part_of_the_nodes_fails_dra_support():
    groups = {'groups': [{'name': 'resource.k8s.io', 'versions': [{'version': 'v1'}]}]}
    slices = [{'spec': {'driver': 'gpu.nvidia.com'}}]
    whole = cf.dra_support('v1.34.1', cf.served_version(groups, 'resource.k8s.io'), 'nvidia-dra-driver',
                           deployment('nvidia-dra-driver-gpu-controller', 'nvidia-dra-driver'),
                           daemonset('nvidia-dra-driver-gpu-kubelet-plugin', 'nvidia-dra-driver'), slices)
    assert _verdict(whole)[0] == 'passed'
    part = cf.dra_support('v1.34.1', 'v1', 'nvidia-dra-driver',
                          deployment('nvidia-dra-driver-gpu-controller', 'nvidia-dra-driver'),
                          daemonset('nvidia-dra-driver-gpu-kubelet-plugin', 'nvidia-dra-driver', desired=2, ready=1),
                          slices)
    status, text = _verdict(part)
    assert status == 'failed' and 'kubelet-plugin' in text, text
