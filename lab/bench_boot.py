#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure how long `lab up` takes to boot N trays (default 8) with a warm rootfs cache, and `lab down`.

Usage (root): python3 lab/bench_boot.py [--platform nvke-gb200] [--trays 8] [--runs 1]

It refuses to run while a lab is up (it would have to tear down someone's lab). The rootfs is built first
(if missing) and not counted: the figure is the issue's "N trays boot in under 30 s excluding the cached
rootfs build". Each run prints the wall time of `lab up` (until every tray answered
`systemctl is-system-running --wait` over SSH) and of `lab down`. Exit code 0 even when the 30 s target is
missed: this is a measurement, not a test; the verdict line says whether the target was met.
"""

import argparse
import json
import pathlib
import subprocess
import sys
import time

LAB = pathlib.Path(__file__).resolve().parent / "lab"
TARGET_S = 30.0


def lab(*args, capture=False):
    return subprocess.run([str(LAB)] + list(args), check=True, text=True,
                          stdout=subprocess.PIPE if capture else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", default="nvke-gb200", choices=("nvke-gb200", "rke2-vr200"))
    ap.add_argument("--trays", type=int, default=8)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()

    status = json.loads(lab("status", "--json", capture=True).stdout)
    if status["lab"] or status["trays"]:
        sys.exit("bench_boot: a lab is up (%s); run `lab/lab down` first" % status["lab"])
    t0 = time.monotonic()
    lab("rootfs", capture=True)
    print("rootfs ready (cache build or hit, not counted): %.1f s" % (time.monotonic() - t0))
    results = []
    for run in range(1, args.runs + 1):
        lab("rootfs", capture=True)        # lab sources may change between runs: keep the build out of the figure
        t0 = time.monotonic()
        lab("up", "--platform", args.platform, "--trays", str(args.trays), capture=True)
        up = time.monotonic() - t0
        status = json.loads(lab("status", "--json", capture=True).stdout)
        t0 = time.monotonic()
        lab("down")
        down = time.monotonic() - t0
        results.append((up, down))
        print("run %d: lab up --platform %s --trays %d: %.1f s (lab timings %s); lab down: %.1f s"
              % (run, args.platform, args.trays, up, json.dumps(status["lab"].get("timings")), down))
    worst = max(r[0] for r in results)
    print("verdict: %d trays up in %.1f s (worst of %d run(s)); target < %.0f s: %s"
          % (args.trays, worst, len(results), TARGET_S, "met" if worst < TARGET_S else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
