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
  - Fails when a pool holds fewer pages (C(nr_hugepages)) than requested - the kernel did not honour the request.
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
        type: int
  default_size:
    description:
      - The default huge page size the kernel must use (C(Hugepagesize) in C(proc_root/meminfo)), for example C(2M)
        for a profile with C(default_hugepagesz=2M). Not checked when omitted. On a 64k-page kernel the default is
        512M unless C(default_hugepagesz) is set.
    type: str
  fail_on_error:
    description:
      - Fail on a missing pool, a shortfall or a different default size. With C(false) the module only reports.
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
results:
  description: One entry per requested pool.
  type: list
  elements: dict
  returned: always
  sample:
    - {size: 1G, size_kb: 1048576, count: 2, pool_exists: false, nr_hugepages: null, ok: false,
       problem: "requested 1G x 2 but the running kernel has no 1G huge page pool (pools on this kernel: 2M, 512M, 16G)"}
msg:
  description: Summary naming every problem.
  type: str
  returned: always
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    check_argument_spec,
    format_size_kb,
    hostname,
    join_root,
    parse_size_kb,
    read_text,
    report_failure,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.hugepages import (
    check_requests,
    meminfo_hugepagesize_kb,
    read_pools,
)


def build_module():
    return AnsibleModule(
        argument_spec=check_argument_spec(
            default_size=dict(type='str'),
            requested=dict(type='list', elements='dict', required=True, options=dict(
                size=dict(type='str', required=True),
                count=dict(type='int'),
            )),
        ),
        supports_check_mode=True,
    )


def main():
    module = build_module()
    host = hostname()
    params = module.params
    if not params['requested']:
        module.fail_json(msg='%s: option requested is empty: nothing to check. List the pools the tuning profile '
                             'requests (for example [{size: 2M, count: 5128}]), or skip the task when it requests '
                             'none.' % host)
    for index, item in enumerate(params['requested']):
        try:
            parse_size_kb(item['size'])
        except ValueError as exc:
            module.fail_json(msg='%s: option requested[%d].size: %s' % (host, index, exc))
        if item['count'] is not None and item['count'] < 0:
            module.fail_json(msg='%s: option requested[%d].count must be 0 or more, got %d'
                                 % (host, index, item['count']))
    default_kb = None
    if params['default_size'] is not None:
        try:
            default_kb = parse_size_kb(params['default_size'])
        except ValueError as exc:
            module.fail_json(msg='%s: option default_size: %s' % (host, exc))
    base, pools = read_pools(params['sysfs_root'])
    meminfo_path = join_root(params['proc_root'], 'meminfo')
    current_kb = meminfo_hugepagesize_kb(read_text(meminfo_path))
    results = check_requests(pools, params['requested'])
    sizes = [pools[size]['size'] for size in sorted(pools)]
    output = dict(changed=False, pools=[pools[size] for size in sorted(pools)], available_sizes=sizes,
                  default_hugepage_size=format_size_kb(current_kb) if current_kb else None, results=results)
    problems = [res['problem'] for res in results if not res['ok']]
    if default_kb is not None and current_kb != default_kb:
        problems.append('default huge page size is %s (Hugepagesize in %s), expected %s - add '
                        'default_hugepagesz=%s to the kernel command line'
                        % (output['default_hugepage_size'] or 'unknown', meminfo_path, format_size_kb(default_kb),
                           format_size_kb(default_kb)))
    if not pools:
        problems.insert(0, 'no huge page pools under %s (check option sysfs_root)' % base)
    if not problems:
        output['msg'] = '%s: huge page pools OK (%s)' % (
            host, ', '.join('%s x %s' % (res['size'], res['nr_hugepages']) for res in results))
        module.exit_json(**output)
    output['msg'] = ('%s: huge page check failed: %s. Fix: request only sizes the running kernel has (pools on '
                     'this kernel: %s) and counts that fit in memory in the tuning profile, or boot a kernel with the '
                     'needed page size; then reboot.'
                     % (host, '; '.join(problems), ', '.join(sizes) or 'none'))
    report_failure(module, output)


if __name__ == '__main__':
    main()
