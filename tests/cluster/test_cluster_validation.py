# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""cluster_preflight and component_version against the test cluster: good and bad states seeded through the API.

The modules run as Ansible runs them (`ansible localhost -m gpu_tray.cluster.<module>`), reaching the API through
K8S_AUTH_KUBECONFIG like kubernetes.core. Every check is made to pass and to fail here.
"""

import json
import re
import os
import subprocess
import sys
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from ansible_env import checkout_env
from clusterhelpers import two_context_kubeconfig
from stackhelpers import RAIL_PCI
from upstreamdata import upstream_crd

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, 'tests', 'unit'))
from browser import find_chromium, run_chromium  # noqa: E402  (the unit tests' headless Chromium helper)
NVKE = 'gb200-nvke-ubuntu-training'
VR200 = 'vr200-rke2-ubuntu-training'
INFERENCE = 'vr200-rke2-ubuntu-inference'
DYNAMO = 'vr200-rke2-ubuntu-inference-dynamo'


@pytest.fixture(scope='module')
def run(kubeconfig, tmp_path_factory):
    home = str(tmp_path_factory.mktemp('ansible-home'))

    def _run(module, **args):
        env = checkout_env(REPO, home=home, local_temp=True, callback='ansible.builtin.json',
                           ANSIBLE_LOAD_CALLBACK_PLUGINS='1', K8S_AUTH_KUBECONFIG=kubeconfig)
        argv = [os.path.join(os.path.dirname(sys.executable), 'ansible'), 'localhost', '-i', 'localhost,',
                '-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable,
                '-m', 'gpu_tray.cluster.%s' % module, '-a', json.dumps(args)]
        res = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        try:
            data = json.loads(res.stdout)
        except ValueError:
            raise AssertionError('no JSON from ansible (rc %d):\n%s\n%s' % (res.returncode, res.stdout, res.stderr))
        result = data['plays'][0]['tasks'][0]['hosts']['localhost']
        result['rc'] = res.returncode
        return result
    return _run


def check(result, name):
    return next(item for item in result['checks'] if item['name'] == name)


@pytest.fixture
def core(k8s_api):
    return client.CoreV1Api(k8s_api)


@pytest.fixture
def namespace(core):
    name = 'v-' + uuid.uuid4().hex[:8]
    core.create_namespace({'metadata': {'name': name}})
    yield name
    core.delete_namespace(name)


# ---- cluster_preflight ------------------------------------------------------------------------------

def test_server_version_1_20_fails_every_window(run, kcluster):
    for recipe, window in ((NVKE, '>= 1.34'), (VR200, '>= 1.34.1'), (INFERENCE, '>= 1.34.1, < 1.36.0')):
        result = run('cluster_preflight', recipe=recipe, checks=['server-version'])
        assert result.get('failed') and result['rc'] != 0 and result['changed'] is False
        item = check(result, 'server-version')
        assert item['status'] == 'failed' and item['data']['found'].startswith('v1.20.') and item['data']['expected'] == window
        assert 'is outside %s for %s' % (window, recipe) in result['msg']
    assert 'Traefik' in check(run('cluster_preflight', recipe=INFERENCE, checks=['server-version']),
                              'server-version')['message']


def test_service_from_provider_id(run, kcluster):
    own, other = (NVKE, VR200) if kcluster.platform == 'nvke-gb200' else (VR200, NVKE)
    scheme, service = ('nico', 'nvke') if kcluster.platform == 'nvke-gb200' else ('rke2', 'rke2')
    good = run('cluster_preflight', recipe=own, checks=['service'])
    assert not good.get('failed') and good['service'] == service and check(good, 'service')['status'] == 'passed'
    bad = run('cluster_preflight', recipe=other, checks=['service'])
    assert bad.get('failed') and check(bad, 'service')['status'] == 'failed'
    assert 'looks like %s (providerID %s:// on ' % (service, scheme) in bad['msg'] and 'tray01' in bad['msg']


def test_control_plane_gpu_labels(run, kcluster, core):
    cp = kcluster.control_plane
    seeded = {}
    if kcluster.platform != 'nvke-gb200':          # rke2-vr200's cp01 has no GPU labels: seed them
        seeded = {'nvidia.com/gpu.present': 'true', 'feature.node.kubernetes.io/pci-15b3.present': 'true'}
        core.patch_node(cp, {'metadata': {'labels': seeded}})
    try:
        result = run('cluster_preflight', recipe=NVKE, checks=['control-plane-gpu-labels'])
        item = check(result, 'control-plane-gpu-labels')
        assert not result.get('failed') and item['status'] == 'warning'      # a warning, not a failure
        assert '%s (' % cp in item['message'] and 'nvidia.com/gpu.present' in item['message']
        assert 'nvidia.com/gpu.deploy.operands=false' in item['fix']
        assert any('control-plane-gpu-labels' in str(w) for w in result.get('warnings', []))
        assert all(not name.startswith('tray') for name in [n['name'] for n in item['data']['nodes']])
        core.patch_node(cp, {'metadata': {'labels': {'nvidia.com/gpu.deploy.operands': 'false'}}})
        result = run('cluster_preflight', recipe=NVKE, checks=['control-plane-gpu-labels'])
        item = check(result, 'control-plane-gpu-labels')
        assert item['status'] == 'passed' and 'excluded' in item['message'] and cp in item['message']
    finally:
        labels = dict((key, None) for key in seeded)
        labels['nvidia.com/gpu.deploy.operands'] = None
        core.patch_node(cp, {'metadata': {'labels': labels}})


def test_asap2_pod_cap(run, kcluster, core):
    node = kcluster.trays[0]
    pods = len([p for p in core.list_pod_for_all_namespaces(field_selector='spec.nodeName=%s' % node).items
                if p.status.phase not in ('Succeeded', 'Failed')])
    result = run('cluster_preflight', recipe=NVKE, checks=['asap2-pod-cap'], added_pods_per_gpu_node=40)
    assert check(result, 'asap2-pod-cap')['message'] == 'no node advertises nvidia.com/asap2_vf'
    core.patch_node_status(node, {'status': {'capacity': {'nvidia.com/asap2_vf': '8'},
                                             'allocatable': {'nvidia.com/asap2_vf': '8'}}})
    try:
        at_cap = run('cluster_preflight', recipe=NVKE, checks=['asap2-pod-cap'], added_pods_per_gpu_node=28 - pods)
        item = check(at_cap, 'asap2-pod-cap')
        assert item['status'] == 'passed' and item['data']['nodes'] == [
            {'name': node, 'pods': pods, 'added': 28 - pods, 'total': 28, 'cap': 28, 'over': False}]
        over = run('cluster_preflight', recipe=NVKE, checks=['asap2-pod-cap'], added_pods_per_gpu_node=29 - pods)
        item = check(over, 'asap2-pod-cap')
        assert item['status'] == 'warning' and not over.get('failed')
        assert '%s (%d pods now + %d from the recipe = 29)' % (node, pods, 29 - pods) in item['message']
    finally:
        core.patch_node_status(node, {'status': {'capacity': {'nvidia.com/asap2_vf': None},
                                                 'allocatable': {'nvidia.com/asap2_vf': None}}})


def test_default_storage_class(run, k8s_api):
    storage = client.StorageV1Api(k8s_api)
    assert check(run('cluster_preflight', recipe=VR200, checks=['default-storage-class']),
                 'default-storage-class')['status'] == 'skipped'
    result = run('cluster_preflight', recipe=DYNAMO, checks=['default-storage-class'])
    assert result.get('failed') and 'no default StorageClass' in result['msg']
    names = ['v-sc-' + uuid.uuid4().hex[:6] for _ in range(2)]
    try:
        for name in names:
            storage.create_storage_class({'metadata': {'name': name, 'annotations': {
                'storageclass.kubernetes.io/is-default-class': 'true'}}, 'provisioner': 'rancher.io/local-path'})
            result = run('cluster_preflight', recipe=DYNAMO, checks=['default-storage-class'])
            if name == names[0]:
                assert not result.get('failed') and check(result, 'default-storage-class')['data']['found'] == [name]
        item = check(result, 'default-storage-class')
        assert item['status'] == 'warning' and 'several default StorageClasses' in item['message']
    finally:
        for name in names:
            try:
                storage.delete_storage_class(name)
            except ApiException:
                pass


def test_load_balancer(run, core, namespace):
    assert check(run('cluster_preflight', recipe=VR200, checks=['load-balancer']), 'load-balancer')['status'] == 'skipped'
    core.create_namespaced_service(namespace, {'metadata': {'name': 'gateway'}, 'spec': {
        'type': 'LoadBalancer', 'ports': [{'port': 80}], 'selector': {'app': 'gateway'}}})
    result = run('cluster_preflight', recipe=INFERENCE, checks=['load-balancer'])
    assert result.get('failed') and 'no LoadBalancer implementation' in result['msg']
    assert 'still pending: %s/gateway' % namespace in result['msg']
    name = 'kubevip'
    try:
        core.create_namespaced_config_map('kube-system', {'metadata': {'name': name},
                                                          'data': {'range-global': '198.18.200.10-198.18.200.20'}})
        result = run('cluster_preflight', recipe=INFERENCE, checks=['load-balancer'])
        item = check(result, 'load-balancer')
        assert not result.get('failed') and item['status'] == 'passed'
        assert 'kube-vip ConfigMap kube-system/kubevip (range-global)' in item['message']
    finally:
        core.delete_namespaced_config_map(name, 'kube-system')


def test_foreign_reboot_controllers(run, k8s_api):
    """The real Skyhook CRD (the upstream data; 1.20 needs its empty status default dropped): a Skyhook whose package
    reboots GPU nodes is reported; without the API (404) or with a noop package the check passes."""
    import time
    import yaml
    ext, custom = client.ApiextensionsV1Api(k8s_api), client.CustomObjectsApi(k8s_api)
    assert check(run('cluster_preflight', recipe=VR200, checks=['foreign-reboot-controllers']),
                 'foreign-reboot-controllers')['status'] == 'passed'            # no such API on the cluster
    with open(upstream_crd('skyhook')) as fh:
        crd = yaml.safe_load(fh)
    crd['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']['status']['properties']['packageList'].pop(
        'default')
    ext.create_custom_resource_definition(crd)
    try:
        deadline = time.time() + 60
        while not any(c.type == 'Established' and c.status == 'True' for c in
                      ext.read_custom_resource_definition(crd['metadata']['name']).status.conditions or []):
            assert time.time() < deadline
            time.sleep(0.5)
        for name, interrupt in (('quiet', 'noop'), ('tuning', 'reboot')):
            custom.create_cluster_custom_object('skyhook.nvidia.com', 'v1alpha1', 'skyhooks', {
                'apiVersion': 'skyhook.nvidia.com/v1alpha1', 'kind': 'Skyhook', 'metadata': {'name': name},
                'spec': {'nodeSelectors': {'matchLabels': {'nvidia.com/gpu.present': 'true'}},
                         'packages': {'nvidia-tuned': {'image': 'ghcr.io/nvidia/nodewright-packages/nvidia-tuned',
                                                       'version': '0.10.0', 'interrupt': {'type': interrupt}}}}})
        result = run('cluster_preflight', recipe=VR200, checks=['foreign-reboot-controllers'])
        item = check(result, 'foreign-reboot-controllers')
        assert not result.get('failed') and item['status'] == 'warning', result
        assert [o['name'] for o in item['data']['found']] == ['tuning'] and item['data']['found'][0]['trays'], item
        assert item['message'].startswith('Skyhook tuning (nvidia-tuned: reboot on '), item
    finally:
        ext.delete_custom_resource_definition(crd['metadata']['name'])


def test_preflight_report_only_and_bad_connection(run, tmp_path):
    result = run('cluster_preflight', recipe=NVKE, fail_on_error=False)
    assert not result.get('failed') and result['rc'] == 0 and 'server-version' in result['failed_checks']
    expected = ['server-version', 'service', 'control-plane-gpu-labels', 'asap2-pod-cap', 'default-storage-class',
                'load-balancer', 'foreign-reboot-controllers']
    assert [item['name'] for item in result['checks']] == expected
    missing = str(tmp_path / 'nope.kubeconfig')
    result = run('cluster_preflight', recipe=NVKE, kubeconfig=missing)
    assert result.get('failed') and 'cannot load the kubeconfig' in result['msg']   # the path itself is no_log
    assert 'Traceback' not in result['msg']
    result = run('cluster_preflight', recipe='h100-eks-training')
    assert result.get('failed') and 'value of recipe must be one of' in result['msg']


# ---- component_version --------------------------------------------------------------------------

def _daemonset(name, image, labels=None):
    return {'metadata': {'name': name, 'labels': labels or {}},
            'spec': {'selector': {'matchLabels': {'app': name}},
                     'template': {'metadata': {'labels': {'app': name}},
                                  'spec': {'containers': [{'name': 'plugin', 'image': image}]}}}}


def test_dra_driver_rules_on_a_deployed_daemonset(run, k8s_api, namespace):
    apps = client.AppsV1Api(k8s_api)
    name = 'nvidia-dra-driver-gpu-kubelet-plugin'
    apps.create_namespaced_daemon_set(namespace, _daemonset(name, 'registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.4.1'))
    args = dict(component='nvidia-dra-driver-gpu', namespace=namespace)
    result = run('component_version', recipe=VR200, **args)
    assert result.get('failed') and result['version'] == 'v0.4.1' and result['object'] == 'DaemonSet %s/%s' % (namespace, name)
    assert 'crash-loops on VR200' in result['msg'] and 'image tag of container plugin' in result['source']
    assert not run('component_version', recipe=NVKE.replace('training', 'kubeflow'), constraint='>= 0.4.0',
                   **dict(args, component='other', name=name, kind='DaemonSet')).get('failed')
    apps.patch_namespaced_daemon_set(name, namespace, {'metadata': {'labels': {'app.kubernetes.io/version': '0.5.0'}}})
    result = run('component_version', recipe=NVKE, **args)
    assert result.get('failed') and result['version'] == '0.5.0' and 'needs 0.5.1 or later' in result['msg']
    result = run('component_version', recipe=VR200, admission_plugins=['OwnerReferencesPermissionEnforcement'], **args)
    assert not result.get('failed') and result['findings'][0]['status'] == 'warning'
    assert not run('component_version', recipe=VR200, **args)['findings']


def test_constraint_on_a_deployment(run, k8s_api, namespace):
    apps = client.AppsV1Api(k8s_api)
    body = {'metadata': {'name': 'gpu-operator', 'labels': {'app.kubernetes.io/version': 'v26.3.1'}},
            'spec': {'selector': {'matchLabels': {'app': 'gpu-operator'}},
                     'template': {'metadata': {'labels': {'app': 'gpu-operator'}},
                                  'spec': {'containers': [{'name': 'gpu-operator', 'image': 'nvcr.io/nvidia/gpu-operator:v26.7.0'}]}}}}
    apps.create_namespaced_deployment(namespace, body)
    args = dict(component='gpu-operator', namespace=namespace, constraint='>= v26.7.0')
    result = run('component_version', **args)
    assert result.get('failed') and result['version'] == 'v26.3.1'                # label wins over the image tag
    assert 'does not meet >= v26.7.0 (fails >= v26.7.0)' in result['msg'] and 'Deployment %s/gpu-operator' % namespace in result['msg']
    apps.patch_namespaced_deployment('gpu-operator', namespace, {'metadata': {'labels': {'app.kubernetes.io/version': 'v26.10.0'}}})
    result = run('component_version', **args)
    assert not result.get('failed') and result['passed'] and 'meets >= v26.7.0' in result['msg']
    selected = run('component_version', component='gpu-operator', namespace=namespace, label_selector='app.kubernetes.io/version',
                   constraint='>= 26.7.0, < 27')
    assert not selected.get('failed') and selected['version'] == 'v26.10.0'


def test_component_missing_and_bad_options(run, namespace):
    result = run('component_version', component='gpu-operator', namespace=namespace, constraint='>= v26.7.0')
    assert result.get('failed') and 'gpu-operator is not deployed: no Deployment %s/gpu-operator' % namespace in result['msg']
    result = run('component_version', component='kai-scheduler', constraint='>= 1')
    assert result.get('failed') and 'has no built-in location' in result['msg']
    result = run('component_version', component='gpu-operator', constraint='newer than 26')
    assert result.get('failed') and 'option constraint' in result['msg']
    result = run('component_version', component='gpu-operator', namespace=namespace, label_selector='app=none')
    assert result.get('failed') and '0 Deployments match app=none' in result['msg']


# ---- expected_resources ---------------------------------------------------------------------------

def _crd(group, plural, kind):
    return {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
            'metadata': {'name': '%s.%s' % (plural, group)},
            'spec': {'group': group, 'scope': 'Cluster', 'names': {'plural': plural, 'kind': kind},
                     'versions': [{'name': 'v1', 'served': True, 'storage': True, 'schema': {'openAPIV3Schema': {
                         'type': 'object', 'x-kubernetes-preserve-unknown-fields': True}}}]}}


def _wait_for(what, probe, timeout=60):
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        if probe():
            return
        time.sleep(1)
    raise AssertionError('timed out waiting for %s' % what)


def test_expected_resources(run, k8s_api, core, namespace):
    apps = client.AppsV1Api(k8s_api)
    ext = client.ApiextensionsV1Api(k8s_api)
    custom = client.CustomObjectsApi(k8s_api)
    group = '%s.gputray.test' % namespace
    release = {'meta.helm.sh/release-name': 'widget-operator'}
    apps.create_namespaced_deployment(namespace, {
        'metadata': {'name': 'widget-operator', 'annotations': release},
        'spec': {'replicas': 1, 'selector': {'matchLabels': {'app': 'widget-operator'}},
                 'template': {'metadata': {'labels': {'app': 'widget-operator'}},
                              'spec': {'containers': [{'name': 'op', 'image': 'registry.invalid/op:1.0'}]}}}})
    ds = _daemonset('widget-agent', 'registry.invalid/agent:1.0')
    ds['metadata']['annotations'] = release
    ds['spec']['template']['spec']['nodeSelector'] = {'nvidia.com/gpu.present': 'true'}
    ds['spec']['template']['spec']['tolerations'] = [{'operator': 'Exists'}]
    apps.create_namespaced_daemon_set(namespace, ds)
    ext.create_custom_resource_definition(_crd(group, 'widgets', 'Widget'))
    ext.create_custom_resource_definition(_crd(group, 'gadgets', 'Widget'))      # kind already in use: not Established
    try:
        _wait_for('widgets CRD served', lambda: any(
            c.type == 'Established' and c.status == 'True'
            for c in (ext.read_custom_resource_definition('widgets.%s' % group).status.conditions or [])))
        custom.create_cluster_custom_object(group, 'v1', 'widgets', {
            'apiVersion': '%s/v1' % group, 'kind': 'Widget', 'metadata': {'name': 'policy'}, 'status': {'state': 'notReady'}})
        component = {'name': 'widget-operator', 'namespace': namespace, 'crds': ['widgets.%s' % group],
                     'ready': [{'api_version': '%s/v1' % group, 'kind': 'Widget', 'name': 'policy'}]}
        result = run('expected_resources', components=[component])
        assert result.get('failed') and 'Widget policy has status.state=notReady (expected ready' in result['msg']
        custom.patch_cluster_custom_object(group, 'v1', 'widgets', 'policy', {'status': {'state': 'ready'}})
        good = run('expected_resources', components=[component], timeout=60, poll_interval=2, stable_polls=2)
        assert not good.get('failed') and good['stable'] and good['polls'] >= 2, good.get('msg')
        kinds = sorted(set(item['name'] for item in good['checks']))
        assert kinds == ['crd', 'daemonset', 'deployment', 'namespace', 'ready']
        bad_crd = dict(component, crds=['gadgets.%s' % group])
        result = run('expected_resources', components=[bad_crd])
        assert result.get('failed') and 'CRD gadgets.%s is not Established: NamesAccepted=False' % group in result['msg']
        apps.patch_namespaced_daemon_set('widget-agent', namespace, {'spec': {'template': {'spec': {'containers': [
            {'name': 'plugin', 'image': 'registry.invalid/agent:broken'}]}}}})
        _wait_for('a crash-looping agent pod', lambda: any(
            (s.state.waiting is not None and s.state.waiting.reason == 'CrashLoopBackOff')
            for p in core.list_namespaced_pod(namespace).items for s in (p.status.container_statuses or [])))
        result = run('expected_resources', components=[component])
        assert result.get('failed') and 'is CrashLoopBackOff' in result['msg']
        assert 'DaemonSet %s/widget-agent is not rolled out' % namespace in result['msg']
        missing = run('expected_resources', components=[{'name': 'absent', 'namespace': 'no-such-namespace'}])
        assert missing.get('failed') and 'namespace no-such-namespace does not exist' in missing['msg']
    finally:
        for name in ('widgets', 'gadgets'):
            try:
                ext.delete_custom_resource_definition('%s.%s' % (name, group))
            except ApiException:
                pass


def test_expected_resources_sriov_fabric(run, kcluster, namespace):
    component = {'name': 'none', 'namespace': namespace}
    result = run('expected_resources', components=[component], sriov_rails=4, num_vfs=16)
    fabric = [item for item in result['checks'] if item['data']['component'] == 'sriov-fabric']
    rails = [item for item in fabric if item['name'] == 'sriov-rails']
    if kcluster.platform == 'nvke-gb200':       # trays advertise 16 VFs on 4 rails; cp01 (control plane) is not judged
        assert [item['object'] for item in rails] == ['Node %s' % tray for tray in kcluster.trays]
        assert all(item['status'] == 'passed' for item in rails)
        wrong = run('expected_resources', components=[component], sriov_rails=4, num_vfs=8)
        assert 'node tray01: nvidia.com/sriov_resource_rail_0=16' in wrong['msg']
    else:                                       # rke2-vr200 trays have no SR-IOV rails
        assert all(item['status'] == 'failed' for item in rails) and 'rail_0=missing' in result['msg']
    assert result.get('failed') and 'no multus DaemonSet' in result['msg']
    assert 'no SriovNetworkNodeState exists' in result['msg']


# ---- conformance ------------------------------------------------------------------------------------

def test_conformance_gpu_operator_health(run, k8s_api, namespace):
    apps = client.AppsV1Api(k8s_api)
    ext = client.ApiextensionsV1Api(k8s_api)
    custom = client.CustomObjectsApi(k8s_api)
    args = dict(recipe=VR200, checks=['gpu-operator-health'], gpu_operator_namespace=namespace)
    result = run('conformance', **args)
    item = check(result, 'gpu-operator-health')
    assert result.get('failed') and item['status'] == 'failed' and result['changed'] is False
    assert 'no Deployment %s/gpu-operator' % namespace in item['message'] and 'kubectl -n %s' % namespace in item['fix']
    assert 'no DaemonSet %s/nvidia-dcgm-exporter' % namespace in item['message']
    body = _daemonset('gpu-operator', 'nvcr.io/nvidia/gpu-operator:v26.7.1')
    body['spec']['replicas'] = 1
    apps.create_namespaced_deployment(namespace, body)
    dcgm = _daemonset('nvidia-dcgm-exporter', 'nvcr.io/nvidia/k8s/dcgm-exporter:4.4.1')
    dcgm['spec']['template']['spec']['nodeSelector'] = {'nvidia.com/gpu.present': 'true'}
    dcgm['spec']['template']['spec']['tolerations'] = [{'operator': 'Exists'}]
    apps.create_namespaced_daemon_set(namespace, dcgm)
    crd = 'clusterpolicies.nvidia.com'
    created_crd = False
    try:
        ext.read_custom_resource_definition(crd)
    except ApiException:               # the stack tests may have it; create it only when absent
        ext.create_custom_resource_definition(_crd('nvidia.com', 'clusterpolicies', 'ClusterPolicy'))
        created_crd = True
    try:
        _wait_for('ClusterPolicy CRD served', lambda: any(
            c.type == 'Established' and c.status == 'True'
            for c in (ext.read_custom_resource_definition(crd).status.conditions or [])))
        custom.create_cluster_custom_object('nvidia.com', 'v1', 'clusterpolicies', {
            'apiVersion': 'nvidia.com/v1', 'kind': 'ClusterPolicy', 'metadata': {'name': 'cluster-policy'},
            'status': {'state': 'notReady'}})
        _wait_for('operator and DCGM exporter rolled out', lambda: (
            (apps.read_namespaced_deployment('gpu-operator', namespace).status.available_replicas or 0) == 1
            and (apps.read_namespaced_daemon_set('nvidia-dcgm-exporter', namespace).status.number_ready or 0) > 0))
        result = run('conformance', **args)
        item = check(result, 'gpu-operator-health')
        assert result.get('failed') and item['message'] == (
            'ClusterPolicy cluster-policy has status.state=notReady (expected ready: the operator is still reconciling '
            'or an operand failed; see its status)')
        custom.patch_cluster_custom_object('nvidia.com', 'v1', 'clusterpolicies', 'cluster-policy',
                                           {'status': {'state': 'ready'}})
        result = run('conformance', **args)
        assert not result.get('failed') and check(result, 'gpu-operator-health')['status'] == 'passed', result['msg']
    finally:
        try:
            custom.delete_cluster_custom_object('nvidia.com', 'v1', 'clusterpolicies', 'cluster-policy')
        except ApiException:
            pass
        if created_crd:
            ext.delete_custom_resource_definition(crd)


def test_conformance_dra_support_needs_resource_api(run, kcluster):
    result = run('conformance', recipe=NVKE, checks=['dra-support'])
    item = check(result, 'dra-support')
    assert result.get('failed') and result['dra_version'] is None      # 1.20 serves no resource.k8s.io
    assert 'serves no resource.k8s.io version of v1, v1beta2, v1beta1' in item['message'] and 'v1.20.' in item['message']
    assert '1.34' in item['fix'] and 'dra-support: ' in result['msg']


def test_conformance_metrics_apis(run, k8s_api, namespace):
    registration = client.ApiregistrationV1Api(k8s_api)
    result = run('conformance', recipe=VR200, checks=['ai-service-metrics', 'pod-autoscaling'])
    assert result.get('failed') and result['failed_checks'] == ['ai-service-metrics', 'pod-autoscaling']
    assert 'APIService v1beta1.custom.metrics.k8s.io is not registered' in result['msg']
    name = 'v1beta1.external.metrics.k8s.io'
    body = {'metadata': {'name': name}, 'spec': {
        'group': 'external.metrics.k8s.io', 'version': 'v1beta1', 'groupPriorityMinimum': 100, 'versionPriority': 100,
        'insecureSkipTLSVerify': True, 'service': {'namespace': namespace, 'name': 'prometheus-adapter'}}}
    registration.create_api_service(body)
    try:                                   # registered, but its Service does not exist: not Available
        _wait_for('the aggregator to judge the APIService', lambda: any(
            c.type == 'Available' and c.status == 'False'
            for c in (registration.read_api_service(name).status.conditions or [])))
        result = run('conformance', recipe=VR200, checks=['pod-autoscaling'])
        item = check(result, 'pod-autoscaling')
        assert result.get('failed') and 'APIService %s (service %s/prometheus-adapter) is not Available: ' % (
            name, namespace) in item['message'] and 'prometheus-adapter' in item['fix']
    finally:
        registration.delete_api_service(name)


def test_conformance_inference_gateway_missing(run, kcluster):
    result = run('conformance', recipe=INFERENCE, checks=['inference-gateway'])
    item = check(result, 'inference-gateway')
    assert result.get('failed') and item['status'] == 'failed'
    assert 'CRD inferencepools.inference.networking.k8s.io does not exist' in item['message']
    assert 'no GatewayClass agentgateway' in item['message'] and 'LoadBalancer' in item['fix']
    training = run('conformance', recipe=VR200, fail_on_error=False)       # training recipes do not check it
    assert 'inference-gateway' not in [item['name'] for item in training['checks']] and training['rc'] == 0


def test_conformance_secure_accelerator_access(run, core, namespace):
    pod = {'metadata': {'name': 'grabs-gpu0'}, 'spec': {
        'automountServiceAccountToken': False, 'containers': [{'name': 'main', 'image': 'registry.invalid/app:1.0'}],
        'volumes': [{'name': 'gpu0', 'hostPath': {'path': '/dev/nvidia0'}}]}}

    def created():                 # a fresh namespace gets its default ServiceAccount a moment later
        try:
            core.create_namespaced_pod(namespace, pod)
        except ApiException as exc:
            if exc.status not in (403, 500):
                raise
            return False
        return True
    _wait_for('the pod to be admitted', created, timeout=30)
    result = run('conformance', recipe=VR200, checks=['secure-accelerator-access'])
    item = check(result, 'secure-accelerator-access')
    assert result.get('failed') and 'Pod %s/grabs-gpu0: hostPath volume gpu0 mounts /dev/nvidia0' % namespace in item['message']
    result = run('conformance', recipe=VR200, checks=['secure-accelerator-access'], exempt_namespaces=[namespace])
    assert 'grabs-gpu0' not in check(result, 'secure-accelerator-access')['message']
    core.delete_namespaced_pod('grabs-gpu0', namespace, grace_period_seconds=0)


# ---- playbooks/validate.yml -----------------------------------------------------------------------

def _validate(kubeconfig, home, *extra):
    """validate.yml on localhost; ``kubeconfig`` None: no K8S_AUTH_* at all (the extra vars name the cluster)."""
    env = checkout_env(REPO, without=('K8S_AUTH_*', 'KUBECONFIG'), home=home, local_temp=True)
    if kubeconfig:
        env['K8S_AUTH_KUBECONFIG'] = kubeconfig
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
            '-e', 'ansible_python_interpreter=%s' % sys.executable, os.path.join(REPO, 'playbooks', 'validate.yml'),
            # the NVKE recipes' SR-IOV policies select each rail by its PF address on the tray model (the stack plan
            # refuses without them); an item below may set others
            '-e', json.dumps({'gpu_tray_rail_pci_addresses': RAIL_PCI})]
    for item in extra:
        argv += ['-e', json.dumps(item)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


def _chromium():
    """Debian's chromium (tests/unit/browser.py: tools/setup.sh installs it, or it is installed here when root)."""
    found = find_chromium()
    assert found, 'chromium is not installed: run tools/setup.sh (apt-get install chromium)'
    return found


def _browser_text(path):
    """The text of an HTML file as headless Chromium renders it (its DOM after loading, tags removed)."""
    from html.parser import HTMLParser
    res = run_chromium(_chromium(), ['--dump-dom', 'file://%s' % path])
    assert res.returncode == 0 and '<table' in res.stdout, 'chromium rc %d:\n%s' % (res.returncode, res.stderr[-2000:])
    parts = []

    class Text(HTMLParser):
        def handle_data(self, data):
            if data.strip():
                parts.append(data.strip())

    Text().feed(res.stdout)
    return ' '.join(parts)


def test_validate_playbook_writes_evidence(kubeconfig, tmp_path):
    import xml.etree.ElementTree as ET
    evidence_dir = tmp_path / 'evidence'
    log = os.path.join(REPO, 'tests', 'unit', 'fixtures', 'nccl', 'vr200_nvls_ib_mpirun.log')
    args = {'validate_recipe': NVKE, 'validate_evidence_dir': str(evidence_dir), 'validate_recipe_digest': 'sha256:aaaa',
            'validate_nccl_logs': [{'path': log, 'variant': 'nvls'}],
            'validate_component_versions': [{'component': 'gpu-operator', 'constraint': '>= v26.7.0'}]}
    res = _validate(kubeconfig, str(tmp_path), args)
    assert res.returncode != 0 and 'Validation of %s failed' % NVKE in res.stdout, res.stdout[-3000:]
    summary = json.loads((evidence_dir / 'summary.json').read_text())
    assert summary['recipe_digest'] == 'sha256:aaaa' and summary['result'] == 'failed'
    # -i localhost,: no GPU trays to read, the trays phase says so (skipped, never passed)
    assert summary['phases'] == {'readiness': 'failed', 'deployment': 'failed', 'trays': 'skipped',
                                 'conformance': 'failed', 'performance': 'passed'}
    readiness = json.loads((evidence_dir / 'ctrf' / 'readiness.json').read_text())['results']
    assert readiness['summary']['failed'] >= 1
    assert [t['status'] for t in readiness['tests'] if t['name'] == 'server-version'] == ['failed']
    performance = json.loads((evidence_dir / 'ctrf' / 'performance.json').read_text())['results']['tests']
    assert [(t['name'], t['status']) for t in performance] == [('nccl-all-reduce-bw-nvls', 'passed')]
    deployment = json.loads((evidence_dir / 'ctrf' / 'deployment.json').read_text())['results']['tests']
    names = [t['name'] for t in deployment]
    assert 'sriov-rails' in names and 'multus' in names           # NVKE: the fabric checks run by default
    # the recipe's components come from the stack role's catalog: none is installed on the test cluster
    messages = [t['message'] for t in deployment if t['status'] == 'failed']
    for ns in ('gpu-operator', 'nvidia-network-operator', 'cert-manager'):
        assert 'namespace %s does not exist: the component is not installed' % ns in messages
    conformance = json.loads((evidence_dir / 'ctrf' / 'conformance.json').read_text())['results']['tests']
    assert [(t['name'], t['status']) for t in conformance][:4] == [
        ('gpu-operator-health', 'failed'), ('dra-support', 'failed'), ('ai-service-metrics', 'failed'),
        ('pod-autoscaling', 'failed')]
    assert [t['name'] for t in conformance][4:] == ['secure-accelerator-access']
    version = [t for t in deployment if t['name'] == 'gpu-operator']
    assert version[0]['status'] == 'failed' and 'is not deployed' in version[0]['message']
    root = ET.parse(str(evidence_dir / 'junit.xml')).getroot()
    assert [suite.get('name') for suite in root] == ['readiness', 'deployment', 'trays', 'conformance', 'performance']
    report = (evidence_dir / 'report.md').read_text()
    assert '| server-version | FAILED |  | Kubernetes v1.20' in report and 'STALE' not in report
    assert report.index('### Failed checks') < report.index('| **server-version** | readiness |') < \
        report.index('## readiness: FAILED')                                  # the summary first
    # the HTML report as a person sees it: rendered by a browser, the failing checks are in the page's text
    text = _browser_text(evidence_dir / 'report.html')
    assert 'server-version FAILED Kubernetes v1.20' in text and re.search(r'dra-support FAILED .{0,80}the API server', text)
    assert text.index('Failed checks') < text.index('server-version FAILED')
    # Validating a changed recipe (the digest now comes from the catalog): the evidence says the old one is stale.
    args.pop('validate_recipe_digest')
    res = _validate(kubeconfig, str(tmp_path), dict(args, validate_fail_fast=True))
    assert res.returncode != 0
    digest = json.loads((evidence_dir / 'summary.json').read_text())['recipe_digest']
    assert len(digest) == 64 and int(digest, 16) >= 0
    report = (evidence_dir / 'report.md').read_text()
    assert 'STALE: this evidence was recorded for recipe digest sha256:aaaa, the recipe is now %s' % digest in report
    assert json.loads((evidence_dir / 'summary.json').read_text())['phases'] == {'readiness': 'failed'}   # fail fast
    assert sorted(os.listdir(str(evidence_dir / 'ctrf'))) == ['readiness.json']      # no leftover of the first run


def test_validate_reaches_the_cluster_and_context_the_inventory_names(kubeconfig, tmp_path):
    """Issue 44: gpu_tray_kubeconfig + gpu_tray_kube_context reach every API module of validate (module_defaults),
    with no K8S_AUTH_* in the environment: the kubeconfig's current context is a closed port, the named one the test
    cluster. The readiness phase reads the API server's version and the deployment phase its nodes' SR-IOV
    resources - from the test cluster, never "connection refused"."""
    path, context = two_context_kubeconfig(kubeconfig, tmp_path / 'two-contexts.kubeconfig')
    evidence_dir = tmp_path / 'evidence'
    res = _validate(None, str(tmp_path), {'gpu_tray_kubeconfig': path, 'gpu_tray_kube_context': context,
                                          'validate_recipe': NVKE, 'validate_evidence_dir': str(evidence_dir),
                                          'validate_phases': ['readiness', 'deployment']})
    assert 'Connection refused' not in res.stdout and 'connection refused' not in res.stdout, res.stdout[-3000:]
    assert (evidence_dir / 'ctrf' / 'readiness.json').is_file(), res.stdout[-4000:]
    readiness = json.loads((evidence_dir / 'ctrf' / 'readiness.json').read_text())['results']['tests']
    version = [t for t in readiness if t['name'] == 'server-version']
    assert version and 'v1.20' in version[0]['message'], readiness
    deployment = json.loads((evidence_dir / 'ctrf' / 'deployment.json').read_text())['results']['tests']
    assert [t['name'] for t in deployment if t['name'] == 'sriov-rails'], deployment
    # the same run without the context: the current context's closed port, for every phase
    res = _validate(None, str(tmp_path), {'gpu_tray_kubeconfig': path, 'validate_recipe': NVKE,
                                          'validate_evidence_dir': str(tmp_path / 'closed'),
                                          'validate_phases': ['readiness']})
    assert res.returncode != 0 and re.search(r'(?i)connection refused|max retries', res.stdout), res.stdout[-3000:]


def test_validate_playbook_rejects_bad_input(kubeconfig, tmp_path):
    res = _validate(kubeconfig, str(tmp_path), {'validate_recipe': 'h100-eks'})
    assert res.returncode != 0 and 'validate_recipe' in res.stdout and 'h100-eks' in res.stdout
