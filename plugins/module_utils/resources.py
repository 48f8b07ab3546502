# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure health rules of the deployed components (module gpu_tray.cluster.expected_resources).

Objects are the plain dicts the API returns (camelCase). The rules follow AICR's Chainsaw health checks
(``recipes/checks/*/health-check.yaml``, aicr.md 3.2): CRDs Established, Deployments available, DaemonSets
fully rolled out (desired > 0, ready = updated = desired, observedGeneration current), no pod in
CrashLoopBackOff / ImagePullBackOff / ErrImagePull / CreateContainerConfigError or Pending too long, an
operator's CR ``status.state == ready``; plus the NVKE fabric: every GPU node's allocatable carries
``nvidia.com/sriov_resource_rail_0..3`` equal to numVfs, multus runs, SriovNetworkNodeStates ``Succeeded``.
Each rule returns a check record (module_utils/check_record.py): name, status (passed / failed / warning), message
(the finding and where to look), object (the Kubernetes object).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import calendar
import time

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record, renamed
from ansible_collections.gpu_tray.cluster.plugins.module_utils.cluster_rules import is_control_plane

BAD_WAITING = ('CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError',
               'CreateContainerError', 'InvalidImageName')
RELEASE_ANNOTATION = 'meta.helm.sh/release-name'
SRIOV_PREFIX = 'nvidia.com/sriov_resource_rail_'


def _result(name, ok, message, obj, warning=False):
    return record(name, 'passed' if ok else ('warning' if warning else 'failed'), message, obj=obj)


def _meta(obj):
    return obj.get('metadata') or {}


def _ref(kind, obj):
    meta = _meta(obj)
    return '%s %s/%s' % (kind, meta.get('namespace'), meta.get('name')) if meta.get('namespace') else '%s %s' % (
        kind, meta.get('name'))


def check_namespace(name, obj):
    if obj is None:
        return _result('namespace', False, 'namespace %s does not exist: the component is not installed' % name,
                       'Namespace %s' % name)
    phase = (obj.get('status') or {}).get('phase')
    return _result('namespace', phase == 'Active', 'namespace %s is %s%s' % (
        name, phase, '' if phase == 'Active' else ' (expected Active; a Terminating namespace is being deleted)'),
        'Namespace %s' % name)


def check_crd(name, obj):
    ref = 'CustomResourceDefinition %s' % name
    if obj is None:
        return _result('crd', False, 'CRD %s does not exist (the chart or operator that creates it is missing)' % name, ref)
    conditions = dict((c.get('type'), c) for c in (obj.get('status') or {}).get('conditions') or [])
    established = conditions.get('Established', {})
    if established.get('status') == 'True':
        return _result('crd', True, 'CRD %s is Established' % name, ref)
    names = conditions.get('NamesAccepted', {})
    why = ''
    if names.get('status') == 'False':
        why = ': NamesAccepted=False (%s) - another CRD already owns these names' % names.get('message', names.get('reason'))
    return _result('crd', False, 'CRD %s is not Established%s' % (name, why or ' (Established=%s %s)' % (
        established.get('status', 'missing'), established.get('message', ''))), ref)


def check_deployment(obj):
    spec, status = obj.get('spec') or {}, obj.get('status') or {}
    desired = spec.get('replicas', 1)
    available = status.get('availableReplicas') or 0
    ref = _ref('Deployment', obj)
    current = (status.get('observedGeneration') or 0) >= (_meta(obj).get('generation') or 0)
    if desired == 0:
        return _result('deployment', True, '%s is scaled to 0' % ref, ref)
    if available == 0:
        return _result('deployment', False, '%s has 0 of %d replicas available: look at its pods (kubectl -n %s get pods) '
                       'and events' % (ref, desired, _meta(obj).get('namespace')), ref)
    if available < desired or not current:
        return _result('deployment', False, '%s has %d of %d replicas available%s' % (
            ref, available, desired, '' if current else ', its controller has not observed the latest generation yet'),
            ref, warning=True)
    return _result('deployment', True, '%s has %d of %d replicas available' % (ref, available, desired), ref)


def check_daemonset(obj):
    status = obj.get('status') or {}
    ref = _ref('DaemonSet', obj)
    desired = status.get('desiredNumberScheduled') or 0
    ready = status.get('numberReady') or 0
    updated = status.get('updatedNumberScheduled') or 0
    generation = _meta(obj).get('generation') or 0
    observed = status.get('observedGeneration') or 0
    problems = []
    if desired == 0:
        problems.append('no node is selected (desiredNumberScheduled 0): check its nodeSelector/affinity against the '
                        'node labels and its tolerations against the node taints')
    else:
        if ready != desired:
            problems.append('%d of %d pods ready' % (ready, desired))
        if updated != desired:
            problems.append('%d of %d pods updated' % (updated, desired))
    if observed < generation:
        problems.append('observedGeneration %d < generation %d (rollout not observed yet)' % (observed, generation))
    if problems:
        return _result('daemonset', False, '%s is not rolled out: %s' % (ref, '; '.join(problems)), ref)
    return _result('daemonset', True, '%s is rolled out on %d nodes' % (ref, desired), ref)


def _parse_time(value):
    try:
        return calendar.timegm(time.strptime(value, '%Y-%m-%dT%H:%M:%SZ'))
    except (TypeError, ValueError):
        return None


def pod_problems(pods, pending_timeout, now=None):
    """Failed checks for pods that cannot run: a bad waiting reason, phase Failed/Unknown, Pending too long."""
    now = time.time() if now is None else now
    found = []
    for pod in pods:
        ref = _ref('Pod', pod)
        status = pod.get('status') or {}
        phase = status.get('phase')
        reasons = []
        for key in ('initContainerStatuses', 'containerStatuses'):
            for container in status.get(key) or []:
                waiting = (container.get('state') or {}).get('waiting') or {}
                if waiting.get('reason') in BAD_WAITING:
                    reasons.append('container %s is %s%s' % (container.get('name'), waiting['reason'],
                                                             ': %s' % waiting['message'] if waiting.get('message') else ''))
        if phase in ('Failed', 'Unknown'):
            reasons.append('phase %s%s' % (phase, ' (%s)' % status['reason'] if status.get('reason') else ''))
        if phase == 'Pending' and not reasons:
            created = _parse_time(_meta(pod).get('creationTimestamp'))
            if created is not None and now - created > pending_timeout:
                unscheduled = [c for c in status.get('conditions') or []
                               if (c.get('type'), c.get('status')) == ('PodScheduled', 'False')]
                why = unscheduled[0].get('message') if unscheduled else None
                reasons.append('Pending for %ds (> %ds)%s' % (now - created, pending_timeout, ': %s' % why if why else ''))
        if reasons:
            found.append(_result('pod', False, '%s: %s' % (ref, '; '.join(reasons)), ref))
    return found


def get_path(obj, path):
    value = obj
    for part in path.split('.'):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def check_ready(spec, obj):
    """An operator CR reports readiness: ``get_path(obj, spec['path']) == spec['value']``."""
    ref = '%s %s' % (spec['kind'], spec['name'])
    if obj is None:
        return _result('ready', False, '%s (%s) does not exist' % (ref, spec['api_version']), ref)
    found = get_path(obj, spec['path'])
    ok = str(found) == str(spec['value'])
    hint = '' if ok else (' (expected %s: the operator is still reconciling or an operand failed; see its status)'
                          % spec['value'])
    return _result('ready', ok, '%s has %s=%s%s' % (ref, spec['path'], found, hint), ref)


def select_workloads(objects, release, label_selector_used=False):
    """Workloads that belong to a release: Helm's release annotation (``<release>``, ``<release>-pre``,
    ``<release>-post``) or ``app.kubernetes.io/instance``; everything when a label selector already chose them."""
    if label_selector_used:
        return list(objects)
    names = (release, release + '-pre', release + '-post')

    def belongs(obj):
        if (_meta(obj).get('annotations') or {}).get(RELEASE_ANNOTATION) in names:
            return True
        return (_meta(obj).get('labels') or {}).get('app.kubernetes.io/instance') in names

    return [obj for obj in objects if belongs(obj)]


def gpu_nodes(nodes):
    """Worker nodes labelled nvidia.com/gpu.present=true (control-plane nodes are cluster_preflight's concern)."""
    def gpu_present(node):
        return str((_meta(node).get('labels') or {}).get('nvidia.com/gpu.present', '')).lower() == 'true'

    return [node for node in nodes if gpu_present(node) and not is_control_plane(node)]


def sriov_resources(rails, num_vfs):
    """The node resources ``rails`` rails of ``num_vfs`` VFs each are advertised as: [(resource, count)]."""
    return [('%s%d' % (SRIOV_PREFIX, index), num_vfs) for index in range(rails)]


def check_sriov_rails(nodes, expected):
    """Every GPU node's allocatable has each ``(resource, count)`` of ``expected`` (the stack plan's SR-IOV policies:
    their resource and numVfs) at exactly that count."""
    workers = gpu_nodes(nodes)
    if not workers:
        return [_result('sriov-rails', False, 'no worker node is labelled nvidia.com/gpu.present=true (NFD/GFD not '
                        'running, or the GPU Operator has not labelled the trays yet)', 'Nodes')]
    counts = sorted(set(int(count) for _resource, count in expected))
    want = ('%d VFs' % counts[0]) if len(counts) == 1 else 'the VFs of its policy'
    out = []
    for node in workers:
        name = _meta(node).get('name')
        allocatable = (node.get('status') or {}).get('allocatable') or {}
        wrong = []
        for key, count in expected:
            value = allocatable.get(key)
            if str(value) != str(count):
                wrong.append('%s=%s (expected %d)' % (key, 'missing' if value is None else value, int(count)))
        if wrong:
            out.append(_result('sriov-rails', False, 'node %s: %s (the recipe asks %s on each of %d rails: check the '
                               'SriovNetworkNodeState of the node, the sriov-device-plugin pod and the rail\'s '
                               'NUM_OF_VFS)' % (name, ', '.join(wrong), want, len(expected)), 'Node %s' % name))
        else:
            out.append(_result('sriov-rails', True, 'node %s advertises %s on each of %d rails' % (name, want, len(expected)),
                               'Node %s' % name))
    return out


def check_sriov_node_states(states):
    if not states:
        return [_result('sriov-node-state', False, 'no SriovNetworkNodeState exists (the SR-IOV operator is not running)',
                        'SriovNetworkNodeStates')]
    out = []
    for state in states:
        status = state.get('status') or {}
        sync = status.get('syncStatus')
        ref = _ref('SriovNetworkNodeState', state)
        hint = '' if sync == 'Succeeded' else ' (expected Succeeded; %s)' % (status.get('lastSyncError') or 'still applying')
        out.append(_result('sriov-node-state', sync == 'Succeeded', '%s syncStatus %s%s' % (ref, sync, hint), ref))
    return out


def check_multus(daemonsets):
    multus = [ds for ds in daemonsets if 'multus' in (_meta(ds).get('name') or '')]
    if not multus:
        return [_result('multus', False, 'no multus DaemonSet in the cluster: the Network Operator\'s NicClusterPolicy '
                        'must enable secondaryNetwork.multus', 'DaemonSet *multus*')]
    return [renamed(check_daemonset(ds), 'multus') for ds in multus]
