# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter sriov_rails (the stack role's SriovNetworkNodePolicies; rules in plugin_utils/stack.py, test_stack)."""

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.sriov_rails import FilterModule, sriov_rails

FACTS = {'tray01': {'rails': ['mlx5_0', 'mlx5_4'],
                    'devices': [{'name': 'mlx5_0', 'kind': 'pf', 'pci_address': '0000:03:00.0', 'sriov_totalvfs': 16},
                                {'name': 'mlx5_4', 'kind': 'pf', 'pci_address': '0000:07:00.0', 'sriov_totalvfs': 16}]}}


def test_registered_under_its_name():
    assert FilterModule().filters() == {'sriov_rails': sriov_rails}


def test_sixteen_vfs_per_rail_by_default():
    """NUM_OF_VFS 16 of the NVKE GB200 guide when the role passes no count."""
    assert sriov_rails(FACTS, ['mlx5_0', 'mlx5_4']) == [
        {'rail': 0, 'device': 'mlx5_0', 'root_devices': ['0000:03:00.0'], 'num_vfs': 16},
        {'rail': 1, 'device': 'mlx5_4', 'root_devices': ['0000:07:00.0'], 'num_vfs': 16}]


@pytest.mark.parametrize('rails, num_vfs, words', [
    (['mlx5_0', 'mlx5_3'], 16, 'tray tray01 has no rail mlx5_3 in its rdma facts (rails found: mlx5_0, mlx5_4)'),
    (['mlx5_0'], 17, 'numVfs 17 for rail mlx5_0 is above the firmware count on tray01 (sriov_totalvfs 16)'),
])
def test_a_rail_the_trays_cannot_serve_is_a_filter_error(rails, num_vfs, words):
    with pytest.raises(AnsibleFilterError, match=words.replace('(', r'\(').replace(')', r'\)')):
        sriov_rails(FACTS, rails, num_vfs)
