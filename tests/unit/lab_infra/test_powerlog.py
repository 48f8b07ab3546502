"""lab/gpu_tray_lab/powerlog.py: reboot windows from a tray's power.log and the reboot periods they chain into - what
tests/lab and tools/prep_bench.py count ("2 reboot periods: the canary, then the other 7 together")."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "lab"))
from gpu_tray_lab import powerlog  # noqa: E402


def write_log(state, tray, lines):
    path = state / "trays" / tray / "merged" / "var" / "log" / "gpu-tray-lab" / "power.log"
    path.parent.mkdir(parents=True)
    path.write_text("".join(line + "\n" for line in lines))


def test_windows_from_the_power_log(tmp_path):
    write_log(tmp_path, "tray01", ["100.0 up boot 1", "200.5 down boot 1", "230.25 up boot 2", "300 down boot 2"])
    assert powerlog.windows("tray01", tmp_path) == [(200.5, 230.25), (300.0, None)]


def test_an_up_without_a_down_is_the_first_boot(tmp_path):
    write_log(tmp_path, "tray02", ["10 up boot 1", "11 up boot 1"])
    assert powerlog.windows("tray02", tmp_path) == []


def test_the_state_directory_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TRAY_LAB_STATE", str(tmp_path))
    write_log(tmp_path, "tray03", ["1 down boot 1", "2 up boot 2"])
    assert powerlog.windows("tray03") == [(1.0, 2.0)]


def test_a_canary_then_seven_together_are_two_periods():
    by_tray = {"tray01": [(0, 30)]}
    by_tray.update(("tray%02d" % i, [(40 + i, 80 + i)]) for i in range(2, 9))
    found = powerlog.periods(by_tray)
    assert [p["trays"] for p in found] == [["tray01"], ["tray%02d" % i for i in range(2, 9)]]
    assert (found[0]["start"], found[0]["end"]) == (0, 30) and (found[1]["start"], found[1]["end"]) == (42, 88)


def test_windows_that_chain_are_one_period_and_touching_ones_are_not():
    assert [p["trays"] for p in powerlog.periods({"a": [(0, 10)], "b": [(5, 20)], "c": [(19, 30)]})] == [["a", "b", "c"]]
    assert [p["trays"] for p in powerlog.periods({"a": [(0, 10)], "b": [(10, 20)]})] == [["a"], ["b"]]


def test_a_tray_still_down_keeps_its_period_open():
    found = powerlog.periods({"a": [(0, 10)], "b": [(15, None)], "c": [(100, 110)]})
    assert [p["trays"] for p in found] == [["a"], ["b", "c"]] and found[1]["end"] is None


def test_overlap():
    assert powerlog.overlap((0, 10), (5, None)) and powerlog.overlap((5, None), (0, 10))
    assert not powerlog.overlap((0, 10), (10, 20)) and not powerlog.overlap((10, 20), (0, 10))
    assert powerlog.periods({}) == []
