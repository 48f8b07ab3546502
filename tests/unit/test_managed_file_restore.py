"""Filter managed_file_restore: remove what a role wrote into a file, and only that."""
import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.managed_file_restore import managed_file_restore

MARKER = '# {mark} gpu_tray.cluster.rdma_netns - managed by Ansible'
OURS = '# BEGIN gpu_tray.cluster.rdma_netns - managed by Ansible\noptions ib_core netns_mode=0\n' \
       '# END gpu_tray.cluster.rdma_netns - managed by Ansible\n'


def entry(content, exists=True):
    return {'exists': exists, 'is_file': exists, 'content': content if exists else None, 'mode': '0644', 'uid': 0,
            'gid': 0}


def test_a_file_with_only_the_block_goes_whole():
    assert managed_file_restore(entry(OURS), MARKER) == {'action': 'remove_file',
                                                         'block': ['options ib_core netns_mode=0']}
    assert managed_file_restore(entry('\n' + OURS + '\n\n'), MARKER)['action'] == 'remove_file'


def test_other_lines_stay_only_the_block_goes():
    found = managed_file_restore(entry('options ib_core foo=1\n' + OURS), MARKER)
    assert found['action'] == 'remove_block'


def test_files_the_role_did_not_write_are_not_touched():
    assert managed_file_restore(entry('options ib_core netns_mode=0\n'), MARKER)['action'] == 'none'
    assert managed_file_restore(entry(None, exists=False), MARKER)['action'] == 'none'
    other = OURS.replace('rdma_netns', 'kernel_tuning')
    assert managed_file_restore(entry(other), MARKER)['action'] == 'none'
    # markers in the wrong order are not the role's block
    swapped = '# END gpu_tray.cluster.rdma_netns - managed by Ansible\n# BEGIN gpu_tray.cluster.rdma_netns - managed by Ansible\n'
    assert managed_file_restore(entry(swapped), MARKER)['action'] == 'none'


def test_unreadable_and_bad_marker():
    assert managed_file_restore({'error': 'permission denied'}, MARKER)['action'] == 'unreadable'
    assert managed_file_restore({'exists': True, 'is_file': True, 'content': None}, MARKER)['action'] == 'unreadable'
    with pytest.raises(AnsibleFilterError, match='{mark}'):
        managed_file_restore(entry(OURS), '# managed')
