#!/usr/bin/env python3
"""Generate the preflight's argument spec of the inventory variables (gpu_tray_*) from the roles they feed.

    python3 tools/inventory_spec.py           # (re)write roles/preflight/vars/inventory_spec.yml
    python3 tools/inventory_spec.py --check   # exit 1 when it is stale (tests/quality/test_known_variables.py)

Every role default of the form `<role>_<option>: "{{ gpu_tray_<name> | default(...) }}"` makes gpu_tray_<name> an
input of that role option: its type, elements and choices come from roles/<role>/meta/argument_specs.yml (the
entry point main), so the preflight checks each inventory value before any tray is changed with the rule the role
would apply later - and names the gpu_tray_* variable the user wrote. A variable feeding several options gets one
spec they all accept (the same type; the choices every option allows). The playbook-level switches (EXTRA) are
written here. The file also lists every variable the collection knows (the spec's names, the switches and the facts
its roles set with the prefix): the preflight refuses any other gpu_tray_* name as misspelt.
"""
import argparse
import pathlib
import re
import sys
import textwrap

import importlib.util

import jinja2
import jinja2.nodes
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the run context's table of shared inputs (pure Python, no collection imports)
_spec = importlib.util.spec_from_file_location("run_context", ROOT / "plugins" / "plugin_utils" / "run_context.py")
run_context = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_context)
OUT = ROOT / "roles" / "preflight" / "vars" / "inventory_spec.yml"
FEEDS = re.compile(r'^\{\{\s*(gpu_tray_[a-z0-9_]+)\s*\|\s*default\(')
ENV = jinja2.Environment()
KEYS = ("type", "elements", "choices")
# read by playbooks (not by a role default), each with the spec its `| bool` / use asks for and the default the
# playbooks give it (tests/quality/test_input_defaults.py holds them equal)
EXTRA = {
    "gpu_tray_skip_preflight": {"type": "bool", "default": False},
    "gpu_tray_stack_deploy": {"type": "bool", "default": True},
    "gpu_tray_validate": {"type": "bool", "default": True},
}
# read by the run context alone (plugins/plugin_utils/run_context.py): the cluster connection every play that talks to
# the API uses (module_defaults)
CONTEXT_ONLY = {
    "gpu_tray_kubeconfig": {"type": "str", "default": ""},
    "gpu_tray_kube_context": {"type": "str", "default": ""},
}
# read by the lookup gpu_tray.cluster.report_dir, which the roles' report directories default to
LOOKUP = {
    "gpu_tray_report_dir": {"type": "path"},
    "gpu_tray_run_id": {"type": "str"},
}
# set by the collection's own tasks and modules, never by a user: known, not checked - the facts its roles set on the
# trays, and gpu_tray_evidence, the summary its roles put in an AWX job's artifacts (set_stats), which AWX passes to
# the workflow's next nodes as an extra var
FACTS = ["gpu_tray_evidence", "gpu_tray_rdma", "gpu_tray_read"]
# gpu_tray_* variables the collection no longer reads: the preflight refuses them with what replaced them (a value
# that has no effect any more must not be ignored without a word)
REMOVED = {
    "gpu_tray_state_request": "no longer read - the preflight reads ahead for the preparing roles itself "
                              "(preflight_prefetch)",
    "gpu_tray_state": "no longer read - the gpu_tray.cluster.tray_plan action keeps the tray's read "
                      "(ansible_facts.gpu_tray_read)",
}
NONE = object()
# a P_Key is a string of hex digits or a number (common.parse_pkey_option): checked by the preflight's own rule
RAW = {"gpu_tray_pkey"}


class SpecError(Exception):
    pass


def literal_default(text):
    """``(True, value)`` when the role default ``{{ gpu_tray_x | default(LIT) }}`` has a literal LIT (a string,
    number, true/false, or a list/mapping of them), else ``(False, None)`` - the default is computed (a lookup,
    another variable)."""
    try:
        node = ENV.parse(text.strip()).body[0].nodes[0]
    except (jinja2.TemplateSyntaxError, IndexError, AttributeError):
        return False, None
    if not isinstance(node, jinja2.nodes.Filter) or node.name != "default" or not node.args:
        return False, None
    try:
        return True, node.args[0].as_const()
    except jinja2.nodes.Impossible:
        return False, None


def feeds():
    """{gpu_tray_name: [(role, option, spec)]} from every role's defaults and main argument spec."""
    out = {}
    for role_dir in sorted((ROOT / "roles").iterdir()):
        defaults_file = role_dir / "defaults" / "main.yml"
        spec_file = role_dir / "meta" / "argument_specs.yml"
        if not defaults_file.is_file() or not spec_file.is_file():
            continue
        defaults = yaml.safe_load(defaults_file.read_text()) or {}
        options = yaml.safe_load(spec_file.read_text())["argument_specs"]["main"]["options"]
        for option, value in defaults.items():
            text = value.strip() if isinstance(value, str) else ""
            match, shared = FEEDS.match(text), run_context.DEFAULT_PATTERN.match(text)
            if not match and not shared:
                continue
            if option not in options:
                raise SpecError("%s: default %s has no argument spec" % (role_dir.name, option))
            spec = dict((key, options[option][key]) for key in KEYS if key in options[option])
            spec.setdefault("type", "str")
            if shared and shared.group(1) == "report_dir":
                continue      # gpu_tray_report_dir / gpu_tray_run_id: LOOKUP below
            if shared:
                if shared.group(1) not in run_context.VARIABLES:
                    raise SpecError("%s: default %s reads run context key %s, which it has not"
                                    % (role_dir.name, option, shared.group(1)))
                name = run_context.VARIABLES[shared.group(1)]
                is_literal, default = run_context.DEFAULTS[shared.group(1)] is not None, run_context.DEFAULTS[shared.group(1)]
            else:
                name = match.group(1)
                is_literal, default = literal_default(value)
            if is_literal:
                spec["default"] = default
            out.setdefault(name, []).append((role_dir.name, option, spec))
    return out


def merged(name, uses):
    types = set((spec["type"], spec.get("elements")) for _role, _option, spec in uses)
    if len(types) != 1:
        raise SpecError("%s feeds options of different types: %s" % (
            name, ", ".join("%s (%s)" % (option, spec["type"]) for _role, option, spec in uses)))
    spec = dict(uses[0][2])
    spec.pop("choices", None)
    # the default the roles give it when it is unset: recorded where every option it feeds has the same literal
    defaults = [spec_.get("default", NONE) for _role, _option, spec_ in uses]
    spec.pop("default", None)
    if defaults[0] is not NONE and all(item == defaults[0] and type(item) is type(defaults[0]) for item in defaults):
        spec["default"] = defaults[0]
    choices = [spec_["choices"] for _role, _option, spec_ in uses if "choices" in spec_]
    if choices:
        allowed = [item for item in choices[0] if all(item in other for other in choices[1:])]
        spec["choices"] = allowed
    if name in RAW:
        spec = dict({"type": "raw"}, **({"default": spec["default"]} if "default" in spec else {}))
    return spec


def _entry(spec):
    """One spec as block YAML lines under its name (lists as indented block sequences, as yamllint wants)."""
    def flow(item):
        return yaml.safe_dump(item, default_flow_style=True, width=1000).strip().replace("\n...", "")

    out = []
    for key in sorted(spec):
        value = spec[key]
        if isinstance(value, list) and value:
            out.append("    %s:" % key)
            out += ["      - %s" % flow(item) for item in value]
        else:
            out.append("    %s: %s" % (key, flow(value)))
    return out


def render():
    uses = feeds()
    lines = ["---",
             "# Generated by tools/inventory_spec.py from the roles' defaults and argument specs - do not edit.",
             "# The preflight checks the inventory's gpu_tray_* values against it before any tray is read or changed.",
             "__preflight_inventory_spec:"]
    for name in sorted(uses):
        feeds_text = ", ".join(option for _role, option, _spec in uses[name])
        lines.append("  # feeds %s" % textwrap.fill(feeds_text, 110, subsequent_indent="  #   "))
        lines.append("  %s:" % name)
        lines += _entry(merged(name, uses[name]))
    for name in sorted(EXTRA):
        lines.append("  # read by the playbooks")
        lines.append("  %s:" % name)
        lines += _entry(EXTRA[name])
    for name in sorted(CONTEXT_ONLY):
        lines.append("  # read by the run context (the cluster connection of every play that talks to the API)")
        lines.append("  %s:" % name)
        lines += _entry(CONTEXT_ONLY[name])
    for name in sorted(LOOKUP):
        lines.append("  # read by the lookup report_dir (preflight_report_dir, rolling_reboot_report_dir, validate_report_dir)")
        lines.append("  %s:" % name)
        lines += _entry(LOOKUP[name])
    lines.append("# every gpu_tray_* variable of the collection: the spec's, and the facts its roles set")
    lines.append("__preflight_known_variables:")
    for name in sorted(set(uses) | set(EXTRA) | set(CONTEXT_ONLY) | set(LOOKUP) | set(FACTS)):
        lines.append("  - %s" % name)
    lines.append("# gpu_tray_* variables the collection no longer reads, and why")
    lines.append("__preflight_removed_variables:")
    for name in sorted(REMOVED):
        lines.append("  %s: %s" % (name, yaml.safe_dump(REMOVED[name], default_flow_style=True, width=1000)
                                    .strip().replace("\n...", "")))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed file is stale")
    args = parser.parse_args()
    try:
        text = render()
    except SpecError as exc:
        print("inventory_spec: %s" % exc, file=sys.stderr)
        return 2
    if args.check:
        if not OUT.is_file() or OUT.read_text() != text:
            print("%s is stale: run python3 tools/inventory_spec.py" % OUT.relative_to(ROOT), file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print("wrote %s" % OUT.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
