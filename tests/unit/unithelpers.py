# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the unit tests (one place for the fixture directory, the containerd tree and the mocks an
action plugin runs on)."""

import os
import shutil
import sys

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')


def lab_fixtures():
    """lab/gpu_tray_lab/fixtures.py (stdlib only): the lab's formats of what a tray holds, where a unit test needs one
    (the multus kubeconfig)."""
    lab = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'lab')
    if lab not in sys.path:
        sys.path.insert(0, lab)
    from gpu_tray_lab import fixtures
    return fixtures


def fixture_path(*parts):
    return os.path.join(FIXTURES, *parts)


def containerd_tree(base, root_name, dropins=()):
    """``base/containerd/config.toml`` from fixture ``root_name`` plus ``conf.d/<dest>`` for each (src, dest).

    ``base`` is a directory (str or pathlib path). Returns (config path, conf.d path).
    """
    etc = os.path.join(str(base), 'containerd')
    confd = os.path.join(etc, 'conf.d')
    os.makedirs(confd)
    shutil.copy(fixture_path('containerd', root_name), os.path.join(etc, 'config.toml'))
    for src, dest in dropins:
        shutil.copy(fixture_path('containerd', src), os.path.join(confd, dest))
    return os.path.join(etc, 'config.toml'), confd


def write_toml(path, text):
    """Write a hand-made TOML file (for shapes no fixture has); returns the path."""
    path = str(path)
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path))
    with open(path, 'w') as handle:
        handle.write(text)
    return path


def action_plugin(module, args, connection=None, check_mode=False, loader=None, templar=None, action=None):
    """``module.ActionModule`` as the task executor builds it, on mocks: a task with ``args`` (no async, no diff;
    ``action`` its FQCN where the plugin reads it), ``connection``, a fresh PlayContext, ``loader`` and ``templar``
    (each a MagicMock unless given) and a mocked shared plugin loader."""
    from unittest.mock import MagicMock

    from ansible.playbook.play_context import PlayContext
    task = MagicMock()
    task.async_val, task.check_mode, task.diff, task.args = 0, check_mode, False, dict(args)
    if action is not None:
        task.action = action
    return module.ActionModule(task, MagicMock() if connection is None else connection, PlayContext(),
                               MagicMock() if loader is None else loader, MagicMock() if templar is None else templar,
                               MagicMock())


def target_connection(plugin):
    """The connection to the task's host, which ``plugin`` must never use (it runs on the controller): no remote
    temporary directory, and a command or a copied file fails the test."""
    from unittest.mock import MagicMock
    connection = MagicMock()
    connection._shell.tmpdir = None
    connection.exec_command.side_effect = AssertionError('%s ran a command on the target' % plugin)
    connection.put_file.side_effect = AssertionError('%s copied a file to the target' % plugin)
    return connection
