#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: expected_resources
short_description: Check that every component of a recipe is deployed and healthy, polling until stable
version_added: 0.1.0
description:
  - For each component - its namespace is C(Active); its CRDs are C(Established); its Deployments have their
    replicas available; its DaemonSets are fully rolled out (desired > 0, ready = updated = desired,
    observedGeneration current); none of its pods is in C(CrashLoopBackOff), C(ImagePullBackOff), C(ErrImagePull),
    C(CreateContainerConfigError) or Pending longer than I(pending_timeout); its operator CRs report ready
    (C(ClusterPolicy) / C(NicClusterPolicy) C(status.state=ready)).
  - A component's workloads and pods are those of its Helm release (annotation C(meta.helm.sh/release-name) C(<release>),
    C(<release>-pre) or C(<release>-post), or label C(app.kubernetes.io/instance)) in its namespace, or those matching
    its C(label_selector).
  - With I(sriov_resources) (NVKE GB200, the stack plan's, one per rail) - every GPU worker node's allocatable has each
    resource at its count (the policy's C(numVfs)), a multus DaemonSet is rolled out and every
    C(SriovNetworkNodeState) is C(Succeeded).
  - With I(timeout) the checks repeat every I(poll_interval) seconds until they pass I(stable_polls) times in a row
    (nodes that reboot flap) or the time is up; the last evaluation is returned.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  components:
    description: The components of the recipe (the component catalog's C(name), C(namespace) and C(readiness)).
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description: Component name (also the Helm release name unless I(components[].release) is given).
        type: str
        required: true
      namespace:
        description: Namespace of the component.
        type: str
        required: true
      release:
        description: Helm release whose workloads belong to the component (default I(components[].name)).
        type: str
      label_selector:
        description: Select the component's workloads and pods by labels instead of the Helm release.
        type: str
      crds:
        description: CRDs that must be Established (the catalog's C(readiness.wait_for_crds)).
        type: list
        elements: str
        default: []
      ready:
        description: Custom resources that report readiness (the catalog's C(readiness.ready)).
        type: list
        elements: dict
        default: []
        suboptions:
          api_version:
            description: API version, for example C(nvidia.com/v1).
            type: str
            required: true
          kind:
            description: Kind, for example C(ClusterPolicy).
            type: str
            required: true
          name:
            description: Object name.
            type: str
            required: true
          namespace:
            description: Namespace of a namespaced resource.
            type: str
          path:
            description: Dotted path of the readiness field.
            type: str
            default: status.state
          value:
            description: Value that means ready.
            type: str
            default: ready
  sriov_resources:
    description:
      - The node resources of the SR-IOV rails and the VFs each must advertise, as the recipe's
        SriovNetworkNodePolicies ask (C(resourceName) with the C(nvidia.com/) prefix, C(numVfs)); role validate
        passes the stack plan's C(sriov_resources). Every GPU worker node's allocatable must hold each at exactly
        its count. Empty (and no O(sriov_rails)) skips the fabric checks.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The node resource, for example C(nvidia.com/sriov_resource_rail_0).
        type: str
        required: true
      count:
        description: VFs the resource must advertise.
        type: int
        required: true
  sriov_rails:
    description:
      - Number of SR-IOV rails (C(nvidia.com/sriov_resource_rail_0..N-1)), a short form of O(sriov_resources) for a
        call without a plan; needs O(num_vfs). 0 skips it.
    type: int
    default: 0
  num_vfs:
    description: VFs expected on each rail with O(sriov_rails) (no default - the recipe's C(numVfs) decides).
    type: int
  pending_timeout:
    description: Seconds a pod may stay Pending before it counts as a failure.
    type: int
    default: 300
  timeout:
    description: Seconds to poll until the checks are stable. 0 evaluates once.
    type: int
    default: 0
  poll_interval:
    description: Seconds between polls.
    type: int
    default: 10
  stable_polls:
    description: Consecutive passing polls needed before the result counts as stable.
    type: int
    default: 2
  fail_on_error:
    description: Fail when a check fails. With C(false) the module only reports.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.k8s_auth
seealso:
  - module: gpu_tray.cluster.cluster_preflight
  - module: gpu_tray.cluster.component_version
'''

EXAMPLES = r'''
- name: The GPU and Network Operators are healthy, and the rails are advertised
  gpu_tray.cluster.expected_resources:
    components:
      - name: gpu-operator
        namespace: gpu-operator
        ready:
          - {api_version: nvidia.com/v1, kind: ClusterPolicy, name: cluster-policy}
      - name: network-operator
        namespace: nvidia-network-operator
        crds: [nicclusterpolicies.mellanox.com]
        ready:
          - {api_version: mellanox.com/v1alpha1, kind: NicClusterPolicy, name: nic-cluster-policy}
    sriov_resources: "{{ __stack_plan.sriov_resources }}"
    timeout: 600
'''

RETURN = r'''
checks:
  description: Every check of the last evaluation, as a record (C(name), C(status), C(message), C(fix), C(details),
    C(data), C(object)); C(data.component) is the component it belongs to.
  type: list
  elements: dict
  returned: always
  sample: [{name: daemonset, status: failed, object: DaemonSet gpu-operator/nvidia-driver-daemonset, fix: '',
            message: 'DaemonSet gpu-operator/nvidia-driver-daemonset is not rolled out: 2 of 4 pods ready',
            details: [], data: {component: gpu-operator}}]
failed_checks:
  description: The failed checks (records, as in RV(checks)).
  type: list
  elements: dict
  returned: always
polls:
  description: How many times the checks ran.
  type: int
  returned: always
stable:
  description: True when the last I(stable_polls) evaluations all passed (or I(timeout) is 0 and the only one passed).
  type: bool
  returned: always
msg:
  description: Summary naming the API server and every failed check.
  type: str
  returned: always
'''

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils import resources
from ansible_collections.gpu_tray.cluster.plugins.module_utils.kube import (
    AUTH_ARG_SPEC,
    Reader,
    connect,
    finish,
    read_or_fail,
)

READY_SPEC = dict(
    api_version=dict(type='str', required=True),
    kind=dict(type='str', required=True),
    name=dict(type='str', required=True),
    namespace=dict(type='str'),
    path=dict(type='str', default='status.state'),
    value=dict(type='str', default='ready'),
)
COMPONENT_SPEC = dict(
    name=dict(type='str', required=True),
    namespace=dict(type='str', required=True),
    release=dict(type='str'),
    label_selector=dict(type='str'),
    crds=dict(type='list', elements='str', default=[]),
    ready=dict(type='list', elements='dict', default=[], options=READY_SPEC),
)


def build_module():
    spec = dict(AUTH_ARG_SPEC)
    spec.update(
        components=dict(type='list', elements='dict', required=True, options=COMPONENT_SPEC),
        sriov_resources=dict(type='list', elements='dict', default=[], options=dict(
            name=dict(type='str', required=True),
            count=dict(type='int', required=True),
        )),
        sriov_rails=dict(type='int', default=0),
        num_vfs=dict(type='int'),
        pending_timeout=dict(type='int', default=300),
        timeout=dict(type='int', default=0),
        poll_interval=dict(type='int', default=10),
        stable_polls=dict(type='int', default=2),
        fail_on_error=dict(type='bool', default=True),
    )
    return AnsibleModule(argument_spec=spec, supports_check_mode=True)


class Cluster(Reader):
    """The reads of the component checks."""

    def namespace(self, name):
        return self.get(self.core.read_namespace, name)

    def crd(self, name):
        return self.get(self.ext.read_custom_resource_definition, name)

    def listing(self, call, namespace, selector):
        return self.items(call, namespace, **({'label_selector': selector} if selector else {}))

    def custom_object(self, spec):
        group, _sep, version = spec['api_version'].rpartition('/')
        plural = self._plural(spec['api_version'], spec['kind'])
        if plural is None:
            return None
        if spec.get('namespace'):
            return self.get(self.custom.get_namespaced_custom_object, group, version, spec['namespace'], plural, spec['name'])
        return self.get(self.custom.get_cluster_custom_object, group, version, plural, spec['name'])

    def _plural(self, api_version, kind):
        group, _sep, version = api_version.rpartition('/')
        found = self.get(self.custom.get_api_resources, group, version) or {}
        for resource in found.get('resources', []):
            if resource.get('kind') == kind and '/' not in resource.get('name', ''):
                return resource['name']
        return None

    def all_daemonsets(self):
        return self.items(self.apps.list_daemon_set_for_all_namespaces)

    def nodes(self):
        return self.items(self.core.list_node)

    def sriov_states(self):
        return self.items(self.custom.list_cluster_custom_object, 'sriovnetwork.openshift.io', 'v1', 'sriovnetworknodestates')


def evaluate(reader, params):
    checks = []
    for component in params['components']:
        name, namespace = component['name'], component['namespace']
        own = []
        own.append(resources.check_namespace(namespace, reader.namespace(namespace)))
        for crd in component['crds']:
            own.append(resources.check_crd(crd, reader.crd(crd)))
        selector = component['label_selector']
        release = component['release'] or name
        if own[0]['status'] == 'passed':
            deployments = resources.select_workloads(
                reader.listing(reader.apps.list_namespaced_deployment, namespace, selector), release, bool(selector))
            daemonsets = resources.select_workloads(
                reader.listing(reader.apps.list_namespaced_daemon_set, namespace, selector), release, bool(selector))
            own += [resources.check_deployment(obj) for obj in deployments]
            own += [resources.check_daemonset(obj) for obj in daemonsets]
            pods = resources.select_workloads(reader.listing(reader.core.list_namespaced_pod, namespace, selector),
                                              release, True) if selector else [
                pod for pod in reader.listing(reader.core.list_namespaced_pod, namespace, None)
                if _owned_by(pod, deployments + daemonsets)]
            own += resources.pod_problems(pods, params['pending_timeout'])
        for spec in component['ready']:
            own.append(resources.check_ready(spec, reader.custom_object(spec)))
        for item in own:
            item['data']['component'] = name
        checks += own
    expected = [(item['name'], item['count']) for item in params['sriov_resources']]
    expected += resources.sriov_resources(params['sriov_rails'], params['num_vfs']) if params['sriov_rails'] else []
    if expected:
        fabric = resources.check_sriov_rails(reader.nodes(), expected)
        fabric += resources.check_multus(reader.all_daemonsets())
        fabric += resources.check_sriov_node_states(reader.sriov_states())
        for item in fabric:
            item['data']['component'] = 'sriov-fabric'
        checks += fabric
    return checks


def _owned_by(pod, workloads):
    """A pod of one of the workloads: same namespace and the workload's selector labels all on the pod."""
    labels = (pod.get('metadata') or {}).get('labels') or {}
    for obj in workloads:
        match = ((obj.get('spec') or {}).get('selector') or {}).get('matchLabels') or {}
        if match and all(labels.get(key) == value for key, value in match.items()):
            return True
    return False


def main():
    module = build_module()
    params = module.params
    if params['sriov_rails'] and params['num_vfs'] is None:
        module.fail_json(msg='option num_vfs is required with sriov_rails (the VFs each rail must advertise)')
    for option in ('sriov_rails', 'num_vfs', 'pending_timeout', 'timeout'):
        if params[option] is not None and params[option] < 0:
            module.fail_json(msg='option %s must be 0 or more, got %d' % (option, params[option]))
    for option in ('poll_interval', 'stable_polls'):
        if params[option] < 1:
            module.fail_json(msg='option %s must be 1 or more, got %d' % (option, params[option]))
    api = connect(module)
    server = api.configuration.host
    reader = Cluster(api)
    deadline = time.time() + params['timeout']
    polls = streak = 0
    checks = []
    while True:
        checks = read_or_fail(module, server, lambda: evaluate(reader, params),
                              'the cluster (check the credentials and that they may read namespaces, CRDs, workloads, '
                              'pods and nodes)',
                              dict(polls=polls))
        polls += 1
        passed = not [item for item in checks if item['status'] == 'failed']
        streak = streak + 1 if passed else 0
        if params['timeout'] == 0 or streak >= params['stable_polls'] or time.time() + params['poll_interval'] > deadline:
            break
        time.sleep(params['poll_interval'])
    failed = [item for item in checks if item['status'] == 'failed']
    stable = not failed and (params['timeout'] == 0 or streak >= params['stable_polls'])
    output = dict(changed=False, checks=checks, failed_checks=failed, polls=polls, stable=stable, api_server=server)
    for item in checks:
        if item['status'] == 'warning':
            module.warn('%s: %s: %s' % (server, item['data']['component'], item['message']))
    if not failed:
        output['msg'] = '%s: %d components healthy (%d checks, %d polls%s)' % (
            server, len(params['components']), len(checks), polls, '' if stable else ', not yet stable')
    else:
        output['msg'] = '%s: %d of %d checks failed after %d polls: %s' % (
            server, len(failed), len(checks), polls,
            ' | '.join('%s: %s' % (item['data']['component'], item['message']) for item in failed))
    finish(module, output, failed=bool(failed))


if __name__ == '__main__':
    main()
