# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every file of a rendered bundle, from a plan (stack_plan.plan), as text (pure, no I/O).

* ``files(plan, formats, cfg, vendored, provenance_doc)``: [{path, content}] - plan.yaml, README.md, each format's
  files (helmfile.yaml, argocd/, flux/), components/<name>/values.yaml and every manifest file, provenance.yaml.
* ``fetches(plan, formats)``: the manifests fetched from their pinned URLs and where each goes in the bundle.
* ``helmfile(plan, repositories, vendored)``, ``readme(...)``: the texts, written per recipe (a recipe without SR-IOV
  networks gets no word about them).
* ``layout(...)``: the paths a render keeps (everything else under components/, argocd/, flux/, charts/ is removed).
* ``checksums(...)``: checksums.txt over what the bundle will hold.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib

from collections.abc import Mapping

import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle, stack_plan

MANAGED_DIRS = ('components', 'argocd', 'flux', 'charts', 'helmfile', 'mirror')
# top-level files a render writes only for some settings: removed when this render does not write them
OPTIONAL_ROOT_FILES = ('helmfile.yaml', 'provenance.yaml')
PROVENANCE_HEADER = ('# Charts vendored by gpu_tray.cluster.render_bundle: the sha256 of each archive as it was pulled '
                     'from its source.\n# Check the bundle: sha256sum -c checksums.txt\n')


def _builtin(value):
    """Plain builtin types (ansible-core hands tagged str/int subclasses around): the YAML dumper takes no others."""
    if isinstance(value, Mapping):
        return dict((_builtin(k), _builtin(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_builtin(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    for kind in (str, int, float):
        if isinstance(value, kind):
            return kind(value)
    return value


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper, data):
    # multi-line text (scripts, Lua health checks, the wrapper chart template) as a literal block, readable in review
    style = '|' if '\n' in data else None
    return dumper.represent_scalar('tag:yaml.org,2002:str', data, style=style)


_Dumper.add_representer(str, _str)


def dump(data):
    """One YAML document, key order kept, lines never folded."""
    return '---\n' + yaml.dump(_builtin(data), Dumper=_Dumper, default_flow_style=False, sort_keys=False,
                               width=1000, indent=2)


def dump_all(objects):
    return ''.join(dump(obj) for obj in objects)


def folder(comp):
    """components/<folder>/ of a component's manifests: its name for a manifest set, <name>-<phase> for a chart's."""
    return comp['name'] if comp['kind'] == 'manifests' else '%s-%s' % (comp['name'], comp['manifests_phase'])


def fetches(plan, formats):
    """[{url, sha256, dest}] of every fetched manifest: the component's folder, and the wrapper chart Flux installs."""
    out = []
    for comp in plan['components']:
        for entry in comp['manifest_urls']:
            dests = ['components/%s/%s' % (folder(comp), entry['file'])]
            dests += [bundle.local_chart_path(base, comp, entry['file']) for base in _local_charts(comp, formats)]
            out.extend({'url': entry['url'], 'sha256': entry['sha256'], 'dest': d} for d in dests)
    return out


def _local_charts(comp, formats):
    """The local charts that carry a component's manifest release: Flux's wrapper chart (every manifest release), and
    for helmfile the chart of a release holding CRDs (in crds/, which helm never deletes; a plain folder of manifests
    would be turned into a chart with the CRDs in templates/, deleted on uninstall)."""
    out = []
    if 'flux' in formats:
        out.append('flux/charts/' + folder(comp))
    if 'helmfile' in formats and bundle.crd_files(comp):
        out.append('helmfile/charts/' + folder(comp))
    return out


def repository_names(plan, repositories, vendored):
    """{repository URL: helmfile repository name}: the key of stack_repositories that holds the URL (jetstack,
    ngc, ...), else a slug of the URL (a site component's own repository)."""
    known = dict((str(url).rstrip('/'), key) for key, url in sorted((repositories or {}).items()))
    out = {}
    for comp in plan['components']:
        repo = comp['repository']
        if comp['kind'] != 'helm' or repo.startswith('/') or comp['name'] in vendored or repo in out:
            continue
        out[repo] = known.get(repo, bundle.slug(repo)).replace('_', '-')
    return out


def _staged(plan):
    """{component: [CRD, ...]} of the components whose CRDs an operator creates later (readiness.crds_from_operator)."""
    return dict((c['name'], list(c['readiness']['crds_from_operator'])) for c in plan['components']
                if c['readiness'].get('crds_from_operator'))


def _wait_commands(crds):
    out = []
    for crd in crds:
        out += ['kubectl wait --for=create crd/%s --timeout=10m' % crd,
                'kubectl wait --for=condition=Established crd/%s --timeout=2m' % crd]
    return out


def helmfile(plan, repositories=None, vendored=None):
    """helmfile.yaml: one level per tier (every release of tier n needs the last release of each component of tier
    n-1), a chart component's manifests as the plain-manifest releases <name>-pre / <name>-post, named repositories."""
    vendored = vendored or {}
    repos = repository_names(plan, repositories, vendored)
    ids = {}
    for comp in plan['components']:
        own = []
        ns = comp['namespace']
        if comp['files'] and (comp['kind'] == 'manifests' or comp['manifests_phase'] == 'pre'):
            own.append('%s/%s%s' % (ns, comp['name'], '-pre' if comp['kind'] == 'helm' else ''))
        if comp['kind'] == 'helm':
            own.append('%s/%s' % (ns, comp['name']))
        if comp['files'] and comp['kind'] == 'helm' and comp['manifests_phase'] == 'post':
            own.append('%s/%s-post' % (ns, comp['name']))
        ids[comp['name']] = own
    releases = []
    for tier_index, tier in enumerate(plan['tiers']):
        needs = [ids[n][-1] for n in plan['tiers'][tier_index - 1]] if tier_index > 0 else []
        for comp in (c for c in plan['components'] if c['name'] in tier):
            for index, rid in enumerate(ids[comp['name']]):
                name = rid.split('/', 1)[1]
                rel = {'name': name, 'namespace': comp['namespace'], 'createNamespace': True}
                if name == comp['name'] and comp['kind'] == 'helm':
                    if comp['name'] in vendored:
                        rel['chart'] = './' + vendored[comp['name']]['archive']
                    elif comp['repository'].startswith('/'):
                        rel['chart'] = '%s/%s' % (comp['repository'], comp['chart'])
                        rel['version'] = str(comp['version'])
                    else:
                        rel['chart'] = '%s/%s' % (repos[comp['repository']], comp['chart'])
                        rel['version'] = str(comp['version'])
                    rel['values'] = ['components/%s/values.yaml' % comp['name']]
                    # helm's --atomic turns --wait on: a component installed without waiting is not atomic either
                    rel['wait'] = comp['wait']
                    rel['atomic'] = comp['wait']
                    if bundle.bundle_keeps_crds(comp):
                        # not transformers/jsonPatches: those run the chart through chartify, which moves CRDs of
                        # templates into crds/ (installed once, never upgraded) and renders lookup() empty
                        rel.update(bundle.helmfile_keep_post_renderer())
                elif bundle.crd_files(comp):
                    rel['chart'] = './helmfile/charts/%s' % name
                else:
                    rel['chart'] = './components/%s' % name
                rel['labels'] = {'tier': str(tier_index), 'component': comp['name']}
                release_needs = needs if index == 0 else [ids[comp['name']][index - 1]]
                if release_needs:
                    rel['needs'] = release_needs
                releases.append(rel)
    doc = {}
    if repos:
        doc['repositories'] = []
        for url, name in sorted(repos.items(), key=lambda item: item[1]):
            doc['repositories'].append({'name': name, 'url': url[len('oci://'):], 'oci': True}
                                       if url.startswith('oci://') else {'name': name, 'url': url})
    doc['releases'] = releases
    header = ['# Recipe %s, digest %s.' % (plan['recipe'], plan['digest']),
              '# Rendered by gpu_tray.cluster.render_bundle: one level per tier (`needs`).']
    staged = _staged(plan)
    if staged:
        header.append('# helmfile has no CRD wait: %s need%s CRDs an operator creates later - install in two stages '
                      '(README.md):' % (', '.join(sorted(staged)), 's' if len(staged) == 1 else ''))
        selector = ','.join('name!=%s' % n for n in sorted(staged))
        header.append("#   helmfile -l '%s' apply" % selector)
        for line in _wait_commands(sorted(set(c for crds in staged.values() for c in crds))):
            header.append('#   ' + line)
        for name in sorted(staged):
            header.append('#   helmfile -l name=%s apply' % name)
    else:
        header.append('# Apply: helmfile apply')
    # no document marker: helmfile reads '---' as the start of another part of the state file
    return '\n'.join(header) + '\n' + dump(doc)[len('---\n'):]


def _gated(plan):
    return [c for c in plan['components'] if c['readiness'].get('ready') or c['readiness'].get('wait_for_crds')
            or c['readiness'].get('dra_driver_migration') or not c['wait']]


def _removal_note(plan):
    notes = []
    for comp in plan['components']:
        for gate in comp['readiness'].get('after_removal') or []:
            notes.append('after `%s` wait until every %s reports `%s: %s` before the components it depends on go'
                         % (comp['name'], gate['kind'], gate['path'].rsplit('.', 1)[-1], gate['value']))
    return ('; ' + '; '.join(notes)) if notes else ''


def _gate_rows(plan, fmt, cfg):
    """The readiness table rows of one GitOps format."""
    rows = []
    for comp in plan['components']:
        r = comp['readiness']
        for g in r.get('ready') or []:
            if fmt == 'argocd':
                how = ('Lua health check `%s_%s` in `argocd-cm`: the Application stays Progressing until then'
                       % (g['api_version'].rpartition('/')[0], g['kind']))
            else:
                how = '`healthCheckExprs`: the release is not Ready, and its dependants wait, until then'
            rows.append('| %s | %s `%s` `%s` == `%s` | %s |'
                        % (comp['name'], g['kind'], g.get('name') or '*', g['path'], g['value'], how))
        if r.get('wait_for_crds'):
            later = r.get('crds_from_operator') or []
            note = (' (%s: created by an operator while it reconciles, after the components before it are ready)'
                    % ', '.join(later)) if later else ''
            if fmt == 'argocd':
                how = ('stand-in: its wave comes after the components it depends on%s; '
                       '`SkipDryRunOnMissingResource=true`, and a sync that still finds no CRD is retried (%d times, '
                       'back-off from 10 s)' % (note, cfg['retries']))
            else:
                how = ('stand-in: `dependsOn` orders it after the components it depends on%s; an install that finds '
                       'no CRD fails and is retried (%d remediation retries)' % (note, cfg['retries']))
            rows.append('| %s | CRDs %s created and Established | %s |'
                        % (comp['name'], ', '.join(r['wait_for_crds']), how))
        if r.get('dra_driver_migration'):
            rows.append('| %s | restart of the DRA kubelet plugin after a driver upgrade (AICR #973) | not expressible: '
                        'after a GPU driver upgrade run `kubectl -n %s rollout restart daemonset/%s-kubelet-plugin` '
                        '(deploy_stack.yml does it) |' % (comp['name'], comp['namespace'], comp['name']))
        if not comp['wait']:
            how = ('annotation `gpu-tray.cluster/wait: "false"`: Healthy once Synced' if fmt == 'argocd'
                   else '`install.disableWait` / `upgrade.disableWait`')
            rows.append('| %s | installed without waiting (reconciles late) | %s |' % (comp['name'], how))
    return rows


def _crd_keepers(plan, fmt):
    """[(component, how)] of the components whose CRDs outlive the removal of their release, and how."""
    out = []
    for comp in plan['components']:
        crds = bundle.crd_files(comp)
        if crds and comp['kind'] == 'manifests':
            out.append((comp['name'], 'its CRDs (%d files) are in the `crds/` of its local chart' % len(crds)))
        elif crds:
            out.append((comp['name'], 'the CRDs of `%s` (%d files) are in the `crds/` of its local chart'
                        % (folder(comp), len(crds))))
        keep = bundle.keeps_crds(comp)
        if keep:
            out.append((comp['name'], 'its chart marks its CRDs `%s: keep` (%s)' % (bundle.KEEP_ANNOTATION, keep)))
        if bundle.bundle_keeps_crds(comp) and fmt != 'argocd':
            how = ('its HelmRelease\'s `postRenderers` (a kustomize patch)' if fmt == 'flux' else
                   'its release\'s `postRenderer` (`kubectl kustomize`: kubectl on the PATH)')
            out.append((comp['name'], 'the CRDs its chart creates from templates are marked `%s: keep` by %s'
                        % (bundle.KEEP_ANNOTATION, how)))
        if comp['kind'] == 'helm' and comp.get('chart_crds') in ('crds_dir', 'crds_dir_upgrade_hook'):
            out.append((comp['name'], 'its chart has its CRDs in `crds/`'))
    return out


def crd_upgrade_commands(plan, vendored=None):
    """[(component, shell command)]: how a site applies the CRDs in a chart's ``crds/`` that helm installs once and never
    upgrades (chart_crds crds_dir), at the bundle's pin - before the upgrade of the chart."""
    vendored = vendored or {}
    out = []
    for comp in plan['components']:
        if bundle.crds_never_upgraded(comp):
            archive = vendored[comp['name']]['archive'] if comp['name'] in vendored else None
            argv = bundle.show_crds_argv(comp['repository'], comp['chart'], comp['version'], archive)
            out.append((comp['name'], 'helm %s | kubectl apply --server-side --force-conflicts -f -' % ' '.join(argv)))
    return out


def _removal(plan, fmt, vendored=None):
    """What removing a release (or disabling its component) deletes in one format, and what stays; how the CRDs of
    crds/ are upgraded."""
    keepers = ''.join('\n* `%s`: %s' % item for item in _crd_keepers(plan, fmt))
    disabled = 'a component disabled with `gpu_tray_stack_overrides: {<name>: {enabled: false}}` and rendered again'
    if fmt == 'argocd':
        return ['', 'When %s leaves the bundle, the app-of-apps prunes its Application, which deletes its '
                    'resources (cascading deletion, the `resources-finalizer.argocd.argoproj.io`). Argo CD never deletes a CustomResourceDefinition '
                    'in a cascading deletion, so the CRDs - and every custom resource the cluster\'s users made of '
                    'them - stay, whichever release brought them; workloads go. Delete a CRD by hand only when no '
                    'one uses it (`kubectl delete crd <name>` deletes every custom resource of that kind).'
                % disabled] + _crd_upgrades(plan, fmt, vendored)
    if fmt == 'flux':
        engine = ('A HelmRelease deleted, or pruned by the Kustomization (`--prune=true`) when its file leaves the '
                  'bundle (%s), is uninstalled by helm' % disabled)
    else:
        engine = ('`helmfile destroy`, or `helmfile apply` after a release left `helmfile.yaml` (%s), uninstalls the '
                  'release with helm' % disabled)
    out = ['', '%s: its workloads and the other objects of its templates go. helm never deletes what a chart has in '
               '`crds/` nor an object marked `%s: keep`, so the CRDs stay, and with them every Gateway, HTTPRoute, '
               'InferencePool or other custom resource the cluster\'s users made; namespaces helm created stay too:%s'
           % (engine, bundle.KEEP_ANNOTATION, keepers)]
    out += _crd_upgrades(plan, fmt, vendored)
    out += ['', 'Delete a CRD by hand only when no one uses it (`kubectl delete crd <name>` deletes every custom '
                'resource of that kind).']
    return out


def _crd_upgrades(plan, fmt, vendored):
    """How each format upgrades the CRDs of a chart's or a local chart's crds/ (helm alone never does)."""
    out = []
    local = [c for c in plan['components'] if bundle.crd_files(c)]
    remote = crd_upgrade_commands(plan, vendored)
    hooked = [c['name'] for c in plan['components']
              if c['kind'] == 'helm' and c.get('chart_crds') == 'crds_dir_upgrade_hook']
    if not (local or remote or hooked):
        return out
    out += ['', 'helm installs a chart\'s `crds/` once and never upgrades them.']
    if hooked:
        out[-1] += (' %s: %s chart applies its CRDs in a pre-upgrade hook on every upgrade.'
                    % (', '.join('`%s`' % n for n in hooked), 'its' if len(hooked) == 1 else 'each'))
    if fmt == 'flux':
        names = [c['name'] for c in local] + [item[0] for item in remote]
        if names:
            out += ['', 'The HelmReleases of %s install and upgrade their `crds/` with `crds: CreateReplace`, so a new '
                        'pin replaces the CRDs.' % ', '.join('`%s`' % n for n in sorted(set(names)))]
        return out
    if fmt == 'argocd':
        out[-1] = ('Argo CD renders each chart with its `crds/` (`helm template --include-crds`) and applies them on '
                   'every sync, so a new pin replaces the CRDs.')
        return out
    out += ['', 'After a render that changes a pin, apply the CRDs of these `crds/` before `helmfile apply`:', '',
            '```bash']
    out += ['kubectl apply --server-side --force-conflicts -f helmfile/charts/%s/crds/' % folder(c) for c in local]
    out += [item[1] for item in remote]
    out.append('```')
    return out


def readme(plan, formats, cfg, vendored=None, kit=None):
    """README.md: what is in the bundle and how a site applies each format - written for this recipe; with the
    air-gap kit (airgap.kit) its mirror/ files, and each fetched manifest by its upstream URL (never by where the
    render's github_raw mirror sat: the bundle is the same wherever that is)."""
    vendored = vendored or {}
    cfg = bundle.settings(cfg)
    prefix = cfg['path'] + '/' if cfg['path'] else ''
    recipe = plan['recipe']
    staged = _staged(plan)
    fetched = [c for c in plan['components'] if c['manifest_urls']]
    out = ['# Chart-stack bundle: %s' % recipe, '',
           'Rendered by `gpu_tray.cluster.render_bundle` (formats: %s%s).'
           % (', '.join(formats), '; charts vendored' if vendored else ''),
           'Recipe digest `%s` (`plan.yaml`). Every file of the bundle is listed' % plan['digest'],
           'with its sha256 in `checksums.txt`; the bundle digest is the sha256 of that file:', '',
           '```bash', 'sha256sum -c checksums.txt && sha256sum checksums.txt', '```', '',
           'Do not edit the files by hand: change the inventory and render again (a render with the same input changes',
           'nothing).', '', '## Layout', '', '| path | what |', '|---|---|',
           '| `plan.yaml` | recipe, recipe_digest, the components in install order with tier and dependencies |',
           '| `components/<name>/values.yaml` | the merged values of a chart component |',
           '| `components/<name>/*.yaml` | a manifest component\'s objects; `<name>-pre/`, `<name>-post/`: a chart '
           'component\'s manifests before / after its chart |']
    if 'helmfile' in formats:
        out.append('| `helmfile.yaml` | helmfile: one level per tier (`needs`) |')
        if any(bundle.crd_files(c) for c in plan['components']):
            out.append('| `helmfile/charts/<release>/` | the local chart of a manifest release holding CRDs: `crds/` '
                       '(kept when the release is removed), `files/` (other manifests, never templated) |')
    if 'argocd' in formats:
        out += ['| `argocd/app-of-apps.yaml` | the parent Application `gpu-tray-%s` (reads `%sargocd/apps`) |'
                % (recipe, prefix),
                '| `argocd/apps/<release>.yaml` | one Application per release, `argocd.argoproj.io/sync-wave` = tier * 4 '
                '+ phase (pre 0, chart or manifests 1, post 2) |',
                '| `argocd/argocd-cm-patch.yaml` | Application health and the readiness gates as Argo CD health checks '
                '(Lua) |']
    if 'flux' in formats:
        out.append('| `flux/kustomization.yaml` | the list Flux applies: `sources/`, `releases/` |')
        if not vendored:
            out.append('| `flux/sources/*.yaml` | a HelmRepository per https repository, an OCIRepository per OCI '
                       'chart |')
        out += ['| `flux/releases/<release>.yaml` | one HelmRelease per release (namespace `%s`), `dependsOn` = the '
                'recipe\'s dependencies |' % cfg['flux_namespace'],
                '| `flux/charts/<release>/` | the local chart carrying a manifest release (`files/` = the manifests, '
                'never templated; `crds/` = its CRDs, kept when the release is removed) |']
    if vendored:
        out.append('| `charts/<component>/<chart>-<version>.tgz` | every pinned chart, pulled when rendering; '
                   '`provenance.yaml` has its source and sha256 |')
        if 'argocd' in formats:
            out.append('| `charts/<component>/<chart>/` | the same chart unpacked (Argo CD reads a chart from Git only '
                       'as a directory) |')
    if kit:
        out.append('| `mirror/` | the air-gap kit: every chart, image and upstream file of this bundle, where each comes '
                   'from and where the bundle expects it (below) |')
    out += ['| `checksums.txt` | sha256 of every other file |', '', '## Install order', '', '| tier | components |',
            '|---|---|']
    out += ['| %d | %s |' % (i, ', '.join(t)) for i, t in enumerate(plan['tiers'])]
    out += ['', 'A component waits for every component it depends on (`plan.yaml`); the components of one tier are '
            'independent.']
    if fetched:
        out += ['', '## Upstream manifests in the bundle', '',
                'These manifests were fetched from their pinned URLs when rendering and checked against their sha256 '
                '(the catalog\'s pins), so applying the bundle needs no access to them%s:'
                % (' (a mirror, `stack_repositories.github_raw`, keeps the path below it)' if kit else ''), '',
                '| component | file | source | sha256 |', '|---|---|---|---|']
        upstream = [f['url'] for f in (kit or {}).get('files') or []]
        entries = [(comp, entry) for comp in fetched for entry in comp['manifest_urls']]
        for index, (comp, entry) in enumerate(entries):
            out.append('| %s | `components/%s/%s` | %s | `%s` |'
                       % (comp['name'], folder(comp), entry['file'],
                          upstream[index] if len(upstream) == len(entries) else entry['url'], entry['sha256']))
    if kit:
        out += ['', '## Air-gap kit (`mirror/`)', '',
                'What a site without internet access mirrors for this bundle, as it was rendered: each chart, image '
                'and upstream',
                'file at its upstream place, and where this bundle expects it (`stack_repositories`, '
                '`stack_registries`):', '',
                '| file | what |', '|---|---|',
                '| `mirror/kit.yaml` | %d charts, %d images, %d image repositories a chart completes with its own tag, '
                '%d upstream files: every field |' % (len(kit['charts']), len(kit['images']),
                                                      len(kit['image_repositories']), len(kit['files'])),
                '| `mirror/images.txt` | the images at their upstream registries, one reference per line (skopeo, '
                'crane, a registry\'s replication) |',
                '| `mirror/image-copies.txt` | `<upstream> <mirror>` per image: `skopeo copy --all --preserve-digests '
                'docker://<upstream> docker://<mirror>` |',
                '| `mirror/skopeo-sync.yaml` | the images as `skopeo sync --src yaml --scoped` reads them%s |'
                % ('; this site\'s mirror: `%s`' % kit['skopeo_sync_destination']
                   if kit['skopeo_sync_destination'] else ''),
                '| `mirror/charts.txt` | `<upstream repository> <chart> <version> <mirror repository>` per chart |',
                '| `mirror/files.sha256` | `<sha256>  <path below stack_repositories.github_raw>`: `sha256sum -c` in '
                'the mirror\'s folder |', '',
                'Images an upstream chart sets and these values do not name are not in it: `helm template` each '
                'chart with its',
                '`components/<name>/values.yaml` to list them. The collection\'s docs/airgap.md uses the kit step by '
                'step.']
    if vendored:
        out += ['', '## Vendored charts (air-gapped racks)', '',
                'Every chart is in `charts/` and every format points at it, so nothing is pulled from a chart '
                'repository when the',
                'bundle is applied (images still come from the registries in the values: mirror them with '
                '`stack_registries`).',
                '`provenance.yaml` records, per chart, the source it was pulled from and the sha256 of the archive:', '',
                '| component | chart | version | source |', '|---|---|---|---|']
        out += ['| %s | %s | %s | %s |' % (n, v['chart'], v['version'], v['source']) for n, v in vendored.items()]
        out += ['', 'The collection itself installs from the bundle without any chart repository:',
                '`ansible-playbook -i <inventory> gpu_tray.cluster.deploy_stack -e gpu_tray_vendored_bundle=<this '
                'directory>`', '(each archive is checked against `provenance.yaml` first).']
    if 'helmfile' in formats:
        out += ['', '## Apply with helmfile', '']
        marked = [c['name'] for c in plan['components'] if bundle.bundle_keeps_crds(c)]
        if marked:
            out += ['Needs helmfile 0.159 or later (a release\'s `postRendererArgs`) and kubectl on the PATH: the '
                    'releases of %s run `kubectl kustomize` as their helm post-renderer, to mark the CRDs their charts '
                    'create `%s: keep`.' % (', '.join('`%s`' % n for n in marked), bundle.KEEP_ANNOTATION), '']
        if staged:
            crds = sorted(set(c for v in staged.values() for c in v))
            out += ['helmfile has no CRD wait, and %s need%s %s, which an operator creates only while it reconciles '
                    '(no chart ships %s). Install in two stages (`--for=create` needs kubectl 1.31 or later):'
                    % (', '.join('`%s`' % n for n in sorted(staged)), 's' if len(staged) == 1 else '',
                       ', '.join(crds), 'it' if len(crds) == 1 else 'them'), '',
                    '```bash', 'cd <this directory>',
                    "helmfile -l '%s' apply" % ','.join('name!=%s' % n for n in sorted(staged))]
            out += _wait_commands(crds)
            out += ['helmfile -l name=%s apply' % n for n in sorted(staged)]
            out.append('```')
        else:
            out += ['```bash', 'cd <this directory>', 'helmfile apply', '```']
        out += ['', 'Remove: `helmfile destroy` (every release, in reverse `needs` order)%s.' % _removal_note(plan)]
        out += _removal(plan, 'helmfile', vendored)
    gated = _gated(plan)
    if 'argocd' in formats:
        out += ['', '## Apply with Argo CD', '',
                'Needs Argo CD 3.1 or later (OCI Helm charts as `oci://` sources; multi-source Applications). Commit '
                'this directory',
                'to `%s` at `%s` (revision `%s`), then:'
                % (cfg['repo_url'], prefix or '(the repository root)', cfg['revision']), '',
                '```bash',
                '# 1. Application health (Argo CD does not assess child Applications unless told to, so sync waves would '
                'not wait)',
                '#    and the readiness gates below, merged into argocd-cm',
                'kubectl -n %s patch configmap argocd-cm --type merge --patch-file argocd/argocd-cm-patch.yaml'
                % cfg['argocd_namespace'],
                '# 2. the parent Application; it syncs every child in sync-wave order',
                'kubectl apply -f argocd/app-of-apps.yaml', '```', '',
                'A wave starts only when every Application of the waves before is Healthy.']
        if gated:
            out += ['The readiness gates as Argo CD health:', '', '| component | gate | in Argo CD |', '|---|---|---|']
            out += _gate_rows(plan, 'argocd', cfg)
        out += ['', 'Remove: delete the Applications in reverse wave order (highest first)%s;' % _removal_note(plan),
                'CRDs, namespaces and PVCs stay.']
        out += _removal(plan, 'argocd', vendored)
    if 'flux' in formats:
        out += ['', '## Apply with Flux', '',
                'Needs Flux 2.8 or later (helm-controller 1.5: `healthCheckExprs`). Commit this directory to the Git '
                'repository Flux',
                'reads through the GitRepository `%s` in `%s` (`flux bootstrap` creates it), at'
                % (cfg['flux_source'], cfg['flux_namespace']),
                '`%s`, then let Flux apply `flux/`:' % (prefix or '(the repository root)'), '', '```bash',
                'flux create kustomization gpu-tray-%s --source=GitRepository/%s \\' % (recipe, cfg['flux_source']),
                '  --path=./%sflux --prune=true --interval=10m' % prefix,
                'flux get helmreleases -n %s --watch' % cfg['flux_namespace'], '```', '',
                'Each HelmRelease waits (`dependsOn`) for the HelmReleases of the components it depends on.']
        if gated:
            out += ['The readiness gates are health checks of the release that creates the object (`healthCheckExprs`, '
                    'CEL):', '', '| component | gate | in Flux |', '|---|---|---|']
            out += _gate_rows(plan, 'flux', cfg)
        for name in sorted(staged):
            out += ['', '### %s exhausted its retries' % name, '',
                    'Flux has no readiness hooks. If `%s` exhausts its install retries on the missing CRD, wait for it '
                    'to be created and Established, then reset the release:' % name, '', '```bash']
            out += _wait_commands(staged[name])
            out += ['flux reconcile helmrelease %s -n %s --reset' % (name, cfg['flux_namespace']), '```']
        out += ['', 'Remove: delete the HelmReleases in reverse install order, then the sources%s.'
                % _removal_note(plan)]
        out += _removal(plan, 'flux', vendored)
    return '\n'.join(out) + '\n'


def files(plan, formats, cfg, vendored=None, provenance_doc=None, repositories=None, kit=None):
    """[{path, content}] of every text file the render writes (checksums.txt and the air-gap kit's mirror/ aside:
    airgap.files), in a stable order; ``kit`` (airgap.kit) is what the README says of the kit."""
    vendored = vendored or {}
    out = [{'path': 'plan.yaml', 'content': dump(stack_plan.plan_file(plan))},
           {'path': 'README.md', 'content': readme(plan, formats, cfg, vendored, kit)}]
    if 'helmfile' in formats:
        out.append({'path': 'helmfile.yaml', 'content': helmfile(plan, repositories, vendored)})
    for comp in plan['components']:
        if comp['kind'] == 'helm':
            out.append({'path': 'components/%s/values.yaml' % comp['name'], 'content': dump(comp['values'])})
        for name, objects in sorted(comp['objects'].items()):
            text = dump_all(objects)
            out.append({'path': 'components/%s/%s' % (folder(comp), name), 'content': text})
            # the local charts of a manifest release carry the same files, never templated by Helm
            out += [{'path': bundle.local_chart_path(base, comp, name), 'content': text}
                    for base in _local_charts(comp, formats)]
    gitops = {}
    if 'helmfile' in formats:
        for rel in bundle.releases(plan['components']):
            comp = next(c for c in plan['components'] if c['name'] == rel['component'])
            if rel['kind'] == 'manifests' and bundle.crd_files(comp):
                gitops.update(bundle.local_chart_files(plan['recipe'], comp, rel, 'helmfile/charts/' + rel['name']))
    if 'argocd' in formats:
        gitops.update(bundle.argocd_files(plan['recipe'], plan['components'], cfg, vendored))
    if 'flux' in formats:
        gitops.update(bundle.flux_files(plan['recipe'], plan['components'], cfg, vendored))
    out += [{'path': p, 'content': v if isinstance(v, str) else dump(v)} for p, v in sorted(gitops.items())]
    if vendored and provenance_doc:
        out.append({'path': 'provenance.yaml', 'content': PROVENANCE_HEADER + dump(provenance_doc)})
    return out


def layout(written, vendored, formats):
    """(keep, keep_under): every path the render writes and each of its parent folders, and the unpacked chart folders
    Argo CD reads (kept with everything below them)."""
    keep = set()
    for path in list(written) + [v['archive'] for v in vendored.values()]:
        parts = path.split('/')
        for n in range(1, len(parts) + 1):
            keep.add('/'.join(parts[:n]))
    unpacked = sorted(v['chart_dir'] for v in vendored.values()) if 'argocd' in formats else []
    keep.update(unpacked)
    return keep, unpacked


def stale(existing, keep, unpacked):
    """The paths of an earlier render to remove (deepest first): under components/, argocd/, flux/, charts/ and the
    optional top-level files, what this render neither writes nor keeps."""
    out = []
    for path in existing:
        top = path.split('/', 1)[0]
        if top not in MANAGED_DIRS and path not in OPTIONAL_ROOT_FILES:
            continue
        if path in keep or any(path.startswith(u + '/') for u in unpacked):
            continue
        out.append(path)
    return sorted(out, reverse=True)


def sha256_text(text):
    return hashlib.sha256(text.encode('utf-8')).hexdigest()
