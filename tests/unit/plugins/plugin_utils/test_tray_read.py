# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/tray_read.py: requests (normalise, merge, covers), the module options of a request, and what a read
says about a role's blockinfile files (block_current, restore_action)."""

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import tray_read

GRUB = {'dropin': '/etc/default/grub.d/99.cfg'}
REQUEST = {'sysfs_root': '/lab/sys', 'files': ['/etc/a'], 'units': ['u.service'], 'grub': GRUB}
MARKER = '# {mark} gpu_tray.cluster.rdma_netns - managed by Ansible'
OURS = ('# BEGIN gpu_tray.cluster.rdma_netns - managed by Ansible\noptions ib_core netns_mode=0\n'
        '# END gpu_tray.cluster.rdma_netns - managed by Ansible\n')


def test_normalise_fills_defaults_and_drops_what_is_not_asked():
    assert tray_read.normalise(None) == {} and tray_read.normalise({}) == {}
    assert tray_read.normalise({'files': None, 'grub': None, 'query_firmware': False}) == {}
    assert tray_read.normalise({'modprobe_dirs': ['/etc/modprobe.d']}) == {'modprobe_dirs': ['/etc/modprobe.d'],
                                                                           'modprobe_modules': ['ib_core']}
    assert tray_read.normalise({'grub': {'dropin': '/d.cfg', 'args': ['x'], 'cfg': None}}) == {
        'grub': {'dropin': '/d.cfg', 'default_file': '/etc/default/grub', 'cfg': '/boot/grub/grub.cfg'}}
    with pytest.raises(tray_read.RequestError, match='unknown tray read option nope'):
        tray_read.normalise({'nope': 1})
    with pytest.raises(tray_read.RequestError, match='must be a dict'):
        tray_read.normalise(['files'])


def test_covers_needs_every_part_the_same_roots_and_the_same_grub():
    done = tray_read.merge(REQUEST, {'files': ['/etc/b'], 'units': ['v.service'], 'query_firmware': True})
    assert tray_read.covers(done, REQUEST) and tray_read.covers(done, {})
    assert tray_read.covers(done, {'query_firmware': True, 'files': ['/etc/b', '/etc/a']})
    assert not tray_read.covers(done, dict(REQUEST, files=['/etc/c']))
    assert not tray_read.covers(done, dict(REQUEST, units=['w.service']))
    assert not tray_read.covers(done, dict(REQUEST, sysfs_root='/sys'))
    assert not tray_read.covers(done, {'proc_root': '/proc'})
    assert not tray_read.covers(done, dict(REQUEST, grub={'dropin': '/other.cfg'}))
    assert not tray_read.covers(done, {'sysctls': ['vm.swappiness']})
    assert not tray_read.covers(REQUEST, {'query_firmware': True})
    assert not tray_read.covers({'mstconfig_path': 'mstconfig'}, {'mstconfig_path': '/opt/mstconfig'})
    # the drop-in's arguments are not part of a request: one read answers any set of them
    assert tray_read.covers(done, dict(REQUEST, grub=dict(GRUB, args=['earlycon'])))
    assert not tray_read.covers({'modprobe_dirs': ['/etc/modprobe.d']},
                                {'modprobe_dirs': ['/etc/modprobe.d'], 'modprobe_modules': ['mlx5_core']})


def test_merge_joins_lists_in_order_and_refuses_what_one_read_cannot_do():
    merged = tray_read.merge({'files': ['/a'], 'sysfs_root': '/lab'},
                             {'files': ['/a', '/b'], 'units': ['u'], 'sysfs_root': '/lab', 'grub': GRUB})
    assert merged == {'files': ['/a', '/b'], 'units': ['u'], 'sysfs_root': '/lab',
                      'grub': tray_read.normalise({'grub': GRUB})['grub']}
    assert tray_read.merge(None, {}) == {}
    assert tray_read.merge(merged, {'grub': GRUB})['grub'] == merged['grub']
    with pytest.raises(tray_read.RequestError, match='two GRUB drop-ins'):
        tray_read.merge(merged, {'grub': {'dropin': '/other.cfg'}})
    with pytest.raises(tray_read.RequestError, match='sysfs_root differs'):
        tray_read.merge(merged, {'sysfs_root': '/sys'})


def test_module_args_read_the_chain_with_the_args_token():
    args = tray_read.module_args(REQUEST)
    assert args['grub']['args'] == [tray_read.ARGS_TOKEN] and args['files'] == ['/etc/a']
    assert 'grub' not in tray_read.module_args({'files': []})


def entry(content, mode='0644', uid=0, gid=0, **extra):
    out = {'exists': True, 'is_file': True, 'content': content, 'mode': mode, 'uid': uid, 'gid': gid, 'error': None}
    out.update(extra)
    return out


BLOCK = '# BEGIN m\nA=1\nB=2\n# END m\n'


def test_a_block_is_current_only_exactly_between_its_markers_with_the_owner_and_mode():
    assert tray_read.block_current(entry(BLOCK), 'A=1\nB=2', '# {mark} m')
    assert tray_read.block_current(entry('# kept\n' + BLOCK + 'other=1\n'), 'A=1\nB=2', '# {mark} m')
    assert not tray_read.block_current(entry(BLOCK), 'A=1', '# {mark} m')
    assert not tray_read.block_current(entry(BLOCK.replace('# END', '# FIN')), 'A=1\nB=2', '# {mark} m')
    assert not tray_read.block_current(entry(BLOCK + BLOCK), 'A=1\nB=2', '# {mark} m')
    assert not tray_read.block_current(entry('# END m\n# BEGIN m\n'), '', '# {mark} m')
    assert not tray_read.block_current(entry(BLOCK.rstrip('\n')), 'A=1\nB=2', '# {mark} m')
    assert not tray_read.block_current(entry(BLOCK, mode='0600'), 'A=1\nB=2', '# {mark} m')
    assert not tray_read.block_current(entry(BLOCK, uid=1000), 'A=1\nB=2', '# {mark} m')
    assert not tray_read.block_current(entry(BLOCK, gid=4), 'A=1\nB=2', '# {mark} m')
    for unreadable in (None, {'exists': False, 'error': None}, entry(None), entry(BLOCK, error='cannot read'),
                       entry(BLOCK, is_file=False)):
        assert not tray_read.block_current(unreadable, 'A=1\nB=2', '# {mark} m')


def test_restore_takes_the_whole_file_only_the_block_or_nothing():
    assert tray_read.restore_action(entry(OURS), MARKER) == {'action': 'remove_file', 'directory': None,
                                                             'block': ['options ib_core netns_mode=0']}
    assert tray_read.restore_action(entry('\n' + OURS + '\n\n'), MARKER)['action'] == 'remove_file'
    assert tray_read.restore_action(entry('options ib_core foo=1\n' + OURS), MARKER)['action'] == 'remove_block'
    assert tray_read.restore_action(entry(OURS + 'options ib_core foo=1\n'), MARKER)['action'] == 'remove_block'
    assert tray_read.restore_action(entry('options ib_core netns_mode=0\n'), MARKER)['action'] == 'none'
    assert tray_read.restore_action({'exists': False, 'error': None}, MARKER)['action'] == 'none'
    assert tray_read.restore_action(entry(OURS.replace('rdma_netns', 'kernel_tuning')), MARKER)['action'] == 'none'
    swapped = ('# END gpu_tray.cluster.rdma_netns - managed by Ansible\n'
               '# BEGIN gpu_tray.cluster.rdma_netns - managed by Ansible\n')
    assert tray_read.restore_action(entry(swapped), MARKER)['action'] == 'none'
    assert tray_read.restore_action({'error': 'permission denied'}, MARKER)['action'] == 'unreadable'
    assert tray_read.restore_action(entry(None), MARKER)['action'] == 'unreadable'
    assert tray_read.restore_action(None, MARKER)['action'] == 'unreadable'


def test_read_errors_names_every_unreadable_part():
    state = {'units': {'error': 'systemctl not found'}, 'grub': {'simulation_error': 'rc 2', 'cfg_error': None},
             'cmdline': {'error': None}, 'files': {'/a': {'error': 'cannot stat /a'}, '/b': {'error': None}}}
    assert tray_read.read_errors(state, ['/a', '/b', '/c']) == ['systemctl not found', 'rc 2', 'cannot stat /a']
    assert tray_read.read_errors({}, ['/a']) == []


def test_without_firmware_keeps_everything_but_the_firmware_query():
    request = dict(REQUEST, query_firmware=True, rails=['mlx5_0'], mstconfig_path='/opt/mstconfig')
    assert tray_read.without_firmware(request) == tray_read.normalise(REQUEST)
    assert tray_read.without_firmware({}) == {}
