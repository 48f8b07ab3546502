#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark: warm start-up of the test cluster against its 30 s budget (`make cluster-bench`).

Warm = the binaries are already built and cached (tests/cluster/build.sh); a cold build is not timed here.
Runs N `kcluster up --no-build` / `kcluster down` cycles in its OWN state directory and ports, so a cluster
that is already up (a developer's, a test session's) is neither reused nor touched. Prints the seconds of
every start and their ratio to the budget; exits 1 if any start is over budget, 2 if it cannot run
(binaries not built, a start or stop failed). Speed is shown here, not asserted by a timed test.

  tests/cluster/bench_startup.py [--runs 3] [--platform nvke-gb200] [--nodes 2] [--budget 30]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KCLUSTER = os.path.join(HERE, "kcluster")
BENCH_ENV = {"KCLUSTER_STATE": "/run/gpu-tray-kcluster-bench", "KCLUSTER_ETCD_PORT": "23990",
             "KCLUSTER_ETCD_PEER_PORT": "24000", "KCLUSTER_APISERVER_PORT": "16643", "KCLUSTER_KUBELET_PORT": "16650"}


def kcluster(env, *args):
    return subprocess.run([KCLUSTER] + list(args), env=env, capture_output=True, text=True, check=False)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--platform", default="nvke-gb200", choices=("nvke-gb200", "rke2-vr200"))
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--budget", type=float, default=30.0, help="seconds a warm start may take")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    env = dict(os.environ, **BENCH_ENV)
    if os.path.exists(BENCH_ENV["KCLUSTER_STATE"]):
        kcluster(env, "down")      # leftovers of an interrupted benchmark
    load = os.getloadavg()[0]
    print("warm start-up of the test cluster: %d runs, %s, %d trays + cp01, budget %.0f s, %d cores, load %.1f"
          % (args.runs, args.platform, args.nodes, args.budget, os.cpu_count() or 0, load))
    times = []
    try:
        for run in range(1, args.runs + 1):
            t0 = time.monotonic()
            up = kcluster(env, "up", "--no-build", "--platform", args.platform, "--nodes", str(args.nodes))
            seconds = time.monotonic() - t0
            if up.returncode != 0:
                print("run %d: kcluster up failed (rc %d):\n%s%s" % (run, up.returncode, up.stdout[-2000:], up.stderr[-2000:]))
                return 2
            own = json.loads(kcluster(env, "status", "--json").stdout).get("startup_seconds")
            down = kcluster(env, "down")
            if down.returncode != 0:
                print("run %d: kcluster down failed (rc %d): %s" % (run, down.returncode, down.stderr[-2000:]))
                return 2
            times.append(seconds)
            print("run %d: up in %5.1f s (kcluster's own count %s s)  ratio to budget %.2f"
                  % (run, seconds, own, seconds / args.budget))
    finally:
        if os.path.exists(BENCH_ENV["KCLUSTER_STATE"]):
            kcluster(env, "down")
    worst = max(times)
    print("median %.1f s  worst %.1f s  worst/budget %.2f  (%s)"
          % (statistics.median(times), worst, worst / args.budget, "within budget" if worst <= args.budget else "OVER BUDGET"))
    return 0 if worst <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
