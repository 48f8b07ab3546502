# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter rail_ippools (nv-ipam IPPools; rules in plugin_utils/stack.py, test_stack)."""

from ansible_collections.gpu_tray.cluster.plugins.filter.rail_ippools import FilterModule, rail_ippools


def test_registered_under_its_name():
    assert FilterModule().filters() == {'rail_ippools': rail_ippools}


def test_defaults_are_the_nvke_guide_pools():
    """/22 per rail and perNodeBlockSize 50 when the role passes only the base and the rails."""
    assert rail_ippools('10.255.0.0/16', ['mlx5_0', 'mlx5_1']) == [
        {'rail': 0, 'name': 'sriov-ib-rail-0', 'subnet': '10.255.0.0/22', 'per_node_block_size': 50},
        {'rail': 1, 'name': 'sriov-ib-rail-1', 'subnet': '10.255.4.0/22', 'per_node_block_size': 50}]
