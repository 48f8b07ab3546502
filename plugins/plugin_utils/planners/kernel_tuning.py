# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planner of role kernel_tuning: nvidia-tuned's kernel arguments, sysctls and LimitSTACK, from one tray read.

``needs(inputs)`` is what the role reads; ``plan(state, inputs)`` decides, before anything is written, what the
role refuses (a huge page size the running kernel has no pool for, arguments a GRUB drop-in cannot carry, a GRUB
file that would undo the drop-in, a part of the tray that could not be read), which writes the tray needs (the GRUB
drop-in, the sysctl.d file, the running sysctls that differ, the LimitSTACK drop-ins of the active runtime units,
update-grub) and whether it needs the reboot; ``restore(state, inputs)`` decides the way back. Inputs are the
role's variables without the prefix (roles/kernel_tuning/meta/argument_specs.yml).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import posixpath
import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_hugepages
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import role_inputs, tray_read
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.planners import common

NAME = 'kernel_tuning'
MARKER = '# {mark} gpu_tray.cluster.kernel_tuning - managed by Ansible; see docs/host-preparation.md to undo'
# Huge page sizes of arm64/x86_64 kernels (4k and 64k pages) and their pool directory sizes in kB
SIZE_KB = {'64K': 64, '2M': 2048, '32M': 32768, '512M': 524288, '1G': 1048576, '16G': 16777216}
KB_SIZE = dict((kb, size) for size, kb in SIZE_KB.items())
_PLAIN_ARG = re.compile(r'^[A-Za-z0-9_.,:=/+@%-]+$')
PROBLEM_TEXT = {
    'tuned_params': ("injects $tuned_params, tuned's own bootloader hook (NVIDIA/nodewright-packages#136), so the "
                     "kernel would get tuned's arguments besides the role's"),
    'overwrites': ('overwrites GRUB_CMDLINE_LINUX_DEFAULT after the role\'s drop-in, so the kernel would not get the '
                   'arguments'),
    'duplicates': 'already sets arguments the role\'s drop-in adds, so they would reach the kernel twice',
}
PROBLEM_FIX = {
    'tuned_params': 'remove $tuned_params from it',
    'overwrites': ('make it append to GRUB_CMDLINE_LINUX_DEFAULT ("${GRUB_CMDLINE_LINUX_DEFAULT} ...") or remove '
                   'it'),
    'duplicates': 'remove them from it or from the role\'s arguments',
}
# the order a file's problems are listed in (alphabetical, as the role always listed them)
KINDS = ('duplicates', 'overwrites', 'tuned_params')


def wanted_args(inputs):
    """The arguments the drop-in appends: the profile's, the huge page pairs, default_hugepagesz, the extra ones."""
    args = list(inputs.get('cmdline') or [])
    for pool in inputs.get('hugepages') or []:
        args += ['hugepagesz=%s' % pool['size'], 'hugepages=%s' % pool['count']]
    if inputs.get('default_hugepagesz'):
        args.append('default_hugepagesz=%s' % inputs['default_hugepagesz'])
    return args + list(inputs.get('extra_args') or [])


def limit_stack_path(inputs, unit):
    return '/etc/systemd/system/%s.d/%s' % (unit, inputs['limit_stack_dropin'])


def _files(inputs):
    return ([inputs['grub_dropin'], inputs['sysctl_file']]
            + [limit_stack_path(inputs, unit) for unit in inputs['runtime_units']])


def _read_files(inputs):
    """The role's files and their directories (which the role may create, and then removes on the way back)."""
    return _files(inputs) + tray_read.directories(_files(inputs))


def needs(inputs):

    """The tray read the role decides from; empty (the always-read parts) when the intent is empty."""
    if not inputs.get('intent'):
        return {}
    return {'sysfs_root': inputs['sysfs_root'], 'proc_root': inputs['proc_root'], 'files': _read_files(inputs),
            'units': list(inputs['runtime_units']) if int(inputs['limit_stack']) > 0 else [],
            'grub': {'default_file': inputs['grub_default_file'], 'dropin': inputs['grub_dropin'],
                     'cfg': inputs['grub_cfg']},
            'sysctls': sorted(inputs['sysctls']) if common.as_bool(inputs.get('sysctl_apply')) else []}


def grub_chain_problems(steps, dropin, args):
    """What a GRUB file of the chain does to the drop-in's arguments: ``[{file, kind, problem, fix, arguments}]``.

    ``steps`` is the simulated chain (tray_state grub.steps, in update-grub's order, the drop-in's arguments read as
    tray_read.ARGS_TOKEN). A file injecting ``$tuned_params``; an argument missing at the end (the first later file
    that lacks it overwrote it); an argument there twice or more (another file that sets it).
    """
    expanded, seen_ours = [], False
    for step in steps:
        tokens = []
        for token in step['tokens']:
            tokens.extend(args if token == tray_read.ARGS_TOKEN else [token])
        expanded.append({'file': step['file'], 'tokens': tokens, 'after': seen_ours})
        if step['file'] == dropin:
            seen_ours = True
    found = []
    tuned = next((step['file'] for step in steps if '$tuned_params' in ' '.join(step['tokens'])), None)
    if tuned:
        found.append((tuned, 'tuned_params', None))
    final = expanded[-1]['tokens'] if expanded else []
    for arg in args:
        count = final.count(arg)
        if count == 0:
            later = [step['file'] for step in expanded if step['after'] and arg not in step['tokens']]
            found.append((later[0] if later else dropin, 'overwrites', arg))
        elif count > 1:
            others = [step['file'] for step in expanded if step['file'] != dropin and arg in step['tokens']]
            found.append((others[0] if others else dropin, 'duplicates', arg))
    merged = []
    for path in sorted(set(item[0] for item in found)):
        for kind in KINDS:
            items = [item for item in found if item[0] == path and item[1] == kind]
            if items:
                merged.append({'file': path, 'kind': kind, 'problem': PROBLEM_TEXT[kind], 'fix': PROBLEM_FIX[kind],
                               'arguments': [item[2] for item in items if item[2] is not None]})
    return merged


def grub_cfg_problems(linux_lines, args):
    """Every normal (non-recovery) ``linux`` line of grub.cfg must carry each argument once and no $tuned_params:
    the arguments found another number of times (``"arg (n times)"``), ``$tuned_params``, or ``no boot entry``."""
    problems, entries = [], 0
    for line in linux_lines:
        tokens = line.split()
        if 'single' in tokens or 'recovery' in tokens:
            continue
        entries += 1
        for arg in args:
            count = tokens.count(arg)
            if count != 1:
                problems.append('%s (%d times)' % (arg, count))
        if '$tuned_params' in line:
            problems.append('$tuned_params')
    if not entries:
        return ['no boot entry']
    return common.unique(problems)


def _active_units(state, inputs):
    units = ((state.get('units') or {}).get('units') or {})
    return [units[name] for name in inputs['runtime_units']
            if name in units and units[name].get('ActiveState') == 'active']


def _stack_raised(units, limit):
    """Running runtime units whose main process has the stack limit ``limit`` (soft and hard)."""
    return [unit for unit in units
            if unit.get('MainPID', '0') != '0' and unit.get('stack_limit')
            and sorted(set(unit['stack_limit'])) == [str(limit)]]


def _stack_pending(units, limit):
    return any(unit.get('MainPID', '0') != '0' and unit.get('stack_limit')
               and sorted(set(unit['stack_limit'])) != [str(limit)] for unit in units)


def _input_problem(inputs):
    """The refusal of an input the drop-in cannot carry, naming the variable the user set it with; None when none."""
    pools = common.unique(pool['size'] for pool in inputs.get('hugepages') or [])
    bad = [size for size in pools if size not in SIZE_KB]
    if bad:
        return ('%s asks for huge page size %s, which is not one of %s.'
                % (role_inputs.user_variable(NAME, 'hugepages'), ', '.join(bad), ', '.join(SIZE_KB)))
    default = inputs.get('default_hugepagesz')
    if default and default not in SIZE_KB:
        return ('%s is %s, which is not one of %s.'
                % (role_inputs.user_variable(NAME, 'default_hugepagesz'), default, ', '.join(SIZE_KB)))
    for key in ('cmdline', 'extra_args'):
        bad = [arg for arg in inputs.get(key) or [] if not _PLAIN_ARG.match(arg)]
        if bad:
            return ('%s has the kernel arguments %s, whose quotes, spaces or shell characters the GRUB drop-in cannot '
                    'carry.' % (role_inputs.user_variable(NAME, key), ' '.join(bad)))
    return None


def _sizes_judged(state, inputs):
    """The huge page sizes the role requests against the running kernel's pools: the preflight's judge (a size
    without a pool refuses the variable the user set the pools with)."""
    hugepages = state['hugepages']
    default = inputs.get('default_hugepagesz')
    return judge_hugepages(dict((int(kb), pool) for kb, pool in (hugepages.get('pools') or {}).items()),
                           inputs.get('hugepages') or [], check='sizes', base=hugepages.get('base') or '',
                           default_size_kb=SIZE_KB[default] if default else None,
                           variable=role_inputs.user_variable(NAME, 'hugepages'))


def plan(state, inputs):
    """The decision of the role's main entry point: refusal, writes, reboot, verification, exported facts."""
    out = common.new_plan(NAME, MARKER)
    if not inputs.get('intent'):
        out['exports'] = {'cmdline_args': [], 'hugepages': []}
        return out
    problem = _input_problem(inputs)
    if problem:
        return common.refuse(out, problem)
    args = wanted_args(inputs)
    sizes = common.unique([pool['size'] for pool in inputs.get('hugepages') or []]
                          + ([inputs['default_hugepagesz']] if inputs.get('default_hugepagesz') else []))
    pools_kb = sorted(int(kb) for kb in (state['hugepages'].get('pools') or {}) if int(kb) in KB_SIZE)
    pools = [KB_SIZE[kb] for kb in pools_kb]
    refused = [size for size in sizes if size not in pools]
    grub = state.get('grub') or {}
    problems = grub_chain_problems(grub.get('steps') or [], inputs['grub_dropin'], args)
    active = _active_units(state, inputs) if int(inputs['limit_stack']) > 0 else []
    running = (state['cmdline'].get('text') or '').split()
    missing = [arg for arg in args if arg not in running]
    pending = _stack_pending(active, inputs['limit_stack'])
    out['exports'] = {
        'cmdline_args': args, 'hugepages': list(inputs.get('hugepages') or []), 'hugepage_pools': pools,
        'hugepage_sizes_refused': refused, 'grub_problems': problems, 'runtime_units_active': active,
        'missing_args': missing, 'stack_pending': pending}
    errors = tray_read.read_errors(state, _files(inputs))
    if errors:
        return common.refuse(out, "Could not read the tray's state: %s; nothing was written." % '; '.join(errors))
    if refused:
        judged = _sizes_judged(state, inputs)
        return common.refuse(out, judged['message'], details=judged['details'], fix=judged['fix'])
    if problems:
        first = problems[0]
        return common.refuse(out, '%s %s%s; %s.' % (
            first['file'], first['problem'],
            (' (%s)' % ' '.join(first['arguments'])) if first['kind'] == 'duplicates' else '', first['fix']),
            details=['%s %s%s' % (item['file'], item['problem'],
                                  (' (%s)' % ' '.join(item['arguments'])) if item['arguments'] else '')
                     for item in problems])
    files = state.get('files') or {}
    dropin = 'GRUB_CMDLINE_LINUX_DEFAULT="${GRUB_CMDLINE_LINUX_DEFAULT} %s"' % ' '.join(args)
    sysctls = inputs.get('sysctls') or {}
    sysctl_block = '\n'.join('%s=%s' % (key, value) for key, value in sysctls.items())
    limit_block = '[Service]\nLimitSTACK=%s' % inputs['limit_stack']
    running_sysctls = state.get('sysctl') or {}
    live = [{'key': key, 'value': value} for key, value in sysctls.items()
            if common.as_bool(inputs.get('sysctl_apply')) and running_sysctls.get(key) != ' '.join(str(value).split())]
    cfg_problems = grub_cfg_problems(grub.get('cfg_linux') or [], args)
    # each block with the line that records a directory the role creates for it (tray_read.with_created_dir)
    out['blocks'] = {
        'grub_dropin': tray_read.with_created_dir(state, inputs['grub_dropin'], dropin, MARKER),
        'sysctl_file': tray_read.with_created_dir(state, inputs['sysctl_file'], sysctl_block, MARKER),
        'limit_stack': dict((unit['Id'], tray_read.with_created_dir(state, limit_stack_path(inputs, unit['Id']),
                                                                    limit_block, MARKER)) for unit in active)}
    out['writes'] = {
        'grub_dropin': not tray_read.block_current(files.get(inputs['grub_dropin']), out['blocks']['grub_dropin'],
                                                   MARKER),
        'sysctl_file': bool(sysctls) and not tray_read.block_current(files.get(inputs['sysctl_file']),
                                                                     out['blocks']['sysctl_file'], MARKER),
        'sysctl_live': live,
        'limit_stack': [unit['Id'] for unit in active
                        if not tray_read.block_current(files.get(limit_stack_path(inputs, unit['Id'])),
                                                       out['blocks']['limit_stack'][unit['Id']], MARKER)],
    }
    out['writes']['update_grub'] = out['writes']['grub_dropin'] or bool(cfg_problems)
    out['grub_cfg_problems'] = cfg_problems
    reasons = []
    if missing:
        reasons.append('kernel arguments %s are not in /proc/cmdline yet' % ' '.join(missing))
    if pending:
        reasons.append('the container runtime runs with another stack limit than %s' % inputs['limit_stack'])
    common.set_reboot(out, reasons)
    out['verify'] = {'cmdline_required': args, 'hugepages': list(inputs.get('hugepages') or [])}
    return out


def restore_needs(inputs):
    """The tray read of the way back: the role's files, the runtime units, the running command line."""
    return {'sysfs_root': inputs['sysfs_root'], 'proc_root': inputs['proc_root'], 'files': _read_files(inputs),
            'units': list(inputs['runtime_units'])}


def restore(state, inputs):
    """The decision of the entry point restore: which files go whole, which only lose the role's block, whether
    update-grub runs, which directories the role created go with their files, and the arguments the rolling reboot
    verifies are gone."""
    out = common.new_plan(NAME, MARKER)
    files = state.get('files') or {}
    actions = dict((path, tray_read.restore_action(files.get(path), MARKER, files.get(posixpath.dirname(path)), path))
                   for path in _files(inputs))
    unreadable = [path for path, action in actions.items() if action['action'] == 'unreadable']
    lines = [line for line in actions[inputs['grub_dropin']]['block'] if 'GRUB_CMDLINE_LINUX_DEFAULT=' in line]
    match = re.match(r'^[^"]*"\$\{GRUB_CMDLINE_LINUX_DEFAULT\}\s*(.*?)"\s*$', lines[0]) if lines else None
    forbidden = match.group(1).split() if match else []
    out['exports'] = {'cmdline_args': [], 'hugepages': [], 'cmdline_forbidden': forbidden}
    if unreadable:
        return common.refuse(out, 'Could not read %s; nothing was removed.' % ', '.join(unreadable))
    out['writes'] = {
        'remove_file': [path for path, action in actions.items() if action['action'] == 'remove_file'],
        'remove_block': [path for path, action in actions.items() if action['action'] == 'remove_block'],
        'remove_dir': [action['directory'] for action in actions.values() if action['directory']],
        'update_grub': actions[inputs['grub_dropin']]['action'] != 'none',
    }
    running = (state['cmdline'].get('text') or '').split()
    reasons = []
    still = [arg for arg in forbidden if arg in running]
    if still:
        reasons.append('the running kernel still has %s' % ' '.join(still))
    units = ((state.get('units') or {}).get('units') or {}).values()
    if _stack_raised([unit for unit in units if unit.get('ActiveState') == 'active'], inputs['limit_stack']):
        reasons.append('the container runtime still runs with the stack limit %s' % inputs['limit_stack'])
    common.set_reboot(out, reasons)
    out['verify'] = {'cmdline_forbidden': forbidden}
    return out
