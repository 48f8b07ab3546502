# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Vendored charts (gpu_tray_bundle_vendor_charts) against chart repositories served on loopback (chartrepo.py):
smoke-app from a real Helm repository over HTTPS (`helm package` + `helm repo index`, the test CA trusted through
SSL_CERT_FILE), stack-dra from a real OCI registry (the Distribution registry, `helm push`).

* the render pulls both into charts/, provenance.yaml records each source and the sha256 of the archive AS
  PUBLISHED, checksums.txt covers every file, and helmfile, Argo CD and Flux all point at the local copies;
* an archive changed after vendoring is found by its sha256 and pulled again; --check pulls nothing;
* a second render with both repositories stopped succeeds with changed=0 and the same bundle digest;
* deploy_stack.yml installs from the vendored bundle with both repositories stopped (test cluster), and refuses a
  bundle whose archive no longer matches its provenance before anything is installed.
"""

import glob
import hashlib
import os
import subprocess

import pytest
import yaml

import chartrepo
from clusterhelpers import helm_binary
from stackhelpers import recap, run_playbook

HERE = os.path.dirname(os.path.abspath(__file__))
VARS = os.path.join(HERE, "files", "stacktest", "vendor.yml")
GITOPS_REPO = "https://git.example.test/gpu/bundles.git"
NAMESPACES = ["stackvendor-a", "stackvendor-b"]


class Served(object):
    def __init__(self, root, helm):
        self.helm = helm
        tls = chartrepo.make_tls(os.path.join(root, "tls"))
        self.env = chartrepo.helm_env(os.path.join(root, "helm-home"), tls["ca"])
        self.repo = chartrepo.HttpsChartRepo(helm, [os.path.join(HERE, "charts", "smoke-app")],
                                             os.path.join(root, "repo"), tls, self.env)
        archive = chartrepo.package(helm, os.path.join(HERE, "charts", "stack-dra"), os.path.join(root, "oci-src"),
                                    self.env)
        self.registry = chartrepo.OciRegistry(helm, [archive], os.path.join(root, "registry"), self.env)
        self.published = dict(self.repo.archives, **self.registry.archives)

    def ansible_env(self):
        return dict((k, self.env[k]) for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME",
                                               "SSL_CERT_FILE"))

    def args(self):
        return ["-e", "@" + VARS, "-e", "stack_test_dir=%s" % HERE, "-e", "gpu_tray_recipe=stackvendor",
                "-e", "vendor_https_repo=%s" % self.repo.url, "-e", "vendor_oci_repo=%s" % self.registry.url,
                "-e", "stack_helm_binary=%s" % self.helm]

    def stop(self):
        self.repo.stop()
        self.registry.stop()


def _skip_or_fail(reason):
    if os.environ.get("KCLUSTER_REQUIRE") == "1":
        pytest.fail("%s (KCLUSTER_REQUIRE=1: failing instead of skipping)" % reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def helm():
    return helm_binary()


@pytest.fixture(scope="module")
def served(helm, tmp_path_factory):
    missing = chartrepo.registry_missing()
    if missing:
        _skip_or_fail("no OCI registry for the vendoring tests: %s" % missing)
    srv = Served(str(tmp_path_factory.mktemp("served")), helm)
    yield srv
    srv.stop()


def _render(served, bundle, *extra):
    return run_playbook("gpu_tray.cluster.render_bundle", *(served.args() + [
        "-e", "gpu_tray_bundle_dir=%s" % bundle, "-e", "gpu_tray_bundle_vendor_charts=true",
        "-e", "gpu_tray_bundle_format=helmfile,argocd,flux", "-e", "gpu_tray_bundle_repo_url=%s" % GITOPS_REPO]
        + list(extra)), **served.ansible_env())


@pytest.fixture(scope="module")
def vendored(served, tmp_path_factory):
    bundle = str(tmp_path_factory.mktemp("vendored") / "bundle")
    rc, out = _render(served, bundle)
    assert rc == 0, out[-6000:]
    assert recap(out)["changed"] > 0
    return bundle, out


def _load(path):
    with open(path) as fh:
        return [d for d in yaml.safe_load_all(fh) if d is not None]


def _sha(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _files(bundle):
    out = set()
    for root, dirs, files in os.walk(bundle):
        if root == bundle:      # hidden entries at the top (a .git directory) are not the bundle's
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files = [f for f in files if not f.startswith(".")]
        out.update(os.path.relpath(os.path.join(root, f), bundle) for f in files)
    return out


def _digest_line(out):
    lines = [line for line in out.splitlines() if "bundle digest" in line]
    assert lines, out[-3000:]
    return lines[-1].split("bundle digest", 1)[1].split()[0]


def test_every_chart_is_pulled_and_its_provenance_is_the_published_archive(served, vendored):
    bundle, _out = vendored
    prov = _load(os.path.join(bundle, "provenance.yaml"))[0]
    assert prov["recipe"] == "stackvendor" and len(prov["recipe_digest"]) == 64
    by_name = dict((e["component"], e) for e in prov["charts"])
    assert sorted(by_name) == ["sv-alpha", "sv-dra"], prov      # the manifest set has no chart
    expect = {"sv-alpha": ("smoke-app", served.repo.url, "smoke-app-0.1.0.tgz"),
              "sv-dra": ("stack-dra", served.registry.url, "stack-dra-0.1.0.tgz")}
    for name, (chart, source, published) in expect.items():
        entry = by_name[name]
        assert (entry["chart"], entry["version"], entry["source"]) == (chart, "0.1.0", source)
        assert entry["archive"] == "charts/%s/%s-0.1.0.tgz" % (name, chart)
        path = os.path.join(bundle, entry["archive"])
        # the archive in the bundle is byte for byte the one the repository / registry publishes
        assert entry["sha256"] == _sha(path) == served.published[published]
    # the air-gap kit gives each chart with that digest, at its source (a site component's own repository, no key)
    kit = _load(os.path.join(bundle, "mirror", "kit.yaml"))[0]
    assert [(c["component"], c["chart"], c["repository"], c["mirror"], c["variable"], c["archive"], c["sha256"])
            for c in kit["charts"]] == [(n, by_name[n]["chart"], by_name[n]["source"], by_name[n]["source"], None,
                                         by_name[n]["archive"], by_name[n]["sha256"]) for n in ("sv-alpha", "sv-dra")]
    # the HTTPS repository was really asked (index, then the archive)
    assert any(p.endswith("index.yaml") for p in served.repo.requests())
    assert any(p.endswith("smoke-app-0.1.0.tgz") for p in served.repo.requests())


def test_checksums_cover_every_file_and_the_digest_is_their_sha256(vendored):
    bundle, out = vendored
    with open(os.path.join(bundle, "checksums.txt")) as fh:
        text = fh.read()
    listed = {}
    for line in text.splitlines():
        digest, path = line.split("  ", 1)
        listed[path] = digest
    assert set(listed) == _files(bundle) - {"checksums.txt"}
    assert all(_sha(os.path.join(bundle, p)) == d for p, d in listed.items())
    assert "provenance.yaml" in listed and "charts/sv-alpha/smoke-app-0.1.0.tgz" in listed
    assert "charts/sv-alpha/smoke-app/Chart.yaml" in listed            # unpacked for Argo CD
    assert _digest_line(out) == hashlib.sha256(text.encode()).hexdigest()
    res = subprocess.run(["sha256sum", "--quiet", "-c", "checksums.txt"], cwd=bundle, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_format_points_at_the_local_copies(served, vendored):
    bundle, _out = vendored
    helmfile = _load(os.path.join(bundle, "helmfile.yaml"))[0]
    assert "repositories" not in helmfile, helmfile                     # nothing left to pull
    charts = dict((r["name"], r["chart"]) for r in helmfile["releases"])
    assert charts["sv-alpha"] == "./charts/sv-alpha/smoke-app-0.1.0.tgz"
    assert charts["sv-dra"] == "./charts/sv-dra/stack-dra-0.1.0.tgz"
    assert charts["sv-config"] == "./components/sv-config"
    for chart in charts.values():
        assert os.path.exists(os.path.join(bundle, chart)), chart
    # the formats' files (the air-gap kit, mirror/, records each chart's source as provenance.yaml does)
    text = "\n".join(open(p).read() for p in glob.glob(os.path.join(bundle, "*", "**", "*.yaml"), recursive=True)
                     if "/charts/" not in p and "/components/" not in p and "/mirror/" not in p)
    assert served.repo.url not in text and served.registry.url.split("//")[1] not in text
    for name, chart in (("sv-alpha", "smoke-app"), ("sv-dra", "stack-dra")):
        app = _load(os.path.join(bundle, "argocd", "apps", name + ".yaml"))[0]
        source = app["spec"]["sources"][0]
        assert (source["repoURL"], source["path"]) == (GITOPS_REPO, "charts/%s/%s" % (name, chart))
        assert _load(os.path.join(bundle, source["path"], "Chart.yaml"))[0]["version"] == "0.1.0"
        release = _load(os.path.join(bundle, "flux", "releases", name + ".yaml"))[0]
        spec = release["spec"]["chart"]["spec"]
        assert spec["sourceRef"]["kind"] == "GitRepository"
        assert spec["chart"] == "./charts/%s/%s-0.1.0.tgz" % (name, chart)
    assert not os.path.exists(os.path.join(bundle, "flux", "sources"))   # no HelmRepository / OCIRepository


def test_a_changed_archive_is_pulled_again_and_check_mode_pulls_nothing(served, vendored, tmp_path):
    bundle, out = vendored
    first = _digest_line(out)
    archive = os.path.join(bundle, "charts", "sv-dra", "stack-dra-0.1.0.tgz")
    with open(archive, "ab") as fh:
        fh.write(b"tampered")
    before = dict((p, _sha(os.path.join(bundle, p))) for p in _files(bundle))
    rc, out = _render(served, bundle, "--check")
    assert rc == 0, out[-6000:]
    assert "would pull sv-dra" in out, out[-4000:]
    assert _sha(archive) != served.published["stack-dra-0.1.0.tgz"]     # --check pulled nothing
    # ... and wrote nothing: a provenance recording the tampered archive would hide it from the next render
    assert dict((p, _sha(os.path.join(bundle, p))) for p in _files(bundle)) == before
    rc, out = _render(served, bundle)
    assert rc == 0, out[-6000:]
    assert recap(out)["changed"] > 0
    assert _sha(archive) == served.published["stack-dra-0.1.0.tgz"]
    assert _digest_line(out) == first


def test_a_second_render_with_the_repositories_stopped_changes_nothing(served, vendored):
    bundle, out = vendored
    before = dict((p, _sha(os.path.join(bundle, p))) for p in _files(bundle))
    served.stop()
    rc, out2 = _render(served, bundle)
    assert rc == 0, out2[-6000:]
    assert recap(out2)["changed"] == 0, out2[-6000:]
    assert dict((p, _sha(os.path.join(bundle, p))) for p in _files(bundle)) == before
    assert _digest_line(out2) == _digest_line(out)


def _helm_releases(kcluster):
    out = subprocess.run([kcluster.helm, "list", "-A", "-a", "-o", "yaml", "--kubeconfig", kcluster.kubeconfig],
                         capture_output=True, text=True, check=True).stdout
    return dict((r["name"], r) for r in (yaml.safe_load(out) or []) if r["name"].startswith("sv-"))


def _deploy(served, kcluster, playbook, *extra):
    return run_playbook("gpu_tray.cluster.%s" % playbook, *(served.args() + [
        "-e", "gpu_tray_kubeconfig=%s" % kcluster.kubeconfig, "-e", "stack_helm_binary=%s" % kcluster.helm,
        "-e", "stack_wait_timeout=120", "-e", "stack_api_retries=0"] + list(extra)), **served.ansible_env())


def _clean(kcluster, k8s_api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException
    for name, ns in (("sv-alpha", "stackvendor-a"), ("sv-dra", "stackvendor-b")):
        subprocess.run([kcluster.helm, "uninstall", name, "-n", ns, "--wait", "--kubeconfig", kcluster.kubeconfig],
                       capture_output=True, check=False)
    core = client.CoreV1Api(k8s_api)
    for ns in NAMESPACES:
        try:
            core.delete_namespace(ns)
        except ApiException as exc:
            assert exc.status == 404, exc


def test_deploy_stack_installs_from_the_vendored_bundle_with_no_network(served, vendored, kcluster, k8s_api,
                                                                        tmp_path):
    from kubernetes import client
    bundle, _out = vendored
    served.stop()
    _clean(kcluster, k8s_api)
    try:
        # without the bundle the same run needs the (stopped) repositories, and fails
        rc, out = _deploy(served, kcluster, "deploy_stack")
        assert rc != 0 and "Component sv-alpha" in out, out[-4000:]
        assert _helm_releases(kcluster).get("sv-alpha", {}).get("status") != "deployed"

        rc, out = _deploy(served, kcluster, "deploy_stack", "-e", "gpu_tray_vendored_bundle=%s" % bundle)
        assert rc == 0, out[-6000:]
        assert "charts from the vendored bundle %s" % bundle in out
        rels = _helm_releases(kcluster)
        assert sorted(rels) == ["sv-alpha", "sv-dra"], rels
        assert rels["sv-alpha"]["chart"] == "smoke-app-0.1.0" and rels["sv-dra"]["chart"] == "stack-dra-0.1.0"
        assert all(r["status"] == "deployed" for r in rels.values()), rels
        cm = client.CoreV1Api(k8s_api).read_namespaced_config_map("sv-config", "stackvendor-a")
        assert cm.data == {"recipe": "stackvendor"}
        # a re-run changes nothing
        rc, out = _deploy(served, kcluster, "deploy_stack", "-e", "gpu_tray_vendored_bundle=%s" % bundle)
        assert rc == 0, out[-6000:]
        for host in ("stack-sv-alpha", "stack-sv-dra", "stack-sv-config"):
            assert recap(out, host)["changed"] == 0, out[-4000:]

        # an archive that is not the one the provenance records is refused before anything is installed
        copy = str(tmp_path / "bundle")
        subprocess.run(["cp", "-a", bundle, copy], check=True)
        with open(os.path.join(copy, "charts", "sv-alpha", "smoke-app-0.1.0.tgz"), "ab") as fh:
            fh.write(b"x")
        subprocess.run([kcluster.helm, "uninstall", "sv-dra", "-n", "stackvendor-b", "--wait",
                        "--kubeconfig", kcluster.kubeconfig], capture_output=True, check=True)
        rc, out = _deploy(served, kcluster, "deploy_stack", "-e", "gpu_tray_vendored_bundle=%s" % copy)
        assert rc != 0, out[-4000:]
        assert "component sv-alpha: charts/sv-alpha/smoke-app-0.1.0.tgz has sha256" in out, out[-4000:]
        assert "sv-dra" not in _helm_releases(kcluster), "a component was installed from a refused bundle"
    finally:
        _clean(kcluster, k8s_api)
