"""The stop matrix (issue 53): every playbook that ends a phase, on the inventories users have - the two sample
inventories (their tray names; every tray's SSH sent to a closed loopback port, so no packet leaves the machine and
the sample addresses are never contacted) and localhost - for each way it can end without a lab: the Kubernetes API
down (a kubeconfig whose server is a closed loopback port), a module error (a kubeconfig that is not one), every tray
unreachable, each validate phase alone and all of them. Each cell fails or passes as it should and writes its report
and its job artifact (set_stats gpu_tray_evidence.<phase>, printed with ANSIBLE_SHOW_CUSTOM_STATS); a validation's
summary-bundle/ is complete (unsigned) as verify_evidence checks it. One cell per class also runs through
ansible-runner, the engine AWX runs jobs with.

The cells are generated from CELLS below; tests/quality/test_stop_tests.py refuses a stop test whose inventory has no
tray (every playbook and ending has a cell on a sample inventory). The stops that need trays that answer (a tray that
does not come back, a wave cut short) are the lab's: tests/lab/test_rolling_reboot_unreachable.py."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

from ansible_env import COLLECTIONS, HOME, checkout_env
from clusterhelpers import closed_port, custom_stats, down_kubeconfig, helm_binary
from stackhelpers import collection_on_path, inventory_trays  # noqa: F401 (the quality rule reads the trays)

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
SAMPLES = {'gb200': 'nvke-gb200', 'vr200': 'rke2-vr200'}
# what a site fills in on the GB200 sample inventory before anything runs (its rails' PF addresses)
SITE = {'gb200': {'gpu_tray_rail_pci_addresses': {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0000:04:00.0',
                                                  'mlx5_3': '0002:03:00.0', 'mlx5_4': '0002:04:00.0'}},
        'vr200': {}, 'localhost': {'gpu_tray_recipe': 'vr200-rke2-ubuntu-training'}}
PHASES = ['readiness', 'deployment', 'trays', 'conformance', 'performance']
STACK_VARS = yaml.safe_load((ROOT / 'tests' / 'cluster' / 'files' / 'stacktest' / 'vars.yml').read_text())
# the stack's test recipe (local charts): nothing is pulled from the internet before the API is asked
STACK = {'gpu_tray_recipe': 'stacktest', 'stack_test_dir': str(ROOT / 'tests' / 'cluster'),
         'stack_rails': STACK_VARS['stack_rails'], 'stack_extra_catalog': STACK_VARS['stack_extra_catalog'],
         'stack_extra_recipes': STACK_VARS['stack_extra_recipes'], 'stack_api_retries': 0}
# what kernel_tuning hands the rolling reboot after a change that needs one (prepare_trays.yml)
# the report files of each cell as the roles wrote them before their way out became one record (phase_record):
# compared byte for byte after the run's own values (its folder, the closed port, the clock) are replaced
GOLDEN = pathlib.Path(__file__).resolve().parent / 'golden' / 'stop_matrix'
WRITE = os.environ.get('GPU_TRAY_GOLDEN_WRITE') == '1'
ASKED = {'kernel_tuning_result': {'role': 'kernel_tuning', 'reboot_required': True, 'changed': True,
                                  'reason': 'the kernel command line changed'}}


def _cell(playbook, inventory, ending, rc, artifact, files, result='failed', extra=None, runner=False):
    ident = '%s-%s-%s' % (playbook, inventory, ending)
    return pytest.param(dict(playbook=playbook, inventory=inventory, ending=ending, rc=rc, artifact=artifact,
                             files=files, result=result, extra=extra or {}, runner=runner), id=ident)


def cells():
    """The matrix: (playbook, inventory, ending) with what it must end in. Each playbook x ending has a cell on a
    sample inventory; localhost (an inventory without trays, the API host only) where the playbook runs there."""
    out = []
    validation = ['validation/report.md', 'validation/summary.json', 'validation/drift.json',
                  'validation/summary-bundle/statement.intoto.json']
    for inventory in ('gb200', 'vr200', 'localhost'):
        out.append(_cell('validate', inventory, 'api-down', 2, 'validation', validation,
                         extra={'gpu_tray_validate_phases': PHASES}, runner=inventory == 'vr200'))
    for index, phase in enumerate(PHASES):
        out.append(_cell('validate', ('gb200', 'vr200')[index % 2], 'api-down-%s-alone' % phase, 2, 'validation',
                         validation, extra={'gpu_tray_validate_phases': [phase]}))
    out.append(_cell('validate', 'gb200', 'module-error', 2, 'validation', validation,
                     extra={'gpu_tray_validate_phases': ['readiness']}))
    for playbook, action in (('deploy_stack', 'deploy'), ('teardown_stack', 'teardown')):
        files = ['stack-%s.md' % action, 'stack-%s.json' % action]
        for inventory in ('gb200', 'vr200'):
            out.append(_cell(playbook, inventory, 'api-down', 2, 'stack_%s' % action, files, extra=STACK))
        # helm's check reads the kubeconfig first (kubernetes.core): refused at the opening, naming the file,
        # before anything is read, written or installed - the inputs' way out (no report, no artifact)
        out.append(_cell(playbook, 'vr200', 'module-error', 2, None, [], result='refused', extra=STACK))
    recover = ['stack-recover.md', 'stack-recover.json']
    out.append(_cell('recover_node_maintenance', 'gb200', 'api-down', 2, 'stack_recover', recover))
    out.append(_cell('recover_node_maintenance', 'localhost', 'api-down', 2, 'stack_recover', recover))
    out.append(_cell('recover_node_maintenance', 'vr200', 'module-error', 2, 'stack_recover', recover))
    for inventory in ('gb200', 'vr200'):
        out.append(_cell('preflight', inventory, 'trays-unreachable', 2, 'preflight', ['preflight-summary.md'],
                         runner=inventory == 'gb200'))
    out.append(_cell('prepare_trays', 'vr200', 'trays-unreachable', 2, 'preflight', ['preflight-summary.md']))
    # nothing asks for a reboot: the plan needs no tray, none is contacted, the run passes and says so
    out.append(_cell('rolling_reboot', 'gb200', 'trays-unreachable', 0, 'rolling_reboot',
                     ['rolling-reboot.md', 'rolling-reboot.json'], result='passed'))
    # a reboot asked for, and the configured cluster cannot be read: refused before any tray is touched
    out.append(_cell('rolling_reboot', 'vr200', 'api-down', 2, 'rolling_reboot',
                     ['rolling-reboot.md', 'rolling-reboot.json'], extra=ASKED))
    out.append(_cell('rolling_reboot', 'gb200', 'module-error', 2, 'rolling_reboot',
                     ['rolling-reboot.md', 'rolling-reboot.json'], extra=ASKED))
    return out


CELLS = cells()


@pytest.fixture(scope='module')
def kubeconfigs(tmp_path_factory):
    """``api-down``: a kubeconfig whose API server is a loopback port nothing listens on; ``module-error``: a file
    that is not a kubeconfig (the cluster modules fail on it)."""
    folder = tmp_path_factory.mktemp('kube')
    down = folder / 'down'
    down_kubeconfig(down)
    broken = folder / 'broken'
    broken.write_text('clusters: [not, a, kubeconfig\n')
    return {'api-down': str(down), 'module-error': str(broken)}


def _kubeconfig(cell, kubeconfigs):
    return kubeconfigs['module-error' if cell['ending'] == 'module-error' else 'api-down']


def _extra(cell, report_dir):
    extra = dict(SITE[cell['inventory']], gpu_tray_report_dir=str(report_dir), **cell['extra'])
    if cell['inventory'] == 'localhost':
        extra['ansible_python_interpreter'] = sys.executable
    else:
        # every tray (and the inventory's API hosts) at a closed loopback port: nothing leaves the machine
        extra.update(ansible_host='127.0.0.1', ansible_port=closed_port())
    if cell['playbook'] in ('deploy_stack', 'teardown_stack'):
        extra['stack_helm_binary'] = helm_binary()
    return extra


def _inventory_args(cell):
    if cell['inventory'] == 'localhost':
        return ['-i', 'localhost,', '-c', 'local']
    return ['-i', str(ROOT / 'inventories' / SAMPLES[cell['inventory']])]


def _env(home, kubeconfig):
    return checkout_env(ROOT, without=('K8S_AUTH_*',), home=str(home), local_temp=True, bin_path=str(BIN),
                        K8S_AUTH_KUBECONFIG=kubeconfig)


def _check_way_out(cell, folder, artifact, out):
    """What every cell must leave: its report files, its artifact with the result it should have, and for a
    validation a complete summary-bundle/."""
    assert 'is undefined' not in out and 'has no attribute' not in out and 'Traceback' not in out, out[-4000:]
    for name in cell['files']:
        assert (folder / name).is_file(), (name, sorted(str(p.relative_to(folder)) for p in folder.rglob('*')))
    assert artifact['result'] == cell['result'], artifact
    if cell['artifact'] == 'validation':
        summary = json.loads((folder / 'validation' / 'summary.json').read_text())
        assert summary['result'] == 'failed' and artifact['phases'] == summary['phases'], (summary, artifact)
        bundle = folder / 'validation' / 'summary-bundle'
        files = dict((str(p.relative_to(bundle)), p.read_bytes()) for p in bundle.rglob('*') if p.is_file())
        collection_on_path()
        from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import attestation
        checked = attestation.verify(files, None, None, False)
        assert checked['problems'] == [] and checked['signature'] == 'unsigned', checked
        drift = json.loads((folder / 'validation' / 'drift.json').read_text())
        if cell['inventory'] != 'localhost':
            # the trays it did not read are named as not compared, never a crash
            assert drift['not_compared']['trays'], drift
            _check_unread_trays(cell, folder, out)


def _check_unread_trays(cell, folder, out):
    """A validation whose trays did not answer names them in its report, in one line however it stopped, and each
    such tray is failed in the recap, not ignored (issue 54 item 6); a run that read no tray (its phases need none)
    says nothing of them."""
    trays = inventory_trays(SAMPLES[cell['inventory']])
    report = (folder / 'validation' / 'report.md').read_text()
    recap = out.rsplit('PLAY RECAP', 1)[1]
    if set(cell['extra'].get('gpu_tray_validate_phases') or PHASES) & {'trays', 'performance'}:
        line = '**Trays not read (%d): unreachable: %s-%s - nothing was judged on them.**' % (
            len(trays), trays[0], trays[-1])
        assert line in report, report[:3000]
        for tray in trays:
            assert re.search(r'^%s\s*:.*\bfailed=1\b.*\bignored=1\b' % re.escape(tray), recap, re.M), recap
    else:
        assert 'Trays not read' not in report, report[:3000]
        for tray in trays:
            assert re.search(r'^%s\s*:.*\bfailed=0\b' % re.escape(tray), recap, re.M) or tray not in recap, recap


@pytest.mark.parametrize('cell', CELLS)
def test_each_way_a_phase_ends_writes_its_report_and_artifact(cell, kubeconfigs, tmp_path):
    report_dir = tmp_path / 'report'
    res = subprocess.run(
        [str(BIN / 'ansible-playbook')] + _inventory_args(cell) + [
            str(ROOT / 'playbooks' / ('%s.yml' % cell['playbook'])), '-e', json.dumps(_extra(cell, report_dir))],
        capture_output=True, text=True, check=False, timeout=600,
        env=dict(_env(tmp_path / 'home', _kubeconfig(cell, kubeconfigs)), ANSIBLE_SHOW_CUSTOM_STATS='1'))
    out = res.stdout
    assert res.returncode == cell['rc'], out[-4000:] + res.stderr[-2000:]
    if cell['result'] == 'refused':
        flat = ' '.join(out.split())
        assert "The run's inputs are refused, nothing was read, written or installed: the helm check on localhost " \
               "(kubernetes.core.helm_plugin_info" in flat, out[-4000:]
        assert _kubeconfig(cell, kubeconfigs) in flat and 'CUSTOM STATS' not in out, out[-4000:]
        assert not report_dir.exists()
        return
    artifact = custom_stats(out)['gpu_tray_evidence'][cell['artifact']]
    _check_way_out(cell, report_dir, artifact, out)
    _golden(cell, report_dir, artifact, tmp_path)


# what differs from run to run and says nothing: the run's folder, the closed port, the clock, a duration
_VARYING = [
    (re.compile(r'\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?'), '<time>'),
    (re.compile(r'127\.0\.0\.1:\d+'), '127.0.0.1:<port>'),
    (re.compile(r'/[^\s"\']*/pytest-\d+/kube\d+'), '<kube>'),
    (re.compile(r'\bport([= ])\d+'), r'port\1<port>'),
    (re.compile(r'"(duration|start|stop|seconds|started|ended|generated|mtime)": [0-9.]+'), r'"\1": <n>'),
]


def _normalised(text, tmp_path):
    text = text.replace(str(tmp_path), '<tmp>').replace(str(ROOT), '<root>')
    for pattern, replacement in _VARYING:
        text = pattern.sub(replacement, text)
    return text


def _golden(cell, report_dir, artifact, tmp_path):
    """The cell's report files (md and json, not the bundle's signed copies) and its artifact, as golden/stop_matrix/
    holds them; GPU_TRAY_GOLDEN_WRITE=1 writes them (a deliberate change of a report: review the diff)."""
    ident = '%s-%s-%s' % (cell['playbook'], cell['inventory'], cell['ending'])
    got = {'artifact.json': json.dumps(artifact, indent=1, sort_keys=True) + '\n'}
    for path in sorted(report_dir.rglob('*')):
        rel = path.relative_to(report_dir)
        if path.is_file() and path.suffix in ('.md', '.json') and 'summary-bundle' not in rel.parts:
            got[str(rel).replace(os.sep, '__')] = path.read_text()
    folder = GOLDEN / ident
    if WRITE:
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        for name, text in got.items():
            (folder / name).write_text(_normalised(text, tmp_path))
        return
    assert folder.is_dir(), 'no golden files for %s: write them with GPU_TRAY_GOLDEN_WRITE=1 and review them' % ident
    assert sorted(got) == sorted(p.name for p in folder.iterdir()), (sorted(got), sorted(os.listdir(folder)))
    for name, text in sorted(got.items()):
        assert _normalised(text, tmp_path) == (folder / name).read_text(), '%s of %s differs from its golden file' % (
            name, ident)


def _runner(cell, kubeconfig, tmp_path):
    """The cell as an AWX job: ansible-runner run <private data dir>, the inventory and the extra vars as AWX lays
    them out, the kubeconfig credential in K8S_AUTH_KUBECONFIG, the job id AWX adds. Returns (rc, run folder,
    artifact data of playbook_on_stats, stdout)."""
    pdd, job_id = tmp_path / 'pdd', 5301
    (pdd / 'env').mkdir(parents=True)
    extravars = dict(_extra(cell, tmp_path / 'report'), awx_job_id=job_id,
                     awx_job_template_name='gpu_tray.cluster - %s' % cell['playbook'])
    (pdd / 'env' / 'extravars').write_text(yaml.safe_dump(extravars))
    env = _env(tmp_path / 'home', kubeconfig)
    (pdd / 'env' / 'envvars').write_text(yaml.safe_dump(
        {k: env[k] for k in (COLLECTIONS, HOME, 'ANSIBLE_NOCOLOR', 'PATH', 'K8S_AUTH_KUBECONFIG')}))
    (pdd / 'inventory').mkdir()
    if cell['inventory'] == 'localhost':
        (pdd / 'inventory' / 'hosts.yml').write_text(yaml.safe_dump({'k8s_api': {'hosts': {'localhost': {
            'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}}))
    else:
        source = ROOT / 'inventories' / SAMPLES[cell['inventory']]
        for item in source.rglob('*'):
            target = pdd / 'inventory' / item.relative_to(source)
            if item.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.write_bytes(item.read_bytes())
    (pdd / 'project').symlink_to(ROOT, target_is_directory=True)
    res = subprocess.run([str(BIN / 'ansible-runner'), 'run', str(pdd), '-p', 'playbooks/%s.yml' % cell['playbook'],
                          '--ident', 'job'], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                         check=False, timeout=600)
    artifacts = pdd / 'artifacts' / 'job'
    stdout = (artifacts / 'stdout').read_text()
    events = [json.loads(p.read_text()) for p in (artifacts / 'job_events').glob('*.json')]
    final = [e['event_data'] for e in events if e.get('event') == 'playbook_on_stats']
    assert len(final) == 1, stdout[-4000:]
    status = (artifacts / 'status').read_text()
    return res.returncode, status, tmp_path / 'report' / ('awx-job-%d' % job_id), final[0].get('artifact_data') or {}, \
        stdout


@pytest.mark.parametrize('cell', [cell for cell in CELLS if cell.values[0]['runner']])
def test_the_same_ending_as_an_awx_job_through_ansible_runner(cell, kubeconfigs, tmp_path):
    rc, status, folder, data, stdout = _runner(cell, _kubeconfig(cell, kubeconfigs), tmp_path)
    assert status == ('failed' if cell['rc'] else 'successful') and (rc != 0) == bool(cell['rc']), stdout[-4000:]
    _check_way_out(cell, folder, data['gpu_tray_evidence'][cell['artifact']], stdout)
