# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/ansible_env.py: the one Ansible environment of the checkout, and that nothing else under tests/, lab/ and
tools/ names the collections path variable (issue 45: one harness helper)."""

import os
import subprocess
import sys

from ansible_env import COLLECTIONS, checkout_env
from qualitykit import ROOT

HELPER = ROOT / "tools" / "ansible_env.py"


def test_the_checkout_defaults():
    env = checkout_env(ROOT, base={"PATH": "/usr/bin", "OTHER": "x"})
    assert env == {"PATH": "/usr/bin", "OTHER": "x", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
                   "ANSIBLE_HOME": str(ROOT / ".ansible"), COLLECTIONS: str(ROOT / ".collections"),
                   "ANSIBLE_NOCOLOR": "1"}


def test_the_differences_of_the_call_sites():
    base = {"PATH": "/usr/bin", "K8S_AUTH_HOST": "h", "KUBECONFIG": "k", "ANSIBLE_CONFIG": "mine"}
    env = checkout_env("/r", base=base, without=("K8S_AUTH_*", "KUBECONFIG"), home="/h", local_temp=True,
                       bin_path="/venv/bin", force_color_off=True, callback="ansible.builtin.json", GONE=None, MORE="1")
    assert env == {"PATH": "/venv/bin%s/usr/bin" % os.pathsep, "ANSIBLE_CONFIG": "/r/ansible.cfg", "ANSIBLE_HOME": "/h",
                   COLLECTIONS: "/r/.collections", "ANSIBLE_LOCAL_TEMP": "/h/tmp", "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_FORCE_COLOR": "0", "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "MORE": "1"}
    # keep: the caller's own configuration wins; False leaves a variable alone; a list is a search path
    assert checkout_env("/r", base=base, keep=True, nocolor=False)["ANSIBLE_CONFIG"] == "mine"
    assert checkout_env("/r", base={}, collections=["/a", "/b"], config=False, home=False, nocolor=False) == {
        COLLECTIONS: "/a%s/b" % os.pathsep}


def test_the_command_line_prints_exports_and_runs_a_command():
    out = subprocess.run([sys.executable, str(HELPER), "--shell", "--root", "/r"], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["export %s=/r/.collections" % COLLECTIONS, "export ANSIBLE_CONFIG=/r/ansible.cfg",
                                "export ANSIBLE_HOME=/r/.ansible", "export ANSIBLE_NOCOLOR=1"]
    out = subprocess.run([sys.executable, str(HELPER), "--collections", "/c d", "--only", "collections", "--",
                          sys.executable, "-c", "import os; print(os.environ[%r])" % COLLECTIONS],
                         capture_output=True, text=True, check=True).stdout
    assert out == "/c d\n"


def test_only_the_helper_names_the_collections_path_variable():
    # every file, as `grep -rl` reads them (a mutant's copy is no git checkout)
    found = sorted(str(path.relative_to(ROOT)) for top in ("tests", "lab", "tools") for path in (ROOT / top).rglob("*")
                   if path.is_file() and "__pycache__" not in path.parts and COLLECTIONS.encode() in path.read_bytes())
    assert found == ["tools/ansible_env.py"]
