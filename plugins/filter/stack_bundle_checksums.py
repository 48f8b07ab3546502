# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: stack_bundle_checksums
short_description: The closed-world sha256 inventory of a bundle and its digest
version_added: 0.1.0
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
description:
  - C(text) is C(checksums.txt) - one C(<sha256>  <path>) line per file, sorted by path, as C(sha256sum -c)
    reads it. C(digest) is the sha256 of that text, the bundle digest (C(sha256sum checksums.txt) prints it).
options:
  _input:
    description: sha256 of every file of the bundle by its path relative to the bundle directory.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: Checksums
  ansible.builtin.set_fact:
    sums: "{{ digests | gpu_tray.cluster.stack_bundle_checksums }}"
'''

RETURN = r'''
  _value:
    description: C({text, digest}).
    type: dict
'''

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def stack_bundle_checksums(digests):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle
    text = bundle.checksums(digests)
    return {'text': text, 'digest': bundle.bundle_digest(text)}


class FilterModule(object):
    def filters(self):
        return {'stack_bundle_checksums': stack_bundle_checksums}
