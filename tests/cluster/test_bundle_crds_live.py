# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rendered local charts that carry the Gateway API / InferencePool CRDs, held against the real engine: the test
cluster's helm and API server install and uninstall them exactly as rendered, and the CRDs and a custom resource a
user made of them are still there afterwards.

* Flux: ``flux/charts/agentgateway-crds-pre`` - what helm-controller installs and, when the HelmRelease is deleted or
  pruned (a disabled component), uninstalls;
* helmfile: ``helmfile/charts/agentgateway-crds-pre`` - a directory with a Chart.yaml, which helmfile hands to helm as
  it is (chartify converts only a folder without one).

The inference bundle is rendered by render_bundle.yml with the REAL v1.6.1 / v1.5.0 CRDs (a mirror of the upstream
data as stack_repositories.github_raw). The test cluster's API server (Kubernetes 1.20) accepts 4 of those 12 CRDs -
GatewayClass, ReferenceGrant, BackendTLSPolicy, InferencePoolImport; the other 8 carry defaults it refuses - so the
charts are installed with those 4 in their crds/ (the other files removed, nothing else changed); the 1.34/1.35
schemas stay held by tests/upstream. The control: the same 4 files among the chart's templates (files/, the layout
before) are deleted by the uninstall, with the user's GatewayClass - the rule the layout exists for.

A remote chart whose templates create CRDs (agentgateway-crds v1.4.1: its four CRDs in templates/, no keep, no value
to add one) is stood in for by a chart with those 4 CRDs in templates/ (the catalog's chart_crds: templates),
installed with the post-renderer of each format exactly as the bundle renders it - Flux: the HelmRelease's
postRenderers patches run by kustomize (kubectl kustomize, the library helm-controller uses), helmfile: the release's
postRenderer and postRendererArgs - and uninstalled: the CRDs and the user's GatewayClass stay. The control above
(the same CRDs among templates, no post-renderer) goes.
"""

import json
import os
import shutil
import subprocess
import time

import pytest

from stackhelpers import render_bundles
from upstreamdata import MISSING, ROOT, crd_mirror, unavailable

RECIPE = "vr200-rke2-ubuntu-inference"
RELEASE = "agentgateway-crds-pre"
# the CRDs the 1.20 API server of the test cluster accepts
ACCEPTED = {
    "gateway.networking.k8s.io_gatewayclasses.yaml": "gatewayclasses.gateway.networking.k8s.io",
    "gateway.networking.k8s.io_referencegrants.yaml": "referencegrants.gateway.networking.k8s.io",
    "gateway.networking.k8s.io_backendtlspolicies.yaml": "backendtlspolicies.gateway.networking.k8s.io",
    "inference.networking.x-k8s.io_inferencepoolimports.yaml": "inferencepoolimports.inference.networking.x-k8s.io",
}
USER_CLASS = "users-own-class"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    if MISSING:
        unavailable(MISSING)
    mirror = crd_mirror(tmp_path_factory.mktemp("github-raw"), ROOT)
    return render_bundles(tmp_path_factory.mktemp("crd-bundle"), [RECIPE], "-e",
                          "gpu_tray_bundle_format=helmfile,flux",
                          "-e", json.dumps({"stack_repositories": {"github_raw": mirror}}),
                          gpu_tray_stack_overrides={})[RECIPE]


def _chart(bundle, fmt, root, into="crds"):
    """The rendered local chart of ``fmt`` with only the CRDs the test cluster accepts, in ``into`` (crds/ as
    rendered; files/ for the control)."""
    src = os.path.join(bundle, fmt, "charts", RELEASE)
    assert sorted(os.listdir(os.path.join(src, "crds"))) and not os.path.isdir(os.path.join(src, "files"))
    dest = os.path.join(str(root), fmt)
    shutil.copytree(src, dest)
    for name in os.listdir(os.path.join(dest, "crds")):
        if name not in ACCEPTED:
            os.remove(os.path.join(dest, "crds", name))
    if into != "crds":
        shutil.move(os.path.join(dest, "crds"), os.path.join(dest, into))
    return dest


def _helm(kcluster, *args):
    res = subprocess.run([kcluster.helm] + list(args) + ["--kubeconfig", kcluster.kubeconfig],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, "helm %s: %s" % (" ".join(args), res.stderr[-2000:])
    return res.stdout


def _crds(k8s_api):
    from kubernetes import client
    found = client.ApiextensionsV1Api(k8s_api).list_custom_resource_definition().items
    return dict((c.metadata.name, c) for c in found if c.metadata.name in ACCEPTED.values())


def _established(k8s_api):
    deadline = time.time() + 60
    while time.time() < deadline:
        crds = _crds(k8s_api)
        if len(crds) == len(ACCEPTED) and all(
                any(c.type == "Established" and c.status == "True" for c in crd.status.conditions or [])
                for crd in crds.values()):
            return
        time.sleep(1)
    raise AssertionError("the CRDs were not Established: %s" % sorted(_crds(k8s_api)))


def _user_class(k8s_api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    api = client.CustomObjectsApi(k8s_api)
    try:
        return api.get_cluster_custom_object("gateway.networking.k8s.io", "v1", "gatewayclasses", USER_CLASS)
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _clean(kcluster, k8s_api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    for release in ("crds-flux", "crds-helmfile", "crds-templates", "remote-flux", "remote-helmfile"):
        subprocess.run([kcluster.helm, "uninstall", release, "-n", "crd-test", "--kubeconfig", kcluster.kubeconfig],
                       capture_output=True, check=False)
    api = client.ApiextensionsV1Api(k8s_api)
    for name in ACCEPTED.values():
        try:
            api.delete_custom_resource_definition(name)
        except ApiException as exc:
            if exc.status != 404:
                raise
    deadline = time.time() + 60
    while _crds(k8s_api) and time.time() < deadline:
        time.sleep(1)
    assert not _crds(k8s_api)


def _install_make_uninstall(kcluster, k8s_api, chart, release, *install_args):
    from kubernetes import client
    _helm(kcluster, "install", release, chart, "-n", "crd-test", "--create-namespace", "--wait", *install_args)
    _established(k8s_api)
    client.CustomObjectsApi(k8s_api).create_cluster_custom_object(
        "gateway.networking.k8s.io", "v1", "gatewayclasses",
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": USER_CLASS},
         "spec": {"controllerName": "example.com/users-own-controller"}})
    assert _user_class(k8s_api)
    _helm(kcluster, "uninstall", release, "-n", "crd-test", "--wait")
    time.sleep(3)   # a deleted CRD takes its custom resources with it asynchronously


@pytest.mark.parametrize("fmt", ["flux", "helmfile"])
def test_uninstalling_the_rendered_crd_chart_keeps_the_crds_and_the_users_gatewayclass(
        bundle, kcluster, k8s_api, tmp_path, fmt):
    _clean(kcluster, k8s_api)
    try:
        _install_make_uninstall(kcluster, k8s_api, _chart(bundle, fmt, tmp_path), "crds-" + fmt)
        assert sorted(_crds(k8s_api)) == sorted(ACCEPTED.values())
        assert _user_class(k8s_api)["spec"]["controllerName"] == "example.com/users-own-controller"
    finally:
        _clean(kcluster, k8s_api)


def test_the_same_crds_among_the_templates_go_with_the_release_and_the_users_gatewayclass(
        bundle, kcluster, k8s_api, tmp_path):
    """The control: the layout before (the CRDs under files/, emitted by templates/manifests.yaml) - helm uninstall
    deletes them and the API server the user's GatewayClass with them. Proves the test above can fail."""
    _clean(kcluster, k8s_api)
    try:
        chart = _chart(bundle, "flux", tmp_path, into="files")
        _install_make_uninstall(kcluster, k8s_api, chart, "crds-templates", "--disable-openapi-validation")
        deadline = time.time() + 60
        while (_crds(k8s_api) or _user_class(k8s_api)) and time.time() < deadline:
            time.sleep(1)
        assert not _crds(k8s_api) and _user_class(k8s_api) is None
    finally:
        _clean(kcluster, k8s_api)


def _remote_chart(bundle, root):
    """A stand-in for agentgateway-crds: Chart.yaml, values {} and the accepted CRDs in templates/ (real bytes)."""
    dest = os.path.join(str(root), "remote-crds")
    os.makedirs(os.path.join(dest, "templates"))
    with open(os.path.join(dest, "Chart.yaml"), "w") as fh:
        fh.write("apiVersion: v2\nname: remote-crds\nversion: 0.0.2\ntype: application\n")
    with open(os.path.join(dest, "values.yaml"), "w") as fh:
        fh.write("{}\n")
    src = os.path.join(bundle, "flux", "charts", RELEASE, "crds")
    for name in ACCEPTED:
        shutil.copy(os.path.join(src, name), os.path.join(dest, "templates", name))
    return dest


def _flux_post_renderer(bundle, root):
    """An executable doing what helm-controller does with the agentgateway-crds HelmRelease's postRenderers: kustomize
    (kubectl kustomize) over helm's output with exactly those patches."""
    import yaml
    with open(os.path.join(bundle, "flux", "releases", "agentgateway-crds.yaml")) as fh:
        spec = yaml.safe_load(fh)["spec"]
    (renderer,) = spec["postRenderers"]
    kust = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["rendered.yaml"],
            "patches": renderer["kustomize"]["patches"]}
    kdir = os.path.join(str(root), "flux-post-renderer")
    os.makedirs(kdir)
    with open(os.path.join(kdir, "kustomization.yaml"), "w") as fh:
        yaml.safe_dump(kust, fh)
    script = os.path.join(str(root), "flux-post-renderer.sh")
    with open(script, "w") as fh:
        fh.write('#!/bin/sh\nset -eu\ncat > %s/rendered.yaml\nkubectl kustomize %s\n' % (kdir, kdir))
    os.chmod(script, 0o755)
    return [script]


def _helmfile_post_renderer(bundle):
    """helm's arguments for the agentgateway-crds release's postRenderer as helmfile passes them."""
    import yaml
    with open(os.path.join(bundle, "helmfile.yaml")) as fh:
        rel = dict((r["name"], r) for r in yaml.safe_load(fh)["releases"])["agentgateway-crds"]
    return [rel["postRenderer"]] + rel["postRendererArgs"]


@pytest.mark.parametrize("fmt", ["flux", "helmfile"])
def test_a_remote_chart_whose_templates_create_crds_keeps_them_through_its_post_renderer(
        bundle, kcluster, k8s_api, tmp_path, fmt):
    _clean(kcluster, k8s_api)
    try:
        renderer = _flux_post_renderer(bundle, tmp_path) if fmt == "flux" else _helmfile_post_renderer(bundle)
        args = ["--post-renderer", renderer[0]] + ["--post-renderer-args=%s" % a for a in renderer[1:]]
        _install_make_uninstall(kcluster, k8s_api, _remote_chart(bundle, tmp_path), "remote-" + fmt,
                                "--disable-openapi-validation", *args)
        assert sorted(_crds(k8s_api)) == sorted(ACCEPTED.values())
        assert all(c.metadata.annotations["helm.sh/resource-policy"] == "keep" for c in _crds(k8s_api).values())
        assert _user_class(k8s_api)["spec"]["controllerName"] == "example.com/users-own-controller"
    finally:
        _clean(kcluster, k8s_api)
