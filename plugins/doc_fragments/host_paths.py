# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    """Options and attributes shared by the read-only host check modules."""

    # Attributes of every gpu_tray.cluster read-only host module.
    DOCUMENTATION = r'''
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
    description: Linux hosts (reads sysfs/procfs layouts of the Linux kernel).
notes:
  - The module only reads files and runs read-only query tools. It always returns C(changed=false).
  - Failure messages are one short sentence without the host name (Ansible prints the host); the details are in the result.
'''

    SYSFS = r'''
options:
  sysfs_root:
    description:
      - Where sysfs is mounted. Every path the module reads under C(/sys) is read below this directory instead.
      - Point it at a simulated tray (for example the rehearsal lab's C(/var/lib/gpu-tray-lab/sys)) to test
        without hardware.
    type: path
    default: /sys
'''

    PROC = r'''
options:
  proc_root:
    description:
      - Where procfs is mounted. Every path the module reads under C(/proc) is read below this directory instead.
      - Point it at a fixture directory to test without touching the running kernel.
    type: path
    default: /proc
'''

    SYSFS_UNUSED = r'''
options:
  sysfs_root:
    description:
      - Not read by this module. Accepted so that one C(module_defaults) entry for
        C(group/gpu_tray.cluster.host_checks) can set I(sysfs_root) for every module of the group.
    type: path
    default: /sys
'''

    PROC_UNUSED = r'''
options:
  proc_root:
    description:
      - Not read by this module. Accepted so that one C(module_defaults) entry for
        C(group/gpu_tray.cluster.host_checks) can set I(proc_root) for every module of the group.
    type: path
    default: /proc
'''

    FACTS = r'''
attributes:
  facts:
    support: full
    description: The module returns its result under C(ansible_facts).
'''
