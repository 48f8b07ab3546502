# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab require switch: without root the lab tests skip, with GPU_TRAY_LAB_REQUIRE=1 they fail (CI).

Each case runs pytest in a subprocess with GPU_TRAY_LAB_ASSUME_MISSING=root, which plays a machine without
root; the tests/lab case runs the real tests/lab/conftest.py next to a probe test that would record it ran,
so no lab is ever started here.
"""

import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))


def _pytest(args, cwd, require):
    env = dict(os.environ, GPU_TRAY_LAB_ASSUME_MISSING='root', PYTHONDONTWRITEBYTECODE='1')
    env.pop('GPU_TRAY_LAB_REQUIRE', None)
    if require:
        env['GPU_TRAY_LAB_REQUIRE'] = '1'
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rsfE'] + args, cwd=cwd,
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return proc.returncode, proc.stdout.decode('utf-8', 'replace')


@pytest.mark.parametrize('require', [False, True])
def test_lab_tests_skip_or_fail_without_root(tmp_path, require):
    tests = tmp_path / 'lab'
    tests.mkdir()
    shutil.copy(os.path.join(REPO, 'tests', 'lab', 'conftest.py'), str(tests / 'conftest.py'))
    ran = tmp_path / 'ran'
    (tests / 'test_probe.py').write_text('def test_boots_trays():\n    open(%r, "w").close()\n' % str(ran))
    rc, out = _pytest([str(tests)], str(tmp_path), require)
    assert not ran.exists(), out                      # never reached the test body (no lab would start)
    if require:
        assert rc == 1 and '1 error' in out and 'GPU_TRAY_LAB_REQUIRE=1: failing instead of skipping' in out, out
    else:
        assert rc == 0 and '1 skipped' in out and 'the lab needs root' in out, out


@pytest.mark.parametrize('require', [False, True])
def test_root_only_lab_unit_tests_skip_or_fail(require):
    rc, out = _pytest(['tests/unit/lab_infra/test_lab_infra.py', '-k', 'supervisor_stops_a_reboot_loop'], REPO,
                      require)
    if require:
        assert rc == 1 and 'needs root' in out and 'failing instead of skipping' in out, out
    else:
        assert rc == 0 and '1 skipped' in out and 'needs root' in out, out


@pytest.mark.parametrize('require', [False, True])
def test_upstream_tests_skip_in_one_line_or_fail_without_the_data(tmp_path, require):
    """tests/upstream without ../shared/upstream (a user's clone): one skip line for all its tests;
    GPU_TRAY_UPSTREAM_REQUIRE=1 (CI) fails every test instead. The real tests/upstream/conftest.py runs beside probe
    tests that would record they ran, pointed at a data directory that does not exist (it needs nothing else but
    tests/cluster/upstreamdata.py, where every test takes the data from)."""
    tests = tmp_path / 'upstream'
    tests.mkdir()
    shutil.copy(os.path.join(REPO, 'tests', 'upstream', 'conftest.py'), str(tests / 'conftest.py'))
    (tmp_path / 'cluster').mkdir()
    shutil.copy(os.path.join(REPO, 'tests', 'cluster', 'upstreamdata.py'), str(tmp_path / 'cluster' / 'upstreamdata.py'))
    ran = tmp_path / 'ran'
    (tests / 'test_probe.py').write_text(''.join('def test_%d():\n    open(%r, "a").write("x")\n\n\n' % (i, str(ran))
                                                 for i in range(3)))
    env = dict(os.environ, GPU_TRAY_UPSTREAM=str(tmp_path / 'absent'), PYTHONDONTWRITEBYTECODE='1')
    env.pop('GPU_TRAY_UPSTREAM_REQUIRE', None)
    if require:
        env['GPU_TRAY_UPSTREAM_REQUIRE'] = '1'
    proc = subprocess.run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-rsfE', '-q', str(tests)],
                          cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    out = proc.stdout.decode('utf-8', 'replace')
    assert not ran.exists(), out                      # no test body ran
    if require:
        assert proc.returncode == 1 and '3 errors' in out, out
        assert 'GPU_TRAY_UPSTREAM_REQUIRE=1: failing instead of skipping' in out, out
    else:
        skips = [line for line in out.splitlines() if line.startswith('SKIPPED')]
        assert proc.returncode == 0 and '3 skipped' in out, out
        assert len(skips) == 1 and 'upstream chart data not found' in skips[0], out
