#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: cluster_preflight
short_description: Check that a Kubernetes cluster can take a gpu_tray.cluster recipe before anything is installed
version_added: 0.1.0
description:
  - Reads the cluster through the Kubernetes API and checks it against the chosen recipe. Each check returns
    C(passed), C(failed), C(warning) or C(skipped) with a message naming the object, what was found, what was
    expected and the fix.
  - C(server-version) - the API server's version is inside the recipe's window (GB200 NVKE C(>= 1.34); VR200
    training C(>= 1.34.1); VR200 inference C(>= 1.34.1, < 1.36.0) because RKE2 1.36's Traefik CRDs collide with
    the Gateway API CRDs). Versions are compared as versions, never as strings.
  - C(service) - the nodes' C(spec.providerID) scheme (C(nico://) NVKE, C(aws) EKS, C(gce) GKE, C(azure) AKS,
    C(oci) OKE, C(rke2://)) or RKE2's node label, annotations or version suffix name the recipe's service.
  - C(control-plane-gpu-labels) - control-plane nodes carrying C(nvidia.com/gpu.present),
    C(nvidia.com/gpu.deploy.driver) or C(feature.node.kubernetes.io/pci-15b3.present) (a warning - the operators
    would deploy onto them), unless they are labelled C(nvidia.com/gpu.deploy.operands=false).
  - C(asap2-pod-cap) - nodes advertising C(nvidia.com/asap2_vf) run at most I(asap2_pod_cap) pods; warns when
    the pods on such a node plus I(added_pods_per_gpu_node) exceed it.
  - C(default-storage-class) - exactly one default StorageClass (required by C(-inference-dynamo), skipped
    otherwise).
  - C(load-balancer) - a LoadBalancer implementation (required by the inference recipes, skipped otherwise) - a
    Service of type LoadBalancer that received an address, MetalLB C(IPAddressPool) objects, a kube-vip
    C(kubevip) ConfigMap in C(kube-system), or a cloud service (EKS, GKE, AKS, OKE).
  - C(foreign-reboot-controllers) - NodeWright or Skyhook objects whose packages interrupt (reboot, restart
    services) GPU nodes (C(nvidia.com/gpu.present=true)) - a second controller that reboots or restarts the trays
    beside the rolling reboot (aicr#2572); evidence captured while one acts is ambiguous. A warning naming them.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  recipe:
    description:
      - The recipe the cluster is checked for.
    type: str
    required: true
    choices:
      - gb200-nvke-ubuntu-training
      - gb200-nvke-ubuntu-kubeflow
      - vr200-rke2-ubuntu-training
      - vr200-rke2-ubuntu-inference
      - vr200-rke2-ubuntu-inference-dynamo
  checks:
    description:
      - The checks to run (default all).
    type: list
    elements: str
    choices: [server-version, service, control-plane-gpu-labels, asap2-pod-cap, default-storage-class, load-balancer,
              foreign-reboot-controllers]
  added_pods_per_gpu_node:
    description:
      - DaemonSet pods the recipe's components add to each GPU node (from the component catalog), counted on top of
        the pods the node runs now for C(asap2-pod-cap).
    type: int
    default: 0
  asap2_pod_cap:
    description:
      - Pods a node advertising C(nvidia.com/asap2_vf) can run.
    type: int
    default: 28
  fail_on_error:
    description:
      - Fail when a check fails. With C(false) the module only reports. Warnings never fail.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.k8s_auth
seealso:
  - module: gpu_tray.cluster.component_version
'''

EXAMPLES = r'''
- name: The cluster can take the VR200 inference recipe
  gpu_tray.cluster.cluster_preflight:
    kubeconfig: /etc/rancher/rke2/rke2.yaml
    recipe: vr200-rke2-ubuntu-inference
  delegate_to: localhost
  run_once: true

- name: Report only, two checks
  gpu_tray.cluster.cluster_preflight:
    recipe: gb200-nvke-ubuntu-training
    checks: [server-version, control-plane-gpu-labels]
    fail_on_error: false
  register: preflight
'''

RETURN = r'''
checks:
  description: One entry per check, in the order run.
  type: list
  elements: dict
  returned: always
  contains:
    name:
      description: The check.
      type: str
    status:
      description: C(passed), C(failed), C(warning) or C(skipped).
      type: str
    message:
      description: What was found and what was expected.
      type: str
    fix:
      description: What to do about it; empty unless the check failed or warned.
      type: str
    details:
      description: One text per finding.
      type: list
      elements: str
    data:
      description: The structured findings (C(found), C(expected), C(nodes) ...).
      type: dict
    object:
      description: What was checked, or empty.
      type: str
  sample:
    - {name: server-version, status: failed, fix: 'Upgrade the cluster, or pick the recipe of the cluster version it runs.',
       message: 'Kubernetes v1.20.2 is outside >= 1.34 for gb200-nvke-ubuntu-training (fails >= 1.34): ...',
       details: [], data: {found: v1.20.2, expected: '>= 1.34'}, object: ''}
server_version:
  description: The API server's C(gitVersion).
  type: str
  returned: when the server was reached
  sample: v1.34.1+rke2r1
service:
  description: The service the nodes show (C(nvke), C(rke2), C(eks) ...), null when unknown.
  type: str
  returned: when the service check ran
failed_checks:
  description: Names of the failed checks.
  type: list
  elements: str
  returned: always
warning_checks:
  description: Names of the checks that warned.
  type: list
  elements: str
  returned: always
msg:
  description: Summary naming the API server and every failed or warning check.
  type: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpu_tray.cluster.plugins.module_utils import cluster_rules as rules
from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record
from ansible_collections.gpu_tray.cluster.plugins.module_utils import reboot_controllers
from ansible_collections.gpu_tray.cluster.plugins.module_utils.kube import (
    AUTH_ARG_SPEC,
    Reader,
    connect,
    finish,
    k8s_client,
    read_or_fail,
)

CHECKS = ['server-version', 'service', 'control-plane-gpu-labels', 'asap2-pod-cap', 'default-storage-class',
          'load-balancer', 'foreign-reboot-controllers']
# the kinds that reboot or restart nodes (NodeWright v0.18+, and the legacy Skyhook kind it mirrors)
REBOOT_CONTROLLER_KINDS = (('nodewright.nvidia.com', 'v1alpha1', 'nodewrights'), ('skyhook.nvidia.com', 'v1alpha1', 'skyhooks'))
CLOUD_LB_SERVICES = ('eks', 'gke', 'aks', 'oke')
DEFAULT_CLASS_ANNOTATIONS = ('storageclass.kubernetes.io/is-default-class',
                             'storageclass.beta.kubernetes.io/is-default-class')


def build_module():
    spec = dict(AUTH_ARG_SPEC)
    spec.update(
        recipe=dict(type='str', required=True, choices=sorted(rules.RECIPES)),
        checks=dict(type='list', elements='str', choices=CHECKS),
        added_pods_per_gpu_node=dict(type='int', default=0),
        asap2_pod_cap=dict(type='int', default=rules.ASAP2_POD_CAP),
        fail_on_error=dict(type='bool', default=True),
    )
    return AnsibleModule(argument_spec=spec, supports_check_mode=True)


class Cluster(Reader):
    """Lazy, cached reads of what the checks need."""

    def __init__(self, api):
        super(Cluster, self).__init__(api)
        self._nodes = self._pods = None

    def version(self):
        return k8s_client.VersionApi(self.api).get_code().git_version

    def nodes(self):
        if self._nodes is None:
            self._nodes = self.items(self.core.list_node)
        return self._nodes

    def pods_by_node(self):
        if self._pods is None:
            self._pods = {}
            for pod in self.items(self.core.list_pod_for_all_namespaces,
                                  field_selector='status.phase!=Succeeded,status.phase!=Failed'):
                node = pod.get('spec', {}).get('nodeName')
                if node:
                    self._pods[node] = self._pods.get(node, 0) + 1
        return self._pods

    def storage_classes(self):
        return self.items(k8s_client.StorageV1Api(self.api).list_storage_class)

    def lb_services(self):
        return [('%s/%s' % (svc['metadata']['namespace'], svc['metadata']['name']),
                 bool(svc.get('status', {}).get('loadBalancer', {}).get('ingress')))
                for svc in self.items(self.core.list_service_for_all_namespaces)
                if svc.get('spec', {}).get('type') == 'LoadBalancer']

    def metallb_pools(self):
        return ['%s/%s' % (item['metadata'].get('namespace'), item['metadata']['name'])
                for item in self.items(self.custom.list_cluster_custom_object, 'metallb.io', 'v1beta1', 'ipaddresspools')]

    def reboot_controllers(self):
        out = []
        for group, version, plural in REBOOT_CONTROLLER_KINDS:
            out.extend(self.items(self.custom.list_cluster_custom_object, group, version, plural))
        return out

    def kube_vip_ranges(self):
        data = (self.get(self.core.read_namespaced_config_map, 'kubevip', 'kube-system') or {}).get('data') or {}
        return sorted(key for key in data if key.startswith(('range-', 'cidr-')))


def check_storage_class(recipe_intent, classes):
    if recipe_intent != 'inference-dynamo':
        return record('default-storage-class', 'skipped', 'only the -inference-dynamo recipe needs one')
    defaults = sorted(item['metadata']['name'] for item in classes
                      if any(str((item['metadata'].get('annotations') or {}).get(key, '')).lower() == 'true'
                             for key in DEFAULT_CLASS_ANNOTATIONS))
    data = dict(found=defaults)
    if len(defaults) == 1:
        return record('default-storage-class', 'passed', 'default StorageClass %s' % defaults[0], data=data)
    if len(defaults) > 1:
        return record('default-storage-class', 'warning', 'several default StorageClasses (%s): a PVC without '
                      'storageClassName gets either' % ', '.join(defaults),
                      'Keep one annotated storageclass.kubernetes.io/is-default-class=true.', data=data)
    return record('default-storage-class', 'failed', 'no default StorageClass (%d classes, none annotated '
                  'storageclass.kubernetes.io/is-default-class=true): Dynamo\'s etcd/NATS and model caches claim '
                  'volumes without a class' % len(classes),
                  'RKE2 ships none: install one (for example local-path-provisioner or your CSI driver) and mark it '
                  'default.', data=data)


def check_load_balancer(recipe_intent, service, lb_services, pools, kube_vip):
    if not recipe_intent.startswith('inference'):
        return record('load-balancer', 'skipped', 'only the inference recipes need one')
    evidence = []
    served = [name for name, has_address in lb_services if has_address]
    if served:
        evidence.append('LoadBalancer Services with an address: %s' % ', '.join(served))
    if pools:
        evidence.append('MetalLB IPAddressPools %s' % ', '.join(pools))
    if kube_vip:
        evidence.append('kube-vip ConfigMap kube-system/kubevip (%s)' % ', '.join(kube_vip))
    if service in CLOUD_LB_SERVICES:
        evidence.append('the %s cloud controller' % service)
    if evidence:
        return record('load-balancer', 'passed', 'LoadBalancer implementation: %s' % '; '.join(evidence))
    pending = [name for name, has_address in lb_services if not has_address]
    return record('load-balancer', 'failed',
                  'no LoadBalancer implementation: no MetalLB IPAddressPool, no kube-system/kubevip ConfigMap%s; the '
                  'inference gateway would stay at EXTERNAL-IP <pending>'
                  % ('; LoadBalancer Services still pending: %s' % ', '.join(pending) if pending else ''),
                  'RKE2 ships none: install MetalLB (IPAddressPool + L2Advertisement in metallb-system) or kube-vip '
                  'with kube-vip-cloud-provider.', data=dict(pending=pending))


def check_reboot_controllers(objects, nodes):
    gpu = dict((n['metadata']['name'], n['metadata'].get('labels') or {}) for n in nodes
               if (n['metadata'].get('labels') or {}).get('nvidia.com/gpu.present') == 'true')
    found = reboot_controllers.foreign_reboot_controllers(objects, gpu, sorted(gpu))
    if not found:
        return record('foreign-reboot-controllers', 'passed',
                      'no NodeWright or Skyhook object interrupts the %d GPU node(s)' % len(gpu), data=dict(found=[]))
    names = ', '.join('%s %s (%s on %s)' % (o['kind'], o['name'], ', '.join(o['interrupts']), ', '.join(o['trays']))
                      for o in found)
    return record('foreign-reboot-controllers', 'warning',
                  '%s reboot or restart GPU nodes beside the rolling reboot: evidence captured while they act is '
                  'ambiguous, and the two controllers do not know of each other (aicr#2572)' % names,
                  'Pause or remove them, or re-validate once they are complete.', data=dict(found=found))


def run_checks(cluster, params, output):
    recipe = params['recipe']
    info = rules.recipe_info(recipe)
    selected = params['checks'] or CHECKS
    results = []
    version = None
    if 'server-version' in selected or 'service' in selected:
        version = cluster.version()
        output['server_version'] = version
    for name in CHECKS:
        if name not in selected:
            continue
        if name == 'server-version':
            results.append(rules.check_server_version(recipe, version))
        elif name == 'service':
            result = rules.check_service(recipe, cluster.nodes(), version)
            output['service'] = result['data']['found']
            results.append(result)
        elif name == 'control-plane-gpu-labels':
            results.append(rules.check_control_plane_gpu(cluster.nodes()))
        elif name == 'asap2-pod-cap':
            results.append(rules.check_asap2(cluster.nodes(), cluster.pods_by_node(), params['added_pods_per_gpu_node'],
                                             params['asap2_pod_cap']))
        elif name == 'default-storage-class':
            results.append(check_storage_class(info['intent'], cluster.storage_classes() if
                                               info['intent'] == 'inference-dynamo' else []))
        elif name == 'load-balancer':
            if info['intent'].startswith('inference'):
                service, _evidence = rules.detect_service(cluster.nodes(), version or '')
                results.append(check_load_balancer(info['intent'], service, cluster.lb_services(),
                                                   cluster.metallb_pools(), cluster.kube_vip_ranges()))
            else:
                results.append(check_load_balancer(info['intent'], None, [], [], []))
        elif name == 'foreign-reboot-controllers':
            results.append(check_reboot_controllers(cluster.reboot_controllers(), cluster.nodes()))
    return results


def main():
    module = build_module()
    params = module.params
    if not rules.HAS_PACKAGING:
        module.fail_json(msg=missing_required_lib('packaging'), exception=str(rules.PACKAGING_IMPORT_ERROR))
    for option in ('added_pods_per_gpu_node', 'asap2_pod_cap'):
        if params[option] < 0:
            module.fail_json(msg='option %s must be 0 or more, got %d' % (option, params[option]))
    api = connect(module)
    server = api.configuration.host
    output = dict(changed=False, recipe=params['recipe'], api_server=server)
    results = read_or_fail(module, server, lambda: run_checks(Cluster(api), params, output),
                           'the cluster (check the credentials and that they may list nodes, pods, services and '
                           'storage classes)', output)
    failed = [item['name'] for item in results if item['status'] == 'failed']
    warned = [item['name'] for item in results if item['status'] == 'warning']
    output.update(checks=results, failed_checks=failed, warning_checks=warned)
    for item in results:
        if item['status'] == 'warning':
            module.warn('%s: %s: %s' % (server, item['name'], item['message']))
    if not failed:
        output['msg'] = '%s: cluster preflight for %s passed (%d checks%s)' % (
            server, params['recipe'], len(results), ', warnings: %s' % ', '.join(warned) if warned else '')
    else:
        failures = ' | '.join('%s: %s' % (item['name'], item['message']) for item in results if item['status'] == 'failed')
        output['msg'] = '%s: cluster preflight for %s failed: %s' % (server, params['recipe'], failures)
    finish(module, output, failed=bool(failed))


if __name__ == '__main__':
    main()
