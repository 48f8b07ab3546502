# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GitOps bundle functions (plugins/plugin_utils/bundle.py): formats, releases and their dependency graph, sync
waves, Argo CD and Flux objects, readiness gates, vendored charts (what to pull, provenance, checks before an
install) and the checksums / bundle digest. The rendered bundles of the five recipes are held against the real
CRDs in tests/cluster/test_bundle_formats.py."""

import hashlib

import pytest
import yaml


from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle, bundle_files
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.stack import StackError

GIT = {'repo_url': 'https://git.example.test/fleet.git'}


def _comp(name, kind='helm', tier=0, deps=(), objects=None, phase=None, **kw):
    comp = {'name': name, 'kind': kind, 'chart': name if kind == 'helm' else '', 'version': '1.0.0',
            'repository': 'https://charts.example.test' if kind == 'helm' else '', 'namespace': 'ns-' + name,
            'tier': tier, 'depends_on': list(deps), 'values': {}, 'objects': objects or {}, 'readiness': {},
            'wait': True, 'timeout': '10m', 'manifests_phase': phase or ('pre' if kind == 'manifests' else 'post')}
    comp.update(kw)
    return comp


def _stack():
    """operator (chart + post CR, gated) <- networks (manifests) ; crds (OCI chart) <- app (chart with pre manifests)"""
    return [
        _comp('crds', repository='oci://registry.example.test/charts'),
        _comp('operator', objects={'policy.yaml': [{'kind': 'Policy'}]},
              readiness={'ready': [{'api_version': 'example.test/v1', 'kind': 'Policy', 'name': 'policy',
                                    'path': 'status.state', 'value': 'ready'},
                                   {'api_version': 'example.test/v1', 'kind': 'Cluster', 'path': 'status.phase',
                                    'value': 'Running'}]}),
        _comp('app', tier=1, deps=['crds'], objects={'cm.yaml': [{'kind': 'ConfigMap'}]}, phase='pre', wait=False,
              values={'replicas': 2}),
        _comp('networks', kind='manifests', tier=1, deps=['operator'], objects={'pools.yaml': [{'kind': 'Pool'}]},
              readiness={'wait_for_crds': ['pools.example.test']}),
    ]


def test_formats_default_to_helmfile_and_accept_a_comma_string():
    assert bundle.formats(None) == bundle.formats('') == bundle.formats([]) == ['helmfile']
    assert bundle.formats('flux, argocd') == ['argocd', 'flux']
    assert bundle.formats(['flux', 'helmfile', 'flux']) == ['helmfile', 'flux']
    with pytest.raises(StackError, match='argo unknown: choose from helmfile, argocd, flux .gpu_tray_bundle_format.'):
        bundle.formats('argo')


@pytest.mark.parametrize('path, want', [('', ''), ('.', ''), ('./a/b/', 'a/b'), ('/a', 'a'), ('a/../../b', None)])
def test_the_bundle_path_in_the_repository_is_normalised_and_may_not_leave_it(path, want):
    if want is None:
        with pytest.raises(StackError, match=r'may not contain \.\.'):
            bundle.settings({'path': path})
    else:
        assert bundle.settings({'path': path})['path'] == want


def test_releases_chain_pre_chart_post_and_depends_on_is_the_dag():
    rels = bundle.releases(_stack())
    assert [(r['name'], r['phase'], r['kind']) for r in rels] == [
        ('crds', 'primary', 'chart'), ('operator', 'primary', 'chart'), ('operator-post', 'post', 'manifests'),
        ('app-pre', 'pre', 'manifests'), ('app', 'primary', 'chart'), ('networks', 'primary', 'manifests')]
    assert bundle.release_dependencies(_stack()) == {
        'crds': [], 'operator': [], 'operator-post': ['operator'], 'app-pre': ['crds'], 'app': ['app-pre'],
        'networks': ['operator-post']}
    # a manifest component before charts keeps the order
    comps = [_comp('m', kind='manifests', objects={'a.yaml': [{'kind': 'A'}]}), _comp('c', deps=['m'])]
    assert [r['name'] for r in bundle.releases(comps)] == ['m', 'c']
    assert bundle.release_dependencies(comps) == {'m': [], 'c': ['m']}


def test_a_site_component_named_like_a_post_release_is_refused():
    comps = [_comp('x', objects={'a.yaml': [{'kind': 'A'}]}),
             _comp('x-post', kind='manifests', objects={'b.yaml': [{'kind': 'B'}]})]
    with pytest.raises(StackError, match='x-post occur twice'):
        bundle.releases(comps)


def test_sync_waves_band_tiers_by_four():
    assert [bundle.sync_wave(t, p) for t, p in ((0, 'pre'), (0, 'primary'), (0, 'post'), (1, 'pre'), (3, 'post'))] \
        == [0, 1, 2, 4, 14]


def test_slug_and_wrapper_chart_versions():
    assert bundle.slug('https://helm.ngc.nvidia.com/nvidia/ai-dynamo') == 'helm-ngc-nvidia-com-nvidia-ai-dynamo'
    long = bundle.slug('https://example.test/' + 'x' * 100)
    assert len(long) <= 63 and long != bundle.slug('https://example.test/' + 'x' * 101)
    assert bundle.slug('https://' + 'a' * 63) == 'a' * 63                    # the length boundary
    cut = bundle.slug('https://' + 'a' * 64)
    assert len(cut) == 63 and cut.startswith('a' * 54 + '-')
    assert bundle.chart_version('v26.7.1') == '26.7.1' and bundle.chart_version('1.0.0') == '1.0.0'
    assert bundle.chart_version('sha256:' + '0' * 64) == '0.0.0-sha256-000000000000'


def test_argocd_applications():
    files = bundle.argocd_files('r1', _stack(), dict(GIT, path='racks/a'))
    app = files['argocd/apps/app.yaml']
    assert app['metadata']['annotations'] == {'argocd.argoproj.io/sync-wave': '5', 'gpu-tray.cluster/wait': 'false'}
    chart, values = app['spec']['sources']
    assert chart == {'repoURL': 'https://charts.example.test', 'chart': 'app', 'targetRevision': '1.0.0',
                     'helm': {'valueFiles': ['$values/racks/a/components/app/values.yaml'], 'releaseName': 'app'}}
    assert values == {'repoURL': GIT['repo_url'], 'targetRevision': 'HEAD', 'ref': 'values'}
    oci = files['argocd/apps/crds.yaml']['spec']['sources'][0]
    assert (oci['repoURL'], oci['path']) == ('oci://registry.example.test/charts/crds', '.')
    pre = files['argocd/apps/app-pre.yaml']
    assert pre['spec']['source']['path'] == 'racks/a/components/app-pre'
    assert pre['metadata']['annotations']['argocd.argoproj.io/sync-wave'] == '4'
    nets = files['argocd/apps/networks.yaml']['spec']
    assert nets['source']['path'] == 'racks/a/components/networks'
    assert 'SkipDryRunOnMissingResource=true' in nets['syncPolicy']['syncOptions']
    assert files['argocd/app-of-apps.yaml']['spec']['source']['path'] == 'racks/a/argocd/apps'
    health = files['argocd/argocd-cm-patch.yaml']['data']
    assert sorted(health) == ['resource.customizations.health.argoproj.io_Application',
                              'resource.customizations.health.example.test_Cluster',
                              'resource.customizations.health.example.test_Policy']
    assert 'obj.metadata.name == "policy" and field(obj, {"status", "state"}) ~= "ready"' in \
        health['resource.customizations.health.example.test_Policy']
    assert 'obj.metadata.name' not in health['resource.customizations.health.example.test_Cluster']


def test_argocd_needs_the_repository_and_cannot_read_a_local_chart_directory():
    with pytest.raises(StackError, match='set gpu_tray_bundle_repo_url'):
        bundle.argocd_files('r1', _stack(), {})
    local = [_comp('a', repository='/srv/charts')]
    with pytest.raises(StackError, match='component a comes from the local chart directory /srv/charts, which Argo CD'):
        bundle.argocd_files('r1', local, GIT)
    with pytest.raises(StackError, match='which Flux cannot read'):
        bundle.flux_files('r1', local, GIT)
    vend = {'a': {'archive': 'charts/a/a-1.0.0.tgz', 'chart_dir': 'charts/a/a'}}
    assert bundle.argocd_files('r1', local, GIT, vend)['argocd/apps/a.yaml']['spec']['sources'][0]['path'] == 'charts/a/a'


def test_a_gate_path_that_is_not_a_field_path_is_refused():
    comp = _comp('x', readiness={'ready': [{'api_version': 'a/v1', 'kind': 'K', 'path': "status.conditions[?type=='Ready']",
                                            'value': 'True'}]})
    with pytest.raises(StackError, match='is not a dotted field path'):
        bundle.argocd_files('r1', [comp], GIT)


def test_flux_objects():
    files = bundle.flux_files('r1', _stack(), {'path': 'racks/a'})
    rels = dict((p.rsplit('/', 1)[1][:-5], o) for p, o in files.items() if p.startswith('flux/releases/'))
    assert sorted(rels) == ['app', 'app-pre', 'crds', 'networks', 'operator', 'operator-post']
    assert rels['app']['spec']['dependsOn'] == [{'name': 'app-pre'}]
    assert rels['networks']['spec']['dependsOn'] == [{'name': 'operator-post'}]
    assert 'dependsOn' not in rels['crds']['spec']
    assert rels['app']['spec']['values'] == {'replicas': 2}
    assert rels['app']['spec']['install']['disableWait'] is True
    assert rels['crds']['spec']['chartRef'] == {'kind': 'OCIRepository', 'name': 'crds', 'namespace': 'flux-system'}
    assert files['flux/sources/oci-crds.yaml']['spec']['ref'] == {'tag': '1.0.0'}
    assert files['flux/sources/helm-charts-example-test.yaml']['spec']['url'] == 'https://charts.example.test'
    assert rels['networks']['spec']['chart']['spec']['chart'] == './racks/a/flux/charts/networks'
    assert files['flux/charts/networks/Chart.yaml']['name'] == 'networks'
    # the Policy gate is on the post manifests that create it, the Cluster gate (an object of the chart) on the chart
    assert [e['kind'] for e in rels['operator-post']['spec']['healthCheckExprs']] == ['Policy']
    assert rels['operator']['spec']['healthCheckExprs'] == [
        {'apiVersion': 'example.test/v1', 'kind': 'Cluster', 'current': "status.phase == 'Running'"}]
    assert rels['operator-post']['spec']['healthCheckExprs'][0]['current'] == \
        "(metadata.name != 'policy' || status.state == 'ready')"
    assert files['flux/kustomization.yaml']['resources'] == sorted(
        p[5:] for p in files if p.startswith(('flux/releases/', 'flux/sources/')))


def test_flux_with_vendored_charts_reads_the_archives_from_git():
    vend = bundle.vendor_paths(_stack())
    files = bundle.flux_files('r1', _stack(), {}, vend)
    assert not [p for p in files if p.startswith('flux/sources/')]
    spec = files['flux/releases/crds.yaml']['spec']['chart']['spec']
    assert spec == {'chart': './charts/crds/crds-1.0.0.tgz',
                    'sourceRef': {'kind': 'GitRepository', 'name': 'flux-system', 'namespace': 'flux-system'}}


def test_vendor_paths_pull_each_kind_of_repository():
    comps = _stack() + [_comp('local', repository='/srv/charts', chart='loc')]
    paths = bundle.vendor_paths(comps)
    assert sorted(paths) == ['app', 'crds', 'local', 'operator']        # no manifest set
    assert paths['app']['pull'] == {'ref': 'app', 'args': ['--repo', 'https://charts.example.test', '--version', '1.0.0']}
    assert paths['crds']['pull'] == {'ref': 'oci://registry.example.test/charts/crds', 'args': ['--version', '1.0.0']}
    assert paths['local']['pull'] == {'ref': '/srv/charts/loc', 'args': [], 'package': True}
    assert (paths['local']['archive'], paths['local']['chart_dir']) == ('charts/local/loc-1.0.0.tgz', 'charts/local/loc')


def test_a_chart_is_pulled_only_when_it_is_not_there_as_recorded():
    wanted = bundle.vendor_paths(_stack())
    digests = dict((w['archive'], 'a' * 64) for w in wanted.values())
    prov = bundle.provenance('r1', 'd' * 64, wanted, digests)
    assert bundle.stale_archives(wanted, prov, digests) == []
    assert bundle.stale_archives(wanted, {}, digests) == ['app', 'crds', 'operator']
    changed = dict(digests, **{wanted['app']['archive']: 'b' * 64})
    assert bundle.stale_archives(wanted, prov, changed) == ['app']
    missing = dict((k, v) for k, v in digests.items() if k != wanted['crds']['archive'])
    assert bundle.stale_archives(wanted, prov, missing) == ['crds']
    repinned = dict(wanted, operator=dict(wanted['operator'], version='1.0.1'))
    assert bundle.stale_archives(repinned, prov, digests) == ['operator']


def test_checksums_and_the_bundle_digest():
    text = bundle.checksums({'b/x': '2' * 64, 'a': '1' * 64})
    assert text == '%s  a\n%s  b/x\n' % ('1' * 64, '2' * 64)
    assert bundle.bundle_digest(text) == hashlib.sha256(text.encode()).hexdigest()


def test_a_vendored_bundle_is_checked_against_the_recipe_before_an_install():
    comps = _stack()
    wanted = bundle.vendor_paths(comps)
    digests = dict((w['archive'], 'a' * 64) for w in wanted.values())
    prov = bundle.provenance('r1', 'd' * 64, wanted, digests)
    ok = bundle.vendored_archives(comps, prov, digests)
    assert ok == {'archives': dict((n, w['archive']) for n, w in wanted.items()), 'problems': []}
    repinned = [dict(c, version='2.0.0') if c['name'] == 'app' else c for c in comps]
    tampered = dict(digests, **{wanted['crds']['archive']: 'b' * 64})
    del prov['charts'][1]                                                # operator
    got = bundle.vendored_archives(repinned, prov, tampered)
    assert got['problems'] == [
        'component crds: charts/crds/crds-1.0.0.tgz has sha256 %s, provenance.yaml records %s (changed after it was '
        'vendored)' % ('b' * 64, 'a' * 64),
        'component operator has no chart in the bundle (provenance.yaml): render the bundle again for this recipe '
        'with gpu_tray_bundle_vendor_charts: true',
        'component app: the bundle holds app 1.0.0 from https://charts.example.test, the recipe pins app 2.0.0 from '
        'https://charts.example.test']
    assert got['archives'] == {}
    prov['charts'][0]['archive'] = '../../etc/passwd'
    assert 'names no archive inside the bundle' in bundle.vendored_archives(comps, prov, digests)['problems'][0]


def test_the_gitops_files_are_yaml_with_literal_blocks_and_argocd_needs_the_repository():
    result = {'recipe': 'r1', 'digest': 'd' * 64, 'tiers': [], 'components': _stack()}
    gitops = {}
    gitops.update(bundle.argocd_files('r1', _stack(), GIT))
    gitops.update(bundle.flux_files('r1', _stack(), GIT))
    by_path = dict((p, v if isinstance(v, str) else bundle_files.dump(v)) for p, v in gitops.items())
    assert sorted(p for p in by_path if p.startswith('flux/charts/')) == [
        'flux/charts/%s/%s' % (r, f) for r in ('app-pre', 'networks', 'operator-post')
        for f in ('Chart.yaml', 'templates/manifests.yaml')]
    cm = by_path['argocd/argocd-cm-patch.yaml']
    assert 'resource.customizations.health.argoproj.io_Application: |' in cm
    assert yaml.safe_load(cm)['data']['resource.customizations.health.argoproj.io_Application'] == \
        bundle.APPLICATION_HEALTH_LUA
    assert result['components'] == _stack()


# --- exact objects and edge cases (each line here failed a planted bug in tools/mutate.py) ------------------------

def test_settings_defaults():
    assert bundle.settings() == {
        'repo_url': '', 'revision': 'HEAD', 'path': '', 'argocd_namespace': 'argocd', 'argocd_project': 'default',
        'destination_server': 'https://kubernetes.default.svc', 'flux_namespace': 'flux-system',
        'flux_source': 'flux-system', 'interval': '10m', 'retries': 5}
    assert bundle.settings({'retries': '3', 'revision': None})['retries'] == 3


def test_an_application_exactly():
    app = bundle.argocd_files('r1', _stack(), GIT)['argocd/apps/app-pre.yaml']
    assert app == {
        'apiVersion': 'argoproj.io/v1alpha1', 'kind': 'Application',
        'metadata': {'name': 'app-pre', 'namespace': 'argocd',
                     'labels': {'gpu-tray.cluster/recipe': 'r1', 'gpu-tray.cluster/component': 'app',
                                'gpu-tray.cluster/tier': '1'},
                     'annotations': {'argocd.argoproj.io/sync-wave': '4'},
                     'finalizers': ['resources-finalizer.argocd.argoproj.io']},
        'spec': {'project': 'default',
                 'destination': {'server': 'https://kubernetes.default.svc', 'namespace': 'ns-app'},
                 'syncPolicy': {'automated': {'prune': True, 'selfHeal': True},
                                'syncOptions': ['CreateNamespace=true', 'ServerSideApply=true'],
                                'retry': {'limit': 5, 'backoff': {'duration': '10s', 'factor': 2, 'maxDuration': '3m'}}},
                 'source': {'repoURL': GIT['repo_url'], 'targetRevision': 'HEAD', 'path': 'components/app-pre'}}}
    parent = bundle.argocd_files('r1', _stack(), GIT)['argocd/app-of-apps.yaml']
    assert parent['spec']['syncPolicy'] == {'automated': {'prune': True, 'selfHeal': True}}
    assert parent['metadata']['name'] == 'gpu-tray-r1'


def test_a_helmrelease_exactly():
    comps = [dict(c, timeout=None, chart_crds='none') if c['name'] == 'app' else c for c in _stack()]
    files = bundle.flux_files('r1', comps, {})
    assert files['flux/releases/app.yaml'] == {
        'apiVersion': 'helm.toolkit.fluxcd.io/v2', 'kind': 'HelmRelease',
        'metadata': {'name': 'app', 'namespace': 'flux-system',
                     'labels': {'gpu-tray.cluster/recipe': 'r1', 'gpu-tray.cluster/component': 'app',
                                'gpu-tray.cluster/tier': '1'}},
        'spec': {'interval': '10m', 'releaseName': 'app', 'targetNamespace': 'ns-app', 'storageNamespace': 'ns-app',
                 'timeout': '10m',
                 'install': {'createNamespace': True, 'remediation': {'retries': 5}, 'disableWait': True},
                 'upgrade': {'remediation': {'retries': 5, 'remediateLastFailure': True}, 'disableWait': True},
                 'chart': {'spec': {'chart': 'app', 'version': '1.0.0',
                                    'sourceRef': {'kind': 'HelmRepository', 'name': 'charts-example-test',
                                                  'namespace': 'flux-system'}}},
                 'values': {'replicas': 2},
                 'dependsOn': [{'name': 'app-pre'}]}}
    assert files['flux/charts/app-pre/Chart.yaml']['description'] == \
        'Manifests of app (pre), rendered by gpu_tray.cluster.render_bundle for r1'
    assert files['flux/charts/networks/Chart.yaml']['description'] == \
        'Manifests of networks (manifest set), rendered by gpu_tray.cluster.render_bundle for r1'
    assert files['flux/charts/app-pre/templates/manifests.yaml'] == bundle.WRAPPER_TEMPLATE


def test_a_chart_whose_templates_create_crds_and_one_with_crds_dir():
    """chart_crds templates: the HelmRelease marks every CRD keep (a kustomize patch); crds_dir: helm-controller
    replaces the crds/ on install and upgrade; none: neither."""
    for kind, renderers, crds in (('templates', True, None), ('crds_dir', False, 'CreateReplace'), ('none', False, None)):
        comps = [dict(c, chart_crds=kind) if c['name'] == 'app' else c for c in _stack()]
        spec = bundle.flux_files('r1', comps, {})['flux/releases/app.yaml']['spec']
        assert ('postRenderers' in spec) == renderers, kind
        if renderers:
            assert spec['postRenderers'] == [{'kustomize': {'patches': [{
                'target': {'group': 'apiextensions.k8s.io', 'kind': 'CustomResourceDefinition'},
                'patch': 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n'
                         '  name: every-crd-of-the-release\n  annotations:\n    helm.sh/resource-policy: keep\n'}]}}]
        assert (spec['install'].get('crds'), spec['upgrade'].get('crds')) == (crds, crds), kind


def test_unkept_crds_of_a_stored_release():
    text = ('---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: b.x}\n'
            '---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.x}\n'
            '---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n'
            'metadata: {name: k.x, annotations: {helm.sh/resource-policy: keep}}\n'
            '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n')
    assert bundle.unkept_crds(text) == ['a.x', 'b.x']
    import yaml
    assert bundle.unkept_crds(list(yaml.safe_load_all(text))) == ['a.x', 'b.x']
    assert bundle.unkept_crds('') == [] and bundle.unkept_crds(None) == []


@pytest.mark.parametrize('value, lua, cel', [(True, 'true', 'true'), (False, 'false', 'false'), (3, '3', '3'),
                                             ('it\'s', '"it\'s"', "'it\\'s'")])
def test_gate_values_of_every_type(value, lua, cel):
    gate = {'api_version': 'a.test/v1', 'kind': 'K', 'path': 'status.ok', 'value': value}
    script = bundle.argocd_gate_lua([gate])
    assert 'field(obj, {"status", "ok"}) ~= %s then' % lua in script and script.endswith('return hs\n')
    assert bundle.flux_health_exprs([gate]) == [{'apiVersion': 'a.test/v1', 'kind': 'K', 'current': 'status.ok == %s' % cel}]


def test_vendored_archive_checks_in_any_order():
    comps = _stack()
    wanted = bundle.vendor_paths(comps)
    digests = dict((w['archive'], 'a' * 64) for w in wanted.values())
    prov = bundle.provenance('r1', 'd' * 64, wanted, digests)
    by_name = dict((c['name'], c) for c in comps)
    order = [by_name['networks'], dict(by_name['app'], chart='other'), by_name['crds'], by_name['operator']]
    got = bundle.vendored_archives(order, prov, dict((k, v) for k, v in digests.items() if 'crds' not in k))
    assert got['problems'] == [
        'component app: the bundle holds app 1.0.0 from https://charts.example.test, the recipe pins other 1.0.0 from '
        'https://charts.example.test',
        'component crds: the archive charts/crds/crds-1.0.0.tgz is missing from the bundle']
    assert got['archives'] == {'operator': 'charts/operator/operator-1.0.0.tgz'}
    for bad in ('/etc/passwd', '../x.tgz', ''):
        prov['charts'][0]['archive'] = bad
        assert bundle.vendored_archives(comps, prov, digests)['problems'][0].startswith(
            'component crds: provenance.yaml names no archive inside the bundle')


class _Tagged(str):
    pass


def test_the_dumper_takes_ansible_s_tagged_values_and_writes_block_yaml():
    value = bundle_files._builtin({_Tagged('k'): [_Tagged('v'), True, None, 1.5, 2], 'o': {'x': False}})
    assert value == {'k': ['v', True, None, 1.5, 2], 'o': {'x': False}}
    assert not isinstance(list(value)[0], _Tagged) and not isinstance(value['k'][0], _Tagged) and value['k'][2] is None
    assert value['k'][1] is True and value['o']['x'] is False            # not int(True)
    other = object()
    assert bundle_files._builtin(other) is other
    text = bundle_files.dump({'z': {'b': ['c'], 'long': 'x' * 200}, 'lua': 'one\ntwo\n'})
    assert text == '---\nz:\n  b:\n  - c\n  long: %s\nlua: |\n  one\n  two\n' % ('x' * 200)   # keys in order


# Every shape a vendored bundle's provenance.yaml and its archives can take, each against the install check
# (vendored_archives: nothing unverified is installed) and the re-render (stale_archives: nothing unverified is kept).
# One chart component, app; "good" is the bundle as render_bundle.yml wrote it.
def _one_chart():
    comps = [_comp('app')]
    wanted = bundle.vendor_paths(comps)
    archive = wanted['app']['archive']
    digests = {archive: 'a' * 64}
    return comps, wanted, archive, digests, bundle.provenance('r1', 'd' * 64, wanted, digests)


def _entry(prov, **change):
    prov = {'recipe': prov['recipe'], 'recipe_digest': prov['recipe_digest'], 'charts': [dict(prov['charts'][0])]}
    for key, value in change.items():
        if value is KeyError:
            del prov['charts'][0][key]
        else:
            prov['charts'][0][key] = value
    return prov


PROVENANCE_SHAPES = [
    # (id, provenance doc from the good one, digests from the good ones)
    ('no-provenance', lambda p: None, lambda d: d),
    ('empty-provenance', lambda p: {}, lambda d: d),
    ('charts-null', lambda p: {'recipe': 'r1', 'charts': None}, lambda d: d),
    ('charts-empty', lambda p: {'recipe': 'r1', 'charts': []}, lambda d: d),
    ('entry-not-a-mapping', lambda p: {'recipe': 'r1', 'charts': ['app', None]}, lambda d: d),
    ('sha256-missing', lambda p: _entry(p, sha256=KeyError), lambda d: d),
    ('sha256-empty', lambda p: _entry(p, sha256=''), lambda d: d),
    ('sha256-null', lambda p: _entry(p, sha256=None), lambda d: d),
    ('sha256-mismatched', lambda p: _entry(p, sha256='b' * 64), lambda d: d),
    ('sha256-other-case', lambda p: _entry(p, sha256='A' * 64), lambda d: d),
    ('archive-missing-from-bundle', lambda p: p, lambda d: {}),
    ('archive-digest-null', lambda p: p, lambda d: dict((k, None) for k in d)),
    ('archive-digest-empty', lambda p: p, lambda d: dict((k, '') for k in d)),
    ('archive-changed', lambda p: p, lambda d: dict((k, 'c' * 64) for k in d)),
    ('archive-path-missing', lambda p: _entry(p, archive=KeyError), lambda d: d),
    ('archive-path-null', lambda p: _entry(p, archive=None), lambda d: d),
    ('archive-path-outside', lambda p: _entry(p, archive='../charts/app/app-1.0.0.tgz'), lambda d: d),
    ('archive-path-absolute', lambda p: _entry(p, archive='/srv/app-1.0.0.tgz'),
     lambda d: dict(d, **{'/srv/app-1.0.0.tgz': 'a' * 64})),
    ('chart-other', lambda p: _entry(p, chart='evil'), lambda d: d),
    ('version-other', lambda p: _entry(p, version='1.0.1'), lambda d: d),
    ('version-null', lambda p: _entry(p, version=None), lambda d: d),
    ('source-other', lambda p: _entry(p, source='https://mirror.example.test'), lambda d: d),
    ('source-missing', lambda p: _entry(p, source=KeyError), lambda d: d),
]


@pytest.mark.parametrize('shape, change_prov, change_digests', PROVENANCE_SHAPES, ids=[s[0] for s in PROVENANCE_SHAPES])
def test_an_unverified_archive_is_never_installed_nor_kept(shape, change_prov, change_digests):
    comps, wanted, archive, digests, prov = _one_chart()
    doc, have = change_prov(prov), change_digests(digests)
    installed = bundle.vendored_archives(comps, doc, have)
    assert installed['archives'] == {} and len(installed['problems']) == 1, (shape, installed)
    assert installed['problems'][0].startswith('component app'), installed['problems']
    assert bundle.stale_archives(wanted, doc, have) == ['app'], shape


def test_the_verified_archive_is_installed_and_kept_and_extra_files_are_neither():
    comps, wanted, archive, digests, prov = _one_chart()
    extra_file = dict(digests, **{'charts/evil/evil-6.6.6.tgz': 'e' * 64})
    extra_entry = dict(prov, charts=prov['charts'] + [
        {'component': 'evil', 'chart': 'evil', 'version': '6.6.6', 'source': 'https://evil.example.test',
         'archive': 'charts/evil/evil-6.6.6.tgz', 'sha256': 'e' * 64}])
    for doc, have in ((prov, digests), (prov, extra_file), (extra_entry, extra_file)):
        assert bundle.vendored_archives(comps, doc, have) == {'archives': {'app': archive}, 'problems': []}
        assert bundle.stale_archives(wanted, doc, have) == []
    # the closed-world inventory names the extra file, so the bundle digest tells the two bundles apart
    assert 'charts/evil/evil-6.6.6.tgz' in bundle.checksums(extra_file)
    assert bundle.bundle_digest(bundle.checksums(extra_file)) != bundle.bundle_digest(bundle.checksums(digests))


@pytest.mark.parametrize('digest', [None, ''])
def test_provenance_is_never_written_for_an_archive_without_a_digest(digest):
    _comps, wanted, archive, _digests, _prov = _one_chart()
    with pytest.raises(StackError, match='is missing'):
        bundle.provenance('r1', 'd' * 64, wanted, {archive: digest})
    with pytest.raises(StackError, match=r"the archive of crds \(charts/crds/crds-1.0.0.tgz\) is missing"):
        bundle.provenance('r1', 'd', bundle.vendor_paths(_stack()), {})          # every archive is needed
