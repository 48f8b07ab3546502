# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter role_result: the one result record a preparing role exports."""

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.role_result import role_result

PLAN = {'role': 'kernel_tuning', 'reboot_required': True, 'reason': 'kernel arguments a are not in /proc/cmdline yet',
        'verify': {'cmdline_required': ['a']}, 'writes': {'grub_dropin': True}}


def test_the_record_of_a_role_whose_write_changed_the_tray():
    record = role_result(PLAN, [{'changed': False, 'skipped': True}, {'changed': True}])
    assert record == {'role': 'kernel_tuning', 'changed': True, 'reboot_required': True,
                      'reason': PLAN['reason'], 'verify': {'cmdline_required': ['a']}}


def test_a_loop_counts_when_one_item_changed_and_nothing_changed_is_false():
    assert role_result(PLAN, [{'results': [{'changed': False}, {'changed': True}]}])['changed'] is True
    quiet = role_result(dict(PLAN, reboot_required=False, reason=None, verify=None), [{'skipped': True}, {}, None])
    assert quiet == {'role': 'kernel_tuning', 'changed': False, 'reboot_required': False, 'reason': '', 'verify': {}}


@pytest.mark.parametrize('plan, tasks', [({}, []), (None, []), (PLAN, {'changed': True})])
def test_anything_but_a_plan_and_a_list_is_refused(plan, tasks):
    with pytest.raises(AnsibleFilterError):
        role_result(plan, tasks)
