# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tray_state (one read-only gather) and the preflight's rules that judge it on the controller (plugin_utils/preflight.py).

The filter must reach the same verdicts as the check modules run on their own against the same tray:
each agreement test runs both on one fixture tree.
"""

import os
import re

import pytest


from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.preflight import SpecError, evaluate, report
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.preflight import CHECKS
from ansible_collections.gpu_tray.cluster.plugins.modules import (
    hugepage_check,
    ib_pkey_check,
    kernel_cmdline,
    nic_firmware,
    rdma_facts,
    tray_facts,
    tray_state,
)
import tooldouble
from trayfixture import build_tray, set_pkeys
from unithelpers import containerd_tree, fixture_path

RAILS = ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']
TABLE_OK = dict((bdf, {'e': 'cx7_ok_e.txt', 'plain': 'cx7_ok_no_e.txt'})
                for bdf in ('0000:03:00.0', '0000:04:00.0', '0000:06:00.0', '0000:07:00.0'))
UNITS = {'is-enabled': {'nvidia-imex.service': 'masked'},
         'is-active': {'nvidia-imex.service': 'inactive', 'containerd.service': 'active'}}
GB200_SPEC = {
    'platform': 'nvke-gb200',
    'os': {'os_id': 'ubuntu', 'os_version_id': '24.04', 'kernel_pattern': r'^6\.8\.0-[0-9]+-nvidia-64k$',
           'kernel_hint': 'Ubuntu 24.04 with the -nvidia-64k kernel'},
    'rails': RAILS, 'pkey': '0xffff', 'include_vfs': True, 'firmware': True, 'min_num_vfs': 16,
    'hugepages': [], 'hugepages_check': 'sizes', 'cmdline_forbidden': [], 'containerd': True,
}


@pytest.fixture
def tools(tmp_path):
    """systemctl (containerd active) and mstconfig doubles; returns a dict with their paths and logs."""
    directory = tmp_path / 'tools'
    directory.mkdir()
    systemctl, systemctl_log = tooldouble.systemctl(str(directory), UNITS)
    mst, mst_log = tooldouble.mstconfig(str(directory), TABLE_OK)
    return {'dir': directory, 'systemctl': systemctl, 'systemctl_log': systemctl_log, 'mstconfig': mst,
            'mstconfig_log': mst_log}


def mst_with(tmp_path, name, changes, **kwargs):
    """An mstconfig double in its own directory answering TABLE_OK with ``changes``."""
    directory = tmp_path / name
    directory.mkdir()
    return tooldouble.mstconfig(str(directory), dict(TABLE_OK, **changes), **kwargs)[0]


def gather(run_module, tray, tools, tmp_path, **extra):
    config = str(tmp_path / 'etc' / 'containerd' / 'config.toml')
    if not os.path.exists(config):
        containerd_tree(tmp_path / 'etc', 'root-v3.toml')
    args = {'sysfs_root': tray['sys'], 'proc_root': tray['proc'], 'systemctl_path': tools['systemctl'],
            'os_release_path': fixture_path('os-release', 'ubuntu-24.04'), 'mstconfig_path': tools['mstconfig'],
            'query_firmware': True, 'rails': RAILS, 'containerd_config_path': config, '_ansible_check_mode': True}
    args.update(extra)
    result = run_module(tray_state, args)
    assert not result.failed, result
    return result


def by_check(report):
    return dict((res['name'], res) for res in report['checks'])


# ---- tray_state ----------------------------------------------------------------------------------------

def test_tray_state_facts_equal_tray_facts_and_rdma_facts(run_module, tray, tools, tmp_path):
    state = gather(run_module, tray, tools, tmp_path)
    assert state['changed'] is False
    alone = run_module(tray_facts, {'sysfs_root': tray['sys'], 'proc_root': tray['proc'],
                                    'systemctl_path': tools['systemctl'],
                                    'os_release_path': fixture_path('os-release', 'ubuntu-24.04')})
    assert state['ansible_facts']['gpu_tray'] == alone['ansible_facts']['gpu_tray']
    rdma = run_module(rdma_facts, {'sysfs_root': tray['sys']})['ansible_facts']['gpu_tray_rdma']
    rdma.pop('sysfs_root')
    assert state['ansible_facts']['gpu_tray_rdma'] == rdma
    assert state['rdma']['vfs_by_pf'] == {'0000:06:00.0': ['mlx5_5', 'mlx5_6']}
    assert state['hugepages']['pools']['2048']['nr_hugepages'] == 5128
    assert state['hugepages']['meminfo_default_kb'] == 524288
    assert state['cmdline']['text'].startswith('BOOT_IMAGE=/vmlinuz-6.8.0-1021-nvidia-64k ')
    assert state['containerd']['present'] and state['containerd']['result']['version'] == 3


def test_tray_state_queries_only_the_rails_read_only(run_module, tray, tools, tmp_path):
    state = gather(run_module, tray, tools, tmp_path)
    calls = tooldouble.read_log(tools['mstconfig_log'])
    # the queries run side by side: any call order, results in the rails' order
    assert sorted(c['argv'] for c in calls) == [['-e', '-d', bdf, 'q'] for bdf in
                                                ('0000:03:00.0', '0000:04:00.0', '0000:06:00.0', '0000:07:00.0')]
    assert all(c['LC_ALL'] == 'C' for c in calls)
    assert [d['name'] for d in state['firmware']['devices']] == RAILS
    assert state['firmware']['devices'][0]['command'] == [tools['mstconfig'], '-e', '-d', '0000:03:00.0', 'q']


def test_tray_state_without_firmware_query_runs_no_mstconfig(run_module, tray, tools, tmp_path):
    state = gather(run_module, tray, tools, tmp_path, query_firmware=False)
    assert state['firmware'] == {'queried': False}
    assert not os.path.exists(tools['mstconfig_log'])


def test_tray_state_unknown_rail_missing_tool_and_old_mstflint(run_module, tray, tools, tmp_path):
    unknown = gather(run_module, tray, tools, tmp_path, rails=['mlx5_0', 'mlx5_9'])
    assert unknown['firmware']['unknown'] == ['mlx5_9'] and len(unknown['firmware']['devices']) == 1
    missing = gather(run_module, tray, tools, tmp_path, mstconfig_path=str(tmp_path / 'no-mstconfig'))
    assert 'mstconfig not found' in missing['firmware']['error'] and missing['firmware']['devices'] == []
    retried = gather(run_module, tray, tools, tmp_path, mstconfig_path=mst_with(tmp_path, 'old', {}, no_e=True))
    entry = retried['firmware']['devices'][0]
    assert entry['retried_without_e'] is True and entry['command'][1:] == ['-d', '0000:03:00.0', 'q']


def test_tray_state_unreadable_parts_are_reported_not_raised(run_module, tools, tmp_path):
    bare = build_tray(str(tmp_path / 'bare'), devices=[], hugepages={}, cmdline=None)
    state = gather(run_module, bare, tools, tmp_path, containerd_config_path=str(tmp_path / 'none.toml'))
    assert state['cmdline']['text'] is None and 'cannot read' in state['cmdline']['error']
    assert state['hugepages']['pools'] == {}
    assert state['containerd'] == {'present': False, 'config_path': str(tmp_path / 'none.toml'), 'result': None,
                                   'problems': [], 'warnings': [], 'error': None}
    assert state['ansible_facts']['gpu_tray_rdma']['rails'] == []


def preflight_report(state, spec, host=None):
    """The preflight's verdict on one read, as the tray_plan action's planner preflight makes it."""
    return report(host, spec.get('platform'), evaluate(state, spec))


# ---- the preflight's verdicts ------------------------------------------------------------------------

def test_healthy_gb200_tray_passes_every_check(run_module, tray, tools, tmp_path):
    report = preflight_report(gather(run_module, tray, tools, tmp_path), GB200_SPEC, host='tray01')
    assert report['passed'] is True and report['failed_checks'] == [], report
    assert report['host'] == 'tray01' and report['platform'] == 'nvke-gb200'
    assert [res['name'] for res in report['checks']] == [c for c in CHECKS if c != 'hugepages']
    assert report['skipped_checks'] == ['hugepages']
    assert all(res['fix'] == '' for res in report['checks'])


def test_messages_are_one_sentence_without_host_with_details_and_fix(run_module, tmp_path, tools):
    t = build_tray(str(tmp_path / 't'), osrelease='6.8.0-1021-generic',
                   cmdline='BOOT_IMAGE=/vmlinuz ro init_on_alloc=0 init_on_alloc=0')
    set_pkeys(t, 'mlx5_5', ['0x7fff'])
    report = preflight_report(gather(run_module, t, tools, tmp_path), GB200_SPEC, host='tray01')
    assert report['failed_checks'] == ['os_image', 'pkeys', 'kernel_cmdline']
    for res in report['checks']:
        assert '\n' not in res['message'] and res['message'].endswith('.') and 'tray01' not in res['message'], res['message']
        assert len(res['message']) < 100
        if res['status'] == 'failed':
            assert res['details'] and res['fix']
    checks = by_check(report)
    assert '6.8.0-1021-generic' in checks['os_image']['details'][0]
    assert checks['kernel_cmdline']['details'] == ['duplicated: init_on_alloc=0 (x2)']


def test_limited_vf_fails_pkeys_naming_the_vf_guid_and_the_fabric_fix(run_module, tray, tools, tmp_path):
    set_pkeys(tray, 'mlx5_6', ['0x7fff'])
    state = gather(run_module, tray, tools, tmp_path)
    pkeys = by_check(preflight_report(state, GB200_SPEC))['pkeys']
    assert pkeys['status'] == 'failed' and pkeys['message'] == ('1 InfiniBand port is a limited member of partition '
                                                                '0xffff, not a full member: VF mlx5_6 of mlx5_3.')
    assert pkeys['details'] == ['mlx5_6 port 1 (VF of 0000:06:00.0) GUID b83f:d203:00a1:b215 holds '
                                '0x7fff (default partition, limited member)']
    assert 'UFM' in pkeys['fix'] and 'fixing the PFs alone is not enough' in pkeys['fix']
    # the module on its own, same tray: the same failing ports
    alone = run_module(ib_pkey_check, {'sysfs_root': tray['sys'], 'fail_on_error': False})
    assert pkeys['data']['failed_ports'] == alone['failed_ports']
    # VR200 does not check VFs (include_vfs false in the platform table)
    vr = by_check(preflight_report(state, dict(GB200_SPEC, include_vfs=False)))['pkeys']
    assert vr['status'] == 'passed' and vr['message'] == 'All 4 InfiniBand ports are full members of partition 0xffff.'


def test_firmware_verdict_equals_nic_firmware(run_module, tray, tools, tmp_path):
    mst = mst_with(tmp_path, 'mst', {'0000:04:00.0': {'e': 'cx7_nextboot8_e.txt', 'plain': 'cx7_nextboot8_no_e.txt'},
                                     '0000:06:00.0': {'e': 'cx7_sriov_off_eth_e.txt'}})
    state = gather(run_module, tray, tools, tmp_path, mstconfig_path=mst)
    firmware = by_check(preflight_report(state, GB200_SPEC))['nic_firmware']
    alone = run_module(nic_firmware, {'sysfs_root': tray['sys'], 'rails': RAILS, 'mstconfig_path': mst,
                                      'min_num_vfs': 16, 'fail_on_error': False})
    assert firmware['status'] == 'failed' and firmware['data']['failed_devices'] == alone['failed_devices']
    assert firmware['data']['failed_devices'] == ['0000:04:00.0', '0000:06:00.0']
    assert firmware['message'] == 'NIC firmware settings are wrong on 2 of 4 devices (0000:04:00.0, 0000:06:00.0).'
    assert ('0000:04:00.0: NUM_OF_VFS is current=16, next boot=8 (default=16); expected >= 16 in next boot'
            in firmware['details'])
    assert any('LINK_TYPE_P1 is current=ETH(2)' in line for line in firmware['details'])
    assert 'cold power-cycle' in firmware['fix'] and 'mstfwreset' in firmware['fix']
    assert 'could not be queried' not in firmware['fix']
    for bdf, entry in ((e['bdf'], e) for e in firmware['data']['devices']):
        assert entry['problems'] == alone['devices'][bdf]['problems']


def test_firmware_of_a_rail_without_pci_function_names_the_rail(run_module, tray, tools, tmp_path):
    """Only an unknown rail wrong: the message names it (not 'wrong on 0 of 1 rails') and the fix is the query fix."""
    state = gather(run_module, tray, tools, tmp_path, rails=['mlx5_0', 'mlx5_9'])
    res = by_check(preflight_report(state, GB200_SPEC))['nic_firmware']
    assert res['status'] == 'failed' and res['message'] == 'Rail mlx5_9 has no PCI function, so its firmware was not checked.'
    assert res['data']['failed_devices'] == [] and res['data']['unknown'] == ['mlx5_9']
    assert any('rails mlx5_9 have no PCI function' in line for line in res['details'])
    assert 'lspci' in res['fix'] and 'cold power-cycle' not in res['fix']
    mst = mst_with(tmp_path, 'mst-unknown', {'0000:03:00.0': {'e': 'cx7_sriov_off_eth_e.txt'}})
    both = by_check(preflight_report(gather(run_module, tray, tools, tmp_path, rails=['mlx5_0', 'mlx5_9'],
                                            mstconfig_path=mst), GB200_SPEC))['nic_firmware']
    assert both['message'] == ('NIC firmware settings are wrong on 1 of 1 devices (0000:03:00.0); '
                               'rail mlx5_9 has no PCI function.')
    assert 'cold power-cycle' in both['fix'] and 'lspci' in both['fix']


def test_firmware_unqueryable_fails_with_the_query_fix(run_module, tray, tools, tmp_path):
    missing = gather(run_module, tray, tools, tmp_path, mstconfig_path=str(tmp_path / 'none'))
    res = by_check(preflight_report(missing, GB200_SPEC))['nic_firmware']
    assert res['status'] == 'failed' and res['message'] == 'The NIC firmware could not be queried.'
    assert 'mstflint' in res['fix']
    mst = mst_with(tmp_path, 'mst', {'0000:07:00.0': {'e': 'open_error.txt', 'rc': 3}})
    res = by_check(preflight_report(gather(run_module, tray, tools, tmp_path, mstconfig_path=mst),
                                    GB200_SPEC))['nic_firmware']
    assert res['status'] == 'failed' and res['data']['failed_devices'] == ['0000:07:00.0']
    assert any(line.startswith('0000:07:00.0: cannot query firmware') for line in res['details'])
    not_asked = by_check(preflight_report(gather(run_module, tray, tools, tmp_path, query_firmware=False),
                                          GB200_SPEC))['nic_firmware']
    assert not_asked['status'] == 'failed'                      # a check that read nothing cannot pass
    skipped = preflight_report(gather(run_module, tray, tools, tmp_path), dict(GB200_SPEC, firmware=False))
    assert 'nic_firmware' in skipped['skipped_checks']


def vr200_tray(path, nr_2m):
    return build_tray(path, hugepages={2048: nr_2m, 524288: 0, 16777216: 0}, osrelease='7.0.0-5-nvidia-bos-64k')


def test_fresh_vr200_tray_passes_sizes_and_fails_counts_like_hugepage_check(run_module, tools, tmp_path):
    """Issue 13: before the reboot the 2M pool holds 0 pages: sizes pass, counts fail naming pool and count."""
    fresh = vr200_tray(str(tmp_path / 'fresh'), 0)
    requested = [{'size': '2M', 'count': 5128}]
    state = gather(run_module, fresh, tools, tmp_path)
    spec = dict(GB200_SPEC, hugepages=requested)
    sizes = by_check(preflight_report(state, spec))['hugepages']
    assert not sizes['status'] == 'failed' and sizes['data']['checked'] == 'sizes' and sizes['message'] == 'Huge page sizes OK (2M).'
    counts = by_check(preflight_report(state, dict(spec, hugepages_check='counts')))['hugepages']
    assert counts['status'] == 'failed' and counts['data']['checked'] == 'counts'
    assert 'the 2M pool holds 0 of the 5128 requested pages' in counts['details'][0]
    for mode, mine in (('sizes', sizes), ('counts', counts)):
        alone = run_module(hugepage_check, {'sysfs_root': fresh['sys'], 'proc_root': fresh['proc'],
                                            'requested': requested, 'check': mode, 'fail_on_error': False})
        assert alone['checked'] == mode and alone['results'] == mine['data']['results']
        assert bool(alone['problems']) == (mine['status'] == 'failed')
    booted = vr200_tray(str(tmp_path / 'booted'), 5128)
    after = by_check(preflight_report(gather(run_module, booted, tools, tmp_path),
                                      dict(spec, hugepages_check='counts')))['hugepages']
    assert not after['status'] == 'failed' and after['message'] == 'Huge page counts OK (2M x 5128).'


def test_1g_pool_is_refused_in_sizes_mode_naming_the_pools_that_exist(run_module, tools, tmp_path):
    state = gather(run_module, vr200_tray(str(tmp_path / 't'), 0), tools, tmp_path)
    requested = [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}]
    res = by_check(preflight_report(state, dict(GB200_SPEC, hugepages=requested)))['hugepages']
    # a refusal of the pools the user set: the variable comes first
    assert res['status'] == 'failed' and res['message'] == ('gpu_tray_tuning_hugepages asks for 1G huge pages, but the '
                                                            'running kernel has no 1G huge page pool.')
    assert res['details'] == ['the running kernel has no 1G huge page pool (pools on this kernel: 2M, 512M, 16G)']
    assert '2M, 512M, 16G' in res['fix']


def test_cmdline_verdict_equals_kernel_cmdline(run_module, tools, tmp_path):
    t = build_tray(str(tmp_path / 't'), cmdline='BOOT_IMAGE=/vmlinuz ro isolcpus=1-3 hugepagesz=2M hugepages=8 '
                                                'hugepagesz=2M hugepages=8')
    state = gather(run_module, t, tools, tmp_path)
    res = by_check(preflight_report(state, dict(GB200_SPEC, cmdline_forbidden=['isolcpus'])))['kernel_cmdline']
    alone = run_module(kernel_cmdline, {'proc_root': t['proc'], 'forbidden': ['isolcpus'], 'fail_on_error': False})
    assert res['status'] == 'failed'
    for key in ('forbidden_present', 'duplicates', 'tokens'):
        assert res['data'][key] == alone[key]
    assert res['details'] == ['forbidden but present: isolcpus=1-3',
                              'duplicated: hugepagesz=2M (x2) hugepages=8 after hugepagesz=2M (x2)']


def test_containerd_drop_in_above_root_fails_only_where_containerd_runs(run_module, tray, tools, tmp_path):
    image = tmp_path / 'image'      # root-v2 imports /etc/containerd/conf.d/*.toml: read under the image
    containerd_tree(image / 'etc', 'root-v2.toml', [('99-nvidia-v3.toml', '99-nvidia.toml')])
    config = '/etc/containerd/config.toml'
    state = gather(run_module, tray, tools, tmp_path, containerd_config_path=config, containerd_root=str(image))
    res = by_check(preflight_report(state, GB200_SPEC))['containerd_config']
    assert res['status'] == 'failed' and 'higher than root' in res['details'][0] and 'RUNTIME_CONFIG_SOURCE=file' in res['fix']
    rke2_dir = tmp_path / 'rke2'
    rke2_dir.mkdir()
    rke2, _log = tooldouble.systemctl(str(rke2_dir), {'is-enabled': {}, 'is-active': {'rke2-agent.service': 'active'}})
    other = preflight_report(gather(run_module, tray, tools, tmp_path, containerd_config_path=config,
                                    containerd_root=str(image), systemctl_path=rke2), GB200_SPEC)
    assert 'containerd_config' in other['skipped_checks']


def test_rails_missing_and_none(run_module, tray, tools, tmp_path):
    state = gather(run_module, tray, tools, tmp_path, rails=None)
    res = by_check(preflight_report(state, dict(GB200_SPEC, rails=RAILS + ['mlx5_7'])))['rails']
    assert res['status'] == 'failed' and res['message'] == 'Rail mlx5_7 is missing or not InfiniBand.'
    auto = by_check(preflight_report(state, dict(GB200_SPEC, rails='')))['rails']
    assert not auto['status'] == 'failed' and auto['message'] == ('Rails mlx5_0 (0000:03:00.0), mlx5_1 (0000:04:00.0), '
                                                                  'mlx5_3 (0000:06:00.0), mlx5_4 (0000:07:00.0).')
    assert auto['data']['pci'] == {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0000:04:00.0', 'mlx5_3': '0000:06:00.0',
                                   'mlx5_4': '0000:07:00.0'}
    bare = build_tray(str(tmp_path / 'bare'), devices=[])
    none = by_check(preflight_report(gather(run_module, bare, tools, tmp_path, rails=None),
                                     dict(GB200_SPEC, rails=[])))['rails']
    assert none['status'] == 'failed' and none['message'] == 'No InfiniBand rails found.'


def test_rails_at_other_pci_addresses_than_the_site_gives_fail_naming_the_variable(run_module, tray, tools, tmp_path):
    """gpu_tray_rail_pci_addresses is what the chart stack's SR-IOV policies select: a tray whose rail is elsewhere
    would get no VFs on that rail, so the preflight fails it before anything is changed."""
    state = gather(run_module, tray, tools, tmp_path)
    here = {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0000:04:00.0', 'mlx5_3': '0000:06:00.0', 'mlx5_4': '0000:07:00.0'}
    same = by_check(preflight_report(state, dict(GB200_SPEC, rail_pci=here)))['rails']
    assert same['status'] != 'failed'
    models = dict(here, mlx5_1=['0002:03:00.0', '0000:04:00.0'])          # a list: tray models differ
    assert not by_check(preflight_report(state, dict(GB200_SPEC, rail_pci=models)))['rails']['status'] == 'failed'
    partial = {'mlx5_0': '0000:03:00.0'}                                    # rails it does not name are not checked
    assert not by_check(preflight_report(state, dict(GB200_SPEC, rail_pci=partial)))['rails']['status'] == 'failed'
    moved = dict(here, mlx5_3='0010:03:00.0', mlx5_4=['0012:03:00.0', '0013:03:00.0'])
    res = by_check(preflight_report(state, dict(GB200_SPEC, rail_pci=moved)))['rails']
    assert res['status'] == 'failed'
    assert res['message'] == 'Rail mlx5_3 is at PCI address 0000:06:00.0, not at 0010:03:00.0 as gpu_tray_rail_pci_addresses says.'
    assert res['details'] == ['mlx5_3 is at 0000:06:00.0; gpu_tray_rail_pci_addresses gives 0010:03:00.0',
                              'mlx5_4 is at 0000:07:00.0; gpu_tray_rail_pci_addresses gives 0012:03:00.0, 0013:03:00.0']
    assert 'gpu_tray_rail_pci_addresses' in res['fix']


@pytest.mark.parametrize('spec, words', [
    ({'pkey': 70000}, 'gpu_tray_pkey (preflight_pkey)'),            # a number is a key only within 1-0xffff
    ({'pkey': '0x8000'}, 'gpu_tray_pkey (preflight_pkey)'),
    ({'hugepages': [{'size': '3Q', 'count': 1}]}, 'gpu_tray_tuning_hugepages[0].size (preflight_hugepages_requested)'),
    ({'checks': ['os_image', 'bogus']}, 'unknown checks bogus'),
])
def test_bad_spec_is_an_error_naming_the_variable(run_module, tray, tools, tmp_path, spec, words):
    state = gather(run_module, tray, tools, tmp_path)
    with pytest.raises(SpecError, match=re.escape(words)):
        preflight_report(state, dict(GB200_SPEC, **spec))


# ---- write_evidence (action plugin, run through ansible) ---------------------------------------------

def test_write_evidence_writes_in_check_mode_once_and_stays_under_dest(adhoc, tmp_path):
    dest = tmp_path / 'report'
    files = [{'path': 'tray01/preflight.json', 'json': {'passed': False, 'b': [1], 'a': 'x'}},
             {'path': 'preflight-summary.md', 'content': '# Preflight summary\n'}]
    rc, first = adhoc('write_evidence', {'dest': str(dest), 'files': files}, check=True)
    assert rc == 0 and first['changed'] is True, first
    assert (dest / 'tray01' / 'preflight.json').read_text() == \
        '{\n    "a": "x",\n    "b": [\n        1\n    ],\n    "passed": false\n}\n'
    assert (dest / 'preflight-summary.md').read_text() == '# Preflight summary\n'
    assert oct((dest / 'preflight-summary.md').stat().st_mode & 0o777) == '0o644'
    rc, again = adhoc('write_evidence', {'dest': str(dest), 'files': files}, check=False)
    assert rc == 0 and again['changed'] is False and again['written'] == []
    rc, escape = adhoc('write_evidence', {'dest': str(dest), 'files': [{'path': '../x', 'content': 'y'}]})
    assert rc != 0 and 'must be a relative path under dest' in escape['msg']
    assert not (tmp_path / 'x').exists()
    rc, both = adhoc('write_evidence', {'dest': str(dest), 'files': [{'path': 'y', 'content': 'y', 'json': 1}]})
    assert rc != 0 and 'mutually exclusive' in both['msg']


# ---- preflight rules on the edges of what a tray_state read can hold --------------------------------------

def _check(state, spec, name):
    return by_check(preflight_report(state, dict(GB200_SPEC, **spec)))[name]


def test_preflight_rules_on_partial_reads(run_module, tray, tools, tmp_path):
    import copy as _copy
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight
    state = gather(run_module, tray, tools, tmp_path)
    # a rail the inventory does not list is named as extra
    rails = _check(state, {'rails': ['mlx5_0', 'mlx5_1', 'mlx5_3']}, 'rails')
    assert rails['status'] == 'failed' and rails['message'] == 'The InfiniBand rails differ from the expected ones.'
    assert rails['details'][-1] == 'not in gpu_tray_rails: mlx5_4'
    # huge pages requested from a kernel that has no pools
    bare = _copy.deepcopy(state)
    bare['hugepages']['pools'] = {}
    huge = _check(bare, {'hugepages': [{'size': '2M', 'count': 4}]}, 'hugepages')
    assert huge['status'] == 'failed' and huge['details'][0] == 'no huge page pools under %s' % state['hugepages']['base']
    assert huge['message'] == ('gpu_tray_tuning_hugepages asks for 2M huge pages, but the running kernel has no 2M huge '
                               'page pool.')
    # an unreadable /proc/cmdline fails (never passes over nothing); a missing argument is named
    unread = _copy.deepcopy(state)
    unread['cmdline'] = {'text': None, 'error': 'cannot read /proc/cmdline', 'path': '/proc/cmdline'}
    cmd = _check(unread, {}, 'kernel_cmdline')
    assert cmd['status'] == 'failed' and cmd['message'] == 'The kernel command line could not be read.'
    assert cmd['details'] == ['cannot read /proc/cmdline'] and cmd['data'] == {'path': '/proc/cmdline', 'notes': []}
    missing = _check(state, {'cmdline_required': ['nohz_full=2-71']}, 'kernel_cmdline')
    assert missing['status'] == 'failed' and missing['details'] == ['missing: nohz_full=2-71'], missing
    # containerd: disabled is skipped; no config file, or an unreadable one, fails naming what
    off = preflight_report(state, dict(GB200_SPEC, containerd=False))
    assert 'containerd_config' in off['skipped_checks']
    assert preflight.check_containerd(state, {'containerd': False})['message'] == 'Not checked: disabled.'
    gone = _copy.deepcopy(state)
    gone['containerd'] = {'present': False, 'config_path': '/etc/containerd/config.toml', 'error': None}
    absent = _check(gone, {}, 'containerd_config')
    assert absent['status'] == 'failed' and absent['details'] == ['/etc/containerd/config.toml does not exist']
    gone['containerd'] = {'present': True, 'config_path': '/etc/containerd/config.toml', 'error': 'not TOML'}
    broken = _check(gone, {}, 'containerd_config')
    assert broken['status'] == 'failed' and broken['details'] == ['not TOML']
    assert broken['message'] == 'The containerd configuration could not be read.'


def test_firmware_entries_that_cannot_be_judged():
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import judges
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight
    # unparsable output without an -E- line: the last three lines, not more
    raw = {'bdf': '0000:03:00.0', 'rc': 1, 'stdout': 'one\ntwo\nthree\nfour\n', 'stderr': ''}
    entry = preflight.firmware_entry(raw, {})
    assert entry['ok'] is False and entry['error'].startswith('mstconfig rc=1, unparsable output (')
    assert entry['error'].endswith('): two | three | four') and entry['problems'] == []
    # failing parameters without values in the table are one line each, in the checker's order
    problems = [{'param': 'SRIOV_EN', 'detail': 'SRIOV_EN is not in the table', 'column': None, 'expected': 'True'},
                {'param': 'NUM_OF_VFS', 'detail': 'NUM_OF_VFS is not in the table', 'column': None, 'expected': '16'}]
    entry = dict(entry, error=None, problems=problems, params={})
    assert judges.firmware_lines(entry) == ['0000:03:00.0: SRIOV_EN is not in the table; expected True',
                                            '0000:03:00.0: NUM_OF_VFS is not in the table; expected 16']


def test_firmware_without_current_column_or_with_an_empty_table(run_module, tray, tools, tmp_path):
    import copy as _copy
    from ansible_collections.gpu_tray.cluster.plugins.module_utils.mstconfig import EMPTY_TABLE
    state = gather(run_module, tray, tools, tmp_path)
    with open(fixture_path('mstconfig', 'cx7_ok_no_e.txt')) as handle:
        plain = handle.read()
    old = _copy.deepcopy(state)
    for raw in old['firmware']['devices']:
        raw.update(stdout=plain, stderr='', rc=0)
    res = _check(old, {}, 'nic_firmware')
    assert not res['status'] == 'failed' and res['message'] == ('NIC firmware settings OK on 0000:03:00.0, 0000:04:00.0, '
                                                                '0000:06:00.0, 0000:07:00.0.')
    assert res['details'] == ['%s: mstconfig printed no Current column (queried without -e); only next-boot values '
                              'were checked' % bdf
                              for bdf in ('0000:03:00.0', '0000:04:00.0', '0000:06:00.0', '0000:07:00.0')]
    # a device whose table is empty counts as unreadable: the query fix only, not the power-cycle fix
    empty = _copy.deepcopy(state)
    header = plain.split('Configurations:')[0] + 'Configurations:                                      Next Boot\n'
    empty['firmware']['devices'][0].update(stdout=header, stderr='', rc=0)
    res = _check(empty, {}, 'nic_firmware')
    entry = res['data']['devices'][0]
    assert res['status'] == 'failed' and [p['param'] for p in entry['problems']] == [EMPTY_TABLE], entry
    assert res['message'] == 'The firmware settings of 1 of 4 devices could not be read (0000:03:00.0).'
    assert 'lspci' in res['fix'] and 'cold power-cycle' not in res['fix']
