# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_digest
short_description: sha256 of a resolved chart-stack recipe
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Hex sha256 of the canonical JSON (sorted keys, no whitespace) of the recipe name and its resolved components
    (versions, repositories, namespaces, merged values, dependencies, tiers). Stable across runs, any change
    of what would be deployed changes it.
options:
  _input:
    description: Output of P(gpu_tray.cluster.stack_resolve#filter).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Digest
  ansible.builtin.debug:
    msg: "{{ resolved | gpu_tray.cluster.stack_digest }}"
'''

RETURN = r'''
  _value:
    description: 64 hex digits.
    type: str
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_digest(resolved):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    return stack.digest(resolved)


class FilterModule(object):
    def filters(self):
        return {'stack_digest': stack_digest}
