# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpu-tray rehearsal lab CLI (stdlib only). Run through the `lab/lab` wrapper.

  lab up     --platform nvke-gb200|rke2-vr200 --trays N [--fault NAME[@N]]...
  lab down | status [--json] | reset [same options as up] | ssh TRAY [CMD...] | inventory | ssh-config
  lab bmc up|down|status      the trays' BMCs (Redfish, sushy-tools; lab/gpu_tray_lab/bmc.py)
  lab power TRAY on|off|reset the tray's power, as its BMC switches it
  lab deps | rootfs | prune-cache
"""

import argparse
import concurrent.futures
import fcntl
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gpu_tray_lab import cgroups, hostlimits, inventory, net, platforms, rootfs, trays, util  # noqa: E402

PLATFORMS = ("nvke-gb200", "rke2-vr200")


def fixtures_module():
    """The hardware side (lab/gpu_tray_lab/fixtures.py): fault table, per-tray files, inventory vars."""
    from gpu_tray_lab import fixtures
    return fixtures


def fault_kind(name):
    """'tray' or 'inventory' for a known fault, None for an unknown one."""
    fx = fixtures_module()
    return fx.tray_faults(name) if name in fx.FAULTS else None


def known_faults():
    return sorted(fixtures_module().FAULTS)


def parse_faults(specs, ntrays):
    """['pkey-limited-pf@2', 'hugepage-1g'] -> sorted list of (name, index)."""
    out = set()
    for spec in specs or []:
        name, _, idx = spec.partition("@")
        kind = fault_kind(name)
        if kind is None:
            raise util.LabError("unknown fault %r; known faults: %s" % (name, ", ".join(known_faults())))
        if idx and not idx.isdigit():
            raise util.LabError("fault %r: expected NAME or NAME@N with N a tray index" % spec)
        index = int(idx) if idx else 1
        if not 1 <= index <= ntrays:
            raise util.LabError("fault %r: tray index %d is outside 1..%d" % (spec, index, ntrays))
        out.add((name, index))
    return sorted(out, key=lambda f: (f[1], f[0]))


def desired(args):
    if args.platform not in PLATFORMS:
        raise util.LabError("unknown platform %r (choose %s)" % (args.platform, " or ".join(PLATFORMS)))
    if not 1 <= args.trays <= util.MAX_TRAYS:
        raise util.LabError("--trays must be between 1 and %d" % util.MAX_TRAYS)
    faults = parse_faults(args.fault, args.trays)
    spec = {"platform": args.platform, "trays": args.trays, "faults": ["%s@%d" % f for f in faults]}
    check_faults_fit_platform(spec)
    return spec


def check_faults_fit_platform(spec):
    """Refuse, before anything is built or booted, faults the platform cannot have (imex-reenabled on
    nvke-gb200: no nvidia-imex there): the hardware side's own validation, run on every tray's faults."""
    per_tray, _inv = split_faults(spec, spec["trays"])
    for index, faults in sorted(per_tray.items()):
        if faults:
            try:
                fixtures_module().hardware(spec["platform"], index, frozenset(faults))
            except ValueError as exc:
                raise util.LabError("tray%02d: %s" % (index, exc))


def lab_file():
    return util.state_dir() / "lab.json"


class StateLock:
    """Serialises up/down/reset of the (single, per machine) lab."""

    def __enter__(self):
        sd = util.state_dir()
        path = sd.parent / (sd.name + ".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(path, "w")
        try:
            fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            util.log("another lab command is running; waiting for its lock (%s)" % path)
            fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        self.fh.close()


def split_faults(spec, ntrays):
    per_tray = {i: set() for i in range(1, ntrays + 1)}
    inv = {i: set() for i in range(1, ntrays + 1)}
    for item in spec["faults"]:
        name, _, idx = item.partition("@")
        (inv if fault_kind(name) == "inventory" else per_tray)[int(idx)].add(name)
    return per_tray, inv


def inventory_host_vars(platform, inv_faults):
    """Host vars for inventory-level faults, from fixtures.inventory_vars (the one place that defines them)."""
    fx = fixtures_module()
    out = {}
    for i, faults in inv_faults.items():
        hv = fx.inventory_vars(platform, frozenset(faults)) if faults else {}
        if hv:
            out[i] = hv
    return out


def write_inventory(spec):
    per_tray, inv_faults = split_faults(spec, spec["trays"])
    faults_for_host = {i: per_tray[i] | inv_faults[i] for i in per_tray}
    return inventory.write(spec["platform"], list(range(1, spec["trays"] + 1)), faults_for_host,
                           host_vars=inventory_host_vars(spec["platform"], inv_faults))


# ---- commands ------------------------------------------------------------------------------------

def cmd_up(args, spec=None):
    util.require_root()
    util.ensure_deps(install=True)
    spec = spec or desired(args)
    with StateLock():
        current = util.read_json(lab_file())
        if current and {k: current.get(k) for k in spec} != spec:
            raise util.LabError(
                "a lab is already up with --platform %s --trays %d%s; run `lab/lab down` first, or "
                "`lab/lab reset --platform %s --trays %d%s` to replace it"
                % (current["platform"], current["trays"], "".join(" --fault " + f for f in current["faults"]),
                   spec["platform"], spec["trays"], "".join(" --fault " + f for f in spec["faults"])))
        return _up_locked(spec, current, args)


def _up_locked(spec, current, args):
    t_start = time.monotonic()
    timings = {}
    fx = fixtures_module()
    if current:
        root = pathlib.Path(current["rootfs"])
        if root != rootfs.prepared_path():
            util.log("note: lab sources changed since this lab was built (rootfs %s, now %s); "
                     "`lab/lab reset` picks the changes up" % (root.name, rootfs.prepared_path().name))
    else:
        t0 = time.monotonic()
        root = rootfs.ensure(timings)
        timings["rootfs_s"] = round(time.monotonic() - t0, 1)
        current = dict(spec, rootfs=str(root), created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        util.state_dir().mkdir(parents=True, exist_ok=True)
        util.write_json(lab_file(), current)      # before anything exists, so `down` can always clean up
    note = hostlimits.ensure(spec["trays"])      # before any tray boots (their systemd draws on it)
    if note:
        util.log(note)
    pubkey = inventory.ensure_ssh_key()
    per_tray, _inv = split_faults(spec, spec["trays"])
    write_inventory(spec)
    all_trays = [trays.Tray(i) for i in range(1, spec["trays"] + 1)]

    def bring_up(tray):
        if tray.supervisor_pid():
            if not tray.state().startswith("down (fault"):
                return False
            # hanging in POST (powered on): `up` is the person at the console who power-cycles it
            util.log("%s: %s - powering it off to start it again" % (tray.name, tray.state()))
            tray.stop()
        (tray.dir / "hung").unlink(missing_ok=True)
        if tray.nspawn_pid() or cgroups.pids_in(cgroups.recorded(tray.dir)):
            util.log("%s: supervisor gone but the tray still runs: stopping it before booting it again" % tray.name)
            tray.stop()
        if tray.state().startswith(("down (fault", "down (unbootable")):
            util.log("%s: %s - starting it again (use `lab/lab reset` for a clean tray)" % (tray.name, tray.state()))
        tray.mount(root)
        tray.personalize(pubkey, spec["platform"], per_tray[tray.index], fx)
        return tray.start(per_tray[tray.index])

    fresh = not any(t.dir.exists() for t in all_trays)
    t0 = time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
            started = list(pool.map(bring_up, all_trays))
    except (ValueError, OSError, util.LabError) as exc:
        if fresh:                 # a failed first `up` leaves nothing behind
            _down_locked()
        raise util.LabError("%s%s" % (exc, "; nothing was left running" if fresh else
                                      "; `lab/lab down` cleans up"))
    timings["prepare_start_s"] = round(time.monotonic() - t0, 1)
    if not any(started):
        util.log("lab already up (--platform %s --trays %d): nothing to do" % (spec["platform"], spec["trays"]))
    if args.no_wait:
        print(inventory.hosts_file())
        return 0
    t0 = time.monotonic()
    res = trays.wait_booted(all_trays, args.timeout, util.state_dir())
    timings["boot_wait_s"] = round(time.monotonic() - t0, 1)
    timings["up_total_s"] = round(time.monotonic() - t_start, 1)
    bad = {n: r for n, r in res.items() if r[0] != "running"}
    for t in all_trays:
        status, secs, detail = res[t.name]
        why = (" (" + detail.strip().replace("\n", "; ") + ")") if detail and status != "running" else ""
        util.log("%s %-10s %-8s %5.1f s%s" % (t.name, t.addr, status, secs, why))
    if any(started):
        current["timings"] = timings
        util.write_json(lab_file(), current)
    util.log("timings: %s" % json.dumps(timings))
    if any(started):
        for name in rootfs.prune([root]):       # after the boot: keeps the (slow) rmtree out of the boot time
            util.log("removed stale cached rootfs %s" % name)
    if bad:
        for t in all_trays:
            if t.name in bad:
                util.log("---- %s: last lines of %s\n%s" % (t.name, t.dir / "supervisor.log", t.log_tail()))
        raise util.LabError("%d tray(s) did not reach 'running': %s; inspect with `lab/lab ssh <tray> journalctl -b`, "
                            "stop with `lab/lab down`" % (len(bad), ", ".join(sorted(bad))))
    print(inventory.hosts_file())
    return 0


def cmd_down(_args):
    util.require_root()
    with StateLock():
        return _down_locked()


def _down_locked():
    """Stop and remove every tray; a tray that fails does not stop the others: errors are collected per
    tray and raised once, at the end (the state dir is kept then, so `down` can be run again)."""
    sd = util.state_dir()
    t0 = time.monotonic()
    tray_dirs = sorted((sd / "trays").glob("tray[0-9][0-9]")) if (sd / "trays").is_dir() else []
    all_trays = [trays.Tray(int(d.name[4:])) for d in tray_dirs]
    errors = []

    def attempt(what, step):
        try:
            step()
        except (util.LabError, OSError) as exc:
            errors.append("%s: %s" % (what, exc))

    def stop(tray):
        attempt("%s: stop" % tray.name, tray.stop)

    from gpu_tray_lab import bmc
    attempt("BMCs", bmc.down)               # before the trays: a BMC must not power a tray on during the stop

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(stop, all_trays))
    for t in all_trays:
        attempt("%s: cgroups" % t.name, t.remove_cgroups)
        attempt("%s: unmount" % t.name, t.umount)
        attempt("%s: network namespace" % t.name, lambda t=t: net.delete(t.index))
    for ns in net.list_ours():                      # namespaces of trays whose state dir is gone
        suffix = ns[len(util.NETNS_PREFIX):]
        if suffix.isdigit():
            attempt("netns %s" % ns, lambda i=int(suffix): net.delete(i))
    left = trays.mounts_under(sd)
    if left:
        errors.append("mounts are still present under %s: %s" % (sd, ", ".join(left)))
    if errors:
        raise util.LabError("lab down did not finish (%d problem(s)); the rest was cleaned up, state kept in %s:"
                            "\n  %s" % (len(errors), sd, "\n  ".join(errors)))
    try:
        note = hostlimits.restore()                 # every tray is stopped by now
    except (OSError, ValueError) as exc:
        note = "host: could not restore fs.inotify.max_user_instances: %s" % exc
    if note:
        util.log(note)
    if sd.exists():
        util.run(["rm", "-rf", "--one-file-system", str(sd)])
    util.log("lab down (%d tray(s)) in %.1f s" % (len(all_trays), time.monotonic() - t0))
    return 0


def cmd_reset(args):
    util.require_root()
    current = util.read_json(lab_file())
    if args.platform is None:
        if not current:
            raise util.LabError("no lab is up; give --platform and --trays")
        spec = {k: current[k] for k in ("platform", "trays", "faults")}
    else:
        spec = desired(args)
    with StateLock():
        _down_locked()
        return _up_locked(spec, None, args)


def tray_rows():
    spec = util.read_json(lab_file()) or {}
    n = spec.get("trays", 0)
    tdir = util.state_dir() / "trays"
    indexes = sorted({int(d.name[4:]) for d in tdir.glob("tray[0-9][0-9]")} | set(range(1, n + 1))) \
        if tdir.is_dir() else list(range(1, n + 1))
    rows = []
    for i in indexes:
        t = trays.Tray(i)
        rows.append({
            "name": t.name, "index": i, "address": t.addr, "machine": t.machine, "netns": t.netns,
            "supervisor_pid": t.supervisor_pid(), "nspawn_pid": t.nspawn_pid(),
            "boot_count": t.boot_count(), "state": t.state(), "mounted": t.mounted(),
            "faults": sorted(f.partition("@")[0] for f in spec.get("faults", []) if f.endswith("@%d" % i)),
        })
    return spec, rows


def cmd_status(args):
    spec, rows = tray_rows()
    if args.json:
        print(json.dumps({"lab": spec or None, "state_dir": str(util.state_dir()),
                          "inventory": str(inventory.hosts_file()) if spec else None, "trays": rows}, indent=2))
        return 0
    if not spec and not rows:
        print("no lab is up (state dir %s)" % util.state_dir())
        return 0
    if spec:
        print("platform %s, %d tray(s), faults: %s, rootfs %s" % (
            spec["platform"], spec["trays"], " ".join(spec["faults"]) or "none", pathlib.Path(spec["rootfs"]).name))
        print("inventory %s" % inventory.hosts_file())
    print("%-7s %-12s %-11s %-8s %-6s %-5s %s" % ("TRAY", "ADDRESS", "SUPERVISOR", "NSPAWN", "BOOTS", "MOUNT", "STATE / FAULTS"))
    for r in rows:
        print("%-7s %-12s %-11s %-8s %-6d %-5s %s%s" % (
            r["name"], r["address"], r["supervisor_pid"] or "-", r["nspawn_pid"] or "-", r["boot_count"],
            "yes" if r["mounted"] else "no", r["state"], (" [" + ",".join(r["faults"]) + "]") if r["faults"] else ""))
    return 0


def resolve_tray(name):
    s = name[4:] if name.startswith("tray") else name
    if not s.isdigit():
        raise util.LabError("unknown tray %r (use tray01, 01 or 1)" % name)
    return util.tray_name(int(s))


def cmd_ssh(args):
    cfg = inventory.ssh_config_file()
    if not cfg.exists():
        raise util.LabError("no lab is up (%s missing)" % cfg)
    argv = ["ssh", "-F", str(cfg), resolve_tray(args.tray)] + args.command
    os.execvp("ssh", argv)


SRIOV_SCRIPT = r"""
set -u
n=$1; timeout=$2; shift 2
# GPU_TRAY_LAB_SYS: the tray's simulated sysfs (the harness test runs the script against a tray in a directory)
sys=${GPU_TRAY_LAB_SYS:-/var/lib/gpu-tray-lab/sys}/class/infiniband
deadline=$(( $(date +%s) + timeout ))
# at RAIL COUNT: sriov_numvfs reads COUNT and exactly COUNT virtfn links exist (every one counted: the kernel removes
# them one by one), each VF with its RDMA device
at() {
  d=$sys/$1/device
  [ "$(cat "$d/sriov_numvfs")" = "$2" ] || return 1
  i=0
  for link in "$d"/virtfn*; do
    [ -L "$link" ] || continue
    [ -e "$link/infiniband" ] || return 1
    i=$((i + 1))
  done
  [ "$i" -eq "$2" ]
}
# until every rail is at COUNT: 0, or 1 with "rail (why)" of each rail that is not - its write was undone (the lab's
# kernel stand-in undoes a write it refuses; the tray's journal says why), or it is not complete at the deadline
wait_at() {
  count=$1; shift
  refused=""
  while :; do
    pending=""
    for rail in "$@"; do
      case " $refused " in *" $rail ("*) continue ;; esac
      at "$rail" "$count" && continue
      have=$(cat "$sys/$rail/device/sriov_numvfs")
      if [ "$have" = "$count" ]; then
        pending="$pending $rail"
      else
        refused="$refused $rail (sriov_numvfs reads $have: the write of $count was refused)"
      fi
    done
    if [ -z "$pending" ]; then
      [ -z "$refused" ] && return 0
      echo "$refused"
      return 1
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "$refused$(for rail in $pending; do printf ' %s (not complete after %ss)' "$rail" "$timeout"; done)"
      return 1
    fi
    sleep 0.2
  done
}
rails=""
for rail in "$@"; do
  [ -e "$sys/$rail/device/sriov_numvfs" ] || { echo "$rail: no sriov_numvfs (SR-IOV disabled in firmware): the config daemon fails here" >&2; continue; }
  rails="$rails $rail"
done
# as the config daemon: a changed count goes through 0 (the kernel refuses N -> M with EBUSY while VFs exist), and the
# new count is written only once the old VFs are gone
change=""
for rail in $rails; do
  [ "$(cat "$sys/$rail/device/sriov_numvfs")" = "$n" ] || change="$change $rail"
done
failed=0
if [ -n "$change" ]; then
  for rail in $change; do
    [ "$(cat "$sys/$rail/device/sriov_numvfs")" = 0 ] || echo 0 > "$sys/$rail/device/sriov_numvfs" || failed=1
  done
  # shellcheck disable=SC2086
  if ! left=$(wait_at 0 $change); then
    echo "the old VFs are not gone on:$left; sriov_numvfs $n was not written" >&2
    failed=1
  elif [ "$n" != 0 ]; then
    for rail in $change; do echo "$n" > "$sys/$rail/device/sriov_numvfs" || failed=1; done
  fi
fi
# shellcheck disable=SC2086
if [ "$failed" = 0 ] && ! left=$(wait_at "$n" $rails); then
  echo "not at $n VFs on:$left" >&2
  failed=1
fi
for rail in "$@"; do
  printf '%s %s\n' "$rail" "$(cat "$sys/$rail/device/sriov_numvfs" 2>/dev/null || echo none)"
done
exit $failed
"""


def cmd_sriov(args):
    """The lab's stand-in for the SR-IOV config daemon: write sriov_numvfs on every rail, as the daemon does for the
    recipe's SriovNetworkNodePolicies, and wait until the VFs (and their RDMA devices) exist."""
    spec = util.read_json(lab_file()) or {}
    cfg = inventory.ssh_config_file()
    if not spec or not cfg.exists():
        raise util.LabError("no lab is up; run `lab/lab up ...` first")
    data = platforms.platform(spec["platform"])
    num_vfs = data.get("sriov_num_vfs") if args.num_vfs is None else args.num_vfs
    if not num_vfs and args.num_vfs is None:
        print("platform %s: its recipes create no VFs (no SriovNetworkNodePolicy); nothing to do" % spec["platform"])
        return 0
    rails = [h["name"] for h in platforms.rails(data)]
    names = [resolve_tray(t) for t in args.tray] or [util.tray_name(i) for i in range(1, spec["trays"] + 1)]

    def apply(name):
        argv = ["ssh", "-F", str(cfg), name, "sh", "-c", shlex.quote(SRIOV_SCRIPT), "sriov", str(num_vfs),
                str(args.timeout)] + rails
        return name, subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout + 60)

    failed = False
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(8, len(names))) as pool:
        for name, proc in pool.map(apply, names):
            counts = " ".join("%s=%s" % tuple(line.split()) for line in proc.stdout.splitlines() if line.strip())
            print("%s: sriov_numvfs %s%s" % (name, counts, (" (%s)" % proc.stderr.strip()) if proc.stderr.strip() else ""))
            failed = failed or proc.returncode != 0
    if failed:
        raise util.LabError("not every tray ended at %d VFs on each rail with SR-IOV (above)" % num_vfs)
    return 0


def lab_indexes():
    spec = util.read_json(lab_file()) or {}
    if not spec:
        raise util.LabError("no lab is up; run `lab/lab up ...` first")
    return spec, list(range(1, spec["trays"] + 1))


def cmd_bmc(args):
    """The trays' BMCs: one sushy-tools Redfish emulator per tray (lab/gpu_tray_lab/bmc.py)."""
    from gpu_tray_lab import bmc
    if args.action == "down":
        util.require_root()
        stopped = bmc.down()
        util.log("BMCs stopped: %s" % (", ".join(stopped) or "none was running"))
        return 0
    spec, indexes = lab_indexes()
    if args.action == "up":
        util.require_root()
        with StateLock():
            for name, url in bmc.up(indexes, spec["platform"]):
                util.log("%s BMC %s" % (name, url))
        util.log("inventory: gpu_tray_bmc_* of every tray in %s" % (inventory.inventory_dir() / "host_vars"))
        return 0
    rows = bmc.status(indexes)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        print("%-7s %-26s %s" % (row["tray"], row["address"], ("pid %d" % row["pid"]) if row["pid"] else "not running"))
    return 0


POWER_ACTIONS = {"on": "On", "off": "ForceOff", "reset": "ForceRestart"}


def cmd_power(args):
    """Power a tray on, off or reset it, as its BMC does (Tray.power)."""
    util.require_root()
    lab_indexes()
    tray = trays.Tray(int(resolve_tray(args.tray)[4:]))
    print("%s: %s" % (tray.name, tray.power(POWER_ACTIONS[args.action])))
    return 0


def cmd_inventory(_args):
    if not inventory.hosts_file().exists():
        raise util.LabError("no lab is up (%s missing); run `lab/lab up ...`" % inventory.hosts_file())
    print(inventory.hosts_file())
    return 0


def cmd_ssh_config(_args):
    if not inventory.ssh_config_file().exists():
        raise util.LabError("no lab is up (%s missing)" % inventory.ssh_config_file())
    print(inventory.ssh_config_file())
    return 0


def cmd_deps(_args):
    util.require_root()
    installed = util.ensure_deps(install=True)
    print("host packages present%s" % ((" (installed: %s)" % " ".join(installed)) if installed else ""))
    return 0


def cmd_rootfs(_args):
    util.require_root()
    util.ensure_deps(install=True)
    timings = {}
    t0 = time.monotonic()
    path = rootfs.ensure(timings)
    util.log("rootfs ready in %.1f s %s" % (time.monotonic() - t0, json.dumps(timings)))
    print(path)
    return 0


def cmd_prune(_args):
    util.require_root()
    in_use = []
    current = util.read_json(lab_file())
    if current:
        in_use.append(current["rootfs"])
    for name in rootfs.prune(in_use, bases=True):
        util.log("removed %s" % name)
    return 0


def build_parser():
    p = argparse.ArgumentParser(prog="lab", description="gpu-tray rehearsal lab: simulated GB200/VR200 trays "
                                "as systemd-nspawn machines reached over SSH")
    sub = p.add_subparsers(dest="cmd", required=True)

    def add_spec(sp, required):
        sp.add_argument("--platform", required=required, choices=PLATFORMS)
        sp.add_argument("--trays", type=int, required=required, default=None if not required else None)
        sp.add_argument("--fault", action="append", default=[], metavar="NAME[@N]",
                        help="inject a fault on tray N (default 1); repeatable. Known: %s" % ", ".join(known_faults()))
        sp.add_argument("--timeout", type=int, default=180, help="seconds to wait for the trays to boot")
        sp.add_argument("--no-wait", action="store_true", help="do not wait for SSH/systemd in the trays")

    add_spec(sub.add_parser("up", help="build (cached) and boot the trays; idempotent"), True)
    add_spec(sub.add_parser("reset", help="down + up (with the recorded options if none are given)"), False)
    sub.add_parser("down", help="stop every tray by PID, unmount, delete namespaces and state; idempotent")
    st = sub.add_parser("status", help="trays, PIDs, addresses, boot counts")
    st.add_argument("--json", action="store_true")
    ss = sub.add_parser("ssh", help="ssh into a tray: lab ssh tray01 [command...]")
    ss.add_argument("tray")
    ss.add_argument("command", nargs=argparse.REMAINDER)
    sv = sub.add_parser("sriov", help="stand-in for the SR-IOV config daemon: write sriov_numvfs on every rail "
                                      "(the recipe's SriovNetworkNodePolicy count) and wait for the VFs")
    sv.add_argument("--num-vfs", type=int, default=None, help="VFs per rail (default: the platform's recipe, 16 on "
                                                              "nvke-gb200; 0 removes them)")
    sv.add_argument("--tray", action="append", default=[], help="only this tray (repeatable); default every tray")
    sv.add_argument("--timeout", type=int, default=60, help="seconds to wait for the VFs")
    bm = sub.add_parser("bmc", help="the trays' BMCs: one Redfish emulator (sushy-tools) per tray on loopback, "
                                    "TLS + basic auth; up writes the trays' gpu_tray_bmc_* into the inventory")
    bm.add_argument("action", choices=["up", "down", "status"])
    bm.add_argument("--json", action="store_true")
    pw = sub.add_parser("power", help="power a tray on, off or reset it (as its BMC does)")
    pw.add_argument("tray")
    pw.add_argument("action", choices=sorted(POWER_ACTIONS))
    sub.add_parser("inventory", help="print the path of the lab's Ansible inventory")
    sub.add_parser("ssh-config", help="print the path of the lab's ssh_config (testinfra --ssh-config)")
    sub.add_parser("deps", help="apt-get install the host packages the lab needs")
    sub.add_parser("rootfs", help="build the cached tray rootfs (if needed) and print its path")
    sub.add_parser("prune-cache", help="remove cached rootfs trees that are neither current nor in use")
    return p


COMMANDS = {"up": cmd_up, "down": cmd_down, "status": cmd_status, "reset": cmd_reset, "ssh": cmd_ssh,
            "inventory": cmd_inventory, "sriov": cmd_sriov, "ssh-config": cmd_ssh_config, "deps": cmd_deps, "rootfs": cmd_rootfs,
            "prune-cache": cmd_prune, "bmc": cmd_bmc, "power": cmd_power}


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.cmd == "reset" and (args.platform is None) != (args.trays is None):
        build_parser().error("reset: give both --platform and --trays, or neither (reuse the running lab's)")
    if args.cmd == "reset" and args.platform is None and args.fault:
        build_parser().error("reset: --fault needs --platform and --trays (without them reset reuses the running "
                             "lab's options, faults included)")
    try:
        return COMMANDS[args.cmd](args) or 0
    except util.LabError as exc:
        print("lab %s: ERROR: %s" % (args.cmd, exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lab %s: interrupted; run `lab/lab down` to clean up" % args.cmd, file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
