"""lab/gpu_tray_lab/hostlimits.py: the one host setting the lab changes (fs.inotify.max_user_instances), raised
for N trays by `lab up` and put back by `lab down` - against a stand-in for the /proc/sys file."""
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "lab"))

from gpu_tray_lab import hostlimits  # noqa: E402


@pytest.fixture
def sysctl(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TRAY_LAB_STATE", str(tmp_path / "state"))
    (tmp_path / "state").mkdir()
    path = tmp_path / "max_user_instances"
    path.write_text("128\n")
    return path


def test_16_trays_raise_the_debian_default_and_down_restores_it(sysctl):
    note = hostlimits.ensure(16, path=sysctl)
    assert sysctl.read_text() == "%d\n" % hostlimits.needed(16)
    assert hostlimits.needed(16) >= 128 + 15 * 16           # 15 instances per booted tray, measured
    assert "128 -> %d" % hostlimits.needed(16) in note
    assert "restored to 128" in hostlimits.restore(path=sysctl)
    assert sysctl.read_text() == "128\n"
    assert not hostlimits.record_file().exists()


def test_a_high_enough_limit_is_left_alone(sysctl):
    sysctl.write_text("100000\n")
    assert hostlimits.ensure(64, path=sysctl) is None
    assert hostlimits.restore(path=sysctl) is None
    assert sysctl.read_text() == "100000\n"


def test_a_bigger_lab_raises_again_but_remembers_the_first_value(sysctl):
    hostlimits.ensure(4, path=sysctl)
    hostlimits.ensure(64, path=sysctl)
    assert sysctl.read_text() == "%d\n" % hostlimits.needed(64)
    hostlimits.restore(path=sysctl)
    assert sysctl.read_text() == "128\n"


def test_a_value_changed_by_someone_else_is_not_overwritten(sysctl):
    hostlimits.ensure(16, path=sysctl)
    sysctl.write_text("9999\n")
    assert "left as it is" in hostlimits.restore(path=sysctl)
    assert sysctl.read_text() == "9999\n"


def test_an_unwritable_limit_is_a_warning_with_the_fix(sysctl, monkeypatch):
    def refuse(self, _text):
        raise PermissionError("read-only file system")
    monkeypatch.setattr(pathlib.Path, "write_text", refuse)
    note = hostlimits.ensure(16, path=sysctl)
    assert note.startswith("warning") and "sysctl -w fs.inotify.max_user_instances=%d" % hostlimits.needed(16) in note
