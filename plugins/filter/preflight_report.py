# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter gpu_tray.cluster.preflight_report: judge one tray_state result on the controller.

The rules are the check modules' own pure functions (module_utils), called through
plugin_utils.preflight.evaluate, so a fleet-wide preflight needs one module call per tray.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: preflight_report
version_added: 0.1.0
short_description: Judge a tray's state against what its platform requires (the preflight checks)
description:
- Takes one registered M(gpu_tray.cluster.tray_state) result and returns the tray's preflight report.
- Every rule is the pure function the check modules use (M(gpu_tray.cluster.ib_pkey_check), M(gpu_tray.cluster.nic_firmware),
  M(gpu_tray.cluster.hugepage_check), M(gpu_tray.cluster.kernel_cmdline), M(gpu_tray.cluster.containerd_config)); the
  decisions run on the controller, so a tray is read with one module call.
- Each check result is the collection's one check record, with C(name), C(status) (C(passed), C(failed), C(warning)
  when it passed but something could not be judged, C(skipped)), a one-sentence C(message), C(details) (one text per
  finding, then what could not be judged), C(fix), C(data) (structured findings) and C(object) (the tray).
- A spec the rules cannot use (a bad partition key or page size) is an error naming the role variable.
positional: _input, spec
options:
  _input:
    description: A registered M(gpu_tray.cluster.tray_state) result.
    type: dict
    required: true
  spec:
    description:
    - What the platform requires. Keys - C(platform), C(os) (C(os_id), C(os_version_id), C(kernel_pattern), C(kernel_hint)),
      C(rails) (expected rail names; empty - the detected ones), C(pkey), C(include_vfs), C(firmware) (bool), C(min_num_vfs),
      C(link_type) (default C(IB)), C(require_sriov) (default true), C(hugepages) (list of C(size)/C(count)), C(hugepages_check)
      (C(sizes) before the change, C(counts) after the reboot; default C(sizes)), C(cmdline_required), C(cmdline_forbidden),
      C(containerd) (bool, default true; checked only where containerd is the runtime), C(checks) (names, in order; default
      all).
    type: dict
    required: true
  host:
    description: The tray's inventory name, recorded in the report.
    type: str
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
'''

EXAMPLES = r'''
- name: Judge the tray on the controller
  ansible.builtin.set_fact:
    report: "{{ state | gpu_tray.cluster.preflight_report(spec, host=inventory_hostname) }}"
  vars:
    spec:
      platform: rke2-vr200
      os: {os_id: ubuntu, os_version_id: "26.04", kernel_pattern: '-nvidia-bos-64k$', kernel_hint: the bos-64k kernel}
      pkey: "0xffff"
      hugepages: [{size: 2M, count: 5128}]
      hugepages_check: sizes
'''

RETURN = r'''
_value:
  description:
  - C(host), C(platform), C(passed), C(failed_checks), C(skipped_checks) and C(checks) - the results of the checks that
    ran, each a check record (C(name), C(status), C(message), C(fix), C(details), C(data), C(object)).
  type: dict
'''

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_native

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def preflight_report(state, spec, host=None):
    """``state``: a registered tray_state result; ``spec``: what the platform requires (see the docs)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.preflight import evaluate, report, SpecError
    if not isinstance(state, dict) or 'ansible_facts' not in state:
        raise AnsibleFilterError('preflight_report: expects a registered gpu_tray.cluster.tray_state result, got %s'
                                 % type(state).__name__)
    if state.get('failed'):
        raise AnsibleFilterError('preflight_report: the tray_state read failed: %s' % to_native(state.get('msg')))
    if not isinstance(spec, dict):
        raise AnsibleFilterError('preflight_report: spec must be a dict, got %s' % type(spec).__name__)
    try:
        results = evaluate(state, spec)
    except SpecError as exc:
        raise AnsibleFilterError('preflight_report: %s' % to_native(exc))
    except (KeyError, TypeError) as exc:
        raise AnsibleFilterError('preflight_report: the tray_state result lacks %s (a tray_state of another '
                                 'collection version?)' % to_native(exc))
    return report(host, spec.get('platform'), results)


class FilterModule(object):

    def filters(self):
        return {'preflight_report': preflight_report}
