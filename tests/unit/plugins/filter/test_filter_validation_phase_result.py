# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter validation_phase_result: whether a phase failed, and its findings in one line (roles/validate record.yml)."""

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.validation_phase_result import (
    FilterModule,
    validation_phase_result,
)

CHECKS = [{'name': 'tray0%d/pkeys' % i, 'status': 'failed', 'object': 'tray0%d' % i,
           'message': 'tray0%d: 16 VF ports are limited members of 0x8001.' % i} for i in range(1, 5)]


def test_registered_under_its_name():
    assert FilterModule().filters()['validation_phase_result'] is validation_phase_result


def test_three_findings_by_default_without_the_object_in_front():
    result = validation_phase_result({'name': 'trays', 'checks': CHECKS + [{'name': 'x', 'status': 'passed'}]})
    assert result == {'status': 'failed', 'findings': 'tray01/pkeys: 16 VF ports are limited members of 0x8001; '
                                                      'tray02/pkeys: 16 VF ports are limited members of 0x8001; '
                                                      'tray03/pkeys: 16 VF ports are limited members of 0x8001; '
                                                      '1 more'}


def test_limit_as_the_template_gives_it():
    assert validation_phase_result({'name': 'trays', 'checks': CHECKS}, '1')['findings'] == (
        'tray01/pkeys: 16 VF ports are limited members of 0x8001; 3 more')


def test_passed_and_empty_phases():
    assert validation_phase_result({'name': 'trays', 'checks': [{'name': 'a', 'status': 'passed'}]}) == {
        'status': 'passed', 'findings': ''}
    assert validation_phase_result({'name': 'trays', 'checks': []}) == {'status': 'skipped', 'findings': ''}


@pytest.mark.parametrize('phase, limit, words', [
    (['trays'], 3, 'the input must be a phase dict, got list'),
    ({'name': 'trays', 'checks': CHECKS}, 'three', "invalid literal for int() with base 10: 'three'"),
    ({'name': 'burn-in', 'checks': []}, 3, "unknown phase 'burn-in'"),
])
def test_bad_input_is_a_filter_error(phase, limit, words):
    with pytest.raises(AnsibleFilterError) as raised:
        validation_phase_result(phase, limit)
    assert str(raised.value).startswith('validation_phase_result: ') and words in str(raised.value)
