# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_bundle_charts
short_description: Where each chart of a bundle is vendored, and how it is pulled
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - Per chart component - C(chart), C(version), C(source) (the repository), C(archive)
    (C(charts/<component>/<chart>-<version>.tgz) inside the bundle), C(chart_dir) (where Argo CD reads it unpacked)
    and C(pull) (C(ref) and C(args) of C(helm pull); C(package) for an absolute local chart directory).
options:
  _input:
    description: The resolved components.
    type: list
    elements: dict
    required: true
'''

EXAMPLES = r'''
- name: Charts to vendor
  ansible.builtin.set_fact:
    charts: "{{ resolved.components | gpu_tray.cluster.stack_bundle_charts }}"
'''

RETURN = r'''
  _value:
    description: C({component - {chart, version, source, archive, chart_dir, pull}}) in install order.
    type: dict
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_bundle_charts(components):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle
    return bundle.vendor_paths(components)


class FilterModule(object):
    def filters(self):
        return {'stack_bundle_charts': stack_bundle_charts}
