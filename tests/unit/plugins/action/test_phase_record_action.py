# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The phase_record action (issue 53): the record written on the controller (never the target), only what changed,
the job's artifact as set_stats returns it, the failures each host ends with from the facts its rescue set, an earlier
run's stale ctrf/ files removed, and ``find`` - the one search for an earlier run's files."""

import json
import os

import pytest
from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.gpu_tray.cluster.plugins.action import phase_record
from unithelpers import action_plugin, target_connection


def run(args, task_vars, check_mode=False):
    variables = dict(task_vars)
    plugin = action_plugin(phase_record, args, target_connection('phase_record'), check_mode=check_mode,
                           templar=Templar(loader=DataLoader(), variables=variables))
    return plugin.run(task_vars=variables)


def _stop(task, message):
    return {'task': task, 'message': message}


def test_a_stopped_rolling_reboot_writes_its_report_hands_its_artifact_and_fails_the_host_that_stopped(tmp_path):
    final = {'rows': [{'tray': 't1', 'status': 'not reached', 'rebooted': 'no', 'drain': '-'}], 'waves': [],
             'plan': {}, 'planned': ['1 tray.'], 'stopped': _stop('Plan', 'boom'), 'json': [{'tray': 't1'}]}
    task_vars = {'ansible_play_hosts_all': ['t1', 't2'], 'ansible_check_mode': True,
                 'hostvars': {'t1': {'__rolling_reboot_stopped': _stop('Plan', 'boom')}, 't2': {}}}
    args = {'phase': 'rolling_reboot', 'records': final, 'stopped': '__rolling_reboot_stopped',
            'meta': {'hosts': ['t1']}, 'dest': str(tmp_path)}
    result = run(args, task_vars, check_mode=True)
    assert result['changed'] is False and result['failures'] == {'t1': 'boom'}
    assert sorted(os.listdir(str(tmp_path))) == ['rolling-reboot.json', 'rolling-reboot.md']
    assert (tmp_path / 'rolling-reboot.md').read_text().startswith('# Rolling reboot (check mode: nothing was rebooted)')
    assert '**Stopped** at task "Plan": boom' in (tmp_path / 'rolling-reboot.md').read_text()
    stats = result['ansible_stats']
    assert stats['per_host'] is False and stats['aggregate'] is True
    assert stats['data']['gpu_tray_evidence']['rolling_reboot']['result'] == 'failed'
    # a second record of the same run writes nothing, and still fails the host
    again = run(args, task_vars, check_mode=True)
    assert again['written'] == [] and again['failures'] == {'t1': 'boom'}


def test_a_validation_removes_the_stale_phase_files_of_an_earlier_run_and_points_latest(tmp_path):
    run_dir = tmp_path / 'awx-job-3'
    dest = run_dir / 'validation'
    (dest / 'ctrf').mkdir(parents=True)
    (dest / 'ctrf' / 'performance.json').write_text('{}')
    phases = [{'name': 'readiness', 'checks': [{'name': 'api', 'status': 'passed', 'message': 'ok'}]}]
    result = run({'phase': 'validation', 'records': phases, 'meta': {'recipe': 'r', 'generated': 'now'},
                  'dest': str(dest), 'run_dir': str(run_dir)}, {'inventory_hostname': 'api'})
    assert result['removed'] == [str(dest / 'ctrf' / 'performance.json')]
    assert sorted(os.listdir(str(dest / 'ctrf'))) == ['readiness.json'] and result['failures'] == {}
    assert os.readlink(str(tmp_path / 'latest')) == 'awx-job-3'
    assert json.loads((dest / 'summary.json').read_text())['result'] == 'passed'


def test_without_dest_the_record_goes_to_the_runs_report_folder(tmp_path):
    result = run({'phase': 'stack_deploy', 'records': [['a']]},
                 {'gpu_tray_report_dir': str(tmp_path), 'gpu_tray_run_id': 'r7', 'ansible_play_hosts_all': ['api']})
    assert result['dir'] == str(tmp_path / 'r7')
    assert (tmp_path / 'r7' / 'stack-deploy.md').is_file() and os.readlink(str(tmp_path / 'latest')) == 'r7'


def test_find_looks_in_the_newest_run_folder_this_run_first_or_in_dest_without_run_folders(tmp_path):
    for name, age in (('old', 100), ('new', 10)):
        (tmp_path / name / 'validation').mkdir(parents=True)
        path = tmp_path / name / 'validation' / 'last-pass.json'
        path.write_text('{}')
        os.utime(str(path), (1e9 - age, 1e9 - age))
    mine = tmp_path / 'mine'
    found = run({'phase': 'validation', 'find': ['last-pass.json', 'summary.json'],
                 'dest': str(mine / 'validation'), 'prefer': str(mine)},
                {'gpu_tray_report_dir': str(tmp_path), 'gpu_tray_run_id': 'mine'})
    assert found['earlier'] == {'last-pass.json': str(tmp_path / 'new' / 'validation' / 'last-pass.json'),
                                'summary.json': ''}
    assert not mine.exists()                                       # find writes nothing
    plain = run({'phase': 'validation', 'find': ['last-pass.json'], 'dest': str(tmp_path / 'old' / 'validation')}, {})
    assert plain['earlier'] == {'last-pass.json': str(tmp_path / 'old' / 'validation' / 'last-pass.json')}


def test_records_that_cannot_be_a_phases_are_refused_naming_the_phase(tmp_path):
    with pytest.raises(AnsibleActionFail, match='the validation record cannot be made'):
        run({'phase': 'validation', 'records': [{'name': 'smoke', 'checks': []}], 'dest': str(tmp_path)}, {})
    blocker = tmp_path / 'file'
    blocker.write_text('x')
    with pytest.raises(AnsibleActionFail, match='cannot write the stack_deploy record under %s' % blocker):
        run({'phase': 'stack_deploy', 'records': [], 'dest': str(blocker)}, {})


def test_the_implicit_localhost_is_read_from_its_own_vars(tmp_path):
    """A play on the implicit localhost (no inventory) is not in hostvars: its facts are the task's own vars - its
    failed preflight fails it (ansible-core's HostVars raises KeyError for it)."""
    report = {'host': 'localhost', 'platform': 'p', 'passed': False, 'failed_checks': ['rails'],
              'checks': [{'name': 'rails', 'status': 'failed', 'message': 'm'}]}
    result = run({'phase': 'preflight', 'hostvars': ['preflight_report'], 'dest': str(tmp_path)},
                 {'ansible_play_hosts_all': ['localhost'], 'inventory_hostname': 'localhost', 'hostvars': {},
                  'preflight_report': report})
    assert list(result['failures']) == ['localhost']
