# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL NET run's preflight over the trays' reads (pure functions in plugin_utils/nccl_launch.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: nccl_net_preflight
short_description: Can the GPU trays run the NCCL NET benchmark - NVreg_GrdmaPciTopoCheckOverride on the R580 driver
version_added: 0.1.0
description:
  - >-
    GPUDirect RDMA over dma-buf to the PCIe NICs of a Grace tray needs C(NVreg_GrdmaPciTopoCheckOverride=1) on the
    R580 driver (the NVKE GB200 guide; AICR's GB200 C(-net) preflight). Each tray's C(/proc/driver/nvidia/params)
    must show C(GrdmaPciTopoCheckOverride: 1); a driver after R580 (C(/proc/driver/nvidia/version)) no longer has
    the parameter and passes.
  - Returns one check, C(nccl-net-preflight), in the evidence format of
    P(gpu_tray.cluster.validation_evidence#filter) - failed when a tray fails or was not read (named in
    C(object)), a warning when there is no tray, a line per tray in C(details).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _input:
    description:
      - Mapping of tray name to C({state, proc_root}) - C(state) the registered M(gpu_tray.cluster.tray_state)
        result that read C(<proc_root>/driver/nvidia/params) and C(<proc_root>/driver/nvidia/version) as C(files)
        (none when the tray was not read).
    type: dict
    required: true
'''

EXAMPLES = r'''
- name: NET preflight
  ansible.builtin.set_fact:
    preflight: "{{ {'tray01': {'state': hostvars['tray01'].tray_read, 'proc_root': '/proc'}} | gpu_tray.cluster.nccl_net_preflight }}"
'''

RETURN = r'''
_value:
  description: One check, C({name, status, message, fix, object, details}).
  type: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def nccl_net_preflight(trays):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.nccl_launch import net_preflight
    if not isinstance(trays, dict):
        raise AnsibleFilterError('nccl_net_preflight: the input must be a dict of trays, got %s' % type(trays).__name__)
    return net_preflight(trays)


class FilterModule(object):
    def filters(self):
        return {'nccl_net_preflight': nccl_net_preflight}
