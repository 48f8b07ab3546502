# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter gpu_tray.cluster.check_record: the records the validate role writes itself (a phase that stopped, a
check that did not run) in the one record shape of module_utils/check_record.py."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.check_record import FilterModule, check_record
from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import KEYS


def test_a_record_has_the_one_shape_and_a_fix_only_where_it_failed():
    stopped = check_record('readiness-stopped', 'failed', 'The readiness phase stopped at task "x":\n  refused',
                           fix='Fix  it.')
    assert sorted(stopped) == sorted(KEYS)
    assert stopped['message'] == 'The readiness phase stopped at task "x": refused' and stopped['fix'] == 'Fix it.'
    skipped = check_record('gpu-trays', 'skipped', 'No GPU trays.', fix='not kept', object='tray01')
    assert skipped['fix'] == '' and skipped['object'] == 'tray01' and skipped['details'] == []
    assert FilterModule().filters() == {'check_record': check_record}


def test_a_status_that_is_none_of_the_four_is_an_error():
    with pytest.raises(AnsibleFilterError, match="check_record: check x: status 'ok' is not one of"):
        check_record('x', 'ok', 'fine')
