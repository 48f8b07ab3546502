"""A phase that stops keeps its evidence (issue 44), with no test cluster and no lab: the Kubernetes API is down - a
kubeconfig whose server is a closed loopback port - and the trays are inventory names whose SSH port is closed too,
which no task before the stop connects to.

* validate: `playbooks/validate.yml` fails, and still writes validation/report.md (and summary.json, ctrf/) naming
  the phase that stopped, the task it stopped at and the finding, and hands the summary to the job's artifacts
  (set_stats gpu_tray_evidence.validation): from ansible-playbook and from ansible-runner, the engine AWX runs jobs
  with, laid out as AWX lays out a job (tests/lab/test_awx_runner.py does the whole workflow against the lab and the
  test cluster). Before the fix the role's rescue read a variable a clean-up had removed, so every stop ended in
  "'__validate_all_phases' is undefined" with no report at all; tests/quality/test_internal_variables.py keeps such a
  read from coming back.
* deploy_stack / teardown_stack: the first tier's components stop at their first API call; the run fails, no later
  tier is touched, and stack-deploy.md / stack-teardown.md (+ .json) and gpu_tray_evidence.stack_<action> name the
  component, the task and the finding.
* rolling reboot: trays that ask for a reboot, a configured cluster that cannot be read: the run is refused before
  any tray is touched, fails, and its report and artifacts name the refusal - they said "No plan was made" and
  `result: passed`. The stops inside a wave (a tray that does not come back, or stops answering) are the lab's:
  tests/lab/test_rolling_reboot_unreachable.py.
"""
import json
import pathlib
import re
import subprocess
import sys

import pytest
import yaml

from ansible_env import COLLECTIONS, HOME, checkout_env
from clusterhelpers import closed_port, custom_stats, helm_binary
from clusterhelpers import down_kubeconfig as write_down_kubeconfig
from stackhelpers import inventory_trays

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
RECIPE = 'vr200-rke2-ubuntu-training'
# the stack's test recipe (local charts, tests/cluster/files/stacktest/vars.yml), as tests/lab/test_awx_runner.py
# deploys it: nothing is pulled from the internet before the API is asked
STACK_VARS = yaml.safe_load((ROOT / 'tests' / 'cluster' / 'files' / 'stacktest' / 'vars.yml').read_text())
STACK = {'gpu_tray_recipe': 'stacktest', 'stack_test_dir': str(ROOT / 'tests' / 'cluster'),
         'stack_rails': STACK_VARS['stack_rails'], 'stack_extra_catalog': STACK_VARS['stack_extra_catalog'],
         'stack_extra_recipes': STACK_VARS['stack_extra_recipes']}
ALL_PHASES = ['readiness', 'deployment', 'trays', 'conformance', 'performance']


@pytest.fixture(scope='module')
def down_kubeconfig(tmp_path_factory):
    """A kubeconfig whose API server is a loopback port nothing listens on (bound, then closed)."""
    path = tmp_path_factory.mktemp('kube') / 'config'
    return str(path), write_down_kubeconfig(path)


def _env(home, kubeconfig):
    return checkout_env(ROOT, without=('K8S_AUTH_*',), home=str(home), local_temp=True, bin_path=str(BIN),
                        K8S_AUTH_KUBECONFIG=kubeconfig)


def _check_evidence(evidence, phases, stopped, port):
    """The evidence of a validation stopped in phase ``stopped`` by the unreachable API."""
    summary = json.loads((evidence / 'summary.json').read_text())
    assert summary['result'] == 'failed' and summary['phases'] == {stopped: 'failed'}, summary
    tests = json.loads((evidence / 'ctrf' / ('%s.json' % stopped)).read_text())['results']['tests']
    assert [(t['name'], t['status']) for t in tests] == [('%s-stopped' % stopped, 'failed')], tests
    message = tests[0]['message']
    assert message.startswith('The %s phase stopped at task "%s - ' % (stopped, stopped.capitalize())), message
    assert '127.0.0.1:%d: cannot reach the API server' % port in message, message
    report = (evidence / 'report.md').read_text()
    assert '**Result: FAILED**' in report and '| **%s-stopped** | %s |' % (stopped, stopped) in report, report
    assert message.split(':')[0] in report
    # the phases after the stop did not run and are not reported as passed
    assert not any(phase in summary['phases'] for phase in phases if phase != stopped)
    return summary, message


@pytest.mark.parametrize('phases, stopped', [
    (['readiness'], 'readiness'),               # the VR200 guide's check before installing
    (ALL_PHASES, 'readiness'),                  # the default: all phases
    (['deployment', 'conformance'], 'deployment'),
], ids=['readiness', 'all-phases', 'deployment'])
def test_validate_with_the_api_down_writes_its_evidence(down_kubeconfig, tmp_path, phases, stopped):
    kubeconfig, port = down_kubeconfig
    report_dir = tmp_path / 'report'
    res = subprocess.run(
        [str(BIN / 'ansible-playbook'), '-i', 'localhost,', '-c', 'local', str(ROOT / 'playbooks' / 'validate.yml'),
         '-e', json.dumps({'ansible_python_interpreter': sys.executable, 'gpu_tray_recipe': RECIPE,
                           'gpu_tray_report_dir': str(report_dir), 'gpu_tray_validate_phases': phases})],
        capture_output=True, text=True, check=False, timeout=600,
        env=dict(_env(tmp_path, kubeconfig), ANSIBLE_SHOW_CUSTOM_STATS='1'))
    out = res.stdout
    assert res.returncode == 2, out[-4000:]
    assert 'is undefined' not in out, out[-4000:]
    assert 'Validation of %s failed in %s: %s-stopped: The %s phase stopped' % (RECIPE, stopped, stopped, stopped) \
        in out, out[-4000:]
    _check_evidence(report_dir / 'validation', phases, stopped, port)
    # the job's artifact, as the default callback prints the set_stats data (ANSIBLE_SHOW_CUSTOM_STATS)
    artifact = custom_stats(out)['gpu_tray_evidence']['validation']
    assert artifact['result'] == 'failed' and artifact['phases'] == {stopped: 'failed'}, artifact
    assert [c['check'] for c in artifact['failed_checks']] == ['%s-stopped' % stopped], artifact


# what a site fills in on the GB200 sample inventory before anything runs (its rails' PF addresses)
GB200_SITE = {'gpu_tray_rail_pci_addresses': {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0000:04:00.0',
                                              'mlx5_3': '0002:03:00.0', 'mlx5_4': '0002:04:00.0'}}


# an earlier passing run's last-pass.json and, newer, a failed run's state.json in the evidence directory: drift's
# baseline is the last pass, never the newest run (a failed run in between is no baseline)
LAST_PASS = {'format': 1, 'generated': '2026-12-01T00:00:00Z', 'result': 'passed', 'trays': {},
             'components': {'gpu-operator': {'version': 'v0.0.1-last-pass'}}}
FAILED_STATE = {'format': 1, 'generated': '2026-12-02T00:00:00Z', 'result': 'failed', 'trays': {},
                'components': {'gpu-operator': {'version': 'v0.0.2-failed-run'}}}


@pytest.mark.parametrize('platform, phases, site, earlier', [
    ('rke2-vr200', ['readiness'], {}, False),   # the VR200 guide's and the upgrade runbook's check before installing
    ('nvke-gb200', ['deployment'], GB200_SITE, True),
], ids=['vr200-readiness', 'gb200-deployment-after-a-pass-and-a-failure'])
def test_one_phase_alone_on_a_sample_inventory_with_trays_writes_its_evidence(
        down_kubeconfig, tmp_path, platform, phases, site, earlier):
    """The sample inventories as sites copy them (their tray names, the API host localhost), every tray's SSH sent to
    a closed loopback port (no packet leaves the machine): a phase alone never reads the trays, and the way out must
    not need their reads - it crashed in drift ("object of type 'HostVarsVars' has no attribute
    '__validate_tray_state'") with no report, no bundle and no artifact."""
    kubeconfig, port = down_kubeconfig
    report_dir = tmp_path / 'report'
    if earlier:
        (report_dir / 'validation').mkdir(parents=True)
        (report_dir / 'validation' / 'last-pass.json').write_text(json.dumps(LAST_PASS))
        (report_dir / 'validation' / 'state.json').write_text(json.dumps(FAILED_STATE))
    res = subprocess.run(
        [str(BIN / 'ansible-playbook'), '-i', str(ROOT / 'inventories' / platform), str(ROOT / 'playbooks' / 'validate.yml'),
         '-e', json.dumps(dict(site, ansible_python_interpreter=sys.executable, ansible_host='127.0.0.1',
                               ansible_port=closed_port(), gpu_tray_report_dir=str(report_dir),
                               gpu_tray_validate_phases=phases))],
        capture_output=True, text=True, check=False, timeout=600,
        env=dict(_env(tmp_path, kubeconfig), ANSIBLE_SHOW_CUSTOM_STATS='1'))
    out = res.stdout
    assert res.returncode == 2, out[-4000:]
    assert 'has no attribute' not in out and 'is undefined' not in out, out[-4000:]
    evidence = report_dir / 'validation'
    _check_evidence(evidence, phases, phases[0], port)
    artifact = custom_stats(out)['gpu_tray_evidence']['validation']
    assert artifact['result'] == 'failed' and artifact['phases'] == {phases[0]: 'failed'}, artifact
    # drift: the trays were not read this run - named as not compared, and never a baseline without them
    drift = json.loads((evidence / 'drift.json').read_text())
    trays = inventory_trays(platform)
    assert trays and drift['not_compared']['trays'] == trays, drift
    assert drift['summary'].endswith('Not compared: %d trays (%s) not read this run; the images (the cluster\'s pods '
                                     'were not read).' % (len(trays), drift['summary'].split(' trays (', 1)[1]
                                                          .split(')', 1)[0])), drift['summary']
    if not earlier:
        assert drift['summary'].startswith('No earlier passing run to compare with (this run failed: it is no '
                                           'baseline). Not compared: %d trays (' % len(trays)), drift['summary']
        assert not (evidence / 'last-pass.json').exists()
    else:
        # compared with the last pass (its time, its version), not with the failed run's state.json
        assert drift['baseline'] == LAST_PASS['generated'], drift
        assert ' since the last passing run (%s) on ' % LAST_PASS['generated'] in drift['summary'], drift['summary']
        versions = [(c['object'], c['before']) for c in drift['changes'] if c['what'] == 'version']
        assert versions == [('gpu-operator', 'v0.0.1-last-pass')], drift['changes']
        # this failed run leaves the last pass as it was, and records itself as the newest state
        assert json.loads((evidence / 'last-pass.json').read_text()) == LAST_PASS
        assert json.loads((evidence / 'state.json').read_text())['result'] == 'failed'
    assert (evidence / 'summary-bundle' / 'statement.intoto.json').is_file()


def test_validate_with_the_api_down_through_ansible_runner(down_kubeconfig, tmp_path):
    """As an AWX job: extra vars (the survey's defaults, the job id AWX adds), the credential's kubeconfig in
    K8S_AUTH_KUBECONFIG, the k8s_api host in the inventory; the job fails, its run folder holds the report and the
    playbook_on_stats event (AWX's job artifacts) the summary."""
    kubeconfig, port = down_kubeconfig
    pdd, job_id = tmp_path / 'pdd', 4401
    (pdd / 'env').mkdir(parents=True)
    survey = json.loads((ROOT / 'playbooks' / 'files' / 'awx_surveys' / 'validate.json').read_text())
    extravars = {q['variable']: q['default'] for q in survey['spec'] if 'default' in q}
    extravars.update(awx_job_id=job_id, awx_job_template_name='gpu_tray validate', gpu_tray_recipe=RECIPE,
                     gpu_tray_report_dir=str(tmp_path / 'report'), gpu_tray_validate_phases=['readiness'])
    (pdd / 'env' / 'extravars').write_text(yaml.safe_dump(extravars))
    env = _env(tmp_path / 'home', kubeconfig)
    (pdd / 'env' / 'envvars').write_text(yaml.safe_dump(
        {k: env[k] for k in (COLLECTIONS, HOME, 'ANSIBLE_NOCOLOR', 'PATH',
                             'K8S_AUTH_KUBECONFIG')}))
    (pdd / 'inventory').mkdir()
    (pdd / 'inventory' / 'hosts.yml').write_text(yaml.safe_dump({'k8s_api': {'hosts': {'localhost': {
        'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable}}}}))
    (pdd / 'project').symlink_to(ROOT, target_is_directory=True)
    res = subprocess.run([str(BIN / 'ansible-runner'), 'run', str(pdd), '-p', 'playbooks/validate.yml',
                          '--ident', 'validate'], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                         check=False, timeout=600)
    artifacts = pdd / 'artifacts' / 'validate'
    stdout = (artifacts / 'stdout').read_text()
    assert res.returncode != 0 and (artifacts / 'status').read_text() == 'failed', stdout[-4000:]
    assert 'is undefined' not in stdout, stdout[-4000:]
    run_folder = tmp_path / 'report' / ('awx-job-%d' % job_id)
    summary, message = _check_evidence(run_folder / 'validation', ['readiness'], 'readiness', port)
    events = [json.loads(p.read_text()) for p in (artifacts / 'job_events').glob('*.json')]
    final = [e['event_data'] for e in events if e.get('event') == 'playbook_on_stats']
    assert len(final) == 1 and final[0]['failures'] == {'localhost': 1}, final
    artifact = final[0]['artifact_data']['gpu_tray_evidence']['validation']
    assert artifact['result'] == 'failed' and artifact['dir'] == str(run_folder / 'validation'), artifact
    assert artifact['recipe'] == RECIPE and summary['recipe_digest'] == artifact['recipe_digest'], artifact
    assert artifact['phases'] == {'readiness': 'failed'}, artifact
    assert [(c['phase'], c['check'], c['message']) for c in artifact['failed_checks']] == [
        ('readiness', 'readiness-stopped', message)], artifact


@pytest.mark.parametrize('kubeconfig_kind', ['api-down', 'not-a-kubeconfig'])
def test_a_refused_rolling_reboot_writes_its_report_and_artifact(down_kubeconfig, tmp_path, kubeconfig_kind):
    kubeconfig, _port = down_kubeconfig
    if kubeconfig_kind == 'not-a-kubeconfig':
        kubeconfig = str(tmp_path / 'broken')
        pathlib.Path(kubeconfig).write_text('clusters: [not, a, kubeconfig\n')
    inventory = tmp_path / 'hosts.yml'
    trays = {'tray01': {}, 'tray02': {}}
    inventory.write_text(yaml.safe_dump({'gpu_trays': {
        # a closed SSH port: a task that reached a tray would find it unreachable, never reboot anything
        'vars': {'ansible_host': '127.0.0.1', 'ansible_port': closed_port(), 'ansible_connection': 'ssh',
                 'ansible_python_interpreter': sys.executable, 'gpu_tray_platform': 'nvke-gb200'},
        'hosts': trays}}))
    report_dir = tmp_path / 'report'
    # what kernel_tuning hands the rolling reboot after a change that needs one (prepare_trays.yml)
    asked = {'kernel_tuning_result': {'role': 'kernel_tuning', 'reboot_required': True, 'changed': True,
                                      'reason': 'the kernel command line changed'}}
    res = subprocess.run(
        [str(BIN / 'ansible-playbook'), '-i', str(inventory), str(ROOT / 'playbooks' / 'rolling_reboot.yml'),
         '-e', json.dumps(dict(asked, gpu_tray_report_dir=str(report_dir)))],
        capture_output=True, text=True, check=False, timeout=600,
        env=dict(_env(tmp_path, kubeconfig), ANSIBLE_SHOW_CUSTOM_STATS='1'))
    out = res.stdout
    assert res.returncode == 2, out[-4000:]
    assert 'UNREACHABLE' not in out and 'is undefined' not in out, out[-4000:]
    task = 'Refuse what the plan refuses (a configured cluster that cannot be read, a tray without its group, rolling_reboot_drain always, a bad batch)'
    finding = 'The Kubernetes cluster configured by K8S_AUTH_KUBECONFIG=%s cannot be read' % kubeconfig
    # every tray fails, the one that stopped the run and the ones stopped with it
    assert re.findall(r'^(tray0\d)\s+: .* failed=(\d)', out, re.M) == [('tray01', '1'), ('tray02', '1')], out[-2000:]
    report = (report_dir / 'rolling-reboot.md').read_text()
    # the plan's refusal (no tray counted idle, none drained or rebooted)
    assert '**Refused:** %s' % finding in report and 'No cluster configured' not in report, report
    assert report.count('| not drained: the cluster cannot be read | not reached |') == 2, report
    assert 'nothing was rebooted' in report and report.count('| not reached |') == 2, report
    artifact = custom_stats(out)['gpu_tray_evidence']['rolling_reboot']
    assert artifact['result'] == 'failed' and artifact['statuses'] == {'not reached': 2}, artifact
    assert artifact['stopped']['task'] == task and artifact['stopped']['message'].startswith(finding), artifact
    assert artifact['dir'] == str(report_dir), artifact


@pytest.mark.parametrize('playbook, action, first_tier', [
    ('deploy_stack.yml', 'deploy', ['st-alpha', 'st-beta']),
    ('teardown_stack.yml', 'teardown', ['st-pools']),          # the last tier first
])
def test_a_stack_run_with_the_api_down_writes_its_report_and_artifact(down_kubeconfig, tmp_path, playbook, action,
                                                                      first_tier):
    kubeconfig, port = down_kubeconfig
    report_dir = tmp_path / 'report'
    res = subprocess.run(
        [str(BIN / 'ansible-playbook'), '-i', 'localhost,', '-c', 'local', str(ROOT / 'playbooks' / playbook),
         '-e', json.dumps(dict(STACK, ansible_python_interpreter=sys.executable, gpu_tray_report_dir=str(report_dir),
                               stack_helm_binary=helm_binary(), stack_api_retries=0))],
        capture_output=True, text=True, check=False, timeout=600,
        env=dict(_env(tmp_path, kubeconfig), ANSIBLE_SHOW_CUSTOM_STATS='1'))
    out = res.stdout
    assert res.returncode == 2, out[-4000:]
    summary = json.loads((report_dir / ('stack-%s.json' % action)).read_text())
    stopped = summary['stopped']
    assert summary['result'] == 'failed' and summary['action'] == action, summary
    assert stopped['component'] in first_tier and stopped['task'], summary
    # the API it could not reach (helm prints host:port, the kubernetes client host=..., port=...)
    assert re.search(r"127\.0\.0\.1'?(:|, port=)%d\b" % port, stopped['message']), stopped
    assert 'connection refused' in stopped['message'].lower() and '\n' not in stopped['message'], stopped
    tiers = summary['tiers'] if action == 'deploy' else summary['tiers'][::-1]
    # the first tier started, no later tier did (each tier prints its line when it starts)
    prefix = 'tier ' if action == 'deploy' else 'teardown tier '
    numbers = range(1, 4) if action == 'deploy' else range(3, 0, -1)
    started = re.findall(r'"msg": "%s(\d)/3: ' % prefix, out)
    assert started == [str(next(iter(numbers)))], (started, out[-4000:])
    assert sorted(tiers[0]) == sorted(first_tier) and len(tiers) == 3, summary
    report = (report_dir / ('stack-%s.md' % action)).read_text()
    assert '**Result: FAILED** - stopped in component %s (tier ' % stopped['component'] in report, report
    assert 'at task "%s"' % stopped['task'] in report, report
    artifact = custom_stats(out)['gpu_tray_evidence']['stack_%s' % action]
    assert artifact['result'] == 'failed' and artifact['stopped'] == stopped, artifact
    assert artifact['files']['report'] == str(report_dir / ('stack-%s.md' % action)), artifact
