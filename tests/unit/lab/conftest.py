# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""pytest fixtures of the lab hardware tests (helpers live in labtray.py)."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from labtray import Tray  # noqa: E402


@pytest.fixture
def make_tray(tmp_path):
    counter = [0]

    def make(platform='nvke-gb200', faults=(), boot=True):
        counter[0] += 1
        root = tmp_path / ('tray%d' % counter[0])
        root.mkdir()
        tray = Tray(root, platform, faults)
        if boot:
            tray.boot()
        return tray
    return make
