#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): what a task that uses a gpu_tray.cluster filter costs the controller, per host, as a ratio.

Usage (from the repo root, after make setup): python3 tools/filter_bench.py [--hosts 32] [--runs 3]

Ansible runs every task of every host in a fresh worker process, and ansible-core resolves a collection's filter
by loading every filter file of the collection (plugins/loader.py, Jinja2Loader.get_with_context) from source:
the collection loader compiles collection code without a bytecode cache. So each task that uses one of our
filters pays, per host, for compiling every filter file and whatever those files import at their top.

Three one-play runs of ansible-playbook over --hosts local hosts (connection local, no facts), run and measured
the way tools/prep_bench.py runs its plays (its ``median_run``: controller CPU seconds of the process tree, user +
system, median of --runs samples): no task (the start-up), one set_fact with a builtin filter (``to_json``) and one
set_fact with a gpu_tray.cluster filter (``role_result``; ``unknown_variables`` until that filter was removed).
Printed, per host and task, start-up subtracted:

  collection filter / builtin filter    CPU of the task with our filter / the same task with a builtin one

docs/performance.md keeps the figures.
"""

import argparse
import pathlib
import shutil
import sys
import tempfile

import prep_bench

TASKS = {
    'no task': None,
    'builtin filter': "{{ names | ansible.builtin.to_json }}",
    'collection filter': "{{ plan | gpu_tray.cluster.role_result([]) }}",
}


def write(work, hosts):
    """The inventory and one playbook per entry of TASKS; returns (inventory, {label: playbook})."""
    inventory = work / 'hosts.ini'
    inventory.write_text('[trays]\n' + ''.join('t%03d\n' % index for index in range(hosts)) +
                         '[trays:vars]\nansible_connection=local\nansible_python_interpreter=%s\n' % sys.executable)
    plays = {}
    for label, template in TASKS.items():
        tasks = '  tasks: []\n' if template is None else (
            '  tasks:\n    - name: One filter\n      ansible.builtin.set_fact:\n        result: "%s"\n' % template)
        plays[label] = work / (label.replace(' ', '_') + '.yml')
        plays[label].write_text('- hosts: trays\n  gather_facts: false\n  vars:\n    names: [gpu_tray_platform]\n'
                                '    plan: {role: x, reboot_required: false, reason: "", verify: {}}\n' + tasks)
    return inventory, plays


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--hosts', type=int, default=32, help='local hosts in the play')
    ap.add_argument('--runs', type=int, default=3, help='samples of each play (median used)')
    args = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix='gpu-tray-filter-bench-'))
    try:
        inventory, plays = write(work, args.hosts)
        cpu = {}
        for label, play in plays.items():
            prep_bench.median_run(args.runs, label, inventory, play)
            cpu[label] = prep_bench.LAST['cpu']
    finally:
        shutil.rmtree(str(work), ignore_errors=True)
    per_host = dict((label, (cpu[label] - cpu['no task']) / args.hosts * 1000.0) for label in TASKS if label != 'no task')
    for label, ms in per_host.items():
        print('%-20s %6.1f CPU ms per host and task (start-up subtracted)' % (label, ms))
    print('collection filter / builtin filter: %.2f' % (per_host['collection filter'] / per_host['builtin filter']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
