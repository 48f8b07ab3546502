# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_values_files
short_description: List the values files a chart-stack recipe needs
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Every path named in C(values_files) by the catalog, the recipe chain or the overrides, each once, so a play
    can load them before M(ansible.builtin.set_fact) calls P(gpu_tray.cluster.stack_resolve#filter).
positional: recipes, recipe, overrides
options:
  _input:
    description: The component catalog.
    type: dict
    required: true
  recipes:
    description: Mapping of recipe name to C({base, components}).
    type: dict
    required: true
  recipe:
    description: Name of the recipe.
    type: str
    required: true
  overrides:
    description: Per-component inventory overrides.
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: Values files to load
  ansible.builtin.debug:
    msg: "{{ catalog | gpu_tray.cluster.stack_values_files(recipes, 'gb200-nvke-ubuntu-training') }}"
'''

RETURN = r'''
  _value:
    description: Paths, in first-use order.
    type: list
    elements: str
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_values_files(catalog, recipes, recipe, overrides=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    try:
        return stack.values_files(catalog, recipes, recipe, overrides)
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'stack_values_files': stack_values_files}
