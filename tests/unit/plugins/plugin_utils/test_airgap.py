# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The air-gap kit (plugin_utils/airgap.py, issue 54 item 2), pure: image references in every shape the recipes
write them, the forms skopeo reads, the kit of a plan - each chart, image and upstream file at its upstream place
and where the bundle expects it - and the mirror/ files. The render and its comparison with the bundle it sits in:
tests/cluster/test_bundle_airgap.py."""

import os

import yaml

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import airgap, bundle, bundle_files, registry, stack_plan

PCI = {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0002:03:00.0', 'mlx5_3': '0010:03:00.0', 'mlx5_4': '0012:03:00.0'}
DRANET = 'sha256:3248d8a520584100a5e87a2b92039591ea3b83a5492cc3e2d881b20d3b18ada6'
# a site's mirror laid out as skopeo sync --scoped writes it: <prefix>/<upstream host>/<path>
SCOPED = {'nvcr': 'harbor.site/mirror/nvcr.io', 'ghcr': 'harbor.site/mirror/ghcr.io',
          'k8s': 'harbor.site/mirror/registry.k8s.io'}


def site(recipe, **more):
    return dict({'recipe': recipe, 'use_nodewright': True, 'rail_pci': PCI}, **more)


def kit_of(raw, provenance=None):
    return kit_and_plan(raw, provenance)[0]


def kit_and_plan(raw, provenance=None):
    the_plan = stack_plan.plan(raw)
    return airgap.kit(the_plan, registry.sources(), provenance), the_plan


# --- references --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize('ref, parts, source, destination', [
    ('registry.k8s.io/networking/dranet:stable@' + DRANET, ('registry.k8s.io/networking/dranet', 'stable', DRANET),
     'registry.k8s.io/networking/dranet@' + DRANET, 'registry.k8s.io/networking/dranet:stable'),
    ('localhost:5000/a/b:1.0', ('localhost:5000/a/b', '1.0', ''), 'localhost:5000/a/b:1.0', 'localhost:5000/a/b:1.0'),
    ('localhost:5000/a/b', ('localhost:5000/a/b', '', ''), 'localhost:5000/a/b', 'localhost:5000/a/b'),
    ('nvcr.io/x@' + DRANET, ('nvcr.io/x', '', DRANET), 'nvcr.io/x@' + DRANET, 'nvcr.io/x@' + DRANET),
])
def test_a_reference_splits_at_its_tag_and_digest_never_at_a_port(ref, parts, source, destination):
    assert airgap.split_reference(ref) == parts
    # skopeo refuses a tag and a digest together: the source keeps the pin, the copy's destination the tag
    assert airgap.source_form(ref) == source and airgap.destination_form(ref) == destination
    assert airgap.complete(ref) == bool(parts[1] or parts[2])


@pytest.mark.parametrize('name, expected', [
    ('nvcr.io/nvidia/mellanox/plugins', ('nvcr.io', 'nvidia/mellanox/plugins')),
    ('localhost:5000/x', ('localhost:5000', 'x')), ('localhost/x', ('localhost', 'x')),
    ('busybox', ('docker.io', 'library/busybox')), ('bitnami/redis', ('docker.io', 'bitnami/redis')),
])
def test_the_registry_host_of_a_name_is_the_container_runtimes(name, expected):
    assert airgap.host_and_path(name) == expected


def test_every_shape_of_an_image_the_recipes_write_is_read():
    doc = {
        # a container (dranet's DaemonSet)
        'spec': {'containers': [{'name': 'c', 'image': 'registry.k8s.io/networking/dranet:stable@' + DRANET}]},
        # a NicClusterPolicy operand: repository + image + version
        'nvIpam': {'image': 'nvidia-k8s-ipam', 'repository': 'nvcr.io/nvidia/mellanox/',
                   'version': 'network-operator-v26.4.1', 'enableWebhook': False},
        # a NodeWright package: image (no tag) + version, pinned by containerSHA
        'packages': {'p': {'image': 'ghcr.io/nvidia/nodewright-packages/nvidia-tuned', 'version': '0.10.0',
                           'containerSHA': DRANET}},
        # chart values: image: {repository, tag}; registry + repository + digest; a repository alone (the chart tags)
        'image': {'repository': 'registry.k8s.io/nfd/node-feature-discovery', 'tag': 'v0.19.0'},
        'prometheus': {'image': {'registry': 'quay.io', 'repository': 'prometheus/prometheus', 'digest': DRANET}},
        'operator': {'repository': 'nvcr.io/nvidia', 'version': 'v26.7.1'},
        # no image: a Git or chart repository URL, an image that is not a string
        'source': {'repository': 'https://github.com/x/y'}, 'flag': {'image': True},
    }
    assert airgap.image_references(doc) == [
        ('spec.containers[0].image', 'registry.k8s.io/networking/dranet:stable@' + DRANET),
        ('nvIpam.image', 'nvcr.io/nvidia/mellanox/nvidia-k8s-ipam:network-operator-v26.4.1'),
        ('packages.p.image', 'ghcr.io/nvidia/nodewright-packages/nvidia-tuned:0.10.0@' + DRANET),
        ('image.repository', 'registry.k8s.io/nfd/node-feature-discovery:v0.19.0'),
        ('prometheus.image.repository', 'quay.io/prometheus/prometheus@' + DRANET),
        # gpu-operator style: the chart adds the image name, so its version is no tag of the repository
        ('operator.repository', 'nvcr.io/nvidia'),
    ]


# --- the kit of a plan ---------------------------------------------------------------------------------------------

def test_the_inference_kit_lists_every_chart_image_and_file_upstream_and_at_the_mirror():
    raw = site('vr200-rke2-ubuntu-inference', registries=SCOPED,
               repositories={'github_raw': '/srv/raw', 'ngc': 'oci://harbor.site/charts/ngc'})
    kit, the_plan = kit_and_plan(raw)
    assert (kit['recipe'], kit['recipe_digest']) == ('vr200-rke2-ubuntu-inference', the_plan['digest'])
    helm = [c for c in the_plan['components'] if c['kind'] == 'helm']
    assert [c['component'] for c in kit['charts']] == [c['name'] for c in helm] and len(helm) == 13
    defaults = registry.sources()['repositories']
    for entry, comp in zip(kit['charts'], helm):
        key = entry['variable'].split('.', 1)[1]
        pinned = (comp['chart'], comp['version'], comp['repository'])
        assert (entry['chart'], entry['version'], entry['mirror']) == pinned
        assert entry['repository'] == defaults[key] and 'sha256' not in entry
    gpu = [c for c in kit['charts'] if c['component'] == 'gpu-operator'][0]
    assert gpu == {'component': 'gpu-operator', 'chart': 'gpu-operator', 'version': 'v26.7.1',
                   'repository': 'https://helm.ngc.nvidia.com/nvidia', 'mirror': 'oci://harbor.site/charts/ngc',
                   'variable': 'stack_repositories.ngc',
                   'pull': 'helm pull gpu-operator --repo https://helm.ngc.nvidia.com/nvidia --version v26.7.1'}
    kai = [c for c in kit['charts'] if c['component'] == 'kai-scheduler'][0]
    assert kai['pull'] == 'helm pull oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler --version v0.16.9'
    assert [(i['source'], i['destination'], i['variable']) for i in kit['images']] == [
        ('ghcr.io/nvidia/nodewright-packages/nvidia-tuned:0.10.0',
         'harbor.site/mirror/ghcr.io/nvidia/nodewright-packages/nvidia-tuned:0.10.0', 'stack_registries.ghcr'),
        ('ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1',
         'harbor.site/mirror/ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1', 'stack_registries.ghcr'),
        ('registry.k8s.io/networking/dranet@' + DRANET,
         'harbor.site/mirror/registry.k8s.io/networking/dranet:stable', 'stack_registries.k8s')]
    dranet = kit['images'][2]
    assert dranet['reference'] == 'harbor.site/mirror/registry.k8s.io/networking/dranet:stable@' + DRANET
    assert dranet['used_by'] == ['components/dranet/dranet.yaml: DaemonSet kube-system/dranet '
                                 'spec.template.spec.containers[0].image']
    assert kit['skopeo_sync_destination'] == 'harbor.site/mirror'
    repos = dict(((r['component'], r['key']), r) for r in kit['image_repositories'])
    assert len(repos) == 9 and repos[('nfd', 'image.repository')] == {
        'component': 'nfd', 'chart': 'node-feature-discovery', 'version': '0.19.0',
        'file': 'components/nfd/values.yaml', 'key': 'image.repository',
        'repository': 'registry.k8s.io/nfd/node-feature-discovery',
        'mirror': 'harbor.site/mirror/registry.k8s.io/nfd/node-feature-discovery', 'variable': 'stack_registries.k8s'}
    assert sorted(k for c, k in repos if c == 'gpu-operator') == sorted(
        '%s.repository' % k for k in ('operator', 'validator', 'driver', 'toolkit', 'devicePlugin', 'dcgmExporter',
                                      'gfd', 'gdrcopy'))
    # the twelve upstream files: the path below github_raw, the upstream URL, the pin - never the mirror's folder
    assert len(kit['files']) == 12 and all(f['component'] == 'agentgateway-crds' for f in kit['files'])
    pins = [e for c in the_plan['components'] for e in c['manifest_urls']]
    for entry, pin in zip(kit['files'], pins):
        assert pin['url'] == 'file:///srv/raw/' + entry['path'] and entry['sha256'] == pin['sha256']
        assert entry['url'] == 'https://raw.githubusercontent.com/' + entry['path']
    assert kit['files'][0]['path'] == ('kubernetes-sigs/gateway-api/v1.6.1/config/crd/standard/'
                                       'gateway.networking.k8s.io_backendtlspolicies.yaml')
    assert '/srv/raw' not in yaml.safe_dump(kit)


def test_the_kit_is_the_same_wherever_github_raw_sits_and_follows_the_registries():
    one = kit_of(site('vr200-rke2-ubuntu-inference', repositories={'github_raw': '/srv/a'}))
    two = kit_of(site('vr200-rke2-ubuntu-inference', repositories={'github_raw': 'https://artifacts.site/raw'}))
    assert one == two
    moved = kit_of(site('vr200-rke2-ubuntu-inference', registries={'ghcr': 'harbor.site/ghcr'}))
    assert [i['source'] for i in moved['images']] == [i['source'] for i in one['images']]
    assert [i['destination'] for i in moved['images']] == [
        'harbor.site/ghcr/nvidia/nodewright-packages/nvidia-tuned:0.10.0',
        'harbor.site/ghcr/nvidia/skyhook-packages/shellscript:1.1.1',
        'registry.k8s.io/networking/dranet:stable']
    # one registry moved, the others upstream, and not in the --scoped layout: no single skopeo sync destination
    assert moved['skopeo_sync_destination'] is None and one['skopeo_sync_destination'] is None


def test_the_nvke_kit_holds_the_nic_cluster_policy_operands_at_the_mirror():
    kit = kit_of(site('gb200-nvke-ubuntu-training', registries={'nvcr': 'harbor.site/nvcr'}))
    operands = [i for i in kit['images'] if i['variable'] == 'stack_registries.nvcr']
    assert [(i['source'], i['destination']) for i in operands] == [
        ('nvcr.io/nvidia/mellanox/%s:network-operator-v26.4.1' % name,
         'harbor.site/nvcr/nvidia/mellanox/%s:network-operator-v26.4.1' % name)
        for name in ('multus-cni', 'nvidia-k8s-ipam', 'plugins')]
    assert all(i['used_by'][0].startswith('components/network-operator-post/nic-cluster-policy.yaml: '
                                          'NicClusterPolicy nic-cluster-policy spec.') for i in operands)
    # the same shellscript image in one place (rdma-modules) once, with the operator's repository among the repositories
    assert [i['source'] for i in kit['images'] if i['variable'] == 'stack_registries.ghcr'] == [
        'ghcr.io/nvidia/skyhook-packages/shellscript:1.1.1']
    assert ('network-operator', 'operator.repository', 'harbor.site/nvcr/nvidia/cloud-native') in [
        (r['component'], r['key'], r['mirror']) for r in kit['image_repositories']]
    assert kit['files'] == []


def test_an_image_the_site_writes_itself_is_listed_as_it_stands():
    raw = site('vr200-rke2-ubuntu-training', overrides={'nfd': {'values': {'image': {
        'repository': 'registry.site/nfd', 'tag': 'v0.19.0-site'}}}})
    kit = kit_of(raw)
    mine = [i for i in kit['images'] if i['source'].startswith('registry.site/')]
    assert mine == [{'source': 'registry.site/nfd:v0.19.0-site', 'destination': 'registry.site/nfd:v0.19.0-site',
                     'reference': 'registry.site/nfd:v0.19.0-site', 'variable': None,
                     'used_by': ['components/nfd/values.yaml: image.repository']}]
    assert not [r for r in kit['image_repositories'] if r['component'] == 'nfd']


def test_vendored_charts_carry_the_sha256_of_their_archive():
    raw = site('vr200-rke2-ubuntu-training')
    the_plan = stack_plan.plan(raw)
    wanted = bundle.vendor_paths(the_plan['components'])
    digests = dict((v['archive'], ('%02d' % n) * 32) for n, v in enumerate(wanted.values()))
    provenance = bundle.provenance(the_plan['recipe'], the_plan['digest'], wanted, digests)
    kit = airgap.kit(the_plan, registry.sources(), provenance)
    assert len(kit['charts']) == len(wanted) == 11
    for entry in kit['charts']:
        archive = wanted[entry['component']]['archive']
        assert (entry['archive'], entry['sha256']) == (archive, digests[archive])


# --- the mirror/ files ---------------------------------------------------------------------------------------------

def test_the_mirror_files_are_lists_skopeo_helm_and_sha256sum_read():
    kit = kit_of(site('vr200-rke2-ubuntu-inference', registries=SCOPED))
    files = dict((f['path'], f['content']) for f in airgap.files(kit))
    assert sorted(files) == ['mirror/charts.txt', 'mirror/files.sha256', 'mirror/image-copies.txt',
                             'mirror/images.txt', 'mirror/kit.yaml', 'mirror/skopeo-sync.yaml']
    assert files['mirror/images.txt'].splitlines() == [i['source'] for i in kit['images']]
    assert files['mirror/image-copies.txt'].splitlines()[2] == (
        'registry.k8s.io/networking/dranet@%s harbor.site/mirror/registry.k8s.io/networking/dranet:stable' % DRANET)
    sync = yaml.safe_load(files['mirror/skopeo-sync.yaml'])
    assert sync == {'ghcr.io': {'images': {'nvidia/nodewright-packages/nvidia-tuned': ['0.10.0'],
                                           'nvidia/skyhook-packages/shellscript': ['1.1.1']}},
                    'registry.k8s.io': {'images': {'networking/dranet': [DRANET]}}}
    assert 'skopeo-sync.yaml harbor.site/mirror\n' in files['mirror/skopeo-sync.yaml']
    assert yaml.safe_load(files['mirror/kit.yaml']) == kit
    rows = [line.split(' ') for line in files['mirror/charts.txt'].splitlines()]
    assert rows[1] == ['https://charts.jetstack.io', 'cert-manager', 'v1.20.2', 'https://charts.jetstack.io']
    assert len(rows) == 13
    sums = [line.split('  ') for line in files['mirror/files.sha256'].splitlines()]
    assert sums == [[f['sha256'], f['path']] for f in kit['files']] and len(sums) == 12


def test_the_readme_names_each_fetched_file_upstream_and_the_kit():
    raw = site('vr200-rke2-ubuntu-inference', repositories={'github_raw': '/srv/raw'})
    kit, the_plan = kit_and_plan(raw)
    readme = bundle_files.readme(the_plan, ['helmfile'], {}, None, kit)
    assert '/srv/raw' not in readme
    assert ('| agentgateway-crds | `components/agentgateway-crds-pre/gateway.networking.k8s.io_gateways.yaml` | '
            'https://raw.githubusercontent.com/kubernetes-sigs/gateway-api/v1.6.1/config/crd/standard/'
            'gateway.networking.k8s.io_gateways.yaml |') in readme
    assert '| `mirror/kit.yaml` | 13 charts, 3 images, 9 image repositories' in readme
    # the kit's folder is the render's: what it holds and this render does not write is removed
    assert 'mirror' in bundle_files.MANAGED_DIRS
    keep, unpacked = bundle_files.layout(['mirror/kit.yaml'], {}, ['helmfile'])
    assert bundle_files.stale(['mirror', 'mirror/kit.yaml', 'mirror/old.txt'], keep, unpacked) == ['mirror/old.txt']


def test_the_guides_mirror_file_lets_one_skopeo_sync_fill_the_registry():
    """docs/airgap.md's step 1 file, as a site copies it: the registries in the --scoped layout (one skopeo sync of
    skopeo-sync.yaml fills them), two chart repositories at an OCI mirror, github_raw left upstream."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, '..', '..', '..', '..', 'docs', 'airgap.md')) as handle:
        text = handle.read()
    start = text.index('```yaml\n# group_vars/all/airgap.yml\nstack_registries:') + len('```yaml\n')
    airgap_file = yaml.safe_load(text[start:text.index('```', start)])
    kit = kit_of(site('vr200-rke2-ubuntu-inference', registries=airgap_file['stack_registries'],
                      repositories=airgap_file['stack_repositories']))
    assert kit['skopeo_sync_destination'] == 'harbor.example/mirror'
    assert [c['mirror'] for c in kit['charts'] if c['component'] in ('cert-manager', 'gpu-operator')] == [
        'oci://harbor.example/charts/jetstack', 'oci://harbor.example/charts/ngc']
    assert all(f['url'].startswith('https://raw.githubusercontent.com/kubernetes-sigs/') for f in kit['files'])
