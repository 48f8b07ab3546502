# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Platform profiles: every platform fact of the collection, one YAML file per platform.

``platforms/<name>.yml`` says what a platform's recipes want of a tray - OS and kernel, rails, SR-IOV and firmware
policy, whether each tray's BMC is required, the host IMEX service, ib_core netns_mode, RDMA modules, the recipes with their nvidia-tuned intent, and
per intent the huge page pools the platform's kernel can hold. ``platforms/_nvidia-tuned.yml`` holds the
nvidia-tuned profiles' kernel arguments and sysctl sections (the same for every accelerator). A new platform is one
new file; no role, playbook or filter tests a platform name.

Controller code (plugin_utils): the lookup ``gpu_tray.cluster.platform_profile`` and the ``tray_plan`` action load
profiles through :func:`load`, which reads each file once per process and checks its shape, so a malformed file
fails with the file and the key named instead of somewhere downstream.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import os

import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry

PLATFORM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'platforms')
TUNED_FILE = '_nvidia-tuned.yml'
NETNS_MODES = ('exclusive', 'shared', 'unmanaged')
IMEX_SERVICES = ('masked', 'enabled', 'unmanaged')

# key -> type (a tuple: any of them) of a platform file; nested dicts are checked with their own table
_SHAPE = {
    'name': str, 'description': str, 'service': str, 'accelerator': str,
    'os': {'os_id': str, 'os_version_id': str, 'kernel_pattern': str, 'kernel_hint': str},
    'rails': list,
    'sriov': {'vfs': bool, 'num_vfs': int},
    'firmware': {'check': bool},
    'bmc': {'required': bool},
    'containerd': {'runtime_config_source': (str, type(None))},
    'imex': {'host_service': str},
    'rdma': {'netns_mode': str, 'modules': list},
    'default_recipe': str,
    'tuning': {'intents': dict},
}
_INTENT_SHAPE = {'hugepages': list, 'upstream_hugepages': list, 'default_hugepagesz': str}

_CACHE = {}


class ProfileError(ValueError):
    """A platform name or file that cannot be used; the text names the platform, file and key."""


def _read_yaml(path):
    with open(path) as handle:
        return yaml.safe_load(handle)


def _check_shape(where, data, shape):
    if not isinstance(data, dict):
        raise ProfileError('%s: expected a mapping, got %s' % (where, type(data).__name__))
    for key, kind in shape.items():
        if key not in data:
            raise ProfileError('%s: key %s is missing' % (where, key))
        if isinstance(kind, dict):
            _check_shape('%s.%s' % (where, key), data[key], kind)
        elif not isinstance(data[key], kind) or (kind is int and isinstance(data[key], bool)):
            raise ProfileError('%s.%s: expected %s, got %r' % (
                where, key, ' or '.join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,))),
                data[key]))


def names(directory=None):
    """The platforms there are profiles for (file names without .yml, sorted)."""
    directory = directory or PLATFORM_DIR
    return sorted(name[:-4] for name in os.listdir(directory) if name.endswith('.yml') and not name.startswith('_'))


def validate(profile, tuned, where):
    """Raise ProfileError for a profile whose values do not fit together (beyond the shape); ``profile['recipes']``
    is the registry's list for the platform (attached by :func:`load`)."""
    _check_shape(where, profile, _SHAPE)
    if profile['imex']['host_service'] not in IMEX_SERVICES:
        raise ProfileError('%s.imex.host_service: %s is not one of %s'
                           % (where, profile['imex']['host_service'], ', '.join(IMEX_SERVICES)))
    if profile['rdma']['netns_mode'] not in NETNS_MODES:
        raise ProfileError('%s.rdma.netns_mode: %s is not one of %s'
                           % (where, profile['rdma']['netns_mode'], ', '.join(NETNS_MODES)))
    if profile['default_recipe'] not in profile['recipes']:
        raise ProfileError('%s.default_recipe: %s is not one of its recipes (%s)'
                           % (where, profile['default_recipe'], ', '.join(sorted(profile['recipes']))))
    intents = profile['tuning']['intents']
    for intent, entry in intents.items():
        _check_shape('%s.tuning.intents.%s' % (where, intent), entry, _INTENT_SHAPE)
        if intent not in tuned['cmdline'] or intent not in tuned['sysctl_profiles']:
            raise ProfileError('%s.tuning.intents.%s: %s has no nvidia-tuned profile %s'
                               % (where, intent, TUNED_FILE, intent))
    for recipe, entry in profile['recipes'].items():
        intent = (entry or {}).get('tuned_intent')
        if not isinstance(intent, str) or (intent and intent not in intents):
            raise ProfileError('%s.recipes.%s.tuned_intent: %r is not "" or one of the tuning intents (%s)'
                               % (where, recipe, intent, ', '.join(sorted(intents))))


def load(name, directory=None, recipe_table=None):
    """The profile of platform ``name`` (a deep copy: callers may change it), with ``tuned`` - the nvidia-tuned
    data - and ``recipes`` - the registry's recipes of the platform with their nvidia-tuned intent
    (registry.for_platform; ``recipe_table`` replaces the registry in tests) - attached. Read and checked once per
    process."""
    directory = directory or PLATFORM_DIR
    key = (directory, name, id(recipe_table))
    if key not in _CACHE:
        known = names(directory)
        if name not in known:
            raise ProfileError('no platform profile %r (known: %s; a platform is a file %s/<name>.yml)'
                               % (name, ', '.join(known), os.path.basename(directory)))
        where = '%s.yml' % name
        profile = _read_yaml(os.path.join(directory, where))
        tuned = _read_yaml(os.path.join(directory, TUNED_FILE))
        if isinstance(profile, dict) and 'recipes' in profile:
            raise ProfileError('%s: key recipes is not a platform fact - a recipe names its platform in the registry '
                               '(plugins/plugin_utils/stack_data/recipes.yml)' % where)
        if isinstance(profile, dict):
            profile['recipes'] = registry.for_platform(name, recipe_table)
        validate(profile, tuned, where)
        if profile['name'] != name:
            raise ProfileError('%s: name is %s, expected the file name %s' % (where, profile['name'], name))
        profile['tuned'] = tuned
        _CACHE[key] = profile
    return copy.deepcopy(_CACHE[key])


def of_recipe(recipe, profile_of=None):
    """The profile of the platform the recipe registry names for ``recipe`` (an old name: its alias's), loaded with
    ``profile_of`` (default :func:`load`); None for no recipe or one the registry does not deploy (a site's own). The
    one recipe -> platform fallback: the run context (an API host without a platform), the stack's plan (the VFs of a
    recipe asked without them) and :func:`for_recipe` read it here."""
    if not recipe:
        return None
    try:
        name = registry.facts(recipe)['platform']
    except (registry.RegistryError, KeyError, ValueError):
        return None
    return (profile_of or load)(name)


def for_recipe(recipe, directory=None):
    """The profile of the platform whose recipes include ``recipe`` (an old name: its alias's); ProfileError naming
    the known recipes for one no platform has."""
    found = of_recipe(recipe, None if directory is None else (lambda name: load(name, directory)))
    if found is None:
        known = sorted(r for name in names(directory) for r in load(name, directory)['recipes'])
        raise ProfileError('no platform profile has recipe %r (known: %s)' % (recipe, ', '.join(known)))
    return found


def recipe_intent(profile, recipe):
    """The nvidia-tuned intent of ``recipe`` ('' when the recipe tunes nothing); an old name is its alias's."""
    recipe = registry.aliases().get(recipe, recipe)
    if recipe not in profile['recipes']:
        raise ProfileError('recipe %s is not one of platform %s\'s (%s)'
                           % (recipe, profile['name'], ', '.join(sorted(profile['recipes']))))
    return profile['recipes'][recipe]['tuned_intent']


def tuning(profile, intent):
    """What nvidia-tuned's ``<accelerator>-<intent>`` profile asks of this platform's kernel.

    ``{'cmdline': [...], 'hugepages': [{size, count}], 'default_hugepagesz': str, 'sysctls': {name: value}}``;
    every value empty for the empty intent (the platform's recipe tunes nothing).
    """
    if not intent:
        return {'cmdline': [], 'hugepages': [], 'default_hugepagesz': '', 'sysctls': {}}
    intents = profile['tuning']['intents']
    if intent not in intents:
        raise ProfileError('intent %s has no nvidia-tuned profile on platform %s; use one of %s'
                           % (intent, profile['name'], ', '.join(sorted(intents))))
    tuned = profile['tuned']
    sysctls = {}
    for section in tuned['sysctl_profiles'][intent]:
        sysctls.update(tuned['sysctl_sections'][section])
    entry = intents[intent]
    return {'cmdline': list(tuned['cmdline'][intent]), 'hugepages': copy.deepcopy(entry['hugepages']),
            'default_hugepagesz': entry['default_hugepagesz'], 'sysctls': sysctls}
