# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The roles' argument specs against what they let through, with ansible-core's own validator (the one
validate_argument_spec runs), in this process:

* what each role computes from its defaults on each platform and recipe passes its own argument spec - a choice
  dropped from a spec refuses a platform's default before any tray is read;
* every choice list is exactly the set of values the code that consumes the option implements - a value the spec
  accepts and the code does not know is silently ignored or fails later; one the code implements and the spec
  refuses is a documented mode nobody can choose. (That a value outside the choices is refused by name is
  tests/quality's: the input checks.)
"""

import os
import re

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from roletemplar import REPO, expression
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bundle, evidence, nccl_launch, platform, registry

ROLES = sorted(name for name in os.listdir(os.path.join(REPO, 'roles'))
               if os.path.isfile(os.path.join(REPO, 'roles', name, 'meta', 'argument_specs.yml')))
# the hosts the roles run for: a tray of each platform and recipe (the stack and validate roles run on the API host
# with the recipe and the platform from the inventory the same way)
HOSTS = [dict(gpu_tray_platform=name, gpu_tray_recipe=recipe)
         for name in platform.names() for recipe in sorted(platform.load(name)['recipes'])]


def _spec(role):
    with open(os.path.join(REPO, 'roles', role, 'meta', 'argument_specs.yml')) as handle:
        return yaml.safe_load(handle)['argument_specs']


def _defaults(role):
    path = os.path.join(REPO, 'roles', role, 'defaults', 'main.yml')
    if not os.path.isfile(path):
        return {}
    with open(path) as handle:
        return yaml.safe_load(handle) or {}


@pytest.mark.parametrize('host', HOSTS, ids=lambda h: h['gpu_tray_recipe'])
@pytest.mark.parametrize('role', ROLES)
def test_what_each_role_computes_from_its_defaults_passes_its_own_argument_spec(role, host):
    defaults = _defaults(role)
    for entry, spec in _spec(role).items():
        options = spec.get('options') or {}
        values = {}
        for name in options:
            if name in defaults:
                raw = defaults[name]
                values[name] = expression(role, raw, **host) if isinstance(raw, str) else raw
        result = ArgumentSpecValidator(options).validate(values)
        assert not result.error_messages, '%s (%s) on %s: %s' % (role, entry, host, result.error_messages)


def _choices(role, option):
    """The choices of an option, the same in every entry point that has it."""
    found = [spec['options'][option]['choices'] for spec in _spec(role).values()
             if option in (spec.get('options') or {})]
    assert found and all(choices == found[0] for choices in found), (role, option, found)
    return found[0]


def _deployable_recipes():
    """The recipes one can deploy and the old names the registry still accepts (with a warning)."""
    return set(registry.deployable()) | set(registry.aliases())


def _tuned_intents():
    tuned = platform.load(platform.names()[0])['tuned']
    return set(tuned['cmdline']) & set(tuned['sysctl_profiles'])


# (role, option, the values the consuming code implements)
IMPLEMENTED = [
    ('imex', 'imex_host_service', set(platform.IMEX_SERVICES)),
    ('rdma_netns', 'rdma_netns_mode', set(platform.NETNS_MODES)),
    ('validate', 'validate_netns_mode', set(platform.NETNS_MODES)),
    ('kernel_tuning', 'kernel_tuning_intent', {''} | _tuned_intents()),
    # the preparing roles, whose reads the preflight can take ahead (the tray_plan action's planners but the
    # preflight's and the verification's own)
    ('preflight', 'preflight_prefetch', {'kernel_tuning', 'imex', 'rdma_modules', 'rdma_netns'}),
    ('stack', 'stack_bundle_format', set(bundle.FORMATS)),
    ('validate', 'validate_phases', set(evidence.RUN_PHASES)),
    ('validate', 'validate_nccl_variants', set(nccl_launch.VARIANTS)),
    ('validate', 'validate_recipe', _deployable_recipes()),
]


@pytest.mark.parametrize('role, option, implemented', IMPLEMENTED, ids=[row[1] for row in IMPLEMENTED])
def test_every_choice_is_a_value_the_code_implements_and_the_reverse(role, option, implemented):
    assert set(_choices(role, option)) == implemented


def test_the_preflight_prefetch_choices_are_planners_the_action_knows():
    from ansible_collections.gpu_tray.cluster.plugins.action import tray_plan
    assert set(_choices('preflight', 'preflight_prefetch')) <= set(tray_plan.PLANNERS) - {'preflight', 'verify'}


def _documented_defaults():
    """(role, entry point, option, documented default) for every option with a default in its argument spec."""
    out = []
    for role in ROLES:
        for entry, spec in _spec(role).items():
            for name, option in sorted((spec.get('options') or {}).items()):
                if 'default' in option:
                    out.append((role, entry, name, option['default']))
    return out


@pytest.mark.parametrize('role, entry, option, documented', _documented_defaults(),
                         ids=['%s-%s-%s' % row[:3] for row in _documented_defaults()])
def test_the_documented_default_is_the_one_the_role_applies(role, entry, option, documented):
    """ansible-doc, the docsite and the AWX questions show the argument spec's default: with nothing in the inventory
    the role must apply exactly that (a default templated from another variable is documented as its template)."""
    raw = _defaults(role).get(option)
    if isinstance(documented, str) and '{{' in documented:
        assert raw == documented
        return
    # a tray of a platform whose inventory sets nothing else (not the variable that feeds this option either)
    inventory = {'gpu_tray_platform': 'nvke-gb200'}
    feeds = re.match(r'^\{\{\s*(gpu_tray_[a-z0-9_]+)\s*\|\s*default\(', raw) if isinstance(raw, str) else None
    shared = re.match(r"^\{\{\s*lookup\('gpu_tray\.cluster\.run_context',\s*'([a-z_]+)'\)\s*\}\}$",
                      raw.strip()) if isinstance(raw, str) else None
    if feeds:
        inventory.pop(feeds.group(1), None)
    if shared:       # an option that takes a shared input (plugin_utils/run_context.py): its inventory variable
        from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import run_context
        inventory.pop(run_context.VARIABLES.get(shared.group(1)), None)
    applied = expression(role, raw, **inventory) if isinstance(raw, str) else raw
    assert applied == documented and type(applied) is type(documented), (
        '%s: %s applies %r, its argument spec (%s) documents %r' % (role, option, applied, entry, documented))
