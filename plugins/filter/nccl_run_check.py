# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The evidence check of one launched NCCL run (pure function in plugin_utils/nccl_launch.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: nccl_run_check
short_description: The evidence check of one launched NCCL run - the bandwidth verdict, how the run went, its clean-up
version_added: 0.1.0
description:
  - Returns the check C(nccl-all-reduce-bw-<variant>) in the evidence format of
    P(gpu_tray.cluster.validation_evidence#filter). The verdict on the log is M(gpu_tray.cluster.nccl_result)'s
    (peak busbw against the recipe floor with 10 % tolerance, transport, NVLS, wrong values, a complete log).
  - Failed when the run could not start (C(error)), did not finish in time (the pods that were stuck and why, from
    the scheduler or the kubelet), or its launcher failed; a warning on a passed run whose namespace could not be
    removed.
  - C(details) - the run's shape (workload, trays, GPUs, sizes, image, worker annotations and resources, NCCL
    settings), each pod and its node, the measured figures, the last launcher log lines of a failed run, the
    clean-up.
  - C(data) - what was measured, for the reports' NCCL table - C(trays), C(gpus_per_tray), C(ranks), C(busbw),
    C(min_busbw) (the floor), C(threshold) (the floor less the tolerance), C(transport), C(hosts), C(variant);
    null where the run did not say.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _input:
    description:
      - C({variant, summary, namespace, timeout, error, launcher, pods, log, nccl, cleanup}) - C(summary) the run
        plan's (P(gpu_tray.cluster.nccl_run_plan#filter)), C(launcher) the launcher Job or TrainJob as last read,
        C(pods) the run's pods, C(log) the launcher's log, C(nccl) the registered M(gpu_tray.cluster.nccl_result) of
        it, C(cleanup) the registered namespace deletion.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: The check of the run
  ansible.builtin.set_fact:
    check: "{{ {'variant': 'net', 'summary': plan.summary, 'namespace': plan.namespace, 'timeout': 1800,
                'launcher': launcher.resources[0], 'pods': pods.resources, 'log': log.log, 'nccl': judged,
                'cleanup': cleanup} | gpu_tray.cluster.nccl_run_check }}"
'''

RETURN = r'''
_value:
  description: One check, C({name, status, message, fix, object, details, data}).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def nccl_run_check(run):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.nccl_launch import run_check
    if not isinstance(run, dict) or not run.get('variant'):
        raise AnsibleFilterError('nccl_run_check: the input must be a dict with the run\'s variant, got %r' % (run,))
    return run_check(run)


class FilterModule(object):
    def filters(self):
        return {'nccl_run_check': nccl_run_check}
