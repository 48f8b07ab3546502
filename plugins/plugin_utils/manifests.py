# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The objects of the catalog's manifest files, built from a resolved component (pure, no I/O).

A catalog entry names its manifests by file name (``manifests: [ippools.yaml, ...]``); :data:`BUILDERS` maps each
name to the function that builds its objects from the component (namespace, version, merged values) and the site's
site (:class:`Site`: rail pools, SR-IOV rails, image registries). Every object a recipe applies is therefore data that unit tests
and the mutation check reach, and the bundle writes exactly what ``deploy_stack`` applies.

Sources of each shape are named at the builder; tests/upstream holds the custom resources against the real CRDs.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

NVIDIA_VENDOR = '15b3'


class Site(object):
    """What a site adds to a component: its SR-IOV InfiniBand fabric - ``ippools`` (stack.rail_ippools) and
    ``rails`` (stack.sriov_rails) - and its image ``registries`` (stack_registries)."""

    def __init__(self, ippools=None, rails=None, registries=None):
        self.ippools = list(ippools or [])
        self.rails = list(rails or [])
        self.registries = dict(registries or {})


def _meta(name, namespace=None, labels=None):
    out = {'name': name}
    if namespace is not None:
        out['namespace'] = namespace
    if labels:
        out['labels'] = dict(labels)
    return out


def dranet(comp, site):
    """dranet: DRA network driver (AICR recipes/components/dranet/manifests/dranet.yaml, v1.0.0 shape)."""
    ns, v = comp['namespace'], comp['values']
    labels = {'app.kubernetes.io/name': 'dranet'}
    mounts = (('plugins-registry', '/var/lib/kubelet/plugins_registry'), ('plugins', '/var/lib/kubelet/plugins'),
              ('nri-plugin', '/var/run/nri'))
    return [
        {'apiVersion': 'v1', 'kind': 'ServiceAccount', 'metadata': _meta('dranet', ns)},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRole', 'metadata': _meta('dranet'),
         'rules': [
             {'apiGroups': [''], 'resources': ['nodes'], 'verbs': ['get', 'list', 'watch']},
             {'apiGroups': ['resource.k8s.io'], 'resources': ['resourceslices'],
              'verbs': ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']},
             {'apiGroups': ['resource.k8s.io'], 'resources': ['resourceclaims', 'deviceclasses'],
              'verbs': ['get', 'list', 'watch']}]},
        {'apiVersion': 'rbac.authorization.k8s.io/v1', 'kind': 'ClusterRoleBinding', 'metadata': _meta('dranet'),
         'roleRef': {'apiGroup': 'rbac.authorization.k8s.io', 'kind': 'ClusterRole', 'name': 'dranet'},
         'subjects': [{'kind': 'ServiceAccount', 'name': 'dranet', 'namespace': ns}]},
        {'apiVersion': 'resource.k8s.io/v1', 'kind': 'DeviceClass', 'metadata': _meta('mlnx-cx9'),
         'spec': {'selectors': [{'cel': {'expression': 'device.driver == "dra.net"'}}]}},
        {'apiVersion': 'apps/v1', 'kind': 'DaemonSet', 'metadata': _meta('dranet', ns, labels),
         'spec': {
             'selector': {'matchLabels': dict(labels)},
             'template': {
                 'metadata': {'labels': dict(labels)},
                 'spec': {
                     'serviceAccountName': 'dranet',
                     'hostNetwork': True,
                     'nodeSelector': dict(v['node_selector']),
                     'tolerations': [{'operator': 'Exists'}],
                     'containers': [{
                         'name': 'dranet',
                         'image': v['image'],
                         'args': ['/dranet', '--v=4', '--filter=%s' % v['filter']],
                         'securityContext': {'privileged': True},
                         'volumeMounts': [{'name': name, 'mountPath': path} for name, path in mounts]}],
                     'volumes': [{'name': name, 'hostPath': {'path': path}} for name, path in mounts]}}}},
    ]


def kernel_module_params(comp, site):
    """AICR recipes/components/gpu-operator/manifests/kernel-module-params.yaml: GPUDirect RDMA over dma-buf with a
    PCIe NIC on Grace (drivers up to 580.173.02; R595+ has no such option). Referenced by
    driver.kernelModuleConfig.name. One module parameter per line, bare: the GPU driver container reads each line of
    /drivers/nvidia.conf as parameters and writes "options nvidia <all of them>" itself (gpu-driver-container
    ubuntu24.04/nvidia-driver, _get_module_params / _create_module_params_conf; docs/stack.md)."""
    return [{'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': _meta('kernel-module-params', comp['namespace']),
             'data': {'nvidia.conf': 'NVreg_GrdmaPciTopoCheckOverride=1\n'}}]


def maintenance_operator_config(comp, site):
    """Maintenance Operator budget: one node in maintenance at a time (NVKE GB200 guide)."""
    return [{'apiVersion': 'maintenance.nvidia.com/v1alpha1', 'kind': 'MaintenanceOperatorConfig',
             'metadata': _meta('default', comp['namespace']),
             'spec': {'maxParallelOperations': 1, 'maxUnavailable': 1}}]


def nic_cluster_policy(comp, site):
    """NVKE GB200 NicClusterPolicy: nv-ipam, multus and the reference CNI plugins; NO ofedDriver (a DOCA driver
    container unloads the inbox mlx5_core and the node's primary address with it). Pinned to the ConnectX cohort.
    Operand images are the Network Operator release's own (Mellanox/network-operator hack/release.yaml: nvIpam,
    Multus, CniPlugins from <nvcr>/nvidia/mellanox, tag network-operator-v<chart version>), so the nv-ipam that runs
    is the one whose IPPool CRD the operator applies; tests/upstream holds them against the 26.4.1 release file."""
    repository = '%s/nvidia/mellanox' % site.registries['nvcr']
    version = 'network-operator-v%s' % str(comp['version']).lstrip('v')

    def operand(image, **extra):
        return dict({'image': image, 'repository': repository, 'version': version}, **extra)
    return [{'apiVersion': 'mellanox.com/v1alpha1', 'kind': 'NicClusterPolicy', 'metadata': _meta('nic-cluster-policy'),
             'spec': {
                 'nodeAffinity': {'requiredDuringSchedulingIgnoredDuringExecution': {'nodeSelectorTerms': [
                     {'matchExpressions': [{'key': 'feature.node.kubernetes.io/pci-15b3.present',
                                            'operator': 'In', 'values': ['true']}]}]}},
                 'nvIpam': operand('nvidia-k8s-ipam', enableWebhook=False),
                 'secondaryNetwork': {'multus': operand('multus-cni'), 'cniPlugins': operand('plugins')}}}]


def tuning(comp, site):
    """One merged NodeWright CR "tuning" (AICR v1.0 tuning-rke2.yaml + rdma-netns-exclusive, aicr#2572): both
    packages reboot, and reboots of packages in one CR coalesce, so each node reboots once."""
    v = comp['values']
    packages = {
        'nvidia-tuned': {
            'image': v['image'],
            'version': str(v['package_version']),
            'interrupt': {'type': 'reboot'},
            'configInterrupts': dict((key, {'type': 'reboot'}) for key in ('accelerator', 'intent', 'service')),
            'env': [{'name': 'INTERRUPT', 'value': 'true'}],
            'configMap': {'service': v['service'], 'accelerator': v['accelerator'], 'intent': v['intent']}}}
    if v['rdma_netns_exclusive']:
        line = 'options ib_core netns_mode=0'
        conf = '/etc/modprobe.d/dranet-rdma-netns-exclusive.conf'
        packages['rdma-netns-exclusive'] = {
            'image': v['shellscript_image'],
            'version': str(v['shellscript_version']),
            'interrupt': {'type': 'reboot'},
            'configMap': {
                'apply.sh': '#!/bin/bash\nset -euo pipefail\necho "%s" > %s\n' % (line, conf),
                'apply_check.sh': '#!/bin/bash\ngrep -qx "%s" %s\n' % (line, conf)}}
    return [{'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': _meta('tuning'),
             'spec': {'runtimeRequired': True, 'autoTaintNewNodes': True, 'interruptionBudget': {'count': 1},
                      'nodeSelectors': {'matchLabels': dict(v['node_selector'])},
                      'additionalTolerations': [{'operator': 'Exists'}],
                      'packages': packages}}]


def rdma_modules(comp, site):
    """rdma-modules (NVKE GB200 guide): load rdma_ucm, ib_umad, ib_ipoib and persist them, no interrupt; not on
    control-plane nodes (they carry a BlueField-3, hence pci-15b3.present, but must never stay tainted)."""
    v = comp['values']
    modules = ' '.join(v['modules'])
    return [{'apiVersion': 'nodewright.nvidia.com/v1alpha1', 'kind': 'NodeWright', 'metadata': _meta('rdma-modules'),
             'spec': {
                 'runtimeRequired': True,
                 'autoTaintNewNodes': bool(v['auto_taint_new_nodes']),
                 'interruptionBudget': {'count': 1},
                 'nodeSelectors': {'matchLabels': dict(v['node_selector']),
                                   'matchExpressions': [{'key': 'node-role.kubernetes.io/control-plane',
                                                         'operator': 'DoesNotExist'}]},
                 'packages': {'rdma-modules': {
                     'image': v['image'],
                     'version': str(comp['version']),
                     'configMap': {
                         'apply.sh': ("#!/bin/bash\nset -euo pipefail\nprintf '%%s\\n' %s > "
                                      "/etc/modules-load.d/aicr-rdma-ulp.conf\nmodprobe -a %s\n" % (modules, modules)),
                         'apply_check.sh': ('#!/bin/bash\nfor m in %s; do test -d "/sys/module/$m" || exit 1; done\n'
                                            % modules)}}}}}]


def _node_selector_terms(selector):
    return {'nodeSelectorTerms': [{'matchExpressions': [
        {'key': key, 'operator': 'In', 'values': [value]} for key, value in sorted(selector.items())]}]}


def ippools(comp, site):
    """One nv-ipam IPPool per rail: the rail-th /prefix of the pool base (stack.rail_ippools)."""
    v = comp['values']
    return [{'apiVersion': 'nv-ipam.nvidia.com/v1alpha1', 'kind': 'IPPool',
             'metadata': _meta(pool['name'], comp['namespace']),
             'spec': {'subnet': pool['subnet'], 'perNodeBlockSize': int(pool['per_node_block_size']),
                      'nodeSelector': _node_selector_terms(v['node_selector'])}} for pool in site.ippools]


def sriov_node_policies(comp, site):
    """One SriovNetworkNodePolicy per rail: IB, RDMA, netdevice VFs; nicSelector.rootDevices = that rail's PF
    address(es) (stack.sriov_rails refuses a rail without one, so two policies never select the same PFs)."""
    v = comp['values']
    return [{'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovNetworkNodePolicy',
             'metadata': _meta('sriov-ib-rail-%d' % rail['rail'], comp['namespace']),
             'spec': {'resourceName': 'sriov_resource_rail_%d' % rail['rail'], 'linkType': 'IB', 'isRdma': True,
                      'deviceType': 'netdevice', 'numVfs': int(rail['num_vfs']),
                      'nodeSelector': dict(v['node_selector']),
                      'nicSelector': {'vendor': NVIDIA_VENDOR, 'rootDevices': list(rail['root_devices'])}}}
            for rail in site.rails]


def sriov_ib_networks(comp, site):
    """One SriovIBNetwork per rail; its NetworkAttachmentDefinition lands in networkNamespace (default)."""
    v = comp['values']
    return [{'apiVersion': 'sriovnetwork.openshift.io/v1', 'kind': 'SriovIBNetwork',
             'metadata': _meta('sriov-network-rail-%d' % pool['rail'], comp['namespace']),
             'spec': {'resourceName': 'sriov_resource_rail_%d' % pool['rail'],
                      'networkNamespace': v['network_namespace'], 'linkState': 'enable',
                      'ipam': json.dumps({'type': 'nv-ipam', 'poolName': pool['name']})}}
            for pool in site.ippools]


def inference_gateway(comp, site):
    """AICR rke2-inference: Gateway "inference-gateway" of GatewayClass agentgateway (a LoadBalancer Service:
    MetalLB or kube-vip is a prerequisite on RKE2)."""
    return [{'apiVersion': 'gateway.networking.k8s.io/v1', 'kind': 'Gateway',
             'metadata': _meta('inference-gateway', comp['namespace']),
             'spec': {'gatewayClassName': 'agentgateway',
                      'listeners': [{'name': 'http', 'protocol': 'HTTP', 'port': 80,
                                     'allowedRoutes': {'namespaces': {'from': 'All'}}}]}}]


BUILDERS = {
    'dranet.yaml': dranet,
    'kernel-module-params.yaml': kernel_module_params,
    'maintenance-operator-config.yaml': maintenance_operator_config,
    'nic-cluster-policy.yaml': nic_cluster_policy,
    'tuning.yaml': tuning,
    'rdma-modules.yaml': rdma_modules,
    'ippools.yaml': ippools,
    'sriov-node-policies.yaml': sriov_node_policies,
    'sriov-ib-networks.yaml': sriov_ib_networks,
    'inference-gateway.yaml': inference_gateway,
}
# the manifests that need the rails' PF addresses (the planner refuses an NVKE plan without them)
NEEDS_RAILS = ('sriov-node-policies.yaml',)
NEEDS_POOLS = ('ippools.yaml', 'sriov-ib-networks.yaml')
