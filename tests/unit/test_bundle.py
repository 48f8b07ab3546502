# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GitOps bundle functions (plugins/plugin_utils/bundle.py): formats, releases and their dependency graph, sync
waves, Argo CD and Flux objects, readiness gates, vendored charts (what to pull, provenance, checks before an
install) and the checksums / bundle digest. The rendered bundles of the five recipes are held against the real
CRDs in tests/cluster/test_bundle_formats.py."""

import hashlib

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.stack import StackError
from ansible_collections.gpu_tray.cluster.plugins.filter import stack_bundle_files, stack_bundle_provenance

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


@pytest.mark.parametrize('path, want', [('', ''), ('.', ''), ('./a/b/', 'a/b'), ('/a', 'a')])
def test_the_bundle_path_in_the_repository_is_normalised(path, want):
    assert bundle.settings({'path': path})['path'] == want


def test_a_bundle_path_leaving_the_repository_is_refused():
    with pytest.raises(StackError, match=r'may not contain \.\.'):
        bundle.settings({'path': 'a/../../b'})


def test_releases_chain_pre_chart_post_and_depends_on_is_the_dag():
    rels = bundle.releases(_stack())
    assert [(r['name'], r['phase'], r['kind']) for r in rels] == [
        ('crds', 'primary', 'chart'), ('operator', 'primary', 'chart'), ('operator-post', 'post', 'manifests'),
        ('app-pre', 'pre', 'manifests'), ('app', 'primary', 'chart'), ('networks', 'primary', 'manifests')]
    assert bundle.release_dependencies(_stack()) == {
        'crds': [], 'operator': [], 'operator-post': ['operator'], 'app-pre': ['crds'], 'app': ['app-pre'],
        'networks': ['operator-post']}


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


def test_provenance_needs_every_archive():
    wanted = bundle.vendor_paths(_stack())
    with pytest.raises(AnsibleFilterError, match=r"the archive of crds \(charts/crds/crds-1.0.0.tgz\) is missing"):
        stack_bundle_provenance.stack_bundle_provenance(wanted, 'r1', 'd', {})


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


def test_the_filter_writes_yaml_with_literal_blocks_and_wraps_errors():
    files = stack_bundle_files.stack_bundle_files(_stack(), 'r1', 'argocd,flux', GIT)
    by_path = dict((f['path'], f['content']) for f in files)
    assert [p for p in by_path if p.startswith('flux/charts/')] == [
        'flux/charts/%s/%s' % (r, f) for r in ('app-pre', 'networks', 'operator-post')
        for f in ('Chart.yaml', 'templates/manifests.yaml')]
    cm = by_path['argocd/argocd-cm-patch.yaml']
    assert 'resource.customizations.health.argoproj.io_Application: |' in cm
    assert yaml.safe_load(cm)['data']['resource.customizations.health.argoproj.io_Application'] == \
        bundle.APPLICATION_HEALTH_LUA
    assert stack_bundle_files.stack_bundle_files(_stack(), 'r1', 'helmfile', GIT) == []
    with pytest.raises(AnsibleFilterError, match='set gpu_tray_bundle_repo_url'):
        stack_bundle_files.stack_bundle_files(_stack(), 'r1', ['argocd'], {})
