# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures for tests against the test Kubernetes cluster (tests/cluster/kcluster).

`kcluster` (session): reuses a cluster that is already up, otherwise builds the binaries if needed
(tests/cluster/build.sh, cached) and starts one; tears down only what it started.
It skips - with the reason printed in the terminal summary - only when the cluster truly cannot be
started on this machine: not Linux/x86-64, not root, or build.sh exits 75 (Debian mirror or PyPI
unreachable, not enough disk). With KCLUSTER_REQUIRE=1 (set this in CI) those cases fail instead of
skipping. Any other build failure, and a cluster that was built but does not come up, is always an
error, never a skip. Tear-down is checked: `kcluster down` must succeed and leave no process running.
"""

import os
import subprocess
import sys

import pytest

from clusterhelpers import KCLUSTER, cannot_start, kube_config, running_cluster

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

_SKIPS = []


def _cannot_start(reason):
    """clusterhelpers.cannot_start, and a skip is repeated in the terminal summary."""
    if os.environ.get("KCLUSTER_REQUIRE") != "1":
        _SKIPS.append("test cluster cannot be started on this machine: %s" % reason)
        print("\n*** SKIP: %s" % _SKIPS[-1], file=sys.stderr)
    cannot_start(reason)


class Cluster(object):
    def __init__(self, info):
        self.info = info
        self.kubeconfig = info["kubeconfig"]
        self.helm = info["helm"]
        self.platform = info["platform"]
        self.trays = ["tray%02d" % i for i in range(1, info["nodes"] + 1)]
        self.control_plane = "cp01"

    def kcluster(self, *args):
        return subprocess.run([KCLUSTER] + list(args), capture_output=True, text=True, check=True)


@pytest.fixture(scope="session")
def stack_bundles(tmp_path_factory):
    """The five recipes rendered once for the offline stack and bundle tests: playbooks/render_bundle.yml (the user's
    command) against an inventory of each recipe (stackhelpers.stack_inventory), every format. {recipe: bundle dir};
    the inventories are beside the bundles (inventory-<recipe>.yml)."""
    from stackhelpers import FORMAT_ARGS, RECIPES, render_bundles
    return render_bundles(tmp_path_factory.mktemp("bundles"), RECIPES, *FORMAT_ARGS)


@pytest.fixture(scope="session")
def kcluster():
    with running_cluster(on_cannot_start=_cannot_start) as (st, _started):
        yield Cluster(st)


@pytest.fixture(scope="session")
def kubeconfig(kcluster):
    """Path of the admin kubeconfig of the running test cluster."""
    return kcluster.kubeconfig


@pytest.fixture(scope="session")
def k8s_api(kcluster):
    from kubernetes import client
    return client.ApiClient(configuration=kube_config(kcluster.kubeconfig))


def pytest_terminal_summary(terminalreporter):
    for msg in _SKIPS:
        terminalreporter.write_line("tests/cluster SKIPPED: %s" % msg, yellow=True, bold=True)
