# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/run_context.py: one value per shared input, one default each (the platform profile's, else the
collection's), the trays' cluster values for the API host, the API host's connection for everyone."""

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform, run_context

GROUPS = {'gpu_trays': ['tray01', 'tray02'], 'k8s_api': ['api']}


def context(host, hostvalues, groups=None, report='gpu-tray-report'):
    return run_context.for_host(host, hostvalues.get, GROUPS if groups is None else groups, platform.load,
                                lambda _values: report)


def test_the_platform_profile_is_the_default():
    nvke = context('tray01', {'tray01': {'gpu_tray_platform': 'nvke-gb200'}})
    assert nvke['rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4'] and nvke['num_vfs'] == 16
    # bmc_required: one value, the profile's, for the preflight and the rolling reboot (issue 44: they used to read
    # the profile and true)
    assert nvke['recipe'] == 'gb200-nvke-ubuntu-training' and nvke['bmc_required'] is False
    assert nvke['pkey'] == '0xffff' and nvke['sysfs_root'] == '/sys' and nvke['report_dir'] == 'gpu-tray-report'
    vr200 = context('tray01', {'tray01': {'gpu_tray_platform': 'rke2-vr200'}})
    assert vr200['bmc_required'] is True and vr200['num_vfs'] == 0 and vr200['rails'] == []


def test_the_inventory_wins_and_an_empty_rail_list_is_the_profiles():
    values = {'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_num_vfs': 8, 'gpu_tray_bmc_required': True,
              'gpu_tray_pkey': '0x8001', 'gpu_tray_rails': []}
    got = context('tray01', {'tray01': values})
    assert got['num_vfs'] == 8 and got['bmc_required'] is True and got['pkey'] == '0x8001'
    assert got['rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4']
    # false is a value, not "unset"
    assert context('tray01', {'tray01': dict(values, gpu_tray_bmc_required=False)})['bmc_required'] is False


def test_the_value_the_check_accepted_is_the_value_the_roles_get():
    """Pin (issue 53 item 4): -e gives strings; the argument spec accepted "mlx5_0,mlx5_1" as a list of two rails,
    "8" as 8 and "false" as false - the context hands on exactly that, never the raw string (the planner walked
    "mlx5_0,mlx5_1" letter by letter)."""
    values = {'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_rails': 'mlx5_0,mlx5_1', 'gpu_tray_num_vfs': '8',
              'gpu_tray_bmc_required': 'false', 'gpu_tray_bmc_timeout': '30',
              'gpu_tray_rail_pci_addresses': 'mlx5_0=0000:03:00.0, mlx5_1=0000:04:00.0'}
    got = context('tray01', {'tray01': values})
    assert got['rails'] == ['mlx5_0', 'mlx5_1'] and got['num_vfs'] == 8 and got['bmc_required'] is False
    assert got['bmc_timeout'] == 30
    assert got['rail_pci_addresses'] == {'mlx5_0': '0000:03:00.0', 'mlx5_1': '0000:04:00.0'}
    # the API host takes the trays' converted values too; a value the converter refuses stays as given
    assert context('api', {'tray01': values, 'api': {}})['rails'] == ['mlx5_0', 'mlx5_1']
    assert context('tray01', {'tray01': dict(values, gpu_tray_num_vfs='eight')})['num_vfs'] == 'eight'


def test_no_platform_refuses_nothing_and_keeps_a_reboot_safe():
    got = context('tray01', {'tray01': {}})
    assert got['platform'] == '' and got['recipe'] == '' and got['rails'] == [] and got['num_vfs'] is None
    assert got['bmc_required'] is True


def test_the_api_host_takes_the_cluster_values_of_the_trays_and_the_trays_its_connection():
    hosts = {'tray01': {'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_num_vfs': 8, 'gpu_tray_bmc_address': '10.0.0.1'},
             'api': {'gpu_tray_kubeconfig': '/etc/k.yaml', 'gpu_tray_kube_context': 'prod'}}
    api = context('api', hosts)
    assert api['platform'] == 'nvke-gb200' and api['num_vfs'] == 8 and api['rails'][0] == 'mlx5_0'
    assert api['bmc_address'] == ''                         # a tray's own value stays the tray's
    assert api['kubeconfig'] == '/etc/k.yaml' and api['kube_context'] == 'prod'
    tray = context('tray01', hosts)
    assert tray['kubeconfig'] == '/etc/k.yaml' and tray['kube_context'] == 'prod'   # the drain reaches the same cluster
    # the API host's own recipe wins over the trays'
    hosts['api']['gpu_tray_recipe'] = 'gb200-nvke-ubuntu-training-kubeflow'
    assert context('api', hosts)['recipe'] == 'gb200-nvke-ubuntu-training-kubeflow'
    # without group k8s_api the controller is the API host
    assert run_context.api_host({'gpu_trays': ['t']}) == 'localhost'


def test_disagreements_name_the_variable_and_the_trays():
    contexts = {name: {'platform': 'nvke-gb200', 'recipe': 'r', 'rails': ['a'], 'rail_pci_addresses': {}, 'num_vfs': n}
                for name, n in (('tray01', 16), ('tray02', 8), ('tray03', 8))}
    clauses = run_context.disagreements(contexts, ['tray01', 'tray02', 'tray03'])
    assert clauses == ['gpu_tray_num_vfs differs between the trays (16 on tray01; 8 on tray02, tray03): it describes '
                       'the cluster (one SR-IOV policy per rail, one recipe), so set it once for every tray (group_vars)']
    assert run_context.disagreements(contexts, ['tray02', 'tray03']) == []


def test_k8s_auth_and_sources_say_only_what_is_set():
    assert run_context.k8s_auth({'kubeconfig': '', 'kube_context': ''}) == {}
    assert run_context.k8s_auth({'kubeconfig': '/k', 'kube_context': 'b'}) == {'kubeconfig': '/k', 'context': 'b'}
    assert run_context.sources({'kubeconfig': '/k', 'kube_context': ''}, {'K8S_AUTH_HOST': 'https://x', 'PATH': '/'}) \
        == ['gpu_tray_kubeconfig /k', 'K8S_AUTH_HOST=https://x']
    assert run_context.sources({}, {}) == [] and run_context.sources({}, {}, True) == ['~/.kube/config']


def test_without_a_platform_the_recipes_platform_gives_the_cluster_values_only():
    """A GitOps render or an API host without trays in the inventory: the registry names the recipe's platform, whose
    profile gives the rails and VFs the stack renders - not a BMC policy for a host that has no platform."""
    got = context('localhost', {'localhost': {'gpu_tray_recipe': 'gb200-nvke-ubuntu-training'}}, groups={})
    assert got['rails'] == ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4'] and got['num_vfs'] == 16
    assert got['platform'] == '' and got['bmc_required'] is True
    assert context('localhost', {'localhost': {'gpu_tray_recipe': 'my-site-recipe'}}, groups={})['num_vfs'] is None


def test_every_typed_run_value_is_converted_as_its_inventory_spec_types_it():
    """run_context converts a value the way check_inputs' validator checked it (issue 53): its table of converters
    must cover every run value whose inventory spec type is list, dict, int or bool - and touch no other - so a
    new typed variable of the run context cannot reach the roles as the string -e gave."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import inputs
    spec = inputs.tables()['spec']
    given = {'list': ('a,b', ['a', 'b']), 'dict': ('a=1', {'a': '1'}), 'int': ('8', 8), 'bool': ('yes', True)}
    typed = 0
    for key, name in run_context.VARIABLES.items():
        kind = (spec.get(name) or {}).get('type')
        if kind in given:
            typed += 1
            assert run_context._as_checked(key, given[kind][0]) == given[kind][1], (key, kind)
        else:
            assert run_context._as_checked(key, 'as-given') == 'as-given', (key, kind)
    assert typed == 6


def test_the_bmc_of_a_tray_is_one_mapping_with_a_roles_options_over_the_context():
    """The preflight and the rolling reboot read a tray's BMC through run_context.bmc (issue 53): the settings the
    judges read (the password only as whether it is set), redfish's connection (host[:port], ca_path only when set),
    and a role's own <role>_bmc_* over the context's values, converted as the argument spec reads them."""
    ctx = {'bmc_required': False, 'bmc_address': 'https://10.0.0.9:8443/', 'bmc_username': 'admin',
           'bmc_password': 'secret', 'bmc_system_id': '', 'bmc_validate_certs': True, 'bmc_ca_path': '',
           'bmc_timeout': 10}
    out = run_context.bmc(ctx)
    assert out['settings'] == {'address': 'https://10.0.0.9:8443/', 'username': 'admin', 'password': True,
                               'system_id': '', 'required': False}
    assert out['redfish'] == {'baseuri': '10.0.0.9:8443', 'username': 'admin', 'password': 'secret',
                              'validate_certs': True, 'timeout': 10}
    assert out['usable'] is True and out['judged'] is True
    mine = run_context.bmc(ctx, {'address': '', 'timeout': '30', 'validate_certs': 'no', 'ca_path': '/ca.pem',
                                 'required': 'false', 'unknown': 'x'})
    assert mine['redfish']['timeout'] == 30 and mine['redfish']['validate_certs'] is False
    assert mine['redfish']['ca_path'] == '/ca.pem' and mine['usable'] is False and mine['judged'] is False
    # without a platform a reboot needs a way back: required unless set
    assert run_context.bmc({})['settings']['required'] is True and run_context.bmc({})['judged'] is True


def test_the_trays_and_the_api_host_are_the_run_contexts_terms():
    groups = {'gpu_trays': ['t1', 'cp1', 't2'], 'control_plane': ['cp1'], 'k8s_api': ['api1', 'api2']}
    assert run_context.trays(groups) == ['t1', 't2'] and run_context.api_host(groups) == 'api1'
    assert run_context.trays({}) == [] and run_context.api_host({}) == 'localhost'
