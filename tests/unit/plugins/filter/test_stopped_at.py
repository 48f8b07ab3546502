# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter gpu_tray.cluster.stopped_at: the one shape of "where the run stopped" every role's rescue records
(validate, the stack's deploy/teardown/recovery, the rolling reboot) - normalised once."""
from ansible_collections.gpu_tray.cluster.plugins.filter.stopped_at import FilterModule, stopped_at


def test_the_message_without_ansible_cores_words_on_one_line():
    result = {'failed': True, 'msg': 'Task failed: Module failed: HTTPSConnectionPool(host=\'127.0.0.1\', port=1):\n'
                                     '   Connection refused'}
    assert stopped_at(result, 'List NodeMaintenance objects') == {
        'task': 'List NodeMaintenance objects',
        'message': "HTTPSConnectionPool(host='127.0.0.1', port=1): Connection refused"}


def test_a_loops_failed_items_follow_its_own_message():
    result = {'msg': 'One or more items failed', 'results': [
        {'failed': False, 'msg': 'fine'}, {'failed': True, 'msg': 'Module failed: chart not found'},
        {'failed': True, 'msg': ''}]}
    assert stopped_at(result, 'Install')['message'] == 'One or more items failed: chart not found'


def test_nothing_known_and_a_long_message():
    assert stopped_at(None) == {'task': '?', 'message': 'no message'}
    long = stopped_at({'msg': 'x ' * 400}, 't', limit=50)['message']
    assert len(long) == 50 and long.endswith('...')
    assert FilterModule().filters() == {'stopped_at': stopped_at}
