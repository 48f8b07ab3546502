# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The chart-stack planner: recipe + catalog + site inputs -> every object the stack role installs or writes.

    registry (stack_data/)  +  site inputs (the stack_* variables)  ->  plan()  ->  install loop / bundle files

One plan serves every playbook: ``deploy_stack`` installs its components tier by tier, ``render_bundle`` writes them
as a GitOps bundle, ``validate`` reads the objects it expects, the preflight refuses what must never be deployed. The
plan depends only on its inputs - never on facts another playbook left on the trays - so the same inventory gives the
same objects (and digest) from every playbook, with or without a fact cache.

Pure: the action plugin ``gpu_tray.cluster.stack_plan`` does the reading (site values files, a vendored bundle's
provenance, an earlier bundle) and renders a site's own manifest templates through ``render_template``; everything
here is data in, data out, and raises :class:`stack.StackError` with a sentence naming what to fix.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import hashlib
import json
import re

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle, manifests, platform, registry, stack
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.stack import StackError

DEFAULT_SITE = {
    'recipe': '',
    'overrides': {},
    'extra_catalog': {},
    'extra_recipes': {},
    'repositories': {},
    'registries': {},
    'use_nodewright': False,
    'serial': False,
    'rails': [],
    'rail_pci': {},
    # the run context's (plugin_utils/run_context.py: the platform profile's sriov.num_vfs or gpu_tray_num_vfs)
    'num_vfs': None,
    'ippool_base': '10.255.0.0/16',
    'ippool_prefix': 22,
    'ippool_per_node_block_size': 50,
    'helm_timeout': '10m',
    # the inventory's GPU trays (the run context's), each a node of every rail pool: a pool that cannot give each a
    # block is refused (stack.rail_ippools); 0 - none known (a render with -i localhost,), not checked. Not in the
    # digest: the objects are the same for any fleet that fits
    'trays': 0,
}
# the variable a user sets for each site input, for messages
VARIABLES = {
    'recipe': 'gpu_tray_recipe', 'overrides': 'gpu_tray_stack_overrides', 'rails': 'gpu_tray_rails',
    'rail_pci': stack.RAIL_PCI_VARIABLE, 'num_vfs': 'gpu_tray_num_vfs',
    'extra_catalog': 'stack_extra_catalog', 'extra_recipes': 'stack_extra_recipes',
}
# API versions Kubernetes serves itself; any other kind needs its CRD first (check mode skips it until it exists)
_BUILTIN_API = re.compile(r'(^v1$|k8s\.io/|^apps/|^batch/|^policy/|^autoscaling/)')
# the network-operator chart sets the SR-IOV operator's resourcePrefix to nvidia.com (values.yaml:
# sriov-network-operator.operator.resourcePrefix): a rail's VFs are the node resource nvidia.com/<resourceName>
RESOURCE_PREFIX = 'nvidia.com'
# namespaces every cluster has: the apply creates any other first
_SYSTEM_NAMESPACES = ('default', 'kube-system')
# what each stack_repositories / stack_registries entry stands in for in the digest's plan (:func:`_placeholders`):
# <standin><key>, never resolved (.invalid); the air-gap kit (airgap.py) reads each place back to its key
REPOSITORY_STANDIN = 'https://stack-repositories.invalid/'
REGISTRY_STANDIN = 'stack-registries.invalid/'


def site_inputs(raw):
    """The site inputs with defaults filled in; unknown keys refused (a typo in the action's call)."""
    raw = dict(raw or {})
    unknown = sorted(set(raw) - set(DEFAULT_SITE) - {'vendored'})
    if unknown:
        raise StackError('stack plan: unknown input(s) %s' % ', '.join(unknown))
    out = dict(DEFAULT_SITE)
    out.update(dict((k, v) for k, v in raw.items() if v is not None))
    try:
        defaults = registry.sources()
    except registry.RegistryError as exc:
        raise StackError(str(exc))
    for key in ('repositories', 'registries'):
        out[key] = merged_sources(key, defaults[key], out[key])
    return out


def merged_sources(key, defaults, site):
    """A site's stack_repositories / stack_registries merged over the catalog's (key by key: a mirror file names only
    what it moves); a key the catalog does not use, or a value that is not a non-empty string, is refused."""
    variable = 'stack_' + key
    if site in (None, ''):
        site = {}
    if not isinstance(site, dict):
        raise StackError('%s must be a mapping of %s names to locations, got %s: %r'
                         % (variable, key[:-3] + 'y', type(site).__name__, site))
    unknown = sorted(str(k) for k in site if k not in defaults)
    if unknown:
        raise StackError('%s: unknown key%s %s: the catalog uses %s' % (
            variable, 's' if len(unknown) > 1 else '', ', '.join('%s.%s' % (variable, k) for k in unknown),
            ', '.join(sorted(defaults))))
    out = dict(defaults)
    for name, value in site.items():
        if not isinstance(value, str) or not value.strip():
            raise StackError('%s.%s must be a non-empty string, got %r' % (variable, name, value))
        out[name] = str(value)
    return out


def _tables(site):
    """(catalog, recipes) of the registry rendered with the site's repositories and registries, plus the site's own
    additions (new names only)."""
    context = {'stack_repositories': site['repositories'], 'stack_registries': site['registries']}
    try:
        catalog = registry.render(registry.catalog(), context)
        recipes = registry.recipes()
    except registry.RegistryError as exc:
        raise StackError(str(exc))
    clash = sorted(set(site['extra_catalog']) & set(catalog)) + sorted(set(site['extra_recipes']) & set(recipes))
    if clash:
        raise StackError('stack_extra_catalog / stack_extra_recipes redefine built-in %s: change built-in components '
                         'with gpu_tray_stack_overrides instead' % ', '.join(clash))
    recipes = registry.render(recipes, context)
    catalog.update(stack._plain(site['extra_catalog']))
    recipes.update(stack._plain(site['extra_recipes']))
    return catalog, recipes, context


def recipe_name(site, recipes):
    """(name, notes): the recipe the site asked for, after an alias; refuses none and unknown names."""
    requested = str(site['recipe'] or '').strip()
    if not requested:
        raise StackError('no recipe: set gpu_tray_recipe (the platform group_vars do) to one of %s'
                         % ', '.join(registry.deployable()))
    if requested in site['extra_recipes']:
        return requested, []
    try:
        name, note = registry.canonical_name(requested)
    except registry.RegistryError as exc:
        site_names = sorted(n for n, r in site['extra_recipes'].items() if not (r or {}).get('abstract'))
        raise StackError(str(exc) + (' or a site recipe (%s)' % ', '.join(site_names) if site_names else ''))
    return name, [note] if note else []


def _values_files(catalog, recipes, name, overrides, context, files):
    """{path: content} of every values file the recipe names: relative ones from stack_data/values (rendered like the
    catalog), absolute ones (a site's) as the action read them."""
    out = {}
    for path in stack.values_files(catalog, recipes, name, overrides):
        if path.startswith('/'):
            if path not in files:
                raise StackError('values file %s (a site file) was not read' % path)
            out[path] = files[path]
        else:
            try:
                out[path] = registry.render(registry.values_file(path), context)
            except registry.RegistryError as exc:
                raise StackError(str(exc))
    return out


def _site_manifests(comp, render_template, template_vars):
    objects = {}
    for path in comp['manifests']:
        if path in manifests.BUILDERS:
            continue
        if not path.startswith('/'):
            raise StackError('component %s: manifest %s is not one the collection builds (%s) nor an absolute path to '
                             'a site template' % (comp['name'], path, ', '.join(sorted(manifests.BUILDERS))))
        if render_template is None:
            raise StackError('component %s: site template %s needs the stack_plan action to render it'
                             % (comp['name'], path))
        key = path.rsplit('/', 1)[1]
        key = key[:-3] if key.endswith('.j2') else key
        objects[key] = [obj for obj in render_template(path, dict(template_vars, stack_component=comp)) if obj]
    return objects


def _num_vfs(site):
    """The VFs per rail: the site's (the run context's: gpu_tray_num_vfs, else the platform profile's), else - a
    plan asked without it (a role option naming another recipe than the run's) - the profile of the recipe's
    platform, the one default. None for a site recipe of no platform (the SR-IOV rails then refuse, naming
    gpu_tray_num_vfs)."""
    if site['num_vfs'] is not None and site['num_vfs'] != '':
        return site['num_vfs']
    profile = platform.of_recipe(site['recipe'])
    return (profile['sriov']['num_vfs'] or None) if profile else None


def _rails(site):
    """The rails: the site's, else the profile of the recipe's platform (as for the VFs per rail)."""
    if site['rails']:
        return list(site['rails'])
    profile = platform.of_recipe(site['recipe'])
    return list(profile['rails']) if profile else []


def _fabric(site, components):
    """The site's rail pools and SR-IOV rails, built only when a component's manifests need them."""
    wanted = set(path for comp in components for path in comp['manifests'])
    rails = list(site['rails'] or [])
    pools, sriov = [], []
    site_templates = any(path.startswith('/') for path in wanted)
    if wanted & set(manifests.NEEDS_POOLS + manifests.NEEDS_RAILS) or (site_templates and rails):
        if not rails:
            raise StackError('the recipe builds one SR-IOV network per InfiniBand rail, but no rails are set: set '
                             'gpu_tray_rails (the platform profile gives them for its own recipes)')
        pools = stack.rail_ippools(site['ippool_base'], rails, site['ippool_prefix'],
                                   site['ippool_per_node_block_size'], nodes=int(site['trays'] or 0))
    if wanted & set(manifests.NEEDS_RAILS):
        sriov = stack.sriov_rails(rails, site['rail_pci'], site['num_vfs'])
    return pools, sriov


def _check_selectors(components):
    """Two SriovNetworkNodePolicies that select the same PFs on the same nodes: the SR-IOV operator applies them in
    order and one resource ends up with the VFs. Refused whatever built them (a site override included)."""
    seen = {}
    for comp in components:
        for obj in (o for objs in comp['objects'].values() for o in objs):
            if obj.get('kind') != 'SriovNetworkNodePolicy':
                continue
            spec = obj.get('spec') or {}
            key = json.dumps([spec.get('nicSelector'), spec.get('nodeSelector')], sort_keys=True)
            name = obj['metadata']['name']
            if key in seen:
                raise StackError('SriovNetworkNodePolicies %s and %s select the same PFs (nicSelector %s): each rail '
                                 'needs its own PF address (%s)' % (seen[key], name,
                                                                    json.dumps(spec.get('nicSelector'), sort_keys=True),
                                                                    stack.RAIL_PCI_VARIABLE))
            seen[key] = name


def release(comp, helm_timeout):
    """kubernetes.core.helm's arguments for a chart component: a vendored archive, an https:// repository (chart +
    repo URL) or an oci:// / local chart reference. A component that does not wait is not atomic either: helm's
    --atomic turns --wait on (AICR installs kai-scheduler without waiting, its SchedulingShard reconciles late)."""
    archive = comp.get('archive')
    repository = comp['repository']
    out = {'chart_ref': archive or (comp['chart'] if repository.startswith('https://')
                                    else '%s/%s' % (repository, comp['chart'])),
           'chart_repo_url': repository if repository.startswith('https://') and not archive else None,
           'chart_version': None if archive else comp['version'],
           'wait': comp['wait'], 'atomic': comp['wait'],
           'timeout': comp['timeout'] or helm_timeout,
           # the CRDs of the chart's templates marked keep by deploy_stack's post-renderer (chart_crds: templates)
           'keep_crds': bundle.bundle_keeps_crds(comp),
           # helm's arguments printing the chart's crds/, applied before each install or upgrade (helm never
           # upgrades crds/; chart_crds: crds_dir)
           'crds_argv': (bundle.show_crds_argv(repository, comp['chart'], comp['version'], archive)
                         if bundle.crds_never_upgraded(comp) else [])}
    return out


def canonical(plan):
    """What the digest covers: the recipe and its components as installed (values, objects, fetched manifests),
    without derived fields (tiers, release arguments, notes). A plan's own ``digest`` is of its mirror-free form
    (``plan['canonical']``, :func:`pinned_recipe`)."""
    keys = ('name', 'kind', 'chart', 'repository', 'version', 'namespace', 'depends_on', 'values', 'objects',
            'manifest_urls', 'manifests_phase', 'readiness', 'wait', 'timeout')
    return {'recipe': plan['recipe'],
            'components': [dict((k, c[k]) for k in keys) for c in plan['components']]}


def digest(plan):
    text = json.dumps(canonical(plan), sort_keys=True, separators=(',', ':'), ensure_ascii=True)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def _derived(components):
    """What validate expects of the deployed stack: the components (name, namespace, readiness CRDs and CRs), the
    SR-IOV policies a tray's PFs must carry, and the rails an NCCL NET run attaches (resource and network)."""
    objects = [o for comp in components for objs in comp['objects'].values() for o in objs]
    policies = [o for o in objects if o.get('kind') == 'SriovNetworkNodePolicy']
    networks = sorted((o for o in objects if o.get('kind') == 'SriovIBNetwork'), key=lambda o: o['metadata']['name'])
    return {
        'expected': [{'name': c['name'], 'namespace': c['namespace'],
                      'crds': list(c['readiness'].get('wait_for_crds') or []),
                      'ready': list(c['readiness'].get('ready') or [])} for c in components],
        'sriov_policies': policies,
        # the node resource each rail's VFs are advertised as and how many (the policy's numVfs): what the deployment
        # phase expects in every GPU node's allocatable
        'sriov_resources': [{'name': '%s/%s' % (RESOURCE_PREFIX, p['spec']['resourceName']),
                             'count': int(p['spec']['numVfs'])}
                            for p in sorted(policies, key=lambda o: o['metadata']['name'])],
        'sriov_networks': [{'resource': '%s/%s' % (RESOURCE_PREFIX, n['spec']['resourceName']),
                            'network': '%s/%s' % (n['spec']['networkNamespace'], n['metadata']['name'])}
                           for n in networks],
    }


def _placeholders(site):
    """The site with every stack_repositories / stack_registries entry replaced by a stand-in of its name alone
    (https://stack-repositories.invalid/<name>, stack-registries.invalid/<name>): the plan the digest is made of, so
    that where a mirror sits - another chart repository, another folder of github_raw's files, another registry - is
    never part of it; what is pinned (names, versions, values, objects, each fetched file's sha256) is."""
    return dict(site, repositories=dict((key, REPOSITORY_STANDIN + key) for key in site['repositories']),
                registries=dict((key, REGISTRY_STANDIN + key) for key in site['registries']))


def pinned_recipe(site, files=None, render_template=None):
    """The canonical recipe of a site (site_inputs' output) that its digest covers: the plan with the mirrors' places
    left out (:func:`_placeholders`), in :func:`canonical`'s form - the bundle's recipe.yaml."""
    name, _notes, _resolved, components = _components(_placeholders(site), files, render_template)
    return canonical({'recipe': name, 'components': components})


def plan(raw_site, files=None, render_template=None):
    """The plan of the site's recipe (see the module docstring); ``files`` holds the site's absolute values files as
    read, ``render_template(path, variables)`` renders a site manifest template to a list of objects."""
    site = site_inputs(raw_site)
    rendered = {}

    def recorded(path, variables):
        # a site template is rendered once: the mirror-free pass below takes what this one rendered
        rendered[(path, variables['stack_component']['name'])] = render_template(path, variables)
        return rendered[(path, variables['stack_component']['name'])]
    name, notes, resolved, components = _components(site, files, recorded if render_template else None)
    _check_selectors(components)
    tiers = resolved['tiers']
    if site['serial']:
        tiers = [[c['name']] for c in components]
        for index, comp in enumerate(components):
            comp['tier'] = index
    out = {'recipe': name, 'requested': str(site['recipe']), 'notes': notes, 'chain': resolved['chain'],
           'components': components, 'tiers': tiers}
    out['facts'] = registry.facts(name) if name not in site['extra_recipes'] else None
    out['canonical'] = pinned_recipe(site, files, (lambda path, variables: rendered[
        (path, variables['stack_component']['name'])]) if render_template else None)
    out['digest'] = digest(out['canonical'])
    return _finish(out, site, raw_site)


def _components(site, files, render_template):
    """(recipe name, notes, resolved, components with their objects) of a site (site_inputs' output)."""
    catalog, recipes, context = _tables(site)
    name, notes = recipe_name(site, recipes)
    overrides = stack._plain(site['overrides'] or {})
    values = _values_files(catalog, recipes, name, overrides, context, files or {})
    resolved = stack.resolve(catalog, recipes, name, overrides, values, {'use_nodewright': bool(site['use_nodewright'])})
    forbidden = stack.forbidden_values(dict((c['name'], c['values']) for c in resolved['components']))
    if forbidden:
        raise StackError('%s: remove it - a DOCA-OFED driver container (ofedDriver) unloads the inbox mlx5_core and '
                         'takes the node\'s primary address with it, and driver.rdma (nvidia-peermem) has no build for '
                         'the 64k Grace kernel'
                         % '; '.join('component %s carries %s' % (f['component'], f['path']) for f in forbidden))
    components = resolved['components']
    pools, sriov = _fabric(dict(site, num_vfs=_num_vfs(site), rails=_rails(site)), components)
    built = manifests.Site(pools, sriov, site['registries'])
    template_vars = {'stack_ippools': pools, 'stack_sriov_rails': sriov}
    for comp in components:
        objects = dict((path, manifests.BUILDERS[path](comp, built)) for path in comp['manifests']
                       if path in manifests.BUILDERS)
        objects.update(_site_manifests(comp, render_template, template_vars))
        comp['objects'] = objects
        comp['files'] = sorted(list(objects) + [entry['file'] for entry in comp['manifest_urls']])
        flat = [obj for objs in objects.values() for obj in objs]
        namespace = [] if comp['namespace'] in _SYSTEM_NAMESPACES else [
            {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': comp['namespace']}}]
        # what manifests.yml applies, in order, and the kinds of it that wait for a CRD
        comp['apply'] = namespace + flat if flat else []
        comp['custom_kinds'] = sorted(set(o['kind'] for o in flat
                                          if '/' in o['apiVersion'] and not _BUILTIN_API.search(o['apiVersion'])))
    return name, notes, resolved, components


def _finish(out, site, raw_site):
    """The plan's vendored archives, release arguments, what validate expects and its summary line."""
    components = out['components']
    vendored = raw_site.get('vendored') if raw_site else None
    if vendored:
        check = bundle.vendored_archives(components, vendored.get('provenance'), vendored.get('digests') or {})
        if check['problems']:
            raise StackError('%s: %s' % (vendored.get('dir', 'the vendored bundle'), '; '.join(check['problems'])))
        for comp in components:
            if comp['name'] in check['archives']:
                comp['archive'] = '%s/%s' % (vendored['dir'], check['archives'][comp['name']])
    for comp in components:
        if comp['kind'] == 'helm':
            comp['release'] = release(comp, site['helm_timeout'])
    out.update(_derived(components))
    out['summary'] = summary(out)
    return out


def summary(plan):
    """One line: recipe, component and tier counts, digest, the tiers."""
    return '%s: %d components in %d tiers, digest %s; %s%s' % (
        plan['recipe'], len(plan['components']), len(plan['tiers']), plan['digest'],
        '; '.join('tier %d: %s' % (i + 1, ', '.join(t)) for i, t in enumerate(plan['tiers'])),
        ''.join(' (%s)' % n for n in plan['notes']))


def plan_file(plan):
    """plan.yaml content: recipe, recipe_digest and the components in install order (the documented keys)."""
    keys = ('name', 'kind', 'chart', 'repository', 'version', 'namespace', 'tier', 'depends_on')
    return {'recipe': plan['recipe'], 'recipe_digest': plan['digest'],
            'components': [dict((k, c[k]) for k in keys) for c in plan['components']]}
