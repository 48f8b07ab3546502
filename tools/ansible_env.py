#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""An Ansible environment for this checkout: the one place the harness names it.

Every test, lab driver and tool that runs Ansible (ansible-playbook, ansible, ansible-doc, molecule, ansible-runner)
takes its environment from here: the checkout's ansible.cfg, the collection on the path (<root>/.collections, where
ansible_collections/gpu_tray/cluster is a link to the checkout), ANSIBLE_HOME, the venv's bin first on PATH, no
colour. Pure standard library, so tests, tools and shell scripts can all use it:

    from ansible_env import checkout_env               # tests/conftest.py puts tools/ on sys.path
    env = checkout_env(home=str(tmp_path / 'home'), callback='ansible.builtin.json')

    eval "$(python3 tools/ansible_env.py --shell)"      # shell scripts: export lines
    python3 tools/ansible_env.py --only collections -- ansible-galaxy collection list   # one command in it

The parameters are the differences between the call sites; each says what it sets (True: this checkout's value,
a string: that value, False/None: the variable is left as the base environment has it).
"""

import argparse
import fnmatch
import os
import shlex
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)          # the venv's bin when run from .venv/bin/python or .venv/bin/pytest

CONFIG = 'ANSIBLE_CONFIG'
COLLECTIONS = 'ANSIBLE_COLLECTIONS_PATH'
HOME = 'ANSIBLE_HOME'
# what ties a process to one checkout's collection and configuration (tools/mutate.py drops them for its copies)
CHECKOUT_VARS = (COLLECTIONS, CONFIG, HOME)
# --only's short names (so a shell script need not spell the variables)
SHORT = {'collections': COLLECTIONS, 'config': CONFIG, 'home': HOME}


def _value(option, default):
    if option is True:
        return default
    if isinstance(option, (list, tuple)):
        return os.pathsep.join(str(item) for item in option)
    return str(option)


def collections_entries(environ=None):
    """The entries of the collections search path in ``environ`` (os.environ), in order, empty ones dropped."""
    environ = os.environ if environ is None else environ
    return [entry for entry in environ.get(COLLECTIONS, '').split(os.pathsep) if entry]


def checkout_env(root=None, base=None, collections=True, config=True, home=True, local_temp=None, bin_path=False,
                 nocolor=True, force_color_off=False, callback=None, keep=False, without=(), **extra):
    """The environment (a new dict) to run Ansible from the checkout at ``root`` (this one).

    ``base``: the environment to start from (os.environ); ``without``: names or shell patterns (``K8S_AUTH_*``)
    removed from it first. ``collections``: the collections path (True: <root>/.collections; a list is joined with
    os.pathsep); ``config``: ANSIBLE_CONFIG (True: <root>/ansible.cfg); ``home``: ANSIBLE_HOME (True:
    <root>/.ansible); ``keep``: those three only where ``base`` has none (a caller's own tree wins).
    ``local_temp``: ANSIBLE_LOCAL_TEMP (True: <home>/tmp); ``bin_path``: the venv's bin (True: the running
    interpreter's) put first on PATH; ``nocolor``: ANSIBLE_NOCOLOR=1; ``force_color_off``: ANSIBLE_FORCE_COLOR=0;
    ``callback``: ANSIBLE_STDOUT_CALLBACK. ``extra``: more variables, set last; a value None removes one."""
    root = str(root or ROOT)
    env = dict(os.environ if base is None else base)
    for name in list(env):
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in without):
            del env[name]
    own = {}
    if config:
        own[CONFIG] = _value(config, os.path.join(root, 'ansible.cfg'))
    if home:
        own[HOME] = _value(home, os.path.join(root, '.ansible'))
    if collections:
        own[COLLECTIONS] = _value(collections, os.path.join(root, '.collections'))
    for name, value in own.items():
        if keep:
            env.setdefault(name, value)
        else:
            env[name] = value
    if local_temp:
        env['ANSIBLE_LOCAL_TEMP'] = _value(local_temp, os.path.join(env.get(HOME, ''), 'tmp'))
    if bin_path:
        env['PATH'] = '%s%s%s' % (_value(bin_path, BIN), os.pathsep, env.get('PATH', ''))
    if nocolor:
        env['ANSIBLE_NOCOLOR'] = '1'
    if force_color_off:
        env['ANSIBLE_FORCE_COLOR'] = '0'
    if callback:
        env['ANSIBLE_STDOUT_CALLBACK'] = callback
    env.update(extra)
    return dict((name, value) for name, value in env.items() if value is not None)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    command = []
    if '--' in argv:
        at = argv.index('--')
        argv, command = argv[:at], argv[at + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 usage='%(prog)s [options] (--shell | -- COMMAND [ARG...])')
    ap.add_argument('--shell', action='store_true', help='print `export NAME=value` lines of what it sets')
    ap.add_argument('--root', help='the checkout (default: the one this file is in)')
    ap.add_argument('--collections', help='the collections path (default: <root>/.collections)')
    ap.add_argument('--only', action='append', metavar='NAME', help='set only these variables (repeatable; collections, config, home: theirs)')
    ap.add_argument('--no-nocolor', action='store_true', help='leave ANSIBLE_NOCOLOR alone')
    ap.add_argument('--set', action='append', default=[], metavar='NAME=VALUE', help='one more variable')
    args = ap.parse_args(argv)
    if args.shell == bool(command):
        ap.error('give --shell or -- COMMAND')
    extra = dict(item.split('=', 1) for item in args.set)
    env = checkout_env(root=args.root, base={}, collections=args.collections or True, nocolor=not args.no_nocolor,
                       **extra)
    if args.only:
        names = [SHORT.get(name, name) for name in args.only]
        env = dict((name, env[name]) for name in names if name in env)
    if args.shell:
        for name in sorted(env):
            print('export %s=%s' % (name, shlex.quote(env[name])))
        return 0
    os.execvpe(command[0], command, dict(os.environ, **env))
    return 127   # not reached


if __name__ == '__main__':
    sys.exit(main())
