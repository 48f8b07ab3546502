#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: component_version
short_description: Check the deployed version of a cluster component against a constraint and known-bad versions
version_added: 0.1.0
description:
  - Finds a component's workload (Deployment, DaemonSet or StatefulSet) and reads its version from, in this order,
    the C(app.kubernetes.io/version) label (workload, then pod template), the C(helm.sh/chart) label, the image tag
    of I(container) (default the first container), and the C(app.kubernetes.io/version) / C(nvidia.com/version)
    annotations.
  - Compares it with I(constraint) (C(>= v26.7.0), C(>= 1.34.1, < 1.36.0), C(!= 0.4.1), a bare version meaning
    C(==)) as versions - C(v1.34.10) is newer than C(v1.34.9) - never as strings. Vendor suffixes such as
    C(+rke2r1) are ignored; C(-rc.1) is a pre-release.
  - Built-in rules for C(nvidia-dra-driver-gpu) with I(recipe) - 0.4.1 on VR200 fails (it crash-loops on the NVML
    architecture value VR200 reports); on NVKE anything below 0.5.1 fails (NVKE enforces
    OwnerReferencesPermissionEnforcement, which refuses 0.5.0's compute-domain daemon); 0.5.0 elsewhere with that
    admission plugin enabled is a warning.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  component:
    description:
      - The component. C(gpu-operator), C(network-operator) and C(nvidia-dra-driver-gpu) have built-in locations
        (namespace, kind, name) that I(namespace), I(kind), I(name) and I(label_selector) override; any other
        component needs I(namespace) and I(name) or I(label_selector).
    type: str
    required: true
  namespace:
    description: Namespace of the workload.
    type: str
  kind:
    description: Kind of the workload.
    type: str
    choices: [Deployment, DaemonSet, StatefulSet]
  name:
    description: Name of the workload. Mutually exclusive with I(label_selector).
    type: str
  label_selector:
    description: Label selector that must match exactly one workload of I(kind) in I(namespace).
    type: str
  container:
    description: Container whose image tag counts (default the first container).
    type: str
  constraint:
    description:
      - Version constraint the component must meet. Without it only the built-in rules apply and the version is
        reported.
    type: str
  recipe:
    description:
      - The recipe, for the built-in rules (platform and service).
    type: str
    choices:
      - gb200-nvke-ubuntu-training
      - gb200-nvke-ubuntu-kubeflow
      - vr200-rke2-ubuntu-training
      - vr200-rke2-ubuntu-inference
      - vr200-rke2-ubuntu-inference-dynamo
  admission_plugins:
    description:
      - Admission plugins the API server enables. Default - read from the C(--enable-admission-plugins) argument of
        the C(component=kube-apiserver) pods in C(kube-system) (empty when the API server does not run as a pod).
    type: list
    elements: str
  fail_on_error:
    description: Fail when the version is outside I(constraint) or a built-in rule fails. With C(false) only report.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.k8s_auth
seealso:
  - module: gpu_tray.cluster.cluster_preflight
'''

EXAMPLES = r'''
- name: The GPU Operator is v26.7.0 or newer
  gpu_tray.cluster.component_version:
    component: gpu-operator
    constraint: ">= v26.7.0"

- name: The DRA driver is not a known-bad release for this recipe
  gpu_tray.cluster.component_version:
    component: nvidia-dra-driver-gpu
    recipe: vr200-rke2-ubuntu-training
  register: dra
'''

RETURN = r'''
version:
  description: The deployed version as found (with its C(v) and vendor suffix). Null when none was found.
  type: str
  returned: always
  sample: v26.7.0
source:
  description: Where the version was read, or why none was found.
  type: str
  returned: always
  sample: image tag of container gpu-operator (nvcr.io/nvidia/gpu-operator:v26.7.0)
object:
  description: The workload, as C(Kind namespace/name).
  type: str
  returned: when found
  sample: Deployment gpu-operator/gpu-operator
constraint:
  description: The constraint applied.
  type: str
  returned: always
findings:
  description: Failed constraint clauses and built-in rule findings, each with C(status) (failed/warning) and C(message).
  type: list
  elements: dict
  returned: always
passed:
  description: True when nothing failed.
  type: bool
  returned: always
msg:
  description: Summary naming the workload, the version found, the expectation and the fix.
  type: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpu_tray.cluster.plugins.module_utils import cluster_rules as rules
from ansible_collections.gpu_tray.cluster.plugins.module_utils.kube import (
    AUTH_ARG_SPEC,
    Reader,
    connect,
    finish,
    read_or_fail,
)

_READ = {
    'Deployment': ('read_namespaced_deployment', 'list_namespaced_deployment'),
    'DaemonSet': ('read_namespaced_daemon_set', 'list_namespaced_daemon_set'),
    'StatefulSet': ('read_namespaced_stateful_set', 'list_namespaced_stateful_set'),
}


def build_module():
    spec = dict(AUTH_ARG_SPEC)
    spec.update(
        component=dict(type='str', required=True),
        namespace=dict(type='str'),
        kind=dict(type='str', choices=sorted(_READ)),
        name=dict(type='str'),
        label_selector=dict(type='str'),
        container=dict(type='str'),
        constraint=dict(type='str'),
        recipe=dict(type='str', choices=sorted(rules.RECIPES)),
        admission_plugins=dict(type='list', elements='str'),
        fail_on_error=dict(type='bool', default=True),
    )
    return AnsibleModule(argument_spec=spec, supports_check_mode=True,
                         mutually_exclusive=[('name', 'label_selector')])


def locate(params):
    """(kind, namespace, name, label_selector) of the component, or raise ValueError naming the missing option."""
    known = rules.KNOWN_COMPONENTS.get(params['component'], {})
    kind = params['kind'] or known.get('kind') or 'Deployment'
    namespace = params['namespace'] or known.get('namespace')
    name = params['name'] if params['name'] or params['label_selector'] else known.get('name')
    if not namespace or not (name or params['label_selector']):
        raise ValueError('component %s has no built-in location (known: %s): give options namespace and name or '
                         'label_selector' % (params['component'], ', '.join(sorted(rules.KNOWN_COMPONENTS))))
    return kind, namespace, name, params['label_selector']


def read_workload(reader, kind, namespace, name, selector):
    read, listing = _READ[kind]
    if name:
        found = reader.get(getattr(reader.apps, read), name, namespace)
        return found, None if found else 'no %s %s/%s' % (kind, namespace, name)
    items = reader.items(getattr(reader.apps, listing), namespace, label_selector=selector)
    if len(items) != 1:
        return None, '%d %ss match %s in namespace %s (expected exactly one)%s' % (
            len(items), kind, selector, namespace,
            ': %s' % ', '.join(item['metadata']['name'] for item in items) if items else '')
    return items[0], None


def apiserver_admission_plugins(reader):
    plugins = []
    for pod in reader.items(reader.core.list_namespaced_pod, 'kube-system', label_selector='component=kube-apiserver'):
        for container in pod.get('spec', {}).get('containers', []):
            for name in rules.admission_plugins_from_args(list(container.get('command') or []) + list(container.get('args') or [])):
                if name not in plugins:
                    plugins.append(name)
    return plugins


def main():
    module = build_module()
    params = module.params
    if not rules.HAS_PACKAGING:
        module.fail_json(msg=missing_required_lib('packaging'), exception=str(rules.PACKAGING_IMPORT_ERROR))
    if params['constraint'] is not None:
        try:
            rules.parse_constraint(params['constraint'])
        except ValueError as exc:
            module.fail_json(msg='option constraint: %s' % exc)
    try:
        kind, namespace, name, selector = locate(params)
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    api = connect(module)
    reader = Reader(api)
    server = api.configuration.host
    component = params['component']
    output = dict(changed=False, component=component, constraint=params['constraint'], version=None, findings=[],
                  api_server=server)
    obj, missing = read_or_fail(module, server, lambda: read_workload(reader, kind, namespace, name, selector),
                                '%s %s/%s' % (kind, namespace, name or selector), output)
    plugins = params['admission_plugins']
    if obj is not None and plugins is None and component == 'nvidia-dra-driver-gpu' and params['recipe']:
        plugins = read_or_fail(module, server, lambda: apiserver_admission_plugins(reader),
                               'the API server\'s admission plugins', output)
    if obj is None:
        output.update(source=missing, passed=False)
        output['msg'] = ('%s: %s is not deployed: %s. Install it (the chart rollout) or point options namespace/kind/'
                         'name/label_selector at it' % (server, component, missing))
        finish(module, output, failed=True)
    output['object'] = '%s %s/%s' % (kind, obj['metadata']['namespace'], obj['metadata']['name'])
    version, source = rules.workload_version(obj, params['container'])
    output.update(version=version, source=source)
    if version is None:
        output['passed'] = False
        output['msg'] = ('%s: %s: cannot tell the version of %s: %s. Expected a version in the app.kubernetes.io/'
                         'version label, the image tag or the annotations' % (server, component, output['object'], source))
        finish(module, output, failed=bool(params['constraint'] or params['recipe']))
    findings = []
    if params['constraint']:
        ok, failed = rules.check_constraint(version, params['constraint'])
        if not ok:
            findings.append(dict(status='failed', message='version %s does not meet %s (fails %s): upgrade %s'
                                 % (version, params['constraint'], ' and '.join(failed), component)))
    if params['recipe'] and component == 'nvidia-dra-driver-gpu':
        info = rules.recipe_info(params['recipe'])
        for status, message in rules.dra_driver_rules(version, info['platform'], info['service'], plugins or []):
            findings.append(dict(status=status, message=message))
    output['findings'] = findings
    failed = [item for item in findings if item['status'] == 'failed']
    for item in findings:
        if item['status'] == 'warning':
            module.warn('%s: %s (%s): %s' % (server, component, output['object'], item['message']))
    output['passed'] = not failed
    if failed:
        reasons = '; '.join(item['message'] for item in failed)
        output['msg'] = '%s: %s (%s) is %s (%s): %s' % (server, component, output['object'], version, source, reasons)
    else:
        output['msg'] = '%s: %s (%s) is %s (%s)%s' % (
            server, component, output['object'], version, source,
            ', meets %s' % params['constraint'] if params['constraint'] else '')
    finish(module, output, failed=bool(failed))


if __name__ == '__main__':
    main()
