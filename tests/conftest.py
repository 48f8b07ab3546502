# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which tests use the machine's one rehearsal lab and one test cluster: the ``machine`` mark.

`make test` (tools/run-tests.sh) runs the suite as pytest sessions side by side ("parts", selected by these marks):
the static tools (``static``, carried by the tests that run them), the offline tests (``not machine and not static``),
the lab's (``lab and not cluster``) then those that use the lab and a test cluster of their own (``lab and cluster``),
beside the test cluster's (``cluster and not lab``). The ``machine`` mark is set here, not by hand, so a new test file
cannot be forgotten:

- every test under tests/lab, tests/molecule and tests/unit/lab_infra;
- every test of a tests/cluster module any of whose tests asks for the ``kcluster`` fixture (directly or through
  ``kubeconfig``/``k8s_api``): the module's fixtures stay in one process.

Each ``machine`` test also says which of the two it uses, so that tools/run-tests.sh can run the tests of the one
beside the tests of the other: ``lab`` (tests/lab, tests/molecule, tests/unit/lab_infra) and ``cluster`` (the
tests/cluster modules above, and a tests/lab module that starts the test cluster itself - its source names
``kcluster`` or ``clusterhelpers``). A test marked both runs after the lab's, on a second test cluster.

It also puts tools/ on sys.path, so every test module and helper can ``from ansible_env import checkout_env``.
"""

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
# tools/ on sys.path once, for the one Ansible environment of the checkout (tools/ansible_env.py) every test uses;
# appended, so no tool module shadows anything a test imports
TOOLS = str(HERE.parent / 'tools')
if TOOLS not in sys.path:
    sys.path.append(TOOLS)
# whole directories that use the machine's one lab (trays, BMC emulators, molecule scenarios)
MACHINE_DIRS = ('lab', 'molecule', 'unit/lab_infra')


def pytest_configure(config):
    config.addinivalue_line('markers', 'machine: uses the machine\'s one lab or test cluster (set by tests/conftest.py)')
    config.addinivalue_line('markers', 'lab: a machine test that uses the rehearsal lab (set by tests/conftest.py)')
    config.addinivalue_line('markers', 'cluster: a machine test that uses the test cluster (set by tests/conftest.py)')
    config.addinivalue_line('markers', 'static: runs one of the static tools over the whole collection (ansible-test sanity, '
                            'ansible-lint, galaxy-importer, antsibull-docs): its own part of make test, one process')


def machine_path(path, cluster_modules):
    """Whether the test module at ``path`` needs the machine's lab or test cluster (see the module docstring)."""
    try:
        rel = path.relative_to(HERE).as_posix()
    except ValueError:
        return False
    if any(rel.startswith(d + '/') for d in MACHINE_DIRS):
        return True
    return rel.startswith('cluster/') and path in cluster_modules


@pytest.hookimpl(tryfirst=True)   # before pytest's own -m selection, which reads the mark
def pytest_collection_modifyitems(config, items):
    paths = [pathlib.Path(str(item.fspath)).resolve() for item in items]
    cluster_modules = set(path for item, path in zip(items, paths) if 'kcluster' in getattr(item, 'fixturenames', ()))
    starts_cluster = {}
    for item, path in zip(items, paths):
        if machine_path(path, cluster_modules):
            item.add_marker(pytest.mark.machine)
            rel = path.relative_to(HERE).as_posix()
            if rel.startswith('cluster/'):
                item.add_marker(pytest.mark.cluster)
                continue
            item.add_marker(pytest.mark.lab)
            if path not in starts_cluster:
                source = path.read_text().lower()
                starts_cluster[path] = 'kcluster' in source or 'clusterhelpers' in source
            if starts_cluster[path]:
                item.add_marker(pytest.mark.cluster)
