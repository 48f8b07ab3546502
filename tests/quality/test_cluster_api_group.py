"""The run's cluster connection reaches every module that talks to the Kubernetes API through one module_defaults
entry (issue 45): the action group gpu_tray.cluster.cluster_api (meta/runtime.yml) extends the collection's
cluster_checks and kubernetes.core's groups k8s and helm, and each play of the playbooks that talks to the API writes
one line, group/gpu_tray.cluster.cluster_api: the run context's k8s_auth - never kubernetes.core's modules by name.

A real run shows that the defaults get through the group: the inventory's gpu_tray_kube_context reaches
kubernetes.core.k8s_info, kubernetes.core.k8s_drain, kubernetes.core.helm and a cluster check, as each one's own
context argument, from the module_defaults a playbook writes."""
import json
import subprocess
import sys

import yaml

from ansible_env import checkout_env  # tools/ansible_env.py (tests/conftest.py puts tools/ on the path)
from qualitykit import BIN, ROOT, mappings, read_yaml, yaml_files
PLAYBOOKS = ROOT / "playbooks"
CORE = ROOT / ".collections" / "ansible_collections" / "kubernetes" / "core"
GROUP = "group/gpu_tray.cluster.cluster_api"
DEFAULTS = {GROUP: "{{ lookup('gpu_tray.cluster.run_context', 'k8s_auth') }}"}
# the plays that talk to the API (their roles call kubernetes.core or a cluster check)
API_PLAYS = {
    ("deploy_stack.yml", "Resolve the chart stack"), ("deploy_stack.yml", "Install the chart stack tier by tier"),
    ("teardown_stack.yml", "Resolve the chart stack"),
    ("teardown_stack.yml", "Tear down the chart stack, last tier first"),
    ("recover_node_maintenance.yml", "Recover orphaned NodeMaintenance objects"),
    ("rolling_reboot.yml", "Rolling reboot of the trays that need one"),
    ("validate.yml", "Resolve what the recipe deploys"),
    ("validate.yml", "Validate the cluster and its trays, and write the evidence"),
}
# called by the action check_inputs itself with its own arguments (helm's plugin list), never through the defaults
NOT_THROUGH_DEFAULTS = {"kubernetes.core.helm_plugin_info"}


def plays():
    for path in sorted(PLAYBOOKS.glob("*.yml")):
        for play in yaml.safe_load(path.read_text()):
            if "hosts" in play:
                yield path.name, play


def group_modules():
    """The modules group cluster_api resolves to, from this collection's and kubernetes.core's meta/runtime.yml."""
    ours = read_yaml("meta", "runtime.yml")["action_groups"]
    core = yaml.safe_load((CORE / "meta" / "runtime.yml").read_text())["action_groups"]
    out = set()
    for entry in ours["cluster_api"]:
        if isinstance(entry, str):
            out.add("gpu_tray.cluster." + entry)
            continue
        for group in entry["metadata"]["extend_group"]:
            if group.startswith("kubernetes.core."):
                out |= set("kubernetes.core." + name for name in core[group.split(".")[-1]])
            else:
                out |= set("gpu_tray.cluster." + name for name in ours[group])
    return out


def called():
    """Every kubernetes.core and cluster_checks module the roles and playbooks call (a task's action key)."""
    cluster_checks = set(read_yaml("meta", "runtime.yml")["action_groups"]["cluster_checks"])
    return set(key for _path, doc in yaml_files("roles", "playbooks") for node in mappings(doc) for key in node
               if isinstance(key, str) and (key.startswith("kubernetes.core.")
                                            or key.split(".")[-1] in cluster_checks and key.startswith("gpu_tray.")))


def test_every_play_that_talks_to_the_api_has_the_one_entry():
    having = dict(((name, play["name"]), play["module_defaults"])
                  for name, play in plays() if "module_defaults" in play)
    assert set(having) == API_PLAYS, sorted(set(having) ^ API_PLAYS)
    for where, defaults in having.items():
        assert defaults == DEFAULTS, (where, defaults)   # one line: no module named, no group of its own


def test_no_module_defaults_names_a_kubernetes_core_module():
    """The roles' blocks too (the rolling reboot's): the cluster connection goes through the group, never module by
    module (a module left out of the list ran without it)."""
    for path, doc in yaml_files("roles", "playbooks"):
        for node in (node for node in mappings(doc) if isinstance(node.get("module_defaults"), dict)):
            named = sorted(key for key in node["module_defaults"]
                           if key.startswith(("kubernetes.core.", "group/kubernetes.core.")))
            assert not named, (str(path.relative_to(ROOT)), named)


def test_the_group_covers_every_module_the_collection_calls_on_the_api():
    modules = group_modules()
    assert {"kubernetes.core.k8s", "kubernetes.core.k8s_info", "kubernetes.core.k8s_drain", "kubernetes.core.k8s_log",
            "kubernetes.core.helm", "gpu_tray.cluster.cluster_preflight"} <= modules, modules
    missing = sorted(called() - modules - NOT_THROUGH_DEFAULTS)
    assert not missing, "called on the API without the run's connection: %s" % missing


def test_every_module_of_the_group_takes_kubeconfig_and_context():
    """A module of the group that did not take them would fail every task of it in the playbooks."""
    for fqcn in sorted(group_modules()):
        namespace, name, module = fqcn.split(".")
        base = CORE if namespace == "kubernetes" else ROOT
        text = (base / "plugins" / "modules" / ("%s.py" % module)).read_text()
        fragments = ("kubernetes.core.k8s_auth_options", "kubernetes.core.helm_common_options",
                     "gpu_tray.cluster.k8s_auth")
        assert any(fragment in text for fragment in fragments) or ("kubeconfig:" in text and "context:" in text), fqcn


TASKS = [
    {"name": "k8s_info", "kubernetes.core.k8s_info": {"kind": "Node"}},
    {"name": "k8s_drain", "kubernetes.core.k8s_drain": {"name": "tray01", "state": "cordon"}},
    {"name": "helm", "kubernetes.core.helm": {"name": "x", "chart_ref": "y", "release_namespace": "z",
                                              "binary_path": "/bin/false"}},
    {"name": "cluster_preflight", "gpu_tray.cluster.cluster_preflight": {"recipe": "none"}},
]


def test_the_run_context_reaches_kubernetes_core_through_the_group(tmp_path):
    """Each module gets the inventory's context as its own argument from the module_defaults of a play of the
    playbooks (the rolling reboot's; every play writes the same, above), and fails on it: the kubeconfig names no such
    context (the kubeconfig is no_log in the invocation, the context is not)."""
    play = next(p for name, p in plays() if (name, p["name"]) == ("rolling_reboot.yml",
                                                                  "Rolling reboot of the trays that need one"))
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": [], "contexts": [],
                                          "users": [], "current-context": ""}))
    path = tmp_path / "play.yml"
    path.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False,
                                     "module_defaults": play["module_defaults"],
                                     "tasks": [dict(task, ignore_errors=True) for task in TASKS]}]))
    env = checkout_env(ROOT, home=str(tmp_path / "home"), callback="ansible.builtin.json",
                       ANSIBLE_LOCALHOST_WARNING="0")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(path),
                           "-e", "ansible_python_interpreter=%s" % sys.executable,
                           "-e", "gpu_tray_kubeconfig=%s" % kubeconfig, "-e", "gpu_tray_kube_context=ctx-of-the-run"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    results = dict((task["task"]["name"], task["hosts"]["localhost"])
                   for task in json.loads(proc.stdout)["plays"][0]["tasks"])
    assert sorted(results) == sorted(task["name"] for task in TASKS)
    for name, result in results.items():
        assert result.get("failed"), (name, result)   # no cluster: each fails, after taking the defaults
        args = (result.get("invocation") or {}).get("module_args") or {}
        assert args.get("context") == "ctx-of-the-run", (name, result)
        assert args.get("kubeconfig") in (str(kubeconfig), "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER"), (name, args)
    assert "ctx-of-the-run" in results["k8s_info"]["msg"], results["k8s_info"]["msg"]
