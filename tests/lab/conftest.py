"""tests/lab: tests that boot rehearsal-lab trays (helpers in labtools.py). They need root."""
import os
import pathlib

import pytest


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="the lab needs root (mounts, network namespaces, systemd-nspawn)")
        for item in items:
            if pathlib.Path(str(item.fspath)).parent == pathlib.Path(__file__).parent:
                item.add_marker(skip)
