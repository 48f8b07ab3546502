# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The chart-stack planner (plugin_utils/stack_plan.py) and what it builds: the registry's recipes planned with a
site's inputs, the manifests' objects (manifests.py), the bundle's files (bundle_files.py). Pure: no Ansible run."""

import hashlib
import json
import os

import pytest
import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import (bundle, bundle_files, manifests, registry, stack,
                                                                       stack_plan)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
with open(os.path.join(REPO, 'roles', 'stack', 'defaults', 'main.yml')) as _handle:
    DEFAULTS = yaml.safe_load(_handle)
RAILS = ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']
PCI = {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0002:03:00.0', 'mlx5_3': '0010:03:00.0', 'mlx5_4': '0012:03:00.0'}
SITE = {'repositories': DEFAULTS['stack_repositories'], 'registries': DEFAULTS['stack_registries'],
        'rails': RAILS, 'rail_pci': PCI}
RECIPES = ['gb200-nvke-ubuntu-training', 'gb200-nvke-ubuntu-training-kubeflow', 'vr200-rke2-ubuntu-training',
           'vr200-rke2-ubuntu-inference', 'vr200-rke2-ubuntu-inference-dynamo']


def plan(recipe, **site):
    return stack_plan.plan(dict(SITE, recipe=recipe, **site))


def comps(result):
    return dict((c['name'], c) for c in result['components'])


def objects(result, kind):
    return [o for c in result['components'] for objs in c['objects'].values() for o in objs if o['kind'] == kind]


# --- the registry ----------------------------------------------------------------------------------------------

def test_the_registry_names_the_five_recipes_of_the_guides_and_one_old_name():
    assert registry.deployable() == sorted(RECIPES)
    assert registry.aliases() == {'gb200-nvke-ubuntu-kubeflow': 'gb200-nvke-ubuntu-training-kubeflow'}


@pytest.mark.parametrize('recipe, platform, intent, tuned, window', [
    ('gb200-nvke-ubuntu-training', 'nvke-gb200', 'training', '', '>= 1.34'),
    ('gb200-nvke-ubuntu-training-kubeflow', 'nvke-gb200', 'kubeflow', '', '>= 1.34'),
    ('vr200-rke2-ubuntu-training', 'rke2-vr200', 'training', 'multiNodeTraining', '>= 1.34.1'),
    ('vr200-rke2-ubuntu-inference', 'rke2-vr200', 'inference', 'inference', '>= 1.34.1, < 1.36.0'),
    ('vr200-rke2-ubuntu-inference-dynamo', 'rke2-vr200', 'inference-dynamo', 'inference', '>= 1.34.1, < 1.36.0'),
])
def test_each_recipes_facts(recipe, platform, intent, tuned, window):
    facts = registry.facts(recipe)
    assert (facts['name'], facts['platform'], facts['intent'], facts['tuned_intent'], facts['kubernetes']['version']) \
        == (recipe, platform, intent, tuned, window)
    assert registry.for_platform(platform)[recipe] == {'tuned_intent': tuned}


def test_an_old_name_is_its_new_recipe_with_a_note_and_an_unknown_name_lists_the_known_ones():
    assert registry.canonical_name('gb200-nvke-ubuntu-kubeflow') == (
        'gb200-nvke-ubuntu-training-kubeflow',
        'recipe gb200-nvke-ubuntu-kubeflow is now called gb200-nvke-ubuntu-training-kubeflow (the AICR coordinate of '
        'the setup guide): set gpu_tray_recipe: gb200-nvke-ubuntu-training-kubeflow')
    assert registry.facts('gb200-nvke-ubuntu-kubeflow')['name'] == 'gb200-nvke-ubuntu-training-kubeflow'
    known = ', '.join(RECIPES[:2] + ['vr200-rke2-ubuntu-inference', 'vr200-rke2-ubuntu-inference-dynamo',
                                     'vr200-rke2-ubuntu-training'])
    for name, close in (('rke2-vr200-common', ''), ('gb300-nvke-ubuntu-training', 'gb200-nvke-ubuntu-training'),
                        ('vr200-rke2-ubuntu-inferense', 'vr200-rke2-ubuntu-inference'), ('', '')):
        with pytest.raises(registry.RegistryError) as info:
            registry.canonical_name(name)
        # a did-you-mean for a misspelt name; the old names (aliases) are accepted but never offered
        assert str(info.value) == 'unknown recipe %r%s: choose one of %s (gpu_tray_recipe)' % (
            name, ' (did you mean %s?)' % close if close else '', known)
        assert 'gb200-nvke-ubuntu-kubeflow' not in str(info.value)


def test_a_recipe_missing_a_fact_or_naming_an_unknown_benchmark_is_refused():
    table = {'r': {'platform': 'p', 'intent': 'i', 'tuned_intent': '', 'kubernetes': {}, 'conformance': []}}
    with pytest.raises(registry.RegistryError, match='recipe r in stack_data/recipes.yml has no benchmarks'):
        registry.facts('r', table)
    table['r']['benchmarks'] = ['nvls', 'allgather']
    with pytest.raises(registry.RegistryError, match=r'recipe r: unknown benchmark\(s\) allgather \(known: nvls, net\)'):
        registry.facts('r', table)


def test_render_fills_in_only_the_air_gap_mappings():
    context = {'stack_repositories': {'a': 'https://mirror'}, 'stack_registries': {'nvcr': 'reg.example'}}
    assert registry.render({'x': ['{{ stack_registries.nvcr }}/nvidia', 1, None, 'plain']}, context) == \
        {'x': ['reg.example/nvidia', 1, None, 'plain']}
    with pytest.raises(registry.RegistryError, match='only stack_repositories and stack_registries are known here'):
        registry.render({'x': '{{ inventory_hostname }}'}, context)
    with pytest.raises(registry.RegistryError, match='cannot render'):
        registry.render({'x': '{{ stack_registries.ghcr }}'}, context)


def test_values_files_stay_inside_the_values_folder():
    with pytest.raises(registry.RegistryError, match='is outside stack_data/values'):
        registry.values_file('../recipes.yml')
    with pytest.raises(registry.RegistryError, match='does not exist under stack_data/values'):
        registry.values_file('gpu-operator/none.yaml')


# --- every recipe plans; the digest covers what is installed ---------------------------------------------------

@pytest.mark.parametrize('recipe', RECIPES)
def test_every_recipe_plans_with_its_facts_and_a_stable_digest(recipe):
    one, two = plan(recipe), plan(recipe)
    assert one == two and one['recipe'] == recipe and one['notes'] == []
    assert one['facts'] == registry.facts(recipe)
    assert one['digest'] == stack_plan.digest(one['canonical']) and len(one['digest']) == 64
    names = [c['name'] for c in one['components']]
    assert names == [n for tier in one['tiers'] for n in tier]
    assert one['summary'].startswith('%s: %d components in %d tiers, digest %s; tier 1: '
                                     % (recipe, len(names), len(one['tiers']), one['digest']))


def test_the_digest_is_of_what_is_pinned_never_of_where_the_mirrors_sit():
    """Validate with github_raw's files in one folder, verify with the same files in another: the recipe was "changed"
    (issue 54). The digest is of the plan with every stack_repositories / stack_registries entry standing for its
    name alone: a chart repository, a folder of the upstream files or a registry moved changes nothing; the files'
    sha256 pins and the charts' versions are in it (the test below)."""
    for recipe in ('gb200-nvke-ubuntu-training', 'vr200-rke2-ubuntu-inference'):
        base = plan(recipe)
        moved = plan(recipe, repositories={'github_raw': '/srv/mirror-b/raw', 'ngc': 'https://harbor.site/chartrepo/ngc',
                                           'kai': 'oci://harbor.site/kai'},
                     registries={'nvcr': 'harbor.site/nvcr', 'ghcr': 'harbor.site/ghcr'})
        assert moved['digest'] == base['digest'] and moved['canonical'] == base['canonical']
        # the plans themselves use the mirrors: only the digest leaves them out
        assert moved['components'] != base['components']
        urls = [e['url'] for c in moved['components'] for e in c['manifest_urls']]
        fetched = 12 if 'inference' in recipe else 0
        assert all(u.startswith('file:///srv/mirror-b/raw/') for u in urls) and len(urls) == fetched, urls
        text = json.dumps(base['canonical'])
        assert 'raw.githubusercontent.com' not in text and 'helm.ngc.nvidia.com' not in text and 'nvcr.io' not in text
        assert 'https://stack-repositories.invalid/ngc' in text


def test_the_digest_changes_with_a_value_an_object_or_a_version():
    base = plan('gb200-nvke-ubuntu-training')['digest']
    assert plan('gb200-nvke-ubuntu-training', overrides={'nfd': {'values': {'x': 1}}})['digest'] != base
    assert plan('gb200-nvke-ubuntu-training', overrides={'nfd': {'version': '0.20.1'}})['digest'] != base
    # the objects: another PF address changes one policy
    moved = dict(PCI, mlx5_4='0013:03:00.0')
    assert plan('gb200-nvke-ubuntu-training', rail_pci=moved)['digest'] != base
    assert plan('gb200-nvke-ubuntu-training', num_vfs=8)['digest'] != base


def test_the_digest_is_the_sha256_of_the_sorted_ascii_json_of_recipe_and_installed_components():
    """The documented format, pinned: a change of it would make every deployed stack look changed."""
    comp = {'name': 'c', 'kind': 'helm', 'chart': 'c', 'repository': 'oci://r', 'version': '1.0.0', 'namespace': 'n',
            'depends_on': [], 'values': {'b': 1, 'a': ['caf\u00e9']}, 'objects': {}, 'manifest_urls': [],
            'manifests_phase': 'post', 'readiness': {}, 'wait': True, 'timeout': '10m', 'tier': 3, 'release': {}}
    text = json.dumps({'recipe': 'r', 'components': [dict((k, v) for k, v in comp.items()
                                                          if k not in ('tier', 'release'))]},
                      sort_keys=True, separators=(',', ':'), ensure_ascii=True)
    assert stack_plan.digest({'recipe': 'r', 'components': [comp], 'tiers': [['c']]}) == \
        hashlib.sha256(text.encode('ascii')).hexdigest()
    assert '"a":["caf\\u00e9"]' in text


def test_plan_file_has_exactly_the_documented_keys():
    content = stack_plan.plan_file(plan('vr200-rke2-ubuntu-training'))
    assert sorted(content) == ['components', 'recipe', 'recipe_digest']
    for comp in content['components']:
        assert sorted(comp) == sorted(['name', 'kind', 'chart', 'repository', 'version', 'namespace', 'tier',
                                       'depends_on'])


# --- inputs and refusals ---------------------------------------------------------------------------------------

def test_an_old_recipe_name_plans_the_new_recipe_and_says_so():
    result = plan('gb200-nvke-ubuntu-kubeflow')
    assert result['recipe'] == 'gb200-nvke-ubuntu-training-kubeflow' and result['requested'] == 'gb200-nvke-ubuntu-kubeflow'
    assert result['notes'] == [registry.canonical_name('gb200-nvke-ubuntu-kubeflow')[1]]
    assert result['summary'].endswith('(%s)' % result['notes'][0])
    assert 'kubeflow-trainer' in comps(result)


@pytest.mark.parametrize('site, message', [
    ({'recipe': ''}, r'^no recipe: set gpu_tray_recipe \(the platform group_vars do\) to one of gb200-nvke'),
    ({'recipe': 'gb300'}, r"^unknown recipe 'gb300': choose one of .* \(gpu_tray_recipe\)$"),
    ({'recipe': 'rke2-vr200-common'}, r"^unknown recipe 'rke2-vr200-common'"),
    ({'recipe': 'x', 'extra_recipes': {'mine': {'components': {}}}}, r"\(gpu_tray_recipe\) or a site recipe \(mine\)$"),
    ({'recipe': 'gb200-nvke-ubuntu-training', 'rail_pci': {}},
     r'^gpu_tray_rail_pci_addresses has no PCI address for rails mlx5_0, mlx5_1, mlx5_3, mlx5_4'),
    ({'recipe': 'vr200-rke2-ubuntu-training', 'extra_catalog': {'nfd': {}}},
     r'^stack_extra_catalog / stack_extra_recipes redefine built-in nfd: change built-in components with '
     r'gpu_tray_stack_overrides instead$'),
    ({'recipe': 'vr200-rke2-ubuntu-training', 'overrides': {'gpu-operator': {'values': {'driver': {'rdma': {}}}}}},
     r'^component gpu-operator carries driver.rdma: remove it'),
    ({'recipe': 'gb200-nvke-ubuntu-training', 'overrides': {'network-operator': {'values': {'ofedDriver': {}}}}},
     r'^component network-operator carries ofedDriver: remove it - a DOCA-OFED driver container'),
    ({'recipe': 'vr200-rke2-ubuntu-training', 'bogus': 1}, r'^stack plan: unknown input\(s\) bogus$'),
])
def test_refusals_name_what_to_set(site, message):
    with pytest.raises(stack.StackError, match=message):
        stack_plan.plan(dict(SITE, **site))


def test_a_site_recipe_plans_without_registry_facts():
    site = dict(SITE, recipe='mine', extra_catalog={'app': {
        'kind': 'helm', 'chart': 'app', 'repository': 'https://charts.example', 'version': '1.0.0', 'namespace': 'a'}},
        extra_recipes={'mine': {'components': {'app': {}}}})
    result = stack_plan.plan(site)
    assert result['facts'] is None and [c['name'] for c in result['components']] == ['app']


# --- rails and SR-IOV ------------------------------------------------------------------------------------------

def test_nvke_has_four_policies_with_four_disjoint_selectors_and_their_networks():
    result = plan('gb200-nvke-ubuntu-training')
    policies = objects(result, 'SriovNetworkNodePolicy')
    assert [p['metadata']['name'] for p in policies] == ['sriov-ib-rail-%d' % i for i in range(4)]
    selectors = [p['spec']['nicSelector'] for p in policies]
    assert selectors == [{'vendor': '15b3', 'rootDevices': [PCI[r]]} for r in RAILS]
    assert [p['spec']['resourceName'] for p in policies] == ['sriov_resource_rail_%d' % i for i in range(4)]
    assert all(p['spec']['numVfs'] == 16 and p['spec']['linkType'] == 'IB' and p['spec']['isRdma'] is True
               for p in policies)
    assert result['sriov_policies'] == policies
    assert result['sriov_networks'] == [{'resource': 'nvidia.com/sriov_resource_rail_%d' % i,
                                         'network': 'default/sriov-network-rail-%d' % i} for i in range(4)]
    pools = objects(result, 'IPPool')
    assert [p['spec']['subnet'] for p in pools] == ['10.255.%d.0/22' % (4 * i) for i in range(4)]
    networks = objects(result, 'SriovIBNetwork')
    assert [json.loads(n['spec']['ipam'])['poolName'] for n in networks] == [p['metadata']['name'] for p in pools]


def _policy(name, nic, nodes=None):
    return {'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovNetworkNodePolicy', 'metadata': {'name': name},
            'spec': {'nicSelector': nic, 'nodeSelector': nodes or {'a': 'b'}}}


@pytest.mark.parametrize('before, second', [
    ([], {'vendor': '15b3', 'deviceID': '1021'}),
    ([{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c'}}], {'vendor': '15b3', 'deviceID': '1021'}),
    ([{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c'}}], {'deviceID': '1021', 'vendor': '15b3'}),
], ids=['alone', 'behind-other-objects', 'other-key-order'])
def test_two_policies_with_one_selector_are_refused_whoever_built_them(before, second):
    one = _policy('one', {'vendor': '15b3', 'deviceID': '1021'})
    with pytest.raises(stack.StackError, match=r'^SriovNetworkNodePolicies one and two select the same PFs'):
        stack_plan._check_selectors([{'objects': {'p.yaml': before + [one, _policy('two', second)]}}])
    # the same PFs on other nodes: no refusal
    stack_plan._check_selectors([{'objects': {'p.yaml': before + [one, _policy('three', second, {'a': 'c'})]}}])


def test_vr200_plans_need_no_rail_addresses():
    result = plan('vr200-rke2-ubuntu-training', rail_pci={}, rails=[])
    assert objects(result, 'SriovNetworkNodePolicy') == [] and result['sriov_networks'] == []


# --- waiting, release arguments ----------------------------------------------------------------------------------

def test_kai_scheduler_is_installed_without_waiting_and_so_without_atomic():
    for recipe in RECIPES:
        result = comps(plan(recipe))
        assert result['kai-scheduler']['release']['wait'] is False
        assert result['kai-scheduler']['release']['atomic'] is False
        waited = [c for c in result.values() if c['kind'] == 'helm' and c['name'] != 'kai-scheduler']
        assert waited and all(c['release']['wait'] is True and c['release']['atomic'] is True for c in waited)


@pytest.mark.parametrize('repository, archive, expected', [
    ('https://charts.example', None, {'chart_ref': 'c', 'chart_repo_url': 'https://charts.example',
                                      'chart_version': '1.0.0'}),
    ('oci://ghcr.io/x', None, {'chart_ref': 'oci://ghcr.io/x/c', 'chart_repo_url': None, 'chart_version': '1.0.0'}),
    ('/srv/charts', None, {'chart_ref': '/srv/charts/c', 'chart_repo_url': None, 'chart_version': '1.0.0'}),
    ('https://charts.example', '/b/charts/c/c-1.0.0.tgz', {'chart_ref': '/b/charts/c/c-1.0.0.tgz',
                                                           'chart_repo_url': None, 'chart_version': None}),
])
def test_release_arguments(repository, archive, expected):
    comp = {'kind': 'helm', 'chart': 'c', 'version': '1.0.0', 'repository': repository, 'wait': True, 'timeout': '',
            'chart_crds': 'none'}
    if archive:
        comp['archive'] = archive
    got = stack_plan.release(comp, '7m')
    assert dict((k, got[k]) for k in expected) == expected and got['timeout'] == '7m'
    assert got['keep_crds'] is False and got['crds_argv'] == []


@pytest.mark.parametrize('repository, archive, argv', [
    ('https://charts.example', None, ['show', 'crds', 'c', '--repo', 'https://charts.example', '--version', '1.0.0']),
    ('oci://ghcr.io/x', None, ['show', 'crds', 'oci://ghcr.io/x/c', '--version', '1.0.0']),
    ('/srv/charts', None, ['show', 'crds', '/srv/charts/c']),
    ('https://charts.example', '/b/charts/c/c-1.0.0.tgz', ['show', 'crds', '/b/charts/c/c-1.0.0.tgz']),
])
def test_a_chart_whose_crds_helm_never_upgrades_has_them_applied_at_its_pin(repository, archive, argv):
    comp = {'kind': 'helm', 'chart': 'c', 'version': '1.0.0', 'repository': repository, 'wait': True, 'timeout': '',
            'chart_crds': 'crds_dir'}
    if archive:
        comp['archive'] = archive
    got = stack_plan.release(comp, '7m')
    assert got['crds_argv'] == argv and got['keep_crds'] is False
    for kind in ('crds_dir_upgrade_hook', 'templates_kept_by_values', 'none', 'templates'):
        assert stack_plan.release(dict(comp, chart_crds=kind), '7m')['crds_argv'] == []


def test_every_pinned_chart_of_every_recipe_is_classified_and_unknown_charts_are_kept():
    """Each recipe's charts as the catalog says; a site chart that says nothing is marked keep (the unsafe case)."""
    keep = {}
    for recipe in RECIPES:
        for comp in plan(recipe, use_nodewright=True)['components']:
            if comp['kind'] == 'helm':
                keep[comp['name']] = comp['release']['keep_crds']
    marked = sorted(n for n, k in keep.items() if k)
    assert marked == ['agentgateway-crds', 'dynamo-platform', 'nodewright-operator', 'nvsentinel'], keep
    comp = {'kind': 'helm', 'chart': 'c', 'version': '1.0.0', 'repository': '/srv/charts', 'wait': True, 'timeout': ''}
    assert stack_plan.release(comp, '7m')['keep_crds'] is True
    assert stack_plan.release(dict(comp, timeout='20m'), '7m')['timeout'] == '20m'


def test_a_vendored_bundle_replaces_every_chart_or_is_refused():
    result = plan('vr200-rke2-ubuntu-training')
    wanted = bundle.vendor_paths(result['components'])
    digests = dict((v['archive'], 'a' * 64) for v in wanted.values())
    prov = bundle.provenance(result['recipe'], result['digest'], wanted, digests)
    vendored = plan('vr200-rke2-ubuntu-training', vendored={'dir': '/b', 'provenance': prov, 'digests': digests})
    for comp in vendored['components']:
        if comp['kind'] == 'helm':
            assert comp['release']['chart_ref'] == '/b/' + wanted[comp['name']]['archive']
            assert comp['release']['chart_version'] is None
    digests[wanted['nfd']['archive']] = 'b' * 64
    with pytest.raises(stack.StackError, match=r'^/b: component nfd: charts/nfd/node-feature-discovery-0.19.0.tgz has '
                                               r'sha256 b{64}, provenance.yaml records a{64}'):
        plan('vr200-rke2-ubuntu-training', vendored={'dir': '/b', 'provenance': prov, 'digests': digests})


# --- air gap: one mapping moves every chart, image and manifest -------------------------------------------------

def test_mirrors_move_charts_images_and_fetched_manifests():
    mirror = dict(DEFAULTS['stack_repositories'], github_raw='/srv/mirror', jetstack='https://charts.corp/jetstack')
    registries = dict(DEFAULTS['stack_registries'], nvcr='nvcr.corp', k8s='k8s.corp')
    result = comps(plan('vr200-rke2-ubuntu-inference', repositories=mirror, registries=registries))
    assert result['cert-manager']['repository'] == 'https://charts.corp/jetstack'
    assert result['gpu-operator']['values']['operator']['repository'] == 'nvcr.corp/nvidia'
    daemonset = [o for o in result['dranet']['objects']['dranet.yaml'] if o['kind'] == 'DaemonSet'][0]
    assert daemonset['spec']['template']['spec']['containers'][0]['image'].startswith('k8s.corp/networking/dranet:')
    urls = [e['url'] for e in result['agentgateway-crds']['manifest_urls']]
    assert urls and all(u.startswith('file:///srv/mirror/kubernetes-sigs/') for u in urls)
    nvke = comps(plan('gb200-nvke-ubuntu-training', registries=registries))
    policy = nvke['network-operator']['objects']['nic-cluster-policy.yaml'][0]
    assert policy['spec']['nvIpam']['repository'] == 'nvcr.corp/nvidia/mellanox'
    assert policy['spec']['nvIpam']['version'] == 'network-operator-v26.4.1'


# --- the inference CRDs ------------------------------------------------------------------------------------------

GATEWAY_FILES = ['gateway.networking.k8s.io_%s.yaml' % k for k in (
    'backendtlspolicies', 'gatewayclasses', 'gateways', 'grpcroutes', 'httproutes', 'listenersets', 'referencegrants',
    'tcproutes', 'tlsroutes', 'udproutes')]
INFERENCE_FILES = ['inference.networking.k8s.io_inferencepools.yaml',
                   'inference.networking.x-k8s.io_inferencepoolimports.yaml']


@pytest.mark.parametrize('recipe', ['vr200-rke2-ubuntu-inference', 'vr200-rke2-ubuntu-inference-dynamo'])
def test_inference_recipes_install_the_pinned_gateway_and_inferencepool_crds_first(recipe):
    result = plan(recipe)
    crds = comps(result)['agentgateway-crds']
    assert [e['file'] for e in crds['manifest_urls']] == GATEWAY_FILES + INFERENCE_FILES
    for entry in crds['manifest_urls']:
        tag = 'gateway-api/v1.6.1/config/crd/standard/' if entry['file'].startswith('gateway') else \
            'gateway-api-inference-extension/v1.5.0/config/crd/bases/'
        assert entry['url'] == 'https://raw.githubusercontent.com/kubernetes-sigs/' + tag + entry['file']
        assert len(entry['sha256']) == 64
    assert crds['manifests_phase'] == 'pre' and crds['files'] == sorted(GATEWAY_FILES + INFERENCE_FILES)
    # the gateway comes in a later tier than the CRDs it is an object of
    assert crds['tier'] < comps(result)['agentgateway']['tier']
    fetched = bundle_files.fetches(result, ['helmfile', 'flux'])
    assert sorted(f['dest'] for f in fetched) == sorted(
        ['components/agentgateway-crds-pre/' + f for f in GATEWAY_FILES + INFERENCE_FILES]
        + ['%s/charts/agentgateway-crds-pre/crds/%s' % (fmt, f) for f in GATEWAY_FILES + INFERENCE_FILES
           for fmt in ('flux', 'helmfile')])
    # helmfile gets its chart only with the helmfile format; Flux's wrapper chart only with flux
    assert not [f for f in bundle_files.fetches(result, ['argocd']) if not f['dest'].startswith('components/')]
    assert all('manifest_urls' not in c or not c['manifest_urls'] for c in plan('vr200-rke2-ubuntu-training')['components'])


@pytest.mark.parametrize('entry, message', [
    ({'url': 'http://x/a.yaml', 'sha256': 'a' * 64}, r'manifest URL .http://x/a.yaml. must be https://'),
    ({'url': 'https://x/a.yaml', 'sha256': 'abc'}, r'manifest https://x/a.yaml is not pinned by a sha256'),
    ({'url': 'https://x/a.yaml'}, r'manifest https://x/a.yaml is not pinned by a sha256 \(64 hex digits\)'),
])
def test_a_fetched_manifest_needs_https_and_a_sha256(entry, message):
    with pytest.raises(stack.StackError, match='component c: ' + message):
        stack.check_manifest_urls('c', [entry])
    with pytest.raises(stack.StackError, match='component c fetches two manifests named a.yaml'):
        stack.check_manifest_urls('c', [{'url': 'https://x/a.yaml', 'sha256': 'a' * 64},
                                        {'url': 'https://y/a.yaml', 'sha256': 'b' * 64}])


# --- manifests ---------------------------------------------------------------------------------------------------

def test_every_catalog_manifest_has_a_builder_and_every_builder_is_used():
    named = set(m for comp in registry.catalog().values() for m in comp.get('manifests') or [])
    for recipe in registry.recipes().values():
        for ref in (recipe.get('components') or {}).values():
            named.update((ref or {}).get('manifests') or [])
    assert named == set(manifests.BUILDERS)


def test_apply_lists_the_namespace_first_and_marks_the_kinds_that_wait_for_a_crd():
    result = comps(plan('gb200-nvke-ubuntu-training', use_nodewright=True))
    sriov = result['sriov-ib-networks']
    assert sriov['apply'][0] == {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': 'nvidia-network-operator'}}
    assert [o['kind'] for o in sriov['apply'][1:]] == ['IPPool'] * 4 + ['SriovNetworkNodePolicy'] * 4 + ['SriovIBNetwork'] * 4
    assert sriov['custom_kinds'] == ['IPPool', 'SriovIBNetwork', 'SriovNetworkNodePolicy']
    dranet = comps(plan('vr200-rke2-ubuntu-training'))['dranet']
    assert dranet['apply'][0]['kind'] == 'ServiceAccount'        # kube-system is never created
    assert dranet['custom_kinds'] == []                          # resource.k8s.io/v1 is Kubernetes' own
    assert result['nfd']['apply'] == [] and result['nfd']['custom_kinds'] == []


def test_the_nodewright_tuning_cr_coalesces_both_reboots():
    tuning = comps(plan('vr200-rke2-ubuntu-inference', use_nodewright=True))['nodewright-customizations']
    cr = tuning['objects']['tuning.yaml'][0]
    assert sorted(cr['spec']['packages']) == ['nvidia-tuned', 'rdma-netns-exclusive']
    assert cr['spec']['packages']['nvidia-tuned']['configMap']['intent'] == 'inference'
    check = cr['spec']['packages']['rdma-netns-exclusive']['configMap']['apply_check.sh']
    assert 'grep -qx "options ib_core netns_mode=0" /etc/modprobe.d/dranet-rdma-netns-exclusive.conf' in check
    off = comps(plan('vr200-rke2-ubuntu-training', use_nodewright=True, overrides={
        'nodewright-customizations': {'values': {'rdma_netns_exclusive': False}}}))['nodewright-customizations']
    assert sorted(off['objects']['tuning.yaml'][0]['spec']['packages']) == ['nvidia-tuned']


def test_a_site_template_is_rendered_by_the_caller_and_a_relative_unknown_manifest_is_refused():
    seen = []

    def render(path, variables):
        seen.append((path, sorted(variables), variables['stack_component']['name']))
        return [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x'}}, None]

    site = dict(SITE, recipe='mine', extra_catalog={'m': {'kind': 'manifests', 'version': '1.0.0', 'namespace': 'n',
                                                          'manifests': ['/site/x.yaml.j2']}},
                extra_recipes={'mine': {'components': {'m': {}}}})
    result = stack_plan.plan(site, render_template=render)
    assert seen == [('/site/x.yaml.j2', ['stack_component', 'stack_ippools', 'stack_sriov_rails'], 'm')]
    assert comps(result)['m']['objects'] == {'x.yaml': [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x'}}]}
    site['extra_catalog']['m']['manifests'] = ['x.yaml']
    with pytest.raises(stack.StackError, match=r'component m: manifest x.yaml is not one the collection builds'):
        stack_plan.plan(site, render_template=render)


# --- bundle files --------------------------------------------------------------------------------------------------

def _files(result, formats=('helmfile',), vendored=None):
    return dict((f['path'], f['content']) for f in bundle_files.files(
        result, list(formats), {'repo_url': 'https://git.example/stack.git'}, vendored, None,
        registry.sources()['repositories']))


def test_vr200_bundle_says_nothing_of_sriov_and_applies_in_one_step():
    files = _files(plan('vr200-rke2-ubuntu-training'), ('helmfile', 'argocd', 'flux'))
    for path in ('README.md', 'helmfile.yaml'):
        assert 'sriov' not in files[path].lower(), path
    assert '```bash\ncd <this directory>\nhelmfile apply\n```' in files['README.md']
    assert files['helmfile.yaml'].splitlines()[2] == '# Apply: helmfile apply'


def test_nvke_bundle_installs_in_two_stages_and_never_says_apply_first():
    files = _files(plan('gb200-nvke-ubuntu-training'), ('helmfile', 'flux'))
    readme = files['README.md']
    assert 'helmfile apply\n' not in readme.replace("-l 'name!=sriov-ib-networks' apply", '')
    stages = ["helmfile -l 'name!=sriov-ib-networks' apply",
              'kubectl wait --for=create crd/ippools.nv-ipam.nvidia.com --timeout=10m',
              'kubectl wait --for=condition=Established crd/ippools.nv-ipam.nvidia.com --timeout=2m',
              'helmfile -l name=sriov-ib-networks apply']
    assert '\n'.join(stages) in readme
    assert '\n'.join('#   ' + s for s in stages) in files['helmfile.yaml']
    assert 'flux reconcile helmrelease sriov-ib-networks -n flux-system --reset' in readme
    assert 'wait until every SriovNetworkNodeState reports `syncStatus: Succeeded`' in readme


def test_helmfile_names_its_repositories_and_does_not_wait_for_kai_scheduler():
    result = plan('vr200-rke2-ubuntu-inference')
    doc = yaml.safe_load(_files(result)['helmfile.yaml'])
    names = dict((r['name'], r['url']) for r in doc['repositories'])
    assert names['jetstack'] == 'https://charts.jetstack.io' and names['kai'] == 'ghcr.io/kai-scheduler/kai-scheduler'
    assert not [n for n in names if n.startswith('repo')]
    releases = dict((r['name'], r) for r in doc['releases'])
    assert (releases['kai-scheduler']['wait'], releases['kai-scheduler']['atomic']) == (False, False)
    assert (releases['gpu-operator']['wait'], releases['gpu-operator']['atomic']) == (True, True)
    assert releases['kai-scheduler']['chart'] == 'kai/kai-scheduler'
    # the CRDs in a local chart's crds/, which helm never deletes (a folder of manifests would be templates/)
    assert releases['agentgateway-crds-pre']['chart'] == './helmfile/charts/agentgateway-crds-pre'
    assert releases['agentgateway']['chart'] == 'agentgateway/agentgateway'
    assert releases['agentgateway-crds']['needs'] == ['agentgateway-system/agentgateway-crds-pre']
    readme = _files(result)['README.md']
    assert '| agentgateway-crds | `components/agentgateway-crds-pre/gateway.networking.k8s.io_tlsroutes.yaml` |' in readme
    assert 'installed beforehand' not in readme


def test_a_site_repository_without_a_key_gets_a_slug():
    result = {'components': [{'name': 'a', 'kind': 'helm', 'repository': 'https://charts.example/x'},
                             {'name': 'b', 'kind': 'helm', 'repository': '/srv/local'},
                             {'name': 'c', 'kind': 'manifests', 'repository': ''}]}
    assert bundle_files.repository_names(result, {'k_one': 'https://charts.example/x/'}, {}) == {
        'https://charts.example/x': 'k-one'}
    assert bundle_files.repository_names(result, {}, {}) == {'https://charts.example/x': 'charts-example-x'}
    assert bundle_files.repository_names(result, {}, {'a': {}}) == {}


def test_the_bundle_writes_exactly_what_the_plan_installs():
    result = plan('gb200-nvke-ubuntu-training', use_nodewright=True)
    files = _files(result, ('helmfile', 'flux'))
    for comp in result['components']:
        if comp['kind'] == 'helm':
            assert yaml.safe_load(files['components/%s/values.yaml' % comp['name']]) == comp['values']
        for name, objs in comp['objects'].items():
            folder = bundle_files.folder(comp)
            assert list(yaml.safe_load_all(files['components/%s/%s' % (folder, name)])) == objs
            assert files['flux/charts/%s/files/%s' % (folder, name)] == files['components/%s/%s' % (folder, name)]
    assert yaml.safe_load(files['plan.yaml']) == stack_plan.plan_file(result)


def test_stale_and_layout_keep_what_is_written_and_what_argo_cd_reads():
    written = ['plan.yaml', 'components/a/values.yaml', 'checksums.txt']
    vendored = {'a': {'archive': 'charts/a/a-1.tgz', 'chart_dir': 'charts/a/a'}}
    keep, unpacked = bundle_files.layout(written, vendored, ['argocd'])
    assert {'components', 'components/a', 'charts/a', 'charts/a/a-1.tgz', 'charts/a/a'} <= keep
    existing = ['README.md', 'components', 'components/a', 'components/a/values.yaml', 'components/old',
                'components/old/x.yaml', 'charts/a/a/Chart.yaml', 'charts/b', 'helmfile.yaml', 'notes.txt']
    assert bundle_files.stale(existing, keep, unpacked) == [
        'helmfile.yaml', 'components/old/x.yaml', 'components/old', 'charts/b']
    keep, unpacked = bundle_files.layout(written, vendored, ['helmfile'])
    assert unpacked == [] and 'charts/a/a/Chart.yaml' in bundle_files.stale(existing, keep, unpacked)


# --- air gap: a partial stack_repositories / stack_registries merges over the catalog's ----------------------------

def docs_airgap_file():
    """The text of the air-gap file docs/stack.md shows (the YAML block that starts with its path)."""
    with open(os.path.join(REPO, 'docs', 'stack.md')) as handle:
        text = handle.read()
    start = text.index('```yaml\n# group_vars/all/airgap.yml\n') + len('```yaml\n')
    return text[start:text.index('```', start)]


def test_the_docs_airgap_file_merges_over_the_defaults_and_moves_only_what_it_names():
    airgap = yaml.safe_load(docs_airgap_file())
    assert sorted(airgap) == ['stack_registries', 'stack_repositories'] and len(airgap['stack_repositories']) == 2
    result = plan('vr200-rke2-ubuntu-inference', repositories=airgap['stack_repositories'],
                  registries=airgap['stack_registries'])
    by_name = comps(result)
    assert by_name['gpu-operator']['repository'] == 'oci://harbor.example/nvidia'
    # the keys the file leaves out keep the catalog's default
    assert by_name['cert-manager']['repository'] == 'https://charts.jetstack.io'
    assert all(e['url'].startswith('https://artifacts.example/github-raw/kubernetes-sigs/')
               for e in by_name['agentgateway-crds']['manifest_urls'])
    assert by_name['nfd']['values']['image']['repository'] == 'harbor.example/k8s/nfd/node-feature-discovery'
    doc = yaml.safe_load(dict((f['path'], f['content']) for f in bundle_files.files(
        result, ['helmfile'], {}, None, None, stack_plan.site_inputs(dict(SITE, **{
            'repositories': airgap['stack_repositories']}))['repositories']))['helmfile.yaml'])
    names = dict((r['name'], r['url']) for r in doc['repositories'])
    assert names['ngc'] == 'harbor.example/nvidia' and names['jetstack'] == 'https://charts.jetstack.io'
    # helmfile writes a key's _ as - (docs/stack.md says so)
    assert names['prometheus-community'] == 'https://prometheus-community.github.io/helm-charts'


@pytest.mark.parametrize('key, value, message', [
    ('repositories', {'ngc': 'oci://m/nvidia', 'jetstak': 'https://m'},
     r'^stack_repositories: unknown key stack_repositories\.jetstak: the catalog uses agentgateway, dra, '),
    ('registries', {'nvcr': 'm', 'quay': 'm', 'docker': 'm'},
     r'^stack_registries: unknown keys stack_registries\.docker, stack_registries\.quay: the catalog uses ghcr, k8s, '
     r'nvcr$'),
    ('repositories', {'ngc': ''}, r"^stack_repositories\.ngc must be a non-empty string, got ''$"),
    ('registries', ['nvcr'], r"^stack_registries must be a mapping of registry names to locations, got list"),
])
def test_an_unknown_or_empty_source_is_refused_naming_it(key, value, message):
    with pytest.raises(stack.StackError, match=message):
        plan('vr200-rke2-ubuntu-training', **{key: value})


def test_no_site_sources_means_the_catalogs():
    assert stack_plan.site_inputs({})['repositories'] == registry.sources()['repositories']
    assert stack_plan.site_inputs({'registries': None})['registries'] == {
        'nvcr': 'nvcr.io', 'ghcr': 'ghcr.io', 'k8s': 'registry.k8s.io'}


# --- CRDs outlive every removal --------------------------------------------------------------------------------------

@pytest.mark.parametrize('recipe', RECIPES)
def test_no_object_teardown_deletes_is_a_crd_and_every_crd_release_keeps_them(recipe):
    """teardown_component.yml deletes a component's built objects and uninstalls its release: no built object of any
    recipe is a CRD (the fetched CRDs are applied outside any release), and the bundle puts every CRD file of a manifest
    release in a chart's crds/ for Flux and helmfile."""
    result = plan(recipe, use_nodewright=True)
    assert not [o for c in result['components'] for objs in c['objects'].values() for o in objs
                if o['kind'] == 'CustomResourceDefinition']
    files = _files(result, ('helmfile', 'flux'))
    for comp in result['components']:
        for name in bundle.crd_files(comp):
            folder = bundle_files.folder(comp)
            assert [f['dest'] for f in bundle_files.fetches(result, ['helmfile', 'flux'])
                    if f['dest'].endswith('/' + name)] == [
                'components/%s/%s' % (folder, name), 'flux/charts/%s/crds/%s' % (folder, name),
                'helmfile/charts/%s/crds/%s' % (folder, name)]
            assert 'helmfile/charts/%s/Chart.yaml' % folder in files
    kept = dict((c['name'], bundle.keeps_crds(c)) for c in result['components'] if bundle.keeps_crds(c))
    assert kept == {'cert-manager': '`crds.keep: true`', 'prometheus-operator-crds': '`crds.annotations`'}


def test_a_site_file_mixing_a_crd_with_other_kinds_is_refused_and_a_crd_file_goes_to_crds():
    crd = {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition', 'metadata': {'name': 'a.x'}}
    cm = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'c'}}
    comp = {'name': 'site', 'kind': 'manifests', 'objects': {'crds.yaml': [crd], 'cm.yaml': [cm]}, 'manifest_urls': []}
    assert bundle.crd_files(comp) == ['crds.yaml']
    assert bundle.local_chart_path('flux/charts/site', comp, 'crds.yaml') == 'flux/charts/site/crds/crds.yaml'
    assert bundle.local_chart_path('flux/charts/site', comp, 'cm.yaml') == 'flux/charts/site/files/cm.yaml'
    comp['objects']['both.yaml'] = [crd, cm]
    with pytest.raises(stack.StackError, match=r'^component site: manifest both\.yaml holds a CustomResourceDefinition '
                                               r'and other kinds \(ConfigMap\): put the CRDs in a file of their own'):
        bundle.crd_files(comp)
    assert bundle.keeps_crds({'kind': 'helm', 'values': {'crds': {'enabled': True, 'keep': False}}}) == ''
    assert bundle.keeps_crds({'kind': 'helm', 'values': {'crds': {'enabled': False, 'keep': True}}}) == ''


def test_an_empty_rail_list_is_the_platform_profiles():
    """The run context takes an empty gpu_tray_rails as the profile's, and so does the planner (one default)."""
    planned = stack_plan.plan(dict(SITE, recipe='gb200-nvke-ubuntu-training', rails=[]))
    assert [r['name'] for r in planned['sriov_resources']] == [
        'nvidia.com/sriov_resource_rail_%d' % i for i in range(4)]
    assert set(r['count'] for r in planned['sriov_resources']) == {16}


def test_a_recipe_of_no_platform_without_rails_is_refused_naming_gpu_tray_rails():
    """A site recipe (no platform in the registry) whose components build the SR-IOV rails: no profile gives rails
    or VFs, so the fabric is refused naming what to set."""
    site = stack_plan.site_inputs({'recipe': 'my-site-recipe', 'rails': [], 'num_vfs': None})
    assert stack_plan._rails(site) == [] and stack_plan._num_vfs(site) is None
    components = [{'manifests': [stack_plan.manifests.NEEDS_RAILS[0]]}]
    with pytest.raises(stack_plan.StackError, match=r'no rails are set: set gpu_tray_rails'):
        stack_plan._fabric(dict(site, rails=[]), components)
    with pytest.raises(stack_plan.StackError, match=r'no VF count is set: set gpu_tray_num_vfs'):
        stack_plan._fabric(dict(site, rails=['mlx5_0'], rail_pci={'mlx5_0': '0000:03:00.0'}), components)
