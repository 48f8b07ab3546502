# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers of the lab hardware tests: populate a tray into a directory, run its
tool doubles as subprocesses against that tree (GPU_TRAY_LAB_ROOT)."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LAB = os.path.join(REPO, 'lab')
TRAYFS = os.path.join(LAB, 'trayfs')
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
if LAB not in sys.path:
    sys.path.insert(0, LAB)

from gpu_tray_lab import fixtures  # noqa: E402

SYS = 'var/lib/gpu-tray-lab/sys'


class Tray(object):
    def __init__(self, root, platform, faults):
        self.root = str(root)
        self.platform = platform
        self.faults = frozenset(faults)
        fixtures.populate_tray(root, platform, 1, self.faults)
        self.hw = fixtures.hardware(platform, 1, self.faults)

    def p(self, rel):
        return os.path.join(self.root, rel)

    def sys(self, rel=''):
        return os.path.join(self.root, SYS, rel)

    def read(self, rel):
        with open(self.sys(rel)) as handle:
            return handle.read()

    def reads(self, prefix, expected):
        """{name: content} of the sysfs file ``prefix + name`` of every name of ``expected``, to compare with it."""
        return dict((name, self.read(prefix + name)) for name in expected)

    def text(self, rel):
        """The file ``rel`` under the tray's root (``read``: under its sysfs)."""
        with open(self.p(rel)) as handle:
            return handle.read()

    @staticmethod
    def write(path, text):
        """Write ``text`` to ``path`` (a ``p()`` or ``sys()`` path), its directory made if missing."""
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as handle:
            handle.write(text)

    def boot(self):
        return fixtures.traylab.boot(self.root, do_mounts=False)

    def reconcile(self):
        return fixtures.traylab.reconcile(self.root)

    def env(self):
        env = dict(os.environ)
        env['GPU_TRAY_LAB_ROOT'] = self.root
        return env

    def run(self, tool, *args):
        """Run a trayfs tool double (usr/local/sbin/<tool>, or the absolute path ``tool``) against this tray."""
        return subprocess.run([os.path.join(TRAYFS, 'usr/local/sbin', tool)] + list(args), env=self.env(),
                              capture_output=True, text=True, timeout=60, check=False)

    def calls(self):
        try:
            with open(self.p('var/log/gpu-tray-lab/calls.log')) as handle:
                return handle.read()
        except IOError:
            return ''

    def write_numvfs(self, ibdev_or_bdf, value):
        if ':' in ibdev_or_bdf:
            target = self.sys('bus/pci/devices/%s/sriov_numvfs' % ibdev_or_bdf)
        else:
            target = self.sys('class/infiniband/%s/device/sriov_numvfs' % ibdev_or_bdf)
        with open(target, 'w') as handle:
            handle.write('%s\n' % value)
        return self.reconcile()


def snapshot(root):
    """{relative path: file content or '-> link target'} of a tree."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                out[rel] = '-> ' + os.readlink(full)
            elif os.path.isfile(full):
                with open(full, 'rb') as handle:
                    out[rel] = handle.read()
    return out
