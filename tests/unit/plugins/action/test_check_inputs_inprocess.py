# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action gpu_tray.cluster.check_inputs in-process (tests/unit/plugins/action/test_check_inputs.py runs it through
ansible-playbook): what it reads from which host, how it groups a finding by the hosts it holds for, what it returns
for the playbook to set, and when it asks the API host for helm - with ansible-core's own templar and loader."""


import pytest
from ansible.errors import AnsibleActionFail
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.gpu_tray.cluster.plugins.action import check_inputs
from unithelpers import action_plugin, target_connection


class HostVars(dict):
    """hostvars as the action uses it: ``host in hostvars`` and ``raw_get(host)``."""

    def raw_get(self, host):
        return self[host]


def checker(args, connection=None, check_mode=False):
    """The action with ansible-core's own loader and templar."""
    loader = DataLoader()
    return action_plugin(check_inputs, args, connection, check_mode=check_mode, loader=loader,
                         templar=Templar(loader=loader))


def run(monkeypatch, hosts, args=None, extra=None, me=None, module=None, check_mode=False):
    """Run the action as host ``me`` (the first of ``hosts``: name -> variables) of a play over every host."""
    action = checker(args or {}, check_mode=check_mode)
    monkeypatch.setattr(check_inputs, 'load_extra_vars', lambda _loader: dict(extra or {}))
    calls = []

    def execute_module(module_name=None, module_args=None, task_vars=None, **_kwargs):
        calls.append((module_name, module_args))
        return module(module_args) if module else {'failed': True, 'msg': 'no module expected'}
    monkeypatch.setattr(action, '_execute_module', execute_module)
    me = me or list(hosts)[0]
    hostvars = HostVars(hosts)
    task_vars = dict(hosts[me], inventory_hostname=me, ansible_play_hosts_all=list(hosts), hostvars=hostvars)
    return action.run(task_vars=task_vars), calls


def test_good_inputs_pass_and_the_answers_come_back_for_the_playbook(monkeypatch):
    hosts = {'t1': {'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_reboot_batch': 2}, 't2': {'gpu_tray_pkey': '0x8001'}}
    result, calls = run(monkeypatch, hosts, extra={'survey_rolling_reboot_timeout': '900',
                                                   'survey_rolling_reboot_batch': None, 'other': 1})
    assert not result.get('failed') and result['changed'] is False and calls == []
    assert result['hosts'] == 2 and result['problems'] == [] and result['survey'] == {'rolling_reboot_timeout': 900}
    assert [item['key'] for item in result['facts']] == ['rolling_reboot_timeout', '__gpu_tray_run',
                                                         '__gpu_tray_inputs_checked']
    assert result['facts'][0]['value'] == 900 and result['facts'][2]['value'] is True
    # the run context of every host, for the roles (lookup gpu_tray.cluster.run_context): each host's own values
    # over its platform profile's defaults
    contexts = result['facts'][1]['value']['hosts']
    assert sorted(contexts) == ['t1', 't2']
    assert contexts['t1']['platform'] == 'rke2-vr200' and contexts['t1']['recipe'] == 'vr200-rke2-ubuntu-training'
    assert contexts['t1']['bmc_required'] is True and contexts['t1']['pkey'] == '0xffff'
    assert contexts['t2']['pkey'] == '0x8001' and contexts['t2']['platform'] == '' and contexts['t2']['rails'] == []
    assert result['msg'] == 'The inputs of 2 hosts are fine; survey answers: rolling_reboot_timeout.'
    one, _calls = run(monkeypatch, {'t1': {}})
    assert one['msg'] == 'The inputs of 1 host are fine.'


def test_a_finding_names_the_hosts_it_holds_for_and_nothing_is_set(monkeypatch):
    hosts = {'t1': {'gpu_tray_num_vfs': 16}, 't2': {'gpu_tray_num_vfs': 'x'}, 't3': {'gpu_tray_num_vfs': 'x'},
             't4': {'gpu_tray_pkeys': 1}}
    result, _calls = run(monkeypatch, hosts, extra={'rolling_reboot_bach': 2, 'survey_rolling_reboot_timeout': '9'})
    assert result['failed'] is True and result['facts'] == [] and result['survey'] == {'rolling_reboot_timeout': 9}
    assert result['problems'] == [
        {'problem': "gpu_tray_num_vfs must be an integer, got 'x'", 'hosts': ['t2', 't3']},
        {'problem': 'gpu_tray_pkeys is not a variable of gpu_tray.cluster (did you mean gpu_tray_pkey?)',
         'hosts': ['t4']},
        {'problem': 'rolling_reboot_bach is not a variable of role rolling_reboot (did you mean rolling_reboot_batch?)',
         'hosts': ['t1', 't2', 't3', 't4']}]
    assert result['msg'] == (
        "The run's inputs are refused, nothing was read, written or installed: gpu_tray_num_vfs must be an integer, "
        "got 'x' (on t2, t3); gpu_tray_pkeys is not a variable of gpu_tray.cluster (did you mean gpu_tray_pkey?) (on "
        "t4); rolling_reboot_bach is not a variable of role rolling_reboot (did you mean rolling_reboot_batch?); a "
        "gpu_tray_* variable of the site itself goes in gpu_tray_site_variables.")


def test_the_hosts_option_and_hosts_the_inventory_does_not_have(monkeypatch):
    hosts = {'api': {}, 't1': {'gpu_tray_bmc_required': None}}
    result, _calls = run(monkeypatch, hosts, args={'hosts': ['api', 'api', 'ghost']})
    assert not result.get('failed') and result['hosts'] == 1           # t1 not asked for; ghost not in the inventory
    result, _calls = run(monkeypatch, hosts, args={'hosts': ['api', 'ghost', 't1']})
    assert result['problems'] == [{'problem': 'gpu_tray_bmc_required is empty (null): set true or false, or remove it',
                                   'hosts': ['t1']}]


def test_site_variables_site_recipes_and_values_that_cannot_be_templated(monkeypatch):
    hosts = {'t1': {'gpu_tray_rack': 'r1', 'gpu_tray_site_variables': ['gpu_tray_rack'], 'gpu_tray_recipe': 'mine',
                    'stack_extra_recipes': {'mine': {}}},
             't2': {'gpu_tray_rack': 'r2', 'preflight_site_variables': ['gpu_tray_rack'],
                    'gpu_tray_report_dir': trust_as_template('{{ no_such_variable }}/x')}}
    result, _calls = run(monkeypatch, hosts)
    assert [item['hosts'] for item in result['problems']] == [['t2']], result['problems']
    assert result['problems'][0]['problem'].startswith('gpu_tray_report_dir cannot be resolved: '), result
    assert 'no_such_variable' in result['problems'][0]['problem']
    hosts['t2'].pop('gpu_tray_report_dir')
    hosts['t2']['gpu_tray_recipe'] = 'mine'                             # t2 has no stack_extra_recipes
    result, _calls = run(monkeypatch, hosts)
    assert [item['hosts'] for item in result['problems']] == [['t2']], result['problems']
    assert result['problems'][0]['problem'].startswith('gpu_tray_recipe must be one of: gb200-nvke-ubuntu-training')


def test_a_role_variable_every_host_lists_as_the_sites_own_passes(monkeypatch):
    hosts = {'t1': {'gpu_tray_site_variables': ['rolling_reboot_bach']},
             't2': {'preflight_site_variables': ['rolling_reboot_bach']}}
    result, _calls = run(monkeypatch, hosts, extra={'rolling_reboot_bach': 1})
    assert not result.get('failed'), result
    hosts['t2'] = {}
    result, _calls = run(monkeypatch, hosts, extra={'rolling_reboot_bach': 1})
    assert result['failed'], result


def test_a_survey_answer_that_cannot_be_templated_is_refused(monkeypatch):
    result, _calls = run(monkeypatch, {'t1': {}}, extra={'survey_rolling_reboot_batch': trust_as_template('{{ nope }}')})
    assert result['failed'] and result['problems'][0]['problem'].startswith(
        'survey_rolling_reboot_batch cannot be resolved: ')


def test_the_target_is_never_touched_and_check_mode_asks_for_helm_too(monkeypatch):
    """No remote temporary directory (TRANSFERS_FILES false); in check mode the helm question still runs (the
    action supports check mode, which _execute_module requires)."""
    monkeypatch.setattr(check_inputs.ActionModule, '_execute_module',
                        lambda self, **kwargs: {'rc': 0, 'plugin_list': [{'name': 'diff'}]})
    connection = target_connection('check_inputs')
    action = checker({'helm': True}, connection, check_mode=True)
    monkeypatch.setattr(check_inputs, 'load_extra_vars', lambda _loader: {})
    result = action.run(task_vars={'inventory_hostname': 'api', 'hostvars': HostVars({'api': {}})})
    assert not result.get('failed') and result['hosts'] == 1, result
    assert connection.exec_command.call_count == 0 and connection.put_file.call_count == 0
    assert action._supports_check_mode is True


def plugins(*names):
    return lambda _args: {'rc': 0, 'stdout': 'NAME VERSION DESCRIPTION', 'plugin_list': [{'name': n} for n in names]}


@pytest.mark.parametrize('mode, variables, asked', [
    (False, {}, False), ('false', {}, False), (True, {}, True), ('yes', {}, True),
    ('vendored', {}, False), ('vendored', {'gpu_tray_bundle_vendor_charts': True}, True),
    ('vendored', {'gpu_tray_bundle_vendor_charts': True, 'stack_bundle_vendor_charts': False}, False),
    ('vendored', {'stack_bundle_vendor_charts': 'true'}, True),
])
def test_helm_is_asked_for_only_when_the_playbook_needs_it(monkeypatch, mode, variables, asked):
    result, calls = run(monkeypatch, {'api': dict(variables)}, args={'helm': mode}, module=plugins('diff'))
    assert not result.get('failed') and 'warnings' not in result, result
    assert calls == ([('kubernetes.core.helm_plugin_info', {'binary_path': 'helm'})] if asked else [])


def test_helm_that_cannot_run_refuses_in_one_line_naming_the_fix(monkeypatch):
    for answer, reason in (({'failed': True, 'rc': 2, 'msg': 'Error executing command.'}, 'not found'),
                           ({'failed': True, 'rc': 13, 'msg': 'Error executing command.'}, 'not executable'),
                           ({'failed': True, 'rc': 1, 'stdout': 'x', 'stderr': 'Error: boom\nmore', 'msg': 'm'},
                            'Error: boom'),
                           ({'failed': True, 'rc': 1, 'stderr': 'E' * 200}, 'E' * 160),
                           ({'unreachable': True, 'msg': 'ssh: no route\nto host'}, 'ssh: no route')):
        result, calls = run(monkeypatch, {'api': {'stack_helm_binary': '/opt/helm'}}, args={'helm': True},
                            module=lambda _args, answer=answer: answer)
        assert calls == [('kubernetes.core.helm_plugin_info', {'binary_path': '/opt/helm'})]
        assert result['failed'] and result['facts'] == []
        assert result['msg'] == (
            "The run's inputs are refused, nothing was read, written or installed: helm (stack_helm_binary: /opt/helm) "
            "cannot be run on api (%s): install Helm 3 and the helm-diff plugin there (README.md, Requirements) or set "
            "stack_helm_binary to its path." % reason)


def test_helm_without_diff_is_a_warning_and_bad_inputs_are_reported_before_helm_is_asked(monkeypatch):
    result, _calls = run(monkeypatch, {'api': {}}, args={'helm': True}, module=plugins('secrets'))
    assert not result.get('failed') and result['warnings'] == [
        'helm on api has no helm-diff plugin: kubernetes.core.helm cannot preview a release in check mode or tell an '
        'unchanged one (helm plugin install https://github.com/databus23/helm-diff)']
    result, calls = run(monkeypatch, {'api': {'gpu_tray_x': 1}}, args={'helm': True}, module=plugins('diff'))
    assert result['failed'] and calls == []
    with pytest.raises(AnsibleActionFail, match='helm must be true, false or vendored'):
        run(monkeypatch, {'api': {}}, args={'helm': 'maybe'})


def test_the_kept_run_context_holds_no_secret(monkeypatch):
    """The opening sets the context as a fact (shown with -v): a BMC password is never in it; the lookup reads it from
    the host's own variables when a role asks."""
    hosts = {'t1': {'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_bmc_password': 's3cret', 'gpu_tray_bmc_username': 'u'}}
    result, _calls = run(monkeypatch, hosts)
    kept = [item['value'] for item in result['facts'] if item['key'] == '__gpu_tray_run'][0]['hosts']['t1']
    assert 'bmc_password' not in kept and kept['bmc_username'] == 'u'
    assert 's3cret' not in repr(result)
