"""Every playbook checks the run's inputs first (issue 34), with one opening written once (issue 45):
playbooks/tasks/opening.yml holds the action gpu_tray.cluster.check_inputs (run once, tagged always, skipped only when
an earlier play of the run checked them) and the task that keeps the AWX survey's answers and the run's context; the
first play a playbook runs imports it as its first task - before any role, include or module of the play - with only
its own arguments (vars __gpu_tray_opening_hosts, __gpu_tray_opening_helm). No playbook calls check_inputs or keeps
the answers itself. A play on the API host checks the trays' values too (a run shows it:
tests/unit/plugins/action/test_check_inputs.py, a misspelt variable set on a tray refused by every API-host
playbook), and the playbooks that run helm ask for it. What the tasks do in a run:
tests/unit/plugins/action/test_check_inputs.py."""
import pytest
import yaml

from qualitykit import ROOT

PLAYBOOKS = ROOT / "playbooks"
OPENING = PLAYBOOKS / "tasks" / "opening.yml"
IMPORT = "ansible.builtin.import_tasks"
# awx_configure configures AWX from an operator's machine; it reads no gpu_tray_* but checks its own options
# (awx_configure_*: playbooks/vars/awx_configure_spec.yml) through the same opening
NOT_RUN_ON_TRAYS = {"awx_configure.yml"}
TRAYS = "{{ ansible_play_hosts_all | union(groups['gpu_trays'] | default([])) }}"
# each playbook's own arguments of the check, as they were before the opening was written once
ARGUMENTS = {
    "deploy_stack.yml": {"hosts": TRAYS, "helm": "{{ gpu_tray_stack_deploy | default(true) }}"},
    "teardown_stack.yml": {"hosts": TRAYS, "helm": True},
    "render_bundle.yml": {"hosts": TRAYS, "helm": "vendored"},
    "recover_node_maintenance.yml": {"hosts": TRAYS},
    "validate.yml": {"hosts": TRAYS},
    "verify_evidence.yml": {"hosts": TRAYS},
    "preflight.yml": {}, "prepare_trays.yml": {}, "restore_trays.yml": {}, "rolling_reboot.yml": {},
    "awx_configure.yml": {"options": "awx_configure"},
}
CHECK = {"name": "Check the run's inputs", "run_once": True, "register": "__gpu_tray_inputs",
         "when": "not (__gpu_tray_inputs_checked | default(false))", "tags": ["always"],
         "gpu_tray.cluster.check_inputs": {"hosts": "{{ __gpu_tray_opening_hosts | default(omit) }}",
                                           "helm": "{{ __gpu_tray_opening_helm | default(omit) }}",
                                           "options": "{{ __gpu_tray_opening_options | default(omit) }}"}}
KEEP = {"name": "Keep the survey's answers and that the inputs were checked",
        "ansible.builtin.set_fact": {"{{ item.key }}": "{{ item.value }}"},
        "loop": "{{ __gpu_tray_inputs.facts | default([]) }}", "loop_control": {"label": "{{ item.key }}"},
        "run_once": True, "tags": ["always"]}
NAMES = sorted(path.name for path in PLAYBOOKS.glob("*.yml"))


def load(name):
    return yaml.safe_load((PLAYBOOKS / name).read_text())


def first_play(name):
    """(playbook, play) of the first play the playbook runs, following import_playbook."""
    entry = load(name)[0]
    if "ansible.builtin.import_playbook" in entry:
        return first_play(entry["ansible.builtin.import_playbook"])
    return name, entry


def first_task(play):
    """The first task of a play: of pre_tasks when it has roles (they run before them), else of tasks."""
    tasks = play.get("pre_tasks") if play.get("roles") or play.get("pre_tasks") else play.get("tasks")
    return (tasks or [None])[0]


def arguments(task):
    """The check's arguments a playbook's import of the opening gives (its vars, without the prefix)."""
    prefix = "__gpu_tray_opening_"
    return dict((key[len(prefix):], value) for key, value in (task.get("vars") or {}).items())


def tasks_of(node):
    """Every task of a parsed playbook (plays' task lists, blocks, rescue, always), depth first."""
    if isinstance(node, list):
        for item in node:
            yield from tasks_of(item)
    elif isinstance(node, dict):
        if "hosts" not in node:
            yield node
        for key in ("pre_tasks", "tasks", "post_tasks", "handlers", "block", "rescue", "always"):
            yield from tasks_of(node.get(key) or [])


def test_the_playbooks_are_found():
    assert len(NAMES) >= 10 and "render_bundle.yml" in NAMES and "recover_node_maintenance.yml" in NAMES
    assert sorted(ARGUMENTS) == sorted(name for name in NAMES if name != "site.yml")
    assert NOT_RUN_ON_TRAYS <= set(NAMES)


def test_the_opening_is_written_once():
    """The two tasks, once, in playbooks/tasks/opening.yml: the check (each argument omitted unless the playbook gives
    it, so the action's defaults hold) and the task that keeps what it returns."""
    assert yaml.safe_load(OPENING.read_text()) == [CHECK, KEEP]


@pytest.mark.parametrize("name", NAMES)
def test_the_first_play_of_the_run_opens_with_the_opening(name):
    source, play = first_play(name)
    task = first_task(play)
    assert task is not None and task.get(IMPORT) == "tasks/opening.yml", (name, source, task)
    assert set(task) <= {"name", IMPORT, "vars"}, task           # no when, no tags: the opening's own hold
    assert arguments(task) == ARGUMENTS[source], (name, task)
    assert set(task.get("vars") or {}) <= {"__gpu_tray_opening_hosts", "__gpu_tray_opening_helm",
                                           "__gpu_tray_opening_options"}, task


@pytest.mark.parametrize("name", NAMES)
def test_no_playbook_copies_the_opening(name):
    """The check and the keep are never written in a playbook again: a playbook imports the opening, once per play
    at most."""
    tasks = list(tasks_of(load(name)))
    copied = [task.get("name") for task in tasks
              if "gpu_tray.cluster.check_inputs" in task or "__gpu_tray_inputs" in str(task)]
    assert not copied, (name, copied)
    for play in (entry for entry in load(name) if "hosts" in entry):
        imports = [task for task in tasks_of(play) if task.get(IMPORT) == "tasks/opening.yml"]
        assert len(imports) <= 1, (name, play["name"])


@pytest.mark.parametrize("name", ["prepare_trays.yml", "rolling_reboot.yml"])
def test_a_play_after_a_skippable_first_play_checks_again_when_nothing_did(name):
    """prepare_trays.yml's preflight is skipped with gpu_tray_skip_preflight, so its roles' play checks too (skipped
    while __gpu_tray_inputs_checked); rolling_reboot.yml runs on its own as well as imported."""
    plays = [entry for entry in load(name) if "hosts" in entry]
    assert first_task(plays[0]).get(IMPORT) == "tasks/opening.yml", plays[0]
