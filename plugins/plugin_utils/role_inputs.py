# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A preparing role's inputs as the role itself makes them, for the code that needs them before the role runs.

A preparing role has ONE definition of its inputs: its ``defaults/main.yml`` (the public ``<role>_*`` variables, each
``gpu_tray_* | default(<the platform profile's value>)`` or a literal, which tools/inventory_spec.py reads to check the
inventory) and ``vars/main.yml``, whose ``__<role>_inputs`` - the variables without the prefix - is what the role's
tray_plan task hands to its planner (plugin_utils/planners/<role>.py). Nothing else restates them:

* the tray_plan action's ``prefetch`` (the preflight reads ahead for the roles of the run) asks each planner what to
  read with the inputs :func:`resolve` makes here;
* the preflight (huge page sizes of kernel_tuning) and the validation (netns_mode of rdma_netns) judge against the
  same values through the lookup ``gpu_tray.cluster.role_inputs``.

:func:`resolve` templates the role's ``__<role>_inputs`` with a host's variables layered as Ansible layers them for a
task of the role: the role's defaults under the host's variables (inventory, play, extra vars, facts), its vars above
them. tests/unit/plugins/plugin_utils/test_role_inputs_lookup.py holds it against Ansible's own variable manager and each
role's tray_plan task.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import functools
import os
import re
from collections import ChainMap

import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import run_context

ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'roles')
# a default that reads an inventory variable: `<role>_<option>: "{{ gpu_tray_<name> | default(...) }}"` (the form
# tools/inventory_spec.py generates the inventory's argument spec from)
_FEEDS = re.compile(r'^\{\{\s*(gpu_tray_[a-z0-9_]+)\s*\|\s*default\(')
# the roles whose planners the preflight reads ahead for (tray_plan prefetch), in the order prepare_trays runs them
PREPARING = ('kernel_tuning', 'imex', 'rdma_modules', 'rdma_netns')


class RoleInputsError(ValueError):
    """A role that is not a preparing role, or whose files lack ``__<role>_inputs``."""


def variable(role):
    """The role variable its tray_plan tasks pass as ``inputs``."""
    return '__%s_inputs' % role


def _load(loader, role, kind):
    path = os.path.join(ROLES_DIR, role, kind, 'main.yml')
    if not os.path.isfile(path):
        return {}
    # trusted as templates, as Ansible loads a role's defaults and vars (ansible-core 2.19 renders only those)
    return loader.load_from_file(path, trusted_as_template=True) or {}


def layered(loader, role, variables):
    """The variables a task of ``role`` sees on a host whose variables are ``variables``: role vars over the host's
    variables over role defaults."""
    if role not in PREPARING:
        raise RoleInputsError('%s is not a preparing role (one of %s)' % (role, ', '.join(PREPARING)))
    role_vars = _load(loader, role, 'vars')
    if variable(role) not in role_vars:
        raise RoleInputsError('roles/%s/vars/main.yml has no %s' % (role, variable(role)))
    return ChainMap(role_vars, variables, _load(loader, role, 'defaults'))


@functools.lru_cache(maxsize=None)
def _defaults(role):
    with open(os.path.join(ROLES_DIR, role, 'defaults', 'main.yml')) as handle:
        return yaml.safe_load(handle) or {}


def user_variable(role, option):
    """The variable a user sets input ``option`` of ``role`` with - the ``gpu_tray_*`` variable its default reads,
    else the role variable ``<role>_<option>`` - for a refusal of the input to name."""
    default = _defaults(role).get('%s_%s' % (role, option))
    match = _FEEDS.match(default) if isinstance(default, str) else None
    shared = run_context.DEFAULT_PATTERN.match(default.strip()) if isinstance(default, str) else None
    if shared and shared.group(1) in run_context.VARIABLES:
        return run_context.VARIABLES[shared.group(1)]
    return match.group(1) if match else '%s_%s' % (role, option)


def resolve(templar, loader, role, variables):
    """``__<role>_inputs`` of ``role`` templated with ``variables`` (see the module docstring). ``templar`` is the
    caller's (an action's or a lookup's); Ansible's errors (an unknown platform in a lookup) pass through."""
    layers = layered(loader, role, variables)
    return templar.copy_with_new_env(available_variables=layers).template(layers[variable(role)])
