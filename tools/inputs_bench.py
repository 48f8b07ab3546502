#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test): what checking the run's inputs costs the controller per host, as ratios.

Usage (from the repo root, after make setup):
    python3 tools/inputs_bench.py [--hosts 64] [--runs 3] [--before <git revision>]

One-play runs of ansible-playbook over --hosts local hosts (connection local, no facts) with the gpu_tray_*
variables of an example inventory (group and host vars), run and measured the way tools/prep_bench.py runs its
plays (its ``median_run``: controller CPU seconds of the process tree, user + system, median of --runs samples):

  no task              the start-up, subtracted from the others
  set_fact per host    one ansible.builtin.set_fact with a builtin filter on every host (the cost of one task per host)
  check_inputs         the action gpu_tray.cluster.check_inputs, run_once (playbooks/*.yml run it first)
  before               with --before REV: the input checks as that revision ran them (``include_role`` of
                       gpu_tray.cluster.preflight ``tasks_from: inputs``: include_vars and three tasks per host), from
                       ``git archive REV`` in a temporary collections directory ahead of .collections

Printed per host, start-up subtracted, and as ratios: check_inputs / set_fact per host, before / check_inputs.
docs/performance.md keeps the figures.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import prep_bench
from ansible_env import COLLECTIONS

ROOT = prep_bench.ROOT
GROUP_VARS = """gpu_tray_platform: rke2-vr200
gpu_tray_recipe: vr200-rke2-ubuntu-training
gpu_tray_pkey: "0x8001"
gpu_tray_report_dir: /var/tmp/gpu-tray-report
gpu_tray_reboot_group_by: rack
gpu_tray_reboot_batch: 2
gpu_tray_reboot_timeout: 1800
gpu_tray_bmc_required: true
gpu_tray_bmc_username: admin
gpu_tray_bmc_password: secret
gpu_tray_bundle_format: [helmfile]
gpu_tray_validate_phases: [readiness, deployment, trays]
"""
PLAYS = {
    'no task': '  tasks: []\n',
    'set_fact per host': ('  tasks:\n    - name: One builtin filter per host\n      ansible.builtin.set_fact:\n'
                          '        result: "{{ [inventory_hostname] | ansible.builtin.to_json }}"\n'),
    'check_inputs': ('  tasks:\n    - name: Check the run\'s inputs\n      gpu_tray.cluster.check_inputs:\n'
                     '      run_once: true\n'),
    'before': ('  tasks:\n    - name: Check the run\'s inputs (before)\n      ansible.builtin.include_role:\n'
               '        name: gpu_tray.cluster.preflight\n        tasks_from: inputs\n'),
}


def write(work, hosts):
    """The inventory (group_vars, one bmc address per host) and one playbook per entry of PLAYS."""
    inventory = work / 'inventory'
    (inventory / 'group_vars').mkdir(parents=True)
    (inventory / 'group_vars' / 'gpu_trays.yml').write_text('---\n' + GROUP_VARS)
    (inventory / 'hosts.yml').write_text(
        'all:\n  vars:\n    ansible_connection: local\n    ansible_python_interpreter: %s\n'
        '  children:\n    gpu_trays:\n      hosts:\n' % sys.executable
        + ''.join('        t%03d: {rack: r%d, gpu_tray_bmc_address: 10.0.%d.%d}\n'
                  % (index, index // 18, index // 250, index % 250 + 1) for index in range(hosts)))
    plays = {}
    for label, tasks in PLAYS.items():
        plays[label] = work / (label.replace(' ', '_') + '.yml')
        plays[label].write_text('- hosts: gpu_trays\n  gather_facts: false\n' + tasks)
    return inventory / 'hosts.yml', plays


def before_tree(work, revision):
    """``git archive revision`` as ansible_collections/gpu_tray/cluster under work; the collections path to use."""
    base = work / 'before'
    target = base / 'ansible_collections' / 'gpu_tray' / 'cluster'
    target.mkdir(parents=True)
    archive = subprocess.run(['git', 'archive', revision], cwd=str(ROOT), capture_output=True, check=True).stdout
    subprocess.run(['tar', '-x', '-C', str(target)], input=archive, check=True)
    return '%s%s%s' % (base, os.pathsep, ROOT / '.collections')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--hosts', type=int, default=64, help='local hosts in the play')
    ap.add_argument('--runs', type=int, default=3, help='samples of each play (median used)')
    ap.add_argument('--before', help='a git revision whose input checks to measure as well (include_role inputs)')
    args = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix='gpu-tray-inputs-bench-'))
    cpu = {}
    try:
        inventory, plays = write(work, args.hosts)
        for label, play in plays.items():
            env_extra = None
            if label == 'before':
                if not args.before:
                    continue
                env_extra = {COLLECTIONS: before_tree(work, args.before)}
            prep_bench.median_run(args.runs, label, inventory, play, env_extra=env_extra)
            cpu[label] = prep_bench.LAST['cpu']
    finally:
        shutil.rmtree(str(work), ignore_errors=True)
    per_host = dict((label, (cpu[label] - cpu['no task']) / args.hosts * 1000.0) for label in cpu if label != 'no task')
    for label, ms in per_host.items():
        print('%-20s %7.1f CPU ms per host (start-up subtracted)' % (label, ms))
    print('check_inputs / set_fact per host: %.2f' % (per_host['check_inputs'] / per_host['set_fact per host']))
    if 'before' in per_host:
        print('before / check_inputs: %.1f' % (per_host['before'] / per_host['check_inputs']))
    return 0


if __name__ == '__main__':
    sys.exit(main())
