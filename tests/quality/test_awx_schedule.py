"""Validation on a schedule (issue 46 item 4): playbooks/awx_configure.yml schedules the validate template, daily by
default, a variable to change or remove it; `--tags plan` shows the schedule without an AWX to talk to, and
docs/awx.md says how to be told of a failed run."""
import json
import subprocess

import pytest

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, read_yaml

TEMPLATES = read_yaml("playbooks", "vars", "awx_job_templates.yml")["awx_job_templates"]
VALIDATE = next(t["name"] for t in TEMPLATES if t["id"] == "validate")


def plan(*extra):
    return plan_raw(*[json.dumps(item) for item in extra])


def plan_raw(*extra):
    argv = [str(BIN / "ansible-playbook"), "playbooks/awx_configure.yml", "--tags", "plan"]
    for item in extra:
        argv += ["-e", item]
    env = checkout_env(ROOT, home=False, callback="ansible.builtin.json", bin_path=str(BIN))
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
    tasks = json.loads(proc.stdout)["plays"][0]["tasks"]
    shown = [t for t in tasks if t["task"]["name"].startswith("Show the validate schedule")]
    assert len(shown) == 1, [t["task"]["name"] for t in tasks]
    return shown[0]["hosts"]["localhost"]["__awx_configure_schedule"]


@pytest.mark.parametrize("extra, rrule, enabled, state", [
    ({}, "DTSTART:20260101T030000Z RRULE:FREQ=DAILY;INTERVAL=1", True, "present"),
    ({"awx_configure_validate_schedule": "DTSTART:20260101T000000Z RRULE:FREQ=HOURLY;INTERVAL=6"},
     "DTSTART:20260101T000000Z RRULE:FREQ=HOURLY;INTERVAL=6", True, "present"),
    ({"awx_configure_validate_schedule_enabled": False}, "DTSTART:20260101T030000Z RRULE:FREQ=DAILY;INTERVAL=1", False,
     "present"),
    ({"awx_configure_validate_schedule": ""}, "", True, "absent"),
    ({"awx_configure_state": "absent"}, "DTSTART:20260101T030000Z RRULE:FREQ=DAILY;INTERVAL=1", True, "absent"),
])
def test_the_plan_shows_the_validate_schedule(extra, rrule, enabled, state):
    schedule = plan(extra)
    assert schedule == {"name": "%s (scheduled)" % VALIDATE, "unified_job_template": VALIDATE, "rrule": rrule,
                        "enabled": enabled, "state": state, "extra_data": {"gpu_tray_validate_phases": READING}}


# the phases that only read: the schedule's default (issue 54: the performance phase's NCCL benchmarks take GPUs and
# VFs on production trays every night)
READING = ["readiness", "deployment", "trays", "conformance"]


@pytest.mark.parametrize("given, phases", [
    ({"awx_configure_validate_schedule_phases": READING + ["performance"]}, READING + ["performance"]),
    ("awx_configure_validate_schedule_phases=readiness,trays", ["readiness", "trays"]),
])
def test_the_schedule_runs_the_phases_the_site_chooses(given, phases):
    """The schedule hands its phases to the job it launches (extra_data gpu_tray_validate_phases; the validate template
    asks for variables on launch, as AWX requires of a schedule's extra_data); a comma string is the list."""
    schedule = plan(given) if isinstance(given, dict) else plan_raw(given)
    assert schedule["extra_data"] == {"gpu_tray_validate_phases": phases}
    validate = next(t for t in TEMPLATES if t["id"] == "validate")
    assert validate.get("ask_variables") is True


def test_a_phase_that_is_not_one_is_refused_by_name():
    argv = [str(BIN / "ansible-playbook"), "playbooks/awx_configure.yml", "--tags", "plan", "-e",
            "awx_configure_validate_schedule_phases=readiness,nccl"]
    env = checkout_env(ROOT, home=False, callback="ansible.builtin.json", bin_path=str(BIN))
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stdout[-4000:]
    result = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]
    assert "awx_configure_validate_schedule_phases" in result["msg"] and "nccl" in result["msg"], result["msg"]


def test_the_schedule_task_is_the_one_the_plan_shows():
    play = read_yaml("playbooks", "awx_configure.yml")[0]
    task = next(t for t in play["tasks"] if "awx.awx.schedule" in t)
    assert task["awx.awx.schedule"]["unified_job_template"] == "{{ __awx_configure_schedule.unified_job_template }}"
    assert task["awx.awx.schedule"]["state"] == "{{ __awx_configure_schedule.state }}"
    names = [t["name"] for t in play["tasks"]]
    # created after the template it runs, removed before it
    assert names.index("Job templates with their generated surveys") < names.index(task["name"]) \
        < names.index("Remove the job templates")


def test_docs_say_how_to_change_it_and_how_to_be_told():
    text = (ROOT / "docs" / "awx.md").read_text()
    section = text.split(". Validation on a schedule", 1)[1].split("\n## ", 1)[0]
    for needle in ("awx_configure_validate_schedule", "awx_configure_validate_schedule_enabled", "notification",
                   "drift", "--tags plan", "awx_configure_validate_schedule_phases", "NCCL", "performance"):
        assert needle in section, needle
