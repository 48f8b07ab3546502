# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure rules of the cluster validation modules (cluster_preflight, component_version).

Versions are ordered by ``packaging.version`` (a dependency of ansible-core, so present wherever the
controller runs; the cluster modules run there, next to the kubernetes client). Kubernetes and chart
versions carry vendor suffixes PEP 440 does not know (``v1.34.1+rke2r1``, ``v1.34.2-eks-113cf36``,
``v1.35.0-gke.1200``), so normalise_version() keeps the release numbers and a real pre-release tag
(``-rc.1``, ``-beta.0``, ``-alpha.3``) and drops the rest; the suffix is reported, never compared.

Facts: AICR recipes (``recipes/overlays/*.yaml`` constraints ``K8s.server.version``), nodeprep notes on
RKE2 1.36 (Traefik CRDs collide with the Gateway API CRDs, AICR caps inference at ``< 1.36.0``) and on the
DRA driver (0.4.1 crash-loops on VR200's NVML architecture value; 0.5.0 under the
OwnerReferencesPermissionEnforcement admission plugin: the compute-domain daemon sets ownerReferences
without ``delete``/``finalizers`` RBAC).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils import recipes
from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record

try:
    from packaging.version import InvalidVersion, Version
    HAS_PACKAGING = True
    PACKAGING_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - packaging ships with ansible-core
    HAS_PACKAGING = False
    PACKAGING_IMPORT_ERROR = _exc
    Version = None

    class InvalidVersion(ValueError):
        pass

_VERSION = re.compile(r'^\s*[vV]?(\d+(?:\.\d+){0,3})(?:[-.]?(alpha|beta|rc)\.?(\d+))?(.*?)\s*$')
_OPS = ('>=', '<=', '==', '!=', '>', '<', '=')
_CLAUSE = re.compile(r'(>=|<=|==|!=|>|<|=)?\s*([vV]?\d[^\s,<>=!]*)')

# the recipes' platform (accelerator), service, intent and Kubernetes window: the registry's, generated into
# module_utils/recipes.py (the modules run on the API host, where the controller's data files are not)
RECIPES = dict((name, dict(platform=r['accelerator'], service=r['service'], intent=r['intent']))
               for name, r in recipes.RECIPES.items())

# providerID scheme -> Kubernetes service. nico:// is NVIDIA's NVKE; rke2:// and k3s:// come from the
# embedded cloud controller of RKE2/K3s.
PROVIDER_SCHEMES = {
    'nico': 'nvke',
    'aws': 'eks',
    'gce': 'gke',
    'azure': 'aks',
    'oci': 'oke',
    'rke2': 'rke2',
    'k3s': 'k3s',
    'kind': 'kind',
}

GPU_LABELS = ('nvidia.com/gpu.present', 'nvidia.com/gpu.deploy.driver', 'feature.node.kubernetes.io/pci-15b3.present')
CONTROL_PLANE_LABELS = ('node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master')
ASAP2_RESOURCE = 'nvidia.com/asap2_vf'
ASAP2_POD_CAP = 28


def require_packaging():
    """Raise a readable ImportError when ``packaging`` is missing (modules turn it into missing_required_lib)."""
    if not HAS_PACKAGING:
        raise ImportError('packaging is required to compare versions: %s' % PACKAGING_IMPORT_ERROR)


def normalise_version(text):
    """``'v1.34.1+rke2r1'`` -> ``('1.34.1', '+rke2r1')``; ``'v1.36.0-rc.1'`` -> ``('1.36.0rc1', '')``.

    Raises ValueError when ``text`` does not start with a release number.
    """
    match = _VERSION.match(str(text or ''))
    if not match:
        raise ValueError('%r is not a version such as 1.34.1, v26.7.0 or v1.34.1+rke2r1' % (text,))
    release, pre, pre_number, suffix = match.groups()
    normal = release
    if pre:
        normal += {'alpha': 'a', 'beta': 'b', 'rc': 'rc'}[pre] + pre_number
    return normal, suffix


def parse_version(text):
    """A comparable ``packaging.version.Version`` of a Kubernetes/chart/image version string."""
    require_packaging()
    normal, _suffix = normalise_version(text)
    try:
        return Version(normal)
    except InvalidVersion:  # pragma: no cover - normalise_version only yields valid PEP 440 strings
        raise ValueError('%r is not a valid version' % (text,))


def parse_constraint(text):
    """``'>= 1.34.1, < 1.36.0'`` (or AICR's ``'>= 1.34.1 < 1.36.0'``) -> ``[('>=', '1.34.1'), ('<', '1.36.0')]``.

    A bare version means ``==``. Raises ValueError on anything else.
    """
    source = str(text or '').strip()
    if not source:
        raise ValueError('empty version constraint (expected e.g. ">= 1.34.1, < 1.36.0")')
    clauses = []
    position = 0
    for match in _CLAUSE.finditer(source):
        gap = source[position:match.start()].strip().strip(',').strip()
        if gap:
            raise ValueError('cannot read %r in constraint %r' % (gap, source))
        operator = match.group(1) or '=='
        if operator == '=':
            operator = '=='
        # the bound needs no further check: _CLAUSE only matches text that starts with a release number, which
        # normalise_version always reads (the rest is a suffix)
        clauses.append((operator, match.group(2)))
        position = match.end()
    rest = source[position:].strip().strip(',').strip()
    if rest or not clauses:
        raise ValueError('cannot read %r in constraint %r (expected e.g. ">= v26.7.0" or ">= 1.34.1, < 1.36.0")'
                         % (rest or source, source))
    return clauses


def _compare(left, operator, right):
    return {
        '>=': left >= right, '<=': left <= right, '>': left > right, '<': left < right,
        '==': left == right, '!=': left != right,
    }[operator]


def check_constraint(version, constraint):
    """Is ``version`` inside ``constraint``? Returns (ok, failed clauses as text)."""
    actual = parse_version(version)
    failed = ['%s %s' % (operator, bound) for operator, bound in parse_constraint(constraint)
              if not _compare(actual, operator, parse_version(bound))]
    return not failed, failed


def recipe_info(recipe):
    """platform/service/intent of a recipe name (an old name: its alias's); ValueError naming the known recipes
    otherwise."""
    name = recipes.canonical(recipe)
    if name not in RECIPES:
        raise ValueError('unknown recipe %r (known: %s)' % (recipe, ', '.join(sorted(RECIPES))))
    return dict(RECIPES[name], recipe=name)


def server_window(recipe):
    """(constraint, reason) of the Kubernetes server versions a recipe supports."""
    window = recipes.RECIPES[recipe_info(recipe)['recipe']]['kubernetes']
    return window['version'], window['reason']


def check_server_version(recipe, git_version):
    """The server-version check's record (module_utils/check_record.py; ``data``: ``found``, ``expected``)."""
    constraint, reason = server_window(recipe)
    ok, failed = check_constraint(git_version, constraint)
    data = dict(found=git_version, expected=constraint)
    if ok:
        return record('server-version', 'passed', 'Kubernetes %s is inside %s for %s' % (git_version, constraint, recipe),
                      data=data)
    return record('server-version', 'failed', 'Kubernetes %s is outside %s for %s (fails %s): %s'
                  % (git_version, constraint, recipe, ' and '.join(failed), reason),
                  'Upgrade the cluster, or pick the recipe of the cluster version it runs.', data=data)


def service_from_provider_id(provider_id):
    """``'nico://rack1/tray03'`` -> ``'nvke'``; ``'aws:///us-east-1a/i-0abc'`` -> ``'eks'``; None when unknown."""
    if not provider_id or '://' not in provider_id:
        return None
    return PROVIDER_SCHEMES.get(provider_id.split('://', 1)[0].lower())


def _labels(node):
    return ((node.get('metadata') or {}).get('labels')) or {}


def detect_service(nodes, git_version=''):
    """The Kubernetes service behind a cluster: (service or None, evidence sentences).

    Order: providerID schemes (every node that has one; several services is itself reported), then RKE2's
    traces (label ``node.kubernetes.io/instance-type=rke2``, ``rke2.io/*`` annotations, ``+rke2`` in the
    server version).
    """
    services = {}
    for node in nodes:
        provider_id = (node.get('spec') or {}).get('providerID')
        service = service_from_provider_id(provider_id)
        if service:
            services.setdefault(service, []).append(node['metadata']['name'])
    if services:
        evidence = ['providerID %s:// on %s' % (next(k for k, v in PROVIDER_SCHEMES.items() if v == service),
                                                ', '.join(sorted(names)))
                    for service, names in sorted(services.items())]
        if len(services) > 1:
            return None, evidence + ['nodes of several services: %s' % ', '.join(sorted(services))]
        return next(iter(services)), evidence
    rke2 = []
    for node in nodes:
        annotations = (node.get('metadata') or {}).get('annotations') or {}
        if _labels(node).get('node.kubernetes.io/instance-type') == 'rke2' or any(
                key.startswith('rke2.io/') for key in annotations):
            rke2.append(node['metadata']['name'])
    if rke2:
        return 'rke2', ['RKE2 labels/annotations on %s' % ', '.join(sorted(rke2))]
    if '+rke2' in (git_version or ''):
        return 'rke2', ['server version %s' % git_version]
    return None, ['no providerID and no RKE2 label, annotation or version suffix']


def check_service(recipe, nodes, git_version=''):
    """The service check's record: the detected service must be the recipe's (``data``: ``found``, ``expected``)."""
    expected = recipe_info(recipe)['service']
    found, evidence = detect_service(nodes, git_version)
    data = dict(found=found, expected=expected)
    if found == expected:
        return record('service', 'passed', 'the cluster is %s (%s), as %s expects' % (found, '; '.join(evidence), recipe),
                      data=data)
    return record('service', 'failed', 'the cluster looks like %s (%s), %s is for %s clusters'
                  % (found or 'an unknown service', '; '.join(evidence), recipe, expected),
                  'Pick the recipe of this service, or run against the right kubeconfig/context.', data=data)


def is_control_plane(node):
    labels = _labels(node)
    if any(key in labels for key in CONTROL_PLANE_LABELS):
        return True
    taints = (node.get('spec') or {}).get('taints') or []
    return any(taint.get('key') in CONTROL_PLANE_LABELS for taint in taints)


def _truthy_label(value):
    return str(value).strip().lower() not in ('false', '0', '')


def control_plane_gpu_nodes(nodes):
    """Control-plane nodes carrying GPU/NIC labels: list of dicts (name, labels found, excluded).

    ``excluded`` is true when ``nvidia.com/gpu.deploy.operands=false`` is set (the GPU Operator then deploys
    no operand there).
    """
    found = []
    for node in nodes:
        if not is_control_plane(node):
            continue
        labels = _labels(node)
        present = sorted(key for key in GPU_LABELS if key in labels and _truthy_label(labels[key]))
        if present:
            excluded = str(labels.get('nvidia.com/gpu.deploy.operands', '')).lower() == 'false'
            found.append(dict(name=node['metadata']['name'], labels=present, excluded=excluded))
    return found


def check_control_plane_gpu(nodes):
    """The control-plane GPU label check's record (passed / warning; ``data.nodes``)."""
    found = control_plane_gpu_nodes(nodes)
    pending = [item for item in found if not item['excluded']]
    if not pending:
        message = 'no control-plane node carries GPU/NIC labels'
        if found:
            message = 'control-plane nodes with GPU labels are excluded (nvidia.com/gpu.deploy.operands=false): %s' % (
                ', '.join(item['name'] for item in found))
        return record('control-plane-gpu-labels', 'passed', message, data=dict(nodes=found))
    return record('control-plane-gpu-labels', 'warning',
                  'control-plane nodes carry GPU/NIC labels: %s; the GPU and Network Operators would schedule drivers '
                  'and device plugins there'
                  % '; '.join('%s (%s)' % (item['name'], ', '.join(item['labels'])) for item in pending),
                  'Exclude them: kubectl label node <name> nvidia.com/gpu.deploy.operands=false (the GPU Operator then '
                  'skips the node), and keep the node-role.kubernetes.io/control-plane:NoSchedule taint so no operand '
                  'or workload lands there.', data=dict(nodes=found))


def node_advertises(node, resource):
    status = node.get('status') or {}
    for key in ('allocatable', 'capacity'):
        value = (status.get(key) or {}).get(resource)
        if value not in (None, '', '0'):
            return True
    return False


def asap2_pod_budget(pods_on_node, added_per_node, cap=ASAP2_POD_CAP):
    """Pods a node will run once the recipe's DaemonSets land: (total, over_cap)."""
    total = int(pods_on_node) + int(added_per_node)
    return total, total > cap


def check_asap2(nodes, pods_by_node, added_per_node, cap=ASAP2_POD_CAP):
    """Result dict of the asap2_vf pod-cap check.

    ``pods_by_node``: non-terminated pods now on each node; ``added_per_node``: DaemonSet pods the recipe adds
    to each GPU node. Nodes advertising ``nvidia.com/asap2_vf`` get at most ``cap`` pods.
    """
    report, over = [], []
    for node in nodes:
        if not node_advertises(node, ASAP2_RESOURCE):
            continue
        name = node['metadata']['name']
        now = pods_by_node.get(name, 0)
        total, is_over = asap2_pod_budget(now, added_per_node, cap)
        report.append(dict(name=name, pods=now, added=added_per_node, total=total, cap=cap, over=is_over))
        if is_over:
            over.append('%s (%d pods now + %d from the recipe = %d)' % (name, now, added_per_node, total))
    data = dict(nodes=report)
    if not report:
        return record('asap2-pod-cap', 'passed', 'no node advertises %s' % ASAP2_RESOURCE, data=data)
    if not over:
        return record('asap2-pod-cap', 'passed', 'nodes advertising %s stay within %d pods: %s' % (
            ASAP2_RESOURCE, cap, ', '.join('%s (%d)' % (item['name'], item['total']) for item in report)), data=data)
    return record('asap2-pod-cap', 'warning', 'nodes advertising %s can run at most %d pods, the recipe would exceed it '
                  'on %s' % (ASAP2_RESOURCE, cap, '; '.join(over)),
                  'Move workloads off these nodes, disable optional DaemonSets on them (node selectors) or use nodes '
                  'without asap2 VFs.', data=data)


def admission_plugins_from_args(args):
    """Admission plugins enabled by a kube-apiserver command line (``--enable-admission-plugins=A,B`` or the
    flag and its value as two items). Empty when the flag is absent (the defaults are not listed)."""
    plugins = []
    items = list(args or [])
    for index, item in enumerate(items):
        value = None
        if item.startswith('--enable-admission-plugins='):
            value = item.split('=', 1)[1]
        elif item == '--enable-admission-plugins' and index + 1 < len(items):
            value = items[index + 1]
        if value:
            plugins.extend(name.strip() for name in value.split(',') if name.strip())
    return plugins


def dra_driver_rules(version, platform, service, admission_plugins=()):
    """Built-in DRA driver (dra-driver-nvidia-gpu) rules: a list of (status, message), status failed or warning.

    * 0.4.1 on VR200 fails: it crash-loops on the NVML architecture value VR200 reports.
    * NVKE needs 0.5.1 or later: its API servers enforce OwnerReferencesPermissionEnforcement, and 0.5.0's
      compute-domain daemon sets ownerReferences on ComputeDomainClique objects without ``delete`` /
      ``finalizers`` RBAC.
    * 0.5.0 elsewhere with that admission plugin enabled is flagged (a warning: the failure is inferred
      from the chart's RBAC, not a documented issue).
    """
    findings = []
    actual = parse_version(version)
    if platform == 'vr200' and actual == parse_version('0.4.1'):
        findings.append(('failed', 'DRA driver 0.4.1 crash-loops on VR200 (it does not know the NVML architecture '
                                   'value VR200 reports): install 0.5.0 or later'))
    owner_refs = 'OwnerReferencesPermissionEnforcement' in (admission_plugins or ())
    fix = ('the compute-domain daemon sets ownerReferences on ComputeDomainClique objects without delete/finalizers '
           'RBAC, which that admission plugin refuses')
    if service == 'nvke' and actual < parse_version('0.5.1'):
        findings.append(('failed', 'DRA driver %s on NVKE: NVKE enforces OwnerReferencesPermissionEnforcement and '
                                   'needs 0.5.1 or later (%s)' % (version, fix)))
    elif owner_refs and actual == parse_version('0.5.0'):
        findings.append(('warning', 'DRA driver 0.5.0 with OwnerReferencesPermissionEnforcement enabled on the API '
                                    'server: %s; use 0.5.1 or later' % fix))
    return findings


# ---- deployed component versions ------------------------------------------------------------------

VERSION_LABELS = ('app.kubernetes.io/version',)
VERSION_ANNOTATIONS = ('app.kubernetes.io/version', 'nvidia.com/version')
_CHART_LABEL = re.compile(r'-([vV]?\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.+-]*)?)$')

# Where each component's version can be read, as AICR's charts deploy them (namespaces: AICR recipes/registry).
KNOWN_COMPONENTS = {
    'gpu-operator': dict(kind='Deployment', namespace='gpu-operator', name='gpu-operator'),
    'network-operator': dict(kind='Deployment', namespace='nvidia-network-operator', name='network-operator'),
    'nvidia-dra-driver-gpu': dict(kind='DaemonSet', namespace='nvidia-dra-driver',
                                  name='nvidia-dra-driver-gpu-kubelet-plugin'),
}


def image_tag(image):
    """``'nvcr.io/nvidia/gpu-operator:v26.7.0@sha256:ab..'`` -> ``'v26.7.0'``; None without a tag."""
    if not image:
        return None
    name = image.split('@', 1)[0]
    last = name.rsplit('/', 1)[-1]
    if ':' not in last:
        return None
    return last.rsplit(':', 1)[1] or None


def _is_version(text):
    try:
        normalise_version(text)
        return True
    except ValueError:
        return False


def workload_version(obj, container=None):
    """Deployed version of a workload (a Deployment/DaemonSet/StatefulSet dict as the API returns it).

    Looks, in this order, at: the ``app.kubernetes.io/version`` label (workload, then pod template), the
    ``helm.sh/chart`` label's version suffix, the image tag of ``container`` (or the first container), the
    ``app.kubernetes.io/version`` / ``nvidia.com/version`` annotations. Returns (version, source) or
    (None, reason).
    """
    metadata = obj.get('metadata') or {}
    template = ((obj.get('spec') or {}).get('template') or {})
    template_meta = template.get('metadata') or {}
    for where, labels in (('label', metadata.get('labels') or {}), ('pod template label', template_meta.get('labels') or {})):
        for key in VERSION_LABELS:
            if labels.get(key) and _is_version(labels[key]):
                return labels[key], '%s %s' % (where, key)
    chart = (metadata.get('labels') or {}).get('helm.sh/chart', '')
    match = _CHART_LABEL.search(chart)
    if match and _is_version(match.group(1)):
        return match.group(1), 'label helm.sh/chart %s' % chart
    containers = (template.get('spec') or {}).get('containers') or []
    chosen = [item for item in containers if container is None or item.get('name') == container]
    if container is not None and not chosen:
        return None, 'no container %s (containers: %s)' % (container, ', '.join(item.get('name', '?') for item in containers))
    if chosen:
        tag = image_tag(chosen[0].get('image'))
        if tag and _is_version(tag):
            return tag, 'image tag of container %s (%s)' % (chosen[0].get('name'), chosen[0].get('image'))
    for where, annotations in (('annotation', metadata.get('annotations') or {}),
                               ('pod template annotation', template_meta.get('annotations') or {})):
        for key in VERSION_ANNOTATIONS:
            if annotations.get(key) and _is_version(annotations[key]):
                return annotations[key], '%s %s' % (where, key)
    return None, 'no version label, versioned image tag or version annotation'
