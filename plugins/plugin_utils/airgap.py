# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The air-gap kit of a bundle: what a site without internet access must mirror, from a plan (pure, no I/O).

    plan (stack_plan.plan: its components as the bundle writes them, and ``canonical``: the same recipe with every
    stack_repositories / stack_registries entry a stand-in of its key)  ->  kit()  ->  files(): the bundle's mirror/

Each chart, image and fetched file is read twice at the same place: in the plan, where the site's mirror puts it
(what the bundle references), and in the canonical recipe, where the stand-in names the stack_repositories /
stack_registries key, which the catalog's default turns into the upstream location. So the kit says, per entry,
where to take it from and where the bundle expects it, for any layout of the site's mirror.

* ``kit(plan, defaults, provenance)``: {'charts', 'images', 'image_repositories', 'files', ...}.
* ``image_references(doc)``: [(key path, reference)] of every image a values set or an object names, in the shapes
  the recipes use: a container's ``image``; ``repository`` + ``image`` + ``version`` (NicClusterPolicy operands,
  gpu-operator style values); ``image`` + ``version`` (a NodeWright package); ``registry`` / ``repository`` + ``tag``
  / ``digest`` (chart values). A chart value naming a repository without a tag is an image repository whose tag the
  chart sets (``image_repositories`` of the kit, not pullable as it stands).
* ``files(kit)``: mirror/kit.yaml, images.txt, image-copies.txt, skopeo-sync.yaml, charts.txt, files.sha256.

Where the github_raw files sit is not in the kit (nor in the bundle): the files are in the bundle, so moving their
mirror to another folder changes neither the recipe digest nor the bundle digest. Where the registries and chart
repositories sit is (the bundle's values and sources reference them).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle, bundle_files, stack_plan

KIT_HEADER = ('# The air-gap kit of this bundle (gpu_tray.cluster.render_bundle): every chart, image and upstream file '
              'it needs,\n# where to take each from (upstream) and where the bundle expects it (the site\'s '
              'stack_repositories /\n# stack_registries). docs/airgap.md of the collection uses it step by step.\n')
SYNC_HEADER = ('# skopeo sync source (--src yaml): every image of the bundle at its upstream registry, by tag or by '
               'digest (a pin by\n# digest is copied by digest).\n'
               '#   skopeo sync --src yaml --dest docker --scoped --all --preserve-digests skopeo-sync.yaml '
               '<registry>/<prefix>\n'
               '# --scoped puts each image at <registry>/<prefix>/<upstream host>/<path>: the bundle finds them there '
               'when\n# stack_registries.<key> is <registry>/<prefix>/<upstream host> (nvcr: <registry>/<prefix>/'
               'nvcr.io, ...).\n')


def _text(value):
    return '' if value is None else str(value)


def split_reference(ref):
    """(name, tag, digest) of an image reference; the name keeps its registry host
    (``registry.k8s.io/networking/dranet:stable@sha256:ab`` -> ``registry.k8s.io/networking/dranet``, ``stable``,
    ``sha256:ab``). A colon in the registry host (a port) is not a tag."""
    name, _at, digest = ref.partition('@')
    tag = ''
    if ':' in name.rsplit('/', 1)[-1]:
        name, _colon, tag = name.rpartition(':')
    return name, tag, digest


def host_and_path(name):
    """(registry host, repository path) of an image name, as a container runtime reads it (no host: docker.io, and
    library/ for a one-part name)."""
    first, sep, rest = name.partition('/')
    if sep and ('.' in first or ':' in first or first == 'localhost'):
        return first, rest
    return 'docker.io', name if sep else 'library/' + name


def source_form(ref):
    """The reference skopeo, crane and a registry's replication read: a tag and a digest together are refused by
    skopeo ("Docker references with both a tag and digest are currently not supported"), so a pin by digest keeps
    the digest alone."""
    name, tag, digest = split_reference(ref)
    return '%s@%s' % (name, digest) if digest else ('%s:%s' % (name, tag) if tag else name)


def destination_form(ref):
    """Where a copy puts an image in the mirror: by its tag where it has one (the mirror keeps the tag; a copy
    with --preserve-digests keeps the digest the bundle pins), else by its digest."""
    name, tag, digest = split_reference(ref)
    return '%s:%s' % (name, tag) if tag else ('%s@%s' % (name, digest) if digest else name)


def _compose(node):
    """The image reference a mapping names, or None: ``image`` (joined to a ``repository`` and ``registry`` when
    there), else a ``repository`` (joined to a ``registry``) that is no URL; tagged with ``version`` / ``tag`` and
    ``digest`` / ``containerSHA`` unless the reference has its own."""
    image = node.get('image')
    parts = [node.get('registry'), node.get('repository')]
    if isinstance(image, str) and image:
        parts.append(image)
    elif not (isinstance(node.get('repository'), str) and node['repository'] and '://' not in node['repository']):
        return None
    ref = '/'.join(_text(p).strip('/') for p in parts if isinstance(p, str) and p)
    name, tag, digest = split_reference(ref)
    tag = tag or _text(node.get('version') if isinstance(image, str) and image else None) or _text(node.get('tag'))
    digest = digest or _text(node.get('digest')) or _text(node.get('containerSHA'))
    return name + (':' + tag if tag else '') + ('@' + digest if digest else '')


def image_references(doc, path=''):
    """[(key path, reference)] of every image ``doc`` (a values set or a Kubernetes object) names, in document
    order; a mapping whose ``image`` is itself a mapping (``image: {repository, tag}``) is read there."""
    out = []
    if isinstance(doc, dict):
        ref = _compose(doc)
        if ref:
            key = 'image' if isinstance(doc.get('image'), str) and doc['image'] else 'repository'
            out.append(('%s.%s' % (path, key) if path else key, ref))
        for key, value in doc.items():
            out += image_references(value, '%s.%s' % (path, key) if path else str(key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += image_references(value, '%s[%d]' % (path, index))
    return out


def complete(ref):
    """True when a reference names one image (a tag or a digest); a repository alone is the chart's to complete."""
    _name, tag, digest = split_reference(ref)
    return bool(tag or digest)


def _where(comp):
    """{place: reference} of every image a component's bundle files name: its values (a chart component's
    values.yaml) and each object of its manifests; a place is '<bundle file>: <object> <key path>'."""
    out = {}
    if comp['kind'] == 'helm':
        for key, ref in image_references(comp['values']):
            out['components/%s/values.yaml: %s' % (comp['name'], key)] = ref
    for name, objects in sorted(comp['objects'].items()):
        for obj in objects:
            meta = obj.get('metadata') or {}
            named = '/'.join(_text(meta.get(k)) for k in ('namespace', 'name') if meta.get(k))
            label = '%s %s' % (obj.get('kind'), named)
            for key, ref in image_references(obj):
                out['components/%s/%s: %s %s' % (bundle_files.folder(comp), name, label, key)] = ref
    return out


def _standin(value, standin, table):
    """(key, upstream value) of a stand-in place (``<standin><key>[/rest]``), or (None, value) for a place a site
    wrote itself."""
    if not value.startswith(standin):
        return None, value
    key, sep, rest = value[len(standin):].partition('/')
    if key not in table:
        return None, value
    return key, str(table[key]).rstrip('/') + (sep + rest if sep else '')


def kit(plan, defaults, provenance=None):
    """The air-gap kit of a plan (stack_plan.plan, with ``canonical``): where the site's mirror puts each thing is
    read from the plan, its upstream place from ``defaults``, the catalog's stack_repositories / stack_registries
    (registry.sources()); ``provenance`` is the vendored charts' record (bundle.provenance) when charts are vendored."""
    pinned = dict((c['name'], c) for c in plan['canonical']['components'])
    archives = dict((e['component'], e) for e in (provenance or {}).get('charts') or [])
    charts, images, repos, fetched = [], {}, [], []
    for comp in plan['components']:
        same = pinned.get(comp['name'], comp)
        if comp['kind'] == 'helm':
            key, upstream = _standin(same['repository'], stack_plan.REPOSITORY_STANDIN, defaults['repositories'])
            pull = bundle.vendor_paths([dict(comp, repository=upstream)])[comp['name']]['pull']
            entry = {'component': comp['name'], 'chart': comp['chart'], 'version': str(comp['version']),
                     'repository': upstream, 'mirror': comp['repository'],
                     'variable': 'stack_repositories.%s' % key if key else None,
                     'pull': 'helm %s %s' % ('package' if pull.get('package') else 'pull',
                                             ' '.join([pull['ref']] + pull['args']))}
            if comp['name'] in archives:
                entry.update(archive=archives[comp['name']]['archive'], sha256=archives[comp['name']]['sha256'])
            charts.append(entry)
        upstream_refs = _where(same)
        for place, ref in sorted(_where(comp).items()):
            key, upstream = _standin(upstream_refs.get(place, ref), stack_plan.REGISTRY_STANDIN,
                                     defaults['registries'])
            variable = 'stack_registries.%s' % key if key else None
            if not complete(ref):
                repos.append({'component': comp['name'], 'chart': comp['chart'] or None,
                              'version': str(comp['version']), 'file': place.split(': ', 1)[0],
                              'key': place.split(': ', 1)[1],
                              'repository': upstream, 'mirror': ref, 'variable': variable})
                continue
            item = images.setdefault(source_form(upstream), {
                'source': source_form(upstream), 'destination': destination_form(ref), 'reference': ref,
                'variable': variable, 'used_by': []})
            item['used_by'].append(place)
        for entry, pin in zip(comp['manifest_urls'], same['manifest_urls']):
            key, url = _standin(pin['url'], stack_plan.REPOSITORY_STANDIN, defaults['repositories'])
            below = pin['url'][len(stack_plan.REPOSITORY_STANDIN + 'github_raw/'):] if key == 'github_raw' else None
            fetched.append({'component': comp['name'], 'path': below, 'url': url if key else entry['url'],
                            'sha256': entry['sha256']})
    images = [images[k] for k in sorted(images)]
    return {'recipe': plan['recipe'], 'recipe_digest': plan['digest'],
            'skopeo_sync_destination': sync_destination(images),
            'charts': charts, 'images': images, 'image_repositories': repos, 'files': fetched}


def sync_destination(images):
    """The one <registry>/<prefix> under which ``skopeo sync --scoped`` puts every image where the bundle expects it
    (each destination is <prefix>/<upstream host>/<path>), or None when the site's registries are laid out
    otherwise (copy the pairs of image-copies.txt then) or nothing is mirrored."""
    prefixes = set()
    for item in images:
        destination, source = split_reference(item['destination'])[0], split_reference(item['source'])[0]
        host, path = host_and_path(source)
        tail = '/%s/%s' % (host, path)
        if not destination.endswith(tail):
            return None
        prefixes.add(destination[:-len(tail)])
    return prefixes.pop() if len(prefixes) == 1 else None


def skopeo_sync(images):
    """skopeo sync's YAML source: {upstream host: {images: {path: [tag or digest, ...]}}}, sorted."""
    out = {}
    for item in images:
        name, tag, digest = split_reference(item['source'])
        host, path = host_and_path(name)
        refs = out.setdefault(host, {'images': {}})['images'].setdefault(path, [])
        if (digest or tag) not in refs:
            refs.append(digest or tag)
    return dict((host, {'images': dict((p, sorted(r)) for p, r in sorted(out[host]['images'].items()))})
                for host in sorted(out))


def files(kit_doc):
    """[{path, content}] of the bundle's mirror/ folder (see the module docstring)."""
    images = kit_doc['images']
    sync_note = ''
    if kit_doc['skopeo_sync_destination']:
        sync_note = ('# This site\'s stack_registries are laid out so: skopeo sync ... skopeo-sync.yaml %s\n'
                     % kit_doc['skopeo_sync_destination'])
    out = [
        {'path': 'mirror/kit.yaml', 'content': KIT_HEADER + bundle_files.dump(kit_doc)},
        {'path': 'mirror/images.txt', 'content': ''.join('%s\n' % i['source'] for i in images)},
        {'path': 'mirror/image-copies.txt',
         'content': ''.join('%s %s\n' % (i['source'], i['destination']) for i in images)},
        {'path': 'mirror/skopeo-sync.yaml', 'content': SYNC_HEADER + sync_note + bundle_files.dump(skopeo_sync(images))},
        {'path': 'mirror/charts.txt', 'content': ''.join('%s %s %s %s\n' % (c['repository'], c['chart'], c['version'],
                                                                            c['mirror']) for c in kit_doc['charts'])},
        {'path': 'mirror/files.sha256', 'content': ''.join('%s  %s\n' % (f['sha256'], f['path'])
                                                           for f in kit_doc['files'] if f['path'])},
    ]
    return out


def summary(kit_doc):
    """One phrase for the render's last line: what the kit lists."""
    return 'air-gap kit mirror/: %d charts, %d images (+%d image repositories the charts tag), %d upstream files' % (
        len(kit_doc['charts']), len(kit_doc['images']), len(kit_doc['image_repositories']), len(kit_doc['files']))
