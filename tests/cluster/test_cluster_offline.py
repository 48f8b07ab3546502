# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline layer: rendered manifests against the 1.34 schemas, custom resources against CRD schemas.

No cluster needed; helm comes from the build cache (tests/cluster/build.sh helm, a few seconds).
Each check has a negative case proving it can fail.
"""

import os
import subprocess

import pytest
import yaml

import kcluster as kc
import offline_schema as osc

HERE = os.path.dirname(os.path.abspath(__file__))
CHART = os.path.join(HERE, "charts", "smoke-app")
CRD = os.path.join(HERE, "files", "traycheck-crd.yaml")
DRA = os.path.join(HERE, "files", "dra-claim-template.yaml")


@pytest.fixture(scope="module")
def helm():
    res = subprocess.run([os.path.join(HERE, "build.sh"), "helm"], capture_output=True, text=True, check=False)
    if res.returncode != 0:
        pytest.fail("could not provide helm (tests/cluster/build.sh helm): %s" % res.stderr[-2000:], pytrace=False)
    # HELM_VERSION and GPU_TRAY_CACHE resolved exactly as build.sh does (kcluster reads build.sh's default)
    path = kc.helm_path()
    assert os.access(path, os.X_OK), "build.sh helm succeeded but %s is missing" % path
    return path


@pytest.fixture(scope="module")
def crd():
    with open(CRD) as fh:
        return yaml.safe_load(fh)


def _cr(**spec):
    return {"apiVersion": "smoke.gpu-tray.test/v1alpha1", "kind": "TrayCheck",
            "metadata": {"name": "x", "namespace": "default"}, "spec": spec}


def test_rendered_chart_validates_against_1_34_strict(helm):
    text = osc.helm_template(helm, CHART)
    kinds = sorted(d["kind"] for d in osc.load_yaml_documents(text))
    assert kinds == ["ConfigMap", "Deployment", "Service"]
    out = osc.kubernetes_validate(text)
    assert out.count("passed for resource") == 3
    assert "against version 1.34" in out


def test_wrongly_typed_value_fails_offline(helm):
    text = osc.helm_template(helm, CHART, set_values=["replicaCount=two"])
    with pytest.raises(osc.SchemaError, match=r"spec.replicas: 'two' is not of type 'integer'"):
        osc.kubernetes_validate(text)


def test_strict_catches_an_unknown_field_that_lax_mode_lets_through(helm):
    docs = osc.load_yaml_documents(osc.helm_template(helm, CHART))
    deploy = [d for d in docs if d["kind"] == "Deployment"][0]
    deploy["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocl"] = "TCP"
    text = yaml.safe_dump(deploy)
    assert "passed" in osc.kubernetes_validate(text, strict=False)
    with pytest.raises(osc.SchemaError, match="'protocl' was unexpected"):
        osc.kubernetes_validate(text)


def test_dra_v1_manifest_validates_only_where_the_api_exists():
    with open(DRA) as fh:
        text = fh.read()
    assert "passed" in osc.kubernetes_validate(text, version="1.34.0")
    # a typo inside the GA DRA schema is caught
    with pytest.raises(osc.SchemaError, match="'exactl' was unexpected"):
        osc.kubernetes_validate(text.replace("exactly:", "exactl:"))
    # kubernetes-validate itself only warns (rc 0) when a kind is unknown at that version;
    # the wrapper turns that into a failure: resource.k8s.io/v1 does not exist in 1.31
    with pytest.raises(osc.SchemaError, match="Couldn't find schema for kind ResourceClaimTemplate"):
        osc.kubernetes_validate(text, version="1.31.0")


def test_custom_resource_kinds_must_be_declared_to_skip_kubernetes_validate(crd):
    text = yaml.safe_dump(_cr(node="tray01", enabled=True))
    with pytest.raises(osc.SchemaError, match="Couldn't find schema for kind TrayCheck"):
        osc.kubernetes_validate(text)
    assert "TrayCheck" in osc.kubernetes_validate(text, crd_kinds=("TrayCheck",))


def test_cr_matching_the_crd_schema_passes(crd):
    osc.validate_custom_resource(_cr(node="tray01", enabled=True, minBandwidthGbps=400, rails=["mlx5_0", "mlx5_4"]), crd)


@pytest.mark.parametrize("spec,error", [
    ({"node": "tray01", "enabled": "yes"}, "enabled: 'yes' is not of type 'boolean'"),
    ({"node": "tray01", "enabled": True, "minBandwidthGbps": 9000}, "minBandwidthGbps: 9000 is greater than the maximum of 800"),
    ({"node": "node1", "enabled": True}, "node: 'node1' does not match"),
    ({"node": "tray01"}, "'enabled' is a required property"),
    ({"node": "tray01", "enabled": True, "rails": ["mlx5_2"]}, "rails.0: 'mlx5_2' is not one of"),
    ({"node": "tray01", "enabled": True, "enable": True}, "Additional properties are not allowed ('enable' was unexpected)"),
])
def test_cr_violating_the_crd_schema_fails(crd, spec, error):
    with pytest.raises(osc.SchemaError) as exc:
        osc.validate_custom_resource(_cr(**spec), crd)
    assert error in str(exc.value)


def test_unknown_fields_pass_in_lax_mode_like_server_pruning(crd):
    osc.validate_custom_resource(_cr(node="tray01", enabled=True, enable=True), crd, strict=False)


def test_cr_of_another_kind_is_refused(crd):
    with pytest.raises(osc.SchemaError, match="is not a TrayCheck"):
        osc.validate_custom_resource({"apiVersion": "v1", "kind": "ConfigMap"}, crd)
