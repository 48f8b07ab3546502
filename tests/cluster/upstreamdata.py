# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fetched upstream data, read from ../shared/upstream only (or GPU_TRAY_UPSTREAM): nothing fetched is committed to
the project. The real CRDs the test cluster serves (NodeMaintenance, Skyhook, Kubeflow Trainer) and the offline tests
hold objects against (Argo CD, Flux) are taken from there by name (:func:`upstream_crds`); /work/shared/upstream's
README and each folder's SOURCE say where each file comes from.

Where the data is absent (a user's clone) a test that needs it is skipped with one line; with
GPU_TRAY_UPSTREAM_REQUIRE=1 (CI, .ci/run) it fails instead - as tests/upstream does (its conftest reads ROOT and
MISSING from here).
"""

import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROOT = os.environ.get("GPU_TRAY_UPSTREAM") or os.path.join(os.path.dirname(REPO), "shared", "upstream")
MISSING = None if os.path.isdir(os.path.join(ROOT, "charts")) else (
    "upstream chart data not found at %s (set GPU_TRAY_UPSTREAM)" % ROOT)

# the CRD sets the tests take, as paths under ROOT
CRDS = {
    # the maintenance operator's (network-operator 26.4's chart carries the same file)
    "maintenance": ["charts/maintenance-operator/crds/maintenance.nvidia.com_nodemaintenances.yaml"],
    # the newest public Skyhook CRD (charts/nodewright/SOURCE; NodeWright's is not public yet)
    "skyhook": ["charts/nodewright/crds/skyhook.nvidia.com_skyhooks.yaml"],
    # the catalog's pin, kubeflow-trainer 2.2.0 (ClusterTrainingRuntime is not used)
    "kubeflow-trainer": ["kubeflow-trainer/v2.2.0/trainer.kubeflow.org_trainjobs.yaml",
                         "kubeflow-trainer/v2.2.0/trainer.kubeflow.org_trainingruntimes.yaml"],
    # the kinds render_bundle.yml writes, at the newest releases of the data: Argo CD 3.5.1, the Flux 2.9 line
    "gitops": ["gitops/argo-cd-v3.5.1/application-crd.yaml",
               "gitops/flux-2.9/helm.toolkit.fluxcd.io_helmreleases.yaml",
               "gitops/flux-2.9/source.toolkit.fluxcd.io_helmrepositories.yaml",
               "gitops/flux-2.9/source.toolkit.fluxcd.io_ocirepositories.yaml"],
}


def unavailable(why):
    """Skip the test in one line, or fail it with GPU_TRAY_UPSTREAM_REQUIRE=1 (CI)."""
    if os.environ.get("GPU_TRAY_UPSTREAM_REQUIRE") == "1":
        pytest.fail("%s (GPU_TRAY_UPSTREAM_REQUIRE=1: failing instead of skipping)" % why, pytrace=False)
    pytest.skip(why)


def upstream_crds(name):
    """The CRD files of set ``name`` (:data:`CRDS`), from the upstream data."""
    if MISSING:
        unavailable(MISSING)
    paths = [os.path.join(ROOT, rel) for rel in CRDS[name]]
    absent = [path for path in paths if not os.path.isfile(path)]
    if absent:
        unavailable("upstream CRDs %s not found in %s: %s" % (name, ROOT, ", ".join(absent)))
    return paths


def upstream_crd(name, which=""):
    """The one CRD file of set ``name`` whose file name contains ``which``."""
    found = [path for path in upstream_crds(name) if which in os.path.basename(path)]
    assert len(found) == 1, "set %s has %d CRD files matching %r" % (name, len(found), which)
    return found[0]


def crd_mirror(root, upstream):
    """A mirror of the upstream manifests agentgateway-crds fetches, laid out as stack_repositories.github_raw's
    paths (kubernetes-sigs/<repo>/<tag>/...), its files linked to the REAL files of the data: the render fetches
    them from here and checks each against the catalog's sha256 - so the pins are proven against the real bytes."""
    layout = {
        "kubernetes-sigs/gateway-api/v1.6.1/config/crd/standard": os.path.join(upstream, "charts", "gateway-api", "crds"),
        "kubernetes-sigs/gateway-api-inference-extension/v1.5.0/config/crd/bases":
            os.path.join(upstream, "charts", "gateway-api-inference-extension", "crds"),
    }
    for rel, src in layout.items():
        os.makedirs(os.path.join(str(root), rel))
        for name in os.listdir(src):
            os.symlink(os.path.join(src, name), os.path.join(str(root), rel, name))
    return str(root)
