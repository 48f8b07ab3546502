# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_tiers
short_description: Group a dependency graph into install tiers
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Tier 0 holds the names without dependencies, tier n holds names whose dependencies are all in earlier tiers.
    Names inside a tier are sorted, so the order is stable.
  - Fails on a dependency that is not in the graph and on a cycle, naming it.
options:
  _input:
    description: Mapping of name to the list of names it depends on.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Tiers
  ansible.builtin.debug:
    msg: "{{ {'a': [], 'b': ['a'], 'c': ['a']} | gpu_tray.cluster.stack_tiers }}"  # [[a], [b, c]]
'''

RETURN = r'''
  _value:
    description: List of tiers, each a sorted list of names.
    type: list
    elements: list
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_tiers(graph):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    try:
        return stack.tiers(graph)
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'stack_tiers': stack_tiers}
