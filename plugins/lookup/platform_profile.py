# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The platform profile of a platform name, for role defaults and playbooks (plugin_utils/platform.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: platform_profile
short_description: The collection's profile of a GPU tray platform
version_added: 0.1.0
description:
  - Returns the platform profile of each platform name given - what the platform's recipes want of a tray (OS and
    kernel, rails, SR-IOV and firmware policy, host IMEX service, ib_core netns_mode, RDMA modules, recipes with
    their nvidia-tuned intent, huge page pools per intent) - from the collection's C(plugins/plugin_utils/platforms/)
    directory, one YAML file per platform.
  - It also returns, under C(tuning_profile), what an nvidia-tuned intent asks of the platform's kernel - C(intent),
    C(cmdline), C(hugepages), C(default_hugepagesz), C(sysctls) - of O(intent) when given, else of the intent of
    O(recipe) (by default the platform's C(default_recipe)). Every value is empty for the empty intent.
  - An unknown platform, recipe or intent fails naming the known ones.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _terms:
    description:
      - Platform names (C(nvke-gb200), C(rke2-vr200), or a platform file added to the collection).
      - None - the platform whose profile lists O(recipe).
    type: list
    elements: str
  recipe:
    description:
      - A recipe of the platform; its nvidia-tuned intent selects C(tuning_profile) when O(intent) is not given.
      - Empty for the platform's C(default_recipe).
    type: str
    default: ""
  intent:
    description: The nvidia-tuned intent for C(tuning_profile); the empty string for none, null for the recipe's.
    type: str
'''

EXAMPLES = r'''
- name: The host IMEX service the platform wants
  ansible.builtin.debug:
    msg: "{{ lookup('gpu_tray.cluster.platform_profile', gpu_tray_platform).imex.host_service }}"

- name: The rails of the platform a recipe belongs to
  ansible.builtin.debug:
    msg: "{{ lookup('gpu_tray.cluster.platform_profile', recipe='gb200-nvke-ubuntu-training').rails }}"

- name: The kernel arguments of the platform's inference intent
  ansible.builtin.debug:
    msg: "{{ lookup('gpu_tray.cluster.platform_profile', 'rke2-vr200', intent='inference').tuning_profile.cmdline }}"
'''

RETURN = r'''
_raw:
  description: One profile per name (a dict; see docs/host-preparation.md "Platform profiles" for its keys).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        recipe, intent = self.get_option('recipe'), self.get_option('intent')
        out = []
        if not terms and not recipe:
            raise AnsibleLookupError('platform_profile: give a platform name or a recipe')
        for name in terms or [None]:
            try:
                profile = platform.load(name) if name is not None else platform.for_recipe(recipe)
                wanted = intent
                if wanted is None:
                    wanted = platform.recipe_intent(profile, recipe or profile['default_recipe'])
                profile['tuning_profile'] = dict(platform.tuning(profile, wanted), intent=wanted)
            except platform.ProfileError as exc:
                raise AnsibleLookupError('platform_profile: %s' % exc)
            out.append(profile)
        return out
