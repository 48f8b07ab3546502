# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A recipe's facts from the collection's recipe registry, for role defaults (plugin_utils/registry.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: recipe
short_description: A recipe's facts from the collection's recipe registry
version_added: 0.1.0
description:
  - Returns, per recipe name, what the registry (C(plugins/plugin_utils/stack_data/recipes.yml)) says of it -
    C(name) (the recipe's name, after an old name's alias), C(platform), C(intent), C(tuned_intent), C(kubernetes)
    (C(version), C(reason)), C(conformance) (the checks of module M(gpu_tray.cluster.conformance)) and C(benchmarks)
    (the NCCL variants the validate role runs).
  - An unknown recipe fails naming the known ones.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _terms:
    description: Recipe names (C(gb200-nvke-ubuntu-training), C(vr200-rke2-ubuntu-inference), ... or an old name).
    type: list
    elements: str
    required: true
'''

EXAMPLES = r'''
- name: The NCCL benchmarks of the inventory's recipe
  ansible.builtin.debug:
    msg: "{{ lookup('gpu_tray.cluster.recipe', gpu_tray_recipe).benchmarks }}"
'''

RETURN = r'''
_raw:
  description: One dict of facts per name.
  type: list
  elements: dict
'''

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        out = []
        for name in terms:
            try:
                out.append(registry.facts(name))
            except registry.RegistryError as exc:
                raise AnsibleLookupError('recipe: %s' % exc)
        return out
