# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Each module once through `ansible localhost -m gpu_tray.cluster.<m> --check` against a fixture tree.

This proves what the in-process tests cannot: the FQCN resolves, module_utils ship with the module
(AnsiballZ), the argument spec and check mode are accepted by the controller, and the return shape
survives the trip (ansible_facts land in the host's facts).
"""

import json
import os
import socket
import subprocess
import sys

import pytest

import tooldouble
from ansible_env import checkout_env
from trayfixture import set_pkeys
from unithelpers import containerd_tree, fixture_path

HOST = socket.gethostname()


def test_adhoc_rdma_facts(adhoc, tray):
    rc, res = adhoc('rdma_facts', {'sysfs_root': tray['sys']})
    assert rc == 0 and res['changed'] is False
    assert res['ansible_facts']['gpu_tray_rdma']['rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']


def test_adhoc_ib_pkey_check(adhoc, tray):
    set_pkeys(tray, 'mlx5_5', ['0x7fff'])
    rc, res = adhoc('ib_pkey_check', {'sysfs_root': tray['sys']})
    assert rc != 0 and res['failed'] is True
    assert res['failed_ports'] == ['mlx5_5 port 1 (VF of 0000:06:00.0)']
    assert res['msg'] == ('1 InfiniBand port is a limited member of partition 0xffff, not a full member: VF mlx5_5 of '
                          'mlx5_3.')
    assert res['problems'] == ['mlx5_5 port 1 (VF of 0000:06:00.0) GUID b83f:d203:00a1:b214 holds '
                               '0x7fff (default partition, limited member)']
    assert 'UFM' in res['fix']
    # the check record, as every phase reports it
    assert [(c['name'], c['status'], c['message'], c['details'], c['fix']) for c in res['checks']] == [
        ('pkeys', 'failed', res['msg'], res['problems'], res['fix'])]
    rc, res = adhoc('ib_pkey_check', {'sysfs_root': tray['sys'], 'pkey': 'xyz'})
    assert rc != 0 and 'option pkey' in res['msg'] and 'Traceback' not in res['msg']


def test_adhoc_nic_firmware(adhoc, tmp_path):
    tool, log = tooldouble.mstconfig(str(tmp_path), {'0000:04:00.0': {'e': 'cx7_nextboot8_e.txt'}})
    rc, res = adhoc('nic_firmware', {'devices': ['0000:04:00.0'], 'mstconfig_path': tool, 'min_num_vfs': 16})
    assert rc != 0 and res['failed_devices'] == ['0000:04:00.0']
    assert res['devices']['0000:04:00.0']['params']['NUM_OF_VFS']['next_boot'] == '8'
    assert tooldouble.read_log(log)[0] == {'argv': ['-e', '-d', '0000:04:00.0', 'q'], 'LC_ALL': 'C'}
    rc, res = adhoc('nic_firmware', {'devices': ['0000:04:00.0'], 'mstconfig_path': tool, 'min_num_vfs': -1})
    assert rc != 0 and 'option min_num_vfs' in res['msg']


def test_adhoc_kernel_cmdline(adhoc, tray):
    rc, res = adhoc('kernel_cmdline', {'proc_root': tray['proc'], 'required': ['iommu.passthrough=1', 'earlycon'],
                                       'forbidden': ['isolcpus']})
    assert rc == 0 and res['changed'] is False and res['present'] == ['iommu.passthrough=1', 'earlycon']


def test_adhoc_hugepage_check(adhoc, tray):
    rc, res = adhoc('hugepage_check', {'sysfs_root': tray['sys'], 'requested': [{'size': '1G', 'count': 2}]})
    assert rc != 0 and res['available_sizes'] == ['2M', '512M', '16G']
    assert not res['msg'].startswith(HOST) and 'no 1G huge page pool' in res['msg'] and res['checked'] == 'counts'


def test_adhoc_containerd_config(adhoc, tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml', [('99-nvidia-v3.toml', '99-nvidia.toml')])
    rc, res = adhoc('containerd_config', {'config_path': config, 'dropin_dir': dropdir,
                                          'runtime_config_source': 'file'})
    assert rc == 0 and res['version'] == 3 and res['dropins'][0]['version'] == 3


def test_adhoc_tray_facts(adhoc, tray, tmp_path):
    tool, _log = tooldouble.systemctl(str(tmp_path), {'is-enabled': {'nvidia-imex.service': 'enabled'},
                                                      'is-active': {'nvidia-imex.service': 'active',
                                                                    'containerd.service': 'active'}})
    rc, res = adhoc('tray_facts', {'sysfs_root': tray['sys'], 'proc_root': tray['proc'], 'systemctl_path': tool,
                                   'os_release_path': fixture_path('os-release', 'ubuntu-24.04')})
    assert rc == 0 and res['changed'] is False
    facts = res['ansible_facts']['gpu_tray']
    assert facts['os_version_id'] == '24.04' and facts['kernel_flavour_page_size'] == 65536
    assert facts['nvidia_imex'] == {'unit': 'nvidia-imex.service', 'enabled': 'enabled', 'active': 'active'}
    assert facts['container_runtime'] == 'containerd'


@pytest.mark.parametrize('module', ['rdma_facts', 'ib_pkey_check', 'nic_firmware', 'kernel_cmdline',
                                    'hugepage_check', 'containerd_config', 'tray_facts'])
def test_adhoc_unknown_option_is_clean(adhoc, module):
    args = {'no_such_option': 1}
    args.update({'nic_firmware': {'devices': ['0000:03:00.0']},
                 'hugepage_check': {'requested': [{'size': '2M'}]}}.get(module, {}))
    rc, res = adhoc(module, args)
    assert rc != 0 and 'no_such_option' in res['msg'] and 'Traceback' not in res['msg']


def test_module_defaults_group_sets_roots_for_every_module(tmp_path, tray, collections_root, repo_root):
    """One module_defaults entry for group/gpu_tray.cluster.host_checks must be accepted by all seven modules."""
    config, _dropdir = containerd_tree(tmp_path, 'root-v3.toml')
    systemctl, _log = tooldouble.systemctl(str(tmp_path), {'is-enabled': {}, 'is-active': {}})
    mstconfig, _log = tooldouble.mstconfig(str(tmp_path), {
        bdf: {'e': 'cx7_ok_e.txt'} for bdf in ('0000:03:00.0', '0000:04:00.0', '0000:06:00.0', '0000:07:00.0')})
    playbook = tmp_path / 'play.yml'
    playbook.write_text(json.dumps([{
        'name': 'Host checks on a simulated tray', 'hosts': 'localhost', 'gather_facts': False,
        'module_defaults': {'group/gpu_tray.cluster.host_checks': {'sysfs_root': tray['sys'],
                                                                   'proc_root': tray['proc']}},
        'tasks': [
            {'name': 'rdma', 'gpu_tray.cluster.rdma_facts': {}},
            {'name': 'pkeys', 'gpu_tray.cluster.ib_pkey_check': {}},
            {'name': 'firmware', 'gpu_tray.cluster.nic_firmware': {'mstconfig_path': mstconfig, 'min_num_vfs': 16}},
            {'name': 'cmdline', 'gpu_tray.cluster.kernel_cmdline': {'required': ['iommu.passthrough=1']}},
            {'name': 'hugepages', 'gpu_tray.cluster.hugepage_check': {'requested': [{'size': '2M', 'count': 5128}]}},
            {'name': 'containerd', 'gpu_tray.cluster.containerd_config': {'config_path': config,
                                                                          'runtime_config_source': 'file'}},
            {'name': 'tray', 'gpu_tray.cluster.tray_facts': {'systemctl_path': systemctl}},
            {'name': 'facts landed', 'ansible.builtin.assert': {'that': [
                "ansible_facts.gpu_tray_rdma.rails == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']",
                "ansible_facts.gpu_tray.kernel_release == '6.8.0-1021-nvidia-64k'"]}},
        ]}]))
    env = checkout_env(collections=collections_root, config=False, home=str(tmp_path / 'home'))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '--check',
                           '-i', 'localhost,', '-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable,
                           str(playbook)], cwd=repo_root, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert 'ok=8' in proc.stdout and 'failed=0' in proc.stdout


def test_pkey_from_inventory_like_variables(tmp_path, tray, collections_root, repo_root):
    """The preflight role passes pkey: "{{ preflight_pkey }}": a quoted inventory string reaches the module as a
    string and works; an unquoted YAML 0x8123 arrives as an integer (tagged by Ansible) and is the key 0x8123."""
    playbook = tmp_path / 'pkey.yml'
    playbook.write_text(
        '- name: P_Key from variables\n'
        '  hosts: localhost\n'
        '  gather_facts: false\n'
        '  vars:\n'
        '    quoted_pkey: "0xffff"\n'
        '    unquoted_pkey: 0x8123\n'
        '    preflight_pkey: "{{ quoted_pkey }}"\n'
        '  tasks:\n'
        '    - name: Quoted\n'
        '      gpu_tray.cluster.ib_pkey_check:\n'
        '        sysfs_root: %s\n'
        '        pkey: "{{ preflight_pkey }}"\n'
        '    - name: Unquoted\n'
        '      gpu_tray.cluster.ib_pkey_check:\n'
        '        sysfs_root: %s\n'
        '        pkey: "{{ unquoted_pkey }}"\n'
        '      register: unquoted\n'
        '      ignore_errors: true\n'
        '    - name: Checked as 0x8123, which the tray does not hold\n'
        '      ansible.builtin.assert:\n'
        '        that:\n'
        '          - unquoted is failed\n'
        '          - unquoted.pkey == "0x8123"\n'
        '          - "\\"Tagged\\" not in unquoted.msg"\n' % (tray['sys'], tray['sys']))
    env = checkout_env(collections=collections_root, config=False, home=str(tmp_path / 'home'))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'),
                           '-i', 'localhost,', '-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable,
                           str(playbook)], cwd=repo_root, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert 'ok=3' in proc.stdout and 'ignored=1' in proc.stdout
