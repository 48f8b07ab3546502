# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which tests may run beside which, when `make test` runs the suite on two pytest-xdist workers.

The machine has ONE rehearsal lab and ONE test cluster (docs/testing.md): every test that boots lab trays, runs
molecule, starts the lab's BMC emulators or uses the test cluster is put in one xdist group, ``machine``, which
`--dist loadgroup` hands whole to a single worker, in collection order (so module fixtures that bring a lab up stay
together, and the lab and cluster tests never overlap). The offline tests (units, quality, upstream, the offline
cluster files) go to the other worker meanwhile. A tests/cluster module is a machine module when any of its tests
asks for the ``kcluster`` fixture (directly or through ``kubeconfig``/``k8s_api``).

Without xdist (``pytest tests/unit``, the support matrix) the mark is inert.
"""

import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent
# whole directories that use the machine's one lab (trays, BMC emulators, molecule scenarios)
MACHINE_DIRS = ('lab', 'molecule', 'unit/lab_infra')
GROUP = 'machine'


def pytest_configure(config):
    config.addinivalue_line('markers', 'xdist_group(name): tests of one group run in one pytest-xdist worker')


def machine_item(item, cluster_modules):
    """Whether ``item`` needs the machine's lab or test cluster (see the module docstring)."""
    path = pathlib.Path(str(item.fspath)).resolve()
    try:
        rel = path.relative_to(HERE).as_posix()
    except ValueError:
        return False
    if any(rel == d or rel.startswith(d + '/') for d in MACHINE_DIRS):
        return True
    return rel.startswith('cluster/') and path in cluster_modules


@pytest.hookimpl(tryfirst=True)   # before xdist's own hook, which reads the mark
def pytest_collection_modifyitems(config, items):
    cluster_modules = set(pathlib.Path(str(item.fspath)).resolve() for item in items
                          if 'kcluster' in getattr(item, 'fixturenames', ()))
    for item in items:
        if machine_item(item, cluster_modules):
            item.add_marker(pytest.mark.xdist_group(GROUP))
