# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preparing roles' inputs as Ansible makes them, from a subprocess (Ansible's collection loader must own the
``ansible_collections`` package there, which the unit tests' own process imports plainly).

``probe(cases)`` runs this file as a script; per case (``host_vars`` of one tray in group gpu_trays and in ``groups``,
``extra_vars``):

* ``readahead``: per preparing role, what the tray_plan action's prefetch reads ahead with -
  plugin_utils/role_inputs.resolve over the variables of a task of another play on the host (the preflight's);
* ``role``: per preparing role, what the role's own tray_plan task (planner <role>, entry main) hands its planner -
  its ``inputs`` argument templated with the variables Ansible's variable manager gives that task in a play that runs
  the role (``roles: [gpu_tray.cluster.<role>]``), as the task executor does;
* ``inputs_arg``: the ``inputs`` argument of every tray_plan task of the role, as written.
"""

import json
import os
import subprocess
import sys

# tools/ansible_env.py: tests/conftest.py puts tools/ on sys.path in pytest; this file also runs as a script
_TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'tools')
if _TOOLS not in sys.path:
    sys.path.append(_TOOLS)
from ansible_env import checkout_env  # noqa: E402  (tools/ on sys.path above)

ROLES = ('kernel_tuning', 'imex', 'rdma_modules', 'rdma_netns')


def collections_root():
    """The directory above ansible_collections that this process imports gpu_tray.cluster from."""
    import ansible_collections.gpu_tray.cluster as collection
    return os.path.dirname(os.path.dirname(os.path.dirname(list(collection.__path__)[0])))


def probe(cases, root=None):
    """Run the probe in a subprocess; the answer per case (see the module docstring)."""
    collections_root_ = root or collections_root()
    env = checkout_env(collections=collections_root_, config=False, home=False)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), collections_root_], input=json.dumps(cases),
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError('roleprobe failed:\n%s%s' % (proc.stdout[-3000:], proc.stderr[-3000:]))
    return json.loads(proc.stdout)


def _tasks(blocks):
    for block in blocks:
        for item in block.block + block.rescue + block.always:
            if hasattr(item, 'block'):
                yield from _tasks([item])
            else:
                yield item


def _plain(value):
    return json.loads(json.dumps(value, default=str))


def _main(collections_root):
    from ansible.plugins.loader import init_plugin_loader
    init_plugin_loader([collections_root])

    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.playbook.play import Play
    from ansible.template import Templar
    from ansible.vars.manager import VariableManager

    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import role_inputs

    out = []
    for case in json.load(sys.stdin):
        loader = DataLoader()
        inventory = InventoryManager(loader=loader, sources=[])
        inventory.add_group('gpu_trays')
        inventory.add_host('tray01', group='gpu_trays')
        for group in case.get('groups', []):
            inventory.add_group(group)
            inventory.add_host('tray01', group=group)
        host = inventory.get_host('tray01')
        for key, value in case.get('host_vars', {}).items():
            host.set_variable(key, value)
        manager = VariableManager(loader=loader, inventory=inventory)
        manager._extra_vars = dict(case.get('extra_vars', {}))
        other = Play.load({'hosts': 'tray01', 'gather_facts': False,
                           'tasks': [{'name': 'the preflight', 'ansible.builtin.debug': {'msg': 'x'}}]},
                          variable_manager=manager, loader=loader)
        task = list(_tasks(other.compile()))[-1]
        task_vars = manager.get_vars(play=other, host=host, task=task)
        answer = {'readahead': {}, 'role': {}, 'inputs_arg': {}}
        for role in ROLES:
            answer['readahead'][role] = _plain(role_inputs.resolve(Templar(loader=loader, variables=task_vars), loader,
                                                                   role, task_vars))
            play = Play.load({'hosts': 'tray01', 'gather_facts': False, 'roles': ['gpu_tray.cluster.' + role]},
                             variable_manager=manager, loader=loader)
            plans = [task for task in _tasks(play.compile()) if task.action == 'gpu_tray.cluster.tray_plan']
            answer['inputs_arg'][role] = [str(task.args.get('inputs')) for task in plans]
            # the plan that reads (a later fresh one re-reads after the writes, whatever was read ahead)
            first = [task for task in plans if task.args.get('planner') == role and not task.args.get('fresh')
                     and task.args.get('entry', 'main') == 'main']
            if len(first) != 1:
                raise SystemExit('role %s: %d tray_plan tasks of planner %s, entry main, not fresh'
                                 % (role, len(first), role))
            role_vars = manager.get_vars(play=play, host=host, task=first[0])
            answer['role'][role] = _plain(Templar(loader=loader, variables=role_vars).template(first[0].args['inputs']))
        out.append(answer)
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    _main(sys.argv[1])
