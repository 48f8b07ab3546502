"""One default per input (issue 38): a role default `<role>_x: "{{ gpu_tray_y | default(LIT) }}"` with a literal LIT
equals the role's argument-spec default of <role>_x and the default the generated inventory spec records for
gpu_tray_y (roles/preflight/vars/inventory_spec.yml, what the check names when a value is refused); a switch the
playbooks read (`gpu_tray_y | default(LIT)`) has the spec's default everywhere; the check's fallbacks equal the
stack role's. A safety switch whose default is flipped in one place and not the others fails here.

The literal is parsed here on its own (quoted strings, numbers, true/false, lists and mappings of them), not with
tools/inventory_spec.py's parser, so a fault in the generator does not hide itself."""
import re

import pytest
import yaml

from qualitykit import ROOT, load, read_yaml

INVENTORY_SPEC = read_yaml("roles", "preflight", "vars", "inventory_spec.yml")["__preflight_inventory_spec"]
FEEDS = re.compile(r"^\{\{\s*(gpu_tray_[a-z0-9_]+)\s*\|\s*default\((.*)\)\s*\}\}$", re.S)
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
CONTEXT = re.compile(r"^\{\{\s*lookup\('gpu_tray\.cluster\.run_context',\s*'([a-z_]+)'\)\s*\}\}$")
RUN_CONTEXT = load("plugins", "plugin_utils", "run_context.py")


def literal(text):
    """(True, value) for a literal Jinja default, (False, None) for an expression (a variable, a lookup, a filter)."""
    text = text.strip()
    bare = QUOTED.sub("", text)
    if re.search(r"[A-Za-z_]", re.sub(r"\b(true|false|none)\b", "", bare)) or "(" in bare or "|" in bare:
        return False, None
    if not re.match(r"^('|\"|-?\d|\[|\{|true$|false$|none$)", text):
        return False, None
    return True, (None if text == "none" else yaml.safe_load(text))


def role_defaults():
    """[(role, option, gpu_tray name, is literal, value)] from every role's defaults/main.yml."""
    out = []
    for path in sorted((ROOT / "roles").glob("*/defaults/main.yml")):
        for option, value in (yaml.safe_load(path.read_text()) or {}).items():
            match = FEEDS.match(value.strip()) if isinstance(value, str) else None
            shared = CONTEXT.match(value.strip()) if isinstance(value, str) else None
            if match:
                out.append((path.parts[-3], option, match.group(1)) + literal(match.group(2)))
            elif shared and shared.group(1) in RUN_CONTEXT.VARIABLES:
                # a shared input (plugin_utils/run_context.py): its one default, where it is a literal
                default = RUN_CONTEXT.DEFAULTS[shared.group(1)]
                out.append((path.parts[-3], option, RUN_CONTEXT.VARIABLES[shared.group(1)], default is not None,
                            default))
    return out


ROLE_DEFAULTS = role_defaults()
LITERALS = [item for item in ROLE_DEFAULTS if item[3]]


def argument_spec(role):
    return read_yaml("roles", role, "meta", "argument_specs.yml")["argument_specs"]


def same(one, other):
    """Equal and of the same kind (1 is not true, '1' is not 1)."""
    return one == other and type(one) is type(other)


def test_the_literal_parser_tells_literals_from_expressions():
    assert literal("'none'") == (True, "none") and literal("none") == (True, None)
    assert literal("'refuse'") == (True, "refuse") and literal("true") == (True, True) and literal("10") == (True, 10)
    assert literal("['helmfile']") == (True, ["helmfile"]) and literal("{}") == (True, {})
    assert literal("__kernel_tuning_recipe_intent")[0] is False
    assert literal("lookup('gpu_tray.cluster.platform_profile', x).rails")[0] is False
    assert literal("rdma_modules_load | length > 0")[0] is False
    assert literal("__stack_tray_vars.gpu_tray_recipe | default('')")[0] is False


def test_the_roles_feed_their_options_from_the_inventory():
    """The test sees what it checks: most gpu_tray_* inputs have a literal default."""
    assert len(ROLE_DEFAULTS) >= 60 and len(LITERALS) >= 45, (len(ROLE_DEFAULTS), len(LITERALS))
    assert ("rolling_reboot", "rolling_reboot_foreign_controllers", "gpu_tray_reboot_foreign_controllers", True,
            "refuse") in LITERALS
    assert ("rolling_reboot", "rolling_reboot_bmc_validate_certs",
            "gpu_tray_bmc_validate_certs", True, True) in LITERALS
    # the platform profile decides (issue 44: one value for the preflight and the rolling reboot)
    assert ("rolling_reboot", "rolling_reboot_bmc_required", "gpu_tray_bmc_required", False, None) in ROLE_DEFAULTS


@pytest.mark.parametrize("role, option, name, _literal, value", LITERALS, ids=lambda v: str(v))
def test_a_literal_default_is_the_argument_specs_default(role, option, name, _literal, value):
    options = argument_spec(role)["main"]["options"]
    assert "default" in options[option], "%s: %s has no default in meta/argument_specs.yml" % (role, option)
    assert same(options[option]["default"], value), (
        "%s: %s defaults to %r in defaults/main.yml (%s | default) but %r in meta/argument_specs.yml"
        % (role, option, value, name, options[option]["default"]))


@pytest.mark.parametrize("name", sorted(set(item[2] for item in ROLE_DEFAULTS)))
def test_the_inventory_spec_records_the_default_every_role_gives(name):
    feeds = [item for item in ROLE_DEFAULTS if item[2] == name]
    agreed = all(item[3] for item in feeds) and all(same(item[4], feeds[0][4]) for item in feeds)
    if agreed:
        assert "default" in INVENTORY_SPEC[name] and same(INVENTORY_SPEC[name]["default"], feeds[0][4]), (
            name, feeds, INVENTORY_SPEC[name])
    else:
        assert "default" not in INVENTORY_SPEC[name], (name, feeds, INVENTORY_SPEC[name])


def test_the_playbooks_switches_have_the_specs_default_everywhere():
    """The switches only the playbooks read (gpu_tray_skip_preflight, _stack_deploy, _validate: `| bool`)."""
    found = {}
    for path in sorted((ROOT / "playbooks").glob("*.yml")):
        for name, text in re.findall(r"\b(gpu_tray_[a-z_]+) \| default\((true|false)\)", path.read_text()):
            found.setdefault(name, set()).add((path.name, yaml.safe_load(text)))
    assert sorted(found) == ["gpu_tray_skip_preflight", "gpu_tray_stack_deploy", "gpu_tray_validate"], found
    for name, uses in found.items():
        for playbook, value in uses:
            assert same(value, INVENTORY_SPEC[name]["default"]), (name, playbook, value)


def test_the_checks_fallbacks_are_the_stack_roles_defaults():
    text = (ROOT / "plugins" / "action" / "check_inputs.py").read_text()
    helm = re.search(r"^HELM_BINARY = '([^']+)'$", text, re.M).group(1)
    assert argument_spec("stack")["main"]["options"]["stack_helm_binary"]["default"] == helm
    assert read_yaml("roles", "stack", "defaults", "main.yml")["stack_helm_binary"] == helm
