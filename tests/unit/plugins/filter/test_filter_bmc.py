# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters bmc_access and bmc_state: thin wrappers over plugin_utils/bmc.py that refuse what is not a result."""

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.bmc_access import FilterModule as AccessFilters
from ansible_collections.gpu_tray.cluster.plugins.filter.bmc_state import FilterModule as StateFilters

bmc_access = AccessFilters().filters()['bmc_access']
bmc_state = StateFilters().filters()['bmc_state']
SETTINGS = {'address': 'https://bmc', 'username': 'u', 'password': True, 'system_id': ''}
ANSWER = {'redfish_facts': {'system': {'entries': [[{'system_uri': '/redfish/v1/Systems/1'}, {
    'Id': '1', 'SerialNumber': 'S1', 'PowerState': 'On', 'Status': {'Health': 'OK'},
    'BootProgress': {'LastState': 'MemoryInitializationStarted'}}]]}}}


def test_bmc_access_judges_a_registered_result():
    assert bmc_access(ANSWER, SETTINGS, 'S1')['ok']
    assert bmc_access({'failed': True, 'msg': 'HTTP Error 401'}, SETTINGS, 'S1')['kind'] == 'auth'
    assert bmc_access(None, dict(SETTINGS, address=''))['kind'] == 'settings'


def test_bmc_state_passes_count_recover_and_attempted():
    found = bmc_state(ANSWER, SETTINGS, None, 'S1', '5', 'power_cycle', False)
    assert found['boot_progress'] == 'MemoryInitializationStarted' and found['recovery']['power_cycle']
    assert not bmc_state(ANSWER, SETTINGS, None, 'S1', 5, 'power_cycle', True)['recovery']['power_cycle']


def test_bmc_state_defaults_no_power_cycle_and_a_tray_not_yet_cycled():
    assert not bmc_state(ANSWER, SETTINGS)['recovery']['power_cycle']
    assert bmc_state(ANSWER, SETTINGS, None, 'S1', 5, 'power_cycle')['recovery']['power_cycle']


@pytest.mark.parametrize('call', [
    lambda: bmc_access('text', SETTINGS),
    lambda: bmc_access(ANSWER, None),
    lambda: bmc_state(['x'], SETTINGS),
    lambda: bmc_state(ANSWER, 'x'),
    lambda: bmc_state(ANSWER, SETTINGS, None, 'S1', 'many'),
    lambda: bmc_state(ANSWER, SETTINGS, None, 'S1', 5, 'reboot'),
])
def test_anything_else_is_refused_with_a_filter_error(call):
    with pytest.raises(AnsibleFilterError):
        call()
