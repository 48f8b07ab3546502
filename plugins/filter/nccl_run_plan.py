# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes objects of one NCCL benchmark run (pure functions in plugin_utils/nccl_launch.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: nccl_run_plan
short_description: The Kubernetes objects of one NCCL all_reduce_perf run (a variant in a namespace of its own)
version_added: 0.1.0
description:
  - >-
    Builds everything one run of the validate role's performance phase creates, in the order it is created, and
    what the role waits for. Nothing is contacted; the role applies the objects with M(kubernetes.core.k8s).
  - >-
    The namespace is C(gpu-tray-nccl-<variant>-<run_id>) (Pod Security C(privileged), as the workers need
    C(IPC_LOCK) for RDMA); deleting it removes the run.
  - >-
    C(nvls) - a ComputeDomain (C(resource.nvidia.com/v1beta1)) whose channel's ResourceClaimTemplate the NVIDIA DRA
    driver creates, listed in C(wait_for); each worker claims it (C(resourceClaims)); C(NCCL_NVLS_ENABLE=1).
  - >-
    C(net) - NVLS and multi-node NVLink off, NCCL's built-in IB transport; each worker requests one VF per rail
    (C(rails[].resource): 1) and carries the rails' attachments (C(k8s.v1.cni.cncf.io/networks)); each rank's
    C(NCCL_IB_HCA) names the RDMA devices of the attached VFs.
  - >-
    C(workload=job) - an Indexed Job of workers (sshd) behind a headless Service and a launcher Job (mpirun over
    SSH with the run's key pair in a Secret). C(workload=trainjob) - a TrainingRuntime with the MPI policy and a
    TrainJob (Kubeflow Trainer).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _input:
    description:
      - The run - C(run_id), C(variant) (nvls, net), C(workload) (job, trainjob), C(image), C(trays),
        C(gpus_per_tray), C(timeout) (seconds), C(min_bytes), C(max_bytes), C(step_factor), C(rails)
        (C([{resource, network}])), C(node_selector), C(tolerations), C(extra_env), for C(job)
        C(ssh_private_key) and C(ssh_public_key), and optionally C(nodes) (the Node objects, to count the nodes a
        worker fits on).
      - C(min_bytes), C(max_bytes) default to C(1K), C(16G), C(step_factor) to 2; C(trays) is at least 2.
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: The objects of the NET run
  ansible.builtin.set_fact:
    plan: >-
      {{ {'run_id': 'r1', 'variant': 'net', 'workload': 'job', 'image': 'nvcr.io/nvidia/pytorch:25.06-py3',
          'trays': 2, 'gpus_per_tray': 4, 'timeout': 1800, 'ssh_private_key': key.private, 'ssh_public_key': key.public,
          'rails': [{'resource': 'nvidia.com/sriov_resource_rail_0', 'network': 'default/sriov-network-rail-0'}]}
         | gpu_tray.cluster.nccl_run_plan }}
'''

RETURN = r'''
_value:
  description:
    - C(namespace); C(capacity) (with C(nodes) - C(eligible) node names, C(enough), C(message); else none);
      C(prepare) (objects created first), C(wait_for) (C({api_version, kind, name, namespace, why}) that
      must exist before the workload), C(workload) (the Jobs, or the TrainingRuntime and TrainJob), C(launcher)
      (C({api_version, kind, name, namespace, label_selectors, container})), C(workers) (C({label_selectors})) and
      C(summary) (the run's shape for the evidence).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def nccl_run_plan(spec):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.nccl_launch import PlanError, run_plan
    if not isinstance(spec, dict):
        raise AnsibleFilterError('nccl_run_plan: the input must be a dict, got %s' % type(spec).__name__)
    try:
        return run_plan(spec)
    except PlanError as exc:
        raise AnsibleFilterError('nccl_run_plan: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'nccl_run_plan': nccl_run_plan}
