# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_plan
short_description: The plan.yaml content of a resolved chart-stack recipe
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - C(recipe), C(recipe_digest) and C(components) in install order, each with C(name), C(kind), C(chart),
    C(repository), C(version), C(namespace), C(tier) and C(depends_on).
options:
  _input:
    description: Output of P(gpu_tray.cluster.stack_resolve#filter).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Plan
  ansible.builtin.copy:
    content: "{{ resolved | gpu_tray.cluster.stack_plan | to_nice_yaml(indent=2) }}"
    dest: bundle/plan.yaml
    mode: "0644"
'''

RETURN = r'''
  _value:
    description: The plan.
    type: dict
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_plan(resolved):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    return stack.plan(resolved)


class FilterModule(object):
    def filters(self):
        return {'stack_plan': stack_plan}
