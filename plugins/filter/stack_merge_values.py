# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_merge_values
short_description: Deep-merge Helm values layers
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Merges the input and every layer given as argument, left to right - nested mappings merge key by key, lists,
    scalars and null replace (the Helm and AICR rule, C(ansible.builtin.combine) with C(recursive=true) does
    the same for two mappings, this takes any number and refuses non-mappings).
positional: layers
options:
  _input:
    description: The first (lowest-precedence) layer.
    type: dict
    required: true
  layers:
    description: Further layers, highest precedence last.
    type: list
    elements: dict
'''

EXAMPLES = r'''
- name: Merge
  ansible.builtin.debug:
    msg: "{{ {'a': {'b': 1, 'l': [1]}} | gpu_tray.cluster.stack_merge_values({'a': {'c': 2, 'l': [2]}}) }}"
'''

RETURN = r'''
  _value:
    description: The merged mapping.
    type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_merge_values(first, *layers):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    try:
        return stack.merge_values([first] + list(layers))
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'stack_merge_values': stack_merge_values}
