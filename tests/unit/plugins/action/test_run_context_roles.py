# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One run, one value per shared input (issue 44): every role option that takes a shared input (its default reads
the lookup gpu_tray.cluster.run_context) resolved on every host of a real ansible-playbook run - an API host and two
NVKE trays - after the playbooks' own opening (check_inputs, which keeps the context), and once more without it (a
role included on its own: the lookup resolves the context itself). Each shared input has one value in the run: the
BMC case of the issue (preflight said "not required", the rolling reboot refused the same tray), the VF count the
stack renders and the validation expects, the rails, the P_Key, the cluster connection."""

import json
import os
import re

import pytest
import yaml

from test_check_inputs import REPO, run   # noqa: I100 (the action tests' ansible-playbook runner)
from test_check_inputs import opening as check_opening   # noqa: I100 (the playbooks' opening, its path absolute)

CONTEXT = re.compile(r"^\{\{\s*lookup\('gpu_tray\.cluster\.run_context',\s*'([a-z_]+)'\)\s*\}\}$")


def shared_options():
    """{key: [(role, option)]}: every role default that reads the run context."""
    out = {}
    for role in sorted(os.listdir(os.path.join(REPO, 'roles'))):
        path = os.path.join(REPO, 'roles', role, 'defaults', 'main.yml')
        if not os.path.isfile(path):
            continue
        with open(path) as handle:
            for option, value in (yaml.safe_load(handle) or {}).items():
                match = CONTEXT.match(value.strip()) if isinstance(value, str) else None
                if match:
                    out.setdefault(match.group(1), []).append((role, option))
    return out


def playbook(tmp_path, opening):
    """On every host: each role's defaults (as the role loads them) templated in this host's context."""
    tasks = [check_opening('validate.yml')] if opening else []   # the opening, as validate.yml imports it
    roles = sorted(set(role for uses in shared_options().values() for role, _option in uses))
    for role in roles:
        tasks.append({'name': 'defaults of %s' % role, 'ansible.builtin.include_vars': {
            'file': os.path.join(REPO, 'roles', role, 'defaults', 'main.yml'), 'name': '__defaults_%s' % role}})
    values = dict(('%s.%s' % (role, option), "{{ __defaults_%s.%s }}" % (role, option))
                  for uses in shared_options().values() for role, option in uses)
    tasks.append({'name': 'resolved', 'ansible.builtin.copy': {
        'content': '{{ %s | to_json }}' % json.dumps(values).replace('"{{ ', '').replace(' }}"', ''),
        'dest': str(tmp_path / 'out-{{ inventory_hostname }}.json')}, 'delegate_to': 'localhost'})
    path = tmp_path / ('opening.yml' if opening else 'alone.yml')
    path.write_text(yaml.safe_dump([{'hosts': 'all', 'gather_facts': False, 'tasks': tasks}]))
    return path


def inventory(tmp_path, **tray_vars):
    local = {'ansible_connection': 'local', 'ansible_python_interpreter': '{{ ansible_playbook_python }}'}
    data = {'all': {'children': {
        'gpu_trays': {'hosts': {'tray01': dict(local), 'tray02': dict(local)},
                      'vars': dict({'gpu_tray_platform': 'nvke-gb200'}, **tray_vars)},
        'k8s_api': {'hosts': {'api': dict(local)},
                    'vars': {'gpu_tray_kubeconfig': '/etc/kubernetes/two.yaml', 'gpu_tray_kube_context': 'second'}}}}}
    path = tmp_path / 'hosts.yml'
    path.write_text(yaml.safe_dump(data))
    return path


def resolved(tmp_path, opening, **tray_vars):
    proc = run(tmp_path, playbook(tmp_path, opening), inventory=inventory(tmp_path, **tray_vars))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return dict((host, json.loads((tmp_path / ('out-%s.json' % host)).read_text()))
                for host in ('api', 'tray01', 'tray02'))


def test_the_shared_inputs_are_read_by_several_roles():
    uses = shared_options()
    assert {'preflight_bmc_required', 'rolling_reboot_bmc_required'} <= set(o for _r, o in uses['bmc_required'])
    assert {'preflight_min_num_vfs', 'stack_num_vfs'} <= set(o for _r, o in uses['num_vfs'])
    assert {'preflight_rails', 'stack_rails', 'validate_rails'} <= set(o for _r, o in uses['rails'])


@pytest.mark.parametrize('opening', [True, False], ids=['after the opening', 'role alone'])
def test_every_role_of_a_run_resolves_one_value_per_shared_input(tmp_path, opening):
    got = resolved(tmp_path, opening, gpu_tray_num_vfs=8)
    for key, uses in sorted(shared_options().items()):
        for host, values in got.items():
            seen = set(json.dumps(values['%s.%s' % use]) for use in uses)
            assert len(seen) == 1, (key, host, dict(('%s.%s' % use, values['%s.%s' % use]) for use in uses))
    tray, api = got['tray01'], got['api']
    # issue 44's BMC case: NVKE's profile does not require a BMC - for the preflight and the rolling reboot alike
    assert tray['preflight.preflight_bmc_required'] is False and tray['rolling_reboot.rolling_reboot_bmc_required'] is False
    # the VF count and the rails the stack plans on the API host are the trays'
    assert api['stack.stack_num_vfs'] == tray['preflight.preflight_min_num_vfs'] == 8
    assert api['stack.stack_rails'] == tray['preflight.preflight_rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']
    assert api['validate.validate_recipe'] == api['stack.stack_recipe'] == 'gb200-nvke-ubuntu-training'


def test_the_trays_disagreeing_on_a_cluster_value_stop_the_run(tmp_path):
    hosts = inventory(tmp_path)
    data = yaml.safe_load(hosts.read_text())
    data['all']['children']['gpu_trays']['hosts']['tray02']['gpu_tray_num_vfs'] = 8
    hosts.write_text(yaml.safe_dump(data))
    proc = run(tmp_path, playbook(tmp_path, True), inventory=hosts)
    assert proc.returncode == 2
    assert 'gpu_tray_num_vfs differs between the trays (16 on tray01; 8 on tray02)' in proc.stdout, proc.stdout[-3000:]
    assert not (tmp_path / 'out-api.json').exists()


@pytest.mark.parametrize('with_opening', [True, False], ids=['opened', 'alone'])
def test_the_kept_context_is_the_whole_one_without_its_secrets(tmp_path, with_opening):
    """lookup('gpu_tray.cluster.run_context', 'kept'): what the stack hands its component hosts - every key of the
    context but the BMC password, which a run never keeps in its facts."""
    tasks = [check_opening('validate.yml')] if with_opening else []
    tasks.append({'name': 'both', 'ansible.builtin.copy': {
        'content': "{{ {'whole': lookup('gpu_tray.cluster.run_context'), "
                   "'kept': lookup('gpu_tray.cluster.run_context', 'kept')} | to_json }}",
        'dest': str(tmp_path / 'out-{{ inventory_hostname }}.json')}, 'delegate_to': 'localhost'})
    book = tmp_path / 'kept.yml'
    book.write_text(yaml.safe_dump([{'hosts': 'all', 'gather_facts': False, 'tasks': tasks}]))
    proc = run(tmp_path, book, inventory=inventory(tmp_path, gpu_tray_bmc_password='s3cret-pw'))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    for host in ('api', 'tray01', 'tray02'):
        got = json.loads((tmp_path / ('out-%s.json' % host)).read_text())
        assert 's3cret-pw' not in json.dumps(got['kept']), host
        assert set(got['whole']) - set(got['kept']) == {'bmc_password'}, host
        assert dict((k, v) for k, v in got['whole'].items() if k != 'bmc_password') == got['kept'], host
    assert json.loads((tmp_path / 'out-tray01.json').read_text())['whole']['bmc_password'] == 's3cret-pw'
