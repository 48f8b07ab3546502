"""The scenario's reboot-order verifier fails where it must (no VM needed): boot records as the VMs write them
(lab/vm/vmlab.py BOOT_RECORD: event, boot id, kernel boot time, time), judged by vmtools."""
import pytest

import vmtools


def record(boot1, boot2, btime1, down, btime2, up2):
    return [("up", boot1, btime1, btime1 + 30.0), ("down", boot1, btime1, down), ("up", boot2, btime2, up2)]


def test_sequential_reboots_pass():
    windows = {"tray01": vmtools.reboot_window("tray01", record("a", "b", 100, 200.0, 212, 240.0), "b"),
               "tray02": vmtools.reboot_window("tray02", record("c", "d", 101, 260.0, 272, 300.0), "d")}
    assert windows == {"tray01": (200.0, 240.0), "tray02": (260.0, 300.0)}
    assert vmtools.overlapping(windows) == []


def test_parallel_reboots_are_caught():
    # batch 2: the second tray went down while the first was still booting
    windows = {"tray01": (200.0, 240.0), "tray02": (230.0, 275.0), "tray03": (300.0, 340.0)}
    assert vmtools.overlapping(windows) == [("tray01", "tray02")]


def test_no_reboot_two_reboots_and_a_foreign_boot_are_caught():
    with pytest.raises(AssertionError, match="expected one reboot"):
        vmtools.reboot_window("tray01", [("up", "a", 100, 130.0)], "a")
    twice = record("a", "b", 100, 200.0, 212, 240.0) + [("down", "b", 212, 250.0), ("up", "c", 262, 290.0)]
    with pytest.raises(AssertionError, match="expected one reboot"):
        vmtools.reboot_window("tray01", twice, "c")
    with pytest.raises(AssertionError, match="do not chain"):
        vmtools.reboot_window("tray01", record("a", "b", 100, 200.0, 212, 240.0), "z")
    with pytest.raises(AssertionError, match="outside its reboot window"):
        vmtools.reboot_window("tray01", record("a", "b", 100, 200.0, 190, 240.0), "b")
