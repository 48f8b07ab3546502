# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_bundle_provenance
short_description: The provenance record of a bundle's vendored charts
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - C(recipe), C(recipe_digest) and C(charts) - per chart its C(component), C(chart), C(version), C(source),
    C(archive) and the C(sha256) of the archive. Fails when an archive is missing.
options:
  _input:
    description: Output of P(gpu_tray.cluster.stack_bundle_charts#filter).
    type: dict
    required: true
  recipe:
    description: The recipe name.
    type: str
    required: true
  recipe_digest:
    description: The resolved recipe's digest (P(gpu_tray.cluster.stack_digest#filter)).
    type: str
    required: true
  digests:
    description: sha256 of each archive path.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Provenance
  ansible.builtin.set_fact:
    provenance: "{{ charts | gpu_tray.cluster.stack_bundle_provenance(recipe, digest, digests) }}"
'''

RETURN = r'''
  _value:
    description: The provenance.yaml content.
    type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_bundle_provenance(wanted, recipe, recipe_digest, digests):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle, stack
    try:
        return bundle.provenance(recipe, recipe_digest, wanted, digests)
    except stack.StackError as exc:
        raise AnsibleFilterError(str(exc))


class FilterModule(object):
    def filters(self):
        return {'stack_bundle_provenance': stack_bundle_provenance}
