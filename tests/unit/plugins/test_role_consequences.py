# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the roles' YAML decides - defaults, default() literals, vars expressions, data lists - seen where it takes
effect, rendered in this process with ansible-core's Templar (tests/unit/roletemplar.py), no play:

* the guides' rules where a default or a data list carries them: no RDMA modules on a control-plane node, the
  LimitSTACK drop-in on every runtime unit, every directory modprobe reads, the host IMEX unit;
* the safety switches' effective defaults: each at its safe value when the inventory says nothing.
"""

import os
import re

import pytest
import yaml

from roletemplar import REPO, expression, render


@pytest.mark.parametrize('groups', [['control_plane'], ['kube_control_plane'], ['gpu_trays', 'control_plane']])
def test_rdma_modules_never_load_on_a_control_plane_node(groups):
    """NVKE GB200 guide: control-plane nodes carry GPU-node labels they do not earn; the recipe excludes them from
    rdma-modules explicitly."""
    assert render('rdma_modules', '__rdma_modules_inputs', gpu_tray_platform='nvke-gb200',
                  group_names=groups)['managed'] is False
    assert render('rdma_modules', '__rdma_modules_inputs', gpu_tray_platform='nvke-gb200',
                  group_names=['gpu_trays'])['managed'] is True


def test_the_limitstack_dropin_goes_on_every_runtime_unit():
    """nodeprep.md 1.5: the 26.04 containerd_service.sh writes LimitSTACK=67108864 for every installed runtime unit
    (containerd.service, rke2-server.service, rke2-agent.service, k3s*.service): on RKE2 containerd.service is
    inactive, so a drop-in on it alone has no effect (defect #134)."""
    inputs = render('kernel_tuning', '__kernel_tuning_inputs', gpu_tray_platform='rke2-vr200')
    assert set(inputs['runtime_units']) >= {'containerd.service', 'rke2-server.service', 'rke2-agent.service',
                                            'k3s.service', 'k3s-agent.service'}
    assert int(inputs['limit_stack']) == 67108864


def test_every_directory_modprobe_reads_is_searched_for_another_netns_mode():
    """modprobe.d(5): /lib, /usr/lib (merged /usr), /usr/local/lib, /run and /etc modprobe.d - a netns_mode set in
    any of them is a second owner of the setting."""
    dirs = render('rdma_netns', '__rdma_netns_inputs', gpu_tray_platform='rke2-vr200')['modprobe_dirs']
    assert set(dirs) == {'/etc/modprobe.d', '/run/modprobe.d', '/usr/local/lib/modprobe.d', '/usr/lib/modprobe.d',
                         '/lib/modprobe.d'}


def test_the_host_imex_unit_is_the_guides():
    """RKE2 VR200 guide: systemctl disable --now nvidia-imex.service && systemctl mask nvidia-imex.service."""
    assert expression('imex', '{{ imex_unit }}', gpu_tray_platform='rke2-vr200') == 'nvidia-imex.service'
    assert expression('imex', '{{ imex_host_service }}', gpu_tray_platform='rke2-vr200') == 'masked'


# (role, variable, safe value, why) - each a safety or security switch, as the role sees it with an empty inventory
SAFETY_DEFAULTS = [
    ('rolling_reboot', 'rolling_reboot_batch', 1, 'one tray of a group at a time (the guides: one node at a time)'),
    ('rolling_reboot', 'rolling_reboot_foreign_controllers', 'refuse',
     'never reboot a tray another reboot controller also drives'),
    ('rolling_reboot', 'rolling_reboot_bmc_validate_certs', True, 'the BMC is authenticated over TLS'),
    ('rolling_reboot', 'rolling_reboot_bmc_recover', 'none', 'a power cycle only when the site asks for it'),
    ('rolling_reboot', 'rolling_reboot_drain', 'auto', 'a node of the cluster is drained before its reboot'),
    ('rolling_reboot', 'rolling_reboot_drain_via', 'auto', 'through the Maintenance Operator where it runs'),
    ('preflight', 'preflight_bmc_validate_certs', True, 'the BMC is authenticated over TLS'),
    ('preflight', 'preflight_fail', True, 'a preflight failure stops the run before any tray is changed'),
    ('preflight', 'preflight_check_chart_values', True, 'no DOCA-OFED / nvidia-peermem values reach a chart'),
    ('preflight', 'preflight_pkey', '0xffff', 'the default partition (NVKE guide) unless the fabric assigns one'),
    ('preflight', 'preflight_check_firmware', None, "the platform profile decides (NVKE: checked)"),
    ('stack', 'stack_bundle_vendor_charts', False, 'a bundle vendors charts only when asked'),
    ('stack', 'stack_use_nodewright', False, "the collection's host roles tune the trays, not NodeWright"),
    ('stack', 'stack_serial', False, 'tiers, as AICR deploys'),
    ('validate', 'validate_fail_fast', False, 'every check runs and is reported'),
]


@pytest.mark.parametrize('role, name, safe, why', SAFETY_DEFAULTS, ids=[row[1] for row in SAFETY_DEFAULTS])
def test_each_safety_switch_is_safe_when_the_inventory_says_nothing(role, name, safe, why):
    value = render(role, name, gpu_tray_platform='nvke-gb200')
    assert value == safe and type(value) is type(safe), '%s is %r, the safe default is %r: %s' % (
        name, value, safe, why)


@pytest.mark.parametrize('platform_name, required', [('rke2-vr200', True), ('nvke-gb200', False), (None, True)])
def test_the_bmc_is_required_by_default_where_the_platform_reboots(platform_name, required):
    """BMC access is checked before the first reboot: required by default on the platform whose kernel arguments
    take one reboot per tray (rke2-vr200), not on nvke-gb200, where nothing the collection prepares reboots; the
    inventory's gpu_tray_bmc_required decides over both. No platform profile to say otherwise: BMC access must be
    ready before a reboot (the guides' safe side)."""
    host = {'gpu_tray_platform': platform_name} if platform_name else {}
    for role in ('preflight', 'rolling_reboot'):       # one value for the check and the reboot (issue 44)
        option = '%s_bmc_required' % role
        assert render(role, option, **host) is required, role
        assert render(role, option, gpu_tray_bmc_required=not required, **host) is (not required)


def test_the_validate_phases_run_all_five_by_default():
    phases = render('validate', '__validate_phases', gpu_tray_platform='nvke-gb200')
    assert phases == ['readiness', 'deployment', 'trays', 'conformance', 'performance']


def test_every_file_the_roles_write_is_one_its_reader_reads():
    """What reads each file the preparing roles write, and which names it reads (the man pages): systemd-sysctl
    /etc/sysctl.d/*.conf (sysctl.d(5)), update-grub /etc/default/grub.d/*.cfg (Debian's grub-mkconfig), systemd-modules-
    load /etc/modules-load.d/*.conf (modules-load.d(5)), modprobe /etc/modprobe.d/*.conf (modprobe.d(5)), unit drop-ins
    <unit>.d/*.conf (systemd.unit(5)); a unit file moved out of /etc/systemd/system (to be masked) must stay in the
    unit search path; the rolling reboot verifies the GRUB drop-in kernel_tuning writes."""
    host = {'gpu_tray_platform': 'rke2-vr200'}
    tuning = render('kernel_tuning', '__kernel_tuning_inputs', **host)
    assert re.match(r'^/etc/sysctl\.d/[^/]+\.conf$', tuning['sysctl_file'])
    assert re.match(r'^/etc/default/grub\.d/[^/]+\.cfg$', tuning['grub_dropin'])
    assert tuning['grub_default_file'] == '/etc/default/grub' and tuning['grub_cfg'] == '/boot/grub/grub.cfg'
    assert render('kernel_tuning', 'kernel_tuning_update_grub_command', **host) == ['update-grub']
    assert re.match(r'^[^/]+\.conf$', tuning['limit_stack_dropin'])
    load_file = render('rdma_modules', '__rdma_modules_inputs', gpu_tray_platform='nvke-gb200')['load_file']
    assert re.match(r'^/etc/modules-load\.d/[^/]+\.conf$', load_file)
    assert re.match(r'^/etc/modprobe\.d/[^/]+\.conf$', render('rdma_netns', '__rdma_netns_inputs', **host)['conf_file'])
    assert expression('imex', '{{ imex_local_unit_dir }}', **host) in (
        '/usr/local/lib/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system')
    assert render('rolling_reboot', 'rolling_reboot_grub_dropin', **host) == tuning['grub_dropin']


@pytest.mark.parametrize('role, name', [('stack', 'stack_recipe'), ('validate', 'validate_recipe')])
@pytest.mark.parametrize('groups', [{'gpu_trays': ['tray01']}, {}], ids=['trays', 'no-trays'])
def test_an_inventory_without_a_recipe_is_told_to_set_gpu_tray_recipe(role, name, groups):
    """No gpu_tray_recipe on the API host nor on a tray (or no tray in the inventory at all, as for a cluster
    validated from the API host alone): the role's recipe stays empty, and the planner (validate plans through the
    stack role) refuses it naming the variable to set and the recipes it takes - not "unknown recipe" of some
    placeholder, nor a template error."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack_plan
    recipe = render(role, name, groups=groups, hostvars={'tray01': {}})
    assert recipe == ''
    with pytest.raises(stack_plan.StackError, match=r'^no recipe: set gpu_tray_recipe .* gb200-nvke-ubuntu-training'):
        stack_plan.recipe_name({'recipe': recipe, 'extra_recipes': {}}, {})


def test_a_failed_tuning_lookup_requests_no_hugepage_pools():
    """The preflight reads the pools kernel_tuning will request through the role_inputs lookup (errors ignored: the
    input check reports a bad tuning input itself). When that lookup gives nothing (here: no platform to read a
    tuning profile from), the preflight checks no pool - it does not fail the run on a template error of its own."""
    assert render('preflight', '__preflight_kernel_tuning') == {}
    assert render('preflight', 'preflight_hugepages_requested') == []
    # and with the platform's profile, the pools kernel_tuning requests (VR200 training: 2M pages)
    pools = render('preflight', 'preflight_hugepages_requested', gpu_tray_platform='rke2-vr200')
    assert pools == render('kernel_tuning', '__kernel_tuning_inputs', gpu_tray_platform='rke2-vr200')['hugepages']
    assert pools and all(pool['size'] == '2M' for pool in pools)


def test_the_vfs_per_rail_have_one_default_the_platform_profile():
    """numVfs has one default, the platform profile's sriov.num_vfs (16 on NVKE GB200, the guide's NUM_OF_VFS): the
    stack role reads it through the run context; without a platform the role has none, and the planner takes the
    profile of the recipe's platform - a site recipe of no platform is refused naming gpu_tray_num_vfs."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack_plan
    assert render('stack', 'stack_num_vfs', gpu_tray_platform='nvke-gb200', groups={}, hostvars={}) == 16
    assert render('stack', 'stack_num_vfs', gpu_tray_platform='nvke-gb200', gpu_tray_num_vfs=8, groups={},
                  hostvars={}) == 8
    assert render('stack', 'stack_num_vfs', groups={}, hostvars={}) is None
    assert stack_plan._num_vfs({'num_vfs': None, 'recipe': 'gb200-nvke-ubuntu-training'}) == 16
    assert stack_plan._num_vfs({'num_vfs': 8, 'recipe': 'gb200-nvke-ubuntu-training'}) == 8
    assert stack_plan._num_vfs({'num_vfs': None, 'recipe': 'my-site-recipe'}) is None


def test_a_tray_without_a_platform_has_its_netns_mode_reported_not_judged():
    """validate reads the ib_core netns_mode rdma_netns sets, through the role_inputs lookup (errors ignored). Where
    that gives nothing (no platform: the API host, or a tray the preflight already refused), the mode is reported
    without a judgement ('unmanaged') - never judged against a mode nothing set; with the platform, the profile's."""
    assert render('validate', 'validate_netns_mode') == 'unmanaged'
    assert render('validate', 'validate_netns_mode', gpu_tray_platform='rke2-vr200') == 'exclusive'
    assert render('validate', 'validate_netns_mode', gpu_tray_platform='nvke-gb200') == 'unmanaged'


def test_the_preflight_judges_the_containerd_configuration_of_every_tray():
    """The preflight's spec (as the role renders it) keeps the containerd check on: a tray whose containerd
    configuration cannot be read fails the preflight, it is not skipped as 'disabled'."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight
    spec = render('preflight', '__preflight_spec', gpu_tray_platform='nvke-gb200', inventory_hostname='tray01')
    state = {'ansible_facts': {'gpu_tray': {'container_runtime': 'containerd'}},
             'containerd': {'present': True, 'error': 'permission denied', 'config_path': '/etc/containerd/config.toml'}}
    result = preflight.check_containerd(state, spec)
    assert result['status'] == 'failed', result


@pytest.mark.parametrize('plan, shown, line', [
    ({'unreachable': True, 'msg': 'Failed to connect to the host via ssh'}, 'UNREACHABLE', 'Unreachable: tray02.'),
    ({'failed': True, 'msg': 'tray_state: /sys is not mounted'}, 'NOT READ', 'Read failed: tray02.'),
], ids=['unreachable', 'read-failed'])
def test_a_tray_the_preflight_could_not_read_is_never_shown_as_passed(plan, shown, line):
    """The record of a tray the read did not reach (__preflight_unread, what the evidence, the summary and the AWX
    artifact carry): not passed, tray_read failed, unreachable only when it was; the summary counts it and names it
    under the right heading, and its row says UNREACHABLE or NOT READ - never PASS."""
    unread = render('preflight', '__preflight_unread', gpu_tray_platform='nvke-gb200', inventory_hostname='tray02',
                    __preflight_plan=plan)
    assert unread['passed'] is False and unread['failed_checks'] == ['tray_read']
    assert unread['unreachable'] is bool(plan.get('unreachable'))
    # the shape of every tray's report and check record (readers of preflight.json and the AWX artifact take both)
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import check_record
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight
    assert set(unread) == set(preflight.report('tray02', 'nvke-gb200', [])) | {'unreachable'}
    assert unread['skipped_checks'] == []
    assert set(unread['checks'][0]) == set(check_record.record('tray_read', 'failed', 'x'))
    assert unread['checks'][0]['data'] == {'unreachable': unread['unreachable']}
    passing = {'host': 'tray01', 'platform': 'nvke-gb200', 'passed': True, 'unreachable': False, 'failed_checks': [],
               'skipped_checks': [], 'checks': []}
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import phase_record
    summary = phase_record.preflight_markdown(['tray01', 'tray02'], {'tray01': passing, 'tray02': unread})
    assert '**1 of 2 trays not read - nothing was checked on them.**' in summary and line in summary
    row = [text for text in summary.splitlines() if text.startswith('| tray02 |')]
    assert row and '| %s | tray_read |' % shown in row[0], row
    # below the table, the tray's failed check with what happened and the fix; the same message ends the run
    section = summary.split('## tray02', 1)[1]
    what = 'is unreachable' if plan.get('unreachable') else 'could not be read'
    assert '- **tray_read**: tray02 %s: %s' % (what, plan['msg']) in section
    assert '  - Fix: Nothing was checked on the tray.' in section
    assert '## tray01' not in summary


def test_an_optional_bmc_that_does_not_answer_warns_and_a_required_one_fails():
    """The BMC part of the preflight's spec carries the inventory's settings to the check: with gpu_tray_bmc_required
    false, a configured BMC that does not answer is a warning (the tray is still prepared); required, it fails."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bmc
    for required, status in ((False, 'warning'), (True, 'failed')):
        spec = render('preflight', '__preflight_spec', gpu_tray_platform='nvke-gb200', inventory_hostname='tray01',
                      gpu_tray_bmc_required=required, gpu_tray_bmc_address='10.0.0.11', gpu_tray_bmc_username='admin',
                      gpu_tray_bmc_password='secret')
        assert spec['bmc']['settings']['password'] is True                 # whether it is set, never the password
        record = bmc.preflight_check(spec['bmc']['settings'], {'failed': True, 'msg': 'connection refused'})
        assert record['status'] == status, record


def _tray_facts(reasons, node=None):
    """What the role sets on a tray before the plan: the roles that asked for its reboot, its group and node name."""
    return {'__rolling_reboot_reasons': reasons, '__rolling_reboot_group': '', '__rolling_reboot_node': node}


@pytest.mark.parametrize('drain, why', [('auto', 'no cluster configured'), ('never', 'rolling_reboot_drain is never')])
def test_a_run_without_a_cluster_read_says_why_its_trays_are_not_drained(drain, why):
    """The plan's inputs as the role renders them, planned by the reboot_step action's first step (reboot_run.begin):
    no cluster was read (none configured, or rolling_reboot_drain never), so no tray is drained - and the plan line
    and every tray's row say why, in the words of the inventory setting that decided it."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_run
    hostvars = {'tray01': _tray_facts(['kernel_tuning']), 'tray02': _tray_facts(['kernel_tuning'])}
    inputs = render('rolling_reboot', '__rolling_reboot_plan_inputs', rolling_reboot_drain=drain,
                    __rolling_reboot_hosts=['tray01', 'tray02'], ansible_check_mode=False, hostvars=hostvars)
    assert {key: inputs['cluster'][key] for key in ('read', 'why', 'error')} == {'read': False, 'why': why, 'error': ''}
    if drain == 'never':
        assert inputs['cluster']['sources'] == []       # nothing is read: no source can refuse the run
    inputs['cluster']['sources'] = []                   # none configured (whatever this machine's environment has)
    run = reboot_run.begin(inputs, {})
    out = run['plan']
    assert out['refuse'] is None and out['pending'] == ['tray01', 'tray02']
    assert '%s: every tray counts as %s' % (why, 'busy' if drain == 'never' else 'idle') in out['summary']
    assert run['states'] == {'tray01': None, 'tray02': None} and run['via'] == 'drain'
    for tray in ('tray01', 'tray02'):
        assert out['trays'][tray]['via'] is None and why in out['trays'][tray]['why'], out['trays'][tray]
        assert out['trays'][tray]['drain'] == ('not drained: ' + ('no cluster' if drain == 'auto' else why))
        assert run['rows'][tray]['drain'] == out['trays'][tray]['drain'] and run['rows'][tray]['status'] == 'not reached'


def _pods(*names, daemonset=False):
    owners = [{'kind': 'DaemonSet'}] if daemonset else [{'kind': 'ReplicaSet'}]
    return {'resources': [{'metadata': {'namespace': 'default', 'name': n, 'ownerReferences': owners},
                           'status': {'phase': 'Running'}} for n in names]}


def test_a_run_with_the_cluster_read_drains_its_busy_trays():
    """With the cluster's nodes read (the registered k8s_info), the trays of the plan that are nodes are drained
    before their reboot: the busy one, rolling, through the way the role chose (the Maintenance Operator when the
    cluster runs it); the idle one directly."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_run
    hostvars = {'tray01': _tray_facts(['kernel_tuning'], 'tray01'), 'tray02': _tray_facts(['kernel_tuning'], 'tray02')}
    nodes = {'resources': [{'metadata': {'name': 'tray01'}}, {'metadata': {'name': 'tray02'}}]}
    inputs = render('rolling_reboot', '__rolling_reboot_plan_inputs', __rolling_reboot_nodes=nodes,
                    __rolling_reboot_hosts=['tray01', 'tray02'], ansible_check_mode=False, hostvars=hostvars)
    assert {key: inputs['cluster'][key] for key in ('read', 'why', 'error')} == {'read': True, 'why': '', 'error': ''}
    assert inputs['drain_via'] == 'auto'
    pods = {'tray01': _pods('dcgm', daemonset=True), 'tray02': _pods('train-0')}
    run = reboot_run.begin(inputs, {}, nodes, pods)
    out = run['plan']
    assert run['states']['tray02']['workloads'] == ['default/train-0'] and run['states']['tray01']['idle']
    assert out['busy'] == ['tray02'] and out['trays']['tray02']['role'] == 'rolling', out['trays']
    assert out['trays']['tray02']['via'] == 'drain' and out['trays']['tray01']['via'] == 'drain', out['trays']
    assert run['rows']['tray02']['idle'] == 'busy' and run['rows']['tray01']['idle'] == 'idle'
    operator = [{'resources': [{'metadata': {'name': 'nodemaintenances.maintenance.nvidia.com'}}]},
                {'resources': [{'metadata': {'name': 'network-operator-maintenance-operator-chart'}}]}]
    run = reboot_run.begin(inputs, {}, nodes, pods, operator)
    assert run['via'] == 'maintenance_operator' and run['plan']['trays']['tray02']['via'] == 'maintenance_operator'
    assert run['plan']['trays']['tray01']['via'] == 'drain'


@pytest.mark.parametrize('via, left', [
    (None, 'cordoned (left cordoned)'),
    ('drain', 'cordoned (left cordoned)'),
    ('maintenance_operator', 'cordoned by NodeMaintenance nvidia-maintenance/gpu-tray-rolling-reboot-node07'),
], ids=['not-chosen', 'drain', 'maintenance-operator'])
def test_a_failed_tray_is_described_as_the_way_it_was_drained_left_it(via, left):
    """How the failure message and the report describe a failed tray's node: cordoned by kubernetes.core.k8s_drain
    (also when the run failed before it chose a way: no NodeMaintenance was ever created), or held by the role's
    NodeMaintenance - named as the role names it (the tray's kept facts) - with what releases it."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import reboot_cluster
    kept = render('rolling_reboot', '__rolling_reboot_tray_facts', rolling_reboot_node_name='node07',
                  rolling_reboot_maintenance_namespace='nvidia-maintenance', inventory_hostname='node07')
    assert kept['maintenance'] == 'nvidia-maintenance/gpu-tray-rolling-reboot-node07'
    text = reboot_cluster.left(via, kept['maintenance'])
    assert text.startswith(left), text
    assert ('NodeMaintenance' in text) is (via == 'maintenance_operator')


def _tasks_in(tasks):
    """Every task of a task list, those of its blocks (block, rescue, always) too, depth first."""
    for task in tasks or []:
        yield task
        for key in ('block', 'rescue', 'always'):
            yield from _tasks_in(task.get(key))


def _task_var(role, tasks, task_name, var):
    """A task's vars: entry, as written in roles/<role>/tasks/<tasks> - in a block too (the tests follow the task,
    not a copy)."""
    with open(os.path.join(REPO, 'roles', role, 'tasks', tasks)) as handle:
        for task in _tasks_in(yaml.safe_load(handle)):
            if task.get('name') == task_name:
                return task['vars'][var]
    raise AssertionError('no task %r in roles/%s/tasks/%s' % (task_name, role, tasks))


# the finalizer the Maintenance Operator puts on every NodeMaintenance (maintenance.nvidia.com API group) and removes
# when it released the node; the Deployment the network-operator chart's maintenance-operator-chart subchart installs
# is named by its fullname helper: <release>-maintenance-operator-chart
FINALIZER = 'maintenance.nvidia.com/finalizer'


def _node_maintenance(name, node, finalizers):
    return {'metadata': {'name': name, 'namespace': 'default', 'finalizers': finalizers}, 'spec': {'nodeName': node}}


def test_the_nodemaintenance_recovery_finds_what_the_maintenance_operator_left():
    """Recovery (stack_action recover) and the teardown's orphan check select the NodeMaintenances that still carry
    the Maintenance Operator's finalizer - and only those: one with another requestor's finalizer, or none, is left
    alone."""
    nm = {'resources': [_node_maintenance('a', 'tray01', [FINALIZER]),
                        _node_maintenance('b', 'tray02', ['example.com/other']),
                        {'metadata': {'name': 'c', 'namespace': 'default'}, 'spec': {'nodeName': 'tray03'}}]}
    recover = _task_var('stack', 'recover.yml', 'Remember what to recover', '__stack_orphans')
    found = expression('stack', recover, __stack_nm=nm, stack_recover_nodes=[])
    assert [item['metadata']['name'] for item in found] == ['a']
    teardown = _task_var('stack', 'teardown.yml', 'Stop when the teardown orphaned a NodeMaintenance (its node stays '
                         'cordoned)', '__stack_orphans')
    assert expression('stack', teardown, __stack_nm=nm) == ['a']


@pytest.mark.parametrize('name, running', [
    ('network-operator-maintenance-operator-chart', True),
    ('maintenance-operator', True),
    ('network-operator', False),
])
def test_the_recovery_refuses_while_a_maintenance_operator_runs(name, running):
    """The recovery deletes orphaned NodeMaintenances only when no Maintenance Operator runs (one that runs
    releases its nodes itself): its Deployment, as the network-operator chart names it, is recognised; the network
    operator's own is not one."""
    deployments = {'resources': [{'metadata': {'name': name, 'namespace': 'nvidia-network-operator'}}]}
    operators = _task_var('stack', 'recover.yml', 'Refuse while a Maintenance Operator runs (it releases its nodes '
                          'itself)', '__stack_operators')
    found = expression('stack', operators, __stack_deployments=deployments)
    assert found == (['nvidia-network-operator/' + name] if running else [])


def test_a_gitops_bundle_the_role_renders_retries_as_docs_stack_md_says():
    """The settings the stack role hands the argocd and flux formats: the Argo CD sync retries and the Flux
    install/upgrade remediation retries are the 5 docs/stack.md states (with the role's settings, as with none)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle
    given = render('stack', '__stack_gitops_settings', gpu_tray_platform='nvke-gb200')
    cfg = bundle.settings(given)
    assert cfg['retries'] == bundle.settings()['retries'] == 5
    with open(os.path.join(REPO, 'docs', 'stack.md')) as handle:
        text = handle.read()
    assert '(`syncPolicy.retry`, %d times' % cfg['retries'] in text
    assert 'remediation retries (%d)' % cfg['retries'] in text


def test_both_roles_reach_the_bmc_through_the_run_contexts_one_mapping():
    """preflight and rolling_reboot take the tray's BMC from lookup run_context 'bmc' (issue 53: no role maps the
    settings itself): the inventory's gpu_tray_bmc_* reach both, and a role's own option wins in that role only."""
    inventory = dict(gpu_tray_platform='rke2-vr200', gpu_tray_bmc_address='https://10.0.0.7/',
                     gpu_tray_bmc_username='admin', gpu_tray_bmc_password='pw', gpu_tray_bmc_timeout=20)
    preflight = render('preflight', '__preflight_bmc_access', **inventory)
    rolling = render('rolling_reboot', '__rolling_reboot_redfish', rolling_reboot_bmc_timeout=45, **inventory)
    assert preflight['redfish'] == {'baseuri': '10.0.0.7', 'username': 'admin', 'password': 'pw',
                                    'validate_certs': True, 'timeout': 20}
    assert preflight['settings']['password'] is True and preflight['usable'] is True
    assert rolling == dict(preflight['redfish'], timeout=45)
