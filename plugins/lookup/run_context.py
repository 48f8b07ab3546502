# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run context of this host: the inputs more than one phase reads, resolved once (plugin_utils/run_context.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: run_context
short_description: The inputs more than one phase of a run reads, as the run resolved them for this host
version_added: 0.1.0
description:
  - The trays' platform and recipe, the rails and their PF addresses, the VFs per rail, the P_Key, the hardware roots,
    the BMC settings, the cluster connection and the report folder, each with one default (the platform profile,
    else the collection's). Every role reads them here, so the preflight, the preparing roles, the rolling reboot,
    the chart stack and the validation agree on one value.
  - The action M(gpu_tray.cluster.check_inputs) resolves every host's context when a playbook opens, and the
    opening keeps it (C(__gpu_tray_run)); where no playbook opened the run (a role included on its own), the context
    is resolved here from the host's variables with the same function.
  - The values that describe the cluster (platform, recipe, rails, rail_pci_addresses, num_vfs) are the trays
    on a host outside group gpu_trays (the API host) they come from the first tray unless the host sets them. The
    cluster connection (kubeconfig, kube_context) is the API host's (group k8s_api, else localhost).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  _terms:
    description:
      - Keys of the context to return (platform, recipe, rails, rail_pci_addresses, num_vfs, pkey, sysfs_root,
        proc_root, kubeconfig, kube_context, bmc_required, bmc_address, bmc_username, bmc_password, bmc_system_id,
        bmc_validate_certs, bmc_ca_path, bmc_timeout, report_dir), C(k8s_auth) for kubernetes.core's connection
        options (only those set), C(kept) for the whole context without its secrets (what a run may keep in its facts,
        as M(gpu_tray.cluster.check_inputs) keeps it), or C(k8s_sources) for where kubernetes.core takes the cluster from on the controller
        (the inventory's inputs, C(K8S_AUTH_KUBECONFIG), C(K8S_AUTH_HOST), C(KUBECONFIG), C(~/.kube/config); empty -
        none is configured). None - the whole context.
      - C(bmc) - the tray's BMC as the roles use it (C(settings) the BMC judges read, the password only as whether it
        is set; C(redfish) the connection of community.general.redfish_info and redfish_command; C(usable); C(judged)),
        from the context's C(bmc_*) with the options C(<role>_bmc_*) of O(role) over them.
      - C(trays) - the GPU trays of the inventory (group gpu_trays, never the control plane); C(api_host) - the host
        that reaches the Kubernetes API (the first of group k8s_api, else localhost).
    type: list
    elements: str
  role:
    description: With C(bmc), the role whose options C(<role>_bmc_address), C(<role>_bmc_username), ... are read over
      the context's values (the role's defaults are the context's; an inventory or C(-e) may set them).
    type: str
'''

EXAMPLES = r'''
- name: The VFs per rail the stack renders and the validation expects
  ansible.builtin.debug:
    msg: "{{ lookup('gpu_tray.cluster.run_context', 'num_vfs') }}"

- name: Every play that talks to the Kubernetes API (group cluster_api - cluster checks, kubernetes.core k8s, helm)
  hosts: localhost
  module_defaults:
    group/gpu_tray.cluster.cluster_api: "{{ lookup('gpu_tray.cluster.run_context', 'k8s_auth') }}"
  tasks: []
'''

RETURN = r'''
_raw:
  description: One value per term (the whole context as a dict without terms).
  type: list
  elements: raw
'''

import os

from ansible.errors import AnsibleLookupError
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.lookup import LookupBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import run_context


def context_of(templar, variables):
    """This host's context: the one the run's opening kept, else resolved now from the host's variables."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform
    variables = variables or {}
    host = variables.get('inventory_hostname', 'localhost')
    groups = variables.get('groups') or {}
    hostvars = variables.get('hostvars') or {}
    # kept by the playbook's opening on the hosts of the play that checked the inputs: this host, the API host or
    # the first tray
    for holder in [None, run_context.api_host(groups)] + run_context.trays(groups)[:1]:
        try:
            kept = variables.get(run_context.FACT) if holder is None else hostvars[holder].get(run_context.FACT)
        except (KeyError, TypeError):
            kept = None
        if isinstance(kept, dict) and host in (kept.get('hosts') or {}):
            context = dict(kept['hosts'][host])
            # the secrets are never kept in the run's facts: this host's own, read now
            mine = run_context.host_values(templar, variables, [run_context.VARIABLES[k] for k in run_context.SECRET_KEYS])
            context.update((key, run_context.secret(key, mine)) for key in run_context.SECRET_KEYS)
            return context

    def variables_of(name):
        try:
            return hostvars[name]
        except (KeyError, TypeError):
            return None

    values_of = run_context.values_reader(templar, host, variables, variables_of)
    return run_context.for_host(host, values_of, groups, platform.load)


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        try:
            context = context_of(self._templar, variables)
        except Exception as exc:  # an unknown platform, a bad report folder: the sentence, never a traceback
            raise AnsibleLookupError('run_context: %s' % to_native(exc))
        if not terms:
            return [context]
        out = []
        for term in terms:
            if term == 'kept':
                out.append(run_context.kept(context))
            elif term == 'k8s_auth':
                out.append(run_context.k8s_auth(context))
            elif term == 'bmc':
                role = self.get_option('role')
                given = {}
                if role:
                    names = dict((key, '%s_bmc_%s' % (role, key)) for key in run_context.BMC_KEYS)
                    values = run_context.host_values(self._templar, variables or {}, list(names.values()))
                    given = dict((key, values[name]) for key, name in names.items() if name in values)
                out.append(run_context.bmc(context, given))
            elif term == 'trays':
                out.append(run_context.trays((variables or {}).get('groups')))
            elif term == 'api_host':
                out.append(run_context.api_host((variables or {}).get('groups')))
            elif term == 'k8s_sources':
                home = os.path.expanduser('~/.kube/config')
                out.append(run_context.sources(context, os.environ, os.path.isfile(home)))
            elif term in context:
                out.append(context[term])
            else:
                raise AnsibleLookupError('run_context: %r is not a key of the run context (%s, kept, k8s_auth, k8s_sources, '
                                         'bmc, trays, api_host)'
                                         % (term, ', '.join(context)))
        return out
