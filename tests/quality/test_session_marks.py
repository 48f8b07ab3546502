# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The marks tools/run-tests.sh splits the machine's tests by (tests/conftest.py): every machine test uses the lab, the
test cluster or both, and a tests/lab module that starts the test cluster itself runs with neither session beside it."""
import re
import sys

from qualitykit import ROOT, run

LAYERS = ['tests/lab', 'tests/molecule', 'tests/cluster', 'tests/unit/lab_infra']


def collected(expr):
    rc, out = run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '--collect-only', '-q', '-m', expr] + LAYERS)
    assert rc in (0, 5), out[-4000:]
    return [line.split('::')[0] for line in out.splitlines() if '::' in line]


def test_every_machine_test_is_a_lab_or_a_cluster_test_and_the_modules_that_use_both_are_known():
    assert collected('machine and not lab and not cluster') == []
    both = sorted(set(collected('lab and cluster')))
    assert both == ['tests/lab/test_awx_runner.py', 'tests/lab/test_rolling_reboot.py',
                    'tests/lab/test_rolling_reboot_controllers.py', 'tests/lab/test_validate_vfs.py'], both
    for path in set(collected('lab and not cluster')):
        source = (ROOT / path).read_text().lower()
        assert not re.search(r'kcluster|clusterhelpers|k8s_api', source), path      # would meet the cluster session
    assert all(path.startswith('tests/cluster/') for path in collected('cluster and not lab'))
