#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: kernel_cmdline
short_description: Check the booted kernel command line for required, forbidden and duplicated arguments
version_added: 0.1.0
description:
  - Reads C(/proc/cmdline) and splits it the way the kernel does (whitespace outside double quotes, quotes
    removed from values, C(--) ends the kernel arguments; C(-) and C(_) are equal in parameter names).
  - A command line that is not valid UTF-8 is read with each undecodable byte shown as C(\xNN), with a warning.
  - Reports which I(required) arguments are C(present) and C(missing), which I(forbidden) ones are present, and
    C(duplicates) - identical arguments appearing more than once, as a GRUB drop-in plus tuned's C($tuned_params)
    produce. Repeated keys with different values (C(console=tty0 console=ttyS0,115200n8),
    C(hugepagesz=2M ... hugepagesz=1G)) are normal and are not duplicates.
  - C(hugepages=N) belongs to the C(hugepagesz=) before it, so C(hugepagesz=2M hugepages=512 hugepagesz=1G
    hugepages=512) has no duplicate; the same C(hugepages=) for the same C(hugepagesz=) twice is one.
  - A token in C(/proc/cmdline) proves the boot loader passed it, not that the kernel honoured it (see
    M(gpu_tray.cluster.hugepage_check) for huge pages).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  required:
    description:
      - Arguments that must be present. C(key=value) needs that exact argument; a bare C(flag) is satisfied by
        C(flag) or any C(flag=...).
    type: list
    elements: str
    default: []
  forbidden:
    description:
      - Arguments that must not be present. C(key=value) matches that exact argument; a bare C(key) matches the key
        with any value.
    type: list
    elements: str
    default: []
  fail_on_duplicates:
    description:
      - Fail when an identical argument appears more than once. With C(false) duplicates are only warned about.
    type: bool
    default: true
  fail_on_error:
    description:
      - Fail when something is missing, forbidden or duplicated. With C(false) the module only reports.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.sysfs_unused
  - gpu_tray.cluster.host_paths.proc
seealso:
  - module: gpu_tray.cluster.hugepage_check
'''

EXAMPLES = r'''
- name: The GB200 tuning profile's arguments reached the kernel
  gpu_tray.cluster.kernel_cmdline:
    required:
      - iommu.passthrough=1
      - init_on_alloc=0
      - numa_balancing=disable
      - earlycon
      - hugepagesz=2M
      - hugepages=5128
    forbidden:
      - isolcpus

- name: Report only
  gpu_tray.cluster.kernel_cmdline:
    proc_root: "{{ gpu_tray_proc_root | default('/proc') }}"
    required: [iommu.passthrough=1]
    fail_on_error: false
  register: cmdline
'''

RETURN = r'''
cmdline:
  description: The raw command line.
  type: str
  returned: always
  sample: BOOT_IMAGE=/vmlinuz-6.8.0-1021-nvidia-64k root=UUID=1234 ro iommu.passthrough=1
tokens:
  description: The arguments as the kernel splits them (quotes removed, re-quoted when a value has spaces).
  type: list
  elements: str
  returned: always
  sample: [BOOT_IMAGE=/vmlinuz-6.8.0-1021-nvidia-64k, root=UUID=1234, ro, iommu.passthrough=1]
present:
  description: Required arguments that are present.
  type: list
  elements: str
  returned: always
  sample: [iommu.passthrough=1]
missing:
  description: Required arguments that are missing.
  type: list
  elements: str
  returned: always
  sample: [init_on_alloc=0]
forbidden_present:
  description: Arguments on the command line that match I(forbidden).
  type: list
  elements: str
  returned: always
  sample: []
duplicates:
  description:
    - Identical arguments that appear more than once, with their count. C(context) is the C(hugepagesz=) a
      C(hugepages=) belongs to, else null.
  type: list
  elements: dict
  returned: always
  sample: [{arg: init_on_alloc=0, context: null, count: 2}, {arg: hugepages=5128, context: hugepagesz=2M, count: 2}]
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
  description: One entry per kind of problem (missing, forbidden but present, duplicated), naming the arguments.
  type: list
  elements: str
  returned: always
  sample: ["missing: pci=realloc", "duplicated: init_on_alloc=0 (x2)"]
fix:
  description: What to do about the problems, or null when the command line matches.
  type: str
  returned: always
msg:
  description:
    - One sentence naming the missing, forbidden and duplicated arguments (the first four of each; all of them in
      RV(problems), the fix in RV(fix)). The preflight's C(kernel_cmdline) check says the same for the same tray.
  type: str
  returned: always
  sample: "The booted kernel command line lacks pci=realloc and repeats init_on_alloc=0."
'''

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpu_tray.cluster.plugins.module_utils.cmdline import parse_spec
from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    check_argument_spec,
    join_root,
    report_verdict,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_cmdline


def build_module():
    return AnsibleModule(
        argument_spec=check_argument_spec(
            required=dict(type='list', elements='str', default=[]),
            forbidden=dict(type='list', elements='str', default=[]),
            fail_on_duplicates=dict(type='bool', default=True),
        ),
        supports_check_mode=True,
    )


def main():
    module = build_module()
    params = module.params
    for option in ('required', 'forbidden'):
        for item in params[option]:
            try:
                parse_spec(item)
            except ValueError as exc:
                module.fail_json(msg='option %s: %s (give one argument per list item)' % (option, exc))
    path = join_root(params['proc_root'], 'cmdline')
    try:
        with open(path, 'rb') as handle:
            raw = handle.read()
    except (OSError, IOError) as exc:
        # unreadable input is an error whatever fail_on_error says: nothing was checked
        judged = judge_cmdline(None, path=path, error='cannot read %s: %s' % (path, exc))
        module.fail_json(changed=False, msg=judged['message'], problems=judged['details'], fix=judged['fix'],
                         checks=[judged])
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as exc:
        # Keep every byte visible and JSON-safe; whitespace (the separator) is ASCII, so tokens are unchanged.
        text = raw.decode('utf-8', 'backslashreplace')
        module.warn('%s is not valid UTF-8 (%s); undecodable bytes are shown as \\xNN' % (path, exc))
    judged = judge_cmdline(text.rstrip('\n').replace('\x00', ' '), params['required'], params['forbidden'],
                           fail_on_duplicates=params['fail_on_duplicates'], path=path)
    report_verdict(module, judged, **judged['data'])


if __name__ == '__main__':
    main()
