# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure functions behind the GitOps bundle formats of render_bundle.yml (controller side, no I/O).

The input is the resolved recipe's components in install order (stack.resolve, with each component's rendered
manifests attached as ``objects``: {file name: [objects]}).

* ``releases(components)``: every release the bundle installs, in install order - per component an optional
  ``<name>-pre`` (manifests before the chart), the chart or manifest set itself, an optional ``<name>-post``.
* ``release_dependencies(components)``: {release: [releases it waits for]} - a component's first release waits
  for the last release of each of its dependencies, its later releases for the one before: exactly the recipe's
  DAG, with the pre -> chart -> post chain inside a component.
* ``sync_wave(tier, phase)``: AICR's Argo CD banding, tier * 4 + phase (pre 0, chart or manifests 1, post 2; 3 is
  AICR's readiness band, unused here: the gates are Argo CD health).
* ``argocd_files(...)`` / ``flux_files(...)``: the objects of each format as {path: object}.
* ``argocd_health(components)`` / ``flux_health_exprs(gate)``: the readiness gates as Argo CD Lua health checks and
  Flux CEL health expressions.
* ``provenance(...)``, ``checksums(...)``: the vendored charts' record and the closed-world sha256 inventory.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import json
import re

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.stack import StackError

FORMATS = ('helmfile', 'argocd', 'flux')
PHASES = ('pre', 'primary', 'post')
ARGOCD_API = 'argoproj.io/v1alpha1'
HELMRELEASE_API = 'helm.toolkit.fluxcd.io/v2'
SOURCE_API = 'source.toolkit.fluxcd.io/v1'
HELM_OCI_MEDIA_TYPE = 'application/vnd.cncf.helm.chart.content.v1.tar+gzip'
LABEL_PREFIX = 'gpu-tray.cluster/'
# the annotation the bundle's Application health check reads: a component installed without waiting (AICR's
# async kai-scheduler) counts as healthy once it is synced, so the next sync wave does not wait for it
WAIT_ANNOTATION = LABEL_PREFIX + 'wait'
# helm keeps an object carrying this annotation (value keep) when it uninstalls the release
KEEP_ANNOTATION = 'helm.sh/resource-policy'
DEFAULT_SETTINGS = {
    'repo_url': '', 'revision': 'HEAD', 'path': '', 'argocd_namespace': 'argocd', 'argocd_project': 'default',
    'destination_server': 'https://kubernetes.default.svc', 'flux_namespace': 'flux-system',
    'flux_source': 'flux-system', 'interval': '10m', 'retries': 5,
}
_SIMPLE_PATH = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$')
_LUA_IDENT = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def formats(value):
    """The requested formats as a list in FORMATS order, each once; a string may hold one or several (a,b)."""
    if value is None or value == '':
        return ['helmfile']
    items = value.split(',') if isinstance(value, str) else list(value)
    items = [str(i).strip() for i in items if str(i).strip()]
    unknown = sorted(set(items) - set(FORMATS))
    if unknown:
        raise StackError('bundle format(s) %s unknown: choose from %s (gpu_tray_bundle_format)'
                         % (', '.join(unknown), ', '.join(FORMATS)))
    return [f for f in FORMATS if f in items] or ['helmfile']


def settings(value=None):
    """The GitOps settings with defaults filled in; `path` normalised ('' for the repository root)."""
    out = dict(DEFAULT_SETTINGS)
    out.update(dict((k, v) for k, v in (value or {}).items() if v is not None))
    path = str(out['path'] or '').strip().strip('/')
    while path.startswith('./'):
        path = path[2:]
    out['path'] = '' if path in ('', '.') else path
    if '..' in out['path'].split('/'):
        raise StackError('the bundle path in the repository may not contain .. (got %r)' % value.get('path'))
    out['retries'] = int(out['retries'])
    return out


def _in_repo(cfg, relative):
    return '%s/%s' % (cfg['path'], relative) if cfg['path'] else relative


def releases(components):
    """[{name, component, phase, kind: chart|manifests, namespace, tier, files}] in install order."""
    out = []
    for comp in components:
        # the built objects' files and the fetched upstream manifests (stack_plan: comp['files'])
        files = sorted(comp['files'] if 'files' in comp else (comp.get('objects') or {}).keys())
        base = {'component': comp['name'], 'namespace': comp['namespace'], 'tier': comp['tier']}
        if comp['kind'] == 'manifests':
            out.append(dict(base, name=comp['name'], phase='primary', kind='manifests', files=files))
            continue
        if files and comp.get('manifests_phase') == 'pre':
            out.append(dict(base, name=comp['name'] + '-pre', phase='pre', kind='manifests', files=files))
        out.append(dict(base, name=comp['name'], phase='primary', kind='chart', files=[]))
        if files and comp.get('manifests_phase', 'post') == 'post':
            out.append(dict(base, name=comp['name'] + '-post', phase='post', kind='manifests', files=files))
    names = [r['name'] for r in out]
    clash = sorted(set(n for n in names if names.count(n) > 1))
    if clash:
        raise StackError('release name(s) %s occur twice (a component named like another one\'s -pre/-post '
                         'release); rename the site component' % ', '.join(clash))
    return out


def release_dependencies(components):
    """{release: [release, ...]}: the recipe's DAG over releases (see the module docstring)."""
    rels = releases(components)
    by_component = {}
    for rel in rels:
        by_component.setdefault(rel['component'], []).append(rel['name'])
    deps = {}
    for comp in components:
        names = by_component[comp['name']]
        deps[names[0]] = sorted(by_component[d][-1] for d in comp.get('depends_on') or [] if d in by_component)
        for before, name in zip(names, names[1:]):
            deps[name] = [before]
    return deps


def sync_wave(tier, phase):
    return int(tier) * 4 + PHASES.index(phase)


def slug(url, limit=63):
    """A Kubernetes object name for a repository URL (host and path, lower case, '-' separated, <= 63)."""
    text = re.sub(r'^[a-z]+://', '', str(url).lower())
    text = re.sub(r'[^a-z0-9]+', '-', text).strip('-')
    if len(text) > limit:
        digest = hashlib.sha256(str(url).encode('utf-8')).hexdigest()[:8]
        text = text[:limit - 9].rstrip('-') + '-' + digest
    return text


def chart_version(version):
    """A SemVer 2 chart version for a wrapper chart: the pin without a leading v; a digest pin becomes a
    pre-release of 0.0.0 (sha256:3248d8a5... -> 0.0.0-sha256-3248d8a52058)."""
    text = str(version)
    if text.startswith('sha256:'):
        return '0.0.0-sha256-' + text.split(':', 1)[1][:12]
    return text[1:] if text.startswith('v') else text


def _labels(recipe, rel):
    return {LABEL_PREFIX + 'recipe': recipe, LABEL_PREFIX + 'component': rel['component'],
            LABEL_PREFIX + 'tier': str(rel['tier'])}


def _components_by_name(components):
    return dict((c['name'], c) for c in components)


def _check_gitops_source(comp, vendored, fmt):
    if comp['kind'] == 'helm' and comp['repository'].startswith('/') and comp['name'] not in vendored:
        raise StackError('component %s comes from the local chart directory %s, which %s cannot read: vendor the '
                         'charts (gpu_tray_bundle_vendor_charts: true) or use an https:// or oci:// mirror'
                         % (comp['name'], comp['repository'], fmt))


# --- readiness gates -----------------------------------------------------------------------------------------

def _gate_path(gate):
    path = str(gate.get('path', ''))
    if not _SIMPLE_PATH.match(path):
        raise StackError('readiness gate %s %s: path %r is not a dotted field path, which Argo CD health and Flux '
                         'CEL expressions need' % (gate.get('kind'), gate.get('name', '*'), path))
    return path.split('.')


def _lua_literal(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value))   # a JSON string literal is a valid Lua string literal for these values


def _cel_literal(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (int, float)):
        return repr(value)
    return "'%s'" % str(value).replace('\\', '\\\\').replace("'", "\\'")


def argocd_gate_lua(gates):
    """The Lua health check of one kind: Healthy once every gated object reports its value, else Progressing.

    `gates` are the `ready` entries for that kind; an entry with a name gates that object only (the others of the
    kind are reported Healthy, as deploy_stack.yml waits for the named one only)."""
    lines = ['-- gpu_tray.cluster readiness gate (render_bundle.yml): the object reports the value deploy_stack.yml waits for',
             'local function field(o, path)',
             '  for _, key in ipairs(path) do',
             '    if type(o) ~= "table" then return nil end',
             '    o = o[key]',
             '  end',
             '  return o',
             'end',
             'local hs = {status = "Healthy", message = ""}']
    for gate in gates:
        path = _gate_path(gate)
        keys = ', '.join(json.dumps(k) for k in path)
        cond = 'field(obj, {%s}) ~= %s' % (keys, _lua_literal(gate['value']))
        if gate.get('name'):
            cond = 'obj.metadata.name == %s and %s' % (json.dumps(gate['name']), cond)
        lines += ['if %s then' % cond,
                  '  hs.status = "Progressing"',
                  '  hs.message = %s' % json.dumps('waiting for %s == %s' % (gate['path'], gate['value'])),
                  'end']
    lines.append('return hs')
    return '\n'.join(lines) + '\n'


APPLICATION_HEALTH_LUA = '\n'.join([
    '-- Application health (removed from Argo CD in 1.8; restored as Argo CD documents for app-of-apps with sync',
    '-- waves, docs/operator-manual/health.md). gpu_tray.cluster: an Application annotated',
    '-- %s: "false" (installed without waiting, as AICR installs kai-scheduler) counts once synced.' % WAIT_ANNOTATION,
    'local hs = {status = "Progressing", message = ""}',
    'if obj.status ~= nil and obj.status.health ~= nil then',
    '  hs.status = obj.status.health.status',
    '  if obj.status.health.message ~= nil then hs.message = obj.status.health.message end',
    'end',
    'local ann = obj.metadata.annotations',
    'if ann ~= nil and ann["%s"] == "false" and hs.status == "Progressing"' % WAIT_ANNOTATION,
    '    and obj.status ~= nil and obj.status.sync ~= nil and obj.status.sync.status == "Synced" then',
    '  hs.status = "Healthy"',
    '  hs.message = "synced; not waited for (%s: false)"' % WAIT_ANNOTATION,
    'end',
    'return hs',
]) + '\n'


def ready_gates(components):
    """{(group, kind): [gate, ...]} of every `ready` gate, refusing two gates on one kind that disagree."""
    out = {}
    for comp in components:
        for gate in (comp.get('readiness') or {}).get('ready') or []:
            group = str(gate['api_version']).rpartition('/')[0]
            entry = dict((k, gate.get(k)) for k in ('api_version', 'kind', 'name', 'path', 'value'))
            if entry not in out.setdefault((group, gate['kind']), []):
                out[(group, gate['kind'])].append(entry)
    return out


def argocd_health(components):
    """data of the argocd-cm patch: the Application health check and one Lua check per gated kind."""
    data = {'resource.customizations.health.argoproj.io_Application': APPLICATION_HEALTH_LUA}
    for (group, kind), gates in sorted(ready_gates(components).items()):
        data['resource.customizations.health.%s_%s' % (group, kind)] = argocd_gate_lua(gates)
    return data


def gates_of_release(comp, rel):
    """The `ready` gates of a component that belong to one of its releases: the release that creates the gated
    object - the manifests that hold its kind (NicClusterPolicy: network-operator-post), else the chart."""
    manifest_kinds = set(o.get('kind') for objs in (comp.get('objects') or {}).values() for o in objs)
    out = []
    for gate in (comp.get('readiness') or {}).get('ready') or []:
        in_manifests = gate['kind'] in manifest_kinds or comp['kind'] == 'manifests'
        if in_manifests == (rel['kind'] == 'manifests'):
            out.append(gate)
    return out


def flux_health_exprs(gates):
    """Flux healthCheckExprs (CEL; the object's top-level fields are the variables) for one component's gates."""
    out = []
    by_kind = {}
    for gate in gates:
        by_kind.setdefault((gate['api_version'], gate['kind']), []).append(gate)
    for (api_version, kind), items in sorted(by_kind.items()):
        conds = []
        for gate in items:
            test = '%s == %s' % ('.'.join(_gate_path(gate)), _cel_literal(gate['value']))
            # || absorbs an error on its other side: an object the gate does not name is current at once
            conds.append("(metadata.name != %s || %s)" % (_cel_literal(gate['name']), test) if gate.get('name')
                         else test)
        # an object without the field is not current: the expression does not evaluate to true, so the poller
        # keeps waiting (as the examples in helm-controller's docs/spec/v2/helmreleases.md do)
        out.append({'apiVersion': api_version, 'kind': kind, 'current': ' && '.join(conds)})
    return out


# --- Argo CD -------------------------------------------------------------------------------------------------

def argocd_files(recipe, components, cfg, vendored=None):
    """{path: object}: argocd/app-of-apps.yaml, argocd/apps/<release>.yaml, argocd/argocd-cm-patch.yaml."""
    cfg = settings(cfg)
    vendored = vendored or {}
    if not cfg['repo_url']:
        raise StackError('the argocd format needs the Git repository the bundle is committed to: set '
                         'gpu_tray_bundle_repo_url (stack_bundle_repo_url)')
    comps = _components_by_name(components)
    out = {}
    retry = {'limit': cfg['retries'], 'backoff': {'duration': '10s', 'factor': 2, 'maxDuration': '3m'}}
    for rel in releases(components):
        comp = comps[rel['component']]
        _check_gitops_source(comp, vendored, 'Argo CD')
        git = {'repoURL': cfg['repo_url'], 'targetRevision': cfg['revision']}
        options = ['CreateNamespace=true', 'ServerSideApply=true']
        if rel['kind'] == 'manifests':
            folder = comp['name'] if comp['kind'] == 'manifests' else rel['name']
            source = {'source': dict(git, path=_in_repo(cfg, 'components/' + folder))}
            if (comp.get('readiness') or {}).get('wait_for_crds'):
                # stand-in for wait_for_crds (README): applied after the wave that creates the CRDs is healthy;
                # a CRD that is still missing fails the sync, which is retried (syncPolicy.retry)
                options.append('SkipDryRunOnMissingResource=true')
        else:
            values = {'valueFiles': ['$values/' + _in_repo(cfg, 'components/%s/values.yaml' % comp['name'])],
                      'releaseName': comp['name']}
            if comp['name'] in vendored:
                chart = dict(git, path=_in_repo(cfg, vendored[comp['name']]['chart_dir']), helm=values)
            elif comp['repository'].startswith('oci://'):
                # Argo CD >= 3.1 reads an OCI Helm chart natively: the chart's own repository, path '.'
                chart = {'repoURL': '%s/%s' % (comp['repository'], comp['chart']), 'path': '.',
                         'targetRevision': str(comp['version']), 'helm': values}
            else:
                chart = {'repoURL': comp['repository'], 'chart': comp['chart'],
                         'targetRevision': str(comp['version']), 'helm': values}
            source = {'sources': [chart, dict(git, ref='values')]}
        annotations = {'argocd.argoproj.io/sync-wave': str(sync_wave(rel['tier'], rel['phase']))}
        if rel['kind'] == 'chart' and not comp['wait']:
            annotations[WAIT_ANNOTATION] = 'false'
        app = {'apiVersion': ARGOCD_API, 'kind': 'Application',
               'metadata': {'name': rel['name'], 'namespace': cfg['argocd_namespace'],
                            'labels': _labels(recipe, rel), 'annotations': annotations,
                            'finalizers': ['resources-finalizer.argocd.argoproj.io']},
               'spec': dict({'project': cfg['argocd_project'],
                             'destination': {'server': cfg['destination_server'], 'namespace': rel['namespace']},
                             'syncPolicy': {'automated': {'prune': True, 'selfHeal': True},
                                            'syncOptions': options, 'retry': retry}}, **source)}
        out['argocd/apps/%s.yaml' % rel['name']] = app
    out['argocd/app-of-apps.yaml'] = {
        'apiVersion': ARGOCD_API, 'kind': 'Application',
        'metadata': {'name': 'gpu-tray-' + recipe, 'namespace': cfg['argocd_namespace'],
                     'labels': {LABEL_PREFIX + 'recipe': recipe},
                     'finalizers': ['resources-finalizer.argocd.argoproj.io']},
        'spec': {'project': cfg['argocd_project'],
                 'destination': {'server': cfg['destination_server'], 'namespace': cfg['argocd_namespace']},
                 'source': {'repoURL': cfg['repo_url'], 'targetRevision': cfg['revision'],
                            'path': _in_repo(cfg, 'argocd/apps')},
                 'syncPolicy': {'automated': {'prune': True, 'selfHeal': True}}}}
    out['argocd/argocd-cm-patch.yaml'] = {
        'apiVersion': 'v1', 'kind': 'ConfigMap',
        'metadata': {'name': 'argocd-cm', 'namespace': cfg['argocd_namespace'],
                     'labels': {'app.kubernetes.io/name': 'argocd-cm', 'app.kubernetes.io/part-of': 'argocd'}},
        'data': argocd_health(components)}
    return out


# --- Flux ----------------------------------------------------------------------------------------------------

# each file its own document: a fetched upstream manifest starts without '---', and two files glued together would
# be one document in which the second file's keys overwrite the first's
WRAPPER_TEMPLATE = ('{{- /* gpu_tray.cluster: the manifests under files/ as they are (never templated) */ -}}\n'
                    '{{- range $path, $_ := .Files.Glob "files/*.yaml" }}\n'
                    '---\n'
                    '{{ $.Files.Get $path }}\n'
                    '{{- end }}\n')


def keeps_crds(comp):
    """How a chart component's values make helm keep the CRDs its templates create ('' when they do not): cert-manager's
    ``crds.keep`` and prometheus-operator-crds' ``crds.annotations`` put ``helm.sh/resource-policy: keep`` on them."""
    crds = (comp.get('values') or {}).get('crds') if comp['kind'] == 'helm' else None
    if not isinstance(crds, dict):
        return ''
    if crds.get('enabled') is True and crds.get('keep') is True:
        return '`crds.keep: true`'
    if (crds.get('annotations') or {}).get(KEEP_ANNOTATION) == 'keep':
        return '`crds.annotations`'
    return ''


# --- CRDs a chart creates from its templates --------------------------------------------------------------------
# A chart whose templates create CRDs without the keep mark (catalog chart_crds: templates - agentgateway-crds,
# NodeWright's operator, and the charts whose CRDs are not known) gets it from the bundle: one strategic-merge patch of
# every CustomResourceDefinition, applied by kustomize after helm rendered the chart - Flux's HelmRelease
# postRenderers (kustomize in helm-controller), helmfile's postRenderer (kubectl kustomize, KEEP_SCRIPT), and
# deploy_stack's helm --post-renderer (roles/stack/templates/keep-crds.py.j2, the same patch without kustomize).
# helm uninstall reads the mark from the release as stored, so a removal keeps those CRDs and their custom resources.
KEEP_TARGET = {'group': 'apiextensions.k8s.io', 'kind': 'CustomResourceDefinition'}
KEEP_PATCH = ('apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n'
              '  name: every-crd-of-the-release\n  annotations:\n    %s: keep\n' % KEEP_ANNOTATION)
# the kustomization helmfile's post-renderer builds around helm's output (rendered.yaml): one line of JSON
KEEP_KUSTOMIZATION = json.dumps({'apiVersion': 'kustomize.config.k8s.io/v1beta1', 'kind': 'Kustomization',
                                 'resources': ['rendered.yaml'],
                                 'patches': [{'target': KEEP_TARGET, 'patch': KEEP_PATCH}]}, sort_keys=True)
KEEP_SCRIPT = '\n'.join([
    '# gpu_tray.cluster: helm.sh/resource-policy keep on every CustomResourceDefinition of the release (kubectl kustomize,',
    '# the patch of the Flux HelmReleases\' postRenderers), so that helm uninstall keeps them',
    'set -eu',
    'work=$(mktemp -d)',
    "trap 'rm -rf \"$work\"' EXIT",
    'cat > "$work/rendered.yaml"',
    "cat > \"$work/kustomization.yaml\" <<'KUSTOMIZATION'",
    KEEP_KUSTOMIZATION,
    'KUSTOMIZATION',
    '"${KUBECTL:-kubectl}" kustomize "$work"', ''])


def bundle_keeps_crds(comp):
    """True for a chart whose templated CRDs the bundle marks keep (chart_crds: templates, the default)."""
    return comp['kind'] == 'helm' and comp.get('chart_crds', 'templates') == 'templates'


def crds_never_upgraded(comp):
    """True for a chart whose CRDs are in crds/ with nothing in the chart to upgrade them (chart_crds: crds_dir)."""
    return comp['kind'] == 'helm' and comp.get('chart_crds') == 'crds_dir'


def flux_keep_post_renderers():
    """A HelmRelease's spec.postRenderers that mark every CRD of the release keep."""
    return [{'kustomize': {'patches': [{'target': dict(KEEP_TARGET), 'patch': KEEP_PATCH}]}}]


def helmfile_keep_post_renderer():
    """A helmfile release's postRenderer / postRendererArgs doing the same (sh -c: no file, no path to resolve)."""
    return {'postRenderer': 'sh', 'postRendererArgs': ['-c', KEEP_SCRIPT]}


def unkept_crds(manifest):
    """The names of the CustomResourceDefinitions a release's stored manifest holds without
    ``helm.sh/resource-policy: keep``, sorted - what helm uninstall would delete. ``manifest``: ``helm get manifest``'s
    YAML stream, or its documents as a list (kubernetes.core.helm_info's ``status.manifest``)."""
    if isinstance(manifest, (list, tuple)):
        docs = manifest
    else:
        import yaml

        class Loader(yaml.SafeLoader):   # pylint: disable=too-many-ancestors
            """YAML 1.1's "=" (the value type, a bare = in a CRD's enum) read as the string it is to helm."""
        Loader.add_constructor('tag:yaml.org,2002:value', lambda loader, node: loader.construct_scalar(node))
        docs = yaml.load_all(manifest or '', Loader=Loader)   # nosec: a SafeLoader
    out = []
    for doc in docs:
        if isinstance(doc, dict) and doc.get('kind') == 'CustomResourceDefinition':
            meta = doc.get('metadata') or {}
            if (meta.get('annotations') or {}).get(KEEP_ANNOTATION) != 'keep':
                out.append(str(meta.get('name')))
    return sorted(out)


def show_crds_argv(repository, chart, version, archive=None):
    """helm's arguments (after the binary) that print a chart's crds/ at its pin: a vendored archive, an https://
    repository, an oci:// reference or an absolute local directory of unpacked charts."""
    if archive:
        return ['show', 'crds', archive]
    if repository.startswith('https://'):
        return ['show', 'crds', chart, '--repo', repository, '--version', str(version)]
    if repository.startswith('oci://'):
        return ['show', 'crds', '%s/%s' % (repository, chart), '--version', str(version)]
    return ['show', 'crds', '%s/%s' % (repository, chart)]


def crd_files(comp):
    """The files of a component's manifests that hold CustomResourceDefinitions, sorted: every fetched upstream
    manifest (``manifest_urls``: the catalog fetches CRDs only; the render checks each file's kinds once it is
    fetched) and every built or site file whose objects are all CRDs. A local chart carries them in ``crds/``, which
    helm installs and never deletes: uninstalling the release (a removal, a pruned or disabled component) keeps the
    CRDs and with them every custom resource of the cluster's users. A file that mixes a CRD with other kinds is
    refused: its CRD would go with the release."""
    out = [entry['file'] for entry in comp.get('manifest_urls') or []]
    for name, objects in sorted((comp.get('objects') or {}).items()):
        kinds = set(o.get('kind') for o in objects)
        if 'CustomResourceDefinition' not in kinds:
            continue
        if kinds != {'CustomResourceDefinition'}:
            raise StackError('component %s: manifest %s holds a CustomResourceDefinition and other kinds (%s): put '
                             'the CRDs in a file of their own, so that removing the release keeps them'
                             % (comp['name'], name, ', '.join(sorted(k for k in kinds if k != 'CustomResourceDefinition'))))
        out.append(name)
    return sorted(out)


def local_chart_files(recipe, comp, rel, base):
    """{path: object or text} of the local chart ``base`` that carries a manifest release (Flux's, and helmfile's for
    a release with CRDs): Chart.yaml and templates/manifests.yaml (the files under files/ as they are); the files
    themselves - files/<name>, and crds/<name> for CRDs - are the caller's (local_chart_paths)."""
    return {'%s/Chart.yaml' % base: wrapper_chart(recipe, comp, rel),
            '%s/templates/manifests.yaml' % base: WRAPPER_TEMPLATE}


def local_chart_path(base, comp, name):
    """Where a manifest file goes in a local chart: crds/ for a CRD file (kept by helm on uninstall), else files/."""
    return '%s/%s/%s' % (base, 'crds' if name in crd_files(comp) else 'files', name)


def wrapper_chart(recipe, comp, rel):
    """Chart.yaml of the local chart that carries a manifest release for Flux (files/ holds the manifests)."""
    return {'apiVersion': 'v2', 'name': rel['name'], 'version': chart_version(comp['version']), 'type': 'application',
            'description': 'Manifests of %s (%s), rendered by gpu_tray.cluster.render_bundle for %s'
                           % (comp['name'], rel['phase'] if rel['phase'] != 'primary' else 'manifest set', recipe)}


def flux_files(recipe, components, cfg, vendored=None):
    """{path: object or text}: flux/sources/*.yaml, flux/releases/<release>.yaml, flux/kustomization.yaml and the
    wrapper charts flux/charts/<release>/ (Chart.yaml, templates/manifests.yaml; the files are the caller's)."""
    cfg = settings(cfg)
    vendored = vendored or {}
    comps = _components_by_name(components)
    deps = release_dependencies(components)
    ns = cfg['flux_namespace']
    git_ref = {'kind': 'GitRepository', 'name': cfg['flux_source'], 'namespace': ns}
    out = {}
    sources = {}
    for rel in releases(components):
        comp = comps[rel['component']]
        _check_gitops_source(comp, vendored, 'Flux')
        spec = {'interval': cfg['interval'], 'releaseName': rel['name'], 'targetNamespace': rel['namespace'],
                'storageNamespace': rel['namespace'], 'timeout': str(comp.get('timeout') or '10m'),
                'install': {'createNamespace': True, 'remediation': {'retries': cfg['retries']}},
                'upgrade': {'remediation': {'retries': cfg['retries'], 'remediateLastFailure': True}}}
        if rel['kind'] == 'manifests':
            spec['chart'] = {'spec': {'chart': './' + _in_repo(cfg, 'flux/charts/%s' % rel['name']),
                                      'sourceRef': git_ref, 'reconcileStrategy': 'Revision'}}
            out.update(local_chart_files(recipe, comp, rel, 'flux/charts/%s' % rel['name']))
            if crd_files(comp):
                # helm installs crds/ but never upgrades it: CreateReplace lets a new pin replace the CRDs
                spec['install']['crds'] = 'CreateReplace'
                spec['upgrade']['crds'] = 'CreateReplace'
        else:
            if comp['name'] in vendored:
                spec['chart'] = {'spec': {'chart': './' + _in_repo(cfg, vendored[comp['name']]['archive']),
                                          'sourceRef': git_ref}}
            elif comp['repository'].startswith('oci://'):
                name = comp['name']
                sources['flux/sources/oci-%s.yaml' % name] = {
                    'apiVersion': SOURCE_API, 'kind': 'OCIRepository', 'metadata': {'name': name, 'namespace': ns},
                    'spec': {'interval': cfg['interval'], 'url': '%s/%s' % (comp['repository'], comp['chart']),
                             'ref': {'tag': str(comp['version'])},
                             'layerSelector': {'mediaType': HELM_OCI_MEDIA_TYPE, 'operation': 'copy'}}}
                spec['chartRef'] = {'kind': 'OCIRepository', 'name': name, 'namespace': ns}
            else:
                name = slug(comp['repository'])
                sources['flux/sources/helm-%s.yaml' % name] = {
                    'apiVersion': SOURCE_API, 'kind': 'HelmRepository', 'metadata': {'name': name, 'namespace': ns},
                    'spec': {'interval': cfg['interval'], 'url': comp['repository']}}
                spec['chart'] = {'spec': {'chart': comp['chart'], 'version': str(comp['version']),
                                          'sourceRef': {'kind': 'HelmRepository', 'name': name, 'namespace': ns}}}
            if comp.get('values'):
                spec['values'] = comp['values']
            if bundle_keeps_crds(comp):
                spec['postRenderers'] = flux_keep_post_renderers()
            if crds_never_upgraded(comp):
                # helm installs crds/ once and never upgrades it: CreateReplace lets a new pin replace the CRDs
                spec['install']['crds'] = 'CreateReplace'
                spec['upgrade']['crds'] = 'CreateReplace'
            if not comp['wait']:
                spec['install']['disableWait'] = True
                spec['upgrade']['disableWait'] = True
        gates_here = gates_of_release(comp, rel)
        if gates_here:
            spec['healthCheckExprs'] = flux_health_exprs(gates_here)
        if deps[rel['name']]:
            spec['dependsOn'] = [{'name': d} for d in deps[rel['name']]]
        out['flux/releases/%s.yaml' % rel['name']] = {
            'apiVersion': HELMRELEASE_API, 'kind': 'HelmRelease',
            'metadata': {'name': rel['name'], 'namespace': ns, 'labels': _labels(recipe, rel)},
            'spec': spec}
    out.update(sources)
    resources = sorted(p[len('flux/'):] for p in out if p.startswith(('flux/sources/', 'flux/releases/')))
    out['flux/kustomization.yaml'] = {'apiVersion': 'kustomize.config.k8s.io/v1beta1', 'kind': 'Kustomization',
                                      'resources': resources}
    return out


# --- vendored charts -----------------------------------------------------------------------------------------

def vendor_paths(components):
    """{component: {chart, version, source, archive, chart_dir, pull}} for every chart component: where its archive
    goes in the bundle and the helm pull arguments (argv tail) that fetch it."""
    out = {}
    for comp in components:
        if comp['kind'] != 'helm':
            continue
        repo, chart, version = comp['repository'], comp['chart'], str(comp['version'])
        if repo.startswith('oci://'):
            pull = {'ref': '%s/%s' % (repo, chart), 'args': ['--version', version]}
        elif repo.startswith('/'):
            pull = {'ref': '%s/%s' % (repo, chart), 'args': [], 'package': True}
        else:
            pull = {'ref': chart, 'args': ['--repo', repo, '--version', version]}
        out[comp['name']] = {'chart': chart, 'version': version, 'source': repo,
                             'archive': 'charts/%s/%s-%s.tgz' % (comp['name'], chart, version),
                             'chart_dir': 'charts/%s/%s' % (comp['name'], chart), 'pull': pull}
    return out


def stale_archives(wanted, previous, digests):
    """Components whose archive must be (re)pulled: no earlier provenance entry with the same chart, version,
    source and archive, or the file's sha256 (`digests`: {archive path: sha256 or None when missing}) differs from
    the one recorded. A chart that is already there as recorded is kept: a re-render needs no network."""
    recorded = dict((e.get('component'), e) for e in (previous or {}).get('charts') or [] if isinstance(e, dict))
    out = []
    for name, want in sorted(wanted.items()):
        old = recorded.get(name) or {}
        same = all(str(old.get(k)) == str(want[k]) for k in ('chart', 'version', 'source', 'archive'))
        if not same or not digests.get(want['archive']) or digests[want['archive']] != old.get('sha256'):
            out.append(name)
    return out


def provenance(recipe, recipe_digest, wanted, digests):
    """provenance.yaml content: recipe, recipe_digest and per chart its component, chart, version, source, archive
    path and the sha256 of the archive (in install order)."""
    charts = []
    for name, want in wanted.items():
        if not digests.get(want['archive']):
            raise StackError('the archive of %s (%s) is missing' % (name, want['archive']))
        charts.append({'component': name, 'chart': want['chart'], 'version': want['version'],
                       'source': want['source'], 'archive': want['archive'], 'sha256': digests[want['archive']]})
    return {'recipe': recipe, 'recipe_digest': recipe_digest, 'charts': charts}


def checksums(digests):
    """checksums.txt: `<sha256>  <path>` per file, sorted by path (sha256sum -c reads it)."""
    return ''.join('%s  %s\n' % (digests[p], p) for p in sorted(digests))


def bundle_digest(checksums_text):
    """The bundle digest: sha256 of checksums.txt, i.e. over every file of the bundle and its path."""
    return hashlib.sha256(checksums_text.encode('utf-8')).hexdigest()


def vendored_archives(components, provenance_doc, digests):
    """Install from a vendored bundle: {'archives': {component: archive path}, 'problems': [sentence, ...]}.

    Every chart component must have a provenance entry with the chart, version and source the recipe pins (the
    bundle was rendered for these pins), and its archive's sha256 (`digests`: {archive path: sha256}, missing
    files absent) must be the recorded one."""
    entries = dict((e.get('component'), e) for e in (provenance_doc or {}).get('charts') or [] if isinstance(e, dict))
    archives, problems = {}, []
    for comp in components:
        if comp['kind'] != 'helm':
            continue
        name = comp['name']
        entry = entries.get(name)
        if not entry:
            problems.append('component %s has no chart in the bundle (provenance.yaml): render the bundle again '
                            'for this recipe with gpu_tray_bundle_vendor_charts: true' % name)
            continue
        want = (comp['chart'], str(comp['version']), comp['repository'])
        have = (entry.get('chart'), str(entry.get('version')), entry.get('source'))
        if want != have:
            problems.append('component %s: the bundle holds %s %s from %s, the recipe pins %s %s from %s'
                            % ((name,) + have + want))
            continue
        archive = str(entry.get('archive') or '')
        if not archive or archive.startswith('/') or '..' in archive.split('/'):
            problems.append('component %s: provenance.yaml names no archive inside the bundle (%r)' % (name, archive))
        elif not digests.get(archive):
            problems.append('component %s: the archive %s is missing from the bundle' % (name, archive))
        elif digests[archive] != entry.get('sha256'):
            problems.append('component %s: %s has sha256 %s, provenance.yaml records %s (changed after it was '
                            'vendored)' % (name, archive, digests[archive], entry.get('sha256')))
        else:
            archives[name] = archive
    return {'archives': archives, 'problems': problems}
