# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run context: the inputs more than one phase reads, resolved once per run, each with one default.

The preflight, the preparing roles, the rolling reboot, the chart stack and the validation all read the trays'
platform and recipe, the rails and their PF addresses, the VFs per rail, the P_Key, the hardware roots, the BMC
settings, the cluster connection and the report folder. Each used to resolve them in its own defaults, and three
did so with different fallbacks (``gpu_tray_bmc_required``: the platform profile in the preflight, ``true`` in the
rolling reboot). Here they are resolved by one function, :func:`resolve`, with one default per value: the platform
profile (``rails``, ``sriov.num_vfs``, ``bmc.required``, ``default_recipe``), else the value in :data:`DEFAULTS`.

The action gpu_tray.cluster.check_inputs resolves every host's context at the start of every playbook, after the
inputs passed, and the playbook's opening sets it on every host of the run as ``__gpu_tray_run``; the roles read it
through the lookup gpu_tray.cluster.run_context, which resolves it with the same function where no playbook opened
the run (a role included on its own, a molecule scenario).

Two kinds of values:

* **run** values (:data:`RUN_KEYS`) describe the cluster the run builds and must agree on every tray: the stack
  renders one SriovNetworkNodePolicy per rail for all of them, and the validation judges what it rendered. A host
  outside the trays (the API host) takes them from the trays when it does not set them itself (as the stack and
  the validation did: their own first-tray fallbacks are gone). :func:`disagreements` says where trays differ.
* **host** values (the BMC settings, the hardware roots) belong to each tray.

The cluster connection (``kubeconfig``, ``kube_context``) is the API host's: every play that talks to the API gets
it through ``module_defaults`` (:func:`k8s_auth`) - only what is set, so without it the environment (``K8S_AUTH_*``,
an AWX credential) decides, for every phase alike.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re
from collections import OrderedDict

# key -> the inventory variable that sets it
VARIABLES = OrderedDict([
    ('platform', 'gpu_tray_platform'),
    ('recipe', 'gpu_tray_recipe'),
    ('rails', 'gpu_tray_rails'),
    ('rail_pci_addresses', 'gpu_tray_rail_pci_addresses'),
    ('num_vfs', 'gpu_tray_num_vfs'),
    ('pkey', 'gpu_tray_pkey'),
    ('sysfs_root', 'gpu_tray_sysfs_root'),
    ('proc_root', 'gpu_tray_proc_root'),
    ('kubeconfig', 'gpu_tray_kubeconfig'),
    ('kube_context', 'gpu_tray_kube_context'),
    ('bmc_required', 'gpu_tray_bmc_required'),
    ('bmc_address', 'gpu_tray_bmc_address'),
    ('bmc_username', 'gpu_tray_bmc_username'),
    ('bmc_password', 'gpu_tray_bmc_password'),
    ('bmc_system_id', 'gpu_tray_bmc_system_id'),
    ('bmc_validate_certs', 'gpu_tray_bmc_validate_certs'),
    ('bmc_ca_path', 'gpu_tray_bmc_ca_path'),
    ('bmc_timeout', 'gpu_tray_bmc_timeout'),
])
# a role default that reads the run context: `<role>_<option>: "{{ lookup('gpu_tray.cluster.run_context', '<key>') }}"`
# (plugin_utils/role_inputs.py and tools/inventory_spec.py map it to the key's inventory variable)
DEFAULT_PATTERN = re.compile(r"^\{\{\s*lookup\('gpu_tray\.cluster\.run_context',\s*'([a-z_]+)'\)\s*\}\}$")
# the values that describe the cluster: one per run, from the trays for a host outside them
RUN_KEYS = ('platform', 'recipe', 'rails', 'rail_pci_addresses', 'num_vfs')
# the cluster connection: the API host's
CLUSTER_KEYS = ('kubeconfig', 'kube_context')
# the one default of each value that the platform profile does not give (None: the profile's, or none)
DEFAULTS = {
    'platform': '',
    # the profile's default_recipe; none without a platform
    'recipe': None,
    'rails': None,
    'rail_pci_addresses': {},
    'num_vfs': None,
    # the default partition: full membership of 0x7fff (a site's own partition is its inventory's)
    'pkey': '0xffff',
    'sysfs_root': '/sys',
    'proc_root': '/proc',
    'kubeconfig': '',
    'kube_context': '',
    'bmc_required': None,
    'bmc_address': '',
    'bmc_username': '',
    'bmc_password': '',
    'bmc_system_id': '',
    'bmc_validate_certs': True,
    'bmc_ca_path': '',
    'bmc_timeout': 10,
}
# never kept in the run's facts (a set_fact result shows them with -v): the lookup reads them from the host's
# variables each time, with the same default
SECRET_KEYS = ('bmc_password',)
# the inventory group of the GPU trays and of the host that reaches the Kubernetes API
TRAY_GROUP = 'gpu_trays'
API_GROUP = 'k8s_api'


def _as_checked(key, value):
    """The value as the argument spec that checked it reads it (ansible-core's own converters, which check_inputs'
    validator applied): ``-e gpu_tray_rails=mlx5_0,mlx5_1`` passed the check as a list of two rails and must reach
    the roles as that list, not as a string walked letter by letter; ``-e gpu_tray_num_vfs=8`` as the number 8. A
    value the converter refuses is left as given (check_inputs refused it before anything used it)."""
    from ansible.module_utils.common.validation import check_type_bool, check_type_dict, check_type_int
    from ansible.module_utils.common.validation import check_type_list
    convert = {'rails': check_type_list, 'rail_pci_addresses': check_type_dict, 'num_vfs': check_type_int,
               'bmc_required': check_type_bool, 'bmc_validate_certs': check_type_bool,
               'bmc_timeout': check_type_int}.get(key)
    if convert is None or value is None:
        return value
    try:
        return convert(value)
    except (TypeError, ValueError):
        return value


def _given(value, key=None):
    """A value the inventory set: null and the empty string are "not set" (check_inputs refuses a null anyway), and
    so is an empty list of rails (the platform profile's rails, as the stack always took it)."""
    if key == 'rails' and value == []:
        return False
    return value is not None and value != ''


def _from_profile(key, profile):
    """The platform profile's default of ``key`` (None when the profile has none)."""
    if not profile:
        return None
    if key == 'rails':
        return list(profile.get('rails') or [])
    if key == 'num_vfs':
        return (profile.get('sriov') or {}).get('num_vfs')
    if key == 'bmc_required':
        return bool((profile.get('bmc') or {}).get('required'))
    if key == 'recipe':
        return profile.get('default_recipe') or None
    return None


def api_host(groups):
    """The host that reaches the Kubernetes API: the first of group k8s_api, else the controller."""
    hosts = (groups or {}).get(API_GROUP) or []
    return hosts[0] if hosts else 'localhost'


def trays(groups):
    """The GPU trays of the inventory, never the control plane (as every playbook of the collection)."""
    groups = groups or {}
    control = set(groups.get('control_plane') or [])
    return [host for host in groups.get(TRAY_GROUP) or [] if host not in control]


def resolve(values, profile_of, tray_values=None, api_values=None, report_dir=''):
    """The context of one host.

    ``values``: the host's templated ``gpu_tray_*`` values (name -> value; unset names absent).
    ``profile_of``: platform name -> profile dict (raises for an unknown one; check_inputs refused it before).
    ``tray_values``: the first tray's values, for the run values a host outside the trays does not set (None on a
    tray). ``api_values``: the API host's values, for the cluster connection (None on the API host).
    ``report_dir``: the run's report folder (plugin_utils/report_dir.py).
    """
    out = {}
    for key, name in VARIABLES.items():
        if key in CLUSTER_KEYS and api_values is not None:
            source = api_values
        elif key in RUN_KEYS and tray_values is not None and not _given(values.get(name), key):
            source = tray_values
        else:
            source = values
        out[key] = _as_checked(key, source.get(name)) if _given(source.get(name), key) else None
    profile = profile_of(out['platform']) if out['platform'] else None
    # no platform (an API host without trays in the inventory, a GitOps render): the cluster values of the recipe's
    # platform, which the registry names - never the host's own (BMC) defaults
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform
    recipe_profile = profile or platform.of_recipe(out['recipe'], profile_of)
    for key in VARIABLES:
        if out[key] is None:
            found = _from_profile(key, recipe_profile if key in RUN_KEYS else profile)
            out[key] = found if found is not None else DEFAULTS[key]
    if out['bmc_required'] is None:
        # no platform: a reboot needs a way back to a tray that does not come up
        out['bmc_required'] = True
    if out['recipe'] is None:
        out['recipe'] = ''
    if out['rails'] is None:
        # no platform and none set: no rails (a site recipe without SR-IOV; the stack refuses one that needs them)
        out['rails'] = []
    out['report_dir'] = report_dir
    return out


def kept(context):
    """What the run keeps of a context (check_inputs' facts): everything but the secrets."""
    return dict((key, value) for key, value in context.items() if key not in SECRET_KEYS)


def secret(key, values):
    """A secret of the context from the host's own templated values (never kept), else its default."""
    value = values.get(VARIABLES[key])
    return value if _given(value) else DEFAULTS[key]


def disagreements(contexts, tray_names):
    """Clauses naming each run value the trays do not agree on (the stack renders one value for all of them)."""
    out = []
    for key in RUN_KEYS:
        seen = OrderedDict()
        for tray in tray_names:
            if tray in contexts:
                seen.setdefault(repr(contexts[tray][key]), []).append(tray)
        if len(seen) > 1:
            parts = ['%s on %s' % (value, ', '.join(hosts[:3]) + (' and %d more' % (len(hosts) - 3)
                                                                  if len(hosts) > 3 else ''))
                     for value, hosts in seen.items()]
            out.append('%s differs between the trays (%s): it describes the cluster (one SR-IOV policy per rail, one '
                       'recipe), so set it once for every tray (group_vars)' % (VARIABLES[key], '; '.join(parts)))
    return out


def k8s_auth(context):
    """kubernetes.core's connection options from a context: only what is set (the environment decides the rest)."""
    context = context or {}
    out = {}
    if context.get('kubeconfig'):
        out['kubeconfig'] = context['kubeconfig']
    if context.get('kube_context'):
        out['context'] = context['kube_context']
    return out


# the BMC keys of a context, by the short names a role's options end with (<role>_bmc_<name>)
BMC_KEYS = ('required', 'address', 'username', 'password', 'system_id', 'validate_certs', 'ca_path', 'timeout')


def bmc(context, given=None):
    """A tray's BMC as the roles use it, from the context's ``bmc_*`` values with a role's own options over them
    (``given``: {short name: value}, :data:`BMC_KEYS`; a role's <role>_bmc_* defaults to the context's): ``settings``
    (what the BMC judges read, plugin_utils/bmc.py: the password only as whether it is set), ``redfish``
    (community.general.redfish_info / redfish_command's connection: baseuri is host[:port], they always speak https;
    ca_path only when set), ``usable`` (address, user and password all set) and ``judged`` (required, or an address
    given: the preflight's check and the rolling reboot's look at it). The one mapping of the preflight and the rolling
    reboot."""
    values = dict((key, (context or {}).get('bmc_' + key)) for key in BMC_KEYS)
    values.update((key, value) for key, value in (given or {}).items() if key in BMC_KEYS and value is not None)
    text = dict((key, '' if values[key] is None else str(values[key])) for key in
                ('address', 'username', 'password', 'system_id', 'ca_path'))
    required = bool(_as_checked('bmc_required', values['required'])) if values['required'] is not None else True
    baseuri = re.sub(r'/+$', '', re.sub(r'^https?://', '', text['address']))
    redfish = {'baseuri': baseuri, 'username': text['username'], 'password': text['password'],
               'validate_certs': bool(_as_checked('bmc_validate_certs', values['validate_certs'])
                                      if values['validate_certs'] is not None else True),
               'timeout': int(_as_checked('bmc_timeout', values['timeout']) if values['timeout'] is not None else 10)}
    if text['ca_path']:
        redfish['ca_path'] = text['ca_path']
    return {'settings': {'address': text['address'], 'username': text['username'], 'password': bool(text['password']),
                         'system_id': text['system_id'], 'required': required},
            'redfish': redfish,
            'usable': bool(text['address'] and text['username'] and text['password']),
            'judged': required or bool(text['address'])}


def sources(context, environ, home_config=None):
    """Where kubernetes.core takes the cluster from, in its order, as words for a message: the inventory's inputs,
    else the environment's K8S_AUTH_KUBECONFIG / K8S_AUTH_HOST / KUBECONFIG (an AWX credential injects those), else
    ``home_config`` (~/.kube/config, when it is a file). Empty: no cluster is configured."""
    out = []
    if (context or {}).get('kubeconfig'):
        out.append('gpu_tray_kubeconfig %s' % context['kubeconfig'])
    if (context or {}).get('kube_context'):
        out.append('gpu_tray_kube_context %s' % context['kube_context'])
    for name in ('K8S_AUTH_KUBECONFIG', 'K8S_AUTH_HOST', 'KUBECONFIG'):
        if environ.get(name):
            out.append('%s=%s' % (name, environ[name]))
    if home_config:
        out.append('~/.kube/config')
    return out


# ------------------------------------------------------------------------------------------------ from Ansible

# the variables report_dir.locate reads
REPORT_INPUTS = ('gpu_tray_report_dir', 'gpu_tray_run_id', 'awx_job_id', 'awx_workflow_job_id')
# the fact the playbooks' opening sets (check_inputs' facts): {'hosts': {host: context}}
FACT = '__gpu_tray_run'


def host_values(templar, variables, names=None):
    """The templated values of ``names`` (default: every variable a context reads) that ``variables`` sets."""
    out = {}
    for name in names or list(VARIABLES.values()) + list(REPORT_INPUTS):
        if name in variables and variables[name] is not None:
            out[name] = templar.copy_with_new_env(available_variables=variables).template(variables[name])
    return out


def report_place(values):
    """Where a host's reports go (report_dir.locate over its REPORT_INPUTS: ``{base, run_id, dir, latest}``)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import report_dir
    return report_dir.locate(*[values.get(name) for name in REPORT_INPUTS])


def values_reader(templar, me, my_variables, variables_of):
    """``values_of(host)``: a host's templated values (:func:`host_values`), read once - ``me``'s from
    ``my_variables`` (the task's own), another host's from ``variables_of(host)`` (None: not in the inventory, and so
    no values). The one reader of the lookup run_context and the check_inputs action."""
    cache = {}

    def values_of(host):
        if host not in cache:
            variables = my_variables if host == me else variables_of(host)
            cache[host] = None if variables is None else host_values(templar, variables)
        return cache[host]
    return values_of


def for_host(host, values_of, groups, profile_of, locate=None):
    """The context of ``host``: ``values_of(name)`` gives a host's templated values (None for a host that is not in
    the inventory, :func:`values_reader`), ``locate(values)`` the report folder of a host's values (default
    :func:`report_place`'s)."""
    locate = locate or (lambda values: report_place(values)['dir'])
    tray_names = trays(groups)
    mine = values_of(host) or {}
    first = values_of(tray_names[0]) if tray_names and host not in tray_names else None
    api = api_host(groups)
    api_values = values_of(api) if api != host else None
    return resolve(mine, profile_of, tray_values=first, api_values=api_values, report_dir=locate(mine))
