#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Mutation check: plant one small bug at a time in the collection's code and see whether tests/unit notices.

    tools/mutate.py [--fail-under PCT] [--jobs N] [--list] [--only FILE:LINE] PATH...   (files or directories)

It measures the host code (module_utils parsers and judges, modules), the API host's rules (the cluster module_utils)
and the controller-side code that decides rollouts (filters, plugin_utils with the planners, the actions); --fail-under applies
to every file and every directory.

For every mutable spot in the given Python files the script plants ONE bug (a mutant), runs the unit tests
against it and counts the mutant as killed when a test fails (or the run hangs past --timeout). Survivors are
printed with file, line, the planted change and the line's code; each is a missing test or an equivalent
mutant (a change no input can observe). The mutants (operators as in mutmut/cosmic-ray, kept to the ones
that model real slips):

    compare      == <-> !=, < <-> <=, > <-> >=, in <-> not in, is <-> is not
    boolean      and <-> or; drop a `not`; negate an if/while/ternary condition that is a bare value
    constant     integer n -> n+1 (1 -> 0), True <-> False
    arithmetic   + <-> -
    return       `return <value>` -> `return None`
    statement    a call statement (`problems.append(...)`) -> `pass`; break <-> continue

String constants are never mutated (messages: too many equivalent mutants), nor module-level try/if blocks
(import fallbacks) and lines marked `# pragma: no mutate`.

Why not mutmut: mutmut 3 rewrites the project into ./mutants and imports it by its top-level package; the
collection is imported as ansible_collections.gpu_tray.cluster through a symlink tree, which mutmut cannot
follow. This script copies the tracked files (the work tree's content) into a temporary collection tree per
worker, so the checkout is never modified - other work can go on in it while this runs.

Not part of `make test`/CI: it takes minutes (`make mutate`). The figures are kept in docs/testing.md.
"""

from __future__ import print_function

import argparse
import ast
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
         'reboot_waves': 'test_filter_reboot_waves.py', 'reboot_tray': 'test_reboot_tray_action.py'}
# Fewer hypothesis examples per mutant run (tests/unit/conftest.py reads it); the full suite uses its own profile.
MUTANT_ENV = {'PYTHONDONTWRITEBYTECODE': '1', 'GPU_TRAY_HYPOTHESIS_EXAMPLES': '25'}

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
        if isinstance(value, bool):
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


def find_mutants(path):
    full = os.path.join(REPO, path)
    with open(full) as handle:
        text = handle.read()
    tree = ast.parse(text)
    finder = _Finder(path, text)
    finder.skip = _docstring_nodes(tree)
    finder.visit(tree)
    return sorted(finder.found, key=lambda m: (m.start, m.end, m.replacement))


def python_files(paths, tracked):
    """The tracked .py files named by ``paths`` (files, or directories: their .py files, not recursive)."""
    out = []
    for path in paths:
        path = os.path.relpath(os.path.abspath(path), REPO)
        if os.path.isdir(os.path.join(REPO, path)):
            found = [name for name in tracked if os.path.dirname(name) == path]
        else:
            found = [path] if path in tracked else []
        if not found:
            raise SystemExit('%s: no file git tracks there' % path)
        out.extend(name for name in sorted(found) if name.endswith('.py') and not name.endswith('__init__.py'))
    return out


def tracked_files():
    proc = subprocess.run(['git', 'ls-files', '-z'], cwd=REPO, stdout=subprocess.PIPE, check=True)
    return [name for name in proc.stdout.decode().split('\0') if name]


def make_copy(base, files):
    """A collection tree at base/ansible_collections/gpu_tray/cluster with the work tree's tracked files."""
    dest = os.path.join(base, 'ansible_collections', 'gpu_tray', 'cluster')
    for name in files:
        # lab/: the planner tests populate and boot lab trays with the lab's own code; ansible.cfg: the tests that run
        # ansible-playbook use the checkout's configuration
        if not (name.split('/')[0] in ('plugins', 'meta', 'roles', 'playbooks', 'lab') or name.startswith('tests/unit/')
                or name in ('galaxy.yml', 'ansible.cfg')):
            continue
        src = os.path.join(REPO, name)
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
    return dest


def ordered_tests(tests, path):
    """``tests`` with the file that tests ``path`` most directly first (module tests first for modules)."""
    name = os.path.splitext(os.path.basename(path))[0]
    if path.startswith('plugins/modules/'):
        first = ['test_modules.py']
    else:
        first = [FIRST.get(name), 'test_%s.py' % name, 'test_filter_%s.py' % name]
    return sorted(tests, key=lambda test: os.path.basename(test) not in first)


def default_tests():
    """The unit tests of the code, tests/unit/plugins/<kind>/test_*.py (they mirror plugins/)."""
    found = glob.glob(os.path.join(REPO, 'tests', 'unit', 'plugins', '**', 'test_*.py'), recursive=True)
    return sorted(os.path.relpath(path, REPO) for path in found if os.path.basename(path) not in EXCLUDED_TESTS)


def worker_env():
    env = dict(os.environ, **MUTANT_ENV)
    env.pop('ANSIBLE_COLLECTIONS_PATH', None)   # never import the checkout's own (unmutated) collection
    return env


# ---- pytest plugins used inside the copy ------------------------------------------------------------

class LineTracer(object):
    """Records, per test, which lines of the files under ``prefix`` it executes (setup and call)."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.lines = None
        self.by_test = {}
        self.collected = {}             # test file node id -> lines run while pytest imported it
        self.real = {}                  # code file name -> real path under prefix, or None

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
        sys.settrace(self._global)
        threading.settrace(self._global)
        return None

    def pytest_runtest_logfinish(self, nodeid, location):
        sys.settrace(None)
        threading.settrace(None)
        lines = set(self.lines or ()) | self.collected.get(nodeid.split('::')[0], set())
        self.by_test[nodeid] = sorted(set('%s:%d' % item for item in lines))
        self.lines = None

    # What a test file runs while it is imported (``FILTER = FilterModule().filters()['name']`` at module level)
    # counts for every test of the file: a mutant there breaks the file's collection, so its tests are the ones to run.
    def pytest_collectstart(self, collector):
        import pytest                                    # pylint: disable=import-outside-toplevel
        if isinstance(collector, pytest.Module):
            self.lines = set()
            sys.settrace(self._global)

    def pytest_collectreport(self, report):
        if self.lines is not None and report.nodeid.endswith('.py'):
            sys.settrace(None)
            self.collected[report.nodeid] = self.lines
            self.lines = None


class Select(object):
    """Runs only the given node ids, in the order pytest collects them."""

    def __init__(self, nodeids):
        self.nodeids = set(nodeids)

    def pytest_collection_modifyitems(self, session, config, items):
        keep = [item for item in items if item.nodeid in self.nodeids]
        config.hook.pytest_deselected(items=[item for item in items if item.nodeid not in self.nodeids])
        items[:] = keep


class _Hang(Exception):
    pass


def _alarm(_signum, _frame):
    raise _Hang('mutant run exceeded its time limit')


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
    signal.signal(signal.SIGALRM, _alarm)
    for line in sys.stdin:
        request = json.loads(line)
        target = os.path.join(copy, request['path'])
        with open(target) as handle:
            original = handle.read()
        status = rc = None
        if request.get('replacement') is not None:
            mutated = original[:request['start']] + request['replacement'] + original[request['end']:]
            try:
                compile(mutated, target, 'exec')
            except SyntaxError:
                status = 'invalid'
            else:
                with open(target, 'w') as handle:
                    handle.write(mutated)
        if status is None:
            plugins = [Select(request['tests'])] if request.get('tests') is not None else []
            tracer = None
            if request.get('trace'):
                tracer = LineTracer(os.path.join(os.path.realpath(copy), 'plugins') + os.sep)
                plugins.append(tracer)
            old_out, old_err = sys.stdout, sys.stderr
            log = open(os.path.join(copy, '.mutant-run.log'), 'w')
            sys.stdout = sys.stderr = log
            signal.alarm(int(timeout * (20 if request.get('trace') else 1)))   # the trace runs every test
            try:
                rc = pytest.main(['-x', '-q', '-p', 'no:cacheprovider'] + request['files'], plugins=plugins)
            except _Hang:
                rc = 1
            finally:
                signal.alarm(0)
                sys.stdout, sys.stderr = old_out, old_err
                log.close()
                with open(target, 'w') as handle:
                    handle.write(original)
                for name in [name for name in sys.modules if name not in modules]:
                    del sys.modules[name]
                sys.path[:] = path
                sys.meta_path[:] = meta_path
            rc = int(rc)
            status = {0: 'survived', 1: 'killed', 5: 'survived'}.get(rc, 'error')
            if tracer is not None:
                with open(os.path.join(copy, '.mutant-run.log')) as handle:
                    output = handle.read()
                real_copy = os.path.realpath(copy) + os.sep
                lines_by_test = dict((test, [item.replace(real_copy, '', 1) for item in lines])
                                     for test, lines in tracer.by_test.items())
                answer = {'status': status, 'output': output[-5000:], 'lines': lines_by_test}
                sys.__stdout__.write(json.dumps(answer) + '\n')
                sys.__stdout__.flush()
                continue
        sys.__stdout__.write(json.dumps({'status': status, 'rc': rc}) + '\n')
        sys.__stdout__.flush()
    return 0


class Worker(object):
    """The orchestrator's handle on one worker process and its copy of the collection."""

    def __init__(self, base, files, tests, timeout):
        self.copy = make_copy(base, files)
        self.tests = tests
        self.timeout = timeout
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

    def trace(self):
        """Run every test once, unmutated; returns (status, {test: ['file:line', ...]})."""
        answer = self.ask({'path': self.tests[0], 'files': self.tests, 'trace': True})
        if answer['status'] != 'survived':
            print(answer.get('output', ''))
        return answer['status'], answer.get('lines', {})

    def run(self, mutant, tests):
        files = set(test.split('::')[0] for test in tests)       # collect only the files with covering tests
        request = {'path': mutant.path, 'start': mutant.start, 'end': mutant.end, 'replacement': mutant.replacement,
                   'files': [name for name in ordered_tests(self.tests, mutant.path) if name in files],
                   'tests': tests}
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


def covering_tests(mutant, lines_by_test, module_level):
    """Tests that execute a line of the mutant; for module-level code (run at import) every test that
    executes any line of its file."""
    if mutant.path in module_level and mutant.line in module_level[mutant.path]:
        prefix = mutant.path + ':'
        return sorted(test for test, lines in lines_by_test.items() if any(x.startswith(prefix) for x in lines))
    wanted = set('%s:%d' % (mutant.path, line) for line in range(mutant.line, mutant.end_line + 1))
    return sorted(test for test, lines in lines_by_test.items() if wanted.intersection(lines))


def module_level_lines(path):
    """Lines of ``path`` that run at import time (outside any function): module statements, the statements of
    class bodies (``TRANSFERS_FILES = False`` in an action plugin) and the decorators and default values of their
    functions (``attempted=False`` on the second line of a wrapped ``def``), which no test executes while it runs."""
    with open(os.path.join(REPO, path)) as handle:
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
    parser.add_argument('paths', nargs='*', help='Python files or directories to mutate')
    parser.add_argument('--tests', nargs='+', default=None,
                        help='test files to run per mutant (default: tests/unit/plugins/**/test_*.py but %s)'
                        % ', '.join(EXCLUDED_TESTS))
    parser.add_argument('--jobs', type=int, default=1, help='parallel workers (default 1: machines are shared)')
    parser.add_argument('--timeout', type=float, default=120, help='seconds per mutant run before it counts as a hang')
    parser.add_argument('--fail-under', type=float, default=None,
                        help='exit 1 when the kill rate of any mutated file or directory is below this percentage')
    parser.add_argument('--list', action='store_true', help='only list the mutants')
    parser.add_argument('--only', action='append', default=[], help='only mutants at FILE:LINE (repeatable)')
    parser.add_argument('--json', help='write every mutant and its status to this file')
    parser.add_argument('--verbose', action='store_true', help='one line per mutant')
    parser.add_argument('--worker', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker_main(args.worker, args.timeout)
    if not args.paths:
        parser.error('name the files or directories to mutate')

    files = tracked_files()
    mutants = []
    for path in python_files(args.paths, files):
        mutants.extend(find_mutants(path))
    if args.only:
        mutants = [m for m in mutants if m.key() in args.only]
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
        tests = args.tests or default_tests()
        workers = [Worker(os.path.join(base, 'w%d' % index), files, tests, args.timeout)
                   for index in range(max(1, args.jobs))]
        status, lines_by_test = workers[0].trace()
        if status != 'survived' or not lines_by_test:
            print('the unit tests do not pass without a mutant (%s): nothing to measure' % status)
            return 2
        print('%d tests traced in %.0f s; %d mutants' % (len(lines_by_test), time.time() - started, len(mutants)))
        module_level = dict((path, module_level_lines(path)) for path in set(m.path for m in mutants))
        for mutant in mutants:
            mutant.tests = covering_tests(mutant, lines_by_test, module_level)
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
