# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Module code runs on the managed trays, whose Python may be as old as ansible-core 2.19 allows (3.8).

Two checks back the claim in docs/testing.md: every module and module_utils file parses as Python 3.8
syntax; and, with a Python 3.8 interpreter on the machine (PATH or pyenv), the files byte-compile with it
and the module_utils parsers import and parse real formats there (stdlib only; containerd then has no TOML
parser, which it reports as documented).
"""

import ast
import glob
import os
import shutil
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))
CODE = sorted(glob.glob(os.path.join(REPO, 'plugins', 'modules', '*.py'))
              + glob.glob(os.path.join(REPO, 'plugins', 'module_utils', '*.py')))


def python38():
    """A working Python 3.8 (a pyenv shim that is not activated does not count)."""
    candidates = sorted(glob.glob(os.path.expanduser('~/.pyenv/versions/3.8*/bin/python3.8')))
    candidates += [shutil.which('python3.8')] if shutil.which('python3.8') else []
    for candidate in candidates:
        probe = subprocess.run([candidate, '-c', 'import sys; print(sys.version_info[:2] == (3, 8))'],
                               capture_output=True, text=True, check=False)
        if probe.stdout.strip() == 'True':
            return candidate
    return None


@pytest.mark.parametrize('path', CODE, ids=lambda p: os.path.relpath(p, REPO))
def test_parses_as_python38(path):
    with open(path) as handle:
        ast.parse(handle.read(), filename=path, feature_version=(3, 8))


SMOKE = r'''
import sys
from ansible_collections.gpu_tray.cluster.plugins.module_utils import cmdline, common, containerd, hugepages
from ansible_collections.gpu_tray.cluster.plugins.module_utils import mstconfig, rdma, tray
assert sys.version_info[:2] == (3, 8), sys.version
assert cmdline.tokenize('a="b c" d') == [('a', 'b c'), ('d', None)]
assert common.parse_size_kb('2M') == 2048 and tray.kernel_flavour_page_size('5.14.0-1.el9.aarch64+64k') == 65536
table = mstconfig.parse_mstconfig('Configurations:  Default  Current  Next Boot\n  NUM_OF_VFS  16  16  8\n')
assert [p['column'] for p in mstconfig.check_firmware(table, min_num_vfs=16, require_sriov=False)] == ['next_boot']
assert rdma.parse_rate('400 Gb/sec (4X NDR)')['gbps'] == 400 and hugepages.parse_pool_dirname('hugepages-2048kB')
print('ok', containerd.HAS_TOML)
'''


def test_module_utils_run_on_python38(tmp_path, collections_root):
    interpreter = python38()
    if interpreter is None:
        pytest.skip('no Python 3.8 interpreter on this machine (python3.8 in PATH or ~/.pyenv/versions/3.8*)')
    compiled = subprocess.run([interpreter, '-m', 'py_compile'] + CODE, capture_output=True, text=True, check=False)
    assert compiled.returncode == 0, compiled.stderr
    env = dict(os.environ, PYTHONPATH=collections_root, PYTHONDONTWRITEBYTECODE='1')
    proc = subprocess.run([interpreter, '-c', SMOKE], capture_output=True, text=True, env=env, cwd=str(tmp_path),
                          check=False)
    assert proc.returncode == 0 and proc.stdout.startswith('ok'), proc.stdout + proc.stderr
