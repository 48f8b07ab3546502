#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): what a task that uses a gpu_tray.cluster filter costs the controller, per host, as a ratio.

Usage (from the repo root, after make setup): python3 tools/filter_bench.py [--hosts 32] [--runs 3]

Ansible runs every task of every host in a fresh worker process, and ansible-core resolves a collection's filter
by loading every filter file of the collection (plugins/loader.py, Jinja2Loader.get_with_context) from source:
the collection loader compiles collection code without a bytecode cache. So each task that uses one of our
filters pays, per host, for compiling every filter file and whatever those files import at their top.

Three one-play runs of ansible-playbook over --hosts local hosts (connection local, no facts), CPU seconds of the
process tree (user + system, getrusage RUSAGE_CHILDREN): no task (the start-up), one set_fact with a builtin filter
(``to_json``) and one set_fact with a gpu_tray.cluster filter (``unknown_variables``). Printed, the median of --runs
samples, per host and task, start-up subtracted:

  collection filter / builtin filter    CPU of the task with our filter / the same task with a builtin one

docs/performance.md keeps the figures.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TASKS = {
    'no task': None,
    'builtin filter': "{{ names | ansible.builtin.to_json }}",
    'collection filter': "{{ names | gpu_tray.cluster.unknown_variables(known) }}",
}


def collections_root():
    root = os.path.join(REPO, '.collections')
    if not os.path.isdir(os.path.join(root, 'ansible_collections', 'gpu_tray', 'cluster')):
        sys.exit('%s has no ansible_collections/gpu_tray/cluster: run make setup first' % root)
    return root


def write(work, hosts):
    with open(os.path.join(work, 'hosts.ini'), 'w') as handle:
        handle.write('[trays]\n' + ''.join('t%03d\n' % index for index in range(hosts)))
        handle.write('[trays:vars]\nansible_connection=local\nansible_python_interpreter=%s\n' % sys.executable)
    for label, template in TASKS.items():
        tasks = '  tasks: []\n' if template is None else (
            '  tasks:\n    - name: One filter\n      ansible.builtin.set_fact:\n        result: "%s"\n' % template)
        with open(os.path.join(work, label.replace(' ', '_') + '.yml'), 'w') as handle:
            handle.write('- hosts: trays\n  gather_facts: false\n  vars:\n    names: [gpu_tray_platform]\n'
                         '    known: [gpu_tray_platform]\n' + tasks)


def cpu_of(argv, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--hosts', type=int, default=32, help='local hosts in the play')
    ap.add_argument('--runs', type=int, default=3, help='samples of each play (median used)')
    args = ap.parse_args()
    playbook = os.path.join(os.path.dirname(sys.executable), 'ansible-playbook')
    work = tempfile.mkdtemp(prefix='gpu-tray-filter-bench-')
    try:
        write(work, args.hosts)
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_root(), ANSIBLE_HOME=os.path.join(work, 'home'),
                   ANSIBLE_LOCAL_TEMP=os.path.join(work, 'tmp'), ANSIBLE_FORKS='5')
        cpu = {}
        for label in TASKS:
            argv = [playbook, '-i', os.path.join(work, 'hosts.ini'), os.path.join(work, label.replace(' ', '_') + '.yml')]
            cpu[label] = statistics.median(cpu_of(argv, env) for _ in range(args.runs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_host = dict((label, (cpu[label] - cpu['no task']) / args.hosts * 1000.0) for label in TASKS if label != 'no task')
    print('start-up (no task)   %6.2f CPU s for %d hosts' % (cpu['no task'], args.hosts))
    for label, ms in per_host.items():
        print('%-20s %6.1f CPU ms per host (median of %d runs)' % (label, ms, args.runs))
    print('collection filter / builtin filter: %.2f' % (per_host['collection filter'] / per_host['builtin filter']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
