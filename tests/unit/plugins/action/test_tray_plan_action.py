# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The tray_plan action in a real ansible-playbook run (localhost, a simulated tray): one read per host and run,
reused while it covers what a planner needs, grown when it does not, never taken from another run (a fact cache);
the platform_profile lookup and the role_result filter in the same playbook."""

import json
import os
import subprocess
import sys

import pytest

from ansible_env import checkout_env
from test_check_inputs import COLLECTIONS_ROOT, REPO   # noqa: I100 (the action tests' checkout and collections path)

PLAYBOOK = '''
- hosts: localhost
  gather_facts: false
  vars:
    netns: {mode: exclusive, conf_file: "%(root)s/netns.conf", modprobe_dirs: ["%(root)s/modprobe.d"],
            sysfs_root: "%(sys)s"}
    modules: {managed: true, load: [ib_umad], load_file: "%(root)s/modules.conf", sysfs_root: "%(sys)s"}
  tasks:
    - {name: first, gpu_tray.cluster.tray_plan: {planner: rdma_netns, inputs: "{{ netns }}"}, register: first}
    - {name: again, gpu_tray.cluster.tray_plan: {planner: rdma_netns, inputs: "{{ netns }}"}, register: again}
    - {name: fresh, gpu_tray.cluster.tray_plan: {planner: rdma_netns, inputs: "{{ netns }}", fresh: true},
       register: fresh}
    - {name: more, gpu_tray.cluster.tray_plan: {planner: rdma_modules, inputs: "{{ modules }}"}, register: more}
    - {name: both, gpu_tray.cluster.tray_plan: {planner: rdma_netns, inputs: "{{ netns }}"}, register: both}
    - name: record
      ansible.builtin.copy:
        dest: "%(root)s/out.json"
        content: >-
          {{ {'calls': [first, again, fresh, more, both] | map(attribute='read.module_call') | list,
              'files': (ansible_facts.gpu_tray_read.request.files | default([])),
              'msg': first.msg, 'plan': first.plan,
              'result': first.plan | gpu_tray.cluster.role_result([{'changed': false}, {'results': [{'changed': true}]}]),
              'by_recipe': lookup('gpu_tray.cluster.platform_profile', recipe='vr200-rke2-ubuntu-inference'),
              'no_intent': lookup('gpu_tray.cluster.platform_profile', 'rke2-vr200', intent='').tuning_profile}
             | to_json }}
        mode: "0644"
'''
SECOND_RUN = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - name: the kept read of the first run is in the fact cache
      ansible.builtin.assert:
        that: ansible_facts.gpu_tray_read.request.files | length == 3
    - name: plan again in a new run
      gpu_tray.cluster.tray_plan:
        planner: rdma_netns
        inputs: {mode: exclusive, conf_file: "%(root)s/netns.conf", modprobe_dirs: ["%(root)s/modprobe.d"],
                 sysfs_root: "%(sys)s"}
      register: new_run
    - name: record
      ansible.builtin.copy: {dest: "%(root)s/out2.json", content: "{{ new_run.read | to_json }}", mode: "0644"}
'''
BAD = '''
- hosts: localhost
  gather_facts: false
  tasks:
    - name: a lookup of an unknown platform
      ansible.builtin.debug:
        msg: "{{ lookup('gpu_tray.cluster.platform_profile', 'rke2-vr300') }}"
'''


def run(tmp_path, text, name, cache):
    path = tmp_path / name
    path.write_text(text % {'root': tmp_path, 'sys': tmp_path / 'tray' / 'sys'})
    env = checkout_env(REPO, collections=COLLECTIONS_ROOT, home=str(tmp_path / 'home'),
                       ANSIBLE_CACHE_PLUGIN='ansible.builtin.jsonfile', ANSIBLE_CACHE_PLUGIN_CONNECTION=str(cache),
                       ANSIBLE_GATHERING='explicit', ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_INVENTORY_UNPARSED_WARNING='0')
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,',
                           '-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable, str(path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def played(tmp_path, tray):
    (tmp_path / 'modprobe.d').mkdir()
    cache = tmp_path / 'facts'
    proc = run(tmp_path, PLAYBOOK, 'play.yml', cache)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return tmp_path, cache, json.loads((tmp_path / 'out.json').read_text())


def test_one_read_per_run_reused_grown_and_renewed(played):
    tmp, _cache, out = played
    # first reads; again reuses; fresh reads; more needs another file (read, with the first's parts); both reuses it
    assert out['calls'] == [True, False, True, True, False]
    # the roles' files and their directory (which a role may create, and its way back then removes)
    assert sorted(out['files']) == sorted([str(tmp / 'modules.conf'), str(tmp / 'netns.conf'), str(tmp)])
    assert out['plan']['writes'] == {'file': True, 'remove': False} and out['plan']['reboot_required']
    assert out['msg'].startswith('rdma_netns: writes file; reboot required (ib_core netns_mode is shared, not exclusive')


def test_role_result_and_the_lookup_in_a_playbook(played):
    _tmp, _cache, out = played
    assert out['result'] == {'role': 'rdma_netns', 'changed': True, 'reboot_required': True,
                             'reason': out['plan']['reason'], 'verify': {'netns_mode': 'exclusive'}}
    assert out['by_recipe']['name'] == 'rke2-vr200'
    assert out['by_recipe']['tuning_profile']['hugepages'] == [{'size': '2M', 'count': 8192}]
    assert out['no_intent'] == {'intent': '', 'cmdline': [], 'hugepages': [], 'default_hugepagesz': '', 'sysctls': {}}


def test_a_read_kept_by_another_run_is_never_reused(played):
    tmp_path, cache, _out = played
    [cached_file] = cache.glob('*localhost')
    cached = json.loads(cached_file.read_text())
    cached = json.loads(cached['__payload__']) if '__payload__' in cached else cached      # 2.19's envelope
    assert cached['gpu_tray_read']['run'], 'the first run kept its read in the fact cache'
    proc = run(tmp_path, SECOND_RUN, 'second.yml', cache)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert json.loads((tmp_path / 'out2.json').read_text())['module_call'] is True


def test_an_unknown_platform_fails_naming_the_known_ones(tmp_path):
    proc = run(tmp_path, BAD, 'bad.yml', tmp_path / 'facts')
    assert proc.returncode != 0
    assert "no platform profile 'rke2-vr300' (known: nvke-gb200, rke2-vr200" in proc.stdout + proc.stderr
