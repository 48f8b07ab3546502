# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_bundle_stale_charts
short_description: The vendored charts that must be pulled (again)
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - A chart is pulled when the earlier provenance has no entry with the same chart, version, source and archive
    path, or when the archive is missing or its sha256 differs from the recorded one. Every other chart is kept as
    it is, so a second render changes nothing and needs no network.
options:
  _input:
    description: Output of P(gpu_tray.cluster.stack_bundle_charts#filter).
    type: dict
    required: true
  previous:
    description: The bundle's earlier C(provenance.yaml), parsed (empty when there is none).
    type: dict
    required: true
  digests:
    description: sha256 of each archive path that exists in the bundle now.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Charts to pull
  ansible.builtin.set_fact:
    pull: "{{ charts | gpu_tray.cluster.stack_bundle_stale_charts(previous_provenance, digests) }}"
'''

RETURN = r'''
  _value:
    description: Component names, sorted.
    type: list
    elements: str
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_bundle_stale_charts(wanted, previous, digests):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle
    return bundle.stale_archives(wanted, previous, digests)


class FilterModule(object):
    def filters(self):
        return {'stack_bundle_stale_charts': stack_bundle_stale_charts}
