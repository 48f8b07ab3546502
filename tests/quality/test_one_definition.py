"""One definition each (issue 53, item 5): the names a review found defined twice, and that drifted apart - the
natural sort (one of the two raised on a number and a text at the same place), the ib_core netns modes, the NCCL run
lock's name (the role's vars held a copy of nccl_launch.LOCK_NAME), the recipe -> platform fallback, the run
context's value reader and report place, the BMC connection - are defined once in the collection's code."""
import re

import pytest

from qualitykit import ROOT

DEFINITIONS = {
    'natural_key': re.compile(r'^def natural_key\(', re.M),
    'NETNS_MODES': re.compile(r'^NETNS_MODES\s*=', re.M),
    # a Python constant or a role variable holding the name (documentation may quote it)
    'the NCCL run lock name': re.compile(r'^(?:[A-Z_]+\s*=|__\w+:)\s*[\'"]?gpu-tray-nccl-run-lock', re.M),
    # the platform of a recipe the registry names (run context, stack plan, platform_profile: platform.of_recipe)
    'the recipe -> platform fallback': re.compile(r"registry\.facts\([^)]*\)\[\s*'platform'\s*\]"),
    # a host's templated values, read once (the lookup run_context and check_inputs: run_context.values_reader)
    'the run-context values reader': re.compile(r'^\s*def values_of\(', re.M),
    # the report folder of a host's values (report_dir.locate over REPORT_INPUTS: run_context.report_place)
    'the report place of a host': re.compile(r'report_dir\.locate\(\*\['),
    # redfish's baseuri from a BMC address (run_context.bmc, for the preflight and the rolling reboot)
    'the BMC connection': re.compile(r"https\?://"),
}


def sources():
    for path in sorted((ROOT / 'plugins').rglob('*.py')) + sorted((ROOT / 'roles').rglob('*.yml')):
        yield path, path.read_text()


@pytest.mark.parametrize('what', sorted(DEFINITIONS))
def test_defined_once(what):
    found = [str(path.relative_to(ROOT)) for path, text in sources() for _match in DEFINITIONS[what].finditer(text)]
    assert len(found) == 1, (what, found)


def test_the_phase_order_of_the_validate_role_is_the_evidences_and_its_argument_specs():
    """roles/validate/vars/main.yml's __validate_phase_order (its phase loop), evidence.RUN_PHASES and the choices of
    validate_phases are one list in three places a role and a plugin each need: held equal here."""
    import yaml
    order = yaml.safe_load((ROOT / 'roles' / 'validate' / 'vars' / 'main.yml').read_text())['__validate_phase_order']
    specs = yaml.safe_load((ROOT / 'roles' / 'validate' / 'meta' / 'argument_specs.yml').read_text())
    choices = specs['argument_specs']['main']['options']['validate_phases']['choices']
    source = (ROOT / 'plugins' / 'plugin_utils' / 'evidence.py').read_text()
    run_phases = re.search(r"^RUN_PHASES = \(([^)]*)\)", source, re.M).group(1)
    assert order == choices == [name.strip().strip("'") for name in run_phases.split(',')], (order, choices)


def test_the_reboot_planner_knows_no_name_the_role_registers():
    """plugin_utils/reboot_plan.py takes what the role's tasks registered by short names; the role's own register:
    names live in the reboot_step action (REGISTERED) only, and each of them is a name the role really sets."""
    import ast
    planner = ast.parse((ROOT / 'plugins' / 'plugin_utils' / 'reboot_plan.py').read_text())
    strings = [node.value for node in ast.walk(planner) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    assert not [text for text in strings if '__rolling_reboot_' in text], 'the planner names a register: of the role'
    action = (ROOT / 'plugins' / 'action' / 'reboot_step.py').read_text()
    names = re.findall(r"'(__rolling_reboot_\w+)'", action.split('REGISTERED = {', 1)[1].split('}', 1)[0])
    tasks = ''.join(path.read_text() for path in sorted((ROOT / 'roles' / 'rolling_reboot' / 'tasks').glob('*.yml')))
    assert len(names) >= 14 and all(re.search(r'(register: |^\s+)%s\b' % name, tasks, re.M) for name in names), [
        name for name in names if not re.search(r'(register: |^\s+)%s\b' % name, tasks, re.M)]
