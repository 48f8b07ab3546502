"""AWX as code: the surveys are generated from the roles' argument specs and committed current, every job
template names a playbook that exists, and playbooks/awx_configure.yml builds the workflow (rack-aligned
prepare nodes) without an AWX to talk to (`--tags plan`). tests/lab/test_awx_runner.py runs the templates'
playbooks through ansible-runner on the lab."""
import ast
import json
import pathlib
import re
import subprocess
import sys

import jinja2
import pytest

from ansible_env import checkout_env
from awxkit import credential_injection
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


def plan(*extra):
    """awx_configure.yml --tags plan with ``extra`` (each one -e): (process, the workflow nodes shown or None)."""
    argv = [str(BIN / "ansible-playbook"), "playbooks/awx_configure.yml", "--tags", "plan"]
    for item in extra:
        argv += ["-e", item]
    proc = subprocess.run(argv, cwd=ROOT, env=dict(ansible_env(), ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json"),
                          capture_output=True, text=True, check=False)
    tasks = json.loads(proc.stdout)["plays"][0]["tasks"]
    shown = [t["hosts"]["localhost"].get("__awx_configure_nodes") for t in tasks
             if t["task"]["name"].startswith("Show the workflow nodes")]
    return proc, tasks, (shown[0] if shown else None)


def test_workflow_runs_prepare_trays_once_per_rack_group():
    proc, _tasks, nodes = plan(json.dumps({"awx_configure_rack_groups": ["rack01", "rack02"]}))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
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


def test_rack_groups_given_as_a_comma_string_are_the_list_the_workflow_uses():
    """-e awx_configure_rack_groups=rack1 made nodes prepare_trays-r, -a, -c, -k, -1 with limit "r" (issue 53): the
    opening checks the value against playbooks/vars/awx_configure_spec.yml and the play uses the checked list."""
    for given, racks in (("awx_configure_rack_groups=rack1", ["rack1"]),
                         ("awx_configure_rack_groups=rack1,rack2", ["rack1", "rack2"]),
                         (json.dumps({"awx_configure_rack_groups": ["rack1", "rack2"]}), ["rack1", "rack2"])):
        proc, _tasks, nodes = plan(given)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
        prepare = [n for n in nodes if n["identifier"].startswith("prepare_trays")]
        assert [(n["identifier"], n["limit"]) for n in prepare] == [("prepare_trays-" + r, r) for r in racks], nodes


@pytest.mark.parametrize("given, clause", [
    ("awx_configure_rack_group=rack1",
     "awx_configure_rack_group is not a variable of playbook awx_configure (did you mean awx_configure_rack_groups?)"),
    ("awx_configure_validate_schedule=daily",
     "awx_configure_validate_schedule is not a schedule AWX accepts (no DTSTART (it starts DTSTART:YYYYMMDDTHHMMSSZ); "
     "no RRULE): give an iCal DTSTART and RRULE such as 'DTSTART:20260101T030000Z RRULE:FREQ=DAILY;INTERVAL=1', or '' "
     "for no schedule, got 'daily'"),
    ("awx_configure_validate_schedule='DTSTART:20260101T030000Z RRULE:FREQ=DAILY'",
     "awx_configure_validate_schedule is not a schedule AWX accepts (RRULE:FREQ=DAILY has no INTERVAL)"),
    ("awx_configure_state=presnt", "awx_configure_state must be one of: present, absent, got 'presnt'"),
    ("awx_configure_validate_certs=maybe", "awx_configure_validate_certs must be true or false, got 'maybe'"),
])
def test_a_misspelt_or_bad_awx_configure_input_is_refused_before_anything_else(given, clause):
    """A misspelt awx_configure_* was ignored and a schedule of "daily" accepted (issue 53): one sentence naming the
    variable, nothing after the check ran - with --tags plan as without it (the opening is tagged always)."""
    proc, tasks, nodes = plan(given)
    assert proc.returncode == 2, proc.stdout[-4000:]
    result = tasks[0]["hosts"]["localhost"]
    assert result["failed"] is True and result["msg"].startswith(
        "The run's inputs are refused, nothing was read, written or installed: " + clause), result["msg"]
    assert len(tasks) == 1 and nodes is None, [t["task"]["name"] for t in tasks]


def test_a_schedule_with_a_time_zone_is_accepted():
    proc, tasks, _nodes = plan("awx_configure_validate_schedule='DTSTART;TZID=Europe/Berlin:20260101T030000 "
                               "RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=MO'")
    assert proc.returncode == 0, proc.stdout[-4000:]
    shown = [t["hosts"]["localhost"]["__awx_configure_schedule"] for t in tasks
             if t["task"]["name"].startswith("Show the validate schedule")]
    assert shown[0]["rrule"] == "DTSTART;TZID=Europe/Berlin:20260101T030000 RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=MO"


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


def _job_template_task():
    tasks = read_yaml("playbooks", "awx_configure.yml")[0]["tasks"]
    found = [t for t in tasks if t.get("awx.awx.job_template", {}).get("state") == "present"]
    assert len(found) == 1, [t.get("name") for t in tasks]
    return found[0]


def test_the_signing_credential_is_attached_to_the_validate_template_only():
    """Issue 53, item 7: the credentials each job template gets, rendered from the task for every template the
    playbook creates - the signing key goes to the validate template (the one its schedule runs) and to no other; a
    condition naming a template id that does not exist attached it to none."""
    task = _job_template_task()
    expression = task["awx.awx.job_template"]["credentials"]
    options = {"machine_credential": "ssh", "kube_credential": "kube", "bmc_credential": "",
               "signing_credential": "evidence key"}
    given = {}
    for template in DEFINITIONS["awx_job_templates"]:
        rendered = jinja2.Template(expression).render(__awx_configure=options, item=template)
        given[template["id"]] = ast.literal_eval(rendered.strip())
    assert {tid for tid, creds in given.items() if "evidence key" in creds} == {"validate"}, given
    assert all(creds[:2] == ["ssh", "kube"] for creds in given.values()), given
    unsigned = jinja2.Template(expression).render(__awx_configure=dict(options, signing_credential=""),
                                                  item={"id": "validate"})
    assert ast.literal_eval(unsigned.strip()) == ["ssh", "kube"]


def test_the_signing_key_credential_hands_the_role_a_file_with_the_key(tmp_path):
    """The validate role reads gpu_tray_evidence_signing_key as a path (validate_evidence_signing_key, type path): the
    credential type must write the PEM into a file of the job and inject that file's path, not the PEM text."""
    pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n" \
          "-----END PRIVATE KEY-----\n"
    (tmp_path / "env").mkdir()
    _env, extra = credential_injection({"signing_key": pem, "passphrase": ""}, tmp_path)
    path = pathlib.Path(extra["gpu_tray_evidence_signing_key"])
    assert path.is_absolute() and path.parent == tmp_path / "env", extra
    assert path.read_text() == pem
    assert extra["gpu_tray_evidence_signing_key_passphrase"] == ""
    spec = read_yaml("roles", "validate", "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert spec["validate_evidence_signing_key"]["type"] == "path"
