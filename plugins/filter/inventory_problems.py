# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is wrong with a host's inventory values, by the variable the user wrote (checked before any change)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: inventory_problems
short_description: The problems of a host's gpu_tray_* values against the argument spec of the roles they feed
version_added: 0.1.0
description:
  - >-
    Validates O(_input) (variable name to value) against O(spec) with ansible-core's own
    C(ArgumentSpecValidator) - the validation C(ansible.builtin.validate_argument_spec) and the roles' argument
    specs run - and returns one text per problem, naming the variable (C(value of gpu_tray_ib_core_netns_mode must
    be one of: exclusive, shared, unmanaged, got: exlusive)).
  - >-
    The names in O(pkeys) are partition keys, checked with the collection's P_Key rule (a string of 1-4 hex digits
    or a number 1-0xffff; 0x0000 and 0x8000 are not partitions).
  - >-
    C(gpu_tray_platform), C(gpu_tray_recipe) and C(gpu_tray_tuned_intent) are checked against the collection's
    platform profiles (C(plugins/plugin_utils/platforms/)) - a platform there is, a recipe of that platform, an
    nvidia-tuned intent the platform has (or empty).
  - >-
    The preflight role runs it over the spec tools/inventory_spec.py generates from the roles' defaults and argument
    specs, so a bad value of any phase stops the run before a tray is read or changed, with the gpu_tray_* name.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: spec, pkeys
options:
  _input:
    description: The values, variable name to value (only the variables that are set).
    type: dict
    required: true
  spec:
    description: An argument spec (option name to C(type), C(elements), C(choices) ...).
    type: dict
    required: true
  pkeys:
    description: The names in O(_input) that are partition keys.
    type: list
    elements: str
    default: [gpu_tray_pkey]
'''

EXAMPLES = r'''
- name: Refuse bad inventory values before any change
  ansible.builtin.fail:
    msg: "{{ __problems | join('; ') }}"
  vars:
    __problems: "{{ {'gpu_tray_ib_core_netns_mode': 'exlusive'} | gpu_tray.cluster.inventory_problems(spec) }}"
  when: __problems | length > 0
'''

RETURN = r'''
_value:
  description: One text per problem, in the validator's order, the P_Key problems last; empty when every value is fine.
  type: list
  elements: str
'''

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.text.converters import to_native

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def _choice(name, value, known):
    return 'value of %s must be one of: %s, got: %s' % (name, ', '.join(known), value)


def platform_problems(values, spec):
    """gpu_tray_platform, gpu_tray_recipe and gpu_tray_tuned_intent against the platform profiles (a value the spec's
    own choices refuse is left to the spec: one message per problem)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform
    known = platform.names()
    name = values.get('gpu_tray_platform')
    if name is not None and name not in known:
        return [_choice('gpu_tray_platform', name, known)]
    profiles = dict((other, platform.load(other)) for other in known)
    problems = []
    recipe = values.get('gpu_tray_recipe')
    owners = [other for other in known if recipe in profiles[other]['recipes']]
    if recipe is not None and not owners and 'choices' not in spec.get('gpu_tray_recipe', {}):
        problems.append(_choice('gpu_tray_recipe', recipe, sorted(r for p in profiles.values() for r in p['recipes'])))
    elif recipe is not None and name is not None and owners and name not in owners:
        problems.append('gpu_tray_recipe %s is a recipe of platform %s, not of gpu_tray_platform %s'
                        % (recipe, owners[0], name))
    intent = values.get('gpu_tray_tuned_intent')
    if intent and name is not None and intent not in profiles[name]['tuning']['intents'] and (
            intent in spec.get('gpu_tray_tuned_intent', {}).get('choices', [intent])):
        problems.append(_choice('gpu_tray_tuned_intent', intent, sorted(profiles[name]['tuning']['intents'])))
    return problems


def inventory_problems(values, spec, pkeys=None):
    from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import required_pkey
    if not isinstance(values, dict) or not isinstance(spec, dict):
        raise AnsibleFilterError('inventory_problems: the input and spec must be mappings')
    pkeys = ['gpu_tray_pkey'] if pkeys is None else list(pkeys)
    wanted = dict((name, values[name]) for name in values if name in spec)
    result = ArgumentSpecValidator(spec).validate(wanted)
    problems = [to_native(message) for message in result.error_messages]
    problems += platform_problems(wanted, spec)
    for name in pkeys:
        if name in wanted:
            try:
                required_pkey(wanted[name])
            except ValueError as exc:
                problems.append('%s: %s' % (name, to_native(exc)))
    return problems


class FilterModule(object):
    def filters(self):
        return {'inventory_problems': inventory_problems}
