# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL runs' objects the 1.20 test server cannot serve, held against what the platforms serve (no cluster).

The plans are the validate role's own (tests/cluster/files/nccl_plans.yml: its resolve entry point over the stack
catalog and the rendered SriovIBNetworks, its defaults, filter nccl_run_plan), for each recipe that runs NCCL:

* every core object (Namespace, ConfigMap, Secret, Service, the Jobs with pod resourceClaims and completionMode
  Indexed) against the Kubernetes 1.34 schemas, strictly (kubernetes-validate, offline_schema.py), and the pod
  templates of the TrainingRuntime too;
* TrainingRuntime and TrainJob strictly against the real Kubeflow Trainer v2.2.0 CRDs (the upstream data,
  ../shared/upstream kubeflow-trainer/: upstreamdata.py) - the catalog's pin.

The ComputeDomain is held against the real DRA driver CRD in tests/upstream/test_upstream_nccl.py (../shared).
"""

import copy
import json
import os
import subprocess

import pytest
import yaml

import offline_schema as osc
from stackhelpers import RAIL_PCI, ansible_env, playbook_argv
from upstreamdata import upstream_crd

HERE = os.path.dirname(os.path.abspath(__file__))
RECIPES = {"gb200-nvke-ubuntu-training": ("job", ["nvls", "net"]),
           "gb200-nvke-ubuntu-training-kubeflow": ("trainjob", ["nvls", "net"]),
           "vr200-rke2-ubuntu-training": ("job", ["nvls"]),
           "vr200-rke2-ubuntu-inference": ("job", [])}
CUSTOM = ("ComputeDomain", "TrainingRuntime", "TrainJob")


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """{recipe: {'variants', 'spec', 'plans'}} as role validate builds them, the recipes rendered in parallel."""
    root = tmp_path_factory.mktemp("nccl-plans")
    procs = {}
    for recipe in RECIPES:
        out = str(root / (recipe + ".json"))
        procs[recipe] = (out, subprocess.Popen(
            playbook_argv(os.path.join(HERE, "files", "nccl_plans.yml"), "-e", "nccl_plans_recipe=%s" % recipe,
                          "-e", "nccl_plans_out=%s" % out,
                          "-e", json.dumps({"gpu_tray_rail_pci_addresses": RAIL_PCI})),
            env=ansible_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    result = {}
    for recipe, (out, proc) in procs.items():
        text = proc.communicate()[0]
        assert proc.returncode == 0, "nccl_plans.yml %s failed:\n%s" % (recipe, text[-3000:])
        with open(out) as fh:
            result[recipe] = json.load(fh)
    return result


@pytest.fixture(scope="module")
def trainer_crds():
    out = {}
    for name in ("trainjobs", "trainingruntimes"):
        with open(upstream_crd("kubeflow-trainer", name)) as fh:
            crd = yaml.safe_load(fh)
        out[crd["spec"]["names"]["kind"]] = crd
    return out


def _objects(plan):
    return plan["prepare"] + plan["workload"]


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_each_recipe_runs_its_variants_on_its_workload_api(plans, recipe):
    workload, variants = RECIPES[recipe]
    assert plans[recipe]["variants"] == variants
    assert sorted(plans[recipe]["plans"]) == sorted(variants)
    if variants:
        assert plans[recipe]["spec"]["workload"] == workload
    for variant, plan in plans[recipe]["plans"].items():
        kinds = [o["kind"] for o in plan["workload"]]
        assert kinds == (["TrainingRuntime", "TrainJob"] if workload == "trainjob" else ["Job", "Job"])
        assert ("ComputeDomain" in [o["kind"] for o in plan["prepare"]]) == (variant == "nvls")


def test_nvke_net_workers_take_every_rail_the_recipe_renders(plans):
    for recipe in ("gb200-nvke-ubuntu-training", "gb200-nvke-ubuntu-training-kubeflow"):
        summary = plans[recipe]["plans"]["net"]["summary"]
        assert summary["worker_annotations"] == {"k8s.v1.cni.cncf.io/networks": ",".join(
            "default/sriov-network-rail-%d" % i for i in range(4))}
        assert summary["worker_resources"]["limits"] == dict(
            [("nvidia.com/gpu", 4)] + [("nvidia.com/sriov_resource_rail_%d" % i, 1) for i in range(4)])
    assert plans["vr200-rke2-ubuntu-training"]["spec"]["rails"] == []        # no SR-IOV rails on VR200


@pytest.mark.parametrize("recipe", ["gb200-nvke-ubuntu-training", "gb200-nvke-ubuntu-training-kubeflow",
                                    "vr200-rke2-ubuntu-training"])
def test_every_core_object_validates_against_1_34_strict(plans, recipe):
    core = []
    for plan in plans[recipe]["plans"].values():
        core += [o for o in _objects(plan) if o["kind"] not in CUSTOM]
        for runtime in [o for o in plan["workload"] if o["kind"] == "TrainingRuntime"]:
            # the JobSet's pod templates are the pods the platform will run: as Jobs, against the 1.34 schemas
            for job in runtime["spec"]["template"]["spec"]["replicatedJobs"]:
                core.append({"apiVersion": "batch/v1", "kind": "Job",
                             "metadata": {"name": job["name"], "namespace": plan["namespace"]},
                             "spec": job["template"]["spec"]})
    out = osc.kubernetes_validate(yaml.safe_dump_all(core))
    assert out.count("passed") >= len(core), out
    assert "against version 1.34" in out


def test_the_trainer_objects_validate_strictly_against_the_real_crds(plans, trainer_crds):
    checked = 0
    for plan in plans["gb200-nvke-ubuntu-training-kubeflow"]["plans"].values():
        for obj in plan["workload"]:
            osc.validate_custom_resource(obj, trainer_crds[obj["kind"]])
            checked += 1
    assert checked == 4


def test_the_checks_can_fail(plans, trainer_crds):
    plan = plans["gb200-nvke-ubuntu-training-kubeflow"]["plans"]["net"]
    trainjob = copy.deepcopy([o for o in plan["workload"] if o["kind"] == "TrainJob"][0])
    trainjob["spec"]["trainer"]["numNodez"] = 2
    with pytest.raises(osc.SchemaError, match="numNodez"):
        osc.validate_custom_resource(trainjob, trainer_crds["TrainJob"])
    runtime = copy.deepcopy([o for o in plan["workload"] if o["kind"] == "TrainingRuntime"][0])
    runtime["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "MPICH"
    with pytest.raises(osc.SchemaError, match="mpiImplementation"):
        osc.validate_custom_resource(runtime, trainer_crds["TrainingRuntime"])
    job = copy.deepcopy(plans["vr200-rke2-ubuntu-training"]["plans"]["nvls"]["workload"][0])
    job["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplate"] = \
        job["spec"]["template"]["spec"]["resourceClaims"][0].pop("resourceClaimTemplateName")
    with pytest.raises(osc.SchemaError, match="resourceClaimTemplate"):
        osc.kubernetes_validate(yaml.safe_dump(job))
