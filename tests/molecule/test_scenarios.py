"""Run every molecule scenario under molecule/ against lab trays (`molecule test -s <name>`).

Scenarios use the shared lab-backed `default` driver config: create/destroy boot and stop lab trays, converge
runs collection content over SSH, verify runs testinfra over SSH. A scenario fails this test with molecule's
own output.
"""
import pathlib
import subprocess
import sys

import pytest

from ansible_env import checkout_env

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
SCENARIOS = sorted(p.parent.name for p in (ROOT / "molecule").glob("*/molecule.yml"))


def test_there_are_scenarios():
    assert SCENARIOS, "no molecule/<scenario>/molecule.yml found"


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_molecule_scenario(scenario):
    env = checkout_env(ROOT, bin_path=str(BIN), nocolor=False, force_color_off=True,
                       MOLECULE_GLOB="molecule/*/molecule.yml", PY_COLORS="0")
    proc = subprocess.run([str(BIN / "molecule"), "test", "-s", scenario], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.returncode == 0, proc.stdout[-30000:]
