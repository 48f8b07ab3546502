# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure rules of the cluster validation modules (module_utils/cluster_rules.py)."""

import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils import cluster_rules as rules


def node(name, labels=None, provider_id=None, taints=None, annotations=None, allocatable=None):
    spec = {}
    if provider_id:
        spec['providerID'] = provider_id
    if taints:
        spec['taints'] = taints
    return dict(metadata=dict(name=name, labels=labels or {}, annotations=annotations or {}), spec=spec,
                status=dict(allocatable=allocatable or {}))


# ---- versions ----------------------------------------------------------------------------------------

@pytest.mark.parametrize('text, normal, suffix', [
    ('v1.34.1+rke2r1', '1.34.1', '+rke2r1'), ('v1.34.2-eks-113cf36', '1.34.2', '-eks-113cf36'),
    ('v1.35.0-gke.1200', '1.35.0', '-gke.1200'), ('v1.36.0-rc.1', '1.36.0rc1', ''), ('v26.7.0', '26.7.0', ''),
    ('0.5.0', '0.5.0', ''), ('1.34', '1.34', ''),
])
def test_normalise_version(text, normal, suffix):
    assert rules.normalise_version(text) == (normal, suffix)


def test_versions_compare_numerically_not_as_strings():
    assert rules.parse_version('v1.34.10') > rules.parse_version('v1.34.9')     # '1.34.10' < '1.34.9' as strings
    assert rules.parse_version('v26.10.0') > rules.parse_version('v26.7.0')
    assert rules.parse_version('v1.36.0-rc.1') < rules.parse_version('1.36.0')
    assert rules.parse_version('1.34') == rules.parse_version('1.34.0')
    with pytest.raises(ValueError, match='not a version'):
        rules.parse_version('latest')


def test_versions_need_packaging(monkeypatch):
    """Without packaging the comparison says what is missing (the modules turn it into missing_required_lib)."""
    monkeypatch.setattr(rules, 'HAS_PACKAGING', False)
    monkeypatch.setattr(rules, 'PACKAGING_IMPORT_ERROR', ImportError('No module named packaging'))
    with pytest.raises(ImportError, match='packaging is required to compare versions: No module named packaging'):
        rules.parse_version('1.34.1')


@pytest.mark.parametrize('text, clauses', [
    ('>= v26.7.0', [('>=', 'v26.7.0')]), ('>= 1.34.1, < 1.36.0', [('>=', '1.34.1'), ('<', '1.36.0')]),
    ('>= 1.34.1 < 1.36.0', [('>=', '1.34.1'), ('<', '1.36.0')]),  # AICR's range form
    ('0.5.1', [('==', '0.5.1')]), ('=0.5.1', [('==', '0.5.1')]), ('!= 0.4.1', [('!=', '0.4.1')]),
])
def test_parse_constraint(text, clauses):
    assert rules.parse_constraint(text) == clauses


@pytest.mark.parametrize('text', ['', '>=', '>= banana', 'about 1.34', '>= 1.34 or 1.35', '=> 1.2',
                                  '>= 1.34.1 or later', '< 1.36.0 !', ','])
def test_parse_constraint_rejects(text):
    with pytest.raises(ValueError):
        rules.parse_constraint(text)


def test_parse_constraint_names_what_it_cannot_read():
    with pytest.raises(ValueError, match="cannot read 'or later' in constraint '>= 1.34.1 or later'"):
        rules.parse_constraint('>= 1.34.1 or later')
    with pytest.raises(ValueError, match="cannot read ',' in constraint ','"):      # nothing but a separator
        rules.parse_constraint(',')


@pytest.mark.parametrize('version, constraint, ok', [
    ('v26.7.0', '>= v26.7.0', True), ('v26.3.1', '>= v26.7.0', False), ('v26.10.0', '>= v26.7.0', True),
    ('v1.34.1+rke2r1', '>= 1.34.1, < 1.36.0', True), ('v1.35.9+rke2r1', '>= 1.34.1, < 1.36.0', True),
    ('v1.36.0+rke2r1', '>= 1.34.1, < 1.36.0', False), ('v1.34.0+rke2r1', '>= 1.34.1, < 1.36.0', False),
    ('0.4.1', '!= 0.4.1', False), ('0.4.2', '!= 0.4.1', True), ('0.5.1', '== 0.5.1', True), ('v0.5.1', '0.5.1', True),
    ('0.5.2', '== 0.5.1', False), ('0.5.0', '=0.5.1', False),
    # each operator at its bound and on both sides of it
    ('v1.35.0', '<= 1.35.0', True), ('v1.34.9', '<= 1.35.0', True), ('v1.35.1', '<= 1.35.0', False),
    ('v1.34.1', '> 1.34.0', True), ('v1.34.0', '> 1.34.0', False), ('v1.33.9', '> 1.34.0', False),
    ('v1.34.0', '>= 1.34.0', True), ('v1.33.9', '>= 1.34.0', False), ('v1.35.9', '< 1.36.0', True),
    ('v1.36.0', '< 1.36.0', False),
])
def test_check_constraint(version, constraint, ok):
    assert rules.check_constraint(version, constraint)[0] is ok


def test_check_constraint_names_failed_clause():
    assert rules.check_constraint('v1.36.2', '>= 1.34.1, < 1.36.0') == (False, ['< 1.36.0'])


# ---- server-version windows ----------------------------------------------------------------------

@pytest.mark.parametrize('recipe, version, status', [
    ('gb200-nvke-ubuntu-training', 'v1.34.0', 'passed'), ('gb200-nvke-ubuntu-training-kubeflow', 'v1.33.7', 'failed'),
    ('gb200-nvke-ubuntu-training', 'v1.20.15', 'failed'), ('vr200-rke2-ubuntu-training', 'v1.34.0+rke2r1', 'failed'),
    ('vr200-rke2-ubuntu-training', 'v1.34.1+rke2r1', 'passed'),
    ('vr200-rke2-ubuntu-training', 'v1.36.1+rke2r1', 'passed'),
    ('vr200-rke2-ubuntu-inference', 'v1.35.4+rke2r1', 'passed'),
    ('vr200-rke2-ubuntu-inference', 'v1.36.0+rke2r1', 'failed'),
    ('vr200-rke2-ubuntu-inference-dynamo', 'v1.36.0-rc.2+rke2r1', 'passed'),
    # every intent at the bounds of its window (the upper bound of the inference presets included)
    ('gb200-nvke-ubuntu-training-kubeflow', 'v1.34.0', 'passed'), ('gb200-nvke-ubuntu-training', 'v1.36.2', 'passed'),
    ('vr200-rke2-ubuntu-training', 'v1.34.0', 'failed'), ('vr200-rke2-ubuntu-inference', 'v1.34.0+rke2r1', 'failed'),
    ('vr200-rke2-ubuntu-inference', 'v1.34.1+rke2r1', 'passed'),
    ('vr200-rke2-ubuntu-inference', 'v1.35.99+rke2r1', 'passed'),
    ('vr200-rke2-ubuntu-inference-dynamo', 'v1.34.0+rke2r1', 'failed'),
    ('vr200-rke2-ubuntu-inference-dynamo', 'v1.34.1+rke2r1', 'passed'),
    ('vr200-rke2-ubuntu-inference-dynamo', 'v1.35.99+rke2r1', 'passed'),
    ('vr200-rke2-ubuntu-inference-dynamo', 'v1.36.0+rke2r1', 'failed'),
])
def test_server_windows(recipe, version, status):
    assert rules.check_server_version(recipe, version)['status'] == status


def test_inference_window_says_why():
    result = rules.check_server_version('vr200-rke2-ubuntu-inference', 'v1.36.0+rke2r1')
    assert 'fails < 1.36.0' in result['message'] and 'Traefik' in result['message']
    assert 'Gateway API CRDs' in result['message'] and result['data']['expected'] == '>= 1.34.1, < 1.36.0'
    with pytest.raises(ValueError, match='unknown recipe'):
        rules.check_server_version('h100-eks-training', 'v1.34.0')


# ---- service --------------------------------------------------------------------------------------

@pytest.mark.parametrize('provider_id, service', [
    ('nico://rack-a/gb200-tray-03', 'nvke'), ('aws:///us-east-1a/i-0abc123', 'eks'),
    ('gce://project/us-central1-a/gke-node-1', 'gke'),
    ('azure:///subscriptions/x/resourceGroups/y/providers/Microsoft.Compute/virtualMachines/z', 'aks'),
    ('oci://ocid1.instance.oc1.phx.abc', 'oke'), ('rke2://vr200-tray-01', 'rke2'), ('ocid1.instance.oc1', None),
    ('', None), (None, None), ('openstack:///abc', None),
])
def test_service_from_provider_id(provider_id, service):
    assert rules.service_from_provider_id(provider_id) == service


def test_detect_service_rke2_without_provider_id():
    nodes = [node('vr200-tray-01', labels={'node.kubernetes.io/instance-type': 'rke2'}), node('cp-1')]
    assert rules.detect_service(nodes)[0] == 'rke2'
    nodes = [node('cp-1', annotations={'rke2.io/node-args': '["server"]'})]
    assert rules.detect_service(nodes)[0] == 'rke2'
    assert rules.detect_service([node('a')], 'v1.34.1+rke2r1') == ('rke2', ['server version v1.34.1+rke2r1'])
    assert rules.detect_service([node('a')], 'v1.20.15')[0] is None


def test_check_service():
    nvke = [node('gb-1', provider_id='nico://r1/gb-1'), node('gb-2', provider_id='nico://r1/gb-2')]
    assert rules.check_service('gb200-nvke-ubuntu-training', nvke)['status'] == 'passed'
    result = rules.check_service('vr200-rke2-ubuntu-training', nvke)
    assert result['status'] == 'failed' and result['data']['found'] == 'nvke' and result['data']['expected'] == 'rke2'
    assert 'nico:// on gb-1, gb-2' in result['message']
    mixed = nvke + [node('x', provider_id='aws:///a/i-1')]
    result = rules.check_service('gb200-nvke-ubuntu-training', mixed)
    assert result['status'] == 'failed' and 'several services: eks, nvke' in result['message']
    result = rules.check_service('gb200-nvke-ubuntu-training', [node('plain')], 'v1.20.15')
    assert result['status'] == 'failed' and 'an unknown service' in result['message']


# ---- control-plane GPU labels ---------------------------------------------------------------------

def test_control_plane_gpu_labels():
    nodes = [
        node('cp-1', labels={'node-role.kubernetes.io/control-plane': '', 'nvidia.com/gpu.present': 'true',
                             'feature.node.kubernetes.io/pci-15b3.present': 'true'}),
        node('cp-2', labels={'node-role.kubernetes.io/control-plane': '', 'nvidia.com/gpu.present': 'false'}),
        node('cp-3', taints=[{'key': 'node-role.kubernetes.io/control-plane', 'effect': 'NoSchedule'}],
             labels={'nvidia.com/gpu.deploy.driver': 'true'}),
        node('cp-4', labels={'node-role.kubernetes.io/master': 'true', 'nvidia.com/gpu.present': 'true',
                             'nvidia.com/gpu.deploy.operands': 'false'}),
        node('gpu-1', labels={'nvidia.com/gpu.present': 'true'}),
    ]
    found = rules.control_plane_gpu_nodes(nodes)
    assert [item['name'] for item in found] == ['cp-1', 'cp-3', 'cp-4']
    assert found[0]['labels'] == ['feature.node.kubernetes.io/pci-15b3.present', 'nvidia.com/gpu.present']
    assert [item['excluded'] for item in found] == [False, False, True]
    result = rules.check_control_plane_gpu(nodes)
    assert result['status'] == 'warning'
    assert 'cp-1 (feature.node.kubernetes.io/pci-15b3.present, nvidia.com/gpu.present)' in result['message']
    assert 'cp-3 (nvidia.com/gpu.deploy.driver)' in result['message'] and 'cp-4' not in result['message']
    assert 'nvidia.com/gpu.deploy.operands=false' in result['fix']
    assert rules.check_control_plane_gpu(nodes[3:])['status'] == 'passed'
    assert rules.check_control_plane_gpu([nodes[1], nodes[4]])['message'] == 'no control-plane node carries GPU/NIC labels'
    # a worker listed first does not end the search (the API lists nodes by name: gpu-* before the control plane)
    assert [item['name'] for item in rules.control_plane_gpu_nodes([nodes[4], nodes[0]])] == ['cp-1']


# ---- asap2_vf pod cap -----------------------------------------------------------------------------

def test_asap2_pod_budget_arithmetic():
    assert rules.asap2_pod_budget(20, 8) == (28, False)        # exactly at the cap is fine
    assert rules.asap2_pod_budget(21, 8) == (29, True)
    assert rules.asap2_pod_budget(0, 29) == (29, True)
    assert rules.asap2_pod_budget(10, 5, cap=14) == (15, True)


def test_check_asap2():
    nodes = [node('gb-1', allocatable={'nvidia.com/asap2_vf': '16'}),
             node('gb-2', allocatable={'nvidia.com/asap2_vf': '16'}),
             node('gb-3', allocatable={'nvidia.com/asap2_vf': '0'}),
             node('cpu-1')]
    result = rules.check_asap2(nodes, {'gb-1': 12, 'gb-2': 19, 'cpu-1': 40}, 9)
    assert result['status'] == 'passed'                              # 19 + 9 = 28: at the cap, not over
    assert [item['name'] for item in result['data']['nodes']] == ['gb-1', 'gb-2']
    assert [item['total'] for item in result['data']['nodes']] == [21, 28]
    result = rules.check_asap2(nodes, {'gb-1': 12, 'gb-2': 20}, 9)
    assert result['status'] == 'warning' and 'gb-2 (20 pods now + 9 from the recipe = 29)' in result['message']
    assert 'gb-1' not in result['message'].split('exceed it on')[1]
    assert rules.check_asap2(nodes[2:], {}, 40)['message'] == 'no node advertises nvidia.com/asap2_vf'
    # a node without asap2 VFs listed first does not end the check; a node that runs no pod yet counts 0 pods
    result = rules.check_asap2([nodes[3], nodes[0]], {'cpu-1': 40}, 28)
    assert result['status'] == 'passed' and result['data']['nodes'] == [
        dict(name='gb-1', pods=0, added=28, total=28, cap=28, over=False)]
    assert rules.check_asap2([nodes[3], nodes[0]], {}, 29)['status'] == 'warning'


# ---- DRA driver -----------------------------------------------------------------------------------

def test_dra_rules():
    assert rules.dra_driver_rules('0.4.1', 'vr200', 'rke2')[0][0] == 'failed'
    assert 'NVML architecture' in rules.dra_driver_rules('v0.4.1', 'vr200', 'rke2')[0][1]
    assert rules.dra_driver_rules('0.4.1', 'gb200', 'rke2') == []
    assert rules.dra_driver_rules('0.5.0', 'vr200', 'rke2') == []
    flagged = rules.dra_driver_rules('0.5.0', 'vr200', 'rke2', ['NodeRestriction', 'OwnerReferencesPermissionEnforcement'])
    assert flagged[0][0] == 'warning' and 'OwnerReferencesPermissionEnforcement' in flagged[0][1]
    nvke = rules.dra_driver_rules('0.5.0', 'gb200', 'nvke')
    assert nvke[0][0] == 'failed' and 'needs 0.5.1 or later' in nvke[0][1]
    assert rules.dra_driver_rules('0.4.0', 'gb200', 'nvke')[0][0] == 'failed'
    assert rules.dra_driver_rules('0.5.1', 'gb200', 'nvke', ['OwnerReferencesPermissionEnforcement']) == []
    assert rules.dra_driver_rules('0.5.10', 'vr200', 'nvke') == []


def test_admission_plugins_from_args():
    args = ['kube-apiserver', '--enable-admission-plugins=NodeRestriction,OwnerReferencesPermissionEnforcement',
            '--etcd-servers=https://127.0.0.1:2379']
    assert rules.admission_plugins_from_args(args) == ['NodeRestriction', 'OwnerReferencesPermissionEnforcement']
    assert rules.admission_plugins_from_args(['--enable-admission-plugins', 'A, B']) == ['A', 'B']
    assert rules.admission_plugins_from_args(['--secure-port=6443']) == []
    # the flag and its value as two items after other arguments; the flag last, without a value
    args = ['kube-apiserver', '--secure-port=6443', '--enable-admission-plugins', 'NodeRestriction']
    assert rules.admission_plugins_from_args(args) == ['NodeRestriction']
    assert rules.admission_plugins_from_args(['kube-apiserver', '--enable-admission-plugins']) == []


# ---- component versions -----------------------------------------------------------------------------

def workload(labels=None, annotations=None, images=(('main', 'nvcr.io/nvidia/gpu-operator:v26.7.0'),), template_labels=None):
    return dict(metadata=dict(name='w', labels=labels or {}, annotations=annotations or {}),
                spec=dict(template=dict(metadata=dict(labels=template_labels or {}),
                                        spec=dict(containers=[dict(name=n, image=i) for n, i in images]))))


@pytest.mark.parametrize('image, tag', [
    ('nvcr.io/nvidia/gpu-operator:v26.7.0', 'v26.7.0'),
    ('registry.local:5000/nvidia/k8s-dra-driver-gpu:v0.5.0@sha256:abcd', 'v0.5.0'),
    ('registry.local:5000/nvidia/driver', None), ('nvcr.io/nvidia/driver@sha256:abcd', None), ('', None),
])
def test_image_tag(image, tag):
    assert rules.image_tag(image) == tag


def test_workload_version_order():
    both = workload(labels={'app.kubernetes.io/version': 'v26.7.0'}, images=(('main', 'x/op:v26.3.1'),))
    assert rules.workload_version(both) == ('v26.7.0', 'label app.kubernetes.io/version')
    chart = workload(labels={'helm.sh/chart': 'nvidia-dra-driver-gpu-0.5.0'}, images=(('main', 'x/d:latest'),))
    assert rules.workload_version(chart)[0] == '0.5.0'
    assert rules.workload_version(workload(template_labels={'app.kubernetes.io/version': '1.2.3'}))[0] == '1.2.3'
    image = workload(images=(('init', 'busybox:1.36'), ('plugin', 'x/dra:v0.4.1')))
    assert rules.workload_version(image) == ('1.36', 'image tag of container init (busybox:1.36)')
    assert rules.workload_version(image, 'plugin')[0] == 'v0.4.1'
    assert rules.workload_version(image, 'nope') == (None, 'no container nope (containers: init, plugin)')
    annotated = workload(annotations={'nvidia.com/version': '0.5.1'}, images=(('main', 'x/d:latest'),))
    assert rules.workload_version(annotated) == ('0.5.1', 'annotation nvidia.com/version')
    assert rules.workload_version(workload(images=(('main', 'x/d:latest'),)))[0] is None
