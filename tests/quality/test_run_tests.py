# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A failing test in any part of `make test` fails `make test` and `.ci/run` (issue 52, item 5).

tools/run-tests.sh runs the suite as pytest sessions side by side ("parts"); a change that forgets one part's exit
status would let a CI run whose tests in that part fail land. These tests run the real tools/run-tests.sh and .ci/run,
copied into a scratch tree where `.venv/bin/pytest` is a stand-in that records which part it ran (the part's JUnit
file name) and fails the one part it is told to, and where `make`, `lab/lab` and `tests/cluster/kcluster` are
stand-ins too (the machine's real lab and test cluster are never touched: other sessions use them meanwhile).
"""
import json
import os
import shutil
import stat
import sys

import pytest

from qualitykit import ROOT, run

FAKE_PYTEST = r'''#!%(python)s
"""Stand-in for pytest: records the part, writes its JUnit file, fails the part named in FAKE_FAIL_PART."""
import json, os, re, sys
args = sys.argv[1:]
junit = next(a.split('=', 1)[1] for a in args if a.startswith('--junitxml='))
part = re.match(r'junit-(.*)\.xml$', os.path.basename(junit)).group(1)
expr = args[args.index('-m') + 1] if '-m' in args else ''
with open(os.environ['FAKE_LOG'], 'a') as log:
    log.write(json.dumps([part, expr]) + '\n')
rc = int(os.environ.get('FAKE_RC', '0'))
if part == os.environ.get('FAKE_FAIL_PART'):
    rc = int(os.environ.get('FAKE_FAIL_RC', '1'))
word = {0: '1 passed', 5: 'no tests ran'}.get(rc, '1 failed')
with open(junit, 'w') as f:
    f.write('<testsuites><testsuite><testcase classname="tests.unit.test_x" name="test_%%s" time="1.5">%%s'
            '</testcase></testsuite></testsuites>' %% (part, '<failure/>' if rc not in (0, 5) else ''))
print('=== %%s in 0.01s ===' %% word)
sys.exit(rc)
'''
FAKE_MAKE = '''#!/bin/bash
case $1 in
  setup) exit 0 ;;
  test) exec bash tools/run-tests.sh ;;
  matrix) case $2 in *"${FAKE_MATRIX_FAIL:-no such step}"*) exit 1 ;; esac; exit 0 ;;
esac
exit 2
'''
NOOP = '#!/bin/sh\nexit 0\n'


def executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def tree(tmp_path):
    """A scratch checkout: the real run-tests.sh, test_times.py and .ci/run, stand-ins for everything they start."""
    root = tmp_path / 'checkout'
    for rel in ('tools/run-tests.sh', 'tools/test_times.py', '.ci/run'):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, root / rel)
    for layer in ('unit', 'quality', 'lab', 'cluster'):
        (root / 'tests' / layer).mkdir(parents=True)
    executable(root / '.venv/bin/pytest', FAKE_PYTEST % {'python': sys.executable})
    (root / '.venv/bin/python').symlink_to(sys.executable)
    executable(root / 'lab/lab', NOOP)
    executable(root / 'tests/cluster/kcluster', NOOP)
    executable(tmp_path / 'bin/make', FAKE_MAKE)
    return root


def run_suite(tree, command, **env):
    log = tree / 'fake.log'
    log.unlink(missing_ok=True)
    environ = dict(os.environ, FAKE_LOG=str(log), PATH='%s:%s' % (tree.parent / 'bin', os.environ['PATH']))
    environ.pop('GPU_TRAY_TEST_SERIAL', None)
    environ.update({k: str(v) for k, v in env.items()})
    rc, out = run(command, cwd=tree, env=environ, timeout=120)
    parts = [json.loads(line)[0] for line in log.read_text().splitlines()] if log.exists() else []
    return rc, out, parts


def test_every_part_runs_and_a_failure_in_any_one_of_them_fails_make_test_and_ci(tree):
    rc, out, parts = run_suite(tree, ['bash', 'tools/run-tests.sh'])
    assert rc == 0, out
    assert sorted(parts) == sorted(set(parts)), parts                  # each part is one session
    assert {'lab', 'cluster', 'both', 'offline', 'static'} <= set(parts), parts
    times = (tree / 'output/test-times.md').read_text()
    assert all('| %s |' % part in times for part in parts), times
    for part in parts:
        rc, out, _ = run_suite(tree, ['bash', 'tools/run-tests.sh'], FAKE_FAIL_PART=part)
        assert rc == 1, 'a failing test in part %s left make test at rc %d:\n%s' % (part, rc, out)
        rc, out, _ = run_suite(tree, ['bash', '.ci/run'], FAKE_FAIL_PART=part)
        assert rc != 0, 'a failing test in part %s left .ci/run at rc 0:\n%s' % (part, out)
    rc, out, _ = run_suite(tree, ['bash', '.ci/run'])
    assert rc == 0, out
    assert 'make test' in (tree / 'output/test-times.md').read_text()


def test_a_part_with_no_tests_passes_but_a_suite_that_ran_nothing_does_not(tree):
    rc, out, parts = run_suite(tree, ['bash', 'tools/run-tests.sh'], FAKE_FAIL_PART='both', FAKE_FAIL_RC=5)
    assert rc == 0 and 'both' in parts, out
    rc, out, _ = run_suite(tree, ['bash', 'tools/run-tests.sh'], FAKE_RC=5)
    assert rc == 5, out


def test_a_failing_matrix_step_fails_ci_and_the_serial_layout_fails_too(tree):
    for step in ('units', 'lab'):          # beside make test, and after it
        rc, out, _ = run_suite(tree, ['bash', '.ci/run'], FAKE_MATRIX_FAIL='--steps ' + step)
        assert rc != 0, 'a failing matrix step %s left .ci/run at rc 0:\n%s' % (step, out)
    rc, out, parts = run_suite(tree, ['bash', 'tools/run-tests.sh'], GPU_TRAY_TEST_SERIAL=1, FAKE_FAIL_PART='all')
    assert (rc, parts) == (1, ['all']), out
