# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Harness of the planner tests: a lab tray populated and booted into a directory by the lab's own code
(lab/gpu_tray_lab/fixtures.py, traylab.boot: the kernel's sysfs layout, the image's /etc/default/grub and drop-ins,
/proc/cmdline from grub.cfg), read by the real tray_state module in-process with a planner's request; the planner's
inputs are the role's own (its defaults and vars, made by Ansible: roleprobe), every path re-rooted under the tray."""

import functools
import json
import os
import shutil
import sys

UNIT_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB_TESTS = os.path.join(UNIT_DIR, 'lab')
if LAB_TESTS not in sys.path:
    sys.path.insert(0, LAB_TESTS)

from labtray import DATA, Tray  # noqa: E402  (needs sys.path above)
import roleprobe  # noqa: E402
import tooldouble  # noqa: E402
from unithelpers import fixture_path  # noqa: E402

from ansible_collections.gpu_tray.cluster.plugins.modules import tray_state  # noqa: E402
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import tray_read  # noqa: E402

IMAGE_DIRS = ('etc/modprobe.d', 'etc/modules-load.d', 'etc/sysctl.d', 'etc/default/grub.d')
OS_RELEASE = {'nvke-gb200': 'ubuntu-24.04', 'rke2-vr200': 'ubuntu-26.04'}
# blockinfile's output for a role block: what the role's task leaves on the tray
BLOCKINFILE = '%(begin)s\n%(block)s\n%(end)s\n'


class LabTray(object):
    """One lab tray in a directory, and its reads."""

    def __init__(self, root, platform, run_module, faults=(), units=None):
        self.run_module = run_module            # the unit tests' in-process module runner (fixture run_module)
        self.tray = Tray(root, platform, faults)
        self.tray.boot()
        self.root = str(root)
        self.platform = platform
        self.tools = os.path.join(self.root, 'tools')
        os.makedirs(self.tools)
        self.units = units or {}
        # the directories of the roles' files, as every Ubuntu image has them (the lab populates only the tray's own)
        for rel in IMAGE_DIRS:
            if not os.path.isdir(self.path(rel)):
                os.makedirs(self.path(rel))

    def path(self, rel):
        """``rel`` under the tray (a path already under it stays as it is)."""
        if rel.startswith(self.root + os.sep):
            return rel
        return os.path.join(self.root, rel.lstrip('/'))

    def write(self, rel, text, mode=0o644):
        target = self.path(rel)
        if not os.path.isdir(os.path.dirname(target)):
            os.makedirs(os.path.dirname(target))
        with open(target, 'w') as handle:
            handle.write(text)
        os.chmod(target, mode)
        if os.geteuid() != 0:       # the role writes root-owned files; a test run as a user cannot chown
            return target
        os.chown(target, 0, 0)
        return target

    def write_block(self, rel, block, marker):
        return self.write(rel, BLOCKINFILE % {'begin': marker.replace('{mark}', 'BEGIN'), 'block': block,
                                              'end': marker.replace('{mark}', 'END')})

    def grub_cfg(self, extra_args):
        """A grub.cfg as the real update-grub writes it (tests/unit/lab/data), its linux lines + extra_args."""
        with open(os.path.join(DATA, 'grub-vr200-baseline.cfg')) as handle:
            lines = handle.read().splitlines()
        out = []
        for line in lines:
            if line.strip().startswith('linux') and 'recovery' not in line and ' single' not in line:
                line = line + ' ' + ' '.join(extra_args)
            out.append(line)
        target = self.path('boot/grub/grub.cfg')
        with open(target, 'w') as handle:
            handle.write('\n'.join(out) + '\n')
        return target

    def reboot(self):
        return self.tray.boot()

    def inputs(self, planner, **overrides):
        """A planner's default inputs for this platform, every path re-rooted under the tray."""
        return rerooted(planner, self, overrides)

    def read(self, request):
        """The tray_state result of a request (tray_read.module_args), as the tray_plan action gets it."""
        args = tray_read.module_args(request)
        systemctl, _log = tooldouble.systemctl(self.tools, {'show': self.units, 'is-enabled': {}, 'is-active': {}})
        args.update(systemctl_path=systemctl, os_release_path=fixture_path('os-release', OS_RELEASE[self.platform]),
                    containerd_config_path=self.path('etc/containerd/config.toml'))
        args.setdefault('sysfs_root', self.tray.sys())
        args.setdefault('proc_root', self.path('proc'))
        result = self.run_module(tray_state, args)
        assert not result.failed, result
        return dict(result)

    def plan(self, planner, inputs):
        """The planner's plan on this tray's read of what it needs."""
        return planner.plan(self.read(planner.needs(inputs)), inputs)

    def restore(self, planner, inputs=None):
        """The planner's way back on this tray's read of what it needs for it (by default with the role's inputs)."""
        inputs = self.inputs(planner) if inputs is None else inputs
        return planner.restore(self.read(planner.restore_needs(inputs)), inputs)

    def remove(self, rel):
        target = self.path(rel)
        if os.path.isdir(target):
            shutil.rmtree(target)
        elif os.path.lexists(target):
            os.unlink(target)


PATH_INPUTS = ('grub_dropin', 'grub_default_file', 'grub_cfg', 'sysctl_file', 'conf_file', 'load_file')
SYS, PROC = '/@sysfs_root@', '/@proc_root@'


@functools.lru_cache(maxsize=None)
def role_inputs(platform):
    """The four roles' inputs on a tray of ``platform`` with the lab inventory's own values (lab/gpu_tray_lab/
    inventory.py LAB_VARS; the roots as placeholders), as the roles make them (roleprobe: Ansible in a subprocess)."""
    inventory = {'gpu_tray_platform': platform, 'gpu_tray_sysfs_root': SYS, 'gpu_tray_proc_root': PROC,
                 'gpu_tray_sysctl_apply': False}
    return json.dumps(roleprobe.probe([{'host_vars': inventory}])[0]['role'])


def rerooted(planner, lab, overrides):
    """The role's inputs on this lab tray: its roots and every path under the tray, then ``overrides``."""
    inputs = json.loads(role_inputs(lab.platform).replace(SYS, lab.tray.sys()).replace(PROC, lab.path('proc')))
    inputs = inputs[planner.NAME]
    for key in PATH_INPUTS:
        if key in inputs:
            inputs[key] = lab.path(inputs[key])
    if 'modprobe_dirs' in inputs:
        inputs['modprobe_dirs'] = [lab.path(d) for d in inputs['modprobe_dirs']]
    inputs.update(overrides)
    return inputs
