# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter bmc_state: a thin wrapper over plugin_utils/bmc.py that refuses what is not a result (the BMC access is judged by
action reboot_step, plugin_utils/bmc.py access: tests/unit/plugins/plugin_utils/test_bmc.py)."""

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.bmc_state import FilterModule as StateFilters

bmc_state = StateFilters().filters()['bmc_state']
SETTINGS = {'address': 'https://bmc', 'username': 'u', 'password': True, 'system_id': ''}
ANSWER = {'redfish_facts': {'system': {'entries': [[{'system_uri': '/redfish/v1/Systems/1'}, {
    'Id': '1', 'SerialNumber': 'S1', 'PowerState': 'On', 'Status': {'Health': 'OK'},
    'BootProgress': {'LastState': 'MemoryInitializationStarted'}}]]}}}


def test_bmc_state_passes_count_recover_and_attempted():
    found = bmc_state(ANSWER, SETTINGS, None, 'S1', '5', 'power_cycle', False)
    assert found['boot_progress'] == 'MemoryInitializationStarted' and found['recovery']['power_cycle']
    assert not bmc_state(ANSWER, SETTINGS, None, 'S1', 5, 'power_cycle', True)['recovery']['power_cycle']


def test_bmc_state_defaults_no_power_cycle_and_a_tray_not_yet_cycled():
    assert not bmc_state(ANSWER, SETTINGS)['recovery']['power_cycle']
    assert bmc_state(ANSWER, SETTINGS, None, 'S1', 5, 'power_cycle')['recovery']['power_cycle']


@pytest.mark.parametrize('call', [
    lambda: bmc_state(['x'], SETTINGS),
    lambda: bmc_state(ANSWER, 'x'),
    lambda: bmc_state(ANSWER, SETTINGS, None, 'S1', 'many'),
    lambda: bmc_state(ANSWER, SETTINGS, None, 'S1', 5, 'reboot'),
])
def test_anything_else_is_refused_with_a_filter_error(call):
    with pytest.raises(AnsibleFilterError):
        call()
