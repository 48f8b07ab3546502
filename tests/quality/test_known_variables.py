"""The preflight's list of the collection's inventory variables (roles/preflight/vars/main.yml
__preflight_known_variables) is exactly the gpu_tray_* names the roles, playbooks and plugins use: a variable added
to a role and not to the list would fail every preflight as "misspelt"; one left in the list after its last use
would let a misspelling of it pass."""
import pathlib
import re

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAME = re.compile(r"\bgpu_tray_[a-z0-9_]+")
LIST_FILE = ROOT / "roles" / "preflight" / "vars" / "main.yml"


def used():
    names = set()
    for top in ("roles", "playbooks", "plugins"):
        for path in (ROOT / top).rglob("*"):
            if path.is_file() and path.suffix in (".yml", ".yaml", ".py", ".j2") and path != LIST_FILE:
                names |= set(NAME.findall(path.read_text()))
    return names


def test_known_variables_are_the_names_the_code_uses():
    known = set(yaml.safe_load(LIST_FILE.read_text())["__preflight_known_variables"])
    code = used() | {"gpu_tray_site_variables"}
    assert sorted(code - known) == [], "used in the code, missing from __preflight_known_variables"
    assert sorted(known - code) == [], "in __preflight_known_variables, used nowhere"
