# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The upstream manifests a recipe fetches (catalog manifest_urls: the Gateway API and Inference Extension CRDs of
agentgateway-crds) held against the REAL files of ../shared/upstream: the bundle's conftest fetches them from a mirror
of those files, so every catalog sha256 is checked against the real bytes by the render itself; here the bundle must
hold exactly the standard-channel Gateway API CRDs of v1.6.1 (TLSRoute included) and the InferencePool CRD of the
Inference Extension v1.5.0 - the versions agentgateway v1.4.1 builds against - and serve what the inference gateway
and the conformance check use."""
import glob
import hashlib
import os

import pytest
import yaml

from upstream import load_all

INFERENCE = ["vr200-rke2-ubuntu-inference", "vr200-rke2-ubuntu-inference-dynamo"]


def _sha(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


@pytest.mark.parametrize("recipe", INFERENCE)
def test_the_inference_bundle_holds_the_real_gateway_api_and_inferencepool_crds(bundles, upstream_root, recipe):
    held = dict((os.path.basename(p), _sha(p))
                for p in glob.glob(os.path.join(bundles[recipe], "components", "agentgateway-crds-pre", "*.yaml")))
    real = dict((os.path.basename(p), _sha(p)) for p in
                glob.glob(os.path.join(upstream_root, "charts", "gateway-api", "crds", "*.yaml"))
                + glob.glob(os.path.join(upstream_root, "charts", "gateway-api-inference-extension", "crds", "*.yaml")))
    assert held == real
    # listed in checksums.txt with the same digests (the bundle digest covers them)
    with open(os.path.join(bundles[recipe], "checksums.txt")) as fh:
        sums = dict(reversed(line.split("  ", 1)) for line in fh.read().splitlines())
    for name, digest in real.items():
        assert sums["components/agentgateway-crds-pre/" + name] == digest


def test_the_crds_are_the_standard_channel_and_serve_what_the_gateway_and_conformance_use(bundles, upstream_root):
    folder = os.path.join(bundles["vr200-rke2-ubuntu-inference"], "components", "agentgateway-crds-pre")
    crds = dict((d["metadata"]["name"], d) for p in glob.glob(os.path.join(folder, "*.yaml")) for d in load_all(p))
    for name, crd in crds.items():
        assert crd["kind"] == "CustomResourceDefinition", name
        if crd["spec"]["group"] == "gateway.networking.k8s.io":
            annotations = crd["metadata"]["annotations"]
            assert annotations["gateway.networking.k8s.io/channel"] == "standard", name
            assert annotations["gateway.networking.k8s.io/bundle-version"] == "v1.6.1", name
    served = dict((name, [v["name"] for v in crd["spec"]["versions"] if v.get("served")]) for name, crd in crds.items())
    # the bundle's Gateway (gateway.networking.k8s.io/v1), TLSRoute - GA in v1.6's standard channel, which serves v1
    # only (AICR v1.0.0's separate tlsroute-crd.yaml served v1alpha2: docs/stack.md) - and every CRD the conformance
    # check's inference-gateway looks for
    assert "v1" in served["gateways.gateway.networking.k8s.io"]
    assert served["tlsroutes.gateway.networking.k8s.io"] == ["v1"]
    assert "v1" in served["inferencepools.inference.networking.k8s.io"]
    from stackhelpers import collection_on_path
    collection_on_path()
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import conformance
    assert set(conformance.GATEWAY_CRDS) <= set(crds)
    gateway = [d for p in glob.glob(os.path.join(bundles["vr200-rke2-ubuntu-inference"], "components",
                                                 "agentgateway-post", "*.yaml")) for d in load_all(p)]
    assert [(g["apiVersion"], g["kind"]) for g in gateway] == [("gateway.networking.k8s.io/v1", "Gateway")]


def test_a_training_bundle_fetches_nothing(bundles):
    for recipe in ("vr200-rke2-ubuntu-training", "gb200-nvke-ubuntu-training"):
        assert not glob.glob(os.path.join(bundles[recipe], "components", "agentgateway-crds-pre"))
        with open(os.path.join(bundles[recipe], "plan.yaml")) as fh:
            assert "agentgateway" not in [c["name"] for c in yaml.safe_load(fh)["components"]]


def test_the_docs_airgap_file_renders_the_inference_recipes_offline_against_a_local_mirror(tmp_path, upstream_root):
    """docs/stack.md's group_vars/all/airgap.yml, byte for byte except its github_raw URL, which becomes a local
    mirror of the real files (no network): both inference recipes render, the CRDs are the real bytes, the keys the file
    leaves out keep the catalog's defaults and the ones it names move."""
    from stackhelpers import REPO, render_bundles
    from upstreamdata import crd_mirror
    with open(os.path.join(REPO, "docs", "stack.md")) as fh:
        text = fh.read()
    start = text.index("```yaml\n# group_vars/all/airgap.yml\n") + len("```yaml\n")
    airgap = text[start:text.index("```", start)]
    assert "https://artifacts.example/github-raw" in airgap
    mirror = crd_mirror(tmp_path / "github-raw", upstream_root)
    os.makedirs(str(tmp_path / "site" / "group_vars" / "all"))
    with open(str(tmp_path / "site" / "group_vars" / "all" / "airgap.yml"), "w") as fh:
        fh.write(airgap.replace("https://artifacts.example/github-raw", mirror))
    bundles = render_bundles(tmp_path / "site", INFERENCE, gpu_tray_stack_overrides={})
    real = sorted(os.path.basename(p)
                  for p in glob.glob(os.path.join(upstream_root, "charts", "gateway-api*", "crds", "*.yaml")))
    for recipe, bundle in bundles.items():
        held = sorted(os.path.basename(p)
                      for p in glob.glob(os.path.join(bundle, "components", "agentgateway-crds-pre", "*.yaml")))
        assert held == real, recipe
        with open(os.path.join(bundle, "helmfile.yaml")) as fh:
            repos = dict((r["name"], r["url"]) for r in yaml.safe_load(fh)["repositories"])
        assert repos["ngc"] == "harbor.example/nvidia" and repos["jetstack"] == "https://charts.jetstack.io", repos
        with open(os.path.join(bundle, "components", "nfd", "values.yaml")) as fh:
            assert yaml.safe_load(fh)["image"]["repository"] == "harbor.example/k8s/nfd/node-feature-discovery"
