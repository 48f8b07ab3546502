"""AWX as code: the surveys are generated from the roles' argument specs and committed current, every job
template names a playbook that exists, and playbooks/awx_configure.yml builds the workflow (rack-aligned
prepare nodes) without an AWX to talk to (`--tags plan`). tests/lab/test_awx_runner.py runs the templates'
playbooks through ansible-runner on the lab."""
import json
import re
import subprocess
import sys

import pytest

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, load, read_yaml, run

DEFINITIONS = read_yaml("playbooks", "vars", "awx_job_templates.yml")
awx_surveys = load("tools", "awx_surveys.py")


def ansible_env():
    return checkout_env(ROOT, home=False, bin_path=str(BIN))


def test_committed_surveys_are_current():
    rc, out = run([sys.executable, "tools/awx_surveys.py", "--check"])
    assert rc == 0, out


def test_check_fails_on_a_stale_or_missing_survey(tmp_path, monkeypatch):
    monkeypatch.setattr(awx_surveys, "OUT", tmp_path)
    assert awx_surveys.main(["--check"]) == 1                      # none written yet
    assert awx_surveys.main([]) == 0
    assert awx_surveys.main(["--check"]) == 0
    survey = tmp_path / "prepare_trays.json"
    stale = survey.read_text().replace('"default": 600', '"default": 60')       # rolling_reboot_drain_timeout
    assert stale != survey.read_text()
    survey.write_text(stale)
    assert awx_surveys.main(["--check"]) == 1


def test_questions_follow_the_argument_specs():
    spec = {q["question_name"]: q for q in awx_surveys.survey(
        next(t for t in DEFINITIONS["awx_job_templates"] if t["id"] == "prepare_trays"))["spec"]}
    options, _defaults = awx_surveys.role_options("rolling_reboot")
    assert spec["rolling_reboot_drain"]["type"] == "multiplechoice"
    assert spec["rolling_reboot_drain"]["choices"] == options["rolling_reboot_drain"]["choices"]
    assert spec["rolling_reboot_timeout"]["type"] == "integer"
    assert spec["preflight_check_firmware"]["choices"] == ["true", "false"]
    # templated from the inventory (gpu_tray_reboot_batch, _timeout): no default, or the answer would override it
    assert "default" not in spec["rolling_reboot_batch"] and "default" not in spec["rolling_reboot_group_by"]
    assert "default" not in spec["rolling_reboot_timeout"]
    assert "C(" not in json.dumps(spec) and "O(" not in json.dumps(spec)


def test_every_question_asks_for_its_option_under_the_survey_prefix():
    """An answer named like the role option would be an extra var that no inventory value can override, and a blank
    answer (null or "") would replace the inventory's value; under survey_<option> the playbooks' first task drops
    it (plugins/plugin_utils/inputs.py, the same prefix)."""
    prefix = re.search(r"^SURVEY_PREFIX = '([^']+)'$", (ROOT / "plugins" / "plugin_utils" / "inputs.py").read_text(),
                       re.M).group(1)
    assert awx_surveys.SURVEY_PREFIX == prefix == "survey_"
    for path in sorted((ROOT / "playbooks" / "files" / "awx_surveys").glob("*.json")):
        for question in json.loads(path.read_text())["spec"]:
            assert question["variable"] == prefix + question["question_name"], (path.name, question)


def test_dict_and_list_options_and_unknown_variables_are_refused():
    with pytest.raises(awx_surveys.SurveyError, match="stack_component_overrides is a dict"):
        awx_surveys.survey({"id": "x", "name": "x", "survey_roles": ["stack"], "survey": ["stack_component_overrides"]})
    # a list answer would reach the tasks as one string ("tray1,tray10" contains "tray1")
    with pytest.raises(awx_surveys.SurveyError, match="stack_recover_nodes is a list"):
        awx_surveys.survey({"id": "x", "name": "x", "survey_roles": ["stack"], "survey_entry_point": "recover",
                            "survey": ["stack_recover_nodes"]})
    with pytest.raises(awx_surveys.SurveyError, match="not_an_option is not an option"):
        awx_surveys.survey({"id": "x", "name": "x", "survey_roles": ["preflight"], "survey": ["not_an_option"]})


@pytest.mark.parametrize("template", DEFINITIONS["awx_job_templates"], ids=lambda t: t["id"])
def test_template_playbook_exists_and_passes_syntax_check(template):
    assert (ROOT / template["playbook"]).is_file(), template["playbook"]
    rc, out = run([BIN / "ansible-playbook", "--syntax-check", "-i", "localhost,", template["playbook"]],
                  env=ansible_env())
    assert rc == 0, out


def test_workflow_runs_prepare_trays_once_per_rack_group():
    proc = subprocess.run([str(BIN / "ansible-playbook"), "playbooks/awx_configure.yml", "--tags", "plan",
                           "-e", json.dumps({"awx_configure_rack_groups": ["rack01", "rack02"]})],
                          cwd=ROOT, env=dict(ansible_env(), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json"),
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
    nodes = json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]["__awx_configure_nodes"]
    by_id = {n["identifier"]: n for n in nodes}
    assert sorted(by_id) == ["deploy_stack", "preflight", "prepare_trays-rack01", "prepare_trays-rack02", "validate"]
    assert [s["identifier"] for s in by_id["preflight"]["related"]["success_nodes"]] == [
        "prepare_trays-rack01", "prepare_trays-rack02"]
    for rack in ("rack01", "rack02"):
        node = by_id["prepare_trays-" + rack]
        assert node["limit"] == rack and node["related"]["success_nodes"] == [{"identifier": "deploy_stack"}]
    assert by_id["deploy_stack"]["related"]["success_nodes"] == [{"identifier": "validate"}]
    assert by_id["deploy_stack"]["all_parents_must_converge"] is True      # every rack prepared first
    assert "limit" not in by_id["validate"] and by_id["validate"]["related"]["success_nodes"] == []
    names = {t["id"]: t["name"] for t in DEFINITIONS["awx_job_templates"]}
    assert by_id["validate"]["unified_job_template"]["name"] == names["validate"]
    # docs/awx.md names as the converging node the one the playbook gives several parents
    parents = {}
    for node in nodes:
        for child in node["related"]["success_nodes"]:
            parents.setdefault(child["identifier"], []).append(node["identifier"])
    converging = [ident for ident, of in parents.items() if len(of) > 1]
    assert converging == ["deploy_stack"], parents
    assert "With rack groups the converging node is **%s**" % names["deploy_stack"] in \
        (ROOT / "docs" / "awx.md").read_text()


def test_docs_table_and_workflow_are_generated_from_the_code(tmp_path, monkeypatch):
    """docs/awx.md's job templates, surveys and workflow are tools/awx_docs.py's rendering of the definitions and the
    survey files; a changed survey default makes the committed page stale."""
    awx_docs = load("tools", "awx_docs.py")
    assert awx_docs.main(["--check"]) == 0, "run python3 tools/awx_docs.py"
    block = awx_docs.render()
    for template in DEFINITIONS["awx_job_templates"]:
        assert "| `%s` | `%s` |" % (template["name"], template["playbook"]) in block
    assert "`survey_rolling_reboot_drain` (auto/always/never; default `auto`)" in block
    assert "`survey_rolling_reboot_batch` (text; blank keeps the inventory's value)" in block
    surveys = tmp_path / "surveys"
    surveys.mkdir()
    for path in (ROOT / "playbooks" / "files" / "awx_surveys").glob("*.json"):
        (surveys / path.name).write_text(path.read_text().replace('"default": 600', '"default": 60'))
    monkeypatch.setattr(awx_docs, "SURVEYS", surveys)
    assert awx_docs.main(["--check"]) == 1


SURVEYS = sorted((ROOT / "playbooks" / "files" / "awx_surveys").glob("*.json"))


@pytest.mark.parametrize("path", SURVEYS, ids=lambda p: p.stem)
def test_surveys_are_valid_awx_survey_specs(path):
    """What AWX checks when a survey spec is saved: known types, choices for choice questions, defaults that fit."""
    survey = json.loads(path.read_text())
    assert isinstance(survey["name"], str) and isinstance(survey["description"], str)
    assert isinstance(survey["spec"], list)
    variables = [q["variable"] for q in survey["spec"]]
    assert len(variables) == len(set(variables)), "duplicate variable in %s" % path.name
    for q in survey["spec"]:
        assert q["type"] in ("text", "textarea", "password", "integer", "float", "multiplechoice", "multiselect"), q
        assert q["question_name"] and isinstance(q["required"], bool), q
        if q["type"] in ("multiplechoice", "multiselect"):
            assert q["choices"] and all(isinstance(c, str) for c in q["choices"]), q
            assert "default" not in q or q["default"] in q["choices"], q
        if q["type"] == "integer" and "default" in q:
            assert isinstance(q["default"], int) and not isinstance(q["default"], bool), q
