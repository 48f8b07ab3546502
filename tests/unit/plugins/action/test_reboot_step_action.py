# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reboot_step action in-process: it reads what the role registered on every tray (hostvars) and the previous
step's result, and returns the next - the plan, the rows, the wave's record, the report - as the role registers it.
The decisions are plugin_utils/reboot_plan.py's (tests/unit/plugins/plugin_utils/test_reboot_run.py)."""

from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleActionFail
from ansible.playbook.play_context import PlayContext

from ansible_collections.gpu_tray.cluster.plugins.action import reboot_step

HOSTS = ['tray01', 'tray02']
INPUTS = {'hosts': HOSTS, 'reasons': {'tray01': ['kernel_tuning'], 'tray02': ['kernel_tuning']},
          'groups': {'tray01': '', 'tray02': ''}, 'nodes': {'tray01': 'tray01', 'tray02': 'tray02'},
          'strategy': 'auto', 'canaries': 1, 'batch': 1, 'group_by': '', 'drain': 'auto', 'drain_via': 'auto',
          'via_insisted': False, 'cluster': {'read': False, 'why': 'no cluster configured', 'sources': [], 'error': ''},
          'check_mode': False}
CHECKS = {'dispatch': 'the send', 'default': 'the error', 'unreachable': 'the console'}
KEPT = {'changed_roles': [], 'maintenance': 'ns/nm', 'checks': CHECKS,
        'bmc': {'judged': False, 'settings': {}, 'serial': None, 'log_entries': 10, 'recover': 'none'}}


def step(args, hostvars, play_hosts=None, play_hosts_all=None, **own):
    task = MagicMock()
    task.async_val = 0
    task.check_mode = False
    task.diff = False
    task.args = dict(args)
    task.action = 'gpu_tray.cluster.reboot_step'
    module = reboot_step.ActionModule(task, MagicMock(), PlayContext(), MagicMock(), MagicMock(), MagicMock())
    return module.run(task_vars=dict({'hostvars': hostvars, 'ansible_play_hosts': play_hosts or HOSTS,
                                      'ansible_play_hosts_all': play_hosts_all or HOSTS}, **own))


def facts(**registered):
    return dict({'__rolling_reboot_tray': KEPT}, **registered)


def test_a_run_from_the_plan_to_a_failed_send_and_its_report():
    hostvars = {'tray01': facts(), 'tray02': facts()}
    run = step({'step': 'plan', 'inputs': INPUTS}, hostvars)
    assert not run.get('failed') and run['changed'] is False and run['via'] == 'drain'
    assert run['rows']['tray01']['role'] == 'canary' and run['msg'] == run['plan']['summary']
    assert run['bmc'] == {} and run['warnings'] == []           # no BMC judged
    run = step({'step': 'wave', 'inputs': INPUTS, 'run': run}, hostvars)
    assert run['wave']['trays'] == ['tray01'] and run['wave_index'] == 1
    hostvars['tray01'] = facts(__rolling_reboot_failure={'step': 'dispatch', 'task': 'Send the reboot', 'error': 'no'},
                               __rolling_reboot_sent={'failed': True, 'msg': 'no'})
    run = step({'step': 'record', 'inputs': INPUTS, 'run': run}, hostvars)
    row = run['rows']['tray01']
    assert (row['status'], row['rebooted'], row['check'], row['down_at']) == ('FAILED', 'unknown', 'the send', None)
    assert run['waves_done'][0]['failed'] == ['tray01'] and run['plan']['stop']['canary'] == ['tray01']
    hostvars['tray02'] = facts(__rolling_reboot_stopped={'task': 'Stop the run', 'message': 'The canary tray01 failed'})
    report = step({'step': 'report', 'inputs': INPUTS, 'run': run}, hostvars, play_hosts_all=HOSTS + ['tray09'])
    assert [r['tray'] for r in report['json']] == ['tray01', 'tray02', 'tray09']
    assert report['json'][0]['wave_timing']['wave'] == 1 and report['stopped']['task'] == 'Stop the run'


def test_a_tray_of_the_wave_that_left_the_play_is_recorded_failed():
    hostvars = {'tray01': facts(__rolling_reboot_sent={'sent_at': 1.0, 'boot_id': 'b'}), 'tray02': facts()}
    run = step({'step': 'plan', 'inputs': INPUTS}, hostvars)
    run = step({'step': 'wave', 'inputs': INPUTS, 'run': run}, hostvars)
    run = step({'step': 'record', 'inputs': INPUTS, 'run': run}, hostvars, play_hosts=['tray02'])
    assert run['rows']['tray01']['unreachable'] and run['rows']['tray01']['check'] == 'the console'


def test_a_step_without_the_previous_one_is_refused_and_a_plan_error_keeps_the_run():
    with pytest.raises(AnsibleActionFail, match='step wave needs run'):
        step({'step': 'wave', 'inputs': INPUTS}, {})
    run = step({'step': 'plan', 'inputs': INPUTS}, {'tray01': facts(), 'tray02': facts()})
    failed = step({'step': 'wave', 'inputs': dict(INPUTS, strategy='sideways'), 'run': run}, {})
    assert failed['failed'] and failed['msg'].startswith('reboot_plan: strategy must be one of')
    assert failed['rows'] == run['rows'] and failed['plan'] == run['plan']          # the report still has them


SYSTEM = {'redfish_facts': {'system': {'ret': True, 'entries': [[{}, {
    'Id': '1', 'SerialNumber': 'S1', 'PowerState': 'On', 'Status': {'Health': 'OK'}}]]}}}


def test_the_plan_judges_each_rebooting_trays_bmc_and_warns_where_it_is_not_required():
    kept = dict(KEPT, bmc=dict(KEPT['bmc'], judged=True, required=False, serial='S1',
                               settings={'address': 'https://bmc', 'username': 'u', 'password': True, 'system_id': ''}))
    hostvars = {'tray01': facts(__rolling_reboot_bmc_answer=SYSTEM), 'tray02': facts(__rolling_reboot_bmc_answer=None)}
    hostvars['tray01']['__rolling_reboot_tray'] = hostvars['tray02']['__rolling_reboot_tray'] = kept
    run = step({'step': 'plan', 'inputs': INPUTS}, hostvars)
    assert run['bmc']['tray01']['ok'] and not run['bmc']['tray02']['ok']
    assert run['warnings'] == ['tray02: %s The tray reboots anyway (rolling_reboot_bmc_required is false): if it does '
                               'not come back, nothing can look at it or recover it.' % run['bmc']['tray02']['msg']]
    assert 'warnings' not in step({'step': 'wave', 'inputs': INPUTS, 'run': run}, hostvars)     # said once


def test_not_back_reads_the_trays_own_results_warns_once_and_fails_when_final():
    settings = {'address': 'https://bmc', 'username': 'u', 'password': True, 'system_id': ''}
    own = {'inventory_hostname': 'tray01',
           '__rolling_reboot_tray': dict(KEPT, bmc=dict(KEPT['bmc'], recover='power_cycle', settings=settings)),
           '__rolling_reboot_bmc_system': SYSTEM, '__rolling_reboot_back': {'failed': True, 'msg': 'timed out'},
           'ansible_facts': {'gpu_tray': {'dmi': {'product_serial': 'S1'}}}}
    seen = step({'step': 'not_back'}, {}, **own)
    assert not seen.get('failed') and seen['bmc']['read'] and seen['bmc']['recovery']['command'] == 'PowerForceRestart'
    assert seen['warnings'] == ['tray01 did not come back from its reboot. %s' % seen['msg']]
    assert 'warning' not in seen                     # said once, as msg and as the warning shown
    own.update(__rolling_reboot_bmc_seen=seen, __rolling_reboot_bmc_cycle={'skipped': True})
    final = step({'step': 'not_back', 'final': True, 'timeout': 600}, {}, **own)
    assert final['failed'] and final['after'] is None and final['msg'] == (
        'The tray did not come back from its reboot within 600 s (timed out). %s.' % seen['bmc']['summary'])
