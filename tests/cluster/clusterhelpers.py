# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers shared by conftest.py and the tests (a plain module: test files must not import conftest)."""

import json
import os
import subprocess

import kcluster as kc

HERE = os.path.dirname(os.path.abspath(__file__))
KCLUSTER = os.path.join(HERE, "kcluster")


def kube_config(kubeconfig):
    """A kubernetes.client.Configuration loaded from `kubeconfig`."""
    from kubernetes import client, config
    cfg = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
    return cfg


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
