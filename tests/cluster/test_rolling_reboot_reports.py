# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling reboot's report, byte for byte, before and after a change of how the role computes it (issue 45).

playbooks/rolling_reboot.yml runs on four inventory trays whose SSH port is closed (no task before a reboot
connects to a tray: a run that did would end UNREACHABLE) in runs that need neither the lab nor a cluster: check
mode without a cluster (strategy auto, one batch per rack), check mode rolling with two trays per batch and
rolling_reboot_drain never, a configured cluster that cannot be read (refused), and a tray without its rack
(refused). Each run's rolling-reboot.md, rolling-reboot.json and the job artifact (set_stats
gpu_tray_evidence.rolling_reboot) are compared with the files under golden/rolling_reboot/, which the role wrote
before its bookkeeping moved from YAML to Python; only the run's temporary folder is replaced by ``<tmp>``.

GPU_TRAY_GOLDEN_WRITE=1 writes the files instead (a deliberate change of the report: review the diff). It lives
with the offline cluster tests (as test_stopped_phases.py): the unreadable cluster's run calls kubernetes.core, whose
action plugins still import ansible.module_utils._text, a deprecation the matrix's unit run on the newest core would
count as ours."""

import json
import os
import pathlib
import subprocess
import sys

import pytest
import yaml

from ansible_env import checkout_env
from clusterhelpers import closed_port, custom_stats

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
GOLDEN = pathlib.Path(__file__).resolve().parent / 'golden' / 'rolling_reboot'
WRITE = os.environ.get('GPU_TRAY_GOLDEN_WRITE') == '1'

ASKED = {'kernel_tuning_result': {'role': 'kernel_tuning', 'reboot_required': True, 'changed': True,
                                  'reason': 'the kernel command line changed',
                                  'verify': {'cmdline_present': ['init_on_alloc=0']}}}
NOT_ASKED = {'imex_result': {'role': 'imex', 'reboot_required': False, 'changed': True,
                             'reason': 'nvidia-imex masked'}}
RACKS = {'tray01': 'A', 'tray02': 'A', 'tray03': 'B', 'tray04': 'B'}

SCENARIOS = {
    # no cluster configured: every tray idle; the canary, then the rest together, one batch per rack
    'check-auto-by-rack': {'check': True, 'extra': {'gpu_tray_reboot_group_by': 'rack'}},
    # rolling, two trays a batch, never drained: every tray counts as busy
    'check-rolling-never-drained': {'check': True, 'extra': {'gpu_tray_reboot_strategy': 'rolling',
                                                             'gpu_tray_reboot_batch': 2,
                                                             'rolling_reboot_drain': 'never'}},
    # a cluster that K8S_AUTH_KUBECONFIG configures but that cannot be read: refused before any reboot
    'refused-unreadable-cluster': {'check': False, 'extra': {}, 'kubeconfig': 'clusters: [not, a, kubeconfig\n'},
    # a tray without the group the batches are counted in: refused before any reboot
    'refused-tray-without-rack': {'check': False, 'extra': {'gpu_tray_reboot_group_by': 'rack'},
                                  'without_rack': 'tray03'},
}


def _inventory(path, without_rack=None):
    hosts = {}
    for tray, rack in sorted(RACKS.items()):
        values = dict(NOT_ASKED if tray == 'tray04' else ASKED)
        if tray != without_rack:
            values['rack'] = rack
        hosts[tray] = values
    path.write_text(yaml.safe_dump({'gpu_trays': {
        'vars': {'ansible_host': '127.0.0.1', 'ansible_port': closed_port(), 'ansible_connection': 'ssh',
                 'ansible_python_interpreter': sys.executable, 'gpu_tray_platform': 'nvke-gb200'},
        'hosts': hosts}}))


def _run(tmp_path, scenario):
    home = tmp_path / 'home'
    home.mkdir()
    inventory = tmp_path / 'hosts.yml'
    _inventory(inventory, scenario.get('without_rack'))
    report = tmp_path / 'report'
    env = checkout_env(ROOT, without=('K8S_AUTH_*', 'KUBECONFIG'), home=str(home), local_temp=True,
                       bin_path=str(BIN), HOME=str(home), ANSIBLE_SHOW_CUSTOM_STATS='1')
    if scenario.get('kubeconfig'):
        (home / 'broken').write_text(scenario['kubeconfig'])
        env['K8S_AUTH_KUBECONFIG'] = str(home / 'broken')
    argv = [str(BIN / 'ansible-playbook'), '-i', str(inventory), str(ROOT / 'playbooks' / 'rolling_reboot.yml'),
            '-e', json.dumps(dict(scenario['extra'], gpu_tray_report_dir=str(report)))]
    if scenario['check']:
        argv.append('--check')
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600, env=env)
    out = proc.stdout
    assert 'UNREACHABLE' not in out and 'is undefined' not in out, out[-4000:]
    assert proc.returncode == (0 if scenario['check'] else 2), out[-4000:]
    files = {
        'md': (report / 'rolling-reboot.md').read_text(),
        'json': json.dumps(json.loads((report / 'rolling-reboot.json').read_text()), indent=1, sort_keys=True) + '\n',
        'artifact.json': json.dumps(custom_stats(out)['gpu_tray_evidence']['rolling_reboot'], indent=1,
                                    sort_keys=True) + '\n',
    }
    return dict((kind, text.replace(str(tmp_path), '<tmp>')) for kind, text in files.items())


@pytest.mark.parametrize('name', sorted(SCENARIOS))
def test_the_report_is_the_one_the_role_wrote_before(tmp_path, name):
    got = _run(tmp_path, SCENARIOS[name])
    for kind, text in sorted(got.items()):
        golden = GOLDEN / ('%s.%s' % (name, kind))
        if WRITE:
            golden.write_text(text)
            continue
        assert golden.is_file(), 'no golden file %s: write it with GPU_TRAY_GOLDEN_WRITE=1 and review it' % golden
        assert text == golden.read_text(), '%s differs from %s:\n%s' % (kind, golden, text[-3000:])
