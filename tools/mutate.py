#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutation check: plant one small bug at a time in the collection's code and YAML and see whether the tests notice.

    tools/mutate.py [--fail-under PCT] [--jobs N] [--list] [--only FILE:LINE] [--strings] [--rev REV]
                    [--trace-file JSON] PATH...   (Python or YAML files, or directories)

It measures the host code (module_utils parsers and judges, modules), the API host's rules (the cluster
module_utils), the controller-side code that decides rollouts (filters, plugin_utils with the planners, the actions)
and the YAML that decides behaviour (role defaults and vars, argument specs, the inventory spec, platform profiles,
recipe data); --fail-under applies to every file and every directory.

For every mutable spot in the given files the script plants ONE bug (a mutant), runs the tests that see it and
counts the mutant as killed when a test fails (or the run hangs past its time limit). Survivors are printed with
file, line and the planted change; each is a missing test or an equivalent mutant (a change no input can observe).
The Python mutants (operators as in mutmut/cosmic-ray, kept to the ones that model real slips):

    compare      == <-> !=, < <-> <=, > <-> >=, in <-> not in, is <-> is not
    boolean      and <-> or; drop a `not`; negate an if/while/ternary condition that is a bare value
    constant     integer n -> n+1 (1 -> 0), True <-> False
    arithmetic   + <-> -
    return       `return <value>` -> `return None`
    statement    a call statement (`problems.append(...)`) -> `pass`; break <-> continue
    string       (--strings) a string constant that decides behaviour - an environment name, a label key or API
                 group (domain/name), a file or path name, a module-level constant, a compared value, a label or
                 selector key or value - gets its first letter in the other case (`worker` -> `Worker`), or is
                 emptied when it has no letter

Messages and other prose (strings with white space), format templates, docstrings, module-level try/if blocks
(import fallbacks) and lines marked `# pragma: no mutate` are never mutated. The YAML mutants are tools/mutate_yaml.py's
(its docstring says which values of which file). A mutant of an argument spec or a role default is planted as a
person makes it: the files generated from them (the inventory spec, the AWX surveys) are regenerated with their tools.

Which tests run per mutant: for Python, the unit tests that execute the mutated line (a line trace, once). For YAML,
the tests that read the file (or a file generated from it): an open trace, once, per test file in a fresh interpreter -
an audit hook in the test process and, through sitecustomize, in every Python process it starts (ansible-playbook,
its workers, the modules) - over the unit tests and the offline layers of YAML_TESTS (quality, upstream, offline
stack and NCCL); a read in a module- or session-scoped fixture selects every test of the file that uses it. A YAML
mutant runs those tests, the cheapest file first, in a fresh interpreter. --trace-file keeps the trace of each test
file while the file is unchanged (iterating on tests; the figures of record come from a fresh trace).

Why not mutmut: mutmut 3 rewrites the project into ./mutants and imports it by its top-level package; the
collection is imported as ansible_collections.gpu_tray.cluster through a symlink tree, which mutmut cannot
follow. This script copies the tracked files (the work tree's content) into a temporary collection tree per
worker, so the checkout is never modified - other work can go on in it while this runs.

Not part of `make test`/CI: it takes minutes (`make mutate`). The figures are kept in docs/testing.md.
"""

from __future__ import print_function

import argparse
import ast
import fnmatch
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import ansible_env
import mutate_yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# where the tracked files are read from: the work tree, or with --rev a revision extracted from git (a merge of
# branches can be measured before it exists: git merge-tree --write-tree A B gives the tree to name)
SOURCE = REPO
# The unit tests a mutant is run against: every tests/unit/plugins/**/test_*.py but these (the trace then picks, per
# mutant, the tests that execute its line). test_adhoc runs the modules through the ansible CLI and costs a
# minute per run (the in-process module tests cover the same code); test_python38 byte-compiles with another
# interpreter.
EXCLUDED_TESTS = ('test_adhoc.py', 'test_python38.py')
# Test files that exercise a source file most directly run first, so most mutants die within seconds
# (pytest -x); a survivor still runs every test file. Without an entry, test_<name>.py / test_filter_<name>.py.
FIRST = {'cmdline': 'test_cmdline_parser.py', 'mstconfig': 'test_mstconfig_parser.py', 'rdma': 'test_rdma_parsers.py',
         'hugepages': 'test_host_parsers.py', 'containerd': 'test_host_parsers.py', 'tray': 'test_host_parsers.py',
         'kube': 'test_kube_auth.py', 'write_evidence': 'test_evidence.py', 'preflight': 'test_tray_state.py',
         'tray_read': 'test_tray_read.py', 'platform': 'test_platform.py', 'kernel_tuning': 'test_planners.py',
         'imex': 'test_planners.py', 'rdma_modules': 'test_planners.py', 'rdma_netns': 'test_planners.py',
         'verify': 'test_planners.py', 'tray_plan': 'test_tray_plan_action.py',
         'reboot_plan': 'test_reboot_plan.py', 'reboot_run': 'test_reboot_run.py', 'reboot_cluster': 'test_reboot_run.py',
         'reboot_tray': 'test_reboot_tray_action.py',
         'reboot_step': 'test_reboot_step_action.py'}
# Fewer hypothesis examples per mutant run (tests/unit/conftest.py reads it); the full suite uses its own profile.
MUTANT_ENV = {'PYTHONDONTWRITEBYTECODE': '1', 'GPU_TRAY_HYPOTHESIS_EXAMPLES': '25'}

YAML_SUFFIXES = ('.yml', '.yaml')
# The offline layers a YAML mutant is also run against (besides the unit tests): the ones that see what the YAML
# decides - the role input checks, inventories, playbook selection, AWX surveys and installed paths (tests/quality, the
# fast parts), the bundles against the real charts (tests/upstream) and the offline stack and NCCL tests. The open trace
# then picks, per YAML file, the test files that read it (directly or through ansible-playbook).
YAML_TESTS = ('tests/quality/test_role_inputs.py', 'tests/quality/test_input_*.py',
              'tests/quality/test_known_variables.py',
              'tests/quality/test_inventories.py', 'tests/quality/test_playbook_selection.py',
              'tests/quality/test_awx.py', 'tests/quality/test_installed_paths.py', 'tests/quality/test_collection.py',
              'tests/quality/test_failure_modes.py', 'tests/upstream/test_*.py',
              'tests/cluster/test_stack_offline.py', 'tests/cluster/test_bundle_formats.py',
              'tests/cluster/test_nccl_offline.py')
# what a kept trace entry records (--trace-file): 2 = the Python files a test's processes import, too (which
# --across-processes needs; a YAML run takes older entries)
TRACE_VERSION = 2
# a file of an installed copy of the collection (tests that build and install it read it there)
INSTALLED = '/ansible_collections/gpu_tray/cluster/'
# the slow tool runs of those files (lint, sanity, a build): they judge style, not what the YAML decides
DESELECTED = ('tests/quality/test_collection.py::test_ansible_test_sanity',
              'tests/quality/test_collection.py::test_ansible_lint_production_profile',
              'tests/quality/test_collection.py::test_yamllint',
              'tests/quality/test_collection.py::test_shellcheck_all_shell_scripts',
              'tests/quality/test_collection.py::test_build_excludes_dev_content',
              # asks git what is committed: the private copy is no checkout
              'tests/upstream/test_upstream_crds.py::test_the_crds_the_tests_take_are_in_the_upstream_data_and_none_is_committed')
# Files generated from a mutated file: a person who edits an argument spec, a role default, the recipe registry or a
# platform profile regenerates them (and the tests that compare them with their sources would otherwise kill every
# such mutant without seeing its consequence). (mutated file pattern, generator scripts, the files they write)
_INVENTORY = (['tools/inventory_spec.py', 'tools/awx_surveys.py'],
              ['roles/preflight/vars/inventory_spec.yml', 'playbooks/files/awx_surveys/*.json'])
# tools/recipes.py: the API-host modules' copy of the registry (module_utils/recipes.py) and the recipe choices
_RECIPES = (['tools/recipes.py'],
            ['plugins/module_utils/recipes.py', 'roles/validate/meta/argument_specs.yml',
             'plugins/modules/cluster_preflight.py', 'plugins/modules/component_version.py',
             'plugins/modules/conformance.py'])
GENERATORS = (('roles/*/meta/argument_specs.yml',) + _INVENTORY,
              ('roles/*/defaults/main.yml',) + _INVENTORY,
              ('plugins/plugin_utils/stack_data/recipes.yml',) + _RECIPES,
              ('plugins/plugin_utils/platforms/*.yml',) + _RECIPES)

COMPARE_SWAP = {ast.Eq: '!=', ast.NotEq: '==', ast.Lt: '<=', ast.LtE: '<', ast.Gt: '>=', ast.GtE: '>',
                ast.In: 'not in', ast.NotIn: 'in', ast.Is: 'is not', ast.IsNot: 'is'}
COMPARE_TEXT = {ast.Eq: '==', ast.NotEq: '!=', ast.Lt: '<', ast.LtE: '<=', ast.Gt: '>', ast.GtE: '>=',
                ast.In: 'in', ast.NotIn: 'not in', ast.Is: 'is', ast.IsNot: 'is not'}


class Mutant(object):
    def __init__(self, path, start, end, replacement, kind, description, line, end_line):
        self.path = path                  # relative to REPO
        self.start = start                # offsets into the file text
        self.end = end
        self.replacement = replacement
        self.kind = kind
        self.description = description
        self.line = line
        self.end_line = end_line
        self.status = None
        self.tests = None

    def key(self):
        return '%s:%d' % (self.path, self.line)

    def as_dict(self):
        return {'file': self.path, 'line': self.line, 'kind': self.kind, 'change': self.description,
                'status': self.status, 'tests': len(self.tests or ())}


def _offsets(text):
    """Start offset of every line (1-based line numbers index it)."""
    starts = [0, 0]
    for line in text.splitlines(True):
        starts.append(starts[-1] + len(line))
    return starts


def _docstring_nodes(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first))
    return out


class _Finder(ast.NodeVisitor):
    def __init__(self, path, text):
        self.path = path
        self.text = text
        self.starts = _offsets(text)
        self.lines = text.splitlines()
        self.found = []
        self.skip = set()
        self.strings = None             # with --strings: ids of the string constants that decide behaviour

    def pos(self, lineno, col):
        # ast columns are UTF-8 byte offsets; our sources are ASCII where code is concerned
        line = self.lines[lineno - 1]
        prefix = line.encode('utf-8')[:col].decode('utf-8', 'ignore')
        return self.starts[lineno] + len(prefix)

    def span(self, node):
        return self.pos(node.lineno, node.col_offset), self.pos(node.end_lineno, node.end_col_offset)

    def add(self, start, end, replacement, kind, lineno):
        line = self.lines[lineno - 1]
        if 'pragma: no mutate' in line:
            return
        original = self.text[start:end]
        description = '%s -> %s' % (' '.join(original.split()), ' '.join(replacement.split()) or '(removed)')
        first = min(lineno, self.text.count('\n', 0, start) + 1)
        last = max(lineno, self.text.count('\n', 0, end) + 1)
        self.found.append(Mutant(self.path, start, end, replacement, kind, description, first, last))

    # -- module level: only definitions and plain assignments are mutated
    def visit_Module(self, node):
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign)):
                if isinstance(stmt, ast.Assign) and any(getattr(t, 'id', '') == '__metaclass__'
                                                        for t in stmt.targets):
                    continue
                self.visit(stmt)

    def visit_Compare(self, node):
        if len(node.ops) == 1 and type(node.ops[0]) in COMPARE_SWAP:
            left_end = self.pos(node.left.end_lineno, node.left.end_col_offset)
            right_start = self.pos(node.comparators[0].lineno, node.comparators[0].col_offset)
            op = type(node.ops[0])
            gap = self.text[left_end:right_start]         # ' == ', or ') in (' around parenthesised operands
            if COMPARE_TEXT[op] in gap:
                self.add(left_end, right_start, gap.replace(COMPARE_TEXT[op], COMPARE_SWAP[op], 1), 'compare',
                         node.lineno)
                if op in (ast.Lt, ast.Gt):    # off-by-one both ways: < -> <= above, and the flipped test
                    self.add(left_end, right_start, gap.replace(COMPARE_TEXT[op], '>' if op is ast.Lt else '<', 1),
                             'compare', node.lineno)
        self.generic_visit(node)

    def visit_BoolOp(self, node):
        other = ' or ' if isinstance(node.op, ast.And) else ' and '
        for left, right in zip(node.values, node.values[1:]):
            start = self.pos(left.end_lineno, left.end_col_offset)
            end = self.pos(right.lineno, right.col_offset)
            gap = self.text[start:end]
            word = 'and' if isinstance(node.op, ast.And) else 'or'
            self.add(start, end, gap.replace(word, other.strip(), 1), 'boolean', right.lineno)
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            start, end = self.span(node)
            operand_start, operand_end = self.span(node.operand)
            self.add(start, end, self.text[operand_start:operand_end], 'boolean', node.lineno)
        self.generic_visit(node)

    def _negate_test(self, test):
        if isinstance(test, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
            return
        start, end = self.span(test)
        self.add(start, end, 'not (%s)' % self.text[start:end], 'boolean', test.lineno)

    def visit_If(self, node):
        self._negate_test(node.test)
        self.generic_visit(node)

    def visit_While(self, node):
        self._negate_test(node.test)
        self.generic_visit(node)

    def visit_IfExp(self, node):
        self._negate_test(node.test)
        self.generic_visit(node)

    def visit_Constant(self, node):
        if id(node) in self.skip:
            return
        value = node.value
        start, end = self.span(node)
        if isinstance(value, str):
            if self.strings is not None and id(node) in self.strings:
                new = mutate_yaml.swap_first(value)
                self.add(start, end, repr(new), 'string', node.lineno)
        elif isinstance(value, bool):
            self.add(start, end, str(not value), 'constant', node.lineno)
        elif isinstance(value, int):
            self.add(start, end, '0' if value == 1 else str(value + 1), 'constant', node.lineno)

    def visit_BinOp(self, node):
        if isinstance(node.op, (ast.Add, ast.Sub)):
            start = self.pos(node.left.end_lineno, node.left.end_col_offset)
            end = self.pos(node.right.lineno, node.right.col_offset)
            gap = self.text[start:end]
            old, new = ('+', '-') if isinstance(node.op, ast.Add) else ('-', '+')
            strings = any(isinstance(side, ast.JoinedStr)
                          or (isinstance(side, ast.Constant) and isinstance(side.value, str))
                          for side in (node.left, node.right))
            if gap.count(old) == 1 and not strings:   # string/list concatenation: '-' is only a TypeError
                self.add(start, end, gap.replace(old, new, 1), 'arithmetic', node.lineno)
        self.generic_visit(node)

    def visit_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            start, end = self.span(node)
            self.add(start, end, 'return None', 'return', node.lineno)
        self.generic_visit(node)

    def visit_Expr(self, node):
        if id(node) in self.skip:
            return
        if isinstance(node.value, ast.Call):
            start, end = self.span(node)
            self.add(start, end, 'pass', 'statement', node.lineno)
        self.generic_visit(node)

    def visit_Break(self, node):
        start, end = self.span(node)
        self.add(start, end, 'continue', 'statement', node.lineno)

    def visit_Continue(self, node):
        start, end = self.span(node)
        self.add(start, end, 'break', 'statement', node.lineno)


# String constants that decide behaviour (--strings): the names of environment variables, label keys and API
# groups (``domain/name``), file and path names, and - whatever they look like - module-level constants, the operands
# of a comparison (``state == 'masked'``, ``kind in ('Pod', ...)``) and the keys and values of label maps and
# selectors. Never: docstrings, messages and other prose (white space), format templates, f-string parts.
ENV_NAME = re.compile(r'^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$')
DOMAIN_NAME = re.compile(r'^[a-z0-9.-]+\.[a-z]{2,}/')
FILE_NAME = re.compile(r'^(/|\./)|\.(ya?ml|json|conf|cfg|txt|sh|service|md|j2|tgz|gz|log|pem|key|d|toml)$')
LABEL_MAPS = ('labels', 'matchLabels', 'nodeSelector', 'selector', 'annotations', 'matchExpressions', 'topologyKey')
DOC_ASSIGNMENTS = ('DOCUMENTATION', 'EXAMPLES', 'RETURN', '__all__', '__metaclass__')


def _label_like(node):
    """A dict key that makes its dict a label map or a selector."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in LABEL_MAPS or bool(DOMAIN_NAME.match(node.value))
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ''
    return name.upper().startswith('LABEL') or name.upper().endswith('_LABEL')


def meaningful_strings(tree, skip):
    """ids of the string constants of ``tree`` the --strings mutants change (see ENV_NAME ... above)."""
    skip = set(skip)
    context = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Raise)):
            skip.update(id(sub) for sub in ast.walk(node))
        elif isinstance(node, ast.Compare):
            for side in [node.left] + node.comparators:
                context.update(id(sub) for sub in ast.walk(side))
        elif isinstance(node, ast.Dict):
            if any(key is not None and _label_like(key) for key in node.keys):
                context.update(id(sub) for item in node.keys + node.values if item is not None
                               for sub in ast.walk(item) if isinstance(sub, ast.Constant))
    holders = list(tree.body)
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            holders.extend(stmt.body)
    for stmt in holders:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            ids = set(id(sub) for sub in ast.walk(stmt))
            if any(getattr(t, 'id', '') in DOC_ASSIGNMENTS for t in targets):
                skip.update(ids)
            else:
                context.update(ids)
    out = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in skip:
            continue
        value = node.value
        if not value or len(value) > 100 or re.search(r'\s', value) or '%' in value or '{' in value:
            continue
        if (ENV_NAME.match(value) or DOMAIN_NAME.match(value) or FILE_NAME.search(value)
                or id(node) in context):
            out.add(id(node))
    return out


def find_mutants(path, strings=False):
    """The mutants of one file: Python (operators; with ``strings`` the string constants too) or YAML."""
    if path.endswith(YAML_SUFFIXES):
        text, found = mutate_yaml.find(SOURCE, path)
        out = []
        for m in found:
            first = text.count('\n', 0, m.start) + 1
            last = max(first, text.count('\n', 0, max(m.start, m.end - 1)) + 1)
            out.append(Mutant(path, m.start, m.end, m.replacement, m.kind, m.description, first, last))
        return sorted(out, key=lambda m: (m.start, m.end, m.replacement))
    full = os.path.join(SOURCE, path)
    with open(full) as handle:
        text = handle.read()
    tree = ast.parse(text)
    finder = _Finder(path, text)
    finder.skip = _docstring_nodes(tree)
    if strings:
        finder.strings = meaningful_strings(tree, finder.skip)
    finder.visit(tree)
    return sorted(finder.found, key=lambda m: (m.start, m.end, m.replacement))


def source_files(paths, tracked):
    """The tracked .py and YAML files named by ``paths`` (files, or directories: their .py and YAML files, not
    recursive)."""
    out = []
    for path in paths:
        path = os.path.relpath(os.path.abspath(path), REPO)
        if os.path.isdir(os.path.join(SOURCE, path)):
            found = [name for name in tracked if os.path.dirname(name) == path]
        else:
            found = [path] if path in tracked else []
        if not found:
            raise SystemExit('%s: no file git tracks there' % path)
        out.extend(name for name in sorted(found)
                   if (name.endswith('.py') and not name.endswith('__init__.py')) or name.endswith(YAML_SUFFIXES))
    return out


def tracked_files(rev=None):
    argv = ['git', 'ls-tree', '-r', '-z', '--name-only', rev] if rev else ['git', 'ls-files', '-z']
    proc = subprocess.run(argv, cwd=REPO, stdout=subprocess.PIPE, check=True)
    return [name for name in proc.stdout.decode().split('\0') if name]


def extract(rev, base):
    """The files of a revision (commit or tree) in base/source; returns that directory."""
    dest = os.path.join(base, 'source')
    os.makedirs(dest)
    archive = subprocess.Popen(['git', 'archive', '--format=tar', rev], cwd=REPO, stdout=subprocess.PIPE)
    subprocess.run(['tar', '-x', '-C', dest], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        raise SystemExit('git archive %s failed' % rev)
    return dest


def make_copy(base, files):
    """A collection tree at base/ansible_collections/gpu_tray/cluster with the work tree's tracked files (all of them:
    the quality, upstream and stack tests read docs, inventories, tools and their own helpers)."""
    dest = os.path.join(base, 'ansible_collections', 'gpu_tray', 'cluster')
    for name in files:
        src = os.path.join(SOURCE, name)
        if not os.path.isfile(src) or os.path.islink(src):
            continue
        target = os.path.join(dest, name)
        if not os.path.isdir(os.path.dirname(target)):
            os.makedirs(os.path.dirname(target))
        shutil.copy2(src, target)
    # tests/unit/conftest.py imports the collection through <repo>/.collections when it points at the repo
    link_parent = os.path.join(dest, '.collections', 'ansible_collections', 'gpu_tray')
    os.makedirs(link_parent)
    os.symlink(dest, os.path.join(link_parent, 'cluster'))
    # the dependency collections (the tests that run the ansible CLI use ansible.posix's json callback)
    installed = os.path.join(REPO, '.collections', 'ansible_collections')
    for namespace in sorted(os.listdir(installed)) if os.path.isdir(installed) else ():
        if namespace != 'gpu_tray':
            os.symlink(os.path.join(installed, namespace), os.path.join(os.path.dirname(link_parent), namespace))
    # the open trace of the test subprocesses (ansible-playbook reads the roles' YAML in processes of its own)
    site = os.path.join(base, 'opentrace')
    os.makedirs(site)
    with open(os.path.join(site, 'sitecustomize.py'), 'w') as handle:
        handle.write(SITECUSTOMIZE)
    return dest


def ordered_tests(tests, path):
    """``tests`` with the file that tests ``path`` most directly first (module tests first for modules)."""
    name = os.path.splitext(os.path.basename(path))[0]
    if path.startswith('plugins/modules/'):
        first = ['test_modules.py']
    else:
        first = [FIRST.get(name), 'test_%s.py' % name, 'test_filter_%s.py' % name]
    return sorted(tests, key=lambda test: os.path.basename(test) not in first)


def default_tests(yaml_run=False):
    """The unit tests of the code, tests/unit/plugins/<kind>/test_*.py (they mirror plugins/); for YAML mutants also
    the offline layers that see what the YAML decides (YAML_TESTS)."""
    found = glob.glob(os.path.join(SOURCE, 'tests', 'unit', 'plugins', '**', 'test_*.py'), recursive=True)
    out = sorted(os.path.relpath(path, SOURCE) for path in found if os.path.basename(path) not in EXCLUDED_TESTS)
    if yaml_run:
        for pattern in YAML_TESTS:
            out.extend(sorted(os.path.relpath(path, SOURCE) for path in glob.glob(os.path.join(SOURCE, pattern))))
    return out


def upstream_data():
    """The upstream chart data tests/upstream reads (GPU_TRAY_UPSTREAM, else ../shared/upstream beside the checkout):
    the copy is elsewhere, so the workers are told where."""
    return os.environ.get('GPU_TRAY_UPSTREAM') or os.path.join(os.path.dirname(REPO), 'shared', 'upstream')


def worker_env():
    env = dict(os.environ, **MUTANT_ENV)
    # never import the checkout's own (unmutated) collection, nor use its configuration: the tests fall back to their
    # copy's (ROOT/.collections, ROOT/ansible.cfg)
    for name in ansible_env.CHECKOUT_VARS:
        env.pop(name, None)
    env['GPU_TRAY_UPSTREAM'] = upstream_data()
    return env


# What a Python process started by a test (ansible-playbook, its workers and modules) opens, while the trace runs: an
# audit hook appends every YAML/JSON/template path and every Python file of the collection's plugins it imports to
# the file GPU_TRAY_MUTATE_OPENS names (sitecustomize is imported at start-up from PYTHONPATH; forked workers inherit
# the hook).
SITECUSTOMIZE = """
import os
import sys

_LOG = os.environ.get('GPU_TRAY_MUTATE_OPENS')
_SEEN = set()
_BUSY = []


def _hook(event, args):
    if event != 'open' or _BUSY or not args or not isinstance(args[0], (str, bytes)):
        return
    path = os.fsdecode(args[0])
    ours = path.endswith('.py') and '/ansible_collections/gpu_tray/cluster/plugins/' in path
    if not (ours or path.endswith(('.yml', '.yaml', '.json', '.j2'))) or path in _SEEN:
        return
    _SEEN.add(path)
    _BUSY.append(1)
    try:
        fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (os.path.abspath(path) + '\\n').encode('utf-8', 'surrogateescape'))
        finally:
            os.close(fd)
    except OSError:
        pass
    finally:
        _BUSY.pop()


if _LOG:
    sys.addaudithook(_hook)
"""


# ---- pytest plugins used inside the copy ------------------------------------------------------------

class LineTracer(object):
    """Records, per test, which lines of the files under ``prefix`` it executes (setup and call); with ``copy``
    also which files of the collection it reads, in this process and in the processes it starts (the audit hooks
    below), the module- and session-scoped fixtures it sets up and uses, and its time."""

    def __init__(self, prefix, copy=None):
        self.prefix = prefix
        self.lines = None
        self.by_test = {}
        self.collected = {}             # test file node id -> lines run while pytest imported it
        self.real = {}                  # code file name -> real path under prefix, or None
        self.copy = copy
        self.reads = {}                 # node id -> [files of the collection it read]
        self.collected_reads = {}       # test file node id -> files read while pytest imported it
        self.wide_setup = {}            # node id -> wide fixtures set up during it
        self.wide_uses = {}             # node id -> wide fixtures it requests
        self.seconds = {}
        # files read in the test process itself: code there may keep what it read for the next tests (a module-level
        # cache like platform.py's), so such a read counts for every test of the file
        self.inproc_reads = set()
        self._opens = None
        self._log = None
        self._count = 0
        self._started = 0.0
        self._current = None

    def _start_reads(self):
        if self.copy is None:
            return
        self._count += 1
        self._opens = set()
        _OPENS.append(self._opens)
        self._log = os.path.join(self.copy, '.mutant-opens', '%d.log' % self._count)
        os.environ['GPU_TRAY_MUTATE_OPENS'] = self._log

    def _end_reads(self):
        if self.copy is None or self._opens is None:
            return []
        if _OPENS and _OPENS[-1] is self._opens:
            _OPENS.pop()
        names = set(self._opens)
        self.inproc_reads.update(filter(None, (collection_file(self.copy, name) for name in names)))
        if os.path.exists(self._log):
            with open(self._log, encoding='utf-8', errors='surrogateescape') as handle:
                names.update(handle.read().split('\n'))
        self._opens = None
        return sorted(set(filter(None, (collection_file(self.copy, name) for name in names))))

    def _ours(self, filename):
        if filename not in self.real:
            real = os.path.realpath(filename)   # imported through the .collections symlink
            self.real[filename] = real if real.startswith(self.prefix) else None
        return self.real[filename]

    def _local(self, frame, event, _arg):
        if event == 'line':
            self.lines.add((self.real[frame.f_code.co_filename], frame.f_lineno))
        return self._local

    def _global(self, frame, _event, _arg):
        real = self._ours(frame.f_code.co_filename)
        if real is not None:
            self.lines.add((real, frame.f_code.co_firstlineno))
            return self._local
        return None

    def pytest_runtest_protocol(self, item, nextitem):
        self.lines = set()
        self._current = item.nodeid
        self._started = time.time()
        self.wide_setup[item.nodeid] = []
        info = getattr(item, '_fixtureinfo', None)
        self.wide_uses[item.nodeid] = sorted(
            name for name, defs in ((info.name2fixturedefs if info else {}) or {}).items()
            if defs and _wide(defs[-1]))
        self._start_reads()
        sys.settrace(self._global)
        threading.settrace(self._global)
        return None

    def pytest_fixture_setup(self, fixturedef, request):
        if _wide(fixturedef) and self._current in self.wide_setup:
            self.wide_setup[self._current].append(fixturedef.argname)

    def pytest_runtest_logfinish(self, nodeid, location):
        sys.settrace(None)
        threading.settrace(None)
        lines = set(self.lines or ()) | self.collected.get(nodeid.split('::')[0], set())
        self.by_test[nodeid] = sorted(set('%s:%d' % item for item in lines))
        self.lines = None
        self.reads[nodeid] = self._end_reads()
        self.seconds[nodeid] = time.time() - self._started
        self._current = None

    # What a test file runs while it is imported (``FILTER = FilterModule().filters()['name']`` at module level)
    # counts for every test of the file: a mutant there breaks the file's collection, so its tests are the ones to run.
    def pytest_collectstart(self, collector):
        import pytest                                    # pylint: disable=import-outside-toplevel
        if isinstance(collector, pytest.Module):
            self.lines = set()
            self._start_reads()
            sys.settrace(self._global)

    def pytest_collectreport(self, report):
        if self.lines is not None and report.nodeid.endswith('.py'):
            sys.settrace(None)
            self.collected[report.nodeid] = self.lines
            self.lines = None
            self.collected_reads[report.nodeid] = self._end_reads()


def _wide(fixturedef):
    """A module- or session-scoped fixture of the tests (pytest's own, tmp_path_factory, read nothing of ours)."""
    return fixturedef.scope != 'function' and bool(getattr(fixturedef, 'baseid', ''))


def collection_file(copy, name):
    """The path of a file of the collection relative to its root, for a path a test opened in the copy (or in a
    collection it built from the copy and installed elsewhere); None for any other file."""
    if not name:
        return None
    real_copy = os.path.realpath(copy) + os.sep
    real = os.path.realpath(name)
    if real.startswith(real_copy):
        return real[len(real_copy):]
    if INSTALLED in name:
        return name.split(INSTALLED, 1)[1]
    return None


class Select(object):
    """Runs only the given node ids, in the order pytest collects them. A parametrized test whose id a mutant
    changed (ids made from the data: ``[imex-main-imex_unit-nvidia-imex.service]``) runs with every parameter set."""

    def __init__(self, nodeids):
        self.nodeids = set(nodeids)

    def pytest_collection_modifyitems(self, session, config, items):
        collected = set(item.nodeid for item in items)
        lost = set(nodeid.split('[')[0] for nodeid in self.nodeids - collected if '[' in nodeid)
        keep = [item for item in items if item.nodeid in self.nodeids or item.nodeid.split('[')[0] in lost]
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in self.nodeids])
        items[:] = keep


class _Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Hang('mutant run exceeded its time limit')


_OPENS = []          # the trace's in-process record of opened files (the audit hook below appends to its last set)


def _audit(event, args):
    if event == 'open' and _OPENS and args and isinstance(args[0], (str, bytes)):
        path = os.fsdecode(args[0])
        if path.endswith(('.yml', '.yaml', '.json', '.j2')):
            _OPENS[-1].add(os.path.abspath(path))


def _snapshot(copy, patterns):
    out = {}
    for pattern in patterns:
        for path in glob.glob(os.path.join(copy, pattern)):
            with open(path, 'rb') as handle:
                out[path] = handle.read()
    return out


def _restore(copy, patterns, snapshot):
    for pattern in patterns:
        for path in glob.glob(os.path.join(copy, pattern)):
            if path not in snapshot:
                os.remove(path)
    for path, content in snapshot.items():
        with open(path, 'wb') as handle:
            handle.write(content)


def _generate(copy, scripts):
    """Regenerate the files derived from a mutated file; False when a generator refuses the mutant."""
    for script in scripts:
        proc = subprocess.run([sys.executable, os.path.join(copy, script)], cwd=copy, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, check=False)
        if proc.returncode != 0:
            return False
    return True


def worker_main(copy, timeout):
    """A long-lived process: import pytest and the heavy libraries once, then run one mutant per request
    (a JSON line on stdin) in-process and answer with its status. Every run starts from the same module
    table, so the mutated file and the tests are imported afresh each time (as pytester's inline runs do)."""
    os.chdir(copy)
    sys.path.insert(0, os.path.join(copy, 'tests', 'unit'))
    import pytest                                        # noqa: F401  pylint: disable=unused-import
    import ansible.module_utils.basic                    # noqa: F401  pylint: disable=unused-import
    import hypothesis                                    # noqa: F401  pylint: disable=unused-import
    modules = dict(sys.modules)
    path = list(sys.path)
    meta_path = list(sys.meta_path)
    environ = dict(os.environ)
    real_copy = os.path.realpath(copy) + os.sep
    site = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(copy))), 'opentrace')   # make_copy's base
    signal.signal(signal.SIGALRM, _alarm)
    hooked = False
    for line in sys.stdin:
        request = json.loads(line)
        target = os.path.join(copy, request['path'])
        with open(target) as handle:
            original = handle.read()
        generated = request.get('generated') or []
        snapshot = _snapshot(copy, generated)
        status = rc = None
        if request.get('replacement') is not None:
            mutated = original[:request['start']] + request['replacement'] + original[request['end']:]
            try:
                if target.endswith('.py'):
                    compile(mutated, target, 'exec')
            except SyntaxError:
                status = 'invalid'
            else:
                with open(target, 'w') as handle:
                    handle.write(mutated)
                if not _generate(copy, request.get('generate') or []):
                    status = 'killed'           # the generator (tools/inventory_spec.py ...) refuses the change
        started = time.time()
        if status is None:
            plugins = [Select(request['tests'])] if request.get('tests') is not None else []
            tracer = None
            if request.get('trace'):
                tracer = LineTracer(os.path.join(real_copy, 'plugins') + os.sep, copy)
                plugins.append(tracer)
                if not hooked:
                    sys.addaudithook(_audit)
                    hooked = True
                shutil.rmtree(os.path.join(copy, '.mutant-opens'), ignore_errors=True)
                os.makedirs(os.path.join(copy, '.mutant-opens'))
                os.environ['PYTHONPATH'] = os.pathsep.join([site] + [p for p in [os.environ.get('PYTHONPATH')] if p])
            deselect = []
            for nodeid in DESELECTED:
                if nodeid.split('::')[0] in request['files']:
                    deselect += ['--deselect', nodeid]
            old_out, old_err = sys.stdout, sys.stderr
            out_log = open(os.path.join(copy, '.mutant-run.log'), 'w')
            sys.stdout = sys.stderr = out_log
            limit = request.get('timeout') or timeout
            signal.alarm(int(limit * (20 if request.get('trace') else 1)))   # the trace runs every test
            try:
                rc = pytest.main(['-x', '-q', '-p', 'no:cacheprovider'] + deselect + request['files'], plugins=plugins)
            except _Hang:
                rc = 1
            finally:
                signal.alarm(0)
                sys.stdout, sys.stderr = old_out, old_err
                out_log.close()
                del _OPENS[:]
                os.environ.clear()
                os.environ.update(environ)
                for name in [name for name in sys.modules if name not in modules]:
                    del sys.modules[name]
                sys.path[:] = path
                sys.meta_path[:] = meta_path
            rc = int(rc)
            status = {0: 'survived', 1: 'killed', 5: 'survived'}.get(rc, 'error')
            if tracer is not None:
                with open(os.path.join(copy, '.mutant-run.log')) as handle:
                    output = handle.read()
                lines_by_test = dict((test, [item.replace(real_copy, '', 1) for item in lines])
                                     for test, lines in tracer.by_test.items())
                answer = {'status': status, 'output': output[-5000:], 'lines': lines_by_test,
                          'reads': tracer.reads, 'collected_reads': tracer.collected_reads,
                          'wide_setup': tracer.wide_setup, 'wide_uses': tracer.wide_uses,
                          'inproc_reads': sorted(tracer.inproc_reads),
                          'test_seconds': tracer.seconds, 'seconds': time.time() - started}
                _restore(copy, generated, snapshot)
                with open(target, 'w') as handle:
                    handle.write(original)
                sys.__stdout__.write(json.dumps(answer) + '\n')
                sys.__stdout__.flush()
                continue
        _restore(copy, generated, snapshot)
        with open(target, 'w') as handle:
            handle.write(original)
        sys.__stdout__.write(json.dumps({'status': status, 'rc': rc}) + '\n')
        sys.__stdout__.flush()
    return 0


class Worker(object):
    """The orchestrator's handle on one worker process and its copy of the collection."""

    def __init__(self, base, files, tests, timeout):
        self.copy = make_copy(base, files)
        self.tests = tests
        self.timeout = timeout
        self.seconds = {}               # test -> seconds of its traced run (the YAML mutants' time limit)
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--worker', self.copy,
                                      '--timeout', str(self.timeout)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=worker_env(),
                                     universal_newlines=True)

    def ask(self, request):
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write(json.dumps(request) + '\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:                                     # the run killed the worker (os._exit, a crash)
            self.proc.wait()
            self.proc = None
            return {'status': 'killed'}
        return json.loads(line)

    def stop(self, kill=False):
        if self.proc is not None and kill:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def trace(self, per_file=False):
        """Run every test once, unmutated; returns (status, {test: ['file:line', ...]}, {test file: what its tests
        read}). ``per_file``: one pytest session per test file in a fresh interpreter, so what a module- or
        session-scoped fixture reads is seen by every file that uses it (the YAML mutants' selection)."""
        if not per_file:
            answer = self.ask({'path': self.tests[0], 'files': self.tests, 'trace': True})
            if answer['status'] != 'survived':
                print(answer.get('output', ''))
            return answer['status'], answer.get('lines', {}), {}
        lines, reads = {}, {}
        for index, test in enumerate(self.tests):
            self.stop()                 # a fresh interpreter per file: one file's imports never reach the next
            answer = self.ask({'path': test, 'files': [test], 'trace': True})
            if answer['status'] != 'survived':
                print(answer.get('output', ''))
                return answer['status'], lines, reads
            lines.update(answer.get('lines', {}))
            reads[test] = dict((key, answer.get(key) or {}) for key in (
                'reads', 'collected_reads', 'wide_setup', 'wide_uses', 'test_seconds'))
            reads[test]['inproc_reads'] = answer.get('inproc_reads') or []
            read = set().union(*(set(v) for v in list(reads[test]['reads'].values())
                                 + list(reads[test]['collected_reads'].values())))
            print('  traced %d/%d %s (%.0f s, its tests read %d YAML/JSON files of the collection)' % (
                index + 1, len(self.tests), test, answer.get('seconds', 0.0), len(read)))
            sys.stdout.flush()
        return 'survived', lines, reads

    def run(self, mutant, tests):
        if mutant.path.endswith(YAML_SUFFIXES):
            # the reading tests, file by file, the cheapest file first; the time limit from their traced time
            generate, generated = generators(mutant.path)
            files = []
            for test in tests:
                if test.split('::')[0] not in files:
                    files.append(test.split('::')[0])
            request = {'path': mutant.path, 'start': mutant.start, 'end': mutant.end,
                       'replacement': mutant.replacement, 'files': files, 'tests': list(tests),
                       'generate': generate, 'generated': generated,
                       'timeout': max(self.timeout, 3 * sum(self.seconds.get(t, 5.0) for t in tests) + 60)}
            # a fresh interpreter per YAML mutant: the files of several layers import ansible's controller code in
            # one run, and what one run leaves in a module kept across runs must not fail the next (a false kill)
            self.stop()
        else:
            files = set(test.split('::')[0] for test in tests)       # collect only the files with covering tests
            request = {'path': mutant.path, 'start': mutant.start, 'end': mutant.end,
                       'replacement': mutant.replacement,
                       'files': [name for name in ordered_tests(self.tests, mutant.path) if name in files],
                       'tests': tests}
            if any(not name.startswith('tests/unit/') for name in files):
                # --across-processes: tests of the other layers, in a fresh interpreter (as YAML mutants)
                request['timeout'] = max(self.timeout, 3 * sum(self.seconds.get(t, 5.0) for t in tests) + 60)
                self.stop()
        answer = self.ask(request)
        if answer['status'] == 'error':
            # pytest could not run (a mutant left the worker's interpreter unusable, e.g. a test that changed
            # process state and was cut short): every later run would error too. A fresh worker runs it again.
            self.stop(kill=True)
            answer = self.ask(request)
            if answer['status'] == 'error' and answer.get('rc') == 2:
                # pytest's "interrupted: errors during collection" in a fresh interpreter: the tests that collected
                # in the unmutated trace cannot even be imported with the mutant - they noticed it
                answer['status'] = 'killed'
        return answer['status']


def generators(path):
    """(generator scripts, generated file patterns) for a mutated file."""
    for pattern, scripts, generated in GENERATORS:
        if fnmatch.fnmatch(path, pattern):
            return list(scripts), list(generated)
    return [], []


def reading_tests(mutant, reads, in_process=True):
    """The tests that read a YAML mutant's file (or a file generated from it) - in a process a test started, in a
    module- or session-scoped fixture (then every test of the file that uses that fixture), in the test process
    itself or while their file was imported (every test of the file: the code may keep what it read) - as node ids,
    file by file, the cheapest file first."""
    wanted = [mutant.path] + generators(mutant.path)[1]

    def hit(files):
        return any(fnmatch.fnmatch(name, pattern) for name in files for pattern in wanted)

    chosen = []
    for test_file, info in reads.items():
        tests = set(info['test_seconds'])
        if in_process and (hit([name for files in info['collected_reads'].values() for name in files])
                           or hit(info['inproc_reads'])):
            picked = set(tests)
        else:
            picked = set(test for test, files in info['reads'].items() if hit(files))
            fixtures = set(name for test in picked for name in info['wide_setup'].get(test, []))
            picked.update(test for test in tests if fixtures.intersection(info['wide_uses'].get(test, [])))
        if picked:
            cost = sum(info['test_seconds'].get(test, 0.0) for test in picked)
            order = list(info['test_seconds'])                 # the order the tests ran in
            chosen.append((cost, test_file, sorted(picked, key=order.index)))
    return [test for _cost, _file, tests in sorted(chosen) for test in tests]


def _digest(path):
    import hashlib                                       # pylint: disable=import-outside-toplevel
    with open(os.path.join(SOURCE, path), 'rb') as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def traced(worker, per_file, trace_file, version=1):
    """The worker's trace, with --trace-file: the kept entries of unchanged test files, the others traced now."""
    if not (per_file and trace_file):
        return worker.trace(per_file)
    kept = {}
    if os.path.isfile(trace_file):
        with open(trace_file) as handle:
            kept = json.load(handle)
    wanted = worker.tests
    fresh = [test for test in wanted if (kept.get(test) or {}).get('sha256') != _digest(test)
             or (kept.get(test) or {}).get('version', 1) < version]
    try:
        for test in fresh:                      # kept file by file: a stopped trace keeps what it traced
            worker.tests = [test]
            status, lines, reads = worker.trace(True)
            if status != 'survived':
                return status, lines, reads
            kept[test] = {'sha256': _digest(test), 'version': TRACE_VERSION, 'reads': reads[test],
                          'lines': dict((k, v) for k, v in lines.items() if k.split('::')[0] == test)}
            with open(trace_file, 'w') as handle:
                json.dump(kept, handle)
    finally:
        worker.tests = wanted
    lines, reads = {}, {}
    for test in wanted:
        lines.update(kept[test]['lines'])
        reads[test] = kept[test]['reads']
    return 'survived', lines, reads


def importers(path, test_files):
    """The test files that import the module ``path`` by name (``from ...module_utils import conformance``): a test
    may use a module's constants without executing a line of it."""
    dotted = 'ansible_collections.gpu_tray.cluster.' + os.path.splitext(path)[0].replace('/', '.')
    parent, _dot, name = dotted.rpartition('.')
    out = set()
    for test_file in test_files:
        try:
            with open(os.path.join(SOURCE, test_file)) as handle:
                tree = ast.parse(handle.read())
        except (OSError, SyntaxError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module == dotted or (
                    node.module == parent and any(alias.name == name for alias in node.names))):
                out.add(test_file)
            elif isinstance(node, ast.Import) and any(alias.name == dotted for alias in node.names):
                out.add(test_file)
    return out


def covering_tests(mutant, lines_by_test, module_level):
    """Tests that execute a line of the mutant; for module-level code (run at import) every test that
    executes any line of its file, and every test of a file that imports it."""
    if mutant.path in module_level and mutant.line in module_level[mutant.path]:
        prefix = mutant.path + ':'
        files = importers(mutant.path, set(test.split('::')[0] for test in lines_by_test))
        return sorted(test for test, lines in lines_by_test.items()
                      if any(x.startswith(prefix) for x in lines) or test.split('::')[0] in files)
    lines = set(range(mutant.line, mutant.end_line + 1))
    # a line inside a statement that spans several (a list of pairs) may report no event of its own: its statement's
    starts = statement_starts(mutant.path)
    lines.update(starts[line] for line in list(lines) if line in starts)
    wanted = set('%s:%d' % (mutant.path, line) for line in lines)
    return sorted(test for test, lines in lines_by_test.items() if wanted.intersection(lines))


_STARTS = {}


def statement_starts(path):
    """{line: first line of the innermost statement holding it} for the lines of multi-line statements."""
    if path not in _STARTS:
        with open(os.path.join(SOURCE, path)) as handle:
            tree = ast.parse(handle.read())
        out = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.stmt) and node.end_lineno > node.lineno and not isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.While, ast.With,
                           ast.Try)):
                for line in range(node.lineno + 1, node.end_lineno + 1):
                    if line not in out or out[line] < node.lineno:
                        out[line] = node.lineno
        _STARTS[path] = out
    return _STARTS[path]


def module_level_lines(path):
    """Lines of ``path`` that run at import time (outside any function): module statements, the statements of
    class bodies (``TRANSFERS_FILES = False`` in an action plugin) and the decorators and default values of their
    functions (``attempted=False`` on the second line of a wrapped ``def``), which no test executes while it runs."""
    with open(os.path.join(SOURCE, path)) as handle:
        tree = ast.parse(handle.read())
    out = set()

    def walk(body):
        for stmt in body:
            if isinstance(stmt, ast.ClassDef):
                walk(stmt.body)
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                evaluated = stmt.decorator_list + stmt.args.defaults + [d for d in stmt.args.kw_defaults if d]
                for node in evaluated:
                    out.update(range(node.lineno, node.end_lineno + 1))
            else:
                out.update(range(stmt.lineno, stmt.end_lineno + 1))

    walk(tree.body)
    return out


def report(mutants, started):
    by_file = {}
    for mutant in mutants:
        counts = by_file.setdefault(mutant.path, {'killed': 0, 'survived': 0})
        if mutant.status in counts:
            counts[mutant.status] += 1
    groups = {}
    for path, counts in by_file.items():
        group = groups.setdefault(os.path.dirname(path), {'killed': 0, 'survived': 0})
        group['killed'] += counts['killed']
        group['survived'] += counts['survived']
    print('\n%-48s %7s %8s %6s' % ('file', 'killed', 'survived', 'kill%'))
    rates = {}
    for path in sorted(by_file):
        counts = by_file[path]
        total = counts['killed'] + counts['survived']
        rates[path] = 100.0 * counts['killed'] / total if total else 100.0
        print('%-48s %7d %8d %5.1f%%' % (path, counts['killed'], counts['survived'], rates[path]))
    for group in sorted(groups):
        counts = groups[group]
        total = counts['killed'] + counts['survived']
        rates[group + '/'] = 100.0 * counts['killed'] / total if total else 100.0
        print('%-48s %7d %8d %5.1f%%' % (group + '/ (all)', counts['killed'], counts['survived'], rates[group + '/']))
    survivors = [m for m in mutants if m.status == 'survived']
    if survivors:
        print('\nsurvivors (a missing test, or an equivalent mutant):')
        for mutant in survivors:
            print('  %s:%d  [%s] %s' % (mutant.path, mutant.line, mutant.kind, mutant.description))
    errors = [m for m in mutants if m.status == 'error']
    for mutant in errors:
        print('  ERROR (not counted) %s:%d %s' % (mutant.path, mutant.line, mutant.description))
    print('\n%d mutants in %.0f s' % (len(mutants), time.time() - started))
    return rates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('paths', nargs='*', help='Python or YAML files, or directories, to mutate')
    parser.add_argument('--tests', nargs='+', default=None,
                        help='test files to run per mutant (default: tests/unit/plugins/**/test_*.py but %s; with '
                        'YAML files also the offline layers of YAML_TESTS)' % ', '.join(EXCLUDED_TESTS))
    parser.add_argument('--strings', action='store_true',
                        help='also mutate the string constants that decide behaviour (label keys and values, '
                        'selectors, environment names, file names, constants, compared values)')
    parser.add_argument('--across-processes', action='store_true',
                        help='Python mutants also run the tests of the offline layers (YAML_TESTS) whose processes '
                        'import the mutated file (ansible-playbook running a filter, a lookup, an action)')
    parser.add_argument('--trace-file',
                        help='keep the per-file trace of a YAML run in this JSON file and reuse a test file\'s entry '
                        'while that test file is unchanged (for iterating on tests; not for the figures of record)')
    parser.add_argument('--jobs', type=int, default=1, help='parallel workers (default 1: machines are shared)')
    parser.add_argument('--timeout', type=float, default=120, help='seconds per mutant run before it counts as a hang')
    parser.add_argument('--fail-under', type=float, default=None,
                        help='exit 1 when the kill rate of any mutated file or directory is below this percentage')
    parser.add_argument('--list', action='store_true', help='only list the mutants')
    parser.add_argument('--only', action='append', default=[], help='only mutants at FILE:LINE (repeatable)')
    parser.add_argument('--kind', action='append', default=[],
                        help='only mutants of this kind (string, compare, default, choice, choices, data, ...; '
                        'repeatable)')
    parser.add_argument('--json', help='write every mutant and its status to this file')
    parser.add_argument('--verbose', action='store_true', help='one line per mutant')
    parser.add_argument('--rev', help='measure this revision (a commit, or a tree such as `git merge-tree --write-tree '
                        'A B` prints) instead of the work tree')
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(args.worker, args.timeout)
    if not args.paths:
        parser.error('name the files or directories to mutate')

    global SOURCE                                        # pylint: disable=global-statement
    files = tracked_files(args.rev)
    extracted = None
    if args.rev:
        extracted = tempfile.mkdtemp(prefix='gpu-tray-mutate-rev-')
        SOURCE = extract(args.rev, extracted)
    try:
        return measure(args, files)
    finally:
        if extracted:
            shutil.rmtree(extracted, ignore_errors=True)


def measure(args, files):
    """Find the mutants of args.paths in the tracked ``files``, run them, report."""
    mutants = []
    for path in source_files(args.paths, files):
        mutants.extend(find_mutants(path, strings=args.strings))
    yaml_run = any(m.path.endswith(YAML_SUFFIXES) for m in mutants) or args.across_processes
    if args.only:
        mutants = [m for m in mutants if m.key() in args.only]
    if args.kind:
        mutants = [m for m in mutants if m.kind in args.kind]
    if args.list:
        for mutant in mutants:
            print('%s:%d  [%s] %s' % (mutant.path, mutant.line, mutant.kind, mutant.description))
        print('%d mutants' % len(mutants))
        return 0
    started = time.time()
    # a terminated run still removes its copies and workers (SystemExit runs the finally below)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(143))
    base = tempfile.mkdtemp(prefix='gpu-tray-mutate-')
    workers = []
    try:
        tests = args.tests or default_tests(yaml_run)
        workers = [Worker(os.path.join(base, 'w%d' % index), files, tests, args.timeout)
                   for index in range(max(1, args.jobs))]
        status, lines_by_test, reads = traced(workers[0], yaml_run, args.trace_file,
                                              TRACE_VERSION if args.across_processes else 1)
        if status != 'survived' or not (lines_by_test or reads):
            print('the tests do not pass without a mutant (%s): nothing to measure' % status)
            return 2
        print('%d tests traced in %.0f s; %d mutants' % (len(lines_by_test), time.time() - started, len(mutants)))
        module_level = dict((path, module_level_lines(path)) for path in set(m.path for m in mutants)
                            if path.endswith('.py'))
        seconds = dict(item for info in reads.values() for item in info['test_seconds'].items())
        for worker in workers:
            worker.seconds = seconds
        for mutant in mutants:
            if mutant.path.endswith(YAML_SUFFIXES):
                mutant.tests = reading_tests(mutant, reads)
            else:
                mutant.tests = covering_tests(mutant, lines_by_test, module_level)
                if args.across_processes:
                    mutant.tests = sorted(set(mutant.tests) | set(
                        test for test in reading_tests(mutant, reads, in_process=False)))
        pending = list(mutants)
        lock = threading.Lock()
        done = [0]

        def work(worker):
            while True:
                with lock:
                    if not pending:
                        return
                    mutant = pending.pop(0)
                began = time.time()
                if mutant.tests:
                    mutant.status = worker.run(mutant, mutant.tests)
                else:
                    mutant.status = 'survived'          # no test executes the line
                with lock:
                    done[0] += 1
                    if mutant.status == 'survived':
                        print('[%d/%d] SURVIVED %s:%d %s%s' % (
                            done[0], len(mutants), mutant.path, mutant.line, mutant.description,
                            '' if mutant.tests else ' (no test runs it)'))
                    elif args.verbose or done[0] % 25 == 0:
                        print('[%d/%d] %.0f s  %s %s:%d (%d tests, %.1f s)' % (
                            done[0], len(mutants), time.time() - started, mutant.status, mutant.path, mutant.line,
                            len(mutant.tests), time.time() - began))
                    sys.stdout.flush()

        threads = [threading.Thread(target=work, args=(worker,)) for worker in workers[1:]]
        for thread in threads:
            thread.daemon = True
            thread.start()
        try:
            work(workers[0])
            for thread in threads:
                thread.join()
        except BaseException:
            with lock:
                del pending[:]           # a stopped run starts no further mutant
            raise
    finally:
        for worker in workers:
            worker.stop()
        shutil.rmtree(base, ignore_errors=True)
    mutants = [m for m in mutants if m.status != 'invalid']
    rates = report(mutants, started)
    if args.json:
        with open(args.json, 'w') as handle:
            json.dump([m.as_dict() for m in mutants], handle, indent=1)
    if args.fail_under is not None:
        low = dict((group, rate) for group, rate in rates.items() if rate < args.fail_under)
        if low:
            below = ', '.join('%s %.1f%%' % item for item in sorted(low.items()))
            print('kill rate below %.0f%%: %s' % (args.fail_under, below))
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
