"""Filter unknown_variables: misspelt gpu_tray_* inventory variables with the closest known name."""
import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.unknown_variables import FilterModule, unknown_variables

KNOWN = ['gpu_tray_pkey', 'gpu_tray_rails', 'gpu_tray_num_vfs', 'gpu_tray_report_dir', 'gpu_tray_ib_core_netns_mode']


def test_misspelt_names_get_the_closest_known_one():
    found = unknown_variables(['gpu_tray_pkeys', 'gpu_tray_rails', 'ansible_host', 'gpu_tray_numvfs',
                               'gpu_tray_wholly_unrelated_thing', 'gpu_tray_lab'], KNOWN, ['gpu_tray_lab'])
    assert found == [{'name': 'gpu_tray_numvfs', 'suggestion': 'gpu_tray_num_vfs'},
                     {'name': 'gpu_tray_pkeys', 'suggestion': 'gpu_tray_pkey'},
                     {'name': 'gpu_tray_wholly_unrelated_thing', 'suggestion': None}]


def test_known_allowed_and_other_prefixes_pass():
    assert unknown_variables(KNOWN + ['preflight_pkey', 'gpu_trays'], KNOWN) == []
    assert unknown_variables(['site_x'], KNOWN, prefix='site_') == [{'name': 'site_x', 'suggestion': None}]
    with pytest.raises(AnsibleFilterError, match='lists of names'):
        unknown_variables('gpu_tray_pkey', KNOWN)


def test_registered_under_its_name():
    assert FilterModule().filters() == {'unknown_variables': unknown_variables}
