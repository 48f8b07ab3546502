# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The planners (plugins/plugin_utils/planners) on the lab's real trays: populated and booted by the lab's own code,
read by the real tray_state module, the GRUB chain sourced by the real /bin/sh. Each test plays a step of a rollout -
a fresh tray, the role's writes, the reboot - and checks what the planner decides: writes, refusals, reboot, verify.
"""

import os

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import tray_read
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import (imex, kernel_tuning, preflight,
                                                                                rdma_modules, rdma_netns, verify)
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight as preflight_rules
from planharness import LabTray

VR200_ARGS = ['init_on_alloc=0', 'iommu.passthrough=1', 'console=tty0', 'console=ttyS0,115200n8',
              'numa_balancing=disable', 'earlycon', 'hugepagesz=2M', 'hugepages=5128']


@pytest.fixture
def lab(tmp_path, run_module):
    made = []

    def make(platform='rke2-vr200', faults=(), units=None):
        made.append(LabTray(tmp_path / ('tray%d' % len(made)), platform, run_module, faults, units))
        return made[-1]
    return make


def plan_kernel_tuning(tray, **overrides):
    inputs = tray.inputs(kernel_tuning, **overrides)
    return tray.plan(kernel_tuning, inputs), inputs


def prepare_kernel_tuning(tray, plan):
    """What the role's tasks do with a plan: the drop-in (blockinfile), update-grub (a grub.cfg with the arguments)."""
    tray.write_block(plan['exports'] and tray.inputs(kernel_tuning)['grub_dropin'], plan['blocks']['grub_dropin'],
                     plan['marker'])
    tray.grub_cfg(plan['exports']['cmdline_args'])


# ---- kernel_tuning -----------------------------------------------------------------------------------------------

def test_a_fresh_vr200_tray_gets_the_dropin_update_grub_and_the_reboot(lab):
    tray = lab()
    plan, inputs = plan_kernel_tuning(tray)
    assert inputs['intent'] == 'multiNodeTraining'
    assert plan['refuse'] is None
    assert plan['exports']['cmdline_args'] == VR200_ARGS
    assert plan['blocks']['grub_dropin'] == 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} %s"' % (
        ' '.join(VR200_ARGS))
    assert plan['writes']['grub_dropin'] and plan['writes']['update_grub']
    assert plan['writes']['sysctl_file'] and plan['writes']['sysctl_live'] == []     # the lab: sysctl_apply false
    assert plan['grub_cfg_problems'] == ['no boot entry']                           # no grub.cfg yet
    assert plan['reboot_required'] and 'hugepages=5128' in plan['reason']
    assert plan['verify'] == {'cmdline_required': VR200_ARGS, 'hugepages': [{'size': '2M', 'count': 5128}]}
    assert plan['exports']['hugepage_pools'] == ['2M', '512M', '16G']


def test_a_prepared_and_rebooted_tray_needs_nothing(lab):
    tray = lab()
    plan, inputs = plan_kernel_tuning(tray)
    prepare_kernel_tuning(tray, plan)
    tray.write_block(inputs['sysctl_file'], plan['blocks']['sysctl_file'], plan['marker'])
    before = tray.plan(kernel_tuning, inputs)
    assert not any(before['writes'][key] for key in ('grub_dropin', 'sysctl_file', 'update_grub', 'limit_stack'))
    assert before['grub_cfg_problems'] == []
    assert before['reboot_required'], 'written but not booted: the running kernel lacks the arguments'
    tray.reboot()
    after = tray.plan(kernel_tuning, inputs)
    assert not after['reboot_required'] and after['reason'] == ''
    assert after['exports']['missing_args'] == []
    state = tray.read(verify.needs({'sysfs_root': inputs['sysfs_root'], 'proc_root': inputs['proc_root']}))
    assert verify.judge(state, verify.merge([after])) == []


def test_a_later_dropin_that_overwrites_the_arguments_is_refused_naming_it(lab):
    tray = lab(faults=['grub-dropin-override'])
    plan, _inputs = plan_kernel_tuning(tray)
    assert plan['refuse'] is not None and plan['writes'] == {}
    assert plan['refuse']['msg'].startswith(tray.path('etc/default/grub.d/99-zz-override.cfg') + ' overwrites')
    assert plan['exports']['grub_problems'][0]['kind'] == 'overwrites'
    assert plan['exports']['grub_problems'][0]['arguments'] == VR200_ARGS


def test_tuned_params_and_duplicated_arguments_are_named_with_their_files(lab):
    tray = lab()
    default = tray.path('etc/default/grub')
    with open(default, 'a') as handle:
        handle.write('GRUB_CMDLINE_LINUX_DEFAULT="$GRUB_CMDLINE_LINUX_DEFAULT \\$tuned_params"\n')
    tray.write('etc/default/grub.d/60-site.cfg', 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} earlycon"\n')
    plan, _inputs = plan_kernel_tuning(tray)
    problems = plan['exports']['grub_problems']
    assert [(p['file'], p['kind'], p['arguments']) for p in problems] == [
        (default, 'tuned_params', []),
        (tray.path('etc/default/grub.d/60-site.cfg'), 'duplicates', ['earlycon'])]
    # the first problem in file order is the message
    expected = '%s %s; %s.' % (default, kernel_tuning.PROBLEM_TEXT['tuned_params'], kernel_tuning.PROBLEM_FIX['tuned_params'])
    assert plan['refuse']['msg'] == expected


def test_a_huge_page_size_without_a_pool_is_refused_naming_the_variable_with_the_smaller_sizes(lab):
    """The refusal is the preflight's sizes verdict (one judge), naming the variable the user set first."""
    tray, pools = lab(), [{'size': '2M', 'count': 8}, {'size': '1G', 'count': 2}]
    plan, _inputs = plan_kernel_tuning(tray, hugepages=pools)
    assert plan['refuse']['msg'] == ('gpu_tray_tuning_hugepages asks for 1G huge pages, but the running kernel has no 1G '
                                     'huge page pool.')
    assert plan['refuse']['fix'].endswith('On this 64k-page kernel request 2M or 512M pages instead of 1G.')
    assert 'in gpu_tray_tuning_hugepages' in plan['refuse']['fix']
    state = tray.read({'sysfs_root': tray.tray.sys(), 'proc_root': tray.path('proc')})
    preflight_check = preflight_rules.evaluate(state, {'checks': ['hugepages'], 'hugepages_check': 'sizes',
                                                       'hugepages': pools})[0]
    assert (preflight_check['message'], preflight_check['fix']) == (plan['refuse']['msg'], plan['refuse']['fix'])
    assert plan['exports']['hugepage_sizes_refused'] == ['1G']
    plan, _inputs = plan_kernel_tuning(tray, hugepages=[{'size': '3M', 'count': 1}])
    assert plan['refuse']['msg'].startswith('gpu_tray_tuning_hugepages asks for huge page size 3M, which is not one of '
                                            '64K, 2M')
    plan, _inputs = plan_kernel_tuning(tray, default_hugepagesz='4M')
    assert plan['refuse']['msg'].startswith('kernel_tuning_default_hugepagesz is 4M, which is not one of 64K, 2M')


def test_arguments_a_dropin_cannot_carry_are_refused_naming_the_variable(lab):
    plan, _inputs = plan_kernel_tuning(lab(), extra_args=['quiet="x y"'])
    assert plan['refuse']['msg'] == ('kernel_tuning_extra_args has the kernel arguments quiet="x y", whose quotes, '
                                     'spaces or shell characters the GRUB drop-in cannot carry.')


def test_no_intent_means_nothing_to_read_or_write(lab):
    tray = lab(platform='nvke-gb200')
    inputs = tray.inputs(kernel_tuning)
    assert inputs['intent'] == '' and kernel_tuning.needs(inputs) == {}
    plan = kernel_tuning.plan(tray.read({}), inputs)
    assert plan['writes'] == {} and not plan['reboot_required'] and plan['verify'] == {}


def test_running_sysctls_that_differ_are_set_live(lab):
    tray = lab()
    plan, inputs = plan_kernel_tuning(tray, sysctl_apply=True, sysctls={'kernel.osrelease': 'x', 'vm.swappiness': '1'})
    assert kernel_tuning.needs(inputs)['sysctls'] == ['kernel.osrelease', 'vm.swappiness']
    # osrelease differs from the tray's; vm.swappiness does not exist in the tray's proc tree
    assert [item['key'] for item in plan['writes']['sysctl_live']] == ['kernel.osrelease', 'vm.swappiness']


def test_limit_stack_goes_on_active_runtime_units_and_a_running_one_needs_the_reboot(lab):
    units = {'rke2-agent.service': {'Id': 'rke2-agent.service', 'LoadState': 'loaded', 'UnitFileState': 'enabled',
                                    'ActiveState': 'active', 'FragmentPath': '/usr/local/lib/systemd/system/x',
                                    'MainPID': '1'}}
    tray = lab(units=units)
    plan, _inputs = plan_kernel_tuning(tray, proc_root='/proc')
    assert plan['writes']['limit_stack'] == ['rke2-agent.service']
    # the drop-in's directory is this machine's (the role writes /etc/systemd/system/<unit>.d/): when it is absent the
    # block records that the role creates it
    created = [] if os.path.isdir('/etc/systemd/system/rke2-agent.service.d') else [
        '# gpu_tray.cluster created /etc/systemd/system/rke2-agent.service.d/ for this file: restore_trays removes the '
        'directory with it']
    assert plan['blocks']['limit_stack'] == {'rke2-agent.service': '\n'.join(created + ['[Service]',
                                                                                        'LimitSTACK=67108864'])}
    # pid 1 of this machine runs with another stack limit than 64 MiB
    assert plan['exports']['stack_pending'] and 'stack limit' in plan['reason']


def test_grub_cfg_problems_count_each_argument_of_every_normal_entry():
    lines = ['linux /vmlinuz ro a b', 'linux /vmlinuz ro a a', 'linux /vmlinuz ro recovery nomodeset',
             'linux /vmlinuz $tuned_params a b']
    assert kernel_tuning.grub_cfg_problems(lines, ['a', 'b']) == ['a (2 times)', 'b (0 times)', '$tuned_params']
    assert kernel_tuning.grub_cfg_problems(['linux /x single'], ['a']) == ['no boot entry']
    assert kernel_tuning.grub_cfg_problems(['linux /x a'], ['a']) == []


def test_the_chain_check_with_the_args_token():
    steps = [{'file': '/d/grub', 'tokens': ['quiet']},
             {'file': '/d/grub.d/99-ours.cfg', 'tokens': ['quiet', tray_read.ARGS_TOKEN]},
             {'file': '/d/grub.d/99-zz.cfg', 'tokens': ['quiet', tray_read.ARGS_TOKEN]}]
    assert kernel_tuning.grub_chain_problems(steps, '/d/grub.d/99-ours.cfg', ['a', 'b']) == []
    steps[2]['tokens'] = ['quiet']
    found = kernel_tuning.grub_chain_problems(steps, '/d/grub.d/99-ours.cfg', ['a', 'b'])
    assert [(p['file'], p['kind'], p['arguments']) for p in found] == [('/d/grub.d/99-zz.cfg', 'overwrites', ['a', 'b'])]
    # an argument only the drop-in would add, lost in a chain that ends at the drop-in itself: the drop-in is named
    assert kernel_tuning.grub_chain_problems([], '/d/ours.cfg', ['a'])[0]['file'] == '/d/ours.cfg'


def test_restore_removes_what_the_role_wrote_and_names_the_arguments_to_verify_gone(lab):
    tray = lab()
    plan, inputs = plan_kernel_tuning(tray)
    prepare_kernel_tuning(tray, plan)
    tray.write(inputs['sysctl_file'], 'vm.swappiness=60\n' + open(tray.write_block(
        os.path.join(tray.root, 'x.tmp'), plan['blocks']['sysctl_file'], plan['marker'])).read())
    tray.reboot()
    back = tray.restore(kernel_tuning, inputs)
    assert back['writes']['remove_file'] == [inputs['grub_dropin']]
    assert back['writes']['remove_block'] == [inputs['sysctl_file']]
    assert back['writes']['update_grub']
    assert back['exports']['cmdline_forbidden'] == VR200_ARGS
    assert back['reboot_required'] and back['verify'] == {'cmdline_forbidden': VR200_ARGS}
    # on a fresh tray there is nothing to restore
    fresh = lab()
    nothing = fresh.restore(kernel_tuning)
    assert nothing['writes'] == {'remove_file': [], 'remove_block': [], 'remove_dir': [], 'update_grub': False}
    assert not nothing['reboot_required'] and nothing['exports']['cmdline_forbidden'] == []


@pytest.mark.parametrize('planner, key, platform', [
    (kernel_tuning, 'grub_dropin', 'rke2-vr200'),
    (rdma_modules, 'load_file', 'nvke-gb200'),
    (rdma_netns, 'conf_file', 'rke2-vr200'),
], ids=['kernel_tuning', 'rdma_modules', 'rdma_netns'])
def test_restore_refuses_a_file_it_cannot_read(lab, planner, key, platform):
    tray = lab(platform=platform)
    inputs = tray.inputs(planner)
    os.makedirs(inputs[key])                      # a directory where the role's file would be
    back = tray.restore(planner, inputs)
    assert back['refuse']['msg'] == 'Could not read %s; nothing was removed.' % inputs[key]
    assert back['writes'] == {}


# ---- rdma_netns ----------------------------------------------------------------------------------------------------

def test_netns_exclusive_written_then_applied_by_the_reboot(lab):
    tray = lab()
    inputs = tray.inputs(rdma_netns)
    assert inputs['mode'] == 'exclusive'
    plan = tray.plan(rdma_netns, inputs)
    assert plan['writes'] == {'file': True, 'remove': False}
    assert plan['blocks']['file'] == 'options ib_core netns_mode=0'
    assert plan['exports'] == {'expected': 'N', 'running': 'Y'} and plan['reboot_required']
    tray.write_block(inputs['conf_file'], plan['blocks']['file'], plan['marker'])
    tray.reboot()
    after = tray.plan(rdma_netns, inputs)
    assert after['writes'] == {'file': False, 'remove': False} and not after['reboot_required']
    assert after['exports']['running'] == 'N' and after['verify'] == {'netns_mode': 'exclusive'}


def test_netns_another_owner_is_refused_and_shared_removes_the_file(lab):
    tray = lab()
    inputs = tray.inputs(rdma_netns)
    tray.write('etc/modprobe.d/site.conf', 'options ib_core netns_mode=1\n')
    plan = tray.plan(rdma_netns, inputs)
    assert plan['refuse']['msg'] == ('%s sets another ib_core netns_mode than exclusive (gpu_tray_ib_core_netns_mode); '
                                     'the setting must have one owner.' % tray.path('etc/modprobe.d/site.conf'))
    shared = dict(inputs, mode='shared')
    tray.write(inputs['conf_file'], 'options ib_core netns_mode=0\n')
    tray.remove('etc/modprobe.d/site.conf')
    plan = tray.plan(rdma_netns, shared)
    assert plan['writes'] == {'file': False, 'remove': True} and not plan['reboot_required']
    unmanaged = rdma_netns.plan({}, dict(inputs, mode='unmanaged'))
    assert unmanaged['writes'] == {} and rdma_netns.needs(dict(inputs, mode='unmanaged')) == {}


def test_a_directory_the_role_creates_is_recorded_in_its_block_and_goes_with_the_file(lab):
    """blockinfile creates a missing directory with the file: the block says so (and keeps saying so on every later
    run), and the way back removes that directory with the file - not one that was there before, nor one that holds
    something else by then."""
    tray = lab()
    inputs = tray.inputs(rdma_netns, conf_file=tray.path('etc/gpu-tray/modprobe.d/netns.conf'))
    directory = tray.path('etc/gpu-tray/modprobe.d')
    first = tray.plan(rdma_netns, inputs)
    assert first['blocks']['file'] == ('# gpu_tray.cluster created %s/ for this file: restore_trays removes the '
                                       'directory with it\noptions ib_core netns_mode=0' % directory)
    tray.write_block(inputs['conf_file'], first['blocks']['file'], rdma_netns.MARKER)
    again = tray.plan(rdma_netns, inputs)
    assert again['blocks'] == first['blocks'] and again['writes']['file'] is False
    back = tray.restore(rdma_netns, inputs)
    assert back['writes'] == {'remove_file': True, 'remove_block': False, 'remove_dir': directory}
    # something else in the directory by now: it stays
    tray.write('etc/gpu-tray/modprobe.d/site.conf', 'options mlx5_core prof_sel=2\n')
    kept = tray.restore(rdma_netns, inputs)
    assert kept['writes']['remove_file'] and kept['writes']['remove_dir'] == ''
    # a directory that was there before the role: no record, never removed
    tray.remove('etc/gpu-tray/modprobe.d/netns.conf')
    there = tray.plan(rdma_netns, inputs)
    assert there['blocks']['file'] == 'options ib_core netns_mode=0'
    tray.remove('etc/gpu-tray/modprobe.d/site.conf')
    tray.write_block(inputs['conf_file'], there['blocks']['file'], rdma_netns.MARKER)
    assert tray.restore(rdma_netns, inputs)['writes']['remove_dir'] == ''


def test_netns_restore_owns_only_its_file(lab):
    tray = lab()
    inputs = tray.inputs(rdma_netns)
    tray.write_block(inputs['conf_file'], 'options ib_core netns_mode=0', rdma_netns.MARKER)
    tray.reboot()
    back = tray.restore(rdma_netns, inputs)
    assert back['writes'] == {'remove_file': True, 'remove_block': False, 'remove_dir': ''}
    assert back['reboot_required'] and back['verify'] == {'netns_mode': 'shared'}
    assert back['exports'] == {'expected': 'Y', 'running': 'N'}
    fresh = lab()
    unmanaged = fresh.inputs(rdma_netns, mode='unmanaged')
    none = fresh.restore(rdma_netns, unmanaged)
    assert none['writes'] == {'remove_file': False, 'remove_block': False, 'remove_dir': ''} and not none['reboot_required']


# ---- rdma_modules, imex --------------------------------------------------------------------------------------------

def test_gb200_modules_loaded_now_and_persisted(lab):
    tray = lab(platform='nvke-gb200')
    inputs = tray.inputs(rdma_modules)
    assert inputs['managed'] and inputs['load'] == ['rdma_ucm', 'ib_umad', 'ib_ipoib']
    plan = tray.plan(rdma_modules, inputs)
    assert plan['writes'] == {'load': ['rdma_ucm', 'ib_umad', 'ib_ipoib'], 'file': True}
    assert plan['blocks']['file'] == 'rdma_ucm\nib_umad\nib_ipoib' and not plan['reboot_required']
    assert plan['verify'] == {'modules': ['rdma_ucm', 'ib_umad', 'ib_ipoib']}
    tray.write_block(inputs['load_file'], plan['blocks']['file'], plan['marker'])
    assert not tray.plan(rdma_modules, inputs)['writes']['file']
    off = dict(inputs, managed='false')
    assert rdma_modules.needs(off) == {} and rdma_modules.plan({}, off)['exports'] == {'names': []}


def test_modules_restore_removes_its_file_or_only_its_block(lab):
    tray = lab(platform='nvke-gb200')
    inputs = tray.inputs(rdma_modules)
    assert rdma_modules.restore_needs(inputs) == {'sysfs_root': inputs['sysfs_root'],
                                                  'files': [inputs['load_file'], os.path.dirname(inputs['load_file'])]}
    tray.write_block(inputs['load_file'], 'rdma_ucm\nib_umad\nib_ipoib', rdma_modules.MARKER)
    back = tray.restore(rdma_modules, inputs)
    assert back['refuse'] is None and back['writes'] == {'remove_file': True, 'remove_block': False, 'remove_dir': ''}
    assert back['exports'] == {'names': []} and not back['reboot_required']
    # a line of the site's own beside the role's block: only the block goes
    with open(inputs['load_file'], 'a') as handle:
        handle.write('site_module\n')
    back = tray.restore(rdma_modules, inputs)
    assert back['writes'] == {'remove_file': False, 'remove_block': True, 'remove_dir': ''}
    # never touched: nothing to remove
    fresh = lab(platform='nvke-gb200')
    none = fresh.restore(rdma_modules)
    assert none['refuse'] is None and none['writes'] == {'remove_file': False, 'remove_block': False, 'remove_dir': ''}


def test_imex_mask_relocate_and_enable(lab):
    unit = {'Id': 'nvidia-imex.service', 'LoadState': 'loaded', 'UnitFileState': 'enabled', 'ActiveState': 'active',
            'FragmentPath': '/etc/systemd/system/nvidia-imex.service', 'MainPID': '7'}
    tray = lab(units={'nvidia-imex.service': unit})
    inputs = tray.inputs(imex)
    assert inputs == {'host_service': 'masked', 'unit': 'nvidia-imex.service'}
    plan = tray.plan(imex, inputs)
    assert plan['writes'] == {'relocate': True, 'disable': True, 'mask': True}
    masked = dict(unit, LoadState='masked', UnitFileState='masked', ActiveState='inactive', FragmentPath='/dev/null')
    state = {'units': {'units': {'nvidia-imex.service': masked}, 'error': None}}
    assert imex.plan(state, inputs)['writes'] == {'relocate': False, 'disable': False, 'mask': False}
    assert imex.plan(state, dict(inputs, host_service='enabled'))['writes'] == {'unmask': True, 'enable': True}
    missing = {'units': {'units': {'nvidia-imex.service': dict(unit, LoadState='not-found')}, 'error': None}}
    assert imex.plan(missing, dict(inputs, host_service='enabled'))['refuse']['msg'] == (
        'nvidia-imex.service is not installed, so it cannot be enabled.')
    unread = imex.plan({'units': {'units': {}, 'error': 'systemctl not found'}}, inputs)
    assert unread['refuse']['msg'] == 'Could not read the state of nvidia-imex.service: systemctl not found; nothing was changed.'


# ---- verify, preflight --------------------------------------------------------------------------------------------

def test_verify_names_what_came_back_wrong(lab):
    tray = lab()
    state = tray.read({'sysfs_root': tray.tray.sys(), 'proc_root': tray.path('proc')})
    records = [{'verify': {'cmdline_required': ['earlycon', 'numa_balancing=disable'],
                           'hugepages': [{'size': '2M', 'count': 5128}]}},
               {'verify': {'netns_mode': 'exclusive'}}, {'verify': {'modules': ['ib_umad']}}, {}]
    spec = verify.merge(records)
    problems = verify.judge(state, spec)
    assert problems[0].startswith('kernel command line: missing: earlycon numa_balancing=disable')
    assert any('2M' in p for p in problems[1:-2])
    # netns_mode in the words of its one judge (the role's, the validation's)
    assert problems[-2:] == ['ib_core netns_mode is shared, not exclusive', 'modules not loaded: ib_umad']
    out = verify.plan(state, {'records': records, 'sysfs_root': '', 'proc_root': ''})
    assert out['refuse']['msg'].startswith('Came back without its prepared state: kernel command line: missing')
    assert out['exports'] == {'cmdline_verified': 'yes'}
    gone = verify.plan(state, {'records': [{'verify': {'cmdline_forbidden': ['ro']}}]})
    assert gone['refuse']['msg'].startswith('Came back without its restored state: kernel command line:')
    empty = verify.plan(state, {'records': []})
    assert empty['refuse'] is None and empty['exports'] == {'cmdline_verified': 'n/a'}


def test_preflight_planner_reports_and_refuses_a_failed_check(lab):
    tray = lab(platform='nvke-gb200', faults=['pkey-limited-pf'])
    spec = {'host': 'tray01', 'platform': 'nvke-gb200', 'sysfs_root': tray.tray.sys(), 'proc_root': tray.path('proc'),
            'mstconfig_path': 'mstconfig', 'runtime_config_source': 'file', 'firmware': False,
            'os': {'os_id': 'ubuntu', 'os_version_id': '24.04', 'kernel_pattern': '.', 'kernel_hint': 'x'},
            'rails': ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4'], 'pkey': '0xffff', 'include_vfs': True,
            'hugepages': [], 'checks': ['rails', 'pkeys']}
    assert preflight.needs(spec) == {'sysfs_root': spec['sysfs_root'], 'proc_root': spec['proc_root'],
                                     'runtime_config_source': 'file'}
    out = tray.plan(preflight, spec)
    assert out['report']['failed_checks'] == ['pkeys']
    assert out['refuse']['msg'] == 'Preflight failed (pkeys); nothing was changed on the tray.'
    assert out['evidence']['rdma']['rails'] == spec['rails'] and out['evidence']['host'] == 'tray01'
    firmware = dict(spec, firmware=True)
    assert preflight.needs(firmware)['query_firmware'] and preflight.needs(firmware)['rails'] == spec['rails']


def test_preflight_planner_judges_the_bmc_with_the_serial_of_its_read(lab):
    tray = lab(platform='nvke-gb200')
    spec = {'host': 'tray01', 'platform': 'nvke-gb200', 'sysfs_root': tray.tray.sys(), 'proc_root': tray.path('proc'),
            'rails': ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4'], 'pkey': '0xffff', 'include_vfs': True,
            'hugepages': [], 'checks': ['rails']}
    state = tray.read(preflight.needs(spec))
    serial = state['ansible_facts']['gpu_tray']['dmi']['product_serial']
    assert serial == 'LABGB2000001'                       # the lab tray's SMBIOS serial (fixtures.identity)
    settings = {'address': 'https://bmc-tray01', 'username': 'admin', 'password': True, 'required': True}

    def answer(serial_number):
        return {'redfish_facts': {'system': {'entries': [[{'system_uri': '/redfish/v1/Systems/System_0'}, {
            'Id': 'System_0', 'SerialNumber': serial_number, 'PowerState': 'On', 'Status': {'Health': 'OK'}}]]}}}

    mine = preflight.plan(state, dict(spec, bmc={'settings': settings, 'answer': answer(serial)}))
    assert mine['refuse'] is None and mine['report']['passed']
    assert [c['name'] for c in mine['report']['checks']] == ['rails', 'bmc']
    assert all(c['object'] == 'tray01' for c in mine['report']['checks'])
    assert mine['evidence']['checks'][-1]['data']['system_id'] == 'System_0'
    neighbour = preflight.plan(state, dict(spec, bmc={'settings': settings, 'answer': answer('LABGB2000002')}))
    assert neighbour['report']['failed_checks'] == ['bmc']
    assert neighbour['refuse']['msg'] == 'Preflight failed (bmc); nothing was changed on the tray.'
    assert 'serial LABGB2000001' in neighbour['refuse']['details'][0]
    assert [c['name'] for c in preflight.plan(state, spec)['report']['checks']] == ['rails']     # no bmc input


def test_netns_reasons_name_the_modes_in_words(lab):
    tray = lab()
    inputs = tray.inputs(rdma_netns)
    plan = tray.plan(rdma_netns, inputs)
    assert plan['reason'] == 'ib_core netns_mode is shared, not exclusive: the role sets it, applied when ib_core loads'
    tray.write_block(inputs['conf_file'], plan['blocks']['file'], plan['marker'])
    tray.reboot()
    back = tray.restore(rdma_netns, inputs)
    assert back['reason'] == ('ib_core netns_mode is exclusive, not shared: the way back applies shared when ib_core '
                              'loads')


def test_the_inference_intent_pins_the_default_huge_page_size(lab):
    plan, inputs = plan_kernel_tuning(lab(), intent='inference', hugepages=[{'size': '2M', 'count': 8192}],
                                      default_hugepagesz='2M')
    assert plan['exports']['cmdline_args'][-3:] == ['hugepagesz=2M', 'hugepages=8192', 'default_hugepagesz=2M']
    assert 'default_hugepagesz=2M' in plan['blocks']['grub_dropin'] and plan['refuse'] is None


def test_restore_reboots_while_the_runtime_still_runs_with_the_raised_stack_limit(lab):
    limits = ('Limit                     Soft Limit           Hard Limit           Units\n'
              'Max stack size            %s             %s             bytes\n')
    units = {'rke2-agent.service': {'Id': 'rke2-agent.service', 'LoadState': 'loaded', 'UnitFileState': 'enabled',
                                    'ActiveState': 'active', 'FragmentPath': '/x', 'MainPID': '4242'},
             'containerd.service': {'Id': 'containerd.service', 'LoadState': 'loaded', 'UnitFileState': 'disabled',
                                    'ActiveState': 'inactive', 'FragmentPath': '/y', 'MainPID': '0'}}
    tray = lab(units=units)
    inputs = tray.inputs(kernel_tuning)
    tray.write('proc/4242/limits', limits % (67108864, 67108864))
    back = tray.restore(kernel_tuning, inputs)
    assert back['reboot_required'] and back['reason'] == 'the container runtime still runs with the stack limit 67108864'
    # the soft limit back at the default, or a unit without a main process: nothing holds the raised limit
    tray.write('proc/4242/limits', limits % (8388608, 67108864))
    back = tray.restore(kernel_tuning, inputs)
    assert not back['reboot_required']
    units['rke2-agent.service']['MainPID'] = '0'
    tray.write('proc/4242/limits', limits % (67108864, 67108864))
    assert not lab(units=units).restore(kernel_tuning)['reboot_required']


def test_an_unmanaged_imex_service_has_nothing_to_plan():
    plan = imex.plan({}, {'host_service': 'unmanaged', 'unit': 'nvidia-imex.service'})
    assert plan['writes'] == {} and plan['refuse'] is None and plan['role'] == 'imex'
    assert imex.needs({'host_service': 'unmanaged', 'unit': 'nvidia-imex.service'}) == {}


# Every state systemctl can report for nvidia-imex.service, against what the RKE2 VR200 guide asks of a GPU tray:
# "systemctl disable --now nvidia-imex.service && systemctl mask nvidia-imex.service" - the unit ends stopped, masked
# (persistently: a runtime mask is gone after the reboot) and disabled beneath the mask (the guide: "unmask alone
# leaves the service inactive because it was also disabled"), whatever it was before. The model below is systemctl's
# behaviour (systemctl(1)), not the planner's: ``disable --now`` removes the enablement and stops the unit, ``mask``
# links /etc/systemd/system/<unit> to /dev/null over whatever enablement is there and refuses when a unit FILE is
# there, and neither stops a unit the other did not.
VENDOR = '/usr/lib/systemd/system/nvidia-imex.service'
LOCAL = '/etc/systemd/system/nvidia-imex.service'
UNIT_STATES = [
    # (id, LoadState, UnitFileState, ActiveState, FragmentPath)
    ('enabled-running', 'loaded', 'enabled', 'active', VENDOR),
    ('enabled-local-file', 'loaded', 'enabled', 'active', LOCAL),
    ('enabled-failed', 'loaded', 'enabled', 'failed', VENDOR),
    ('enabled-stopped', 'loaded', 'enabled', 'inactive', VENDOR),
    ('enabled-runtime', 'loaded', 'enabled-runtime', 'active', VENDOR),
    ('enabled-runtime-stopped', 'loaded', 'enabled-runtime', 'inactive', VENDOR),
    ('alias-stopped', 'loaded', 'alias', 'inactive', VENDOR),
    ('disabled-stopped', 'loaded', 'disabled', 'inactive', VENDOR),
    ('disabled-started-by-hand', 'loaded', 'disabled', 'active', VENDOR),
    ('disabled-starting', 'loaded', 'disabled', 'activating', VENDOR),
    ('disabled-reloading', 'loaded', 'disabled', 'reloading', VENDOR),
    ('disabled-stopping', 'loaded', 'disabled', 'deactivating', VENDOR),
    ('disabled-local-file', 'loaded', 'disabled', 'inactive', LOCAL),
    ('static-running', 'loaded', 'static', 'active', VENDOR),
    ('static-stopped', 'loaded', 'static', 'inactive', VENDOR),
    ('indirect-running', 'loaded', 'indirect', 'active', VENDOR),
    ('generated-running', 'loaded', 'generated', 'active', '/run/systemd/generator/nvidia-imex.service'),
    ('masked', 'masked', 'masked', 'inactive', ''),
    ('masked-link', 'masked', 'masked', 'inactive', LOCAL),
    ('masked-runtime', 'masked', 'masked-runtime', 'inactive', ''),
    ('not-found', 'not-found', '', 'inactive', ''),
    ('linked', 'loaded', 'linked', 'active', '/opt/nvidia/imex/nvidia-imex.service'),
    ('linked-stopped', 'loaded', 'linked', 'inactive', '/opt/nvidia/imex/nvidia-imex.service'),
    ('linked-runtime', 'loaded', 'linked-runtime', 'active', '/opt/nvidia/imex/nvidia-imex.service'),
    ('linked-runtime-stopped', 'loaded', 'linked-runtime', 'inactive', '/opt/nvidia/imex/nvidia-imex.service'),
]
# what `systemctl is-enabled` reports for a unit that starts at boot or is linked in (systemctl(1))
GUIDE_ENABLED = ('enabled', 'enabled-runtime', 'linked', 'linked-runtime', 'alias')
GUIDE_RUNNING = ('active', 'activating', 'reloading', 'deactivating')     # systemctl is-active: the unit has a process


def _imex_state(load, unit_file, active, fragment):
    unit = {'Id': 'nvidia-imex.service', 'LoadState': load, 'UnitFileState': unit_file, 'ActiveState': active,
            'FragmentPath': fragment, 'MainPID': '7' if active in GUIDE_RUNNING else '0'}
    return {'units': {'units': {'nvidia-imex.service': unit}, 'error': None}}


def _systemctl(unit, writes):
    """What the role's tasks do to the unit, as systemctl does it (the model above)."""
    unit = dict(unit)
    if writes.get('relocate'):
        assert unit['FragmentPath'].startswith('/etc/systemd/system/'), 'only a local unit file is moved'
        unit['FragmentPath'] = '/usr/local/lib/systemd/system/nvidia-imex.service'
    unit.setdefault('beneath', unit['UnitFileState'] if unit['LoadState'] != 'masked' else 'disabled')
    if writes.get('disable'):
        if unit['beneath'] in GUIDE_ENABLED:
            unit['beneath'] = 'disabled'
        if unit['UnitFileState'] in GUIDE_ENABLED:
            unit['UnitFileState'] = 'disabled'
        unit['ActiveState'] = 'inactive'
    if writes.get('mask'):
        assert unit['LoadState'] == 'masked' or not unit['FragmentPath'].startswith('/etc/systemd/system/'), (
            'systemctl mask refuses: a unit file is in /etc/systemd/system')
        unit.update(LoadState='masked', UnitFileState='masked')
    if writes.get('unmask'):
        unit.update(LoadState='loaded', UnitFileState=unit['beneath'])
    if writes.get('enable'):
        unit.update(UnitFileState='enabled' if unit['UnitFileState'] != 'static' else 'static', ActiveState='active')
        unit['beneath'] = unit['UnitFileState']
    return unit


@pytest.mark.parametrize('name, load, unit_file, active, fragment', UNIT_STATES, ids=[row[0] for row in UNIT_STATES])
def test_imex_masked_ends_masked_and_enabled_runs_or_is_refused(name, load, unit_file, active, fragment):
    inputs = {'host_service': 'masked', 'unit': 'nvidia-imex.service'}
    state = _imex_state(load, unit_file, active, fragment)
    plan = imex.plan(state, inputs)
    assert plan['refuse'] is None, name            # a unit that is not installed is masked all the same
    after = _systemctl(state['units']['units']['nvidia-imex.service'], plan['writes'])
    assert after['ActiveState'] not in GUIDE_RUNNING, '%s: still running after the plan' % name
    assert after['UnitFileState'] == 'masked', '%s: not masked for good (%s)' % (name, after['UnitFileState'])
    assert after['beneath'] not in GUIDE_ENABLED, '%s: still %s beneath the mask' % (name, after['beneath'])
    assert not plan['reboot_required']
    # the next run finds the guide's state and changes nothing
    again = imex.plan({'units': {'units': {'nvidia-imex.service': after}, 'error': None}}, inputs)
    assert not any(again['writes'].values()), '%s: a second run would write %s' % (name, again['writes'])
    # enabled: a running unit restored, a missing one refused
    plan = imex.plan(state, {'host_service': 'enabled', 'unit': 'nvidia-imex.service'})
    if load == 'not-found':
        assert plan['refuse'] is not None and not plan['writes']
        return
    assert plan['refuse'] is None
    after = _systemctl(state['units']['units']['nvidia-imex.service'], plan['writes'])
    assert after['LoadState'] != 'masked' and after['UnitFileState'] not in ('masked', 'masked-runtime'), name
    assert after['ActiveState'] == 'active' and after['UnitFileState'] in ('enabled', 'static'), name


def test_a_part_of_the_tray_that_cannot_be_read_refuses_before_any_write(lab):
    tray = lab()
    blocker = tray.write('etc/not-a-directory', 'x\n')
    plan, _inputs = plan_kernel_tuning(tray, sysctl_file=blocker + '/90-gpu-tray-tuning.conf')
    assert plan['refuse']['msg'].startswith("Could not read the tray's state: cannot stat %s/90-gpu-tray-tuning.conf"
                                            % blocker)
    assert plan['refuse']['msg'].endswith('; nothing was written.') and plan['writes'] == {}
