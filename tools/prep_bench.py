#!/usr/bin/env python3
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark (not a test) of host preparation on the rehearsal lab: prints ratios measured in one run.

Usage (root, from the repo root): make prep-bench   (= python3 tools/prep_bench.py [--runs 3])

Ratios and the goals of issue 8 (each figure is the wall time of one ansible-playbook run, Python start-up
included, as a user sees it; read-only runs are repeated --runs times and the median is used):

  preflight 16 / ping 16       playbooks/preflight.yml on 16 trays / a one-task ping play on them       <= 3
  prepare 16 / ping 16         playbooks/prepare_trays.yml without its reboots (--skip-tags
                               rolling_reboot) on 16 fresh trays / the ping play                        <= 3
  re-run / first run           the same prepare again (nothing left to change) / its first run         <= 0.5
  grouped / serial             time of the rolling_reboot role (ansible.posix.profile_roles) for 8 trays
                               in 4 racks of 2 with gpu_tray_reboot_group_by=rack / the same trays one
                               at a time (batch 1, no group_by: what `serial: 1` does); both strategy
                               rolling                                                                  <= 0.3
  preflight 64 / preflight 16  preflight on 64 trays / on 16 (linear or better: 64/16 = 4)              <= 4.5

And (issue 35, phase canary) the reboot periods - counted in the trays' power logs, lab/gpu_tray_lab/powerlog.py -
and the rolling_reboot role's time for 8 fresh trays in 2 racks of 4, no cluster, --forks 3: strategy rolling (4
periods: one tray per rack at a time) and canary (the canary, then the other 7 together: 2 periods - what the default
auto does with a fleet that carries no work), and their ratio. The period count is the figure that holds on real racks (a period is a tray's POST and
boot, minutes); the time ratio is an indicator on 2 shared cores, where 7 lab trays booting together compete.

Also printed (issue 22): module calls per tray - the tasks that ran a module ON the tray (tools/callback/
module_calls.py: not skipped, not controller-only, a tray_plan only when it read the tray) - on a first VR200
prepare (<= 10) and on a re-run (1); and the controller's CPU seconds per tray (user + system time of the
ansible-playbook process and every process it waited for: its workers and their ssh clients; resource.getrusage
RUSAGE_CHILDREN around each run) of the preflight on 16 and 64 trays and of the 16-tray prepare and re-run.

Each phase (16 trays, 8 trays twice, 64 trays) takes the lab lock (/var/lock/gpu-tray-lab.lock) itself, so the
lock is held one phase at a time, refuses to start while a lab is up (it would replace someone's lab), and
leaves no lab up. The load average is printed with every phase: on shared machines it decides the figures.
Exit code 0 when the runs completed (goals missed are reported, not failed), 1 when a run failed.
"""

import argparse
import fcntl
import json
import os
import pathlib
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lab"))
from gpu_tray_lab import powerlog  # noqa: E402  (the lab's own reading of the trays' power logs)
from ansible_env import checkout_env  # noqa: E402  (tools/, this file's directory)
LAB = ROOT / "lab" / "lab"
BIN = ROOT / ".venv" / "bin"
LOCK = "/var/lock/gpu-tray-lab.lock"
PLATFORM = "rke2-vr200"
GOALS = [
    ("preflight 16 / ping 16", "preflight16", "ping16", "<=", 3.0),
    ("prepare 16 / ping 16", "prepare16", "ping16", "<=", 3.0),
    ("re-run / first run", "rerun16", "prepare16", "<=", 0.5),
    ("grouped / serial", "reboot_grouped", "reboot_serial", "<=", 0.3),
    ("preflight 64 / preflight 16", "preflight64", "preflight16", "<=", 4.5),
]
PING_PLAY = """---
- name: Bare ping
  hosts: gpu_trays
  gather_facts: false
  tasks:
    - name: Ping
      ansible.builtin.ping:
"""


class BenchError(Exception):
    pass


def env(extra=None):
    return checkout_env(ROOT, bin_path=str(BIN), force_color_off=True, ANSIBLE_DEPRECATION_WARNINGS="0",
                        **(extra or {}))


def lab(*args):
    proc = subprocess.run([str(LAB)] + list(args), cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise BenchError("lab %s failed (rc %d): %s" % (" ".join(args), proc.returncode, proc.stderr[-2000:]))
    return proc.stdout


def load():
    return "load %s" % " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


LAST = {}


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def playbook(inventory, play, *extra, env_extra=None, must_pass=True):
    """Run ansible-playbook; return (seconds, stdout). A failed run is an error of the benchmark (must_pass).
    LAST holds the run's controller CPU seconds and its module calls per host (tools/callback/module_calls.py)."""
    argv = [str(BIN / "ansible-playbook")]
    for inv in inventory if isinstance(inventory, list) else [inventory]:
        argv += ["-i", str(inv)]
    argv += [str(play)] + list(extra)
    calls = tempfile.NamedTemporaryFile(prefix="prep-bench-calls-", suffix=".json", delete=False).name
    enabled = ",".join(filter(None, [(env_extra or {}).get("ANSIBLE_CALLBACKS_ENABLED", ""), "module_calls"]))
    extra_env = dict(env_extra or {}, ANSIBLE_CALLBACKS_ENABLED=enabled, GPU_TRAY_MODULE_CALLS=calls,
                     ANSIBLE_CALLBACK_PLUGINS=str(ROOT / "tools" / "callback"))
    t0, c0 = time.monotonic(), cpu_seconds()
    proc = subprocess.run(argv, cwd=ROOT, env=env(extra_env), capture_output=True, text=True, check=False)
    took = time.monotonic() - t0
    LAST["cpu"] = cpu_seconds() - c0
    try:
        LAST["calls"] = json.loads(pathlib.Path(calls).read_text() or "{}")
    except (OSError, ValueError):
        LAST["calls"] = {}
    os.unlink(calls)
    if proc.returncode != 0 and must_pass:
        raise BenchError("%s failed (rc %d):\n%s" % (" ".join(argv[1:]), proc.returncode, proc.stdout[-4000:]))
    return took, proc.stdout


def role_seconds(output, role):
    """The role's total from the ansible.posix.profile_roles summary (`<role> ---- 12.34s`)."""
    found = re.findall(r"^\S*\b%s\s+-+\s+([0-9.]+)s\s*$" % re.escape(role), output, re.M)
    if not found:
        raise BenchError("no profile_roles line for %s in the output" % role)
    return float(found[-1])


class Phase(object):
    """Holds the lab lock for one phase; refuses to start when a lab is up; always takes the lab down."""

    def __init__(self, name, trays):
        self.name, self.trays = name, trays

    def __enter__(self):
        self.fh = open(LOCK, "w")
        fcntl.flock(self.fh, fcntl.LOCK_EX)
        status = json.loads(lab("status", "--json"))
        if status["lab"] or status["trays"]:
            self.fh.close()
            raise BenchError("a lab is up (%s); not replacing it - run `lab/lab down` when it is free"
                             % json.dumps(status["lab"]))
        print("== %s: %d %s trays (%s)" % (self.name, self.trays, PLATFORM, load()), flush=True)
        return self

    def up(self, *faults):
        return pathlib.Path(lab("reset", "--platform", PLATFORM, "--trays", str(self.trays), *faults).strip()).parent

    def __exit__(self, *exc):
        try:
            lab("down")
        finally:
            self.fh.close()


def median_run(runs, label, *args, **kwargs):
    """Median seconds of ``runs`` runs; LAST['cpu'] becomes the median controller CPU seconds."""
    times, cpus = [], []
    for _ in range(runs):
        times.append(playbook(*args, **kwargs)[0])
        cpus.append(LAST["cpu"])
    LAST["cpu"] = statistics.median(cpus)
    print("  %-34s %6.1f s  (runs: %s; controller CPU %.1f s; %s)" % (
        label, statistics.median(times), ", ".join("%.1f" % t for t in times), LAST["cpu"], load()), flush=True)
    return statistics.median(times)


def per_tray(calls):
    """'min-max (mean)' module calls per tray of one run."""
    values = sorted(calls.values()) or [0]
    return "%d-%d (mean %.1f)" % (values[0], values[-1], sum(values) / float(len(values)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="repetitions of the read-only runs (median used)")
    ap.add_argument("--phases", default="16,8,64,canary",
                    help="comma-separated subset of 16,8,64,canary (default: all)")
    ap.add_argument("--fake-prep", action="store_true",
                    help="8-tray phase: set the reboot-pending state with tests/lab/playbooks/fake_prepare.yml (a grub "
                         "drop-in + update-grub) instead of the full prepare_trays.yml; the timed part (the rolling_reboot "
                         "role) is the same, minus the hugepage/netns/module verification")
    args = ap.parse_args()
    phases = set(args.phases.split(","))
    if os.geteuid() != 0:
        sys.exit("prep_bench: the lab needs root")
    t, cpu, calls, periods = {}, {}, {}, {}
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="prep-bench-"))
    ping = tmp / "ping.yml"
    ping.write_text(PING_PLAY)
    report = "gpu_tray_report_dir=%s" % (tmp / "report")
    try:
        if "16" in phases:
            with Phase("16 trays: ping, preflight, prepare", 16) as ph:
                inv = ph.up()
                t["ping16"] = median_run(args.runs, "ping play", inv, ping)
                t["preflight16"] = median_run(args.runs, "preflight.yml", inv, ROOT / "playbooks" / "preflight.yml",
                                              "-e", report)
                cpu["preflight16"] = LAST["cpu"] / 16
                for key, label in (("prepare16", "prepare (first run, no reboots)"), ("rerun16", "prepare (re-run)")):
                    took, _out = playbook(inv, ROOT / "playbooks" / "prepare_trays.yml", "--skip-tags",
                                          "rolling_reboot", "-e", report)
                    t[key] = took
                    cpu[key], calls[key] = LAST["cpu"] / 16, per_tray(LAST["calls"])
                    print("  %-34s %6.1f s  (module calls per tray %s; controller CPU %.1f s; %s)"
                          % (label, took, calls[key], LAST["cpu"], load()), flush=True)
        racks = tmp / "racks.yml"
        racks.write_text("all:\n  children:\n    gpu_trays:\n      hosts:\n" + "".join(
            "        tray%02d: {rack: r%d}\n" % (i, (i + 1) // 2) for i in range(1, 9)))
        prep = ROOT / ("tests/lab/playbooks/fake_prepare.yml" if args.fake_prep else "playbooks/prepare_trays.yml")
        for key, label, extra in (("reboot_grouped", "rolling reboot, group_by rack", ["-e", "gpu_tray_reboot_group_by=rack"]),
                                  ("reboot_serial", "rolling reboot, one at a time", [])):
            if "8" not in phases:
                break
            with Phase("8 trays in 4 racks: %s (%s)" % (label, prep.name), 8) as ph:
                inv = ph.up()
                # the lab has no cluster: no drain (rolling_reboot refuses to reboot when a configured cluster
                # cannot be read, and the controller may have a ~/.kube/config of its own)
                _took, out = playbook([inv, racks], prep, "-e", report, "-e", "rolling_reboot_drain=never",
                                      "-e", "rolling_reboot_strategy=rolling", *extra,
                                      env_extra={"ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.profile_roles"})
                if "8 of 8 tray(s) need a reboot" not in out:
                    raise BenchError("expected all 8 trays to need a reboot:\n%s" % out[-3000:])
                t[key] = role_seconds(out, "rolling_reboot")
                waves = re.findall(r"wave \d+/(\d+) \(", out)
                print("  %-34s %6.1f s  (%s waves; %s)" % (label, t[key], waves[0] if waves else "?", load()), flush=True)
        if "canary" in phases:
            # 8 fresh trays in 2 racks of 4, no cluster, --forks 3: rolling, then canary (a canary, then the other 7
            # together); a fresh lab for each, the periods counted in the trays' power logs
            racks2 = tmp / "racks2.yml"
            racks2.write_text("all:\n  children:\n    gpu_trays:\n      hosts:\n" + "".join(
                "        tray%02d: {rack: r%d}\n" % (i, 1 if i <= 4 else 2) for i in range(1, 9)))
            fake = ROOT / "tests/lab/playbooks/fake_prepare.yml"
            trays = ["tray%02d" % i for i in range(1, 9)]
            for key, strategy in (("reboot_rolling", "rolling"), ("reboot_canary", "canary")):
                with Phase("8 trays in 2 racks of 4: strategy %s, --forks 3" % strategy, 8) as ph:
                    inv = ph.up()
                    # rolling_reboot_drain never, as above: the lab has no cluster (strategy canary does not need
                    # one to tell idle trays from busy ones: it takes them all canary-first)
                    _took, out = playbook([inv, racks2], fake, "--forks", "3", "-e", report,
                                          "-e", "rolling_reboot_drain=never", "-e", "gpu_tray_reboot_group_by=rack",
                                          "-e", "rolling_reboot_strategy=%s" % strategy,
                                          env_extra={"ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.profile_roles"})
                    t[key] = role_seconds(out, "rolling_reboot")
                    found = powerlog.periods(dict((tray, powerlog.windows(tray)) for tray in trays))
                    periods[key] = len(found)
                    print("  %-34s %6.1f s  (%d reboot periods: %s; %s)" % (
                        "strategy " + strategy, t[key], len(found),
                        " | ".join(",".join(p["trays"]) for p in found), load()), flush=True)
        if "64" in phases:
            with Phase("64 trays: preflight", 64) as ph:
                inv = ph.up()
                t["preflight64"] = median_run(max(1, args.runs - 1), "preflight.yml", inv,
                                              ROOT / "playbooks" / "preflight.yml", "-e", report)
                cpu["preflight64"] = LAST["cpu"] / 64
    except BenchError as exc:
        print("prep_bench: %s" % exc, file=sys.stderr)
        return 1
    print("\n| ratio | measured | goal | |\n|---|---|---|---|")
    for label, num, den, _op, goal in GOALS:
        if num not in t or den not in t:
            print("| %s | not measured in this run | <= %.1f | |" % (label, goal))
            continue
        ratio = t[num] / t[den]
        print("| %s | %.1f s / %.1f s = **%.2f** | <= %.1f | %s |"
              % (label, t[num], t[den], ratio, goal, "met" if ratio <= goal else "MISSED"))
    if "reboot_rolling" in t and "reboot_canary" in t:
        print("\n| 8 trays, 2 racks of 4, no cluster, --forks 3 | reboot periods (power logs) | rolling_reboot role |"
              "\n|---|---|---|")
        print("| strategy rolling | %d | %.1f s |" % (periods["reboot_rolling"], t["reboot_rolling"]))
        print("| strategy canary (the canary, then the other 7 together) | %d | %.1f s |"
              % (periods["reboot_canary"], t["reboot_canary"]))
        print("| canary / rolling | **%.2f** | **%.2f** |" % (
            periods["reboot_canary"] / float(periods["reboot_rolling"]), t["reboot_canary"] / t["reboot_rolling"]))
    if calls:
        print("\n| module calls per tray (%s, 16 trays) | min-max (mean) | goal |\n|---|---|---|" % PLATFORM)
        print("| first prepare (no reboots) | %s | <= 10 |" % calls.get("prepare16", "not measured"))
        print("| re-run | %s | 1 |" % calls.get("rerun16", "not measured"))
    if cpu:
        print("\n| controller CPU seconds per tray | |\n|---|---|")
        for key, label in (("preflight16", "preflight, 16 trays"), ("preflight64", "preflight, 64 trays"),
                           ("prepare16", "prepare first run, 16 trays"), ("rerun16", "prepare re-run, 16 trays")):
            if key in cpu:
                print("| %s | %.2f |" % (label, cpu[key]))
    print("\nmeasured %s UTC, %s" % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), load()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
