# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.unkept_crds: the CRDs a helm release, as stored, would delete on uninstall."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: unkept_crds
version_added: 0.1.0
short_description: The CRDs of a stored helm release that helm uninstall would delete
description:
  - "helm uninstall deletes every object of the release's stored manifest except those marked
    C(helm.sh/resource-policy: keep) (and a chart's C(crds/), which is not in the manifest). This returns the names of
    the C(CustomResourceDefinition) objects of that manifest without the mark, sorted."
  - The stack role reads it after installing a chart whose templates create CRDs, to upgrade a release installed before
    they were marked and to prove the mark is there.
positional: _input
options:
  _input:
    description: The release's stored manifest - C(helm get manifest)'s YAML text, or C(kubernetes.core.helm_info)'s C(status.manifest) (its documents).
    type: raw
    required: true
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Find the CRDs the stored release does not mark keep
  ansible.builtin.set_fact:
    unkept: "{{ release_info.status.manifest | gpu_tray.cluster.unkept_crds }}"
'''

RETURN = r'''
_value:
  description: CRD names, sorted; empty when every CRD of the manifest is kept.
  type: list
  elements: str
'''


def unkept_crds(manifest):
    # imported here, not at the top: ansible-core loads every filter file for any one filter (docs/performance.md)
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle
    return bundle.unkept_crds(manifest)


class FilterModule(object):
    def filters(self):
        return {'unkept_crds': unkept_crds}
