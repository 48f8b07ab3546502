"""Every AWX job template (playbooks/vars/awx_job_templates.yml) runs through ansible-runner - the engine AWX runs
jobs with - against two rehearsal-lab VR200 trays and the test Kubernetes cluster, laid out the way AWX lays out a
job: a private data dir with

* env/extravars - the template's survey defaults (playbooks/files/awx_surveys/<id>.json, generated from the roles'
  argument specs), the variables AWX adds to every job (awx_job_id, awx_job_template_name; awx_workflow_job_id and
  awx_workflow_job_name for a workflow's nodes) and, for a workflow node, the artifacts of the nodes before it (AWX
  passes what their set_stats left as extra vars), plus the lab overrides listed in LAB_EXTRAVARS below and nothing
  else - no gpu_tray_report_dir: the reports go where they go in AWX, run folder awx-workflow-job-<id> under
  /var/lib/gpu-tray-report (docs/awx.md "Where the reports go"), which the module's fixture removes afterwards;
* env/envvars - what the execution environment provides (collections path, helm on PATH) and what the job's
  credential injects: the `gpu_tray.cluster kubeconfig` credential type, rendered from its definition in
  playbooks/awx_configure.yml exactly as AWX renders injectors (the kubeconfig written to a file in the private data
  dir, its path in K8S_AUTH_KUBECONFIG). Every job gets it, as awx_configure.yml attaches it to every template;
* inventory/ - the lab's inventory (its trays and platform group_vars) plus the group k8s_api with the host that
  reaches the Kubernetes API (localhost, local connection), as a real AWX inventory for this collection has it;
* project/ - this checkout.

The workflow's nodes run in the workflow's order (awx_workflow.nodes: preflight -> prepare trays -> deploy stack ->
validate), each only after the one before it succeeded, as AWX's success_nodes chain them; then the validate template
as the schedule awx_configure creates launches it (its own job, with the signing key credential; it compares with the
workflow's passing validate and signs its bundle); then teardown stack and recover NodeMaintenance, which are run on
their own. Each job must end `successful` (status and rc in the artifacts)
with a playbook_on_stats event that counts no failure, and what it did is read back from the trays and the cluster,
its reports from the workflow's run folder, and its summary from the job's artifacts (the playbook_on_stats event's
artifact_data, which AWX stores as the job's artifacts); the validate job finds the preflight job's records.

The arrangement: the lab trays are the hosts the tray jobs change (SSH, real reboots). The test cluster
(tests/cluster/kcluster, rke2-vr200, a real kube-apiserver 1.20 + etcd) has a simulated kubelet whose nodes are
named tray01 and tray02 - the names of the lab trays - and stand in for the kubelets those trays would run (a lab
tray runs no kubelet). So prepare trays cordons and drains node trayNN through the API before it reboots lab tray
trayNN and uncordons it after; deploy stack, validate, teardown and recovery run on the k8s_api host against the
API, and validate reads the simulated nodes. The stand-in operator tests/cluster/stack_controller.py does what the
operators of the real stack would (creates the CRD the second tier needs, reports the policy ready, drains node
states on teardown).

Why LAB_EXTRAVARS exist (an AWX job gets them the same way: the template's Variables, or extra vars on launch):
* deploy/teardown stack: the lab inventory's recipe (vr200-rke2-ubuntu-training) pulls the real charts from the
  internet and needs Kubernetes >= 1.34 and GPUs; the jobs deploy the test recipe `stacktest` instead
  (tests/cluster/files/stacktest/vars.yml: local charts, added as a site recipe through stack_extra_catalog /
  stack_extra_recipes, with the same orderings and gates as the real stack, and its own stack_rails: no platform
  profile lists the site recipe, and the lab's VR200 profile names no rails);
* validate: it checks the lab inventory's recipe with the components of the deployed test recipe
  (validate_components) and the digest the deploy job reported; it leaves out the readiness phase (cluster_preflight
  requires Kubernetes >= 1.34.1, the test cluster's API is 1.20) and runs only the conformance check that a cluster
  without GPUs and GPU operator can pass (secure-accelerator-access); its trays phase reads both lab trays (VR200:
  no VFs to check, netns_mode exclusive after the prepare job's reboot);
  the performance phase runs no NCCL benchmark (validate_nccl_variants: []; the recipe's nvls run needs a DRA
  ComputeDomain, which the 1.20 test cluster cannot serve - tests/cluster/test_nccl_runs.py runs the benchmarks),
  so it is recorded as skipped;
* preflight / prepare trays: none;
* recover NodeMaintenance: `stack_recover_nodes: [tray01]`, the extra vars on launch the template asks for.
"""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time

import jinja2
import pytest
import yaml

from ansible_env import checkout_env
from labtools import BIN, ROOT, ansible_env, lab, lab_up, tray_status

CLUSTER_DIR = ROOT / "tests" / "cluster"
sys.path.insert(0, str(CLUSTER_DIR))
from clusterhelpers import kube_config, running_cluster  # noqa: E402  (tests/cluster/clusterhelpers.py)
from upstreamdata import upstream_crd  # noqa: E402
sys.path.insert(0, str(ROOT / "tests" / "quality"))
from awxkit import credential_injection  # noqa: E402  (tests/quality/awxkit.py)

DEFINITIONS = yaml.safe_load((ROOT / "playbooks" / "vars" / "awx_job_templates.yml").read_text())
TEMPLATES = {t["id"]: t for t in DEFINITIONS["awx_job_templates"]}
WORKFLOW = DEFINITIONS["awx_workflow"]["nodes"]
ON_THEIR_OWN = ["teardown_stack", "recover_node_maintenance"]
TRAYS = ("tray01", "tray02")
STACK_VARS = yaml.safe_load((CLUSTER_DIR / "files" / "stacktest" / "vars.yml").read_text())
STACK_RECIPE = "stacktest"
RELEASES = {"st-alpha": "stacktest-a", "st-beta": "stacktest-b", "st-operator": "stacktest-op",
            "st-dra": "stacktest-dra"}
STACK_GROUP = "stacktest.gpu-tray.test"
NM = ("maintenance.nvidia.com", "v1alpha1", "nodemaintenances")
NM_NAMESPACE = "stacktest-maint"

# The lab overrides of each template, on top of its survey defaults (why: the module docstring).
STACK_OVERRIDES = {"gpu_tray_recipe": STACK_RECIPE, "stack_test_dir": str(CLUSTER_DIR),
                   "stack_rails": STACK_VARS["stack_rails"],
                   "stack_extra_catalog": STACK_VARS["stack_extra_catalog"],
                   "stack_extra_recipes": STACK_VARS["stack_extra_recipes"]}
LAB_EXTRAVARS = {
    "deploy_stack": STACK_OVERRIDES,
    "teardown_stack": STACK_OVERRIDES,
    "validate": {
        "validate_phases": ["deployment", "trays", "conformance", "performance"],
        "validate_components": [
            {"name": name, "namespace": STACK_VARS["stack_extra_catalog"][name]["namespace"],
             "crds": STACK_VARS["stack_extra_catalog"][name].get("readiness", {}).get("wait_for_crds", []),
             "ready": STACK_VARS["stack_extra_catalog"][name].get("readiness", {}).get("ready", [])}
            for name in STACK_VARS["stack_extra_recipes"][STACK_RECIPE]["components"]],
        "validate_conformance_checks": ["secure-accelerator-access"],
        "validate_nccl_variants": [],
        # validate_recipe_digest is added per run (the deploy job's digest)
    },
    "recover_node_maintenance": {"stack_recover_nodes": ["tray01"]},
}

_succeeded = set()     # template ids whose job succeeded in this module (the workflow's success chain)
_digest = {}           # the recipe digest the deploy stack job reported
_artifacts = {}        # what each workflow node's set_stats left (AWX passes it on to the nodes after it)

# where AWX jobs write their reports (plugins/plugin_utils/report_dir.py AWX_REPORT_DIR), this module's workflow job
# and its run folder there; AWX job ids count up from a base of this run's own
REPORT_BASE = pathlib.Path("/var/lib/gpu-tray-report")
WORKFLOW_JOB_ID = 900000000 + os.getpid() % 1000000 * 10
RUN_DIR = REPORT_BASE / ("awx-workflow-job-%d" % WORKFLOW_JOB_ID)
_job_ids = iter(range(WORKFLOW_JOB_ID + 1, WORKFLOW_JOB_ID + 10))


# ------------------------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def cluster():
    """The test cluster as tests/cluster/conftest.py starts it (clusterhelpers.running_cluster: skip only when the
    machine cannot run it, never with KCLUSTER_REQUIRE=1), but rke2-vr200 with the lab's two trays as nodes. A
    cluster that is already up (>= 2 trays) is reused, cleaned of this test's objects before and after, and left
    up; one started here is stopped with `kcluster down`, checked like conftest checks it - also when reading it
    back or cleaning fails."""
    with running_cluster(["--platform", "rke2-vr200", "--nodes", str(len(TRAYS))], min_nodes=len(TRAYS)) \
            as (status, started):
        from kubernetes import client
        status = dict(status, api=client.ApiClient(configuration=kube_config(status["kubeconfig"])))
        if not started:
            _clean(status)
        try:
            yield status
        finally:
            if not started:
                _clean(status)


@pytest.fixture(scope="module", autouse=True)
def report_base():
    """Removes this module's run folders from /var/lib/gpu-tray-report afterwards (and the directory, when it made
    it), and a `latest` left pointing at one of them."""
    existed = REPORT_BASE.exists()
    yield
    mine = [p for p in REPORT_BASE.glob("awx-*") if p.name.rsplit("-", 1)[-1].isdigit()
            and WORKFLOW_JOB_ID <= int(p.name.rsplit("-", 1)[-1]) < WORKFLOW_JOB_ID + 10]
    for path in mine:
        shutil.rmtree(str(path))
    latest = REPORT_BASE / "latest"
    if latest.is_symlink() and not latest.exists():
        latest.unlink()
    if not existed and REPORT_BASE.exists() and not any(REPORT_BASE.iterdir()):
        REPORT_BASE.rmdir()


@pytest.fixture(scope="module")
def inventory(cluster):
    """The lab (after the cluster: the lab lock is taken first, but a cluster that cannot start must not cost a
    lab boot); `lab down` at the end."""
    inv = lab_up("--platform", "rke2-vr200", "--trays", str(len(TRAYS)))
    yield inv
    lab("down")


@pytest.fixture(scope="module")
def operator(cluster, tmp_path_factory):
    """tests/cluster/stack_controller.py, the stand-in for the stack's operators, for the whole module."""
    log = tmp_path_factory.mktemp("controller") / "events.log"
    proc = subprocess.Popen([sys.executable, str(CLUSTER_DIR / "stack_controller.py"), cluster["kubeconfig"],
                             str(log)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 20
    while not (log.exists() and log.read_text()) and time.time() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    yield log
    proc.terminate()
    proc.wait(timeout=10)


def _clean(cluster):
    """Remove what this test creates from a reused cluster (releases, namespaces, CRDs, cordons)."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    for name, ns in RELEASES.items():
        subprocess.run([cluster["helm"], "uninstall", name, "-n", ns, "--wait", "--kubeconfig", cluster["kubeconfig"]],
                       capture_output=True, check=False)
    core, ext = client.CoreV1Api(cluster["api"]), client.ApiextensionsV1Api(cluster["api"])
    custom = client.CustomObjectsApi(cluster["api"])
    try:
        for nm in custom.list_cluster_custom_object(*NM)["items"]:
            custom.patch_namespaced_custom_object(NM[0], NM[1], nm["metadata"]["namespace"], NM[2],
                                                  nm["metadata"]["name"], {"metadata": {"finalizers": None}})
    except ApiException as exc:
        assert exc.status == 404, exc
    for crd in ext.list_custom_resource_definition().items:
        if crd.spec.group == STACK_GROUP or crd.metadata.name == "%s.%s" % (NM[2], NM[0]):
            ext.delete_custom_resource_definition(crd.metadata.name)
    for ns in sorted(set(RELEASES.values())) + [NM_NAMESPACE]:
        try:
            core.delete_namespace(ns)
        except ApiException as exc:
            assert exc.status == 404, exc
    deadline = time.time() + 120
    while [n for n in core.list_namespace().items if n.metadata.name.startswith("stacktest-")]:
        assert time.time() < deadline, "stacktest-* namespaces do not go away"
        time.sleep(1)
    for node in core.list_node().items:
        if node.spec.unschedulable:
            core.patch_node(node.metadata.name, {"spec": {"unschedulable": False}})


# ------------------------------------------------------------------------------------- one AWX job, by runner

def survey_defaults(template_id):
    survey = json.loads((ROOT / "playbooks" / "files" / "awx_surveys" / ("%s.json" % template_id)).read_text())
    return {q["variable"]: q["default"] for q in survey["spec"] if "default" in q}


def awx_job_vars(template_id):
    """What AWX adds to a job's extra vars (awx_meta_vars): the job's id and template, the workflow job's for a node
    of the workflow - and the artifacts of the workflow's nodes before it (set_stats data, merged)."""
    out = {"awx_job_id": next(_job_ids), "awx_job_template_name": TEMPLATES[template_id]["name"],
           "awx_job_launch_type": "workflow" if template_id in WORKFLOW else "manual"}
    if template_id in WORKFLOW:
        out.update(awx_workflow_job_id=WORKFLOW_JOB_ID, awx_workflow_job_name=DEFINITIONS["awx_workflow"]["name"])
        for parent in WORKFLOW[:WORKFLOW.index(template_id)]:
            out.update(_artifacts.get(parent, {}))          # AWX merges the ancestors' artifacts key by key
    return out


def run_template(template_id, inventory, cluster, tmp_path, credentials=(), launch=None, drop=(), **more):
    """ansible-runner run <private data dir> -p <the template's playbook>; returns (extravars, artifacts dir).
    ``credentials``: the inputs of more credentials the template carries (besides the kubeconfig every job gets);
    ``launch``: AWX's variables of how the job was launched, instead of a workflow node's or a manual launch's."""
    pdd = tmp_path / template_id
    (pdd / "env").mkdir(parents=True)
    extravars = dict(survey_defaults(template_id), **LAB_EXTRAVARS.get(template_id, {}))
    extravars.update(launch or awx_job_vars(template_id))
    extravars.update(more)
    for name in drop:           # a lab override the launch replaces (the schedule's phases)
        extravars.pop(name, None)
    env = ansible_env()
    # the execution environment: its collections, helm on PATH (execution-environment.yml installs both); only these
    envvars = checkout_env(ROOT, base={"PATH": env["PATH"]}, config=False, home=str(pdd / "ansible-home"),
                           bin_path=os.path.dirname(cluster["helm"]))
    envvars.update(credential_injection({"kubeconfig": pathlib.Path(cluster["kubeconfig"]).read_text()}, pdd)[0])
    for inputs in credentials:      # more credentials attached to the template: their extra vars
        extravars.update(credential_injection(inputs, pdd)[1])
    (pdd / "env" / "extravars").write_text(yaml.safe_dump(extravars))
    (pdd / "env" / "envvars").write_text(yaml.safe_dump(envvars))
    (pdd / "inventory").mkdir()
    for item in ("hosts.yml", "group_vars"):
        (pdd / "inventory" / item).symlink_to(pathlib.Path(inventory).parent / item)
    (pdd / "inventory" / "k8s_api.yml").write_text(yaml.safe_dump({"k8s_api": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))   # the EE's python
    (pdd / "project").symlink_to(ROOT, target_is_directory=True)
    for var in [v for v in env if v.startswith("K8S_AUTH_")]:
        del env[var]        # the cluster is reached only through what the credential injects
    proc = subprocess.run([str(BIN / "ansible-runner"), "run", str(pdd), "-p", TEMPLATES[template_id]["playbook"],
                           "--ident", template_id], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False, timeout=1200)
    artifacts = pdd / "artifacts" / template_id
    assert proc.returncode == 0, "ansible-runner %s failed (rc %d):\n%s\n%s" % (
        template_id, proc.returncode, proc.stdout[-8000:], proc.stderr[-3000:])
    assert (artifacts / "status").read_text() == "successful"
    assert (artifacts / "rc").read_text() == "0"
    return extravars, artifacts


def stats(artifacts):
    events = [json.loads(p.read_text()) for p in (artifacts / "job_events").glob("*.json")]
    final = [e for e in events if e.get("event") == "playbook_on_stats"]
    assert len(final) == 1, "no playbook_on_stats event in %s" % artifacts
    data = final[0]["event_data"]
    assert not data.get("failures") and not data.get("dark"), data
    return data


def job_artifacts(artifacts):
    """The job's artifacts as AWX stores them: the set_stats data in the playbook_on_stats event."""
    return stats(artifacts).get("artifact_data") or {}


def releases(cluster):
    out = subprocess.run([cluster["helm"], "list", "-A", "-a", "-o", "json", "--kubeconfig", cluster["kubeconfig"]],
                         capture_output=True, text=True, check=True).stdout
    return {r["name"]: r for r in json.loads(out or "[]") if r["name"] in RELEASES}


def cordoned(cluster, node):
    from kubernetes import client
    return bool(client.CoreV1Api(cluster["api"]).read_node(node).spec.unschedulable)


# --------------------------------------------------------------------------------- what each job must have done

def check_preflight(extravars, artifacts, ctx):
    assert extravars.get("survey_preflight_fail") == "true", extravars   # the survey default reached the run
    assert "gpu_tray_report_dir" not in extravars, extravars
    data = stats(artifacts)
    assert set(data["ok"]) >= set(TRAYS), data
    assert not any(data.get("changed", {}).get(t) for t in TRAYS), data
    assert {t: tray_status(t)["boot_count"] for t in TRAYS} == ctx["boots"]
    # the reports in the workflow's run folder under the documented place, latest pointing at it
    assert "| tray01 | rke2-vr200 | PASS |" in (RUN_DIR / "preflight-summary.md").read_text()
    assert all((RUN_DIR / t / "preflight.json").is_file() for t in TRAYS)
    assert (REPORT_BASE / "latest").resolve() == RUN_DIR
    # the summary in the job's artifacts
    summary = job_artifacts(artifacts)["gpu_tray_evidence"]["preflight"]
    assert summary["result"] == "passed" and summary["trays"] == 2 and summary["passed"] == 2, summary
    assert summary["dir"] == str(RUN_DIR) and summary["files"]["summary"] == str(RUN_DIR / "preflight-summary.md")


def check_prepare_trays(extravars, artifacts, ctx):
    assert extravars.get("survey_rolling_reboot_drain") == "auto" and "survey_rolling_reboot_batch" not in extravars, \
        extravars
    data = stats(artifacts)
    assert all(data.get("changed", {}).get(t) for t in TRAYS), data
    assert {t: tray_status(t)["boot_count"] for t in TRAYS} == {t: n + 1 for t, n in ctx["boots"].items()}
    # the credential reached the drain: each tray's node was cordoned and drained before its reboot, uncordoned after
    rows = {r["tray"]: r for r in json.loads((RUN_DIR / "rolling-reboot.json").read_text())}
    assert {t: rows[t]["drain"] for t in TRAYS} == {t: "drained, uncordoned" for t in TRAYS}, rows
    assert not any(cordoned(ctx["cluster"], t) for t in TRAYS)
    # the preflight node's artifacts reached this node as AWX passes them; this job's own artifacts
    assert extravars["gpu_tray_evidence"]["preflight"]["dir"] == str(RUN_DIR), extravars
    evidence = job_artifacts(artifacts)["gpu_tray_evidence"]
    assert evidence["preflight"]["result"] == "passed" and evidence["rolling_reboot"]["trays"] == 2, evidence
    assert evidence["rolling_reboot"]["result"] == "passed" and evidence["rolling_reboot"]["dir"] == str(RUN_DIR)


def check_deploy_stack(extravars, artifacts, ctx):
    assert extravars["survey_stack_wait_timeout"] == 600 and extravars["survey_stack_helm_timeout"] == "10m", extravars
    assert not any(k in extravars for k in ("stack_kubeconfig", "gpu_tray_kubeconfig")), extravars
    data = stats(artifacts)
    out = (artifacts / "stdout").read_text()
    assert re.findall(r'"msg": "(tier \d/\d: [^"]+)"', out) == [
        "tier 1/3: st-alpha, st-beta", "tier 2/3: st-dra, st-operator", "tier 3/3: st-pools"], out[-4000:]
    assert all(data.get("changed", {}).get("stack-%s" % c) for c in list(RELEASES) + ["st-pools"]), data
    rels = releases(ctx["cluster"])
    assert sorted(rels) == sorted(RELEASES) and all(r["status"] == "deployed" for r in rels.values()), rels
    digest = re.findall(r"%s: 5 components in 3 tiers, digest (\w+);" % STACK_RECIPE, out)
    assert len(set(digest)) == 1, out[-4000:]
    _digest["deployed"] = digest[0]


def check_validate(extravars, artifacts, ctx):
    stats(artifacts)
    evidence = RUN_DIR / "validation"
    summary = json.loads((evidence / "summary.json").read_text())
    assert summary["result"] == "passed" and summary["recipe_digest"] == _digest["deployed"], summary
    # performance: no NCCL benchmark to run (validate_nccl_variants: []), so the phase is skipped
    assert summary["phases"] == {"deployment": "passed", "trays": "passed", "conformance": "passed",
                                 "performance": "skipped"}, summary
    # the trays phase read both lab trays after the deploy: VR200 creates no VFs, its netns_mode is exclusive once
    # prepare_trays' reboot applied it
    tray_tests = json.loads((evidence / "ctrf" / "trays.json").read_text())["results"]["tests"]
    trays = dict((t["name"], t["status"]) for t in tray_tests)
    # the PFs compared with the records the preflight job left (another job: its read is not in this run)
    messages = dict((t["name"], t["message"]) for t in tray_tests)
    assert all(messages["%s/pf-state" % t].endswith(", as at the preflight.") for t in TRAYS), messages
    artifact = job_artifacts(artifacts)["gpu_tray_evidence"]["validation"]
    assert artifact["result"] == "passed" and artifact["recipe_digest"] == _digest["deployed"], artifact
    assert artifact["preflight_records"] == {"found": {str(RUN_DIR): list(TRAYS)}, "missing": []}, artifact
    assert artifact["dir"] == str(evidence) and (REPORT_BASE / "latest").resolve() == RUN_DIR
    assert {name: trays[name] for name in ("tray01/netns-mode", "tray02/netns-mode", "tray01/pf-state",
                                           "tray01/sriov-vfs")} == {
        "tray01/netns-mode": "passed", "tray02/netns-mode": "passed", "tray01/pf-state": "passed",
        "tray01/sriov-vfs": "skipped"}, trays
    tests = json.loads((evidence / "ctrf" / "deployment.json").read_text())["results"]["tests"]
    assert all(t["status"] == "passed" for t in tests), tests
    # every deployed component was looked at: its workload, the CRDs its gates wait for, the CR that reports ready
    assert {t["extra"]["object"] for t in tests} >= {
        "Deployment stacktest-a/st-alpha", "Deployment stacktest-b/st-beta", "Deployment stacktest-op/st-operator",
        "DaemonSet stacktest-dra/st-dra-kubelet-plugin", "CustomResourceDefinition pools.%s" % STACK_GROUP,
        "CustomResourceDefinition widgetpolicies.%s" % STACK_GROUP, "WidgetPolicy policy"}, tests
    conformance = json.loads((evidence / "ctrf" / "conformance.json").read_text())["results"]["tests"]
    assert [(t["name"], t["status"]) for t in conformance] == [("secure-accelerator-access", "passed")], conformance


CHECKS = {"preflight": check_preflight, "prepare_trays": check_prepare_trays, "deploy_stack": check_deploy_stack,
          "validate": check_validate}


# ----------------------------------------------------------------------------------------------------- tests

def test_every_template_is_run_here():
    assert "test_scheduled_validate_template" in globals()       # the one template awx_configure schedules
    assert set(WORKFLOW) <= set(TEMPLATES) and set(WORKFLOW) == set(CHECKS), (WORKFLOW, sorted(CHECKS))
    assert sorted(WORKFLOW + ON_THEIR_OWN) == sorted(TEMPLATES), sorted(TEMPLATES)


@pytest.mark.parametrize("step", WORKFLOW)
def test_workflow_node(step, inventory, cluster, operator, tmp_path):
    """One node of the rollout workflow, in the workflow's order; AWX starts it only after its parent succeeded."""
    parent = WORKFLOW[WORKFLOW.index(step) - 1] if WORKFLOW.index(step) > 0 else None
    if parent is not None and parent not in _succeeded:
        pytest.fail("workflow: %s runs only after %s succeeded, which it did not here" % (step, parent), pytrace=False)
    ctx = {"cluster": cluster, "boots": {t: tray_status(t)["boot_count"] for t in TRAYS}}
    more = {}
    if step == "validate":
        more = {"validate_recipe_digest": _digest["deployed"]}
    extravars, artifacts = run_template(step, inventory, cluster, tmp_path, **more)
    CHECKS[step](extravars, artifacts, ctx)
    _artifacts[step] = job_artifacts(artifacts)
    _succeeded.add(step)


def scheduled_job(template_id):
    """The schedule awx_configure creates (its play vars, rendered as Ansible renders them) and the variables AWX
    gives a job the schedule launches (awx_meta_vars: the job's, the template's, launch type scheduled, the
    schedule's)."""
    play = yaml.safe_load((ROOT / "playbooks" / "awx_configure.yml").read_text())[0]
    schedule = {key: jinja2.Template(play["vars"]["__awx_configure_schedule"][key]).render(
        awx_job_templates=DEFINITIONS["awx_job_templates"]) for key in ("name", "unified_job_template")}
    assert schedule["unified_job_template"] == TEMPLATES[template_id]["name"], schedule
    # the schedule's extra_data: the phases it runs by default (awx_configure_validate_schedule_phases)
    spec = yaml.safe_load((ROOT / "playbooks" / "vars" / "awx_configure_spec.yml").read_text())["awx_configure_options"]
    assert set(play["vars"]["__awx_configure_schedule"]["extra_data"]) == {"gpu_tray_validate_phases"}
    # (the lab's 1.20 test cluster cannot pass readiness - LAB_EXTRAVARS: every other phase the schedule runs)
    phases = [p for p in spec["awx_configure_validate_schedule_phases"]["default"] if p != "readiness"]
    return {"awx_job_id": next(_job_ids), "awx_job_template_name": schedule["unified_job_template"],
            "awx_job_launch_type": "scheduled", "awx_schedule_id": 7, "awx_schedule_name": schedule["name"],
            "gpu_tray_validate_phases": phases}


def test_scheduled_validate_template(inventory, cluster, operator, tmp_path):
    """The validate template as its schedule launches it (validation that runs by itself, issue 46): a job of its own
    (run folder awx-job-<id>), the template's survey defaults and Variables, the signing key credential
    awx_configure attaches to it. It passes, opens with the drift against the workflow's passing validate (nothing
    changed), and its attested bundle - signed with the site's key, the preflight's records a phase of it -
    verifies with verify_evidence.yml."""
    if "validate" not in _succeeded:
        pytest.fail("the scheduled validate compares with the workflow's validate, which did not succeed here",
                    pytrace=False)
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519
    key = ed25519.Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    public = tmp_path / "site-key.pub"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    launch = scheduled_job("validate")
    # the schedule's phases reach the job as gpu_tray_validate_phases (its extra_data): the lab's own validate_phases,
    # which would win over them, is left out of this launch
    extravars, artifacts = run_template("validate", inventory, cluster, tmp_path, credentials=[{"signing_key": pem}],
                                        launch=launch, drop=("validate_phases",),
                                        validate_recipe_digest=_digest["deployed"])
    assert pathlib.Path(extravars["gpu_tray_evidence_signing_key"]).read_text() == pem
    assert "awx_workflow_job_id" not in extravars and "gpu_tray_evidence" not in extravars, extravars
    stats(artifacts)
    evidence = REPORT_BASE / ("awx-job-%d" % launch["awx_job_id"]) / "validation"
    summary = json.loads((evidence / "summary.json").read_text())
    assert summary["result"] == "passed", summary
    # drift: compared with the last passing run, the workflow's validate; nothing changed since
    baseline = json.loads((RUN_DIR / "validation" / "last-pass.json").read_text())["generated"]
    artifact = job_artifacts(artifacts)["gpu_tray_evidence"]["validation"]
    assert artifact["drift"] == {"summary": "Nothing changed since the last passing run (%s)." % baseline,
                                 "changes": [], "changes_total": 0}, artifact
    assert artifact["bundle"] == str(evidence / "summary-bundle"), artifact
    # the preflight's records (the workflow's run folder, the newest that has them) are the bundle's phase preflight
    assert artifact["preflight_records"] == {"found": {str(RUN_DIR): list(TRAYS)}, "missing": []}, artifact
    statement = json.loads((evidence / "summary-bundle" / "statement.intoto.json").read_text())
    # the schedule's phases: the ones that only read - no NCCL benchmark takes the trays' GPUs at night (issue 54)
    assert sorted(statement["predicate"]["phases"]) == ["conformance", "deployment", "preflight", "trays"], \
        statement["predicate"]["phases"]
    assert sorted(summary["phases"]) == ["conformance", "deployment", "trays"], summary["phases"]
    assert statement["predicate"]["phases"]["preflight"]["failed"] == 0, statement["predicate"]["phases"]
    envelope = json.loads((evidence / "summary-bundle" / "attestation.intoto.jsonl").read_text())
    assert len(envelope["signatures"]) == 1, envelope          # signed with the credential's key
    env = ansible_env()
    proc = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(tmp_path / "validate" / "inventory"), "playbooks/verify_evidence.yml",
         "-e", json.dumps(dict(STACK_OVERRIDES, gpu_tray_recipe=STACK_RECIPE, verify_evidence_path=str(evidence),
                               verify_evidence_public_key=str(public), verify_evidence_require_signature=True))],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert re.search(r"Evidence bundle \S+ holds: \d+ files match manifest.json, its signature verified, the recipe "
                     r"digest is the recipe's today\.", proc.stdout), proc.stdout[-4000:]


def test_teardown_stack_template(inventory, cluster, operator, tmp_path):
    if "deploy_stack" not in _succeeded:
        pytest.fail("teardown stack needs the stack the deploy stack job installs, which did not succeed here",
                    pytrace=False)
    assert sorted(releases(cluster)) == sorted(RELEASES)
    _extravars, artifacts = run_template("teardown_stack", inventory, cluster, tmp_path)
    data = stats(artifacts)
    out = (artifacts / "stdout").read_text()
    assert re.findall(r'"msg": "(teardown tier \d/\d: [^"]+)"', out) == [
        "teardown tier 3/3: st-pools", "teardown tier 2/3: st-dra, st-operator",
        "teardown tier 1/3: st-alpha, st-beta"], out[-4000:]
    assert all(data.get("changed", {}).get("stack-%s" % c) for c in RELEASES), data
    assert releases(cluster) == {}


def test_recover_node_maintenance_template(inventory, cluster, tmp_path):
    from kubernetes import client
    ext, core = client.ApiextensionsV1Api(cluster["api"]), client.CoreV1Api(cluster["api"])
    custom = client.CustomObjectsApi(cluster["api"])
    crd = yaml.safe_load(pathlib.Path(upstream_crd("maintenance")).read_text())        # the real CRD, upstream data
    ext.create_custom_resource_definition(crd)
    deadline = time.time() + 30
    while not any(c.type == "Established" and c.status == "True" for c in
                  ext.read_custom_resource_definition("%s.%s" % (NM[2], NM[0])).status.conditions or []):
        assert time.time() < deadline, "the NodeMaintenance CRD is not Established"
        time.sleep(0.5)
    core.create_namespace({"metadata": {"name": NM_NAMESPACE}})
    for tray in TRAYS:      # orphans: the Maintenance Operator that would release them is gone
        custom.create_namespaced_custom_object(NM[0], NM[1], NM_NAMESPACE, NM[2], {
            "apiVersion": "%s/%s" % NM[:2], "kind": "NodeMaintenance",
            "metadata": {"name": "nm-%s" % tray, "finalizers": ["maintenance.nvidia.com/finalizer"]},
            "spec": {"requestorID": "nvidia.network.operator", "nodeName": tray, "cordon": True}})
        core.patch_node(tray, {"spec": {"unschedulable": True}})
    try:
        extravars, artifacts = run_template("recover_node_maintenance", inventory, cluster, tmp_path)
        assert extravars["stack_recover_nodes"] == ["tray01"], extravars
        stats(artifacts)
        listed = custom.list_namespaced_custom_object(NM[0], NM[1], NM_NAMESPACE, NM[2])["items"]
        left = [o["metadata"]["name"] for o in listed]
        assert left == ["nm-tray02"], left          # only the node the launch asked for
        assert not cordoned(cluster, "tray01") and cordoned(cluster, "tray02")
    finally:
        core.patch_node("tray02", {"spec": {"unschedulable": False}})
