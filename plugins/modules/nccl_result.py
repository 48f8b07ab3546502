#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: nccl_result
short_description: Judge an NCCL all_reduce_perf log against a bus-bandwidth floor
version_added: 0.1.0
description:
  - Parses the output of nccl-tests C(all_reduce_perf) (a log file on the host the module runs on, or the text
    itself) and checks it the way AICR's C(nccl-all-reduce-bw) checks do.
  - The bandwidth judged is the B(out-of-place busbw of the largest message size), not the C(# Avg bus bandwidth)
    line (a mean over all sizes, far below the peak). It must be at least I(min_busbw) x (1 - I(tolerance)).
  - Also fails on out-of-bounds values, a non-zero C(#wrong), a log without result rows, a log that ends before
    the footer or before the requested maxBytes (a crashed or cut-off run), NCCL/CUDA failure lines, the
    C(Socket) transport (TCP fallback) for I(variant=nvls) and I(variant=net), and for I(variant=nvls) a log
    with C(NCCL INFO) lines but no C(NVLS multicast support is available) line.
  - Launcher line prefixes are removed first (Open MPI C(--tag-output) C([1,0]<stdout>:), MPICH
    C(-prepend-rank), Slurm C(srun -l), C(kubectl logs --prefix) and C(--timestamps)). Old nccl-tests releases
    without the C(root) column, per-iteration columns (C(-I 1)), timestamps (C(-S 1)) and CUDA graph runs
    (C(-G)) are understood.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  path:
    description:
      - The all_reduce_perf log on the host the module runs on (for example the saved C(kubectl logs) of the
        launcher pod). Mutually exclusive with I(content).
    type: path
  content:
    description:
      - The log text itself (for example the registered stdout of a task). Mutually exclusive with I(path).
    type: str
  variant:
    description:
      - Which AICR check this run stands for. C(nvls) (NVLink SHARP, multi-node NVLink) and C(net) (the IB/RDMA
        fabric) also fail on the C(Socket) transport; C(nvls) also needs NVLS to have initialised.
    type: str
    choices: [nvls, net, default]
    default: default
  platform:
    description:
      - The tray platform, used only to pick the recipe floor when I(min_busbw) is not given.
      - Recipe floors (GB/s busbw) are C(gb200)+C(nvls) 500, C(vr200)+C(nvls) 600, C(net) 40 on any platform.
    type: str
    choices: [gb200, vr200]
  min_busbw:
    description:
      - Floor for the out-of-place busbw of the largest size, in GB/s.
      - Defaults to the recipe floor of I(variant) and I(platform); required when there is none (I(variant=default),
        or I(variant=nvls) without I(platform)).
    type: float
  tolerance:
    description:
      - Fraction below I(min_busbw) still accepted (AICR uses 10 %). Between 0 and 1 (exclusive).
    type: float
    default: 0.1
  fail_on_error:
    description:
      - Fail when a check fails. With C(false) the module only reports (and warns).
    type: bool
    default: true
attributes:
  check_mode:
    support: full
    description: The module only reads, so it runs identically in check mode.
  diff_mode:
    support: none
    description: The module never changes anything, so there is nothing to diff.
  platform:
    support: full
    platforms: posix
    description: Reads the log on the host the task runs on (or parses I(content) anywhere).
notes:
  - The module only reads. It always returns C(changed=false).
  - Run the test with C(NCCL_DEBUG=INFO) so the transport (C(Using network IB)) and NVLS can be verified;
    without those lines the module warns that it cannot.
  - When several rows share the largest size (C(-d all), C(-o all)) the lowest busbw counts.
seealso:
  - name: nccl-tests performance notes (algbw and busbw)
    description: What busbw means and why it is the number to compare.
    link: https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
'''

EXAMPLES = r'''
- name: Judge the VR200 NVLS run saved from the launcher pod
  gpu_tray.cluster.nccl_result:
    path: /var/tmp/nccl/all_reduce_nvls.log
    variant: nvls
    platform: vr200

- name: Judge a GB200 net run from registered output, report only
  gpu_tray.cluster.nccl_result:
    content: "{{ nccl_job_log.stdout }}"
    variant: net
    min_busbw: 45
    tolerance: 0.05
    fail_on_error: false
  register: nccl
'''

RETURN = r'''
busbw:
  description: Out-of-place busbw of the largest message size, GB/s. Null without result rows.
  type: float
  returned: always
  sample: 744.71
in_place_busbw:
  description: In-place busbw of the largest message size, GB/s.
  type: float
  returned: always
  sample: 745.02
avg_busbw:
  description: The C(# Avg bus bandwidth) value (mean over all sizes). Null when the footer is missing.
  type: float
  returned: always
  sample: 225.15
largest_size:
  description: The largest message size measured, bytes.
  type: int
  returned: always
  sample: 17179869184
transport:
  description:
    - The network from the NCCL C(Using network <name>) lines (C(IB), C(IBext_v8), C(Socket), C(AWS Libfabric)).
      C(Socket) when any rank fell back to it. Null when the log has no such line.
  type: str
  returned: always
  sample: IB
transports:
  description: Every network name seen, in order of appearance.
  type: list
  elements: str
  returned: always
  sample: [IB]
nvls:
  description: NVLS multicast reported available (true), not reported although NCCL INFO lines exist (false), unknown (null).
  type: bool
  returned: always
out_of_bounds:
  description: The C(# Out of bounds values) count. Null when the footer is missing.
  type: int
  returned: always
  sample: 0
wrong:
  description: Sum of C(#wrong) over all rows (out-of-place and in-place). Null when data checking was off.
  type: int
  returned: always
  sample: 0
rows:
  description: One entry per complete result row.
  type: list
  elements: dict
  returned: always
  sample: [{size: 17179869184, type: float, redop: sum, busbw: 744.71, algbw: 382.0, time_us: 44972.0, wrong: 0,
            in_place_busbw: 745.02, in_place_wrong: 0}]
hosts:
  description: Host names from the C(# Rank ... on <host>) lines.
  type: list
  elements: str
  returned: always
ranks:
  description: Number of ranks listed.
  type: int
  returned: always
min_busbw:
  description: The floor applied (I(min_busbw) or the recipe floor), GB/s.
  type: float
  returned: always
  sample: 600.0
threshold:
  description: I(min_busbw) x (1 - I(tolerance)), the lowest accepted busbw.
  type: float
  returned: always
  sample: 540.0
problems:
  description: Every failed check, one sentence each. Empty when the run passes.
  type: list
  elements: str
  returned: always
passed:
  description: True when I(problems) is empty.
  type: bool
  returned: always
msg:
  description: Summary naming the source, what was found and what was expected.
  type: str
  returned: always
'''

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import hostname, report_failure
from ansible_collections.gpu_tray.cluster.plugins.module_utils.nccl import (
    PLATFORMS,
    VARIANTS,
    evaluate,
    parse_all_reduce,
    recipe_floor,
)


def build_module():
    return AnsibleModule(
        argument_spec=dict(
            path=dict(type='path'),
            content=dict(type='str'),
            variant=dict(type='str', choices=list(VARIANTS), default='default'),
            platform=dict(type='str', choices=list(PLATFORMS)),
            min_busbw=dict(type='float'),
            tolerance=dict(type='float', default=0.1),
            fail_on_error=dict(type='bool', default=True),
        ),
        mutually_exclusive=[('path', 'content')],
        required_one_of=[('path', 'content')],
        supports_check_mode=True,
    )


def _row(row):
    return dict(size=row['size'], type=row['type'], redop=row['redop'], time_us=row['out_of_place']['time_us'],
                algbw=row['out_of_place']['algbw'], busbw=row['out_of_place']['busbw'],
                wrong=row['out_of_place']['wrong'], in_place_busbw=row['in_place']['busbw'],
                in_place_wrong=row['in_place']['wrong'])


def main():
    module = build_module()
    params = module.params
    host = hostname()
    tolerance = params['tolerance']
    if not 0 <= tolerance < 1:
        module.fail_json(msg='%s: option tolerance must be a fraction from 0 to below 1 (0.1 = 10 %%), got %r'
                         % (host, tolerance))
    min_busbw = params['min_busbw']
    if min_busbw is None:
        min_busbw = recipe_floor(params['variant'], params['platform'])
        if min_busbw is None:
            module.fail_json(msg='%s: no recipe floor for variant %s%s: give option min_busbw (GB/s), or platform '
                                 '(gb200: nvls 500; vr200: nvls 600; net: 40)'
                             % (host, params['variant'],
                                ' on platform %s' % params['platform'] if params['platform'] else ''))
    elif min_busbw <= 0:
        module.fail_json(msg='%s: option min_busbw must be a positive bandwidth in GB/s, got %r' % (host, min_busbw))
    if params['path'] is not None:
        source = params['path']
        if os.path.isdir(source):
            module.fail_json(msg='%s: option path %s is a directory, expected the all_reduce_perf log file' % (host, source))
        try:
            with open(source, 'rb') as handle:
                text = handle.read().decode('utf-8', 'replace')
        except (OSError, IOError) as exc:
            module.fail_json(msg='%s: cannot read the NCCL log %s: %s (check option path; the file is read on the '
                                 'host the task runs on)' % (host, source, exc))
    else:
        source = 'content'
        text = params['content']
    result = parse_all_reduce(text)
    problems, warnings = evaluate(result, params['variant'], min_busbw, tolerance)
    for warning in warnings:
        module.warn('%s: %s: %s' % (host, source, warning))
    threshold = round(min_busbw * (1 - tolerance), 6)
    output = dict(
        changed=False,
        busbw=result['busbw'], in_place_busbw=result['in_place_busbw'], avg_busbw=result['avg_busbw'],
        largest_size=result['largest_size'], transport=result['transport'], transports=result['transports'],
        nvls=result['nvls'], out_of_bounds=result['out_of_bounds'], wrong=result['wrong'],
        rows=[_row(row) for row in result['rows']], hosts=result['hosts'], ranks=result['ranks'],
        min_busbw=min_busbw, threshold=threshold, problems=problems, passed=not problems,
    )
    if not problems:
        # No problem means complete rows exist, so busbw and largest_size are numbers here.
        output['msg'] = ('%s: %s: all_reduce_perf %s OK: busbw %s GB/s at %s bytes >= %g GB/s (floor %g, tolerance '
                         '%g), transport %s' % (host, source, params['variant'], result['busbw'], result['largest_size'],
                                                threshold, min_busbw, tolerance, result['transport'] or 'unknown'))
        module.exit_json(**output)
    output['msg'] = ('%s: %s: all_reduce_perf %s check failed: %s. Expected out-of-place busbw >= %g GB/s at the largest '
                     'size, 0 wrong/out-of-bounds values and a complete log%s.'
                     % (host, source, params['variant'], '; '.join(problems), threshold,
                        ' over IB/RDMA' if params['variant'] != 'default' else ''))
    report_failure(module, output)


if __name__ == '__main__':
    main()
