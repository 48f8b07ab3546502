# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared fixtures for the unit tests.

* makes ``ansible_collections.gpu_tray.cluster`` importable (the repo's
  .collections tree, or a private symlink tree when that does not exist);
* ``run_module``: run a module's ``main()`` in-process with real
  AnsibleModule argument handling and return its JSON result;
* ``adhoc``: run ``ansible localhost -m gpu_tray.cluster.<m>`` from the venv;
* ``tray``: build a simulated GB200 tray (sysfs + proc trees) in tmp_path.
"""

import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from ansible_env import checkout_env, collections_entries   # tools/ (tests/conftest.py puts it on sys.path)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UNIT_DIR = os.path.dirname(os.path.abspath(__file__))
if UNIT_DIR not in sys.path:
    sys.path.insert(0, UNIT_DIR)


def _collections_root():
    """Directory above ``ansible_collections`` where gpu_tray/cluster is this checkout.

    The first such entry of the environment's collections search path (the Makefile's .collections;
    tools/matrix.sh's tree with newer dependency collections), else the repo's .collections."""
    paths = collections_entries()
    for candidate in paths + [os.path.join(REPO, '.collections')]:
        link = os.path.join(candidate, 'ansible_collections', 'gpu_tray', 'cluster')
        if os.path.isdir(link) and os.path.samefile(link, REPO):
            return candidate
    private = tempfile.mkdtemp(prefix='gpu-tray-unit-collections-')
    os.makedirs(os.path.join(private, 'ansible_collections', 'gpu_tray'))
    os.symlink(REPO, os.path.join(private, 'ansible_collections', 'gpu_tray', 'cluster'))
    return private


COLLECTIONS_ROOT = _collections_root()
if COLLECTIONS_ROOT not in sys.path:
    sys.path.insert(0, COLLECTIONS_ROOT)

try:
    from hypothesis import settings as _hyp_settings
    # No example database in the repo checkout; keep runs cheap on shared 2-core machines.
    # tools/mutate.py runs the tests once per planted bug and asks for fewer examples
    _hyp_settings.register_profile('gpu_tray', database=None, deadline=None,
                                   max_examples=int(os.environ.get('GPU_TRAY_HYPOTHESIS_EXAMPLES', '200')))
    _hyp_settings.load_profile('gpu_tray')
except ImportError:  # pragma: no cover - hypothesis is part of the pinned toolchain
    pass

from trayfixture import build_tray  # noqa: E402  (needs sys.path above)
from unithelpers import fixture_path  # noqa: E402


# Unit tests of the rehearsal lab that need root or a tool skip without it - and fail instead with
# GPU_TRAY_LAB_REQUIRE=1 (.ci/run sets it), as tests/lab does and tests/cluster does with KCLUSTER_REQUIRE.
LAB_REQUIRE = os.environ.get('GPU_TRAY_LAB_REQUIRE') == '1'
# GPU_TRAY_LAB_ASSUME_MISSING=root,unshare plays a machine without them (the switch's own test_lab_require.py).
_ASSUME_MISSING = os.environ.get('GPU_TRAY_LAB_ASSUME_MISSING', '').split(',')
_NEEDS = {
    'root': lambda: os.geteuid() == 0 and 'root' not in _ASSUME_MISSING,
    'unshare': lambda: shutil.which('unshare') is not None and 'unshare' not in _ASSUME_MISSING,
}


def pytest_configure(config):
    config.addinivalue_line('markers', 'lab_needs(*what): the test needs %s; it skips without them, or fails with '
                                       'GPU_TRAY_LAB_REQUIRE=1' % ', '.join(sorted(_NEEDS)))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    for mark in item.iter_markers(name='lab_needs'):
        missing = [what for what in mark.args if not _NEEDS[what]()]
        if missing:
            reason = 'needs %s: %s' % (' and '.join(missing), mark.kwargs.get('reason', ''))
            if LAB_REQUIRE:
                pytest.fail('%s (GPU_TRAY_LAB_REQUIRE=1: failing instead of skipping)' % reason, pytrace=False)
            pytest.skip(reason)


class ModuleResult(dict):
    @property
    def failed(self):
        return bool(self.get('failed'))

    @property
    def warning_texts(self):
        """Warnings as text (ansible-core 2.19 modules emit structured WarningSummary objects)."""
        out = []
        for item in self.get('warnings') or []:
            if isinstance(item, dict):
                item = (item.get('event') or {}).get('msg') or item.get('msg') or str(item)
            out.append(item)
        return out


def _run_module(module, args):
    """Run ``module.main()`` with ``args``; return the parsed JSON result."""
    from ansible.module_utils import _internal
    from ansible.module_utils.common import warnings as _warnings
    from ansible.module_utils.testing import patch_module_args

    # A real module process starts with no warnings; in-process runs must too.
    for name in ('_global_warnings', '_global_deprecations'):
        store = getattr(_warnings, name, None)
        if isinstance(store, (dict, list)):
            store.clear()
    # ... and is never the controller: once a test in this session has loaded controller code (a filter
    # plugin, Display), ansible-core 2.19 flags the process as the controller and module.warn() would print
    # instead of returning the warning with the result.
    was_controller = getattr(_internal, 'is_controller', False)
    _internal.is_controller = False
    out = io.StringIO()
    old = sys.stdout
    sys.stdout = out
    try:
        with patch_module_args(args):
            try:
                module.main()
            except SystemExit:
                pass
    finally:
        sys.stdout = old
        _internal.is_controller = was_controller
    text = out.getvalue()
    try:
        return ModuleResult(json.loads(text))
    except ValueError:
        raise AssertionError('module printed no JSON result: %r' % text)


@pytest.fixture
def collections_root():
    """Directory above ansible_collections (the collections search path for Ansible run by a test)."""
    return COLLECTIONS_ROOT


@pytest.fixture
def repo_root():
    return REPO


@pytest.fixture
def run_module():
    return _run_module


@pytest.fixture
def tray(tmp_path):
    """A GB200 NVKE tray: 4 CX-7 rails (mlx5_0,1,3,4), BF-3 mlx5_2, 2 VFs on mlx5_3."""
    return build_tray(str(tmp_path / 'tray'))


def _adhoc(module, args, check=True, extra_env=None, home=None):
    """``ansible localhost -m gpu_tray.cluster.<module> -a <json>``; return (rc, result dict)."""
    ansible = os.path.join(os.path.dirname(sys.executable), 'ansible')
    if not os.path.exists(ansible):
        pytest.fail('ansible is not installed next to %s (run make setup)' % sys.executable)
    env = checkout_env(REPO, collections=COLLECTIONS_ROOT, config=False, home=home, local_temp=True,
                       callback='ansible.builtin.json', ANSIBLE_LOAD_CALLBACK_PLUGINS='1', ANSIBLE_HOST_KEY_CHECKING='0',
                       LC_ALL='C.UTF-8')
    env.update(extra_env or {})
    argv = [ansible, 'localhost', '-i', 'localhost,', '-c', 'local',
            '-e', 'ansible_python_interpreter=%s' % sys.executable,
            '-m', 'gpu_tray.cluster.%s' % module, '-a', json.dumps(args)]
    if check:
        argv.append('--check')
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError('ansible printed no JSON (rc=%d):\n%s\n%s' % (proc.returncode, proc.stdout, proc.stderr))
    task = data['plays'][0]['tasks'][0]
    return proc.returncode, task['hosts']['localhost']


@pytest.fixture
def adhoc(tmp_path_factory):
    def run(module, args, check=True, extra_env=None):
        home = str(tmp_path_factory.mktemp('ansible-home'))
        return _adhoc(module, args, check=check, extra_env=extra_env, home=home)
    return run


@pytest.fixture
def fixture_text():
    def read(*parts):
        with open(fixture_path(*parts), 'r') as handle:
            return handle.read()
    return read
