#!/usr/bin/env python3
"""make check: the loop before `make test` - the offline tests that touch what `git diff` changed, and lint of the
changed files, in a few minutes.

What changed: the files `git diff --name-only BASE` lists (BASE is HEAD: the work tree's uncommitted change; `--base
REV` for a branch's commits too) and the untracked files git does not ignore.

Which tests: a test file under tests/ is selected when it changed itself or when its source names, as a whole word,
  - a changed plugin (``plugins/<kind>/<name>.py`` -> ``<name>``), and every plugin or role that names that plugin
    in turn (one level: a change in ``plugin_utils/reboot_plan.py`` reaches the tests of the ``reboot_step`` action
    and of the ``rolling_reboot`` role, which use it);
  - a changed role (``roles/<role>/...`` -> ``<role>``), playbook (``playbooks/<name>.yml``), lab module
    (``lab/gpu_tray_lab/<name>.py``), tool (``tools/<name>``) or test helper (``tests/**/<name>.py``);
  - and a changed doc (``docs/``, ``README.md``) selects the tests that read the docs.
Only the offline tests run (``-m "not machine and not static"``): the lab's and the test cluster's, and the static
tools' whole-collection runs (ansible-test sanity, galaxy-importer), are `make test`'s.

Lint, of the changed files only: yamllint (``-s``) on YAML, ansible-lint (production profile) on changed roles and
playbooks, flake8 (pycodestyle at the 160 columns ansible-test's pep8 allows, and pyflakes) on Python, shellcheck on shell.

Usage: tools/check.py [--base REV] [--list] [pytest arguments...]   (--list: print the selection, run nothing)
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = ROOT / '.venv' / 'bin'
OFFLINE = 'not machine and not static'
DOC_TESTS = ('tests/quality/test_docs.py', 'tests/quality/test_doc_references.py', 'tests/quality/test_docsite.py')


def git(*args):
    return subprocess.run(['git'] + list(args), cwd=ROOT, capture_output=True, text=True, check=True).stdout


def changed_files(base):
    names = set(git('diff', '--name-only', base).split()) | set(git('ls-files', '-o', '--exclude-standard').split())
    return sorted(n for n in names if (ROOT / n).is_file())


def test_files():
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / 'tests').rglob('test_*.py')
                  if not p.relative_to(ROOT).as_posix().startswith('tests/vm/'))


def plugin_name(name):
    """How a test names a plugin: imported (``import x``, ``plugin_utils.x``, ``, x``), by FQCN
    (``gpu_tray.cluster.x``) or by path (``/x.py``)."""
    return r'(?:\.|/|\bimport |, )%s\b' % re.escape(name)


def word(name):
    return r'(?<![\w-])%s(?![\w-])' % re.escape(name)


def patterns(path):
    """{regex: what it stands for} by which a test's source names the changed file ``path``."""
    parts = pathlib.PurePosixPath(path).parts
    stem, name = pathlib.PurePosixPath(path).stem, pathlib.PurePosixPath(path).name
    if parts[0] == 'plugins' and path.endswith('.py'):
        found = {plugin_name(stem): path}
        for user in users(stem):
            found[user[0]] = '%s (uses %s)' % (user[1], path)
        return found
    if parts[0] == 'roles' and len(parts) > 2:
        return {word(parts[1]): path}
    if parts[0] == 'playbooks' and path.endswith('.yml'):
        return {word(name): path}
    if parts[0] in ('lab', 'tools', 'tests', 'molecule') and path.endswith(('.py', '.sh', '.yml')):
        found = {word(name): path}
        if path.endswith('.py'):       # a helper module is named where it is imported
            found[r'(?:^|\n)\s*(?:from|import) %s\b' % re.escape(stem)] = path
        return found
    if parts[0] == 'meta' or path in ('galaxy.yml', 'requirements.yml', 'ansible.cfg'):
        return {word(name): path}
    return {}


def users(name):
    """[(regex, what)] for the plugins that import the plugin ``name`` and the roles that name it (one level up the
    call chain: what a test of those runs goes through the changed file)."""
    found = []
    imports = re.compile(r'^\s*(?:from|import) .*\b%s\b' % re.escape(name), re.M)
    mentions = re.compile(r'\b%s\b' % re.escape(name))
    for path in sorted((ROOT / 'plugins').rglob('*.py')):
        if path.stem != name and imports.search(path.read_text()):
            found.append((plugin_name(path.stem), path.relative_to(ROOT).as_posix()))
    for role in sorted((ROOT / 'roles').iterdir()):
        if any(mentions.search(p.read_text()) for p in role.rglob('*.yml')):
            found.append((word(role.name), 'roles/%s' % role.name))
    return found


def select(changed):
    """{test file: why} for the changed files."""
    names = {}
    for path in changed:
        for regex, why in patterns(path).items():
            names.setdefault(regex, why)
    chosen = {}
    for test in test_files():
        if test in changed:
            chosen[test] = 'changed'
            continue
        text = (ROOT / test).read_text()
        for regex, why in sorted(names.items()):
            if re.search(regex, text):
                chosen[test] = 'names %s' % why
                break
    if any(p.startswith('docs/') or p == 'README.md' for p in changed):
        for test in DOC_TESTS:
            chosen.setdefault(test, 'reads the docs')
    return chosen


def lint_commands(changed):
    yml = [p for p in changed if p.endswith(('.yml', '.yaml'))]
    py = [p for p in changed if p.endswith('.py')]
    sh = [p for p in changed if p.endswith('.sh') or p in ('.ci/run', 'lab/lab', 'tests/cluster/kcluster')]
    ansible = sorted({'/'.join(p.split('/')[:2]) for p in yml if p.startswith('roles/')}
                     | {p for p in yml if p.startswith('playbooks/')})
    commands = []
    if yml:
        commands.append([str(BIN / 'yamllint'), '-s'] + yml)
    if ansible:
        commands.append([str(BIN / 'ansible-lint'), '--offline', '--profile', 'production', '--nocolor'] + ansible)
    if py:      # pycodestyle + pyflakes, honouring `# noqa` (the tests' fixture imports carry F811)
        # the codes ansible-test's pep8 sanity ignores (its current-ignore.txt): a plugin's imports follow its
        # DOCUMENTATION strings (E402), as ansible-test expects them
        commands.append([str(BIN / 'flake8'), '--max-line-length=160', '--extend-ignore=E402,W503,W504,E741,E203,E701,E704'] + py)
    if sh:
        commands.append(['shellcheck', '--severity=style'] + sh)
    return commands


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--base', default='HEAD')
    parser.add_argument('--list', action='store_true')
    args, pytest_args = parser.parse_known_args(argv)
    started = time.monotonic()
    changed = changed_files(args.base)
    if not changed:
        print('make check: nothing changed against %s' % args.base)
        return 0
    chosen = select(changed)
    print('make check: %d changed file(s) against %s; %d test file(s):' % (len(changed), args.base, len(chosen)))
    for test, why in sorted(chosen.items()):
        print('  %s  <- %s' % (test, why))
    if args.list:
        return 0
    sys.path.insert(0, str(ROOT / 'tools'))
    from ansible_env import checkout_env
    env = checkout_env(ROOT, bin_path=str(BIN))
    failed = []
    for command in lint_commands(changed):
        print('$ %s' % ' '.join(command[:4] + (['...'] if len(command) > 4 else [])), flush=True)
        if subprocess.run(command, cwd=ROOT, env=env).returncode != 0:
            failed.append(pathlib.Path(command[0]).name)
    if chosen:
        command = [str(BIN / 'pytest'), '-p', 'no:cacheprovider', '-q', '-m', OFFLINE] + sorted(chosen) + pytest_args
        if subprocess.run(command, cwd=ROOT, env=env).returncode not in (0, 5):
            failed.append('pytest')
    print('make check: %s in %d s%s' % ('FAILED (%s)' % ', '.join(failed) if failed else 'passed',
                                        time.monotonic() - started,
                                        '' if chosen else '; no offline test names what changed'))
    return 1 if failed else 0


if __name__ == '__main__':
    os.chdir(ROOT)
    sys.exit(main())
