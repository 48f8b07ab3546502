# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The summaries that travel in an AWX job's artifacts (plugins/plugin_utils/artifacts.py, filter evidence_artifact):
counts, the failed checks with tray and fix, where the files are; bounded for a 144-tray run. ansible-runner carries
them into the job's playbook_on_stats event in tests/lab/test_awx_runner.py."""

import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.evidence_artifact import evidence_artifact
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import artifacts

RUN = '/var/lib/gpu-tray-report/awx-workflow-job-40'


def report(host, failed=(), unreachable=False):
    checks = [{'name': 'rails', 'status': 'passed', 'message': 'ok', 'fix': None}]
    checks += [{'name': name, 'status': 'failed', 'message': '%s: %s is wrong' % (host, name), 'fix': 'fix %s' % name}
               for name in failed]
    out = {'host': host, 'platform': 'rke2-vr200', 'passed': not failed, 'failed_checks': list(failed),
           'checks': checks}
    if unreachable:
        out['unreachable'] = True
    return out


def test_preflight_names_the_failed_checks_with_tray_and_fix_and_the_files():
    reports = [report('tray02', ['pkeys']), report('tray01'), report('tray03', ['tray_read'], unreachable=True)]
    artifact = evidence_artifact(reports, 'preflight', RUN)
    assert artifact == {
        'result': 'failed', 'trays': 3, 'passed': 1, 'failed_trays': ['tray02', 'tray03'], 'unreachable': ['tray03'],
        'failed_checks': [
            {'tray': 'tray02', 'check': 'pkeys', 'message': 'tray02: pkeys is wrong', 'fix': 'fix pkeys'},
            {'tray': 'tray03', 'check': 'tray_read', 'message': 'tray03: tray_read is wrong', 'fix': 'fix tray_read'}],
        'failed_checks_total': 2, 'dir': RUN,
        'files': {'summary': RUN + '/preflight-summary.md', 'per_tray': RUN + '/<tray>/preflight.json'}}
    assert evidence_artifact([report('tray01')], 'preflight', RUN)['result'] == 'passed'
    assert evidence_artifact([], 'preflight', RUN)['result'] == 'failed'        # nothing checked never passes


def test_a_144_tray_run_stays_small():
    reports = [report('tray%03d' % index, ['pkeys', 'rails']) for index in range(1, 145)]
    artifact = artifacts.preflight(reports, RUN)
    assert len(artifact['failed_checks']) == artifacts.LISTED and artifact['failed_checks_total'] == 288
    assert len(artifact['failed_trays']) == 144
    assert len(json.dumps(artifact)) < 12000


def test_rolling_reboot_counts_the_statuses_and_names_the_failed_tray():
    rows = [{'tray': 'tray01', 'status': 'rebooted, verified'}, {'tray': 'tray03', 'status': 'not reached'},
            {'tray': 'tray02', 'status': 'FAILED', 'failed_step': 'reboot', 'error': 'did not come back',
             'check': 'its BMC console'}]
    artifact = evidence_artifact(rows, 'rolling_reboot', RUN)
    assert artifact['result'] == 'failed' and artifact['failed_trays'] == ['tray02']
    assert artifact['statuses'] == {'rebooted, verified': 1, 'not reached': 1, 'FAILED': 1}
    assert artifact['failed'] == [{'tray': 'tray02', 'step': 'reboot', 'message': 'did not come back',
                                   'fix': 'its BMC console'}]
    assert artifact['files']['report'] == RUN + '/rolling-reboot.md'
    assert artifact['stopped'] is None


def test_a_rolling_reboot_that_stopped_before_any_wave_failed():
    """A refusal before the plan (a configured cluster that cannot be read) leaves every row "not reached" and no
    FAILED row: the stop the role's rescue recorded fails the result and is named."""
    rows = [{'tray': 'tray01', 'status': 'not reached'}, {'tray': 'tray02', 'status': 'not reached'}]
    stop = {'task': 'Refuse to reboot when a configured cluster cannot be read', 'message': 'cannot be read'}
    artifact = evidence_artifact(rows, 'rolling_reboot', RUN, {'stopped': stop})
    assert artifact['result'] == 'failed' and artifact['stopped'] == stop and artifact['failed_trays'] == []
    done = [{'tray': 'tray01', 'status': 'rebooted, verified'}]
    assert evidence_artifact(done, 'rolling_reboot', RUN, {'stopped': None})['result'] == 'passed'
    assert evidence_artifact(done, 'rolling_reboot', RUN, {'stopped': stop})['result'] == 'failed'


def test_validation_lists_phases_failed_checks_and_warnings():
    phases = [
        {'name': 'trays', 'checks': [
            {'name': 'tray01/pf-state', 'status': 'passed', 'message': 'ok', 'object': 'tray01'},
            {'name': 'tray02/pkeys', 'status': 'failed', 'message': 'tray02: 16 VF ports are limited',
             'fix': 'UFM', 'object': 'tray02'},
            {'name': 'tray03/multus-token', 'status': 'warning', 'message': 'tray03: expires in 10 days',
             'fix': 'restart multus', 'object': 'tray03'}]},
        {'name': 'performance', 'checks': [{'name': 'nccl-all-reduce-bw', 'status': 'skipped', 'message': 'none'}]},
        # a registered module result (component_version), as the deployment phase records it
        {'name': 'deployment', 'checks': [{'component': 'gpu-operator', 'changed': False, 'msg': 'v25.3.0'}]}]
    artifact = evidence_artifact(phases, 'validation', RUN + '/validation', {'recipe': 'r', 'recipe_digest': 'd'})
    assert artifact['result'] == 'failed' and artifact['recipe'] == 'r' and artifact['recipe_digest'] == 'd'
    assert artifact['phases'] == {'trays': 'failed', 'performance': 'skipped', 'deployment': 'passed'}
    assert artifact['counts'] == {'passed': 2, 'failed': 1, 'warning': 1, 'skipped': 1}
    assert artifact['failed_checks'] == [{'phase': 'trays', 'check': 'tray02/pkeys', 'object': 'tray02',
                                          'message': 'tray02: 16 VF ports are limited', 'fix': 'UFM'}]
    assert [w['check'] for w in artifact['warnings']] == ['tray03/multus-token']
    assert artifact['files']['html'] == RUN + '/validation/report.html'


def test_bad_input_is_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="kind 'bogus' is not one of"):
        evidence_artifact([], 'bogus', RUN)
    with pytest.raises(AnsibleFilterError, match='expects a list'):
        evidence_artifact({}, 'preflight', RUN)
    with pytest.raises(AnsibleFilterError, match='status'):
        evidence_artifact([{'name': 'trays', 'checks': [{'name': 'x', 'status': 'maybe'}]}], 'validation', RUN)


def test_a_stack_runs_summary_gets_its_files_and_a_bad_one_is_refused():
    """The stack's deploy, teardown and NodeMaintenance recovery hand their summary through the same filter as the
    other phases (issue 53: no artifact built by hand)."""
    summary = {'result': 'failed', 'action': 'recover', 'recovered': [], 'stopped': {'task': 't', 'message': 'm'}}
    out = evidence_artifact(summary, 'stack', '/r/awx-job-7')
    assert out == dict(summary, dir='/r/awx-job-7', files={'report': '/r/awx-job-7/stack-recover.md',
                                                           'json': '/r/awx-job-7/stack-recover.json'})
    for bad in ({'result': 'failed', 'action': 'install'}, {'result': 'maybe', 'action': 'deploy'}):
        with pytest.raises(AnsibleFilterError, match='evidence_artifact: a stack summary has'):
            evidence_artifact(bad, 'stack', '/r')
    with pytest.raises(AnsibleFilterError, match='expects a mapping, got list'):
        evidence_artifact([summary], 'stack', '/r')
