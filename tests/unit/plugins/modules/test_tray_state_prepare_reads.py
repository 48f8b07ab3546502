# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the preparing roles read in one tray_state call (files, units, GRUB chain, modprobe.d, sysctls).

The GRUB chain is simulated by the real /bin/sh sourcing real files, exactly as on a tray.
"""

import os

import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils import tray as tray_utils
from ansible_collections.gpu_tray.cluster.plugins.modules import tray_state
import tooldouble
from unithelpers import fixture_path

SHOW = {
    'nvidia-imex.service': {'Id': 'nvidia-imex.service', 'LoadState': 'loaded', 'UnitFileState': 'enabled',
                            'ActiveState': 'active', 'FragmentPath': '/etc/systemd/system/nvidia-imex.service',
                            'MainPID': '0'},
    'rke2-agent.service': {'Id': 'rke2-agent.service', 'LoadState': 'loaded', 'UnitFileState': 'enabled',
                           'ActiveState': 'active', 'FragmentPath': '/usr/local/lib/systemd/system/rke2-agent.service',
                           'MainPID': '4242'},
}
LIMITS = ('Limit                     Soft Limit           Hard Limit           Units\n'
          'Max cpu time              unlimited            unlimited            seconds\n'
          'Max stack size            8388608              unlimited            bytes\n')


# ---- pure parsers ----------------------------------------------------------------------------------------

def test_systemctl_show_blocks_become_one_dict_per_unit():
    out = 'Id=a.service\nLoadState=loaded\nFragmentPath=/x=y\n\nId=b.service\nLoadState=not-found\nUnitFileState=\n'
    assert tray_utils.parse_systemctl_show(out) == [
        {'Id': 'a.service', 'LoadState': 'loaded', 'FragmentPath': '/x=y'},
        {'Id': 'b.service', 'LoadState': 'not-found', 'UnitFileState': ''}]
    assert tray_utils.parse_systemctl_show('') == []
    assert tray_utils.parse_systemctl_show('garbage without equals\n') == []


def test_stack_limit_is_read_from_proc_limits():
    assert tray_utils.parse_stack_limit(LIMITS) == ['8388608', 'unlimited']
    assert tray_utils.parse_stack_limit('Max cpu time   unlimited  unlimited  seconds\n') is None
    assert tray_utils.parse_stack_limit(None) is None


def test_grub_steps_keep_the_files_order_and_tokens():
    out = '/etc/default/grub\t quiet splash\n/etc/default/grub.d/99-ours.cfg\t quiet splash earlycon\nnoise\n'
    assert tray_utils.parse_grub_steps(out) == [
        {'file': '/etc/default/grub', 'tokens': ['quiet', 'splash']},
        {'file': '/etc/default/grub.d/99-ours.cfg', 'tokens': ['quiet', 'splash', 'earlycon']}]


def test_grub_linux_lines_are_the_entries_command_lines():
    cfg = ("menuentry 'Ubuntu' {\n\tlinux\t/boot/vmlinuz root=/dev/sda1 ro earlycon\n\tinitrd /boot/initrd\n}\n"
           "\tlinuxefi /boot/x\n# linux commented\n")
    assert tray_utils.grub_linux_lines(cfg) == ['linux\t/boot/vmlinuz root=/dev/sda1 ro earlycon']


def test_modprobe_option_lines_only_for_the_modules_asked():
    text = ('# options ib_core netns_mode=1\noptions ib_core netns_mode=0\noptions  ib_core  foo=1\n'
            'options ib_corex netns_mode=1\noptions mlx5_core x=1\ninstall ib_core /bin/true\n')
    found = tray_utils.modprobe_option_lines(text, ['ib_core'])
    assert found == ['options ib_core netns_mode=0', 'options  ib_core  foo=1']
    assert tray_utils.modprobe_option_lines(None, ['ib_core']) == []


def test_file_state_absent_present_and_too_big(tmp_path):
    assert tray_utils.read_file_state(str(tmp_path / 'nope')) == {'exists': False, 'error': None}
    small = tmp_path / 'small.conf'
    small.write_text('a=1\n')
    os.chmod(str(small), 0o640)
    state = tray_utils.read_file_state(str(small))
    assert state['exists'] and state['is_file'] and state['content'] == 'a=1\n' and state['mode'] == '0640'
    assert state['uid'] == os.getuid() and state['size'] == 4
    big = tmp_path / 'big'
    big.write_text('x' * (tray_utils.MAX_FILE_BYTES + 1))
    state = tray_utils.read_file_state(str(big))
    assert state['exists'] and state['content'] is None and state['error'] is None
    state = tray_utils.read_file_state(str(tmp_path))
    assert state['exists'] and not state['is_file'] and state['content'] is None


def test_sysctls_read_under_proc_root_with_whitespace_folded(tmp_path):
    (tmp_path / 'sys' / 'net' / 'ipv4').mkdir(parents=True)
    (tmp_path / 'sys' / 'net' / 'ipv4' / 'tcp_rmem').write_text('4096\t131072\t6291456\n')
    (tmp_path / 'sys' / 'vm').mkdir()
    (tmp_path / 'sys' / 'vm' / 'swappiness').write_text('60\n')
    assert tray_utils.read_sysctls(str(tmp_path), ['net.ipv4.tcp_rmem', 'vm.swappiness', 'vm.nope', '../x']) == {
        'net.ipv4.tcp_rmem': '4096 131072 6291456', 'vm.swappiness': '60', 'vm.nope': None, '../x': None}


def test_modprobe_dirs_are_searched_like_grep_h(tmp_path):
    etc = tmp_path / 'etc'
    (etc / 'sub').mkdir(parents=True)
    (etc / 'a.conf').write_text('options ib_core netns_mode=1\n')
    (etc / 'sub' / 'b.conf').write_text('options ib_core netns_mode=0 # x\n')
    out = tray_utils.read_modprobe([str(etc), str(tmp_path / 'missing')], ['ib_core'])
    assert out['options'] == ['%s/a.conf:options ib_core netns_mode=1' % etc,
                              '%s/sub/b.conf:options ib_core netns_mode=0 # x' % etc]


# ---- the module ------------------------------------------------------------------------------------------

@pytest.fixture
def grub_tree(tmp_path):
    default = tmp_path / 'default' / 'grub'
    dropins = tmp_path / 'default' / 'grub.d'
    dropins.mkdir(parents=True)
    default.write_text('GRUB_CMDLINE_LINUX_DEFAULT="console=ttyS0"\nGRUB_CMDLINE_LINUX=""\n')
    (dropins / '50-cloud.cfg').write_text('GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT quiet"\n')
    cfg = tmp_path / 'grub.cfg'
    cfg.write_text("menuentry 'x' {\n  linux /vmlinuz ro console=ttyS0 quiet\n}\n"
                   "menuentry 'x (recovery mode)' {\n  linux /vmlinuz ro single\n}\n")
    return {'default_file': str(default), 'dropin': str(dropins / '99-ours.cfg'), 'cfg': str(cfg),
            'dir': dropins}


def state_args(tmp_path, tools_dir, **extra):
    tools_dir.mkdir()
    systemctl, log = tooldouble.systemctl(str(tools_dir), {'show': SHOW, 'is-enabled': {}, 'is-active': {}})
    args = {'sysfs_root': str(tmp_path / 'sys'), 'proc_root': str(tmp_path / 'proc'), 'systemctl_path': systemctl,
            'os_release_path': fixture_path('os-release', 'ubuntu-24.04'),
            'containerd_config_path': str(tmp_path / 'none.toml'), '_ansible_check_mode': True}
    args.update(extra)
    return args, log


def test_tray_state_reads_nothing_more_unless_asked(run_module, tmp_path):
    args, log = state_args(tmp_path, tmp_path / 'tools')
    result = run_module(tray_state, args)
    assert not result.failed, result
    for key in ('files', 'units', 'grub', 'modprobe', 'sysctl'):
        assert key not in result
    assert result['requested']['files'] is None and result['requested']['grub'] is None
    assert [entry['argv'][0] for entry in tooldouble.read_log(log)] == ['is-enabled', 'is-active']


def test_tray_state_reads_what_the_preparing_roles_ask_for(run_module, tmp_path, grub_tree):
    (tmp_path / 'proc' / '4242').mkdir(parents=True)
    (tmp_path / 'proc' / '4242' / 'limits').write_text(LIMITS)
    (tmp_path / 'proc' / 'sys' / 'vm').mkdir(parents=True)
    (tmp_path / 'proc' / 'sys' / 'vm' / 'swappiness').write_text('60\n')
    (tmp_path / 'modprobe.d').mkdir()
    (tmp_path / 'modprobe.d' / 'x.conf').write_text('options ib_core netns_mode=1\n')
    owned = tmp_path / 'owned.conf'
    owned.write_text('vm.swappiness=1\n')
    args, log = state_args(
        tmp_path, tmp_path / 'tools', files=[str(owned), str(tmp_path / 'absent')],
        units=['nvidia-imex.service', 'rke2-agent.service', 'k3s.service'],
        grub={'default_file': grub_tree['default_file'], 'dropin': grub_tree['dropin'], 'args': ['earlycon', 'a=1'],
              'cfg': grub_tree['cfg']},
        modprobe_dirs=[str(tmp_path / 'modprobe.d')], sysctls=['vm.swappiness'])
    result = run_module(tray_state, args)
    assert not result.failed, result
    assert result['files'][str(owned)]['content'] == 'vm.swappiness=1\n'
    assert result['files'][str(tmp_path / 'absent')]['exists'] is False
    units = result['units']['units']
    assert result['units']['error'] is None
    assert units['nvidia-imex.service']['UnitFileState'] == 'enabled'
    assert units['nvidia-imex.service']['stack_limit'] is None
    assert units['rke2-agent.service']['stack_limit'] == ['8388608', 'unlimited']
    assert units['k3s.service']['LoadState'] == 'not-found'
    show = [entry['argv'] for entry in tooldouble.read_log(log) if entry['argv'][0] == 'show']
    assert len(show) == 1 and show[0][-3:] == ['nvidia-imex.service', 'rke2-agent.service', 'k3s.service']
    # the GRUB chain in update-grub's order, with our drop-in simulated (it does not exist)
    grub = result['grub']
    assert grub['simulation_error'] is None, grub
    assert [step['file'] for step in grub['steps']] == [grub_tree['default_file'],
                                                        str(grub_tree['dir'] / '50-cloud.cfg'), grub_tree['dropin']]
    assert grub['steps'][-1]['tokens'] == ['console=ttyS0', 'quiet', 'earlycon', 'a=1']
    assert not os.path.exists(grub_tree['dropin'])
    assert grub['cfg_exists'] and grub['cfg_linux'] == ['linux /vmlinuz ro console=ttyS0 quiet',
                                                        'linux /vmlinuz ro single']
    assert result['modprobe']['options'] == ['%s/x.conf:options ib_core netns_mode=1' % (tmp_path / 'modprobe.d')]
    assert result['sysctl'] == {'vm.swappiness': '60'}
    assert result['requested']['units'] == ['nvidia-imex.service', 'rke2-agent.service', 'k3s.service']
    assert result['requested']['grub']['args'] == ['earlycon', 'a=1']


def test_tray_state_grub_shows_a_later_dropin_overwriting_ours(run_module, tmp_path, grub_tree):
    (grub_tree['dir'] / '99-zz-override.cfg').write_text('GRUB_CMDLINE_LINUX_DEFAULT="console=tty0"\n')
    args, _log = state_args(tmp_path, tmp_path / 'tools', grub={'dropin': grub_tree['dropin'], 'args': ['earlycon'],
                                                                'default_file': grub_tree['default_file'],
                                                                'cfg': str(tmp_path / 'missing.cfg')})
    grub = run_module(tray_state, args)['grub']
    assert [step['file'] for step in grub['steps']][-2:] == [grub_tree['dropin'],
                                                             str(grub_tree['dir'] / '99-zz-override.cfg')]
    assert grub['steps'][-2]['tokens'][-1] == 'earlycon' and grub['steps'][-1]['tokens'] == ['console=tty0']
    assert grub['cfg_exists'] is False and grub['cfg_linux'] == [] and grub['cfg_error'] is None


def test_tray_state_units_error_is_reported_not_raised(run_module, tmp_path):
    args, _log = state_args(tmp_path, tmp_path / 'tools', units=['nvidia-imex.service'],
                            systemctl_path=str(tmp_path / 'tools' / 'no-systemctl'))
    result = run_module(tray_state, args)
    assert not result.failed and result['units'] == {'error': 'systemctl not found', 'units': {}}
