"""The AWX job templates (playbooks/vars/awx_job_templates.yml) run through ansible-runner - the engine AWX runs
jobs with - on two rehearsal-lab VR200 trays, the way AWX lays a job out: a private data dir with
env/extravars (the template's survey defaults, generated from the roles' argument specs), env/envvars (the
collections path an execution environment provides), inventory/ (the lab's inventory with its platform
group_vars) and project/ (this checkout). Each run must end `successful` with a playbook_on_stats event that
counts no failure; preflight changes nothing and prepare trays reboots each tray exactly once.

validate is not run here: it needs a cluster with the stack deployed (tests/cluster covers it).
"""
import json
import pathlib
import subprocess

import pytest
import yaml

from labtools import BIN, ROOT, ansible_env, lab, lab_up, tray_status

DEFINITIONS = yaml.safe_load((ROOT / "playbooks" / "vars" / "awx_job_templates.yml").read_text())
TEMPLATES = {t["id"]: t for t in DEFINITIONS["awx_job_templates"]}
TRAYS = ("tray01", "tray02")


@pytest.fixture(scope="module")
def inventory():
    inv = lab_up("--platform", "rke2-vr200", "--trays", str(len(TRAYS)))
    yield inv
    lab("down")


def survey_defaults(template_id):
    survey = json.loads((ROOT / "playbooks" / "files" / "awx_surveys" / ("%s.json" % template_id)).read_text())
    return {q["variable"]: q["default"] for q in survey["spec"] if "default" in q}


def run_template(template_id, inventory, tmp_path):
    """ansible-runner run <private data dir> -p <the template's playbook>; returns (extravars, artifacts dir)."""
    pdd = tmp_path / template_id
    (pdd / "env").mkdir(parents=True)
    extravars = survey_defaults(template_id)
    extravars["gpu_tray_report_dir"] = str(pdd / "report")   # AWX: the project dir; here out of the checkout
    (pdd / "env" / "extravars").write_text(yaml.safe_dump(extravars))
    env = ansible_env()
    (pdd / "env" / "envvars").write_text(yaml.safe_dump({
        "ANSIBLE_COLLECTIONS_PATH": env["ANSIBLE_COLLECTIONS_PATH"], "ANSIBLE_HOME": str(pdd / "ansible-home"),
        "ANSIBLE_NOCOLOR": "1"}))
    (pdd / "inventory").symlink_to(pathlib.Path(inventory).parent, target_is_directory=True)
    (pdd / "project").symlink_to(ROOT, target_is_directory=True)
    proc = subprocess.run([str(BIN / "ansible-runner"), "run", str(pdd), "-p", TEMPLATES[template_id]["playbook"],
                           "--ident", template_id], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False, timeout=1200)
    artifacts = pdd / "artifacts" / template_id
    assert proc.returncode == 0, "ansible-runner %s failed (rc %d):\n%s\n%s" % (
        template_id, proc.returncode, proc.stdout[-8000:], proc.stderr[-3000:])
    assert (artifacts / "status").read_text() == "successful"
    assert (artifacts / "rc").read_text() == "0"
    return extravars, artifacts


def stats(artifacts):
    events = [json.loads(p.read_text()) for p in (artifacts / "job_events").glob("*.json")]
    final = [e for e in events if e.get("event") == "playbook_on_stats"]
    assert len(final) == 1, "no playbook_on_stats event in %s" % artifacts
    return final[0]["event_data"]


def test_templates_run_here_exist():
    assert {"preflight", "prepare_trays"} <= set(TEMPLATES), sorted(TEMPLATES)


def test_preflight_template_runs_and_changes_nothing(inventory, tmp_path):
    boots = {t: tray_status(t)["boot_count"] for t in TRAYS}
    extravars, artifacts = run_template("preflight", inventory, tmp_path)
    assert extravars.get("preflight_fail") == "true", extravars   # the survey default reached the run
    data = stats(artifacts)
    assert not data.get("failures") and not data.get("dark"), data
    assert set(data["ok"]) >= set(TRAYS), data
    assert not any(data.get("changed", {}).get(t) for t in TRAYS), data
    assert {t: tray_status(t)["boot_count"] for t in TRAYS} == boots


def test_prepare_trays_template_reboots_each_tray_once(inventory, tmp_path):
    boots = {t: tray_status(t)["boot_count"] for t in TRAYS}
    extravars, artifacts = run_template("prepare_trays", inventory, tmp_path)
    assert extravars.get("rolling_reboot_drain") == "auto" and "rolling_reboot_batch" not in extravars, extravars
    data = stats(artifacts)
    assert not data.get("failures") and not data.get("dark"), data
    assert all(data.get("changed", {}).get(t) for t in TRAYS), data
    assert {t: tray_status(t)["boot_count"] for t in TRAYS} == {t: n + 1 for t, n in boots.items()}
