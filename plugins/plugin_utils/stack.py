# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure functions behind the chart-stack filters (controller side, no I/O).

* ``resolve(catalog, recipes, recipe, ...)``: a recipe (with its ``base`` chain) composed over the component
  catalog, inventory overrides applied, versions and repositories checked, values merged, tiers computed.
* ``tiers(graph)``: the dependency DAG in tiers (stable: sorted by name inside a tier); fails on unknown
  names and cycles, naming them.
* ``merge_values(layers)``: deep merge (dicts merge key by key, lists and scalars replace) - AICR's rule.
* ``rail_ippools(base, rails, ...)``: nv-ipam pools per rail with netaddr (the library ansible.utils'
  ipaddr filters are built on).
* ``sriov_rails(rails, rail_pci, num_vfs)``: per-rail PF addresses (the site's explicit input) and the VF count.
* ``forbidden_values(values_by_component)``: DOCA-OFED / nvidia-peermem keys that must never be deployed.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from collections.abc import Mapping

try:
    import netaddr
    HAS_NETADDR = True
except ImportError:  # pragma: no cover - reported by rail_ippools
    HAS_NETADDR = False


class StackError(Exception):
    """A recipe, catalog or override that cannot be deployed; the message names the object and the fix."""


KINDS = ('helm', 'manifests')
# exact versions only: 1.2.3, v1.2.3, 1.2.3-rc.1, v0.1.0-alpha.13 (semver 2.0 with an optional leading v)
_PINNED = re.compile(r'^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?'
                     r'(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$')
# a manifest set may instead be pinned by the digest of the image it runs
_DIGEST = re.compile(r'^sha256:[0-9a-f]{64}$')
# fields of a catalog entry; a recipe reference may set any of them except name/kind/chart
COMPONENT_FIELDS = ('kind', 'chart', 'repository', 'version', 'namespace', 'values_files', 'values', 'depends_on',
                    'readiness', 'manifests', 'manifest_urls', 'manifests_phase', 'wait', 'timeout', 'enabled_by',
                    'description', 'chart_crds')
# where a helm chart's CRDs are (catalog.yml's header): what keeps them on removal and what upgrades them
CHART_CRDS = ('none', 'crds_dir', 'crds_dir_upgrade_hook', 'templates_kept_by_values', 'templates')
REF_FIELDS = ('enabled', 'version', 'repository', 'namespace', 'values_files', 'values', 'depends_on',
              'readiness', 'manifests', 'manifests_phase', 'wait', 'timeout')
OVERRIDE_FIELDS = ('enabled', 'version', 'repository', 'chart', 'namespace', 'values_files', 'values', 'timeout',
                   'manifest_urls')


def _plain(value):
    """A deep copy made of plain dicts and lists.

    copy.deepcopy() of the lazy containers ansible-core >= 2.19 hands to filters copies their templar too, which
    instantiates plugin loaders (a deprecation warning on ansible-core 2.21); rebuilding the data avoids it.
    """
    if isinstance(value, Mapping):
        return dict((k, _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def merge_values(layers):
    """Deep-merge dicts left to right: nested dicts merge key by key; lists, scalars and None replace."""
    result = {}
    for layer in layers:
        if layer is None:
            continue
        if not isinstance(layer, dict):
            raise StackError('values must be a mapping, got %s: %r' % (type(layer).__name__, layer))
        result = _merge(result, layer)
    return result


def _merge(base, over):
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = _plain(value)
    return out


def check_version(name, version, kind='helm', variable=None):
    """Refuse a missing, ranged, wildcard or floating version; returns the version as a string. ``variable``: the
    full path of the field the version came from when a site set it (gpu_tray_stack_overrides.<name>.version)."""
    if version is None or str(version).strip() == '':
        raise StackError('%scomponent %s has no version: pin an exact one (for example 1.2.3 or v1.2.3) in the '
                         'catalog or in gpu_tray_stack_overrides.%s.version'
                         % ('%s: ' % variable if variable else '', name, name))
    text = str(version).strip()
    if _PINNED.match(text) or (kind == 'manifests' and _DIGEST.match(text)):
        return text
    raise StackError('%s %r is not pinned: ranges (>=, ^, ~, x, *, ||), and floating tags (latest, stable) are '
                     'refused; set an exact version such as 1.2.3 or v1.2.3%s'
                     % (variable or 'component %s version' % name, text,
                        ' (or sha256:<digest> for a manifest set)' if kind == 'manifests' else ''))


def check_repository(name, kind, repository):
    if kind == 'manifests':
        if repository:
            raise StackError('component %s is kind manifests and takes no repository (got %r)' % (name, repository))
        return ''
    repo = str(repository or '').strip()
    if repo.startswith(('https://', 'oci://', '/')):
        return repo.rstrip('/') if repo != '/' else repo
    raise StackError('component %s repository %r must be an https:// or oci:// URL or an absolute local chart '
                     'directory; set it in stack_repositories or gpu_tray_stack_overrides.%s.repository'
                     % (name, repo, name))


_SHA256 = re.compile(r'^[0-9a-f]{64}$')


def _override_path(name, over, field):
    """The full path of an override's field (gpu_tray_stack_overrides.<name>.<field>) when the site set it."""
    return 'gpu_tray_stack_overrides.%s.%s' % (name, field) if field in over else None


def check_manifest_urls(name, entries, variable=None):
    """[{url, sha256, file}]: a fetched manifest needs an https://, file:// URL or an absolute path (made a file://
    URL) and the sha256 it is pinned by; two entries may not share a file name (they land in one folder)."""
    out = []
    for index, entry in enumerate(entries or []):
        url = str((entry or {}).get('url') or '').strip()
        sha = str((entry or {}).get('sha256') or '').strip().lower()
        where = ('%s[%d]: ' % (variable, index)) if variable else ''
        if url.startswith('/'):
            url = 'file://' + url
        if not url.startswith(('https://', 'file:///')):
            raise StackError('%scomponent %s: manifest URL %r must be https:// or an absolute path (a mirror of '
                             'stack_repositories.github_raw)' % (where, name, url))
        if not _SHA256.match(sha):
            raise StackError('%scomponent %s: manifest %s is not pinned by a sha256 (64 hex digits)'
                             % (where, name, url))
        out.append({'url': url, 'sha256': sha, 'file': url.rstrip('/').rsplit('/', 1)[1]})
    files = [e['file'] for e in out]
    clash = sorted(set(f for f in files if files.count(f) > 1))
    if clash:
        raise StackError('component %s fetches two manifests named %s' % (name, ', '.join(clash)))
    return out


def tiers(graph):
    """Tiers of a DAG given as {name: [dependency, ...]}: tier 0 has no dependencies, tier n depends only on
    earlier tiers. Names inside a tier are sorted, so the result is stable. Raises StackError on a dependency
    that is not a node and on a cycle (naming the cycle)."""
    for name, deps in sorted(graph.items()):
        unknown = sorted(set(deps or []) - set(graph))
        if unknown:
            raise StackError('component %s depends on unknown component(s) %s' % (name, ', '.join(unknown)))
    remaining = dict((n, set(d or [])) for n, d in graph.items())
    result = []
    done = set()
    while remaining:
        ready = sorted(n for n, d in remaining.items() if d <= done)
        if not ready:
            raise StackError('dependency cycle: %s' % ' -> '.join(_find_cycle(remaining)))
        result.append(ready)
        done.update(ready)
        for n in ready:
            del remaining[n]
    return result


def _find_cycle(graph):
    """One cycle in a graph where every node has an unresolved dependency (deterministic)."""
    start = sorted(graph)[0]
    path, seen = [start], {start: 0}
    node = start
    while True:
        node = sorted(d for d in graph[node] if d in graph)[0]
        if node in seen:
            return path[seen[node]:] + [node]
        seen[node] = len(path)
        path.append(node)


def recipe_chain(recipes, recipe):
    """Names from the root recipe to `recipe` (each recipe's `base`), refusing unknown names and loops."""
    chain = []
    name = recipe
    while name:
        if name not in recipes:
            # only the recipes one can deploy: an abstract base (rke2-vr200-common) is refused when asked for
            raise StackError('unknown recipe %r (known: %s)' % (name, ', '.join(
                sorted(n for n, r in recipes.items() if not (r or {}).get('abstract')))))
        if name in chain:
            raise StackError('recipe base loop: %s' % ' -> '.join(list(reversed(chain)) + [name]))
        chain.append(name)
        name = (recipes[name] or {}).get('base')
    return list(reversed(chain))


def compose(recipes, recipe):
    """Component references of a recipe after its base chain: a child's reference to the same component merges
    field by field (values deep-merge, values_files append, other fields replace)."""
    refs = {}
    for name in recipe_chain(recipes, recipe):
        for comp, ref in ((recipes[name] or {}).get('components') or {}).items():
            ref = ref or {}
            bad = sorted(set(ref) - set(REF_FIELDS))
            if bad:
                raise StackError('recipe %s, component %s: unknown field(s) %s (allowed: %s)'
                                 % (name, comp, ', '.join(bad), ', '.join(REF_FIELDS)))
            cur = refs.setdefault(comp, {})
            for key, value in ref.items():
                if key == 'values':
                    cur['values'] = merge_values([cur.get('values'), value])
                elif key == 'values_files':
                    cur['values_files'] = list(cur.get('values_files') or []) + list(value or [])
                else:
                    cur[key] = _plain(value)
    return refs


def values_files(catalog, recipes, recipe, overrides=None):
    """Every values file a recipe needs (catalog, recipe and override layers), each once, in order."""
    overrides = overrides or {}
    out = []
    for comp, ref in sorted(compose(recipes, recipe).items()):
        entry = catalog.get(comp) or {}
        for path in (list(entry.get('values_files') or []) + list(ref.get('values_files') or [])
                     + list((overrides.get(comp) or {}).get('values_files') or [])):
            if path not in out:
                out.append(path)
    return out


def resolve(catalog, recipes, recipe, overrides=None, files=None, options=None):
    """The resolved recipe: {'recipe', 'chain', 'components': [...in install order...], 'tiers': [[names]]}.

    Values of a component merge in this order (later wins): catalog values_files, catalog values, recipe
    values_files, recipe values (base recipe before child), override values_files, override values.
    `files` maps each values file path to its parsed content; `options` switches components whose catalog
    entry has `enabled_by: <option>`.
    """
    overrides = overrides or {}
    files = files or {}
    options = options or {}
    if (recipes.get(recipe) or {}).get('abstract'):
        raise StackError('recipe %s is a base for other recipes, not deployable; choose one of %s'
                         % (recipe, ', '.join(sorted(n for n, r in recipes.items() if not (r or {}).get('abstract')))))
    refs = compose(recipes, recipe)
    for name in sorted(overrides):
        if name not in refs:
            raise StackError('gpu_tray_stack_overrides names %s, which recipe %s does not contain (it has: %s)'
                             % (name, recipe, ', '.join(sorted(refs))))
        bad = sorted(set(overrides[name] or {}) - set(OVERRIDE_FIELDS))
        if bad:
            raise StackError('gpu_tray_stack_overrides.%s: unknown field(s) %s (allowed: %s)'
                             % (name, ', '.join(bad), ', '.join(OVERRIDE_FIELDS)))
    comps = {}
    for name in sorted(refs):
        if name not in catalog:
            raise StackError('recipe %s lists component %s, which the catalog does not define' % (recipe, name))
        entry = _plain(catalog[name] or {})
        bad = sorted(set(entry) - set(COMPONENT_FIELDS))
        if bad:
            raise StackError('catalog component %s: unknown field(s) %s' % (name, ', '.join(bad)))
        ref, over = refs[name], overrides.get(name) or {}
        gate = entry.get('enabled_by')
        if not ref.get('enabled', True) or not over.get('enabled', True) or (gate and not options.get(gate)):
            continue
        kind = entry.get('kind')
        if kind not in KINDS:
            raise StackError('catalog component %s: kind %r is not one of %s' % (name, kind, ', '.join(KINDS)))
        comp = dict((k, entry.get(k)) for k in ('kind', 'chart', 'namespace', 'readiness', 'manifests',
                                                'manifest_urls', 'manifests_phase', 'wait', 'timeout', 'description',
                                                'chart_crds'))
        for key in ('version', 'repository', 'namespace', 'depends_on', 'readiness', 'manifests',
                    'manifests_phase', 'wait', 'timeout'):
            if key in ref:
                comp[key] = _plain(ref[key])
        comp.setdefault('version', entry.get('version'))
        comp.setdefault('repository', entry.get('repository'))
        comp.setdefault('depends_on', list(entry.get('depends_on') or []))
        for key in ('version', 'repository', 'chart', 'namespace', 'timeout', 'manifest_urls'):
            if key in over:
                comp[key] = over[key]
        layers = []
        for source, label in ((entry, 'catalog'), (ref, 'recipe'), (over, 'override')):
            for path in source.get('values_files') or []:
                if path not in files:
                    raise StackError('values file %s of component %s (%s) was not loaded' % (path, name, label))
                layers.append(files[path])
            layers.append(source.get('values'))
        comp['name'] = name
        comp['version'] = check_version(name, comp.get('version'), kind, _override_path(name, over, 'version'))
        comp['repository'] = check_repository(name, kind, comp.get('repository'))
        if kind == 'helm' and not comp.get('chart'):
            raise StackError('catalog component %s is kind helm but names no chart' % name)
        comp['manifest_urls'] = check_manifest_urls(name, comp.get('manifest_urls'),
                                                    _override_path(name, over, 'manifest_urls'))
        # a chart whose CRDs are not known is treated as the unsafe case: the bundle and deploy_stack mark them keep
        comp['chart_crds'] = (comp.get('chart_crds') or 'templates') if kind == 'helm' else 'none'
        if comp['chart_crds'] not in CHART_CRDS:
            raise StackError('catalog component %s: chart_crds %r is not one of %s'
                             % (name, comp['chart_crds'], ', '.join(CHART_CRDS)))
        if kind == 'manifests':
            comp['chart'] = ''
            if not comp.get('manifests') and not comp['manifest_urls']:
                raise StackError('catalog component %s is kind manifests but lists no manifests' % name)
        if not comp.get('namespace'):
            raise StackError('component %s has no namespace' % name)
        comp['values'] = merge_values(layers)
        comp['manifests'] = list(comp.get('manifests') or [])
        comp['manifests_phase'] = comp.get('manifests_phase') or ('pre' if kind == 'manifests' else 'post')
        if comp['manifests_phase'] not in ('pre', 'post'):
            raise StackError('component %s: manifests_phase must be pre or post' % name)
        comp['readiness'] = comp.get('readiness') or {}
        comp['wait'] = True if comp.get('wait') is None else bool(comp['wait'])
        comp['timeout'] = comp.get('timeout') or '10m'
        comp['description'] = comp.get('description') or ''
        comps[name] = comp
    # a dependency must be a catalog component; one that this recipe leaves out (or disables) counts as satisfied
    for name, comp in sorted(comps.items()):
        unknown = sorted(d for d in comp['depends_on'] if d not in catalog)
        if unknown:
            raise StackError('component %s depends on unknown component(s) %s' % (name, ', '.join(unknown)))
        comp['depends_on'] = sorted(d for d in comp['depends_on'] if d in comps)
    levels = tiers(dict((n, c['depends_on']) for n, c in comps.items()))
    ordered = []
    for index, level in enumerate(levels):
        for name in level:
            comps[name]['tier'] = index
            ordered.append(comps[name])
    return {'recipe': recipe, 'chain': recipe_chain(recipes, recipe), 'components': ordered,
            'tiers': levels}


def pool_nodes(prefix, block, version=4):
    """How many nodes an nv-ipam pool of a /prefix subnet gives a block of ``block`` addresses each: nv-ipam hands
    out whole blocks from the subnet's usable addresses (IPv4: without the network and broadcast addresses), so
    floor(usable / block) - a /22 with perNodeBlockSize 50 holds 20 nodes."""
    size = 2 ** ((128 if version == 6 else 32) - int(prefix))
    usable = size - (2 if version == 4 else 1)
    return max(usable, 0) // int(block)


def _fitting(nodes, prefix, block, minimum_prefix, version=4):
    """What would fit ``nodes``: the largest block at this prefix (None below 2, too few addresses per node for a
    tray's VFs) and the longest prefix at this block (None when none fits within the base's)."""
    usable = 2 ** ((128 if version == 6 else 32) - int(prefix)) - (2 if version == 4 else 1)
    largest = usable // int(nodes) if nodes else None
    longest = None
    for candidate in range(int(prefix), int(minimum_prefix) - 1, -1):
        if pool_nodes(candidate, block, version) >= nodes:
            longest = candidate
            break
    return (largest if largest and largest >= 2 else None), longest


def rail_ippools(base, rails, prefix=22, per_node_block_size=50, name_format='sriov-ib-rail-{rail}', nodes=0):
    """One nv-ipam pool per rail: the rail-th /prefix subnet of `base` (10.255.0.0/16, /22: 10.255.<4n>.0/22).
    ``nodes`` (the inventory's GPU trays, each a node of every rail's pool): a pool that cannot give each of them a
    block is refused, naming the pool, the tray count and what would fit (the add-a-rack runbook's check)."""
    if not HAS_NETADDR:
        raise StackError('rail_ippools needs the Python library netaddr on the controller (pip install netaddr)')
    try:
        network = netaddr.IPNetwork(str(base))
    except (netaddr.AddrFormatError, ValueError, TypeError) as exc:
        raise StackError('IPPool base %r is not a network: %s' % (base, exc))
    if network.ip != network.network:
        raise StackError('IPPool base %s has host bits set; use %s' % (base, network.cidr))
    prefix = int(prefix)
    if prefix < network.prefixlen:
        raise StackError('IPPool prefix /%d is larger than the base %s' % (prefix, network.cidr))
    count = len(rails) if isinstance(rails, (list, tuple)) else int(rails)
    available = 2 ** (prefix - network.prefixlen)
    if count > available:
        raise StackError('IPPool base %s holds only %d /%d subnets, %d rails need one each'
                         % (network.cidr, available, prefix, count))
    size = 2 ** ((128 if network.version == 6 else 32) - prefix)
    block = int(per_node_block_size)
    if block < 1 or block > size:
        raise StackError('perNodeBlockSize %d does not fit a /%d subnet (%d addresses)' % (block, prefix, size))
    pools = []
    for index in range(count):
        subnet = netaddr.IPNetwork('%s/%d' % (netaddr.IPAddress(network.first + index * size,
                                                                network.version), prefix))
        pools.append({'rail': index, 'name': name_format.format(rail=index), 'subnet': str(subnet.cidr),
                      'per_node_block_size': block})
    holds = pool_nodes(prefix, block, network.version)
    if pools and int(nodes or 0) > holds:
        largest, longest = _fitting(int(nodes), prefix, block, network.prefixlen + (count - 1).bit_length(),
                                    network.version)
        fits = ['stack_ippool_per_node_block_size %d' % largest] if largest else []
        if longest is not None and longest != prefix:
            fits.append('stack_ippool_prefix %d' % longest)
        raise StackError(
            'IPPool %s (%s, perNodeBlockSize %d) holds %d nodes, the inventory has %d GPU trays: nv-ipam gives a node '
            'no rail address once the pool is out of blocks - set %s' % (
                pools[0]['name'], pools[0]['subnet'], block, holds, int(nodes),
                ' or '.join(fits) if fits else 'a larger stack_ippool_base'))
    return pools


_BDF = re.compile(r'^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$')
RAIL_PCI_VARIABLE = 'gpu_tray_rail_pci_addresses'


def sriov_rails(rails, rail_pci, num_vfs):
    """Per rail index: the rail device, its PF PCI address(es) on the trays, and the VF count to request.

    ``rail_pci`` maps each rail device to the PCI address of its PF (a string, or a list when tray models differ) -
    the site's tray model, an explicit input that the preflight verifies on every tray. A rail without an address,
    an address in another form than the kernel's (0000:03:00.0), an address on two rails or an entry for a device that
    is not a rail is refused: without rootDevices every policy would select every ConnectX-7 PF, and the SR-IOV
    operator gives all VFs to one rail's resource.
    """
    if num_vfs is None or num_vfs == '':
        raise StackError('the recipe builds SR-IOV VFs on every rail, but no VF count is set: set gpu_tray_num_vfs '
                         '(the platform profile gives it for its own recipes)')
    num_vfs = int(num_vfs)
    if num_vfs < 1:
        raise StackError('the SR-IOV VF count must be at least 1 (got %d; gpu_tray_num_vfs)' % num_vfs)
    rail_pci = rail_pci or {}
    if not isinstance(rail_pci, Mapping):
        raise StackError('%s must map each rail device to its PF PCI address (got %s)'
                         % (RAIL_PCI_VARIABLE, type(rail_pci).__name__))
    extra = sorted(set(rail_pci) - set(rails))
    if extra:
        one = len(extra) == 1
        raise StackError('%s names %s, which %s (rails: %s; gpu_tray_rails)'
                         % (RAIL_PCI_VARIABLE, ', '.join(extra), 'is not a rail' if one else 'are not rails',
                            ', '.join(rails)))
    missing = [rail for rail in rails if not rail_pci.get(rail)]
    if missing:
        raise StackError('%s has no PCI address for rail%s %s: set each rail\'s PF address on your tray model '
                         '(readlink /sys/class/infiniband/<rail>/device, or data.pci of the rails check in a preflight.json), '
                         'e.g. %s: {%s}'
                         % (RAIL_PCI_VARIABLE, 's' if len(missing) > 1 else '', ', '.join(missing),
                            RAIL_PCI_VARIABLE, ', '.join('%s: 0000:xx:00.0' % r for r in rails)))
    owner = {}
    out = []
    for index, rail in enumerate(rails):
        value = rail_pci[rail]
        addresses = [value] if isinstance(value, str) else list(value)
        for address in addresses:
            if not isinstance(address, str) or not _BDF.match(address):
                raise StackError('%s.%s: %r is not a PCI address as the kernel writes it (0000:03:00.0, lower case)'
                                 % (RAIL_PCI_VARIABLE, rail, address))
            if address in owner:
                raise StackError('%s gives %s to rails %s and %s: two policies would select the same PF'
                                 % (RAIL_PCI_VARIABLE, address, owner[address], rail))
            owner[address] = rail
        out.append({'rail': index, 'device': rail, 'root_devices': sorted(addresses), 'num_vfs': num_vfs})
    return out


# DOCA-OFED's driver container unloads the inbox mlx5_core (taking the node's primary address with it);
# driver.rdma deploys nvidia-peermem, which has no build for the 64k Grace kernel and needs OFED symbols.
FORBIDDEN_PATHS = (('ofedDriver',), ('driver', 'rdma'))


def forbidden_values(values_by_component):
    """Sorted list of {'component', 'path'} for each forbidden key found (at any depth below a chart alias)."""
    found = []

    def walk(component, node, trail):
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            path = trail + (key,)
            for bad in FORBIDDEN_PATHS:
                if path[-len(bad):] == bad:
                    found.append({'component': component, 'path': '.'.join(path)})
            walk(component, value, path)

    for component in sorted(values_by_component or {}):
        walk(component, values_by_component[component], ())
    return found
