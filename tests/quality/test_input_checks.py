"""Every playbook checks the run's inputs first (issue 34): the first play a playbook runs opens with the action
gpu_tray.cluster.check_inputs (run once, tagged always, skipped only when an earlier play of the run checked them)
and the task that keeps the AWX survey's answers - before any role, include or module of the play. A play on the
API host checks the trays' values too (a run shows it: tests/unit/plugins/action/test_check_inputs.py, a misspelt
variable set on a tray refused by every API-host playbook), and the playbooks that run helm ask for it. What the
tasks do in a run: tests/unit/plugins/action/test_check_inputs.py."""
import pathlib

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLAYBOOKS = ROOT / "playbooks"
# awx_configure configures AWX from an operator's machine (its own settings, asserted first); it reads no gpu_tray_*
NOT_RUN_ON_TRAYS = {"awx_configure.yml"}
HELM = {"deploy_stack.yml": "{{ gpu_tray_stack_deploy | default(true) }}", "teardown_stack.yml": True,
        "render_bundle.yml": "vendored"}
CHECK = {"name": "Check the run's inputs", "run_once": True, "register": "__gpu_tray_inputs",
         "when": "not (__gpu_tray_inputs_checked | default(false))", "tags": ["always"]}
KEEP = {"name": "Keep the survey's answers and that the inputs were checked",
        "ansible.builtin.set_fact": {"{{ item.key }}": "{{ item.value }}"},
        "loop": "{{ __gpu_tray_inputs.facts | default([]) }}", "loop_control": {"label": "{{ item.key }}"},
        "run_once": True, "tags": ["always"]}
NAMES = sorted(path.name for path in PLAYBOOKS.glob("*.yml") if path.name not in NOT_RUN_ON_TRAYS)


def load(name):
    return yaml.safe_load((PLAYBOOKS / name).read_text())


def first_play(name):
    """(playbook, play) of the first play the playbook runs, following import_playbook."""
    entry = load(name)[0]
    if "ansible.builtin.import_playbook" in entry:
        return first_play(entry["ansible.builtin.import_playbook"])
    return name, entry


def opening(play):
    """The first two tasks of a play: pre_tasks when it has roles (they run before them), else tasks."""
    tasks = play.get("pre_tasks") if play.get("roles") or play.get("pre_tasks") else play.get("tasks")
    return (tasks or [])[:2]


def test_the_playbooks_are_found():
    assert len(NAMES) >= 10 and "render_bundle.yml" in NAMES and "recover_node_maintenance.yml" in NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_first_play_of_the_run_checks_the_inputs_first(name):
    source, play = first_play(name)
    check, keep = (opening(play) + [None, None])[:2]
    assert check is not None and "gpu_tray.cluster.check_inputs" in check, (name, source, opening(play))
    args = check["gpu_tray.cluster.check_inputs"] or {}
    assert dict((key, check[key]) for key in CHECK if key in check) == CHECK, check
    assert keep == KEEP, keep
    assert args.get("helm", False) == HELM.get(source, False), (name, args)
    assert set(args) <= {"hosts", "helm"}, args


@pytest.mark.parametrize("name", ["prepare_trays.yml", "rolling_reboot.yml"])
def test_a_play_after_a_skippable_first_play_checks_again_when_nothing_did(name):
    """prepare_trays.yml's preflight is skipped with gpu_tray_skip_preflight, so its roles' play checks too (skipped
    while __gpu_tray_inputs_checked); rolling_reboot.yml runs on its own as well as imported."""
    plays = [entry for entry in load(name) if "hosts" in entry]
    check = opening(plays[0])[0]
    assert "gpu_tray.cluster.check_inputs" in check and check["when"] == CHECK["when"], check
