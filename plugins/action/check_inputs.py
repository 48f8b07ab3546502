# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.check_inputs: the run's inputs, once for the run, before anything else.

Run with ``run_once: true`` as the first task of every playbook: one worker reads the gpu_tray_* variables of every
host of the run (``hostvars``), judges them with plugin_utils/inputs.py, and refuses the run in one sentence naming
the variables the user set. What each host costs is a dictionary walk in that one worker, where one task per host
forks a worker per host (the three tasks of the former roles/preflight/tasks/inputs.yml: docs/performance.md).
Then, where the playbook needs it, whether helm can be run on the API host (kubernetes.core.helm_plugin_info, one
module call). The AWX survey's answers it accepts come back in ``survey``, and in ``facts`` with the marker that the
inputs were checked, for the playbook's next task to set (an action plugin's facts are host facts, which
inject_facts_as_vars false - this project's setting and ansible-core's future default - keeps away from the roles).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from collections import OrderedDict

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.vars import load_extra_vars

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import inputs, platform, report_dir, run_context

ARGUMENT_SPEC = dict(
    hosts=dict(type='list', elements='str'),
    helm=dict(type='raw', default=False),
    # a playbook's own options: <options>_* checked against playbooks/vars/<options>_spec.yml, their checked values
    # set as the fact PLAYBOOK_OPTIONS[<options>] (inputs.option_findings)
    options=dict(type='str', choices=['awx_configure']),
)
# the playbooks whose own options are checked, and the fact their checked values are set as (the play reads it)
PLAYBOOK_OPTIONS = {'awx_configure': '__awx_configure'}
# a value that cannot be templated (its problem is recorded)
FAILED = object()
# set on every host of the play once the inputs passed; the check is skipped while it is true
CHECKED = '__gpu_tray_inputs_checked'
# the stack role's default of stack_helm_binary (tests/quality/test_input_defaults.py holds them equal)
HELM_BINARY = 'helm'


def first_line(text):
    return to_native(text).strip().splitlines()[0] if to_native(text).strip() else ''


def failure_text(answer):
    """What a failed module said, on one line: its msg, else its stderr, else its exception (ansible-core 2.19 hands
    an error summary object whose event carries the message; earlier versions a traceback, whose last line says it)."""
    for key in ('msg', 'module_stderr'):
        if answer.get(key):
            return ' '.join(to_native(answer[key]).split())
    exception = answer.get('exception')
    event = getattr(exception, 'event', None)
    if event is not None and getattr(event, 'msg', None):
        return ' '.join(to_native(event.msg).split())
    lines = to_native(exception or '').strip().splitlines()
    return lines[-1].strip() if lines else 'no answer'


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def _values(self, variables, spec):
        """``(names, values, allowed, extra_choices, problems)`` of one host: its gpu_tray_* names, the templated
        values of those the spec knows, its site variables and site recipes, and a clause per value that cannot be
        templated."""
        templar = self._templar.copy_with_new_env(available_variables=variables)
        problems = []

        def resolve(name):
            """The templated value of ``name`` (None when unset), FAILED when it cannot be templated."""
            if name not in variables:
                return None
            try:
                return templar.template(variables[name])
            except AnsibleError as exc:
                problems.append('%s cannot be resolved: %s' % (name, first_line(exc.message)))
                return FAILED

        names = [name for name in variables if name.startswith(inputs.PREFIX)]
        values = {}
        for name in names:
            value = resolve(name) if name in spec else FAILED
            if value is not FAILED:
                values[name] = value
        # the site's own gpu_tray_* names: gpu_tray_site_variables, or the preflight role's option it feeds
        allowed = [name for source in (values.get('gpu_tray_site_variables'), resolve('preflight_site_variables'))
                   if isinstance(source, list) for name in source]
        extra = {}
        for name, source in inputs.EXTRA_CHOICES.items():
            found = resolve(source)
            extra[name] = list(found) if isinstance(found, dict) else []
        return names, values, allowed, extra, problems

    def _helm(self, mode, task_vars):
        """None when helm is not needed or runs; else the clause saying what to do."""
        def var(name, default):
            return self._templar.template(task_vars[name]) if name in task_vars else default
        try:
            if mode == 'vendored':
                needed = boolean(var('stack_bundle_vendor_charts', var('gpu_tray_bundle_vendor_charts', False)))
            else:
                needed = boolean(mode)
        except TypeError as exc:
            raise AnsibleActionFail('check_inputs: helm must be true, false or vendored (%s)' % to_native(exc))
        if not needed:
            return None, None
        binary = var('stack_helm_binary', HELM_BINARY)
        answer = self._execute_module(module_name='kubernetes.core.helm_plugin_info',
                                      module_args={'binary_path': binary}, task_vars=task_vars)
        host = task_vars.get('inventory_hostname', 'the API host')
        if answer.get('failed') or answer.get('unreachable'):
            reason = {2: 'not found', 13: 'not executable'}.get(answer.get('rc')) if not answer.get('stdout') else None
            if reason or answer.get('unreachable') or answer.get('stderr'):
                reason = reason or first_line(answer.get('stderr') or answer.get('msg') or 'no answer')[:160]
                return ('helm (stack_helm_binary: %s) cannot be run on %s (%s): install Helm 3 and the helm-diff '
                        'plugin there (README.md, Requirements) or set stack_helm_binary to its path'
                        % (binary, host, reason)), None
            # the module itself failed before it ran helm: kubernetes.core reads the run's kubeconfig first
            return ('the helm check on %s (kubernetes.core.helm_plugin_info, stack_helm_binary: %s) failed: %s'
                    % (host, binary, failure_text(answer)[:300])), None
        plugins = [item.get('name') for item in answer.get('plugin_list') or []]
        if 'diff' not in plugins:
            return None, ('helm on %s has no helm-diff plugin: kubernetes.core.helm cannot preview a release in check '
                          'mode or tell an unchanged one (helm plugin install https://github.com/databus23/helm-diff)'
                          % host)
        return None, None

    def _contexts(self, checked, me, task_vars, hostvars):
        """The run context of every checked host and of the API host (plugin_utils/run_context.py), and a clause per
        run value the trays disagree on."""
        groups = task_vars.get('groups') or {}

        def variables_of(host):
            return hostvars.raw_get(host) if hostvars is not None and host in hostvars else None

        values_of = run_context.values_reader(self._templar, me, task_vars, variables_of)

        contexts = {}
        clauses = []
        for host in list(checked) + [run_context.api_host(groups)]:
            if host in contexts or values_of(host) is None:
                continue
            try:
                contexts[host] = run_context.for_host(host, values_of, groups, platform.load)
            except (platform.ProfileError, report_dir.ReportDirError, AnsibleError) as exc:
                clauses.append('the run context of %s cannot be resolved: %s' % (host, first_line(to_native(exc))))
        clauses.extend(run_context.disagreements(contexts, run_context.trays(groups)))
        return contexts, clauses

    def _options(self, name, task_vars):
        """``(clauses, checked)`` of the playbook's own options (``<name>_*`` of this host: play vars, extra vars)."""
        try:
            spec = inputs.playbook_spec(name)
        except inputs.InputsError as exc:
            raise AnsibleActionFail('check_inputs: %s' % to_native(exc))
        prefix = name + '_'
        templar = self._templar.copy_with_new_env(available_variables=task_vars)
        values, clauses = {}, []
        for var in sorted(task_vars):
            if not var.startswith(prefix):
                continue
            try:
                values[var] = templar.template(task_vars[var])
            except AnsibleError as exc:
                clauses.append('%s cannot be resolved: %s' % (var, first_line(exc.message)))
        found, checked = inputs.option_findings(values, spec, prefix, name)
        return clauses + found, checked

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        task_vars = task_vars or {}
        me = task_vars.get('inventory_hostname')
        hosts = list(OrderedDict.fromkeys(args['hosts'] or task_vars.get('ansible_play_hosts_all') or [me]))
        try:
            table = inputs.tables()
        except inputs.InputsError as exc:
            raise AnsibleActionFail('check_inputs: %s' % to_native(exc))
        hostvars = task_vars.get('hostvars')
        findings = OrderedDict()
        allowed_everywhere = None
        checked = []
        for host in hosts:
            if host == me:
                variables = task_vars
            elif hostvars is not None and host in hostvars:
                variables = hostvars.raw_get(host)
            else:
                continue          # not in the inventory (a group that names a host that is not there)
            checked.append(host)
            names, values, allowed, extra, problems = self._values(variables, table['spec'])
            allowed_everywhere = set(allowed) if allowed_everywhere is None else allowed_everywhere & set(allowed)
            for clause in problems + inputs.host_findings(names, values, table['known'], table['removed'],
                                                          table['spec'], allowed, extra):
                findings.setdefault(clause, []).append(host)
        # what the run passes for every host (extra vars, an AWX survey's answers): the names, and the values of the
        # survey answers (other extra vars may reference variables a role defines later)
        extra_vars = {}
        for name, value in load_extra_vars(self._loader).items():
            if not name.startswith(inputs.SURVEY_PREFIX):
                extra_vars[name] = None
                continue
            try:
                extra_vars[name] = self._templar.template(value)
            except AnsibleError as exc:
                findings.setdefault('%s cannot be resolved: %s' % (name, first_line(exc.message)), []).extend(checked)
        clauses, answers = inputs.run_findings(extra_vars, allowed_everywhere or ())
        for clause in clauses:
            findings.setdefault(clause, []).extend(checked)
        options = None
        if args['options']:
            clauses, options = self._options(args['options'], task_vars)
            for clause in clauses:
                findings.setdefault(clause, []).extend(checked or [me])
        contexts = {}
        if not findings:
            contexts, clauses = self._contexts(checked, me, task_vars, hostvars)
            for clause in clauses:
                findings.setdefault(clause, []).extend(checked)
        if not findings:
            helm_problem, warning = self._helm(args['helm'], task_vars)
            if helm_problem:
                findings[helm_problem] = list(checked)
            elif warning:
                result.setdefault('warnings', []).append(warning)
        result.update(changed=False, hosts=len(checked), survey=answers,
                      problems=[{'problem': clause, 'hosts': where} for clause, where in findings.items()])
        # what the playbook sets next (ansible.builtin.set_fact over this list, run_once: every host of the play):
        # the survey's answers, and that the inputs were checked (later plays of the run skip the check)
        kept = [{'key': name, 'value': answers[name]} for name in sorted(answers)]
        kept.append({'key': run_context.FACT, 'value': {'hosts': dict((host, run_context.kept(context))
                                                                      for host, context in contexts.items())}})
        if options is not None and not findings:
            result['options'] = options
            kept.append({'key': PLAYBOOK_OPTIONS[args['options']], 'value': options})
        result['facts'] = [] if findings else kept + [{'key': CHECKED, 'value': True}]
        if findings:
            result.update(failed=True, msg=inputs.refusal(findings, len(checked)))
        else:
            result['msg'] = 'The inputs of %d host%s are fine%s.' % (
                len(checked), '' if len(checked) == 1 else 's',
                '; survey answers: %s' % ', '.join(sorted(answers)) if answers else '')
        return result
