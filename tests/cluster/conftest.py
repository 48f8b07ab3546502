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

import json
import os
import platform
import subprocess
import sys
import time

import pytest

import kcluster as kc
from clusterhelpers import KCLUSTER, check_down, kube_config

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(HERE, "build.sh")
sys.path.insert(0, HERE)
BUILD_ENV_FAILURE = 75   # build.sh: the machine cannot build now (network, disk) - see build.sh

_SKIPS = []


def _cannot_start(reason):
    msg = "test cluster cannot be started on this machine: %s" % reason
    if os.environ.get("KCLUSTER_REQUIRE") == "1":
        pytest.fail(msg + " (KCLUSTER_REQUIRE=1: failing instead of skipping)", pytrace=False)
    _SKIPS.append(msg)
    print("\n*** SKIP: %s" % msg, file=sys.stderr)
    pytest.skip(msg)


def _status():
    res = subprocess.run([KCLUSTER, "status", "--json"], capture_output=True, text=True, check=False)
    try:
        return json.loads(res.stdout)
    except ValueError:
        return {"up": False}


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
def kcluster():
    st = _status()
    if st.get("up"):
        yield Cluster(st)
        return
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "amd64"):
        _cannot_start("needs Linux on x86-64 (found %s/%s)" % (sys.platform, platform.machine()))
    if os.geteuid() != 0:
        _cannot_start("needs root (apt-get for etcd-server/golang-go, state in /run)")
    t0 = time.time()
    build = subprocess.run([BUILD], capture_output=True, text=True, check=False)
    if build.returncode == BUILD_ENV_FAILURE:
        _cannot_start("tests/cluster/build.sh: the environment does not allow the build (rc %d) after %.0f s:\n%s"
                      % (build.returncode, time.time() - t0, build.stderr[-3000:]))
    elif build.returncode != 0:
        pytest.fail("tests/cluster/build.sh failed (rc %d) after %.0f s - a defect, not a skip:\n%s"
                    % (build.returncode, time.time() - t0, build.stderr[-3000:]), pytrace=False)
    up = subprocess.run([KCLUSTER, "up", "--no-build"], capture_output=True, text=True, check=False)
    if up.returncode != 0:
        subprocess.run([KCLUSTER, "down"], capture_output=True, check=False)
        pytest.fail("kcluster up failed although the binaries exist (a defect, not a skip):\n%s%s"
                    % (up.stdout[-3000:], up.stderr[-3000:]), pytrace=False)
    st = _status()
    assert st.get("up"), "kcluster up returned 0 but status says: %s" % st
    try:
        yield Cluster(st)
    finally:
        check_down(kc.load_pids())


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
