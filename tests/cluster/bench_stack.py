#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark of the chart-stack rollout (`make stack-bench`; not a test).

1. On a test cluster of its own (state dir and ports apart from any other cluster): the test recipe of local
   charts (tests/cluster/files/stacktest/vars.yml, with the stand-in operator tests/cluster/stack_controller.py)
   deployed tier by tier, then the same components one by one (stack_serial, deploy.sh style); wall time of
   each and the ratio tiers / one-by-one. A teardown runs between and after.
2. Without a cluster: for every real recipe, the number of tiers / the number of components - the bound on the
   rollout's sequential steps (charts of one tier install together).

Prints seconds and ratios; exits 2 if it cannot run (binaries not built, a step failed).

  tests/cluster/bench_stack.py [--runs 1] [--skip-cluster]
"""

import argparse
import os
import subprocess
import sys
import time

import yaml

import kcluster as kc
from stackhelpers import REPO, collection_on_path, run_playbook

HERE = os.path.dirname(os.path.abspath(__file__))
KCLUSTER = os.path.join(HERE, "kcluster")
BENCH_ENV = {"KCLUSTER_STATE": "/run/gpu-tray-kcluster-stackbench", "KCLUSTER_ETCD_PORT": "23690",
             "KCLUSTER_ETCD_PEER_PORT": "23700", "KCLUSTER_APISERVER_PORT": "16343",
             "KCLUSTER_KUBELET_PORT": "16350"}
RECIPES = ["gb200-nvke-ubuntu-training", "gb200-nvke-ubuntu-training-kubeflow", "vr200-rke2-ubuntu-training",
           "vr200-rke2-ubuntu-inference", "vr200-rke2-ubuntu-inference-dynamo"]


def recipe_shapes():
    """(recipe, nodewright, components, tiers) of every real recipe, as the planner plans it."""
    collection_on_path()
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack_plan
    from stackhelpers import RAIL_PCI
    with open(os.path.join(REPO, "roles", "stack", "defaults", "main.yml")) as fh:
        defaults = yaml.safe_load(fh)
    site = {"repositories": defaults["stack_repositories"], "registries": defaults["stack_registries"],
            "rails": list(RAIL_PCI), "rail_pci": RAIL_PCI}
    for recipe in RECIPES:
        for nodewright in (False, True):
            plan = stack_plan.plan(dict(site, recipe=recipe, use_nodewright=nodewright))
            yield recipe, nodewright, len(plan["components"]), len(plan["tiers"])


def stack_run(kubeconfig, helm, playbook, *extra):
    t0 = time.monotonic()
    rc, out = run_playbook("gpu_tray.cluster.%s" % playbook, "-e", "@" + os.path.join(HERE, "files", "stacktest", "vars.yml"),
                           "-e", "stack_test_dir=%s" % HERE, "-e", "gpu_tray_recipe=stacktest",
                           "-e", "gpu_tray_kubeconfig=%s" % kubeconfig, "-e", "stack_helm_binary=%s" % helm,
                           "-e", "stack_settle_seconds=2", *extra)
    return rc, out, time.monotonic() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--skip-cluster", action="store_true", help="only the recipe shapes (no cluster)")
    args = ap.parse_args(argv)
    print("recipe shapes (tiers / components: the rollout's sequential steps against one-by-one):")
    for recipe, nodewright, comps, tiers in recipe_shapes():
        print("  %-36s %-14s %2d components, %d tiers: ratio %.2f"
              % (recipe, "nodewright" if nodewright else "default", comps, tiers, tiers / float(comps)))
    if args.skip_cluster:
        return 0
    env = dict(os.environ, **BENCH_ENV)
    subprocess.run([KCLUSTER, "down"], env=env, capture_output=True, check=False)
    up = subprocess.run([KCLUSTER, "up", "--no-build"], env=env, capture_output=True, text=True, check=False)
    if up.returncode != 0:
        print("kcluster up failed (rc %d): %s%s" % (up.returncode, up.stdout[-2000:], up.stderr[-2000:]))
        return 2
    kubeconfig = os.path.join(BENCH_ENV["KCLUSTER_STATE"], "admin.kubeconfig")
    helm = kc.helm_path()
    log = os.path.join(BENCH_ENV["KCLUSTER_STATE"], "controller.log")
    ctl = subprocess.Popen([sys.executable, os.path.join(HERE, "stack_controller.py"), kubeconfig, log],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("test recipe on the test cluster (%d cores, load %.1f):" % (os.cpu_count() or 0, os.getloadavg()[0]))
    try:
        for run in range(1, args.runs + 1):
            timings = {}
            for mode, extra in (("tiers", ()), ("one-by-one", ("-e", "stack_serial=true"))):
                rc, out, seconds = stack_run(kubeconfig, helm, "deploy_stack", *extra)
                if rc != 0:
                    print("deploy (%s) failed:\n%s" % (mode, out[-3000:]))
                    return 2
                timings[mode] = seconds
                rc, out, _ = stack_run(kubeconfig, helm, "teardown_stack")
                if rc != 0:
                    print("teardown failed:\n%s" % out[-3000:])
                    return 2
            print("  run %d: tiers %.1f s, one by one %.1f s: ratio %.2f"
                  % (run, timings["tiers"], timings["one-by-one"], timings["tiers"] / timings["one-by-one"]))
    finally:
        ctl.terminate()
        ctl.wait(timeout=10)
        subprocess.run([KCLUSTER, "down"], env=env, capture_output=True, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
