"""Every option a role's argument spec documents is read by something - a task, a template, the role's vars or
defaults (an option feeding another), a playbook's expression, or a plugin that takes it from the task's variables.
An option that is only set (its own default line, a playbook's `vars:` or a test) does nothing, while its description
promises behaviour: `stack_state: absent` was documented as tearing the stack down, and no task read it (found by
`make mutate-yaml`, which could drop its choices without any test noticing).

A file scan: an occurrence counts as a read unless the line sets the name (`  name: value`)."""
import re

import pytest
import yaml

from qualitykit import ROOT

READERS = ("roles", "playbooks", "plugins")


def options():
    """[(role, option)] of every entry point of every role's argument spec."""
    out = set()
    for spec in sorted((ROOT / "roles").glob("*/meta/argument_specs.yml")):
        role = spec.parts[-3]
        for entry in (yaml.safe_load(spec.read_text())["argument_specs"] or {}).values():
            out.update((role, name) for name in (entry.get("options") or {}))
    return sorted(out)


def reader_lines():
    """Every line of the files that can read an option (argument specs and Markdown are documentation)."""
    lines = []
    for top in READERS:
        for path in sorted((ROOT / top).rglob("*")):
            if path.is_file() and path.name != "argument_specs.yml" and path.suffix not in (".md", ".pyc"):
                lines.extend(path.read_text(errors="replace").splitlines())
    return lines


LINES = reader_lines()
OPTIONS = options()


def reads(name, lines):
    word = re.compile(r"(?<![\w.])%s(?!\w)" % re.escape(name))
    sets = re.compile(r"^\s*-?\s*%s\s*:" % re.escape(name))
    return [line for line in lines if word.search(line) and not sets.match(line)]


def test_the_scan_tells_a_read_from_a_setting():
    lines = ["stack_state: present", "        stack_state: absent", "x: \"{{ stack_state }}\"",
             "when: stack_stateful", "note: obj.stack_state"]
    assert reads("stack_state", lines) == ["x: \"{{ stack_state }}\""]
    assert len(OPTIONS) > 100 and ("stack", "stack_recipe") in OPTIONS


@pytest.mark.parametrize("role, option", OPTIONS, ids=["%s.%s" % item for item in OPTIONS])
def test_every_documented_option_is_read(role, option):
    assert reads(option, LINES), (
        "%s's option %s is documented in its argument spec, but nothing reads it (only set): remove it, or make "
        "the role do what its description says" % (role, option))
