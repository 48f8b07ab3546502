# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The action gpu_tray.cluster.check_inputs in real ansible-playbook runs on local hosts, through the playbooks' opening
tasks: the issue-34 examples refused in one line before anything is written (render_bundle, deploy_stack), a
missing helm named with its fix, a misspelt variable set on a tray refused by every playbook whose first play
runs on the API host (the stack and the validation read the trays' values), the check's task condition (run once
for the run, skipped once the inputs were checked) and the AWX survey's answers - blank ones (null, "") keep the
inventory's value, the others reach every host of the play. The rules themselves:
tests/unit/plugins/plugin_utils/test_inputs.py."""

import json
import os
import subprocess
import sys

import pytest
import yaml

import ansible_collections.gpu_tray.cluster as collection
from ansible_env import checkout_env

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
COLLECTIONS_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(list(collection.__path__)[0])))
PLAYBOOKS = os.path.join(REPO, 'playbooks')


def run(tmp_path, playbook, *args, inventory=None, callback='default'):
    env = checkout_env(REPO, collections=COLLECTIONS_ROOT, home=str(tmp_path / 'home'),
                       callback='ansible.builtin.' + callback, ANSIBLE_LOCALHOST_WARNING='0',
                       ANSIBLE_INVENTORY_UNPARSED_WARNING='0')
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), str(playbook)]
    argv += ['-i', str(inventory)] if inventory else ['-i', 'localhost,', '-c', 'local',
                                                      '-e', 'ansible_python_interpreter=%s' % sys.executable]
    return subprocess.run(argv + list(args), cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def failure(proc):
    """The msg of the one failed task (stdout callback default: `fatal: [host]: FAILED! => {json}`)."""
    lines = [line for line in proc.stdout.splitlines() if 'FAILED! =>' in line]
    assert len(lines) == 1, proc.stdout[-4000:] + proc.stderr[-2000:]
    return json.loads(lines[0].split('FAILED! => ', 1)[1])['msg']


def test_render_bundle_refuses_the_typos_and_bad_values_of_issue_34_before_writing(tmp_path):
    """Two typos ended failed=0 with a helmfile bundle and the overrides ignored; a bad format named
    stack_bundle_format; the intent choices printed as "one of: , performance". One sentence, every problem."""
    bundle = tmp_path / 'bundle'
    proc = run(tmp_path, os.path.join(PLAYBOOKS, 'render_bundle.yml'),
               '-e', json.dumps({'gpu_tray_stack_overides': {'gpu-operator': {'driver': {'enabled': False}}}}),
               '-e', 'gpu_tray_bundle_formats=argocd', '-e', 'gpu_tray_recipe=gb200-nvke-ubuntu-training',
               '-e', 'gpu_tray_bundle_dir=%s' % bundle, '-e', 'gpu_tray_bundle_format=argocdd',
               '-e', 'gpu_tray_tuned_intent=turbo')
    assert proc.returncode == 2
    assert failure(proc) == (
        "The run's inputs are refused, nothing was read, written or installed: gpu_tray_bundle_formats is not a "
        "variable of gpu_tray.cluster (did you mean gpu_tray_bundle_format?); gpu_tray_stack_overides is not a "
        "variable of gpu_tray.cluster (did you mean gpu_tray_stack_overrides?); gpu_tray_bundle_format must be a list "
        "of: helmfile, argocd, flux, got 'argocdd'; gpu_tray_tuned_intent must be one of: '' (empty), performance, "
        "multiNodeTraining, inference, got 'turbo'; a gpu_tray_* variable of the site itself goes in "
        "gpu_tray_site_variables.")
    assert 'stack_bundle_format' not in proc.stdout and 'Traceback' not in proc.stdout + proc.stderr
    assert not bundle.exists()
    assert 'TASK [Render the bundle]' not in proc.stdout


def test_deploy_stack_needs_helm_only_when_it_deploys_and_names_the_fix(tmp_path):
    """No helm gave twelve raw "[Errno 2] ... b'helm'" lines: now one line before the recipe is resolved; with
    gpu_tray_stack_deploy false (site.yml on the lab, no cluster) no helm is needed."""
    missing = str(tmp_path / 'no' / 'helm')
    proc = run(tmp_path, os.path.join(PLAYBOOKS, 'deploy_stack.yml'), '-e', 'stack_helm_binary=%s' % missing,
               '-e', 'gpu_tray_recipe=vr200-rke2-ubuntu-training')
    assert proc.returncode == 2
    assert failure(proc) == (
        "The run's inputs are refused, nothing was read, written or installed: helm (stack_helm_binary: %s) cannot be "
        "run on localhost (not found): install Helm 3 and the helm-diff plugin there (README.md, Requirements) or set "
        "stack_helm_binary to its path." % missing)
    assert 'Errno' not in proc.stdout
    assert 'TASK [Resolve the recipe and plan the tiers]' not in proc.stdout
    skipped = run(tmp_path, os.path.join(PLAYBOOKS, 'deploy_stack.yml'), '-e', 'stack_helm_binary=%s' % missing,
                  '-e', 'gpu_tray_stack_deploy=false')
    assert skipped.returncode == 0, skipped.stdout[-4000:]


PLAY = '''
- hosts: trays
  gather_facts: false
  # what the rolling_reboot role would see: its defaults (below the survey's answers, which are set as facts)
  vars_files: [%(defaults)s]
  tasks:
%(tasks)s
%(tasks)s
    - name: record
      ansible.builtin.debug:
        msg: "{{ {'batch': rolling_reboot_batch, 'drain': rolling_reboot_drain, 'timeout': rolling_reboot_timeout,
                  'checked': __gpu_tray_inputs_checked, 'result': __gpu_tray_inputs} }}"
'''


def recorded(proc):
    """What the record task saw on each host (stdout callback json)."""
    tasks = json.loads(proc.stdout)['plays'][0]['tasks']
    return dict((host, result['msg']) for host, result in tasks[-1]['hosts'].items())


def opening(name):
    """A playbook's opening, as its first play imports it (playbooks/tasks/opening.yml, with the playbook's own
    arguments), its path made absolute for a play written elsewhere."""
    play = yaml.safe_load(open(os.path.join(PLAYBOOKS, name)))[0]
    task = dict((play.get('pre_tasks') or play['tasks'])[0])
    assert task.get('ansible.builtin.import_tasks') == 'tasks/opening.yml', task
    task['ansible.builtin.import_tasks'] = os.path.join(PLAYBOOKS, 'tasks', 'opening.yml')
    return task


def the_playbooks_check(tmp_path, name='preflight.yml'):
    """A play over two local hosts that runs a playbook's opening twice, then records what it left."""
    text = yaml.safe_dump([opening(name)], default_flow_style=False, width=1000)
    play = tmp_path / 'play.yml'
    play.write_text(PLAY % {'tasks': '\n'.join('    ' + line for line in text.splitlines()),
                            'defaults': os.path.join(REPO, 'roles', 'rolling_reboot', 'defaults', 'main.yml')})
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(yaml.safe_dump({'all': {'vars': {'ansible_connection': 'local',
                                                          'ansible_python_interpreter': sys.executable},
                                                 'children': {'trays': {'hosts': {'t1': {'gpu_tray_reboot_batch': 3},
                                                                                  't2': {}}}}}}))
    return play, inventory


def test_blank_survey_answers_keep_the_inventory_value_and_the_check_runs_once(tmp_path):
    play, inventory = the_playbooks_check(tmp_path)
    answers = tmp_path / 'answers.yml'
    # AWX 24 sends null for a blank question, AWX 17 "": both leave the role's default (the inventory's) in place
    answers.write_text(yaml.safe_dump({'survey_rolling_reboot_batch': None, 'survey_rolling_reboot_drain': '',
                                       'survey_rolling_reboot_timeout': 900}))
    proc = run(tmp_path, play, '-e', '@%s' % answers, inventory=inventory, callback='json')
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    seen = recorded(proc)
    # t1's inventory sets gpu_tray_reboot_batch 3, t2 nothing (the role's 1); the answered timeout reaches both
    assert dict((host, out['batch']) for host, out in seen.items()) == {'t1': 3, 't2': 1}, seen
    for out in seen.values():
        assert out['drain'] == 'auto' and out['timeout'] == 900, out
        assert out['checked'] is True and out['result'].get('skipped') is True, out   # the second check skipped
    bad = run(tmp_path, play, '-e', 'survey_rolling_reboot_batch=all', inventory=inventory)
    assert bad.returncode == 2
    assert failure(bad) == ("The run's inputs are refused, nothing was read, written or installed: survey answer "
                            "rolling_reboot_batch must be a positive integer or a percentage above 0 and at most 100% "
                            "(such as 25%), got 'all'.")


def test_a_value_of_one_host_is_named_with_the_host(tmp_path):
    play, inventory = the_playbooks_check(tmp_path)
    data = yaml.safe_load(inventory.read_text())
    data['all']['children']['trays']['hosts']['t2'] = {'gpu_tray_bmc_required': None, 'gpu_tray_pkeys': '0x8001'}
    inventory.write_text(yaml.safe_dump(data))
    proc = run(tmp_path, play, inventory=inventory)
    assert proc.returncode == 2
    assert failure(proc) == (
        "The run's inputs are refused, nothing was read, written or installed: gpu_tray_pkeys is not a variable of "
        "gpu_tray.cluster (did you mean gpu_tray_pkey?) (on t2); gpu_tray_bmc_required is empty (null): set true or "
        "false, or remove it (on t2); a gpu_tray_* variable of the site itself goes in "
        "gpu_tray_site_variables.")


def test_a_helm_without_helm_diff_is_a_warning(tmp_path):
    """deploy_stack's opening with a helm that runs but has no helm-diff plugin: kubernetes.core.helm works without it,
    but cannot preview a release in check mode - said, not refused."""
    helm = tmp_path / 'helm'
    # `helm version` as Helm 3 prints it (kubernetes.core 6 asks for it before the plugin list), `helm plugin list`
    # without diff
    helm.write_text('#!/bin/sh\n'
                    'if [ "$1" = version ]; then\n'
                    '  echo \'version.BuildInfo{Version:"v3.17.2", GitCommit:"cc0bbbd6", GitTreeState:"clean", '
                    'GoVersion:"go1.23.7"}\'\n'
                    '  exit 0\n'
                    'fi\n'
                    'printf "NAME\\tVERSION\\tDESCRIPTION\\nsecrets\\t4.6.0\\tSecrets\\n"\n')
    helm.chmod(0o755)
    play, inventory = the_playbooks_check(tmp_path, 'deploy_stack.yml')
    proc = run(tmp_path, play, '-e', 'stack_helm_binary=%s' % helm, inventory=inventory)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert 'helm on t1 has no helm-diff plugin: kubernetes.core.helm cannot preview a release in check mode' in \
        ' '.join(proc.stdout.split() + proc.stderr.split())


def api_host_playbooks():
    """The playbooks whose first play runs on the API host (k8s_api, else localhost), not on the trays."""
    out = []
    for name in sorted(os.listdir(PLAYBOOKS)):
        play = yaml.safe_load(open(os.path.join(PLAYBOOKS, name)))[0] if name.endswith('.yml') else {}
        if name != 'awx_configure.yml' and ('k8s_api' in str(play.get('hosts')) or play.get('hosts') == 'localhost'):
            out.append(name)
    return out


API_HOST_PLAYBOOKS = api_host_playbooks()


def test_the_api_host_playbooks_are_found():
    assert {'render_bundle.yml', 'deploy_stack.yml', 'validate.yml', 'teardown_stack.yml'} <= set(API_HOST_PLAYBOOKS)


@pytest.mark.parametrize('name', API_HOST_PLAYBOOKS)
def test_a_misspelt_variable_set_on_a_tray_is_refused_by_the_api_host_playbooks(tmp_path, name):
    """The stack and the validation read the trays' gpu_tray_* values, so a play on the API host checks the trays'
    too: a misspelling in a tray's host_vars (gpu_tray_num_vf for gpu_tray_num_vfs) stops the run before anything is
    rendered, installed or read - the tray itself is never contacted (its address answers nothing)."""
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(yaml.safe_dump({'all': {'children': {
        'k8s_api': {'hosts': {'localhost': {'ansible_connection': 'local',
                                            'ansible_python_interpreter': sys.executable}}},
        'gpu_trays': {'hosts': {'tray01': {'ansible_host': '192.0.2.1', 'gpu_tray_num_vf': 8},
                                'tray02': {'ansible_host': '192.0.2.2'}}}}}}))
    bundle = tmp_path / 'bundle'
    proc = run(tmp_path, os.path.join(PLAYBOOKS, name), '-e', 'gpu_tray_recipe=gb200-nvke-ubuntu-training',
               '-e', 'gpu_tray_bundle_dir=%s' % bundle, '-e', 'gpu_tray_report_dir=%s' % (tmp_path / 'report'),
               inventory=inventory)
    assert proc.returncode == 2, proc.stdout[-4000:] + proc.stderr[-2000:]
    msg = failure(proc)
    assert msg.startswith("The run's inputs are refused, nothing was read, written or installed: "), msg
    assert 'gpu_tray_num_vf is not a variable of gpu_tray.cluster (did you mean gpu_tray_num_vfs?) (on tray01)' \
        in msg, msg
    assert 'fatal: [localhost]: FAILED!' in proc.stdout and 'tray02' not in msg
    # one task ran on the API host, the check; nothing after it, no tray was contacted
    assert proc.stdout.count('TASK [') == 1 and 'UNREACHABLE' not in proc.stdout, proc.stdout[-4000:]
    assert not bundle.exists() and not (tmp_path / 'report').exists()
