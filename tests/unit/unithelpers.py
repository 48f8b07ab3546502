# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by the unit tests (one place for the fixture directory and the containerd tree)."""

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
