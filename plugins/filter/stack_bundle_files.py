# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_bundle_files
short_description: The Argo CD and Flux files of a chart-stack bundle
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - For C(argocd) - C(argocd/app-of-apps.yaml), one C(argocd/apps/<release>.yaml) Application per release
    (multi-source for charts with the bundle's values file, path-based for manifests), the sync wave
    C(tier * 4 + phase), and C(argocd/argocd-cm-patch.yaml) with the readiness gates as Lua health checks.
  - For C(flux) - one HelmRelease per release with C(dependsOn) exactly the recipe's DAG, a HelmRepository per
    https repository, an OCIRepository per OCI chart, the wrapper charts of manifest releases
    (C(flux/charts/<release>/Chart.yaml), C(templates/manifests.yaml); their C(files/) are the caller's) and
    C(flux/kustomization.yaml).
  - C(helmfile) adds nothing here (the role's template writes it).
options:
  _input:
    description: The resolved components in install order, each with its rendered manifests under C(objects).
    type: list
    elements: dict
    required: true
  recipe:
    description: The recipe name (labels, the app-of-apps name).
    type: str
    required: true
  formats:
    description: Bundle formats (C(helmfile), C(argocd), C(flux)); a list or a comma-separated string.
    type: raw
    required: true
  settings:
    description:
      - C(repo_url), C(revision), C(path) (the bundle inside the repository), C(argocd_namespace),
        C(argocd_project), C(destination_server), C(flux_namespace), C(flux_source), C(interval), C(retries).
    type: dict
    default: {}
  vendored:
    description: Per component C(archive) and C(chart_dir) of its vendored chart (from P(gpu_tray.cluster.stack_bundle_charts#filter)).
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: GitOps files
  ansible.builtin.set_fact:
    files: "{{ components | gpu_tray.cluster.stack_bundle_files('vr200-rke2-ubuntu-training', ['argocd', 'flux'],
                                                               {'repo_url': 'https://git.example.com/stack.git'}) }}"
'''

RETURN = r'''
  _value:
    description: A list of C({path, content}) (YAML text), sorted by path.
    type: list
    elements: dict
'''

from collections.abc import Mapping

import yaml

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def _builtin(value):
    # ansible-core hands tagged str/int subclasses to filters: the YAML dumper below takes builtin types only
    if isinstance(value, Mapping):
        return dict((_builtin(k), _builtin(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [_builtin(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    for kind in (str, int, float):
        if isinstance(value, kind):
            return kind(value)
    return value


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper, data):
    # multi-line text (the Lua health checks, the wrapper chart template) as a literal block, readable in review
    style = '|' if '\n' in data else None
    return dumper.represent_scalar('tag:yaml.org,2002:str', data, style=style)


_Dumper.add_representer(str, _str)


def dump(data):
    return '---\n' + yaml.dump(data, Dumper=_Dumper, default_flow_style=False, sort_keys=False, width=1000, indent=2)


def stack_bundle_files(components, recipe, formats, settings=None, vendored=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle, stack
    try:
        wanted = bundle.formats(_builtin(formats))
        comps, cfg, vend = _builtin(components), _builtin(settings), _builtin(vendored)
        out = {}
        if 'argocd' in wanted:
            out.update(bundle.argocd_files(str(recipe), comps, cfg, vend))
        if 'flux' in wanted:
            out.update(bundle.flux_files(str(recipe), comps, cfg, vend))
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))
    return [{'path': p, 'content': v if isinstance(v, str) else dump(v)} for p, v in sorted(out.items())]


class FilterModule(object):
    def filters(self):
        return {'stack_bundle_files': stack_bundle_files}
