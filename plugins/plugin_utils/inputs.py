# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's inputs, judged before anything is read, written or installed (action gpu_tray.cluster.check_inputs).

Pure functions over names and values; the action collects them from the hosts of the run. The rules:

* ``removed_variables`` - a gpu_tray_* variable the collection no longer reads (a value without effect);
* ``unknown_variables`` - a gpu_tray_* variable the collection does not know (misspelt), with the closest known name;
* ``value_problems`` - a gpu_tray_* value against the argument spec of the role option it feeds (the spec
  tools/inventory_spec.py generates into roles/preflight/vars/inventory_spec.yml), the P_Key and reboot-batch rules,
  and the platform profiles (a recipe of the platform, an nvidia-tuned intent it has); an empty (null) value is
  refused: ``default()`` in the roles keeps a null, which turns a safety switch such as gpu_tray_bmc_required off;
* ``misspelt_role_variables`` - a role variable passed as an extra var that is not an option of its role but close
  to one (``rolling_reboot_bach``);
* ``survey_answers`` - AWX survey answers (extra vars ``survey_<role option>``): blank ones (null on some AWX
  versions, "" on others) are dropped, so the role's default - the inventory's value - applies; the others are
  checked against the role option's argument spec and returned for the playbook to set;
* ``option_findings`` - a playbook's own options (``awx_configure_*``: playbooks/vars/<name>_spec.yml), unknown names
  with the closest known one, each value against its spec (and ``rrule_problem`` for a schedule); the values as the
  spec converts them (a comma string becomes a list), with the spec's defaults, for the play to read.

Every finding is one clause naming the variable the user set; ``refusal`` joins them into one sentence.
Argument-spec validation is ansible-core's own ``ArgumentSpecValidator`` (what validate_argument_spec and the
roles' argument specs run), called per variable so each message names its variable.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import difflib
import os
import re

import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.errors import ArgumentTypeError, ArgumentValueError, ElementError

PREFIX = 'gpu_tray_'
# AWX survey answers reach the run as extra vars, which no other variable can override: a blank answer named like
# the role option would replace the inventory's value with null or "". The surveys ask under this prefix instead
# (tools/awx_surveys.py); the playbooks set the role option only from an answer that is not blank.
SURVEY_PREFIX = 'survey_'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC_FILE = os.path.join(ROOT, 'roles', 'preflight', 'vars', 'inventory_spec.yml')
# a playbook's own options (check_inputs options: <name>): playbooks/vars/<name>_spec.yml, key <name>_options
PLAYBOOK_SPEC = os.path.join(ROOT, 'playbooks', 'vars', '%s_spec.yml')
ROLES_DIR = os.path.join(ROOT, 'roles')
# the choices a site extends: a recipe of stack_extra_recipes is a recipe (the stack role's argument spec says so)
EXTRA_CHOICES = {'gpu_tray_recipe': 'stack_extra_recipes'}
TYPE_WORDS = {'str': 'a string', 'path': 'a path', 'int': 'an integer', 'float': 'a number', 'bool': 'true or false',
              'list': 'a list', 'dict': 'a mapping', 'raw': 'a value'}

_CACHE = {}


class InputsError(Exception):
    """The collection's own tables cannot be read (a broken installation, not a user's input)."""


def _read(path):
    try:
        with open(path) as handle:
            return yaml.safe_load(handle)
    except (IOError, OSError, yaml.YAMLError) as exc:
        raise InputsError('cannot read %s: %s' % (path, to_native(exc)))


def tables(path=None):
    """The generated tables: ``spec`` (gpu_tray_* name -> argument spec), ``known`` (every gpu_tray_* name of the
    collection) and ``removed`` (name -> why). Read once per process."""
    path = path or SPEC_FILE
    if path not in _CACHE:
        data = _read(path) or {}
        try:
            _CACHE[path] = {'spec': data['__preflight_inventory_spec'], 'known': data['__preflight_known_variables'],
                            'removed': data['__preflight_removed_variables']}
        except (KeyError, TypeError):
            raise InputsError('%s lacks the generated tables (run tools/inventory_spec.py)' % path)
    return _CACHE[path]


def roles(roles_dir=None):
    """The collection's roles that have an argument spec, longest name first (rdma_modules before rdma)."""
    roles_dir = roles_dir or ROLES_DIR
    key = ('roles', roles_dir)
    if key not in _CACHE:
        found = [name for name in os.listdir(roles_dir)
                 if os.path.isfile(os.path.join(roles_dir, name, 'meta', 'argument_specs.yml'))]
        _CACHE[key] = sorted(found, key=lambda name: (-len(name), name))
    return _CACHE[key]


def role_options(role, roles_dir=None):
    """Every option of ``role`` over all its entry points (name -> spec; the first entry point's spec wins)."""
    roles_dir = roles_dir or ROLES_DIR
    key = ('options', roles_dir, role)
    if key not in _CACHE:
        data = _read(os.path.join(roles_dir, role, 'meta', 'argument_specs.yml')) or {}
        options = {}
        for entry in (data.get('argument_specs') or {}).values():
            for name, spec in ((entry or {}).get('options') or {}).items():
                options.setdefault(name, spec)
        _CACHE[key] = options
    return _CACHE[key]


def role_of(name, roles_dir=None):
    """The role whose prefix ``name`` carries (``rolling_reboot_batch`` -> ``rolling_reboot``), or None."""
    for role in roles(roles_dir):
        if name.startswith(role + '_'):
            return role
    return None


# ------------------------------------------------------------------------------------------------ wording

def secret_options(roles_dir=None):
    """Every role option an argument spec marks ``no_log: true`` (the BMC passwords), over all roles."""
    roles_dir = roles_dir or ROLES_DIR
    key = ('secrets', roles_dir)
    if key not in _CACHE:
        _CACHE[key] = frozenset(name for role in roles(roles_dir) for name, spec in role_options(role, roles_dir).items()
                                if (spec or {}).get('no_log'))
    return _CACHE[key]


def is_secret(name, spec=None, roles_dir=None):
    """A variable holds a secret by its argument spec, never by a word in its name: its own spec says ``no_log``, or
    it is (a survey's answer to) a role option that does, or the gpu_tray_* name that feeds one (gpu_tray_bmc_password
    feeds preflight_bmc_password). gpu_tray_multus_token_warn_days is a number of days, shown like any other."""
    if (spec or {}).get('no_log'):
        return True
    name = name[len(SURVEY_PREFIX):] if name.startswith(SURVEY_PREFIX) else name
    secrets = secret_options(roles_dir)
    if name in secrets:
        return True
    stem = name[len(PREFIX):] if name.startswith(PREFIX) else None
    return stem is not None and any(secret == '%s_%s' % (role_of(secret, roles_dir), stem) for secret in secrets)


def shown(name, value, spec=None):
    """A value as a message repeats it: quoted, short, in YAML's words (null, true), never a secret (is_secret)."""
    if name and is_secret(name, spec):
        return '(hidden)'
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    text = "'%s'" % value if isinstance(value, str) else to_native(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _choice_list(choices):
    return ', '.join("'' (empty)" if choice == '' else to_native(choice) for choice in choices)


def expected(spec):
    """What a value of ``spec`` must be, in words (``one of: refuse, allow``, ``an integer``, ...)."""
    kind = spec.get('type', 'str')
    if spec.get('choices') is not None:
        if kind == 'list':
            return 'a list of: %s' % _choice_list(spec['choices'])
        return 'one of: %s' % _choice_list(spec['choices'])
    if kind == 'list' and spec.get('elements'):
        return 'a list of %s' % (TYPE_WORDS.get(spec['elements'], spec['elements']).split(' ', 1)[-1] + 's'
                                 if spec['elements'] != 'bool' else 'true/false values')
    return TYPE_WORDS.get(kind, kind)


def _with_default(spec):
    if 'default' in spec:
        return ', or remove it for the default (%s)' % shown('', spec['default'])
    return ', or remove it'


# ------------------------------------------------------------------------------------------------ the rules

def close_name(name, candidates, prefix, cutoff):
    """The candidate closest to ``name``, compared without the shared prefix (which makes every name look alike)."""
    stems = dict((item[len(prefix):], item) for item in candidates if item.startswith(prefix))
    close = difflib.get_close_matches(name[len(prefix):], list(stems), n=1, cutoff=cutoff)
    return stems[close[0]] if close else None


def removed_variables(names, removed):
    """``[(name, why)]`` for the names the collection no longer reads, sorted."""
    return [(name, removed[name]) for name in sorted(set(names)) if name in removed]


def unknown_variables(names, known, allowed=(), prefix=PREFIX, cutoff=0.7):
    """``[{name, suggestion}]`` for the names with ``prefix`` that are neither known nor allowed nor removed
    elsewhere, sorted; ``suggestion`` is the closest known name or None (difflib, ``cutoff``)."""
    known = sorted(set(known))
    skip = set(known) | set(allowed or ())
    return [{'name': name, 'suggestion': close_name(name, known, prefix, cutoff)}
            for name in sorted(set(names)) if name.startswith(prefix) and name not in skip]


def misspelt_role_variables(names, allowed=(), roles_dir=None, cutoff=0.8):
    """``[{name, role, suggestion}]`` for names with a role's prefix that are no option of the role (any entry point)
    but close to one: a misspelling (``rolling_reboot_bach``). A name not close to any option is left alone - a site
    variable may share a role's prefix (``validate_certs``)."""
    out = []
    for name in sorted(set(names) - set(allowed or ())):
        role = role_of(name, roles_dir)
        if role is None or name.startswith('__'):
            continue
        options = role_options(role, roles_dir)
        if name in options:
            continue
        suggestion = close_name(name, list(options), role + '_', cutoff)
        if suggestion:
            out.append({'name': name, 'role': role, 'suggestion': suggestion})
    return out


def batch_problem(value):
    """None when ``value`` is a reboot batch (a positive integer, or a percentage in (0, 100] such as 25%), else the
    rest of the clause after the variable's name: the rule of the reboot plan (plugin_utils/reboot_plan.py), which applies it later."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.reboot_plan import parse_batch
    try:
        parse_batch(value)
    except ValueError:
        return 'must be a positive integer or a percentage above 0 and at most 100%% (such as 25%%), got %s' % (
            shown('', value))
    return None


def pkey_problem(value):
    """None when ``value`` is a partition key the collection can require (module_utils.rdma.required_pkey), else the
    rest of the clause after the variable's name."""
    from ansible_collections.gpu_tray.cluster.plugins.module_utils.rdma import required_pkey
    try:
        required_pkey(value)
    except (ValueError, TypeError) as exc:
        return 'is not a partition key: %s' % to_native(exc)
    return None


_DTSTART = re.compile(r'DTSTART(;[^:]+)?:[0-9]+T[0-9]+Z?')
_NAIVE_DTSTART = re.compile(r'DTSTART:[0-9]+T[0-9]+(\s|$)')
_RULE = re.compile(r'(?<![A-Z])(?:RRULE|EXRULE):[^\s]*')


def rrule_problem(value):
    """None when ``value`` is a schedule AWX accepts (or empty: no schedule), else the rest of the clause after the
    variable's name. AWX checks a schedule's rrule on its server (SchedulePreviewSerializer.validate_rrule, not a
    library this collection can call), so its rules are written here as AWX 24 states them: one DTSTART with a time
    zone (Z or ;TZID=), at least one RRULE, each with FREQ and INTERVAL, no SECONDLY, no BYDAY with a numeric prefix,
    not COUNT and UNTIL together, COUNT at most 999, no EXDATE or RDATE; then python-dateutil (the kubernetes
    client's dependency, what AWX parses it with) must parse it."""
    if not isinstance(value, str) or not value.strip():
        return None
    problems = []
    starts = _DTSTART.findall(value)
    if not starts:
        problems.append('no DTSTART (it starts DTSTART:YYYYMMDDTHHMMSSZ)')
    elif len(starts) > 1:
        problems.append('more than one DTSTART')
    elif _NAIVE_DTSTART.search(value):
        problems.append('DTSTART has no time zone (end it with Z, or give ;TZID=)')
    lowered = value.lower()
    if 'rrule:' not in lowered:
        problems.append('no RRULE')
    if 'exdate:' in lowered or 'rdate:' in lowered:
        problems.append('EXDATE and RDATE are not allowed')
    for rule in _RULE.findall(value):
        words = rule.upper()
        if 'FREQ=' not in words:
            problems.append('%s has no FREQ' % rule)
        if 'INTERVAL=' not in words:
            problems.append('%s has no INTERVAL' % rule)
        if 'SECONDLY' in words:
            problems.append('%s: SECONDLY is not supported' % rule)
        if re.search(r'BYDAY[:=][+-]?[0-9]+[A-Z]{2}', words):
            problems.append('%s: BYDAY with a numeric prefix is not supported' % rule)
        if 'COUNT=' in words and 'UNTIL=' in words:
            problems.append('%s has both COUNT and UNTIL' % rule)
        count = re.search(r'COUNT=([0-9]+)', words)
        if count and int(count.group(1)) > 999:
            problems.append('%s: COUNT above 999 is not supported' % rule)
    if not problems:
        try:
            from dateutil import rrule
            rrule.rrulestr('\n'.join(value.split()), forceset=True)
        except ImportError:         # pragma: no cover - the kubernetes client brings it
            pass
        except (ValueError, TypeError, KeyError) as exc:
            problems.append('it does not parse: %s' % to_native(exc))
    if not problems:
        return None
    return ('is not a schedule AWX accepts (%s): give an iCal DTSTART and RRULE such as '
            "'DTSTART:20260101T030000Z RRULE:FREQ=DAILY;INTERVAL=1', or '' for no schedule, got %s"
            % ('; '.join(problems), shown('', value)))


# rules of their own for values whose argument-spec type is raw: option or variable name -> check
RULES = {
    'awx_configure_validate_schedule': rrule_problem,
    'gpu_tray_reboot_batch': batch_problem,
    'rolling_reboot_batch': batch_problem,
    'gpu_tray_pkey': pkey_problem,
    'preflight_pkey': pkey_problem,
    'validate_pkey': pkey_problem,
}


def one_value(label, name, value, spec, extra_choices=()):
    """The problem of one value against its argument spec (and its RULES entry) as a clause naming ``label``, or
    None. ``name`` is the variable as the spec and RULES know it; ``extra_choices`` are allowed besides the spec's."""
    if value is None:
        return '%s is empty (null): set %s%s' % (label, expected(spec), _with_default(spec))
    secret = {'no_log': bool(spec.get('no_log'))}
    spec = dict((key, item) for key, item in spec.items() if key in ('type', 'elements', 'choices'))
    if spec.get('choices') is not None and extra_choices:
        spec['choices'] = list(spec['choices']) + [item for item in extra_choices if item not in spec['choices']]
    kind = spec.get('type', 'str')
    if kind in ('str', 'path') and isinstance(value, (list, dict)):
        return '%s must be %s, got a %s' % (label, expected(spec), 'list' if isinstance(value, list) else 'mapping')
    result = ArgumentSpecValidator({name: spec}).validate({name: value})
    for error in result.errors:
        if isinstance(error, ArgumentValueError):
            aliases = _recipe_aliases(spec['choices'])
            if aliases and kind != 'list':
                # a recipe: the registry's old names are accepted (with a warning) but never offered
                offered = dict(spec, choices=[c for c in spec['choices'] if c not in aliases])
                close = difflib.get_close_matches(to_native(value), offered['choices'], n=1, cutoff=0.6)
                return '%s must be %s, got %s%s' % (label, expected(offered), shown(name, value, secret),
                                                    ' (did you mean %s?)' % close[0] if close else '')
            if kind == 'list':
                got = [item for item in result.validated_parameters.get(name) or [] if item not in spec['choices']]
                listed = ', '.join(map(to_native, got))
                return '%s must be %s, got %s' % (label, expected(spec), shown(name, listed, secret))
            return '%s must be %s, got %s' % (label, expected(spec), shown(name, value, secret))
        if isinstance(error, (ArgumentTypeError, ElementError)):
            return '%s must be %s, got %s' % (label, expected(spec), shown(name, value, secret))
        # one value against its own spec has no other kind of error (required, mutually exclusive ...): a fallback
        return '%s: %s' % (label, to_native(error.msg))  # pragma: no mutate
    rule = RULES.get(name)
    problem = rule(value) if rule is not None else None
    return '%s %s' % (label, problem) if problem else None


def _recipe_aliases(choices):
    """The registry's old recipe names among ``choices`` (none for a spec that is not a recipe's)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry
    return set(registry.aliases()) & set(choices or [])


def platform_problems(values, extra_recipes=()):
    """gpu_tray_platform, gpu_tray_recipe and gpu_tray_tuned_intent against the platform profiles: a platform there
    is, a recipe of that platform, an nvidia-tuned intent the platform has (a value outside the generated choices is
    left to the spec: one clause per problem)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform
    known = platform.names()
    name = values.get('gpu_tray_platform')
    if name is not None and name not in known:
        return ['gpu_tray_platform must be one of: %s, got %s' % (', '.join(known), shown('', name))]
    profiles = dict((other, platform.load(other)) for other in known)
    problems = []
    recipe = values.get('gpu_tray_recipe')
    # an old name of the registry is its recipe's (the stack plan warns that it was renamed)
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry
    owners = [other for other in known if registry.aliases().get(recipe, recipe) in profiles[other]['recipes']]
    if recipe is not None and name is not None and owners and name not in owners:
        problems.append('gpu_tray_recipe %s is a recipe of platform %s, not of gpu_tray_platform %s'
                        % (recipe, owners[0], name))
    elif recipe is not None and not owners and recipe not in extra_recipes:
        offered = sorted(r for p in profiles.values() for r in p['recipes'])
        close = difflib.get_close_matches(to_native(recipe), offered, n=1, cutoff=0.6)
        problems.append('gpu_tray_recipe must be one of: %s, got %s%s' % (
            ', '.join(offered), shown('', recipe), ' (did you mean %s?)' % close[0] if close else ''))
    intent = values.get('gpu_tray_tuned_intent')
    if intent and name is not None and intent not in profiles[name]['tuning']['intents']:
        problems.append('gpu_tray_tuned_intent %s is not an nvidia-tuned intent of platform %s (it has: %s)'
                        % (intent, name, ', '.join(sorted(profiles[name]['tuning']['intents']))))
    return problems


def value_problems(values, spec, extra_choices=None):
    """One clause per problem of ``values`` (gpu_tray_* name -> value, the names that are set) against ``spec``;
    the platform rules only where the spec has nothing to say. ``extra_choices``: name -> more allowed values."""
    extra_choices = extra_choices or {}
    problems, bad = [], set()
    for name in sorted(values):
        if name not in spec:
            continue
        problem = one_value(name, name, values[name], spec[name], extra_choices.get(name, ()))
        if problem:
            problems.append(problem)
            bad.add(name)
    good = dict((name, value) for name, value in values.items() if name in spec and name not in bad)
    problems += platform_problems(good, extra_choices.get('gpu_tray_recipe', ()))
    return problems


def blank(value):
    """An answer AWX sends for a question left blank: null (AWX 24, awx#16205) or "" (AWX 17, awx#9525)."""
    return value is None or (isinstance(value, str) and not value.strip())


def survey_answers(values, roles_dir=None):
    """``(answers, problems)`` for the survey variables in ``values`` (name -> value): ``answers`` maps each role
    option with an answer that is not blank to its value as the role's argument spec converts it; a blank answer is
    left out, so the role's default - the inventory's value - applies."""
    answers, problems = {}, []
    for name in sorted(values):
        if not name.startswith(SURVEY_PREFIX) or blank(values[name]):
            continue
        option = name[len(SURVEY_PREFIX):]
        role = role_of(option, roles_dir)
        options = role_options(role, roles_dir) if role else {}
        if option not in options:
            every = [SURVEY_PREFIX + item for other in roles(roles_dir) for item in role_options(other, roles_dir)]
            suggestion = close_name(name, every, SURVEY_PREFIX, 0.7)
            problems.append('%s answers no survey question of gpu_tray.cluster%s' % (
                name, ' (did you mean %s?)' % suggestion if suggestion else ''))
            continue
        spec = options[option]
        label = 'survey answer %s' % option
        problem = one_value(label, option, values[name], spec)
        if problem:
            problems.append(problem)
            continue
        answers[option] = converted(option, values[name], spec)
    return answers, problems


def converted(name, value, spec):
    """``value`` as its argument spec converts it (a comma string to a list, 'yes' to true), once one_value found no
    problem with it: the value the roles and plays then use is the value that was checked."""
    kind = dict((key, item) for key, item in spec.items() if key in ('type', 'elements', 'choices'))
    return ArgumentSpecValidator({name: kind}).validate({name: value}).validated_parameters[name]


def playbook_spec(name, path=None):
    """The options of playbook ``name`` (playbooks/vars/<name>_spec.yml, key <name>_options): variable -> spec."""
    path = path or PLAYBOOK_SPEC % name
    key = '%s_options' % name
    data = _read(path) or {}
    if not isinstance(data.get(key), dict):
        raise InputsError('%s has no %s' % (path, key))
    return data[key]


def option_findings(values, spec, prefix, playbook):
    """``(clauses, checked)`` for a playbook's own options: ``values`` are the run's variables with ``prefix``
    (name -> value), ``spec`` the playbook's (playbook_spec), ``playbook`` its name for the clause. An unknown name
    is refused with the closest known one; each value is checked against its spec and RULES. ``checked`` maps every option, without the prefix, to its value
    as the spec converts it (a comma string becomes a list, 'yes' true), or its default - the values the play uses."""
    clauses = []
    for item in unknown_variables(list(values), list(spec), prefix=prefix):
        clauses.append('%s is not a variable of playbook %s%s' % (
            item['name'], playbook, ' (did you mean %s?)' % item['suggestion'] if item['suggestion'] else ''))
    checked = {}
    for name in sorted(spec):
        if name not in values:
            checked[name[len(prefix):]] = spec[name].get('default')
            continue
        problem = one_value(name, name, values[name], spec[name])
        if problem:
            clauses.append(problem)
            continue
        checked[name[len(prefix):]] = converted(name, values[name], spec[name])
    return clauses, checked


def host_findings(names, values, known, removed, spec, allowed=(), extra_choices=None):
    """Every clause for one host: removed names, unknown names, bad values (``values``: the spec's names set)."""
    names = [name for name in names if name.startswith(PREFIX)]
    gone = removed_variables(names, removed)
    out = ['%s was removed from gpu_tray.cluster (%s)' % item for item in gone]
    for item in unknown_variables([name for name in names if name not in removed], known, allowed):
        out.append('%s is not a variable of gpu_tray.cluster%s' % (
            item['name'], ' (did you mean %s?)' % item['suggestion'] if item['suggestion'] else ''))
    out += value_problems(values, spec, extra_choices)
    return out


def run_findings(names, allowed=(), roles_dir=None):
    """Clauses for what the run passes once for every host (extra vars): misspelt role variables and survey answers
    (``names``: name -> value). Returns ``(clauses, answers)``."""
    out = []
    for item in misspelt_role_variables([name for name in names if not name.startswith(SURVEY_PREFIX)], allowed,
                                        roles_dir):
        out.append('%s is not a variable of role %s (did you mean %s?)' % (item['name'], item['role'],
                                                                           item['suggestion']))
    answers, problems = survey_answers(names, roles_dir)
    return out + problems, answers


def _hosts_text(hosts, every):
    if len(hosts) == every:
        return ''
    shown_hosts = sorted(hosts)
    if len(shown_hosts) > 3:
        return ' (on %s and %d more)' % (', '.join(shown_hosts[:3]), len(shown_hosts) - 3)
    return ' (on %s)' % ', '.join(shown_hosts)


def refusal(findings, every):
    """One sentence from ``findings`` (clause -> the hosts it holds for, in order of appearance) over ``every`` hosts
    checked, or None when there is nothing to refuse."""
    if not findings:
        return None
    clauses = ['%s%s' % (clause, _hosts_text(hosts, every)) for clause, hosts in findings.items()]
    return ('The run\'s inputs are refused, nothing was read, written or installed: %s; a gpu_tray_* variable of the '
            'site itself goes in gpu_tray_site_variables.' % '; '.join(clauses)
            if any('is not a variable of gpu_tray.cluster' in clause for clause in clauses) else
            'The run\'s inputs are refused, nothing was read, written or installed: %s.' % '; '.join(clauses))
