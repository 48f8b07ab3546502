# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helpers for the chart-stack tests (a plain module: test files must not import conftest)."""

import json
import os
import subprocess
import sys

from ansible_env import checkout_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def collection_on_path():
    """Make ansible_collections.gpu_tray.cluster importable from this checkout (<repo>/.collections), once: the same
    entry twice on sys.path gives the namespace packages two equal paths, and ansible-core's collection loader then
    refuses them ("this loader requires exactly one path to search") in every later test of the session."""
    path = os.path.join(REPO, ".collections")
    if path not in sys.path:
        sys.path.insert(0, path)


BIN = os.path.dirname(sys.executable)


def ansible_env(**extra):
    # a caller's own configuration, home and collections tree win (keep); None in extra removes a variable
    # (K8S_AUTH_HOST="" is a host of "" to kubernetes.core, not "unset")
    return checkout_env(REPO, keep=True, bin_path=BIN, force_color_off=True, **extra)


def playbook_argv(playbook, *args, inventory="localhost,"):
    # an explicit localhost gets no implicit interpreter: use this venv's (it has the kubernetes client); an
    # inventory file (stack_inventory) says how it reaches localhost and its trays itself
    if inventory != "localhost,":
        return [os.path.join(BIN, "ansible-playbook"), "-i", inventory, playbook] + list(args)
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


RECIPES = ["gb200-nvke-ubuntu-training", "gb200-nvke-ubuntu-training-kubeflow", "vr200-rke2-ubuntu-training",
           "vr200-rke2-ubuntu-inference", "vr200-rke2-ubuntu-inference-dynamo"]
GIT = "https://git.example.test/gpu/fleet.git"
SUBDIR = "clusters/rack-a"
# every format at once, the bundle in a sub-directory of its Git repository
FORMAT_ARGS = ("-e", "gpu_tray_bundle_format=helmfile,argocd,flux", "-e", "gpu_tray_bundle_repo_url=%s" % GIT,
               "-e", "stack_bundle_repo_path=%s" % SUBDIR)
# the lab tray model's rails (lab/gpu_tray_lab/platforms.py): the site fact every NVKE plan needs
RAIL_PCI = {"mlx5_0": "0000:03:00.0", "mlx5_1": "0002:03:00.0", "mlx5_3": "0010:03:00.0", "mlx5_4": "0012:03:00.0"}
PLATFORM = {"gb200": "nvke-gb200", "vr200": "rke2-vr200"}


def standin_crds(root):
    """Two small CRD files served from ``root`` (file://) and the override that makes agentgateway-crds fetch them
    instead of the real Gateway API / InferencePool CRDs (tests/upstream fetches those from ../shared/upstream): the
    fetch, the sha256 check and the bundle layout are the same."""
    import hashlib
    out = []
    for group, kind in (("gateway.networking.k8s.io", "Gateway"), ("inference.networking.k8s.io", "InferencePool")):
        plural = kind.lower() + "s"
        text = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: %s.%s\n"
                "spec:\n  group: %s\n  names: {kind: %s, listKind: %sList, plural: %s, singular: %s}\n"
                "  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n"
                "    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n"
                % (plural, group, group, kind, kind, plural, kind.lower()))
        path = os.path.join(str(root), "standin-%s.%s.yaml" % (group, plural))
        with open(path, "w") as fh:
            fh.write(text)
        out.append({"url": "file://" + path, "sha256": hashlib.sha256(text.encode()).hexdigest()})
    return {"agentgateway-crds": {"manifest_urls": out}}


def stack_inventory(root, recipe, group_vars=None):
    """An inventory as a site writes one: localhost (the API host and the controller) and two trays of the recipe's
    platform (never contacted by the stack's plays), the recipe and the rails' PCI addresses in the trays' group
    vars - the stack reads them from the first tray, as it does from a real inventory. Returns its path."""
    import yaml
    trays = dict(("tray%02d" % i, {"ansible_host": "192.0.2.%d" % i}) for i in (1, 2))
    gvars = {"gpu_tray_platform": PLATFORM[recipe.split("-")[0]], "gpu_tray_recipe": recipe,
             "gpu_tray_rail_pci_addresses": RAIL_PCI, "gpu_tray_stack_use_nodewright": True}
    gvars.update(group_vars or {})
    doc = {"all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}},
                   "children": {"gpu_trays": {"hosts": trays, "vars": gvars}}}}
    path = os.path.join(str(root), "inventory-%s.yml" % recipe)
    with open(path, "w") as fh:
        yaml.safe_dump(doc, fh)
    return path


def render_bundles(root, recipes, *extra, **group_vars):
    """playbooks/render_bundle.yml for each recipe (the user's command) against stack_inventory (NodeWright on, so
    every manifest is built; the inference recipes' CRDs from standin_crds unless ``group_vars`` say otherwise), in
    parallel, into root/<recipe>; returns {recipe: bundle dir}, asserts that every render passed. ``extra``: more
    ansible-playbook arguments (e.g. "-e", "gpu_tray_bundle_format=argocd,flux")."""
    standin = standin_crds(root)
    procs = {}
    for recipe in recipes:
        own = dict(group_vars)
        if "inference" in recipe:
            own.setdefault("gpu_tray_stack_overrides", standin)
        inventory = stack_inventory(root, recipe, own)
        procs[recipe] = start_playbook("gpu_tray.cluster.render_bundle",
                                       "-e", "gpu_tray_bundle_dir=%s" % os.path.join(str(root), recipe), *extra,
                                       inventory=inventory)
    failed = {}
    for recipe, proc in procs.items():
        out = proc.communicate()[0]
        if proc.returncode != 0:
            failed[recipe] = out[-4000:]
    assert not failed, "render_bundle failed: %s" % failed
    return dict((r, os.path.join(str(root), r)) for r in recipes)


def inventory_trays(platform):
    """The trays of the sample inventory inventories/<platform> (ansible-inventory's view of the gpu_trays group), in
    name order: the stop tests (test_stopped_phases.py, test_stop_matrix.py and the quality rule) read them."""
    res = subprocess.run([os.path.join(BIN, "ansible-inventory"), "-i", os.path.join(REPO, "inventories", platform),
                          "--list"], capture_output=True, text=True, check=True, env=checkout_env(REPO, bin_path=BIN))
    data = json.loads(res.stdout)

    def hosts(group):
        node = data.get(group, {})
        return set(node.get("hosts", [])).union(*[hosts(child) for child in node.get("children", [])])
    return sorted(hosts("gpu_trays"))
