# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Chart-stack data and its pure functions: DAG/tiers, version pins, values merge, IPPool math, SR-IOV rails, recipe
composition (each recipe's expected order is test data: fixtures/stack/expected_order.yml). The planner over them is
test_stack_plan.py."""

import glob
import os

import pytest
import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry, stack

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
ROLE = os.path.join(REPO, 'roles', 'stack')
EXPECTED = os.path.join(REPO, 'tests', 'unit', 'fixtures', 'stack', 'expected_order.yml')


@pytest.fixture(scope='module')
def data():
    """Catalog, recipes and values files of the registry, rendered with the role defaults (as the planner does)."""
    sources = registry.sources()
    ctx = {'stack_repositories': sources['repositories'], 'stack_registries': sources['registries']}
    catalog = registry.render(registry.catalog(), ctx)
    recipes = registry.render(registry.recipes(), ctx)
    files = dict((os.path.relpath(p, registry.VALUES_DIR),
                  registry.render(registry.values_file(os.path.relpath(p, registry.VALUES_DIR)), ctx))
                 for p in glob.glob(os.path.join(registry.VALUES_DIR, '*', '*.yaml')))
    return catalog, recipes, files


def _expected():
    with open(EXPECTED) as handle:
        return yaml.safe_load(handle)


RECIPES = ['gb200-nvke-ubuntu-training', 'gb200-nvke-ubuntu-training-kubeflow', 'vr200-rke2-ubuntu-training',
           'vr200-rke2-ubuntu-inference', 'vr200-rke2-ubuntu-inference-dynamo']


# --- DAG and tiers ---------------------------------------------------------------------------------------------

GRAPH = {'z': [], 'a': [], 'm': ['z', 'a'], 'b': ['a'], 'q': ['m', 'b']}


@pytest.mark.parametrize('graph, tiers', [
    (GRAPH, [['a', 'z'], ['b', 'm'], ['q']]),                                     # stable, sorted inside a tier
    (dict(reversed(list(GRAPH.items()))), [['a', 'z'], ['b', 'm'], ['q']]),
    ({'a': [], 'b': ['a'], 'c': ['b'], 'd': ['a', 'c']}, [['a'], ['b'], ['c'], ['d']]),  # after the deepest dependency
], ids=['sorted', 'reversed', 'deepest-dependency'])
def test_tiers_are_stable_sorted_and_after_the_deepest_dependency(graph, tiers):
    assert stack.tiers(graph) == tiers


@pytest.mark.parametrize('graph, message', [
    ({'a': ['b'], 'b': ['a']}, 'dependency cycle: a -> b -> a'),
    ({'a': ['a']}, 'dependency cycle: a -> a'),
    ({'x': [], 'a': ['c'], 'b': ['a'], 'c': ['b', 'x']}, 'dependency cycle: a -> c -> b -> a'),
    ({'a': [], 'b': ['a', 'nope']}, 'component b depends on unknown component.s. nope'),
])
def test_cycles_and_unknown_dependencies_fail_naming_them(graph, message):
    with pytest.raises(stack.StackError, match=message):
        stack.tiers(graph)


# --- versions and repositories ---------------------------------------------------------------------------------

@pytest.mark.parametrize('version', ['1.2.3', 'v26.7.1', 'v0.1.0-alpha.13', '0.19.0', '1.0.0+build.5'])
def test_pinned_versions_pass(version):
    assert stack.check_version('c', version) == version


@pytest.mark.parametrize('version', [None, '', '>=1.2.0', '^1.2.3', '~1.2', '1.2.x', '1.*', '*', 'latest', 'stable',
                                     '1.2', '1.2.3 || 1.3.0', '>= 1.0 < 2.0'])
def test_missing_or_ranged_versions_are_refused(version):
    with pytest.raises(stack.StackError, match='component c (has no version|version .* is not pinned)'):
        stack.check_version('c', version)


def test_manifest_sets_may_pin_an_image_digest_but_charts_may_not():
    digest = 'sha256:' + 'a' * 64
    assert stack.check_version('m', digest, 'manifests') == digest
    with pytest.raises(stack.StackError) as chart:
        stack.check_version('c', digest, 'helm')
    assert str(chart.value).endswith('set an exact version such as 1.2.3 or v1.2.3')
    with pytest.raises(stack.StackError) as manifests:
        stack.check_version('m', 'latest', 'manifests')
    assert str(manifests.value).endswith('such as 1.2.3 or v1.2.3 (or sha256:<digest> for a manifest set)')


@pytest.mark.parametrize('repo, ok', [('https://charts.jetstack.io/', True), ('oci://ghcr.io/nvidia', True),
                                      ('/srv/charts', True), ('http://insecure.example', False),
                                      ('charts/local', False), ('', False)])
def test_repositories(repo, ok):
    if ok:
        assert stack.check_repository('c', 'helm', repo) == repo.rstrip('/')
    else:
        with pytest.raises(stack.StackError, match='https:// or oci://'):
            stack.check_repository('c', 'helm', repo)


# --- values merge ----------------------------------------------------------------------------------------------

def test_values_merge_dicts_deeply_and_replace_lists_and_scalars():
    merged = stack.merge_values([{'a': {'b': 1, 'c': [1, 2], 'd': {'e': 1}}, 'x': 1}, None,
                                 {'a': {'c': [3], 'd': {'f': 2}}, 'x': {'now': 'a dict'}}, {'a': {'b': None}}])
    assert merged == {'a': {'b': None, 'c': [3], 'd': {'e': 1, 'f': 2}}, 'x': {'now': 'a dict'}}
    first, second = {'a': {'b': [1]}}, {'a': {'c': 2}}                      # the inputs are not mutated
    stack.merge_values([first, second])
    assert first == {'a': {'b': [1]}} and second == {'a': {'c': 2}}


def test_values_layers_apply_in_the_documented_order():
    catalog = {'c': {'kind': 'helm', 'chart': 'c', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n',
                     'values_files': ['cat.yaml'], 'values': {'order': ['catalog'], 'cat': 1, 'who': 'catalog'}}}
    recipes = {'base': {'abstract': True, 'components': {'c': {'values_files': ['rb.yaml'], 'values': {'who': 'base'}}}},
               'leaf': {'base': 'base', 'components': {'c': {'values_files': ['rl.yaml'], 'values': {'who': 'leaf'}}}}}
    files = {'cat.yaml': {'who': 'catalog-file', 'catfile': 1}, 'rb.yaml': {'who': 'base-file', 'rb': 1},
             'rl.yaml': {'who': 'leaf-file', 'rl': 1}, 'site.yaml': {'who': 'site-file', 'site': 1}}
    assert stack.values_files(catalog, recipes, 'leaf') == ['cat.yaml', 'rb.yaml', 'rl.yaml']
    res = stack.resolve(catalog, recipes, 'leaf', files=files)
    assert res['components'][0]['values'] == {'order': ['catalog'], 'cat': 1, 'catfile': 1, 'rb': 1, 'rl': 1,
                                              'who': 'leaf'}
    res = stack.resolve(catalog, recipes, 'leaf', files=files,
                        overrides={'c': {'values_files': ['site.yaml'], 'values': {'who': 'site'}}})
    assert res['components'][0]['values']['who'] == 'site' and res['components'][0]['values']['site'] == 1
    res = stack.resolve(catalog, recipes, 'leaf', files=files, overrides={'c': {'values_files': ['site.yaml']}})
    assert res['components'][0]['values']['who'] == 'site-file'
    with pytest.raises(stack.StackError, match='values file rl.yaml of component c .recipe. was not loaded'):
        stack.resolve(catalog, recipes, 'leaf', files={'cat.yaml': {}, 'rb.yaml': {}})


# --- composition, overrides, refusals ----------------------------------------------------------------------------

def _names(resolved):
    return [c['name'] for c in resolved['components']]


def _components(data, recipe, **kwargs):
    """{name: component} of the recipe as stack.resolve composes it (keyword arguments: options, overrides)."""
    catalog, recipes, files = data
    resolved = stack.resolve(catalog, recipes, recipe, files=files, **kwargs)
    return dict((c['name'], c) for c in resolved['components'])


@pytest.mark.parametrize('recipe', RECIPES)
@pytest.mark.parametrize('variant', ['default', 'nodewright'])
def test_each_recipe_resolves_to_its_expected_order(data, recipe, variant):
    catalog, recipes, files = data
    expected = _expected()[recipe][variant]
    res = stack.resolve(catalog, recipes, recipe, files=files, options={'use_nodewright': variant == 'nodewright'})
    assert res['tiers'] == expected
    assert _names(res) == [name for tier in expected for name in tier]
    for comp in res['components']:
        assert comp['tier'] == [i for i, t in enumerate(expected) if comp['name'] in t][0]
        for dep in comp['depends_on']:
            assert _names(res).index(dep) < _names(res).index(comp['name'])


def test_expected_data_covers_exactly_the_deployable_recipes(data):
    _catalog, recipes, _files = data
    assert sorted(_expected()) == sorted(RECIPES) == sorted(n for n, r in recipes.items() if not r.get('abstract'))


# AICR v1.0.0 dependencyRefs for vr200-rke2-ubuntu-training, copied by hand from the resolved recipe
# (confighub/helm-expt examples/aicr/vr200-rke2-ubuntu-training/recipe.yaml, via the reference notes)
AICR_VR200_TRAINING_DEPS = {
    'cert-manager': [], 'dranet': [], 'nfd': [], 'nodewright-operator': [],
    'nodewright-customizations': ['nodewright-operator'], 'prometheus-operator-crds': [],
    'kube-prometheus-stack': ['prometheus-operator-crds'],
    'gpu-operator': ['nfd', 'cert-manager', 'kube-prometheus-stack', 'nodewright-customizations'],
    'k8s-ephemeral-storage-metrics': ['kube-prometheus-stack', 'prometheus-operator-crds'],
    'kai-scheduler': ['gpu-operator'], 'nvidia-dra-driver-gpu': ['gpu-operator'],
    'nvsentinel': ['cert-manager', 'gpu-operator', 'prometheus-operator-crds'],
    'prometheus-adapter': ['kube-prometheus-stack'],
}
AICR_VR200_TRAINING_VERSIONS = {
    'cert-manager': 'v1.20.2', 'nfd': '0.19.0', 'nodewright-operator': 'v0.19.0', 'prometheus-operator-crds': '28.0.1',
    'kube-prometheus-stack': '84.4.0', 'gpu-operator': 'v26.7.1', 'k8s-ephemeral-storage-metrics': '1.19.2',
    'kai-scheduler': 'v0.16.9', 'nvidia-dra-driver-gpu': '0.5.0', 'nvsentinel': 'v1.25.0', 'prometheus-adapter': '5.3.0',
}


def test_vr200_training_with_nodewright_is_aicrs_bundle(data):
    comps = _components(data, 'vr200-rke2-ubuntu-training', options={'use_nodewright': True})
    assert sorted(comps) == sorted(AICR_VR200_TRAINING_DEPS)
    for name, deps in AICR_VR200_TRAINING_DEPS.items():
        assert comps[name]['depends_on'] == sorted(deps), name
    for name, version in AICR_VR200_TRAINING_VERSIONS.items():
        assert comps[name]['version'] == version, name
    assert comps['gpu-operator']['values']['driver']['enabled'] is False
    assert comps['gpu-operator']['values']['cdi'] == {'enabled': True, 'nriPluginEnabled': True}
    assert comps['nvidia-dra-driver-gpu']['values']['nvidiaDriverRoot'] == '/'
    assert comps['kube-prometheus-stack']['values']['prometheus-node-exporter']['service']['port'] == 9110


# gb200-nvke-ubuntu-training's edges (the NVKE recipe files are not public: the collection's composition,
# docs/stack.md): rdma-modules (NodeWright, when stack_use_nodewright) takes the VR200 tuning CR's place - the GPU
# Operator and the Network Operator start only after the IB modules load; without NodeWright the host roles load
# them before the stack is installed, and the edge is gone with the component
NVKE_TRAINING_DEPS = {
    'cert-manager': [], 'nfd': [], 'nodewright-operator': [], 'prometheus-operator-crds': [],
    'kube-prometheus-stack': ['prometheus-operator-crds'], 'rdma-modules': ['nodewright-operator'],
    'gpu-operator': ['nfd', 'cert-manager', 'kube-prometheus-stack', 'rdma-modules'],
    'network-operator': ['nfd', 'rdma-modules'], 'sriov-ib-networks': ['network-operator'],
    'k8s-ephemeral-storage-metrics': ['kube-prometheus-stack', 'prometheus-operator-crds'],
    'kai-scheduler': ['gpu-operator'], 'nvidia-dra-driver-gpu': ['gpu-operator'],
    'nvsentinel': ['cert-manager', 'gpu-operator', 'prometheus-operator-crds'],
    'prometheus-adapter': ['kube-prometheus-stack'],
}


@pytest.mark.parametrize('recipe', ['gb200-nvke-ubuntu-training', 'gb200-nvke-ubuntu-training-kubeflow'])
@pytest.mark.parametrize('nodewright', [True, False])
def test_nvke_components_wait_for_what_they_need(data, recipe, nodewright):
    """Each component's direct dependencies (what a Flux HelmRelease's dependsOn and the helmfile's needs carry, not
    only the tier it lands in)."""
    resolved = _components(data, recipe, options={'use_nodewright': nodewright})
    comps = dict((name, component['depends_on']) for name, component in resolved.items())
    nodewright_only = {'nodewright-operator', 'rdma-modules'}
    expected = dict((name, sorted(d for d in deps if nodewright or d not in nodewright_only))
                    for name, deps in NVKE_TRAINING_DEPS.items() if nodewright or name not in nodewright_only)
    if recipe.endswith('-kubeflow'):
        expected['kubeflow-trainer'] = ['gpu-operator', 'kube-prometheus-stack']
    assert comps == expected


VR200 = ['vr200-rke2-ubuntu-training', 'vr200-rke2-ubuntu-inference', 'vr200-rke2-ubuntu-inference-dynamo']


@pytest.mark.parametrize('recipe', RECIPES)
def test_where_the_host_holds_the_driver_the_components_look_for_it_there(data, recipe):
    """VR200 trays carry a host-installed driver (the GPU Operator's driver off): NVSentinel's labeler is told the
    driver is installed and the DRA driver looks at / for it; on NVKE the operator installs the driver, and neither
    is set so."""
    comps = _components(data, recipe)
    host_driver = comps['gpu-operator']['values']['driver']['enabled'] is False
    assert host_driver is (recipe in VR200)
    labeler = (comps['nvsentinel']['values'].get('labeler') or {}) if 'nvsentinel' in comps else {}
    assert labeler.get('assumeDriverInstalled', False) is host_driver, (recipe, labeler)
    root = comps['nvidia-dra-driver-gpu']['values']['nvidiaDriverRoot']
    assert root == ('/' if host_driver else '/run/nvidia/driver')


@pytest.mark.parametrize('recipe', VR200)
def test_the_node_exporter_moves_off_9100_with_its_service_on_rke2(data, recipe):
    """RKE2 host images may run node_exporter on 9100: the chart's port moves the container to 9110, and the
    Service's targetPort must name that open container port (the chart's values: "Must refer to an open container
    port"), or Prometheus scrapes a closed port on every VR200 node."""
    service = _components(data, recipe)['kube-prometheus-stack']['values']['prometheus-node-exporter']['service']
    assert service['port'] == service['targetPort'] == 9110


@pytest.mark.parametrize('recipe', VR200)
def test_every_vr200_recipe_with_nodewright_tunes_with_its_intent_and_inference_adds_the_gateway(data, recipe):
    """With stack_use_nodewright on, each VR200 recipe installs the NodeWright operator and one tuning CR with the
    nvidia-tuned intent of its recipe (the registry's tuned_intent)."""
    comps = _components(data, recipe, options={'use_nodewright': True})
    assert 'nodewright-operator' in comps
    expected = 'multiNodeTraining' if recipe == 'vr200-rke2-ubuntu-training' else 'inference'
    assert comps['nodewright-customizations']['values']['intent'] == data[1][recipe]['tuned_intent'] == expected
    if expected == 'inference':
        assert comps['agentgateway']['depends_on'] == ['agentgateway-crds', 'cert-manager']
    assert ('dynamo-platform' in _components(data, recipe)) is recipe.endswith('-dynamo')


def test_nvke_values_follow_the_guide(data):
    catalog, recipes, files = data
    comps = _components(data, 'gb200-nvke-ubuntu-training')
    gpu = comps['gpu-operator']
    env = dict((e['name'], e['value']) for e in gpu['values']['toolkit']['env'])
    assert env == {'RUNTIME_CONFIG_SOURCE': 'file', 'ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED': 'false'}
    assert gpu['values']['driver']['enabled'] is True
    assert gpu['values']['driver']['kernelModuleConfig'] == {'name': 'kernel-module-params'}
    assert gpu['manifests'] == ['kernel-module-params.yaml'] and gpu['manifests_phase'] == 'pre'
    net = comps['network-operator']['values']
    # the key paths network-operator 26.4.1 reads (tests/upstream holds them against the chart itself)
    assert 'sriovOperatorConfig' not in net
    assert net['sriov-network-operator']['sriovOperatorConfig'] == {'deploy': True, 'disablePlugins': ['mellanox']}
    assert net['sriov-network-operator']['operator']['externalDrainer'] == {'enabled': True}
    assert net['operator']['maintenanceOperator'] == {'useDrainControllerRequestor': True}
    assert net['maintenanceOperator']['enabled'] is True and net['sriovNetworkOperator']['enabled'] is True
    assert gpu['values']['driver']['version'] == '580.173.02' and gpu['values']['driver']['kernelModuleType'] == 'open'
    assert 'ippools.nv-ipam.nvidia.com' in comps['sriov-ib-networks']['readiness']['wait_for_crds']
    # DOCA-OFED and nvidia-peermem are absent from every value of every recipe
    for recipe in RECIPES:
        for nodewright in (False, True):
            resolved = stack.resolve(catalog, recipes, recipe, files=files, options={'use_nodewright': nodewright})
            assert stack.forbidden_values(dict((c['name'], c['values']) for c in resolved['components'])) == []


def test_overrides_change_version_repository_and_values_without_editing_the_catalog(data):
    catalog, recipes, files = data
    before = yaml.safe_dump(catalog)
    res = stack.resolve(catalog, recipes, 'vr200-rke2-ubuntu-training', files=files, overrides={
        'gpu-operator': {'version': 'v26.7.2', 'repository': 'oci://mirror.example/nvidia',
                         'values': {'driver': {'enabled': True}}},
        'kai-scheduler': {'enabled': False}})
    comps = dict((c['name'], c) for c in res['components'])
    assert comps['gpu-operator']['version'] == 'v26.7.2'
    assert comps['gpu-operator']['repository'] == 'oci://mirror.example/nvidia'
    assert comps['gpu-operator']['values']['driver']['enabled'] is True
    assert comps['gpu-operator']['values']['cdi']['nriPluginEnabled'] is True
    assert 'kai-scheduler' not in comps
    assert yaml.safe_dump(catalog) == before


@pytest.mark.parametrize('overrides, message', [
    ({'gpu-operator': {'version': '>=26.7.0'}}, r'^gpu_tray_stack_overrides\.gpu-operator\.version .>=26.7.0. is not pinned'),
    ({'gpu-operator': {'version': 'latest'}}, r"^gpu_tray_stack_overrides\.gpu-operator\.version 'latest' is not pinned: "
                                              r"ranges .*floating tags \(latest, stable\) are refused"),
    ({'gpu-operator': {'version': ''}}, r'^gpu_tray_stack_overrides\.gpu-operator\.version: component gpu-operator has '
                                        r'no version'),
    ({'dranet': {'manifest_urls': [{'url': '/m/a.yaml', 'sha256': 'a' * 64}, {'url': 'http://m/b.yaml'}]}},
     r'^gpu_tray_stack_overrides\.dranet\.manifest_urls\[1\]: component dranet: manifest URL'),
    ({'network-operator': {'version': '26.4.1'}}, 'names network-operator, which recipe vr200-rke2-ubuntu-training'),
    ({'gpu-operator': {'chart_version': '1.0.0'}}, r'gpu_tray_stack_overrides.gpu-operator: unknown field.s. chart_version'),
    ({'nfd': {'repository': 'http://plain.example'}}, 'component nfd repository .http://plain.example. must be'),
])
def test_bad_overrides_are_refused_by_name(data, overrides, message):
    catalog, recipes, files = data
    with pytest.raises(stack.StackError, match=message):
        stack.resolve(catalog, recipes, 'vr200-rke2-ubuntu-training', files=files, overrides=overrides)


def test_recipe_refusals():
    catalog = {'a': {'kind': 'helm', 'chart': 'a', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n',
                     'depends_on': ['ghost']},
               'b': {'kind': 'helm', 'chart': 'b', 'repository': 'oci://r', 'namespace': 'n'},
               'c': {'kind': 'helm', 'chart': 'c', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n',
                     'depends_on': ['d']},
               'd': {'kind': 'helm', 'chart': 'd', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n',
                     'depends_on': ['c']}}
    recipes = {'r1': {'components': {'a': {}}}, 'r2': {'components': {'b': {}}}, 'r3': {'components': {'zzz': {}}},
               'r4': {'components': {'c': {}, 'd': {}}}, 'loop1': {'base': 'loop2'}, 'loop2': {'base': 'loop1'},
               'abs': {'abstract': True, 'components': {}}, 'r5': {'components': {'c': {'bogus': 1}}}}
    cases = [('r1', 'component a depends on unknown component.s. ghost'), ('r2', 'component b has no version'),
             ('r3', 'recipe r3 lists component zzz, which the catalog does not define'),
             ('r4', 'dependency cycle: c -> d -> c'), ('loop1', 'recipe base loop'), ('nope', "unknown recipe 'nope'"),
             ('abs', 'recipe abs is a base for other recipes, not deployable'),
             ('r5', 'recipe r5, component c: unknown field.s. bogus')]
    for recipe, message in cases:
        with pytest.raises(stack.StackError, match=message):
            stack.resolve(catalog, recipes, recipe)
    # the unknown-recipe message offers only recipes that can be deployed, never the abstract base
    with pytest.raises(stack.StackError) as info:
        stack.resolve(catalog, recipes, 'nope')
    assert 'abs' not in str(info.value).split('known: ')[1].split(', ') and 'r1' in str(info.value)


def test_an_abstract_recipe_is_refused_offering_only_the_deployable_ones():
    recipes = {'base': {'abstract': True, 'components': {}}, 'leaf': {'base': 'base', 'components': {}},
               'other': {'components': {}}, 'empty': None}
    with pytest.raises(stack.StackError) as info:
        stack.resolve({}, recipes, 'base')
    assert str(info.value) == ('recipe base is a base for other recipes, not deployable; choose one of '
                               'empty, leaf, other')


def test_component_defaults_and_what_a_catalog_entry_sets_instead():
    catalog = {'chart': {'kind': 'helm', 'chart': 'c', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n'},
               'crds': {'kind': 'manifests', 'manifests': ['crds.yaml'], 'version': 'v1.0.0', 'namespace': 'n'},
               'set': {'kind': 'helm', 'chart': 's', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n',
                       'wait': False, 'timeout': '5m', 'description': 'set', 'manifests_phase': 'pre'}}
    resolved = stack.resolve(catalog, {'r': {'components': {'chart': {}, 'crds': {}, 'set': {}}}}, 'r')
    got = dict((c['name'], (c['manifests_phase'], c['wait'], c['timeout'], c['description'], c['chart']))
               for c in resolved['components'])
    assert got == {'chart': ('post', True, '10m', '', 'c'), 'crds': ('pre', True, '10m', '', ''),
                   'set': ('pre', False, '5m', 'set', 's')}
    catalog['set']['wait'] = 0
    resolved = stack.resolve(catalog, {'r': {'components': {'set': {}}}}, 'r')
    assert resolved['components'][0]['wait'] is False


def test_a_dependency_left_out_by_the_recipe_counts_as_satisfied():
    catalog = {'a': {'kind': 'helm', 'chart': 'a', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n'},
               'b': {'kind': 'helm', 'chart': 'b', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n',
                     'depends_on': ['a']}}
    res = stack.resolve(catalog, {'r': {'components': {'b': {}}}}, 'r')
    assert [(c['name'], c['tier'], c['depends_on']) for c in res['components']] == [('b', 0, [])]


# --- IPPool math -----------------------------------------------------------------------------------------------

def test_rail_pools_are_10_255_4n_0_22_or_from_another_base_and_size():
    pools = stack.rail_ippools('10.255.0.0/16', ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4'])
    assert [p['subnet'] for p in pools] == ['10.255.0.0/22', '10.255.4.0/22', '10.255.8.0/22', '10.255.12.0/22']
    assert [p['name'] for p in pools] == ['sriov-ib-rail-0', 'sriov-ib-rail-1', 'sriov-ib-rail-2', 'sriov-ib-rail-3']
    assert all(p['per_node_block_size'] == 50 for p in pools)
    assert [p['subnet'] for p in stack.rail_ippools('172.31.0.0/20', 2, 24, 100)] == ['172.31.0.0/24', '172.31.1.0/24']


def test_rail_pools_agree_with_ansible_utils_ipsubnet():
    ipsubnet = pytest.importorskip('ansible_collections.ansible.utils.plugins.filter.ipsubnet')
    fn = ipsubnet.FilterModule().filters()['ipsubnet']
    for base, prefix in (('10.255.0.0/16', 22), ('172.20.0.0/20', 24)):
        ours = [p['subnet'] for p in stack.rail_ippools(base, 4, prefix)]
        theirs = [fn(None, base, str(prefix), i) for i in range(4)]  # (jinja environment, value, query, index)
        assert ours == theirs


@pytest.mark.parametrize('base, rails, prefix, block, message', [
    ('10.255.0.0/16', 4, 15, 50, 'prefix /15 is larger than the base'),
    ('10.255.0.0/21', 4, 22, 50, 'holds only 2 /22 subnets, 4 rails need one each'),
    ('10.255.1.0/16', 4, 22, 50, 'has host bits set; use 10.255.0.0/16'),
    ('10.255.0.0/99', 4, 22, 50, 'is not a network'),
    ('10.255.0.0/16', 4, 22, 2000, 'perNodeBlockSize 2000 does not fit a /22'),
])
def test_bad_pool_input_is_refused(base, rails, prefix, block, message):
    with pytest.raises(stack.StackError, match=message):
        stack.rail_ippools(base, rails, prefix, block)


def test_a_pool_holds_the_nodes_its_blocks_allow_and_a_fleet_past_it_is_refused_with_what_would_fit():
    """The second NVKE rack (issue 54): a /22 with perNodeBlockSize 50 holds 20 nodes (1022 usable addresses), so 36
    trays are refused - naming the pool, its capacity, the tray count and the block or prefix that fits them."""
    assert stack.pool_nodes(22, 50) == 20 and stack.pool_nodes(21, 50) == 40 and stack.pool_nodes(24, 2) == 127
    assert stack.pool_nodes(64, 50, version=6) > 10 ** 9
    assert len(stack.rail_ippools('10.255.0.0/16', 4, 22, 50, nodes=20)) == 4          # exactly full is fine
    with pytest.raises(stack.StackError) as err:
        stack.rail_ippools('10.255.0.0/16', 4, 22, 50, nodes=36)
    assert str(err.value) == (
        'IPPool sriov-ib-rail-0 (10.255.0.0/22, perNodeBlockSize 50) holds 20 nodes, the inventory has 36 GPU trays: '
        'nv-ipam gives a node no rail address once the pool is out of blocks - set stack_ippool_per_node_block_size '
        '28 or stack_ippool_prefix 21')
    # what it names fits: 36 blocks of 28 in a /22, 36 of 50 in a /21
    assert stack.pool_nodes(22, 28) >= 36 and stack.pool_nodes(21, 50) >= 36
    # a base with no room for a longer prefix for four rails names only the block
    with pytest.raises(stack.StackError, match=r'set stack_ippool_per_node_block_size 28$'):
        stack.rail_ippools('10.255.0.0/20', 4, 22, 50, nodes=36)
    # no block of 2 addresses or more fits: a larger base
    with pytest.raises(stack.StackError, match=r'set a larger stack_ippool_base$'):
        stack.rail_ippools('10.255.0.0/24', 1, 24, 50, nodes=200)


# --- SR-IOV rails from the site's rail PCI addresses -----------------------------------------------------------

RAILS = ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']
PCI = {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0002:03:00.0', 'mlx5_3': '0010:03:00.0', 'mlx5_4': '0012:03:00.0'}


def test_sriov_rails_select_each_rails_own_pf():
    rails = stack.sriov_rails(RAILS, PCI, 16)
    assert rails[0] == {'rail': 0, 'device': 'mlx5_0', 'root_devices': ['0000:03:00.0'], 'num_vfs': 16}
    assert [r['root_devices'] for r in rails] == [[PCI[name]] for name in RAILS]
    assert [r['rail'] for r in rails] == [0, 1, 2, 3]
    # a list per rail for several tray models
    rails = stack.sriov_rails(['mlx5_0'], {'mlx5_0': ['0000:05:00.0', '0000:03:00.0']}, '8')
    assert rails == [{'rail': 0, 'device': 'mlx5_0', 'root_devices': ['0000:03:00.0', '0000:05:00.0'], 'num_vfs': 8}]
    assert stack.sriov_rails(RAILS, PCI, '1')[0]['num_vfs'] == 1


@pytest.mark.parametrize('rail_pci, message', [
    (PCI, r'the SR-IOV VF count must be at least 1 \(got 0; gpu_tray_num_vfs\)'),
    ({}, r'gpu_tray_rail_pci_addresses has no PCI address for rails mlx5_0, mlx5_1, mlx5_3, mlx5_4: set each'),
    (dict(PCI, mlx5_3=''), r'gpu_tray_rail_pci_addresses has no PCI address for rail mlx5_3: '),
    (dict(PCI, mlx5_3=[]), r'no PCI address for rail mlx5_3: '),
    (dict(PCI, mlx5_2='0006:01:00.0'), r'gpu_tray_rail_pci_addresses names mlx5_2, which is not a rail '
                                       r'\(rails: mlx5_0, mlx5_1, mlx5_3, mlx5_4; gpu_tray_rails\)'),
    (dict(PCI, mlx5_3=PCI['mlx5_1']), r'gives 0002:03:00.0 to rails mlx5_1 and mlx5_3: two policies would select '
                                      r'the same PF'),
    (dict(PCI, mlx5_3=['0010:03:00.0', PCI['mlx5_0']]), r'gives 0000:03:00.0 to rails mlx5_0 and mlx5_3'),
    (dict(PCI, mlx5_0='0000:03:00'), r"gpu_tray_rail_pci_addresses.mlx5_0: '0000:03:00' is not a PCI address"),
    (dict(PCI, mlx5_0='0000:0A:00.0'), r"'0000:0A:00.0' is not a PCI address as the kernel writes it"),
    (dict(PCI, mlx5_0='03:00.0'), r"'03:00.0' is not a PCI address"),
    (dict(PCI, mlx5_0='0000:03:00.8'), r"'0000:03:00.8' is not a PCI address"),
    (['0000:03:00.0'], r'gpu_tray_rail_pci_addresses must map each rail device to its PF PCI address \(got list\)'),
])
def test_sriov_rails_refuse_what_would_give_two_rails_one_selector_or_no_vf(rail_pci, message):
    with pytest.raises(stack.StackError, match=message):
        stack.sriov_rails(RAILS, rail_pci, 0 if rail_pci is PCI else 16)


# --- forbidden values ------------------------------------------------------------------------------------------

def test_forbidden_values_are_found_at_any_depth():
    found = stack.forbidden_values({
        'network-operator': {'ofedDriver': {'deploy': False}},
        'gpu-operator': {'driver': {'rdma': {'enabled': True}}, 'toolkit': {}},
        'umbrella': {'gpu-operator': {'driver': {'rdma': {'useHostMofed': True}}}},
        'clean': {'driver': {'enabled': True}, 'rdma': {'x': 1}}})
    assert found == [{'component': 'gpu-operator', 'path': 'driver.rdma'},
                     {'component': 'network-operator', 'path': 'ofedDriver'},
                     {'component': 'umbrella', 'path': 'gpu-operator.driver.rdma'}]
