# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One definition of a preparing role's inputs: what the preflight reads ahead for each role (the tray_plan action's
prefetch, plugin_utils/role_inputs.py) is what the role's own tray_plan task then hands its planner - the same inputs,
so the same read - on both platforms, with inventory overrides, role variables given with -e and a control-plane
host. Both sides are made by Ansible itself in a subprocess (roleprobe): the role's side by the variable manager for
the role's task, as the task executor templates its arguments. A change to either side - a role task that passes
other inputs, a default restated elsewhere, another layering in the resolver - fails here."""

import importlib.util
import os

import pytest

from ansible_collections.gpu_tray.cluster.plugins.action.tray_plan import PLANNERS
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import role_inputs, tray_read
import roleprobe

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))

CASES = {
    'vr200': {'host_vars': {'gpu_tray_platform': 'rke2-vr200'}},
    'gb200 kubeflow': {'host_vars': {'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_recipe': 'gb200-nvke-ubuntu-kubeflow'}},
    'vr200 overrides': {
        'host_vars': {'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_tuned_intent': 'inference',
                      'gpu_tray_tuning_hugepages': [{'size': '2M', 'count': 64}, {'size': '1G', 'count': 2}],
                      'gpu_tray_imex_host_service': 'enabled', 'gpu_tray_ib_core_netns_mode': 'shared',
                      'gpu_tray_sysfs_root': '/srv/tray/sys', 'gpu_tray_proc_root': '/srv/tray/proc',
                      'gpu_tray_sysctl_apply': False, 'kernel_tuning_limit_stack': 0},
        'extra_vars': {'kernel_tuning_grub_cfg': '/boot/efi/EFI/ubuntu/grub.cfg',
                       'rdma_netns_conf_file': '/etc/modprobe.d/50-site-netns.conf'}},
    'gb200 control plane': {'host_vars': {'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_rdma_modules_enabled': True},
                            'groups': ['control_plane']},
}


@pytest.fixture(scope='module')
def probed():
    return dict(zip(CASES, roleprobe.probe(list(CASES.values()))))


def test_every_tray_plan_task_of_a_preparing_role_passes_the_roles_inputs(probed):
    for role in role_inputs.PREPARING:
        assert set(probed['vr200']['inputs_arg'][role]) == {'{{ %s }}' % role_inputs.variable(role)}, role


@pytest.mark.parametrize('case', sorted(CASES))
def test_the_read_ahead_asks_for_exactly_what_each_role_then_needs(probed, case):
    answer = probed[case]
    ahead = {}
    for role in role_inputs.PREPARING:
        assert answer['readahead'][role] == answer['role'][role], role
        needs = PLANNERS[role].needs(answer['role'][role])
        assert PLANNERS[role].needs(answer['readahead'][role]) == needs, role
        ahead = tray_read.merge(ahead, PLANNERS[role].needs(answer['readahead'][role]))
    # the one read of the preflight answers every role: none reads again
    for role in role_inputs.PREPARING:
        assert tray_read.covers(ahead, PLANNERS[role].needs(answer['role'][role])), role


def test_the_cases_reach_what_they_claim(probed):
    """The inputs above are the roles' (the profile's, the inventory's, -e), not an empty agreement."""
    vr200 = probed['vr200']['role']
    assert vr200['kernel_tuning']['intent'] == 'multiNodeTraining'
    assert vr200['kernel_tuning']['hugepages'] == [{'size': '2M', 'count': 5128}]
    assert vr200['kernel_tuning']['sysctl_file'] == '/etc/sysctl.d/90-gpu-tray-tuning.conf'
    assert (vr200['imex']['host_service'], vr200['rdma_netns']['mode']) == ('masked', 'exclusive')
    assert vr200['rdma_modules']['managed'] is False
    gb200 = probed['gb200 kubeflow']['role']
    assert gb200['kernel_tuning']['intent'] == '' and PLANNERS['kernel_tuning'].needs(gb200['kernel_tuning']) == {}
    assert gb200['rdma_modules']['managed'] is True and gb200['rdma_modules']['load'] == ['rdma_ucm', 'ib_umad',
                                                                                          'ib_ipoib']
    assert (gb200['imex']['host_service'], gb200['rdma_netns']['mode']) == ('unmanaged', 'unmanaged')
    mine = probed['vr200 overrides']['role']
    assert mine['kernel_tuning']['intent'] == 'inference'
    assert mine['kernel_tuning']['hugepages'][1] == {'size': '1G', 'count': 2}
    assert mine['kernel_tuning']['grub_cfg'] == '/boot/efi/EFI/ubuntu/grub.cfg'
    assert (mine['kernel_tuning']['sysfs_root'], mine['kernel_tuning']['limit_stack']) == ('/srv/tray/sys', 0)
    assert mine['kernel_tuning']['sysctl_apply'] is False
    assert (mine['imex']['host_service'], mine['rdma_netns']['mode']) == ('enabled', 'shared')
    assert mine['rdma_netns']['conf_file'] == '/etc/modprobe.d/50-site-netns.conf'
    assert probed['gb200 control plane']['role']['rdma_modules']['managed'] is False


def test_only_a_preparing_role_resolves():
    with pytest.raises(role_inputs.RoleInputsError, match='validate is not a preparing role'):
        role_inputs.layered(None, 'validate', {})


def test_a_refusal_names_the_variable_the_user_sets_as_the_inventory_spec_reads_it():
    """user_variable reads the role defaults as tools/inventory_spec.py does (the gpu_tray_* -> option feeds the
    preflight checks the inventory with): the variable a refusal names is the one the user sets."""
    spec = importlib.util.spec_from_file_location('inventory_spec', os.path.join(REPO, 'tools', 'inventory_spec.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    feeds = [(role, option, name) for name, uses in tool.feeds().items() for role, option, _spec in uses
             if role in role_inputs.PREPARING]
    assert ('kernel_tuning', 'kernel_tuning_hugepages', 'gpu_tray_tuning_hugepages') in feeds
    for role, option, name in feeds:
        assert role_inputs.user_variable(role, option[len(role) + 1:]) == name, option
    # an input without an inventory variable: the role variable itself
    assert role_inputs.user_variable('kernel_tuning', 'extra_args') == 'kernel_tuning_extra_args'
