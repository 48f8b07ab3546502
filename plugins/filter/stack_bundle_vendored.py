# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_bundle_vendored
short_description: Check a vendored bundle's charts against the recipe and its provenance
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - For every chart component of the resolved recipe - the bundle's C(provenance.yaml) must hold the chart,
    version and source the recipe pins, and the archive's sha256 must be the recorded one.
options:
  _input:
    description: The resolved components.
    type: list
    elements: dict
    required: true
  provenance:
    description: The bundle's C(provenance.yaml), parsed.
    type: dict
    required: true
  digests:
    description: sha256 of each archive path (relative to the bundle) that exists.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Check the vendored charts
  ansible.builtin.assert:
    that: (resolved.components | gpu_tray.cluster.stack_bundle_vendored(provenance, digests)).problems | length == 0
'''

RETURN = r'''
  _value:
    description: C(archives) (component - archive path inside the bundle) and C(problems) (one sentence each).
    type: dict
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_bundle_vendored(components, provenance, digests):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle
    return bundle.vendored_archives(components, provenance, digests)


class FilterModule(object):
    def filters(self):
        return {'stack_bundle_vendored': stack_bundle_vendored}
