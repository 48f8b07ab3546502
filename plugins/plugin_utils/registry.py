# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The recipe registry and the component catalog (``stack_data/``), read once per process.

``stack_data/recipes.yml`` holds every fact of a recipe (platform, intent, nvidia-tuned intent, Kubernetes window,
conformance checks, NCCL benchmarks, components); ``stack_data/catalog.yml`` the components with their pinned
versions; ``stack_data/values/`` the values files the catalog and recipes name. The stack planner
(``stack_plan.py``), the platform profiles (``platform.py``: which recipes a platform has) and the generator of
``module_utils/recipes.py`` (tools/recipes.py, for the modules on the API host) read them here, so a recipe is
written down once.

Strings in the catalog, the recipes and the values files may hold Jinja expressions over ``stack_repositories`` and
``stack_registries`` only (the air-gap mappings); :func:`render` fills them in with jinja2 - the engine Ansible
itself templates with - in a sandbox with no other variables, so a data file cannot reach the inventory.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import difflib
import os

import yaml

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'stack_data')
VALUES_DIR = os.path.join(DATA_DIR, 'values')
RECIPE_FACTS = ('platform', 'intent', 'tuned_intent', 'kubernetes', 'conformance', 'benchmarks')
BENCHMARKS = ('nvls', 'net')

_CACHE = {}


class RegistryError(ValueError):
    """A recipe name or data file that cannot be used; the text names the recipe, file or key and the fix."""


def _read(path):
    if path not in _CACHE:
        try:
            with open(path) as handle:
                _CACHE[path] = yaml.safe_load(handle)
        except (IOError, OSError, yaml.YAMLError) as exc:
            raise RegistryError('cannot read %s: %s' % (path, exc))
    return copy.deepcopy(_CACHE[path])


def recipes(path=None):
    """{name: recipe} of the registry, abstract bases included."""
    data = _read(path or os.path.join(DATA_DIR, 'recipes.yml'))
    out = data.get('recipes') if isinstance(data, dict) else None
    if not isinstance(out, dict):
        raise RegistryError('%s: no mapping "recipes"' % (path or 'stack_data/recipes.yml'))
    return out


def aliases(path=None):
    """{old name: recipe name}."""
    data = _read(path or os.path.join(DATA_DIR, 'recipes.yml'))
    return dict(data.get('aliases') or {})


def catalog(path=None):
    data = _read(path or os.path.join(DATA_DIR, 'catalog.yml'))
    out = data.get('components') if isinstance(data, dict) else None
    if not isinstance(out, dict):
        raise RegistryError('%s: no mapping "components"' % (path or 'stack_data/catalog.yml'))
    return out


def sources(path=None):
    """{'repositories': {key: URL or directory}, 'registries': {key: registry}}: the catalog's defaults, which a
    site's stack_repositories / stack_registries are merged over."""
    data = _read(path or os.path.join(DATA_DIR, 'catalog.yml'))
    out = (data.get('sources') if isinstance(data, dict) else None) or {}
    if not all(isinstance(out.get(k), dict) for k in ('repositories', 'registries')):
        raise RegistryError('%s: no mappings "sources.repositories" and "sources.registries"'
                            % (path or 'stack_data/catalog.yml'))
    return out


def deployable(table=None):
    """The names one can deploy (no abstract base), sorted."""
    table = recipes() if table is None else table
    return sorted(name for name, recipe in table.items() if not (recipe or {}).get('abstract'))


def canonical_name(name, table=None, alias_table=None):
    """(recipe name, note): an alias gives the recipe it now names and a sentence saying so; an unknown name raises
    RegistryError listing the deployable recipes."""
    table = recipes() if table is None else table
    alias_table = aliases() if alias_table is None else alias_table
    if name in alias_table:
        new = alias_table[name]
        return new, ('recipe %s is now called %s (the AICR coordinate of the setup guide): set gpu_tray_recipe: %s'
                     % (name, new, new))
    if name in table and not (table[name] or {}).get('abstract'):
        return name, ''
    close = difflib.get_close_matches(str(name), deployable(table), n=1, cutoff=0.6)
    raise RegistryError('unknown recipe %r%s: choose one of %s (gpu_tray_recipe)'
                        % (name, ' (did you mean %s?)' % close[0] if close else '', ', '.join(deployable(table))))


def facts(name, table=None):
    """The registry facts of a deployable recipe (platform, intent, tuned_intent, kubernetes, conformance,
    benchmarks), after its alias; RegistryError for an unknown name or a recipe missing a fact."""
    table = recipes() if table is None else table
    name, _note = canonical_name(name, table)
    recipe = table[name]
    missing = [key for key in RECIPE_FACTS if key not in recipe]
    if missing:
        raise RegistryError('recipe %s in stack_data/recipes.yml has no %s' % (name, ', '.join(missing)))
    out = dict((key, copy.deepcopy(recipe[key])) for key in RECIPE_FACTS)
    unknown = sorted(set(out['benchmarks']) - set(BENCHMARKS))
    if unknown:
        raise RegistryError('recipe %s: unknown benchmark(s) %s (known: %s)'
                            % (name, ', '.join(unknown), ', '.join(BENCHMARKS)))
    out['name'] = name
    return out


def for_platform(platform, table=None):
    """{recipe: {'tuned_intent': ...}} of the deployable recipes of a platform (the profile's recipe list)."""
    table = recipes() if table is None else table
    return dict((name, {'tuned_intent': table[name].get('tuned_intent', '')}) for name in deployable(table)
                if table[name].get('platform') == platform)


def values_file(relative):
    """The parsed content of stack_data/values/<relative> (not rendered)."""
    path = os.path.normpath(os.path.join(VALUES_DIR, relative))
    if not path.startswith(VALUES_DIR + os.sep):
        raise RegistryError('values file %s is outside stack_data/values' % relative)
    if not os.path.isfile(path):
        raise RegistryError('values file %s does not exist under stack_data/values' % relative)
    return _read(path)


def render(data, context):
    """``data`` with every string that holds ``{{`` rendered by jinja2 against ``context`` (StrictUndefined: an
    undefined name or key fails, naming it). Mappings and lists are rebuilt; other values are kept."""
    import jinja2
    from jinja2.sandbox import SandboxedEnvironment
    env = SandboxedEnvironment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)

    def walk(node):
        if isinstance(node, dict):
            return dict((key, walk(value)) for key, value in node.items())
        if isinstance(node, list):
            return [walk(value) for value in node]
        if isinstance(node, str) and '{{' in node:
            try:
                return env.from_string(node).render(context)
            except jinja2.TemplateError as exc:
                raise RegistryError('cannot render %r: %s (only stack_repositories and stack_registries are known '
                                    'here)' % (node, exc))
        return node
    return walk(data)
