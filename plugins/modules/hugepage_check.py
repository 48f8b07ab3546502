#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: hugepage_check
short_description: Check that the running kernel has the huge page pools a tuning profile requests
version_added: 0.1.0
description:
  - Reads the pools under C(/sys/kernel/mm/hugepages/hugepages-<size>kB/) (C(nr_hugepages), C(free_hugepages),
    C(resv_hugepages), C(surplus_hugepages)).
  - Fails when a requested size has no pool on the running kernel and names the sizes that do exist. A
    64k-page arm64 kernel (C(-64k) flavour) has 2M, 512M and 16G pools and no 1G pool, so the
    C(hugepagesz=1G hugepages=2) in the GB200/VR200 tuning profiles is silently ignored there
    (nodewright-packages#135).
  - With C(check=counts) (the default, after the reboot that applied the tuning) also fails when a pool holds fewer
    pages (C(nr_hugepages)) than requested - the kernel did not honour the request - and names the likely causes - not
    enough memory, a later GRUB drop-in overriding the C(hugepages=) arguments, or the tray booted another entry.
  - With C(check=sizes) (before any change - the pages are allocated only by the C(hugepages=) argument after the
    reboot) only the page sizes must exist on the running kernel; counts are not compared.
  - Input it cannot read fails the check and names what could not be read (an C(nr_hugepages) without an integer
    in C(check=counts), a C(meminfo) without C(Hugepagesize) when O(default_size) is set).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  requested:
    description:
      - Pools the tuning profile requests. Must not be empty - an empty list would check nothing.
    type: list
    elements: dict
    required: true
    suboptions:
      size:
        description:
          - Page size, for example C(2M), C(1G), C(16G), C(512M) or C(2048kB).
        type: str
        required: true
      count:
        description:
          - Number of pages requested. Must be 0 or more. When omitted only the existence of the pool is checked.
          - Compared only with O(check=counts).
        type: int
  check:
    description:
      - V(counts) - every requested pool must exist and hold at least its O(requested[].count) pages (after the reboot).
      - V(sizes) - every requested page size must have a pool on the running kernel; counts are not compared (before
        the change, in preflight).
    type: str
    choices: [sizes, counts]
    default: counts
  default_size:
    description:
      - The default huge page size the kernel must use (C(Hugepagesize) in C(proc_root/meminfo)), for example C(2M)
        for a profile with C(default_hugepagesz=2M). Not checked when omitted. On a 64k-page kernel the default is
        512M unless C(default_hugepagesz) is set.
      - With O(check=sizes) only a pool of that size must exist (C(default_hugepagesz=) takes effect with the reboot).
    type: str
  fail_on_error:
    description:
      - Fail on a missing pool, a shortfall, unreadable input or a different default size. With V(false) the module
        only reports (and warns with RV(msg)).
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.sysfs
  - gpu_tray.cluster.host_paths.proc
seealso:
  - module: gpu_tray.cluster.kernel_cmdline
  - module: gpu_tray.cluster.tray_facts
'''

EXAMPLES = r'''
- name: The GB200 performance profile's huge pages exist (fails on a 64k kernel - no 1G pool)
  gpu_tray.cluster.hugepage_check:
    requested:
      - {size: 2M, count: 5128}
      - {size: 1G, count: 2}

- name: Preflight, before the tuning reboot - the sizes must exist, the counts come with the reboot
  gpu_tray.cluster.hugepage_check:
    check: sizes
    requested:
      - {size: 2M, count: 5128}

- name: Only the 2M pool, report only
  gpu_tray.cluster.hugepage_check:
    sysfs_root: "{{ gpu_tray_sysfs_root | default('/sys') }}"
    requested:
      - size: 2048kB
        count: 8192
    fail_on_error: false
'''

RETURN = r'''
pools:
  description: Every pool on the running kernel.
  type: list
  elements: dict
  returned: always
  sample:
    - {size: 2M, size_kb: 2048, nr_hugepages: 5128, free_hugepages: 5128, resv_hugepages: 0, surplus_hugepages: 0}
    - {size: 512M, size_kb: 524288, nr_hugepages: 0, free_hugepages: 0, resv_hugepages: 0, surplus_hugepages: 0}
available_sizes:
  description: Page sizes that have a pool, smallest first.
  type: list
  elements: str
  returned: always
  sample: [2M, 512M, 16G]
default_hugepage_size:
  description: Default huge page size from C(Hugepagesize) in C(proc_root/meminfo), or null when unreadable.
  type: str
  returned: always
  sample: 512M
checked:
  description: What was checked - V(sizes) (pools exist) or V(counts) (pools exist and hold their counts).
  type: str
  returned: always
  sample: counts
results:
  description: One entry per requested pool.
  type: list
  elements: dict
  returned: always
  sample:
    - {size: 1G, size_kb: 1048576, count: 2, pool_exists: false, nr_hugepages: null, ok: false,
       problem: "the running kernel has no 1G huge page pool (pools on this kernel: 2M, 512M, 16G)"}
checks:
  description:
    - The check as one record (module_utils/check_record.py) - C(name), C(status) (C(passed); C(failed); C(warning)
      when it passed but something could not be judged), C(message) (RV(msg)), C(fix), C(details) (RV(problems),
      then what could not be judged), C(data) and C(object) - the shape the preflight, the validation and their
      reports give every check.
  type: list
  elements: dict
  returned: always
problems:
  description: Every problem found, one text each (empty when the check passed).
  type: list
  elements: str
  returned: always
  sample: ["the 2M pool holds 0 of the 5128 requested pages (nr_hugepages); likely causes: ..."]
fix:
  description: What to do about the problems found (one sentence per kind of problem), or null when the check passed.
  type: str
  returned: always
  sample: Request only sizes the running kernel has (pools on this kernel - 2M, 512M, 16G) in option requested, ...
msg:
  description:
    - One sentence naming the pools and what is wrong with them (the details in RV(problems), the fix in RV(fix)).
      The preflight's C(hugepages) check says the same for the same tray.
  type: str
  returned: always
  sample: The 2M huge page pool holds 0 of the 5128 requested pages.
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    check_argument_spec,
    join_root,
    parse_size_kb,
    read_text,
    report_verdict,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.hugepages import (
    CHECKS,
    meminfo_hugepagesize_kb,
    read_pools,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_hugepages


def build_module():
    return AnsibleModule(
        argument_spec=check_argument_spec(
            check=dict(type='str', choices=list(CHECKS), default='counts'),
            default_size=dict(type='str'),
            requested=dict(type='list', elements='dict', required=True, options=dict(
                size=dict(type='str', required=True),
                count=dict(type='int'),
            )),
        ),
        supports_check_mode=True,
    )


def validate(module):
    """Option errors the argument spec cannot express; returns the default size in KiB or None."""
    params = module.params
    if not params['requested']:
        module.fail_json(msg='option requested is empty: nothing to check; list the pools the tuning profile '
                             'requests (for example [{size: 2M, count: 5128}]) or skip the task when it requests none')
    for index, item in enumerate(params['requested']):
        try:
            parse_size_kb(item['size'])
        except ValueError as exc:
            module.fail_json(msg='option requested[%d].size: %s' % (index, exc))
        if item['count'] is not None and item['count'] < 0:
            module.fail_json(msg='option requested[%d].count must be 0 or more, got %d' % (index, item['count']))
    if params['default_size'] is None:
        return None
    try:
        return parse_size_kb(params['default_size'])
    except ValueError as exc:
        module.fail_json(msg='option default_size: %s' % exc)


def main():
    module = build_module()
    params = module.params
    default_kb = validate(module)
    base, pools = read_pools(params['sysfs_root'])
    meminfo = read_text(join_root(params['proc_root'], 'meminfo'))
    judged = judge_hugepages(pools, params['requested'], check=params['check'], base=base,
                             default_size_kb=default_kb, current_default_kb=meminfo_hugepagesize_kb(meminfo),
                             meminfo_read=meminfo is not None, proc_root=params['proc_root'],
                             variable='option requested')
    report_verdict(module, judged, pools=[pools[size] for size in sorted(pools)], **judged['data'])


if __name__ == '__main__':
    main()
