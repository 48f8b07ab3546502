# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers for the chart-stack tests (a plain module: test files must not import conftest)."""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.dirname(sys.executable)


def ansible_env(**extra):
    env = dict(os.environ)
    env.setdefault("ANSIBLE_CONFIG", os.path.join(REPO, "ansible.cfg"))
    env.setdefault("ANSIBLE_HOME", os.path.join(REPO, ".ansible"))
    env.setdefault("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".collections"))
    env.update({"ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "PATH": BIN + os.pathsep + env.get("PATH", "")})
    env.update(extra)
    return env


def playbook_argv(playbook, *args, inventory="localhost,"):
    # an explicit localhost gets no implicit interpreter: use this venv's (it has the kubernetes client)
    return [os.path.join(BIN, "ansible-playbook"), "-i", inventory, "-c", "local", playbook,
            "-e", "ansible_python_interpreter=%s" % sys.executable] + list(args)


def run_playbook(playbook, *args, inventory="localhost,", **env):
    """Run ansible-playbook from the repository root; returns (rc, combined output)."""
    proc = subprocess.run(playbook_argv(playbook, *args, inventory=inventory), cwd=REPO, env=ansible_env(**env),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    return proc.returncode, proc.stdout


def start_playbook(playbook, *args, inventory="localhost,", **env):
    """Start ansible-playbook in the background (several renders share the 2 cores better than in a row)."""
    return subprocess.Popen(playbook_argv(playbook, *args, inventory=inventory), cwd=REPO, env=ansible_env(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def recap(output, host="localhost"):
    """The PLAY RECAP counters of one host as a dict of ints."""
    for line in output.splitlines():
        if line.startswith(host + " ") and "ok=" in line:
            return dict((k, int(v)) for k, v in (f.split("=") for f in line.split(":", 1)[1].split()))
    raise AssertionError("no PLAY RECAP line for %s in:\n%s" % (host, output[-3000:]))


def render_bundles(root, recipes, *extra):
    """playbooks/render_bundle.yml for each recipe (the user's command), with NodeWright on so every manifest template
    is rendered, in parallel, into root/<recipe>; returns {recipe: bundle dir}, asserts that every render passed.
    `extra`: more ansible-playbook arguments (e.g. "-e", "gpu_tray_bundle_format=argocd,flux")."""
    procs = dict((r, start_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_recipe=%s" % r,
                                    "-e", "gpu_tray_bundle_dir=%s" % os.path.join(str(root), r),
                                    "-e", "gpu_tray_stack_use_nodewright=true", *extra)) for r in recipes)
    failed = {}
    for recipe, proc in procs.items():
        out = proc.communicate()[0]
        if proc.returncode != 0:
            failed[recipe] = out[-4000:]
    assert not failed, "render_bundle failed: %s" % failed
    return dict((r, os.path.join(str(root), r)) for r in recipes)
