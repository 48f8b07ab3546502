# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_resolve
short_description: Resolve a chart-stack recipe over the component catalog
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Composes a recipe (following its C(base) chain, a child reference to the same component merges field by field)
    over the component catalog, applies the inventory overrides, refuses missing or ranged versions and bad
    repositories, merges the values and computes the install tiers.
  - Values merge in this order, later wins (dicts merge key by key, lists and scalars replace, as in AICR) -
    catalog C(values_files), catalog C(values), recipe C(values_files), recipe C(values) (base recipe before
    child), override C(values_files), override C(values).
  - A dependency on a component the recipe leaves out or disables counts as satisfied, a dependency on a name the
    catalog does not know, and a cycle, fail.
positional: catalog, recipes, recipe, overrides, files, options
options:
  _input:
    description:
      - The component catalog, a mapping of component name to its entry (C(kind), C(chart), C(repository),
        C(version), C(namespace), C(values_files), C(values), C(depends_on), C(readiness), C(manifests),
        C(manifests_phase), C(wait), C(timeout), C(enabled_by)).
    type: dict
    required: true
  recipes:
    description: Mapping of recipe name to C({base, components}).
    type: dict
    required: true
  recipe:
    description: Name of the recipe to resolve.
    type: str
    required: true
  overrides:
    description: Per-component inventory overrides (C(enabled), C(version), C(repository), C(chart), C(namespace), C(values_files), C(values), C(timeout)).
    type: dict
    default: {}
  files:
    description: Parsed content of every values file, by the path used in C(values_files).
    type: dict
    default: {}
  options:
    description: Switches for catalog entries with C(enabled_by), for example C(use_nodewright=true).
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: Resolve the recipe
  ansible.builtin.set_fact:
    resolved: "{{ catalog | gpu_tray.cluster.stack_resolve(recipes, 'vr200-rke2-ubuntu-training') }}"
'''

RETURN = r'''
  _value:
    description:
      - C({recipe, chain, tiers, components}); I(components) in install order, each with C(name), C(kind),
        C(chart), C(repository), C(version), C(namespace), C(tier), C(depends_on), C(values), C(manifests),
        C(manifests_phase), C(readiness), C(wait), C(timeout).
    type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_resolve(catalog, recipes, recipe, overrides=None, files=None, options=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    try:
        return stack.resolve(catalog, recipes, recipe, overrides, files, options)
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'stack_resolve': stack_resolve}
