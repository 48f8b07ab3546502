"""A rolling reboot killed at any point (kill -9 of ansible-playbook's process group: an AWX job's pod evicted, a
laptop's session gone), then the same command with the same report folder (issue 55): it passes, every tray has
rebooted exactly once over both runs (boot counts), and the second run's report opens with the run that was cut
short - its id, the step it stopped at, the trays it sent down, back, verified and still down. Run again while the
dead run's trays are still down, it refuses before any reboot, naming them and the dead run.

One lab boot of four rke2-vr200 trays (no cluster configured: all idle - the canary, then the other three together)
for every kill point; each case asks for a new kernel argument (lab_test_arg of tests/lab/playbooks/fake_prepare.yml),
so every tray needs one reboot again. Kill points, by what the run's journal (journal.jsonl in the report folder) says
it has done: after the plan, before any reboot was sent; with the canary down; with the second wave down; with every
tray back and verified, before the report.
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from labtools import BIN, ROOT, ansible_env, lab, lab_up, ssh_rc, tray_status
from test_rolling_reboot import FAST, PLAYBOOK, report_row

TRAYS = ("tray01", "tray02", "tray03", "tray04")


@pytest.fixture(scope="module")
def lab4k():
    inventory = lab_up("--platform", "rke2-vr200", "--trays", "4")
    yield inventory
    lab("down")


def _argv(inventory, report, arg):
    return [str(BIN / "ansible-playbook"), "-i", str(inventory), str(PLAYBOOK), "-e",
            json.dumps(dict(FAST, gpu_tray_report_dir=str(report), lab_test_arg=arg))]


def _env():
    return dict((k, v) for k, v in ansible_env().items()
                if k not in ("K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_CONTEXT", "KUBECONFIG"))


def _journal(report):
    path = report / "journal.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def _run_and_kill(inventory, report, arg, when, timeout=300):
    """Start the playbook in its own process group; kill -9 the group as soon as the journal satisfies ``when``."""
    proc = subprocess.Popen(_argv(inventory, report, arg), cwd=ROOT, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if when(_journal(report)):
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
                return _journal(report)
            assert proc.poll() is None, "the run ended before the kill point:\n%s" % proc.stdout.read()[-4000:]
            time.sleep(0.05)
        raise AssertionError("the kill point was not reached within %d s: %s" % (timeout, _journal(report)))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def _run(inventory, report, arg):
    proc = subprocess.run(_argv(inventory, report, arg), cwd=ROOT, env=_env(), capture_output=True, text=True,
                          check=False)
    return proc.returncode, proc.stdout + proc.stderr


def _steps(entries, step):
    return sorted(set(t for e in entries if e["step"] == step for t in e["trays"]))


def _boots():
    return dict((t, tray_status(t)["boot_count"]) for t in TRAYS)


def _answering(trays, timeout=120):
    """Wait until every tray answers over SSH (the lab boots a tray in seconds)."""
    deadline = time.monotonic() + timeout
    waiting = list(trays)
    while waiting and time.monotonic() < deadline:
        waiting = [t for t in waiting if ssh_rc(t, "systemctl is-system-running --wait")[0] not in (0, 1)]
        time.sleep(1)
    assert not waiting, "trays not back: %s" % waiting


CASES = [
    # (name, kill when the journal says ...)
    ("planned", lambda j: any(e["step"] == "planned" for e in j)),
    ("canary-down", lambda j: len(_steps(j, "sent")) == 1),
    ("wave2-down", lambda j: len(_steps(j, "sent")) == 4 and len(_steps(j, "back")) == 1),
    ("all-verified", lambda j: len(_steps(j, "verified")) == 4),
]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[c[0] for c in CASES])
def test_a_killed_rolling_reboot_is_finished_by_the_same_command(lab4k, tmp_path, index):
    name, when = CASES[index]
    arg = "gtl_rolling.killed=%d" % index
    before = _boots()
    dead = _run_and_kill(lab4k, tmp_path, arg, when)
    dead_run = dead[0]["run"]
    assert not [e for e in dead if e["step"] == "end"], dead
    once = dict((t, before[t] + 1) for t in TRAYS)
    if name == "wave2-down":
        # a tray the dead run sent down that does not answer (held off at its BMC): the same command, run now,
        # refuses before any reboot, naming it (and any other of the wave still booting) and the dead run, in its
        # report's first lines
        away = [t for t in _steps(dead, "sent") if t not in _steps(dead, "back")][-1]
        lab("power", away, "off")
        try:
            rc, out = _run(lab4k, tmp_path, arg)
            assert rc != 0, out[-4000:]
            named = re.search(r"((?:tray\d+, )*tray\d+) sent down by run %s \(cut short at " % re.escape(dead_run), out)
            assert named and away in named.group(1).split(", "), out[-4000:]
            assert "nothing is rebooted until" in out, out[-4000:]
            md = (tmp_path / "rolling-reboot.md").read_text()
            assert md.splitlines()[2].startswith("**Earlier run:** Run %s was cut short at " % dead_run), md
            assert away in md.splitlines()[2].split("still down: ")[1], md
            assert re.search(r"\*\*Refused:\*\* [^\n]*\b%s\b[^\n]* sent down by run %s" % (away, re.escape(dead_run)),
                             md), md
        finally:
            lab("power", away, "on")
        _answering(TRAYS)
        others = [t for t in TRAYS if t != away]
        # the refused run rebooted nothing: every other tray has its one reboot of the dead run
        assert dict((t, _boots()[t]) for t in others) == dict((t, once[t]) for t in others)
        once[away] = _boots()[away]          # its own boots: the dead run's reboot, then the power on
    _answering(TRAYS)
    rc, out = _run(lab4k, tmp_path, arg)
    assert rc == 0, out[-6000:]
    # every tray rebooted exactly once over both runs, and carries the argument
    assert _boots() == once, (name, before, _boots())
    for tray in TRAYS:
        assert arg in ssh_rc(tray, "cat /proc/cmdline")[1].split(), tray
    if name != "wave2-down":
        md = (tmp_path / "rolling-reboot.md").read_text()
        earlier = md.splitlines()[2]
        assert earlier.startswith("**Earlier run:** Run %s was cut short at " % dead_run), md
        if name == "canary-down":
            assert "sent down: %s;" % _steps(dead, "sent")[0] in earlier, earlier
        if name == "all-verified":
            assert "verified: tray01, tray02, tray03, tray04; still down: none" in earlier, earlier
            # nothing left to reboot: the second run rebooted none
            assert all(report_row(tmp_path, t)["status"] == "no reboot needed" for t in TRAYS), md
    # the run ended: a third run finds nothing cut short
    assert _journal(tmp_path)[-1]["step"] == "end"
