"""The REAL playbooks/prepare_trays.yml on 2 VM trays (rke2-vr200, the platform's real group_vars).

Nothing in the VMs emulates the kernel: modules load into the running kernel, ib_core reads its modprobe.d
option when it loads at boot, update-grub writes grub.cfg, GRUB boots it, /proc/cmdline is the kernel's,
systemd applies sysctl.d and unit drop-ins. Only the HCA sysfs tree, mstconfig and the platform identity
(os-release, kernel release string) are the lab's fixtures (docs/lab.md "VM backend").

Inventory differences from a rack, both in the VM inventory or here and said in docs/lab.md: 64 huge pages of
2M instead of 5128 (a 1 GiB VM), no BMC (gpu_tray_bmc_required false), and the rdma_modules role is given the
nvke-gb200 module list (the vr200 recipe loads none) so that module loading and its modules-load.d persistence
are proven on a real kernel.

One module-scoped fixture runs the whole scenario (up, snapshot, run 1, snapshot, run 2, snapshot, down);
the tests judge the snapshots. Expected values come from the roles' vars and the inventory, not from the run.
"""
import re
import time

import pytest
import yaml

import vmtools
from vmtools import ROOT, STATE, TIMINGS, NOTES

PLATFORM = "rke2-vr200"
TRAYS = ("tray01", "tray02")
RDMA_MODULES = ["rdma_ucm", "ib_umad", "ib_ipoib"]
EXTRA = [{"rdma_modules_load": RDMA_MODULES}]


def expected_args():
    """The tuning arguments the vr200 profile asks for, from the platform profile and the recipe registry (the
    inventory's recipe, its nvidia-tuned intent) and the VM inventory's huge page pools."""
    group_vars = yaml.safe_load((ROOT / "inventories" / PLATFORM / "group_vars" / "rke2_vr200.yml").read_text())
    platforms = ROOT / "plugins" / "plugin_utils" / "platforms"
    platform = yaml.safe_load((platforms / ("%s.yml" % PLATFORM)).read_text())
    # the recipe's facts are in the recipe registry (plugins/plugin_utils/stack_data/recipes.yml), not the profile
    registry = yaml.safe_load((ROOT / "plugins" / "plugin_utils" / "stack_data" / "recipes.yml").read_text())
    intent = registry["recipes"][group_vars["gpu_tray_recipe"]]["tuned_intent"]
    tuned = yaml.safe_load((platforms / "_nvidia-tuned.yml").read_text())
    profile = dict(platform["tuning"]["intents"][intent], cmdline=tuned["cmdline"][intent])
    hosts = yaml.safe_load((STATE / "inventory" / "hosts.yml").read_text())
    tray = hosts["all"]["children"]["gpu_trays"]["children"]["rke2_vr200"]["hosts"]["tray01"]
    args = list(profile["cmdline"])
    for pool in tray["gpu_tray_tuning_hugepages"]:
        args += ["hugepagesz=%s" % pool["size"], "hugepages=%d" % pool["count"]]
    if profile.get("default_hugepagesz"):
        args.append("default_hugepagesz=%s" % profile["default_hugepagesz"])
    return args, sum(p["count"] for p in tray["gpu_tray_tuning_hugepages"] if p["size"] == "2M")


@pytest.fixture(scope="module")
def scenario():
    t0 = time.time()
    vmlab_down = vmtools.vmlab("down", check=False)
    assert vmlab_down.returncode == 0, vmlab_down.stderr
    start = time.time()
    up = vmtools.vmlab("up", "--platform", PLATFORM, "--trays", len(TRAYS))
    TIMINGS["vmlab up (image cached or built, 2 VMs boot, fixtures)"] = time.time() - start
    NOTES.append("vmlab up: " + up.stdout.strip().splitlines()[0])
    inventory = STATE / "inventory" / "hosts.yml"
    logs = STATE / "logs"
    logs.mkdir(exist_ok=True)
    data = {"inventory": inventory}
    try:
        data["before"] = dict((t, vmtools.snapshot(t)) for t in TRAYS)

        def step(playbook, log, timing, result, state, options=()):
            """One playbook run (its own report dir), its time, its result and the VMs' state afterwards."""
            run, elapsed = vmtools.playbook(inventory, playbook, logs / log,
                                            ["gpu_tray_report_dir=%s" % (STATE / ("report-" + result))] + EXTRA,
                                            options=options)
            TIMINGS[timing] = elapsed
            data[result] = run
            data[state] = dict((t, vmtools.snapshot(t)) for t in TRAYS)

        step("playbooks/prepare_trays.yml", "check.log", "prepare_trays.yml --check --diff (nothing changes)",
             "check", "checked", options=["--check", "--diff"])
        step("playbooks/prepare_trays.yml", "run1.log", "prepare_trays.yml run 1 (changes + rolling reboot)",
             "first", "after")
        step("playbooks/prepare_trays.yml", "run2.log", "prepare_trays.yml run 2 (re-run)", "second", "rerun")
        step("playbooks/restore_trays.yml", "restore.log", "restore_trays.yml (removes the preparation + rolling reboot)",
             "restore", "restored")
        step("playbooks/restore_trays.yml", "restore2.log", "restore_trays.yml again (nothing left)",
             "restore_again", "restored_again")
        yield data
    finally:
        start = time.time()
        down = vmtools.vmlab("down", check=False)
        TIMINGS["vmlab down"] = time.time() - start
        TIMINGS["scenario total"] = time.time() - t0
        NOTES.append("playbook logs: %s/run1.log, run2.log" % logs)
        assert down.returncode == 0, down.stderr
        assert not [t for t in vmtools.status()["trays"] if t["running"]], "a VM survived vmlab down"


def test_before_the_run_the_trays_are_unprepared(scenario):
    """The verifiers below would fail on an unprepared tray (they are judged against this state)."""
    args, _ = expected_args()
    for tray, snap in scenario["before"].items():
        assert snap["netns_mode"] == "Y", (tray, snap["netns_mode"])
        assert "netns shared" in snap["rdma_system"], (tray, snap["rdma_system"])
        assert not set(RDMA_MODULES) & set(snap["modules"]), (tray, snap["modules"])
        assert not set(args) & set(snap["cmdline"].split()), (tray, snap["cmdline"])
        assert snap["imex_enabled"] == "enabled", (tray, snap["imex_enabled"])
        assert len([b for b in snap["boots"] if b[0] == "up"]) == 1, (tray, snap["boots"])


def test_check_mode_changes_nothing_on_the_real_kernel(scenario):
    """--check --diff reports the changes (modprobe -n resolves the modules) and the VMs are as before."""
    check = scenario["check"]
    assert check.returncode == 0, "check run failed (rc %d); log: %s" % (check.returncode, STATE / "logs" / "check.log")
    counts = vmtools.recap(check.stdout)
    for tray in TRAYS:
        assert counts[tray]["failed"] == 0 and counts[tray]["changed"] > 0, counts
        before, after = scenario["before"][tray], scenario["checked"][tray]
        assert before == after, "%s changed in check mode: %s" % (
            tray, dict((k, (before[k], after.get(k))) for k in before if before[k] != after.get(k)))


def test_first_run_succeeds_and_changes_each_tray(scenario):
    first = scenario["first"]
    assert first.returncode == 0, "run 1 failed (rc %d); log: %s" % (first.returncode, STATE / "logs" / "run1.log")
    counts = vmtools.recap(first.stdout)
    for tray in TRAYS:
        assert counts[tray]["failed"] == 0 and counts[tray]["unreachable"] == 0, counts
        assert counts[tray]["changed"] > 0, counts


def test_rdma_modules_loaded_and_persisted_across_the_reboot(scenario):
    for tray, snap in scenario["after"].items():
        assert set(RDMA_MODULES) <= set(snap["modules"]), (tray, snap["modules"])
        persisted = snap["/etc/modules-load.d/gpu-tray-rdma.conf"].split()
        assert set(RDMA_MODULES) <= set(persisted), (tray, persisted)
        # loaded by systemd-modules-load in THIS boot (the tray rebooted after the role's modprobe)
        for name in RDMA_MODULES:
            assert "Inserted module '%s'" % name in snap["modules_loaded_journal"], (tray, snap["modules_loaded_journal"])
        assert snap["boot_id"] != scenario["before"][tray]["boot_id"], "%s did not reboot" % tray


def test_ib_core_netns_exclusive_after_the_reboot(scenario):
    for tray, snap in scenario["after"].items():
        assert "options ib_core netns_mode=0" in snap["/etc/modprobe.d/gpu-tray-ib-core-netns.conf"], tray
        assert snap["netns_mode"] == "N", (tray, snap["netns_mode"])
        assert "netns exclusive" in snap["rdma_system"], (tray, snap["rdma_system"])


def test_every_tuning_argument_in_proc_cmdline_exactly_once(scenario):
    args, pages = expected_args()
    for tray, snap in scenario["after"].items():
        tokens = snap["cmdline"].split()
        for arg in args:
            assert tokens.count(arg) == 1, "%s: %s appears %d times in %s" % (tray, arg, tokens.count(arg),
                                                                              snap["cmdline"])
        duplicated = sorted(set(t for t in tokens if tokens.count(t) > 1))
        assert not duplicated, (tray, duplicated)
        dropin = re.findall(r"[^\s\"]+", snap["/etc/default/grub.d/99-gpu-tray-kernel-tuning.cfg"])
        assert [a for a in args if a not in dropin] == [], (tray, dropin)
        # the kernel acted on them
        assert snap["numa_balancing"] == "0", (tray, snap["numa_balancing"])
        assert int(snap["hugepages_2m"]) == pages, (tray, snap["hugepages_2m"])


def test_sysctls_and_runtime_stack_limit_applied_by_systemd_at_boot(scenario):
    tuned = yaml.safe_load((ROOT / "plugins" / "plugin_utils" / "platforms" / "_nvidia-tuned.yml").read_text())
    rmem_max = tuned["sysctl_sections"]["multiNodeTraining"]["net.core.rmem_max"]
    for tray, snap in scenario["after"].items():
        assert snap["rmem_max"] == str(rmem_max), (tray, snap["rmem_max"])
        assert "LimitSTACK=67108864" in snap["/etc/systemd/system/rke2-agent.service.d/90-gpu-tray-limitstack.conf"]
        assert snap["rke2_stack"] == "67108864", (tray, snap["rke2_stack"])
        assert scenario["before"][tray]["rke2_stack"] != "67108864", tray


def test_nvidia_imex_masked_and_stopped(scenario):
    for tray, snap in scenario["after"].items():
        assert snap["imex_enabled"] == "masked", (tray, snap["imex_enabled"])
        assert snap["imex_active"] in ("inactive", "failed"), (tray, snap["imex_active"])


def test_trays_rebooted_once_and_strictly_one_at_a_time(scenario):
    """From each VM's own boot record: the reboot window [shutdown began, back up] of one tray ends before the
    other's begins."""
    windows = {}
    for tray, snap in scenario["after"].items():
        windows[tray] = vmtools.reboot_window(tray, snap["boots"], snap["boot_id"])
        TIMINGS["%s reboot: shutdown -> back up (guest clock)" % tray] = windows[tray][1] - windows[tray][0]
    assert vmtools.overlapping(windows) == [], "reboot windows overlap: %s" % windows
    ordered = sorted(windows.items(), key=lambda item: item[1][0])
    for (first, (_d1, up1)), (second, (down2, _u2)) in zip(ordered, ordered[1:]):
        NOTES.append("reboots: %s back up %.0f s before %s went down" % (first, down2 - up1, second))


def test_no_firmware_write_was_attempted(scenario):
    for tray, snap in scenario["rerun"].items():
        assert snap["refused"] == "0", "%s: a firmware write reached the mstconfig/mstfwreset double" % tray


def test_rerun_changes_nothing_and_reboots_nothing(scenario):
    second = scenario["second"]
    assert second.returncode == 0, "run 2 failed (rc %d); log: %s" % (second.returncode, STATE / "logs" / "run2.log")
    counts = vmtools.recap(second.stdout)
    for tray in TRAYS:
        assert counts[tray]["changed"] == 0 and counts[tray]["failed"] == 0, (
            "re-run changed %s; tasks: %s" % (counts, vmtools.changed_tasks(second.stdout)))
        assert scenario["rerun"][tray]["boot_id"] == scenario["after"][tray]["boot_id"], "%s rebooted" % tray
        assert scenario["rerun"][tray]["boots"] == scenario["after"][tray]["boots"], tray
        assert scenario["rerun"][tray]["cmdline"] == scenario["after"][tray]["cmdline"], tray


def test_restore_gives_back_the_unprepared_trays_on_the_real_kernel(scenario):
    """restore_trays.yml: the files are gone, GRUB booted the original command line, ib_core is shared again,
    nvidia-imex is enabled and running, the runtime's stack limit is the default - with one reboot per tray."""
    restore = scenario["restore"]
    assert restore.returncode == 0, "restore failed (rc %d); log: %s" % (restore.returncode, STATE / "logs" / "restore.log")
    for tray in TRAYS:
        before, after, restored = scenario["before"][tray], scenario["rerun"][tray], scenario["restored"][tray]
        assert restored["cmdline"] == before["cmdline"], (tray, restored["cmdline"])
        assert restored["netns_mode"] == "Y" and "netns shared" in restored["rdma_system"], tray
        assert restored["imex_enabled"] == "enabled" and restored["imex_active"] == "active", tray
        assert restored["rke2_stack"] == before["rke2_stack"], tray
        for rel in ("/etc/modules-load.d/gpu-tray-rdma.conf", "/etc/modprobe.d/gpu-tray-ib-core-netns.conf",
                    "/etc/default/grub.d/99-gpu-tray-kernel-tuning.cfg",
                    "/etc/systemd/system/rke2-agent.service.d/90-gpu-tray-limitstack.conf"):
            assert after[rel] and restored[rel] == "", (tray, rel)
        assert len([b for b in restored["boots"] if b[0] == "up"]) == len([b for b in after["boots"] if b[0] == "up"]) + 1
    again = scenario["restore_again"]
    assert again.returncode == 0
    counts = vmtools.recap(again.stdout)
    for tray in TRAYS:
        assert counts[tray]["changed"] == 0, (tray, vmtools.changed_tasks(again.stdout))
        assert scenario["restored_again"][tray]["boot_id"] == scenario["restored"][tray]["boot_id"], tray
