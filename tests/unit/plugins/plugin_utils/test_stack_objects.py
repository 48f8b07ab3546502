# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the chart stack applies and writes, exactly: every manifest object of the catalog as the guides and AICR
give it (a privileged flag, a budget of one node, a selector that misses the control plane - each changes what runs on
a rack), the bundle's helmfile releases and its README per format. The shapes are written here from the sources
named at each builder (AICR v1.0.0 manifests, the NVKE GB200 guide), not copied from the code."""

import pytest
import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import (bundle, bundle_files, manifests, registry,
                                                                       stack_plan)
import test_stack_plan

SITE = dict(test_stack_plan.SITE, use_nodewright=True)       # the roles' defaults, the GB200 rails and their PFs


def comps(recipe, **site):
    return dict((c['name'], c) for c in stack_plan.plan(dict(SITE, recipe=recipe, **site))['components'])


# --- the manifests, object by object ------------------------------------------------------------------------------

def test_dranet_runs_privileged_on_the_host_network_of_gpu_nodes_only():
    objs = comps('vr200-rke2-ubuntu-training')['dranet']['objects']['dranet.yaml']
    assert [(o['kind'], o['metadata']['name'], o['metadata'].get('namespace')) for o in objs] == [
        ('ServiceAccount', 'dranet', 'kube-system'), ('ClusterRole', 'dranet', None),
        ('ClusterRoleBinding', 'dranet', None), ('DeviceClass', 'mlnx-cx9', None), ('DaemonSet', 'dranet', 'kube-system')]
    role = objs[1]['rules']
    assert role == [
        {'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['get', 'list', 'watch']},
        {'apiGroups': ['resource.k8s.io'], 'resources': ['resourceslices'],
         'verbs': ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']},
        {'apiGroups': ['resource.k8s.io'], 'resources': ['resourceclaims', 'deviceclasses'],
         'verbs': ['get', 'list', 'watch']}]
    assert objs[2]['subjects'] == [{'kind': 'ServiceAccount', 'name': 'dranet', 'namespace': 'kube-system'}]
    assert objs[3]['spec'] == {'selectors': [{'cel': {'expression': 'device.driver == "dra.net"'}}]}
    ds = objs[4]
    assert ds['metadata']['labels'] == ds['spec']['selector']['matchLabels'] == \
        ds['spec']['template']['metadata']['labels'] == {'app.kubernetes.io/name': 'dranet'}
    pod = ds['spec']['template']['spec']
    assert (pod['serviceAccountName'], pod['hostNetwork'], pod['nodeSelector'], pod['tolerations']) == (
        'dranet', True, {'nvidia.com/gpu.present': 'true'}, [{'operator': 'Exists'}])
    container = pod['containers'][0]
    assert container['securityContext'] == {'privileged': True}
    assert container['args'] == ['/dranet', '--v=4',
                                 '--filter=attributes["dra.net/pciDevice"].StringValue == "CX9 Family [ConnectX-9]"']
    assert container['image'].startswith('registry.k8s.io/networking/dranet:stable@sha256:3248d8a5')
    paths = {'plugins-registry': '/var/lib/kubelet/plugins_registry', 'plugins': '/var/lib/kubelet/plugins',
             'nri-plugin': '/var/run/nri'}
    assert container['volumeMounts'] == [{'name': n, 'mountPath': p} for n, p in paths.items()]
    assert pod['volumes'] == [{'name': n, 'hostPath': {'path': p}} for n, p in paths.items()]


def test_the_nvke_objects_of_the_guide():
    nvke = comps('gb200-nvke-ubuntu-training')
    assert nvke['gpu-operator']['objects']['kernel-module-params.yaml'] == [
        {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'kernel-module-params', 'namespace': 'gpu-operator'},
         'data': {'nvidia.conf': 'NVreg_GrdmaPciTopoCheckOverride=1\n'}}]
    net = nvke['network-operator']['objects']
    assert net['maintenance-operator-config.yaml'] == [
        {'apiVersion': 'maintenance.nvidia.com/v1alpha1', 'kind': 'MaintenanceOperatorConfig',
         'metadata': {'name': 'default', 'namespace': 'nvidia-network-operator'},
         'spec': {'maxParallelOperations': 1, 'maxUnavailable': 1}}]
    operand = {'repository': 'nvcr.io/nvidia/mellanox', 'version': 'network-operator-v26.4.1'}
    assert net['nic-cluster-policy.yaml'] == [
        {'apiVersion': 'mellanox.com/v1alpha1', 'kind': 'NicClusterPolicy', 'metadata': {'name': 'nic-cluster-policy'},
         'spec': {'nodeAffinity': {'requiredDuringSchedulingIgnoredDuringExecution': {'nodeSelectorTerms': [
                  {'matchExpressions': [{'key': 'feature.node.kubernetes.io/pci-15b3.present', 'operator': 'In',
                                         'values': ['true']}]}]}},
                  'nvIpam': dict(operand, image='nvidia-k8s-ipam', enableWebhook=False),
                  'secondaryNetwork': {'multus': dict(operand, image='multus-cni'),
                                       'cniPlugins': dict(operand, image='plugins')}}}]
    sriov = nvke['sriov-ib-networks']['objects']
    selector = {'nodeSelectorTerms': [{'matchExpressions': [
        {'key': 'feature.node.kubernetes.io/rdma.available', 'operator': 'In', 'values': ['true']}]}]}
    assert sriov['ippools.yaml'][1] == {
        'apiVersion': 'nv-ipam.nvidia.com/v1alpha1', 'kind': 'IPPool',
        'metadata': {'name': 'sriov-ib-rail-1', 'namespace': 'nvidia-network-operator'},
        'spec': {'subnet': '10.255.4.0/22', 'perNodeBlockSize': 50, 'nodeSelector': selector}}
    assert sriov['sriov-node-policies.yaml'][2] == {
        'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovNetworkNodePolicy',
        'metadata': {'name': 'sriov-ib-rail-2', 'namespace': 'nvidia-network-operator'},
        'spec': {'resourceName': 'sriov_resource_rail_2', 'linkType': 'IB', 'isRdma': True, 'deviceType': 'netdevice',
                 'numVfs': 16, 'nodeSelector': {'feature.node.kubernetes.io/rdma.available': 'true'},
                 'nicSelector': {'vendor': '15b3', 'rootDevices': ['0010:03:00.0']}}}
    assert sriov['sriov-ib-networks.yaml'][3] == {
        'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovIBNetwork',
        'metadata': {'name': 'sriov-network-rail-3', 'namespace': 'nvidia-network-operator'},
        'spec': {'resourceName': 'sriov_resource_rail_3', 'networkNamespace': 'default', 'linkState': 'enable',
                 'ipam': '{"type": "nv-ipam", "poolName": "sriov-ib-rail-3"}'}}


def test_a_node_selector_of_several_labels_is_one_term_of_all_of_them():
    site = manifests.Site([{'rail': 0, 'name': 'p0', 'subnet': '10.0.0.0/24', 'per_node_block_size': 8}])
    comp = {'namespace': 'n', 'values': {'node_selector': {'b': '2', 'a': '1'}}}
    assert manifests.ippools(comp, site)[0]['spec']['nodeSelector'] == {'nodeSelectorTerms': [{'matchExpressions': [
        {'key': 'a', 'operator': 'In', 'values': ['1']}, {'key': 'b', 'operator': 'In', 'values': ['2']}]}]}


def test_the_nodewright_crs_reboot_once_per_node_one_node_at_a_time():
    tuning = comps('vr200-rke2-ubuntu-training')['nodewright-customizations']['objects']['tuning.yaml'][0]
    spec = tuning['spec']
    assert (tuning['metadata'], spec['runtimeRequired'], spec['autoTaintNewNodes'], spec['interruptionBudget'],
            spec['nodeSelectors'], spec['additionalTolerations']) == (
        {'name': 'tuning'}, True, True, {'count': 1}, {'matchLabels': {'nvidia.com/gpu.present': 'true'}},
        [{'operator': 'Exists'}])
    tuned = spec['packages']['nvidia-tuned']
    assert tuned == {'image': 'ghcr.io/nvidia/nodewright-packages/nvidia-tuned', 'version': '0.10.0',
                     'interrupt': {'type': 'reboot'},
                     'configInterrupts': {'accelerator': {'type': 'reboot'}, 'intent': {'type': 'reboot'},
                                          'service': {'type': 'reboot'}},
                     'env': [{'name': 'INTERRUPT', 'value': 'true'}],
                     'configMap': {'service': 'rke2', 'accelerator': 'vr200', 'intent': 'multiNodeTraining'}}
    netns = spec['packages']['rdma-netns-exclusive']
    assert (netns['image'], netns['version'], netns['interrupt']) == (
        'ghcr.io/nvidia/skyhook-packages/shellscript', '1.1.1', {'type': 'reboot'})
    assert netns['configMap']['apply.sh'] == ('#!/bin/bash\nset -euo pipefail\necho "options ib_core netns_mode=0" > '
                                              '/etc/modprobe.d/dranet-rdma-netns-exclusive.conf\n')
    modules = comps('gb200-nvke-ubuntu-training')['rdma-modules']['objects']['rdma-modules.yaml'][0]
    spec = modules['spec']
    assert (modules['metadata'], spec['runtimeRequired'], spec['autoTaintNewNodes'], spec['interruptionBudget']) == (
        {'name': 'rdma-modules'}, True, True, {'count': 1})
    assert spec['nodeSelectors'] == {'matchLabels': {'feature.node.kubernetes.io/pci-15b3.present': 'true'},
                                     'matchExpressions': [{'key': 'node-role.kubernetes.io/control-plane',
                                                           'operator': 'DoesNotExist'}]}
    package = spec['packages']['rdma-modules']
    assert 'interrupt' not in package and package['version'] == '1.1.1'
    assert package['configMap']['apply_check.sh'] == (
        '#!/bin/bash\nfor m in rdma_ucm ib_umad ib_ipoib; do test -d "/sys/module/$m" || exit 1; done\n')
    assert 'modprobe -a rdma_ucm ib_umad ib_ipoib\n' in package['configMap']['apply.sh']
    off = comps('gb200-nvke-ubuntu-training', overrides={'rdma-modules': {'values': {'auto_taint_new_nodes': False}}})
    assert off['rdma-modules']['objects']['rdma-modules.yaml'][0]['spec']['autoTaintNewNodes'] is False


def test_the_inference_gateway_listens_on_80_for_routes_of_every_namespace():
    gateway = comps('vr200-rke2-ubuntu-inference')['agentgateway']['objects']['inference-gateway.yaml']
    assert gateway == [{'apiVersion': 'gateway.networking.k8s.io/v1', 'kind': 'Gateway',
                        'metadata': {'name': 'inference-gateway', 'namespace': 'agentgateway-system'},
                        'spec': {'gatewayClassName': 'agentgateway', 'listeners': [
                            {'name': 'http', 'protocol': 'HTTP', 'port': 80,
                             'allowedRoutes': {'namespaces': {'from': 'All'}}}]}}]


# --- the planner's defaults and branches ----------------------------------------------------------------------------

def test_the_defaults_leave_nodewright_out_install_in_tiers_and_cut_blocks_of_50():
    plain = stack_plan.plan(dict(SITE, recipe='gb200-nvke-ubuntu-training', use_nodewright=None, serial=None,
                                 ippool_per_node_block_size=None))
    names = [c['name'] for c in plain['components']]
    assert 'rdma-modules' not in names and 'nodewright-operator' not in names
    assert len(plain['tiers']) < len(names)
    pools = list(plain['components'][names.index('sriov-ib-networks')]['objects']['ippools.yaml'])
    assert {p['spec']['perNodeBlockSize'] for p in pools} == {50}
    serial = stack_plan.plan(dict(SITE, recipe='gb200-nvke-ubuntu-training', serial=True))
    assert serial['tiers'] == [[c['name']] for c in serial['components']]
    assert [c['tier'] for c in serial['components']] == list(range(len(serial['components'])))


def test_a_site_values_file_must_be_read_and_a_site_template_lists_pools_only_with_rails():
    site = dict(SITE, recipe='mine', rails=[], extra_catalog={'app': {
        'kind': 'helm', 'chart': 'app', 'repository': 'https://c.example', 'version': '1.0.0', 'namespace': 'a',
        'values_files': ['/site/app.yaml'], 'manifests': ['/site/app.yaml.j2', '/site/two.yaml.j2']}},
        extra_recipes={'mine': {'components': {'app': {}}}})
    with pytest.raises(stack_plan.StackError, match=r'^values file /site/app.yaml \(a site file\) was not read$'):
        stack_plan.plan(site, render_template=lambda path, variables: [])
    seen = []

    def render(path, variables):
        seen.append((path, variables['stack_ippools']))
        return [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': path.rsplit('/', 1)[1][:3]}}]
    result = stack_plan.plan(site, files={'/site/app.yaml': {'x': 1}}, render_template=render)
    assert seen == [('/site/app.yaml.j2', []), ('/site/two.yaml.j2', [])]
    assert result['components'][0]['values'] == {'x': 1}
    assert sorted(result['components'][0]['objects']) == ['app.yaml', 'two.yaml']
    with pytest.raises(stack_plan.StackError, match='needs the stack_plan action to render it'):
        stack_plan.plan(site, files={'/site/app.yaml': {}})


def test_two_policies_of_a_site_template_that_select_the_same_pfs_stop_the_plan():
    twin = {'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovNetworkNodePolicy',
            'spec': {'nicSelector': {'vendor': '15b3', 'deviceID': '1021'}, 'nodeSelector': {}}}

    def render(path, variables):
        return [dict(twin, metadata={'name': 'a'}), dict(twin, metadata={'name': 'b'})]
    site = dict(SITE, recipe='mine', extra_catalog={'m': {'kind': 'manifests', 'version': '1.0.0', 'namespace': 'n',
                                                          'manifests': ['/site/p.yaml.j2']}},
                extra_recipes={'mine': {'components': {'m': {}}}})
    with pytest.raises(stack_plan.StackError, match=r'^SriovNetworkNodePolicies a and b select the same PFs \(nicSelector '
                                                    r'\{"deviceID": "1021", "vendor": "15b3"\}\)'):
        stack_plan.plan(site, render_template=render)


def test_an_abstract_site_recipe_is_not_offered():
    with pytest.raises(stack_plan.StackError) as info:
        stack_plan.plan(dict(SITE, recipe='nope', extra_recipes={'base': {'abstract': True, 'components': {}},
                                                                 'leaf': {'base': 'base', 'components': {}}}))
    assert str(info.value).endswith('or a site recipe (leaf)')


def test_the_registry_files_must_hold_their_mapping(tmp_path):
    bad = tmp_path / 'x.yml'
    bad.write_text('recipes: []\naliases: {}\ncomponents: []\n')
    with pytest.raises(registry.RegistryError, match=r'x.yml: no mapping "recipes"$'):
        registry.recipes(str(bad))
    with pytest.raises(registry.RegistryError, match=r'x.yml: no mapping "components"$'):
        registry.catalog(str(bad))
    with pytest.raises(registry.RegistryError, match='cannot read'):
        registry.recipes(str(tmp_path / 'missing.yml'))
    assert registry.render({'t': '{{ stack_registries.a }}\n'}, {'stack_registries': {'a': 'x'}}) == {'t': 'x\n'}


# --- helmfile -----------------------------------------------------------------------------------------------------

def _helm(name, tier, deps=(), files=(), phase='post', wait=True):
    return {'name': name, 'kind': 'helm', 'chart': name, 'repository': 'https://c.example', 'version': '1.0.0',
            'namespace': 'ns', 'tier': tier, 'depends_on': list(deps), 'files': list(files),
            'manifests_phase': phase, 'wait': wait, 'readiness': {}, 'values': {}, 'objects': {}, 'manifest_urls': []}


def test_helmfile_chains_pre_chart_post_and_needs_the_last_release_of_the_tier_before():
    plan = {'recipe': 'r', 'digest': 'd' * 64, 'tiers': [['a', 'm'], ['b']], 'components': [
        _helm('a', 0, files=['x.yaml'], phase='pre'),
        dict(_helm('m', 0, files=['m.yaml']), kind='manifests', chart='', repository=''),
        _helm('b', 1, deps=['a'], files=['y.yaml'], phase='post', wait=False)]}
    doc = yaml.safe_load(bundle_files.helmfile(plan, {'charts': 'https://c.example'}))
    rel = [(r['name'], r['chart'], r.get('needs'), r['labels']['tier']) for r in doc['releases']]
    assert rel == [('a-pre', './components/a-pre', None, '0'), ('a', 'charts/a', ['ns/a-pre'], '0'),
                   ('m', './components/m', None, '0'),
                   ('b', 'charts/b', ['ns/a', 'ns/m'], '1'), ('b-post', './components/b-post', ['ns/b'], '1')]
    by = dict((r['name'], r) for r in doc['releases'])
    assert (by['b']['wait'], by['b']['atomic'], by['a']['wait'], by['a']['atomic']) == (False, False, True, True)
    assert by['a']['values'] == ['components/a/values.yaml'] and by['a']['version'] == '1.0.0'
    assert 'values' not in by['a-pre'] and 'version' not in by['m']
    assert doc['repositories'] == [{'name': 'charts', 'url': 'https://c.example'}]


def test_helmfile_stages_the_components_whose_crds_come_later_naming_each():
    one = {'recipe': 'r', 'digest': 'd' * 64, 'tiers': [['a']], 'components': [
        dict(_helm('a', 0), readiness={'crds_from_operator': ['x.example.io']})]}
    header = bundle_files.helmfile(one, {}).split('repositories:')[0]
    assert '# helmfile has no CRD wait: a needs CRDs an operator creates later' in header
    assert "#   helmfile -l 'name!=a' apply\n" in header and '#   helmfile -l name=a apply\n' in header
    two = dict(one, tiers=[['a', 'b']], components=one['components'] + [
        dict(_helm('b', 0), readiness={'crds_from_operator': ['x.example.io']})])
    header = bundle_files.helmfile(two, {}).split('repositories:')[0]
    assert '# helmfile has no CRD wait: a, b need CRDs' in header and "helmfile -l 'name!=a,name!=b' apply" in header
    assert header.count('kubectl wait --for=create crd/x.example.io') == 1


def test_helmfile_points_at_vendored_archives_and_local_directories():
    plan = {'recipe': 'r', 'digest': 'd' * 64, 'tiers': [['a', 'l']], 'components': [
        _helm('a', 0), dict(_helm('l', 0), repository='/srv/charts')]}
    doc = yaml.safe_load(bundle_files.helmfile(plan, {}, {'a': {'archive': 'charts/a/a-1.0.0.tgz'}}))
    by = dict((r['name'], r) for r in doc['releases'])
    assert (by['a']['chart'], 'version' in by['a']) == ('./charts/a/a-1.0.0.tgz', False)
    assert (by['l']['chart'], by['l']['version']) == ('/srv/charts/l', '1.0.0')
    assert 'repositories' not in doc


# --- the bundle's README per format ---------------------------------------------------------------------------------

def _readme(recipe, formats, vendored=None, **cfg):
    plan = stack_plan.plan(dict(SITE, recipe=recipe))
    return bundle_files.readme(plan, formats, dict({'repo_url': 'https://git.example/s.git'}, **cfg), vendored)


def test_the_readme_lists_only_the_formats_rendered():
    helmfile = _readme('vr200-rke2-ubuntu-training', ['helmfile'])
    assert '| `helmfile.yaml` | helmfile: one level per tier (`needs`) |' in helmfile
    assert 'argocd/' not in helmfile and 'flux/' not in helmfile and '## Apply with helmfile' in helmfile
    both = _readme('vr200-rke2-ubuntu-training', ['argocd', 'flux'], path='clusters/a')
    assert 'helmfile.yaml' not in both and '## Apply with helmfile' not in both
    assert '| `argocd/app-of-apps.yaml` | the parent Application `gpu-tray-vr200-rke2-ubuntu-training` (reads ' \
           '`clusters/a/argocd/apps`) |' in both
    assert '| `flux/kustomization.yaml` | the list Flux applies: `sources/`, `releases/` |' in both
    assert '| `flux/sources/*.yaml` |' in both and '  --path=./clusters/a/flux --prune=true --interval=10m' in both
    assert 'to `https://git.example/s.git` at `clusters/a/` (revision `HEAD`), then:' in both
    root = _readme('vr200-rke2-ubuntu-training', ['argocd'])
    assert 'at `(the repository root)`' in root and '(reads `argocd/apps`)' in root


def test_the_readme_of_a_vendored_bundle_says_where_every_chart_is():
    vendored = {'nfd': {'chart': 'node-feature-discovery', 'version': '0.19.0', 'source': 'https://x',
                        'archive': 'charts/nfd/n.tgz', 'chart_dir': 'charts/nfd/n'}}
    text = _readme('vr200-rke2-ubuntu-training', ['flux', 'argocd'], vendored)
    assert 'formats: flux, argocd; charts vendored' in text
    assert '| `charts/<component>/<chart>-<version>.tgz` | every pinned chart' in text
    assert '| `charts/<component>/<chart>/` | the same chart unpacked' in text
    assert '| nfd | node-feature-discovery | 0.19.0 | https://x |' in text
    assert '| `flux/sources/*.yaml` |' not in text
    plain = _readme('vr200-rke2-ubuntu-training', ['flux'])
    assert 'charts vendored' not in plain and '## Vendored charts' not in plain and '`charts/<component>' not in plain
    # no path: the repository root
    assert '`(the repository root)`, then let Flux apply `flux/`:' in plain
    assert '  --path=./flux --prune=true --interval=10m' in plain


def test_the_readme_explains_each_gate_in_the_format_that_runs_it():
    argocd = _readme('gb200-nvke-ubuntu-training', ['argocd'])
    assert ('| gpu-operator | ClusterPolicy `cluster-policy` `status.state` == `ready` | Lua health check '
            '`nvidia.com_ClusterPolicy` in `argocd-cm`') in argocd
    assert ('| sriov-ib-networks | CRDs ippools.nv-ipam.nvidia.com, sriovnetworknodepolicies.sriovnetwork.openshift.io, '
            'sriovibnetworks.sriovnetwork.openshift.io created and Established | stand-in: its wave comes after the '
            'components it depends on (ippools.nv-ipam.nvidia.com: created by an operator') in argocd
    assert 'retried (5 times, back-off from 10 s)' in argocd
    assert ('| nvidia-dra-driver-gpu | restart of the DRA kubelet plugin after a driver upgrade (AICR #973) | not '
            'expressible: after a GPU driver upgrade run `kubectl -n nvidia-dra-driver rollout restart '
            'daemonset/nvidia-dra-driver-gpu-kubelet-plugin`') in argocd
    assert ('| kai-scheduler | installed without waiting (reconciles late) | annotation `gpu-tray.cluster/wait: '
            '"false"`: Healthy once Synced |') in argocd
    flux = _readme('gb200-nvke-ubuntu-training', ['flux'])
    assert '| kai-scheduler | installed without waiting (reconciles late) | `install.disableWait` / ' \
           '`upgrade.disableWait` |' in flux
    assert '`healthCheckExprs`: the release is not Ready, and its dependants wait, until then |' in flux
    assert 'an install that finds no CRD fails and is retried (5 remediation retries)' in flux
    assert '### sriov-ib-networks exhausted its retries' in flux
    vr200 = _readme('vr200-rke2-ubuntu-training', ['flux'])
    assert '(ippools' not in vr200 and 'exhausted its retries' not in vr200
    assert 'Remove: delete the HelmReleases in reverse install order, then the sources.\n' in vr200


def test_a_recipe_without_gates_has_no_gate_table():
    plan = {'recipe': 'r', 'digest': 'd' * 64, 'tiers': [['a']], 'components': [_helm('a', 0)]}
    text = bundle_files.readme(plan, ['argocd', 'flux'], {'repo_url': 'https://g'})
    assert 'The readiness gates' not in text and '| component | gate |' not in text


# --- the rest of the planner's and the bundle's branches (mutation survivors) ---------------------------------------

def test_a_component_may_mix_built_manifests_and_site_templates():
    site = dict(SITE, recipe='mine', extra_catalog={'m': {
        'kind': 'manifests', 'version': '1.0.0', 'namespace': 'n',
        'manifests': ['kernel-module-params.yaml', '/site/x.yaml.j2']}}, extra_recipes={'mine': {'components': {'m': {}}}})
    result = stack_plan.plan(site, render_template=lambda path, variables: [
        {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x'}}])
    assert sorted(result['components'][0]['objects']) == ['kernel-module-params.yaml', 'x.yaml']


def test_helmfile_repositories_are_sorted_by_name_and_oci_ones_say_so():
    plan = {'recipe': 'r', 'digest': 'd' * 64, 'tiers': [['a', 'b']], 'components': [
        dict(_helm('a', 0), repository='oci://z.example/charts'), dict(_helm('b', 0), repository='https://a.example')]}
    doc = yaml.safe_load(bundle_files.helmfile(plan, {'alpha': 'oci://z.example/charts', 'zulu': 'https://a.example'}))
    assert doc['repositories'] == [{'name': 'alpha', 'url': 'z.example/charts', 'oci': True},
                                   {'name': 'zulu', 'url': 'https://a.example'}]
    assert all(r['createNamespace'] is True for r in doc['releases'])


@pytest.mark.parametrize('readiness, wait', [({'ready': [{'api_version': 'x/v1', 'kind': 'K', 'path': 's', 'value': 1}]},
                                              True),
                                             ({'wait_for_crds': ['k.x']}, True),
                                             ({'dra_driver_migration': True}, True),
                                             ({}, False)])
def test_any_one_gate_makes_the_gate_table(readiness, wait):
    plan = {'recipe': 'r', 'digest': 'd' * 64, 'tiers': [['a']],
            'components': [dict(_helm('a', 0, wait=wait), readiness=readiness)]}
    text = bundle_files.readme(plan, ['argocd'], {'repo_url': 'https://g'})
    assert '| component | gate | in Argo CD |' in text


def test_the_staged_helmfile_instructions_name_one_crd_as_it_and_close_their_block():
    text = _readme('gb200-nvke-ubuntu-training', ['helmfile'])
    assert ('helmfile has no CRD wait, and `sriov-ib-networks` needs ippools.nv-ipam.nvidia.com, which an operator '
            'creates only while it reconciles (no chart ships it).') in text
    assert text.split('helmfile -l name=sriov-ib-networks apply\n', 1)[1].startswith('```\n')
    two = {'recipe': 'r', 'digest': 'd' * 64, 'tiers': [['a', 'b']], 'components': [
        dict(_helm('a', 0), readiness={'crds_from_operator': ['x.io', 'y.io']}),
        dict(_helm('b', 0), readiness={'crds_from_operator': ['x.io']})]}
    text = bundle_files.readme(two, ['helmfile'], {})
    assert '`a`, `b` need x.io, y.io, which an operator creates only while it reconciles (no chart ships them).' in text


def test_files_hold_every_format_and_the_provenance_of_a_vendored_bundle():
    plan = stack_plan.plan(dict(SITE, recipe='vr200-rke2-ubuntu-training'))
    vendored = bundle.vendor_paths(plan['components'])
    provenance = bundle.provenance(plan['recipe'], plan['digest'], vendored,
                                   dict((v['archive'], 'a' * 64) for v in vendored.values()))
    files = dict((f['path'], f['content']) for f in bundle_files.files(
        plan, ['helmfile', 'argocd', 'flux'], {'repo_url': 'https://g'}, vendored, provenance))
    assert 'argocd/apps/gpu-operator.yaml' in files and 'argocd/argocd-cm-patch.yaml' in files
    assert 'flux/releases/gpu-operator.yaml' in files and 'flux/kustomization.yaml' in files
    assert files['flux/charts/dranet/templates/manifests.yaml'].startswith('{{- /* gpu_tray.cluster')   # text as is
    assert yaml.safe_load(files['argocd/apps/gpu-operator.yaml'])['kind'] == 'Application'
    assert files['provenance.yaml'].startswith(bundle_files.PROVENANCE_HEADER + '---\n')
    assert yaml.safe_load(files['provenance.yaml']) == provenance
    plain = dict((f['path'], f['content']) for f in bundle_files.files(plan, ['helmfile'], {}))
    assert not [p for p in plain if p.startswith(('argocd/', 'flux/')) or p == 'provenance.yaml']
    assert bundle_files.sha256_text('abc') == 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'


def test_a_vendored_bundle_without_its_archives_yet_writes_no_provenance():
    """check mode with charts to pull: the provenance is written only once every archive is there."""
    plan = stack_plan.plan(dict(SITE, recipe='vr200-rke2-ubuntu-training'))
    paths = [f['path'] for f in bundle_files.files(plan, ['helmfile'], {}, bundle.vendor_paths(plan['components']))]
    assert 'provenance.yaml' not in paths and 'helmfile.yaml' in paths
