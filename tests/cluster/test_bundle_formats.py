# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every bundle format of the five recipes (playbooks/render_bundle.yml with helmfile, argocd and flux at once, the
bundle in a sub-directory of its Git repository), no cluster:

* every Argo CD Application and every Flux HelmRelease / HelmRepository / OCIRepository validates strictly against
  the REAL CRDs (../shared/upstream gitops/, upstreamdata.py: Argo CD v3.5.1, helm-controller v1.6.3, source-controller v1.9.1),
  and the CEL rules of those CRDs the objects touch hold;
* the sync waves order the Applications exactly as the plan's tiers, pre -> chart -> post inside a component;
* the HelmReleases' dependsOn, contracted to components, IS the plan's dependency graph;
* every release is in every format once; chart sources, versions and values are the plan's and the bundle's;
* the readiness gates run as Argo CD and Flux run them - the Lua health checks in Lua 5.1 (lupa; Argo CD's
  gopher-lua is 5.1), the Flux health expressions in CEL (cel-python) - on objects that are and are not ready;
* the Flux wrapper charts render (helm template) exactly the manifests of components/;
* no removal deletes a CRD: every release of every format carries its CRDs in a chart's crds/ or marked
  helm.sh/resource-policy: keep, and the README says so per format;
* a second render changes nothing.
"""

import glob
import json
import os
import re

import pytest
import yaml

import offline_schema as osc
from clusterhelpers import helm_binary
from stackhelpers import FORMAT_ARGS, GIT, RECIPES, SUBDIR, recap, run_playbook
from upstreamdata import upstream_crds

HERE = os.path.dirname(os.path.abspath(__file__))
PHASE = {"pre": 0, "primary": 1, "post": 2}


@pytest.fixture(scope="module")
def bundles(stack_bundles):
    return stack_bundles


@pytest.fixture(scope="module")
def crds():
    out = {}
    for path in upstream_crds("gitops"):
        crd = _load(path)[0]
        out[(crd["spec"]["group"], crd["spec"]["names"]["kind"])] = crd
    assert len(out) == 4, sorted(out)
    return out


def _load(path):
    with open(path) as fh:
        return [d for d in yaml.safe_load_all(fh) if d is not None]


def _plan(bundle):
    return _load(os.path.join(bundle, "plan.yaml"))[0]


def _apps(bundle):
    return dict((os.path.basename(p)[:-5], _load(p)[0]) for p in glob.glob(os.path.join(bundle, "argocd", "apps", "*.yaml")))


def _flux(bundle):
    kust = _load(os.path.join(bundle, "flux", "kustomization.yaml"))[0]
    return [_load(os.path.join(bundle, "flux", r))[0] for r in kust["resources"]]


def _releases(bundle):
    return dict((o["metadata"]["name"], o) for o in _flux(bundle) if o["kind"] == "HelmRelease")


def _component_releases(bundle):
    """{component: [(release, phase)]} from the helmfile (the format that existed first)."""
    out = {}
    for rel in _load(os.path.join(bundle, "helmfile.yaml"))[0]["releases"]:
        comp = rel["labels"]["component"]
        phase = "pre" if rel["name"] == comp + "-pre" else "post" if rel["name"] == comp + "-post" else "primary"
        out.setdefault(comp, []).append((rel["name"], phase))
    return out


def _validate(obj, crds):
    group, version = obj["apiVersion"].rsplit("/", 1)
    crd = crds[(group, obj["kind"])]
    served = [v["name"] for v in crd["spec"]["versions"] if v.get("served")]
    assert version in served, "%s %s: %s not served (%s)" % (obj["kind"], obj["metadata"]["name"], version, served)
    osc.validate_custom_resource(obj, crd)


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_application_validates_strictly_against_the_real_argo_cd_crd(bundles, crds, recipe):
    apps = _apps(bundles[recipe])
    parent = _load(os.path.join(bundles[recipe], "argocd", "app-of-apps.yaml"))[0]
    for app in list(apps.values()) + [parent]:
        _validate(app, crds)
        spec = app["spec"]
        assert ("source" in spec) != ("sources" in spec), app["metadata"]["name"]
    assert parent["spec"]["source"] == {"repoURL": GIT, "targetRevision": "HEAD", "path": SUBDIR + "/argocd/apps"}
    # the argocd-cm patch is a core ConfigMap (Kubernetes 1.34 schema, strict)
    osc.kubernetes_validate(open(os.path.join(bundles[recipe], "argocd", "argocd-cm-patch.yaml")).read())


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_flux_object_validates_strictly_against_the_real_flux_crds(bundles, crds, recipe):
    objects = _flux(bundles[recipe])
    assert set(o["kind"] for o in objects) == {"HelmRelease", "HelmRepository", "OCIRepository"}
    for obj in objects:
        _validate(obj, crds)
        assert obj["metadata"]["namespace"] == "flux-system"
        if obj["kind"] == "HelmRelease":
            spec = obj["spec"]
            # the HelmRelease CRD's CEL rule (x-kubernetes-validations; not evaluated by the schema check)
            assert ("chart" in spec) != ("chartRef" in spec), obj["metadata"]["name"]
            assert "strategy" not in spec["install"] and "strategy" not in spec["upgrade"]
    # flux/kustomization.yaml lists every object file and nothing else (Flux applies exactly that list)
    listed = set(_load(os.path.join(bundles[recipe], "flux", "kustomization.yaml"))[0]["resources"])
    on_disk = set(os.path.relpath(p, os.path.join(bundles[recipe], "flux"))
                  for d in ("sources", "releases") for p in glob.glob(os.path.join(bundles[recipe], "flux", d, "*.yaml")))
    assert listed == on_disk


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_release_is_in_every_format_once(bundles, recipe):
    helmfile = set(r["name"] for r in _load(os.path.join(bundles[recipe], "helmfile.yaml"))[0]["releases"])
    assert set(_apps(bundles[recipe])) == helmfile == set(_releases(bundles[recipe]))
    assert set(_component_releases(bundles[recipe])) == set(c["name"] for c in _plan(bundles[recipe])["components"])


@pytest.mark.parametrize("recipe", RECIPES)
def test_sync_waves_order_the_applications_as_the_plan_tiers(bundles, recipe):
    plan = _plan(bundles[recipe])
    tier = dict((c["name"], c["tier"]) for c in plan["components"])
    apps = _apps(bundles[recipe])
    waves = {}
    for comp, rels in _component_releases(bundles[recipe]).items():
        for name, phase in rels:
            app = apps[name]
            wave = int(app["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"])
            assert wave == tier[comp] * 4 + PHASE[phase], name
            assert app["metadata"]["labels"]["gpu-tray.cluster/component"] == comp
            waves.setdefault(comp, []).append(wave)
        assert waves[comp] == sorted(waves[comp]) and len(set(waves[comp])) == len(waves[comp]), comp
    for comp in plan["components"]:
        for dep in comp["depends_on"]:
            # every Application of a dependency syncs (and is healthy) in an earlier wave
            assert max(waves[dep]) < min(waves[comp["name"]]), (comp["name"], dep)
    # the order Argo CD syncs in, components collapsed, is the plan's tier order
    order = sorted(tier, key=lambda c: min(waves[c]))
    assert [tier[c] for c in order] == sorted(tier[c] for c in order)


@pytest.mark.parametrize("recipe", RECIPES)
def test_flux_depends_on_is_exactly_the_plans_dependency_graph(bundles, recipe):
    plan = _plan(bundles[recipe])
    rels = _releases(bundles[recipe])
    owner = dict((n, r["metadata"]["labels"]["gpu-tray.cluster/component"]) for n, r in rels.items())
    graph = dict((c, set()) for c in owner.values())
    for name, rel in rels.items():
        for dep in rel["spec"].get("dependsOn", []):
            assert set(dep) == {"name"} and dep["name"] in rels, (name, dep)
            if owner[dep["name"]] != owner[name]:
                graph[owner[name]].add(owner[dep["name"]])
    assert graph == dict((c["name"], set(c["depends_on"])) for c in plan["components"])
    # inside a component: pre -> chart -> post, each waiting for the one before
    for comp, parts in _component_releases(bundles[recipe]).items():
        for (before, _p), (after, _q) in zip(parts, parts[1:]):
            assert rels[after]["spec"]["dependsOn"] == [{"name": before}], after
        first = rels[parts[0][0]]["spec"].get("dependsOn", [])
        assert all(owner[d["name"]] != comp for d in first)


@pytest.mark.parametrize("recipe", RECIPES)
def test_sources_versions_and_values_are_the_plans(bundles, recipe):
    bundle = bundles[recipe]
    comps = dict((c["name"], c) for c in _plan(bundle)["components"])
    apps, rels = _apps(bundle), _releases(bundle)
    flux = dict(((o["kind"], o["metadata"]["name"]), o) for o in _flux(bundle))
    for name, comp in comps.items():
        if comp["kind"] != "helm":
            src = apps[name]["spec"]["source"]
            assert src["path"] == "%s/components/%s" % (SUBDIR, name) and os.path.isdir(os.path.join(bundle, src["path"][len(SUBDIR) + 1:]))
            continue
        chart, values_ref = apps[name]["spec"]["sources"]
        assert values_ref == {"repoURL": GIT, "targetRevision": "HEAD", "ref": "values"}
        assert chart["helm"]["valueFiles"] == ["$values/%s/components/%s/values.yaml" % (SUBDIR, name)]
        assert chart["targetRevision"] == comp["version"] and chart["helm"]["releaseName"] == name
        values = _load(os.path.join(bundle, "components", name, "values.yaml"))[0]
        spec = rels[name]["spec"]
        assert spec.get("values", {}) == values
        assert (spec["targetNamespace"], spec["releaseName"]) == (comp["namespace"], name)
        if comp["repository"].startswith("oci://"):
            assert (chart["repoURL"], chart["path"]) == ("%s/%s" % (comp["repository"], comp["chart"]), ".")
            oci = flux[("OCIRepository", spec["chartRef"]["name"])]["spec"]
            assert (oci["url"], oci["ref"]) == ("%s/%s" % (comp["repository"], comp["chart"]), {"tag": comp["version"]})
        else:
            assert (chart["repoURL"], chart["chart"]) == (comp["repository"], comp["chart"])
            ref = spec["chart"]["spec"]
            assert (ref["chart"], ref["version"]) == (comp["chart"], comp["version"])
            assert flux[("HelmRepository", ref["sourceRef"]["name"])]["spec"]["url"] == comp["repository"]
    for name, rel in rels.items():
        if "chartRef" not in rel["spec"] and rel["spec"]["chart"]["spec"]["sourceRef"]["kind"] == "GitRepository":
            path = rel["spec"]["chart"]["spec"]["chart"]
            assert path == "./%s/flux/charts/%s" % (SUBDIR, name)
            assert os.path.isfile(os.path.join(bundle, "flux", "charts", name, "Chart.yaml"))


def _lua():
    lupa = pytest.importorskip("lupa")
    from lupa import lua51
    return lupa, lua51.LuaRuntime(unpack_returned_tuples=True)


def _lua_health(script, obj):
    lupa, lua = _lua()
    fn = lua.eval("function(obj) %s end" % script)
    table = lua.table_from(obj, recursive=True)
    result = fn(table)
    return result["status"], result["message"]


def _cel(expr, obj):
    celpy = pytest.importorskip("celpy")
    env = celpy.Environment()
    try:
        return bool(env.program(env.compile(expr)).evaluate(dict((k, celpy.json_to_cel(v)) for k, v in obj.items())))
    except celpy.CELEvalError:
        return False    # Flux: an expression that does not evaluate to true leaves the object not current


def test_argo_cd_health_checks_gate_on_the_operators_status(bundles):
    data = _load(os.path.join(bundles["gb200-nvke-ubuntu-training"], "argocd", "argocd-cm-patch.yaml"))[0]["data"]
    cp = data["resource.customizations.health.nvidia.com_ClusterPolicy"]
    ncp = data["resource.customizations.health.mellanox.com_NicClusterPolicy"]
    named = {"metadata": {"name": "cluster-policy"}}
    assert _lua_health(cp, dict(named, status={"state": "ready"}))[0] == "Healthy"
    assert _lua_health(cp, dict(named, status={"state": "notReady"})) == ("Progressing", "waiting for status.state == ready")
    assert _lua_health(cp, named)[0] == "Progressing"                      # no status yet
    assert _lua_health(cp, {"metadata": {"name": "another"}, "status": {"state": "notReady"}})[0] == "Healthy"
    nic = {"metadata": {"name": "nic-cluster-policy"}}
    assert _lua_health(ncp, dict(nic, status={"state": "ready"}))[0] == "Healthy"
    assert _lua_health(ncp, dict(nic, status={"state": "notReady"}))[0] == "Progressing"
    app = data["resource.customizations.health.argoproj.io_Application"]
    base = {"metadata": {"name": "x"}}
    assert _lua_health(app, dict(base, status={"health": {"status": "Healthy"}}))[0] == "Healthy"
    assert _lua_health(app, dict(base, status={"health": {"status": "Degraded", "message": "crash"}})) == ("Degraded", "crash")
    assert _lua_health(app, base)[0] == "Progressing"
    nowait = {"metadata": {"name": "kai-scheduler", "annotations": {"gpu-tray.cluster/wait": "false"}}}
    assert _lua_health(app, dict(nowait, status={"health": {"status": "Progressing"}, "sync": {"status": "Synced"}}))[0] == "Healthy"
    assert _lua_health(app, dict(nowait, status={"health": {"status": "Progressing"}, "sync": {"status": "OutOfSync"}}))[0] == "Progressing"
    assert _lua_health(app, dict(nowait, status={"health": {"status": "Degraded"}, "sync": {"status": "Synced"}}))[0] == "Degraded"
    # the async component is the one annotated; VR200 has no NicClusterPolicy gate
    apps = _apps(bundles["gb200-nvke-ubuntu-training"])
    assert [n for n, a in apps.items() if a["metadata"]["annotations"].get("gpu-tray.cluster/wait") == "false"] == ["kai-scheduler"]
    vr = _load(os.path.join(bundles["vr200-rke2-ubuntu-training"], "argocd", "argocd-cm-patch.yaml"))[0]["data"]
    assert sorted(vr) == ["resource.customizations.health.argoproj.io_Application",
                          "resource.customizations.health.nvidia.com_ClusterPolicy"]


def test_flux_health_expressions_gate_on_the_operators_status(bundles):
    rels = _releases(bundles["gb200-nvke-ubuntu-training"])
    gated = dict((n, r["spec"]["healthCheckExprs"]) for n, r in rels.items() if r["spec"].get("healthCheckExprs"))
    # each gate is on the release that creates the object: the chart (ClusterPolicy), the post manifests (NicClusterPolicy)
    assert sorted(gated) == ["gpu-operator", "network-operator-post"]
    (cp,), (ncp,) = gated["gpu-operator"], gated["network-operator-post"]
    assert (cp["apiVersion"], cp["kind"], ncp["kind"]) == ("nvidia.com/v1", "ClusterPolicy", "NicClusterPolicy")
    named = {"metadata": {"name": "cluster-policy"}}
    assert _cel(cp["current"], dict(named, status={"state": "ready"}))
    assert not _cel(cp["current"], dict(named, status={"state": "notReady"}))
    assert not _cel(cp["current"], named)
    assert _cel(cp["current"], {"metadata": {"name": "another"}, "status": {"state": "notReady"}})
    assert _cel(ncp["current"], {"metadata": {"name": "nic-cluster-policy"}, "status": {"state": "ready"}})
    assert not _cel(ncp["current"], {"metadata": {"name": "nic-cluster-policy"}, "status": {"state": "ignore"}})
    kai = rels["kai-scheduler"]["spec"]
    assert kai["install"]["disableWait"] is True and kai["upgrade"]["disableWait"] is True
    assert not any(r["spec"]["install"].get("disableWait") for n, r in rels.items() if n != "kai-scheduler")


def test_the_two_stage_cases_are_covered_in_each_format(bundles):
    bundle = bundles["gb200-nvke-ubuntu-training"]
    apps = _apps(bundle)
    options = apps["sriov-ib-networks"]["spec"]["syncPolicy"]["syncOptions"]
    assert "SkipDryRunOnMissingResource=true" in options and apps["sriov-ib-networks"]["spec"]["syncPolicy"]["retry"]["limit"] > 0
    assert "SkipDryRunOnMissingResource=true" not in apps["gpu-operator"]["spec"]["syncPolicy"]["syncOptions"]
    readme = open(os.path.join(bundle, "README.md")).read()
    for text in ("helmfile -l 'name!=sriov-ib-networks' apply",
                 "kubectl wait --for=create crd/ippools.nv-ipam.nvidia.com --timeout=10m",
                 "flux reconcile helmrelease sriov-ib-networks -n flux-system --reset",
                 "kubectl -n argocd patch configmap argocd-cm --type merge --patch-file argocd/argocd-cm-patch.yaml",
                 "kubectl apply -f argocd/app-of-apps.yaml",
                 "--path=./%s/flux" % SUBDIR):
        assert text in readme, text
    assert "sriov-ib-networks" not in open(os.path.join(bundles["vr200-rke2-ubuntu-training"], "README.md")).read()


@pytest.fixture(scope="module")
def helm():
    return helm_binary()


@pytest.mark.parametrize("recipe", ["gb200-nvke-ubuntu-training", "vr200-rke2-ubuntu-inference"])
def test_the_flux_wrapper_charts_render_the_manifests_unchanged(bundles, helm, recipe):
    bundle = bundles[recipe]
    charts = sorted(glob.glob(os.path.join(bundle, "flux", "charts", "*")))
    assert charts
    for chart in charts:
        name = os.path.basename(chart)
        rendered = osc.load_yaml_documents(osc.helm_template(helm, chart, release=name, namespace="ns"))
        # crds/ is installed as it is (helm template --include-crds shows it; the templates never hold a CRD)
        assert not [d for d in rendered if d["kind"] == "CustomResourceDefinition"], name
        for path in sorted(glob.glob(os.path.join(chart, "crds", "*.yaml"))):
            rendered.extend(_load(path))
        expected = []
        for path in sorted(glob.glob(os.path.join(bundle, "components", name, "*.yaml"))):
            expected.extend(_load(path))
        # Helm applies a chart's objects in its own kind order (CRDs, ServiceAccounts ... before workloads)
        key = lambda doc: json.dumps(doc, sort_keys=True)  # noqa: E731
        assert sorted(rendered, key=key) == sorted(expected, key=key) and expected, name


def test_a_field_the_real_crds_do_not_name_fails(bundles, crds):
    bundle = bundles["vr200-rke2-ubuntu-training"]
    app = _apps(bundle)["gpu-operator"]
    app["spec"]["syncPolicy"]["automated"]["selfheal"] = True
    with pytest.raises(osc.SchemaError, match="selfheal"):
        _validate(app, crds)
    rel = _releases(bundle)["gpu-operator"]
    rel["spec"]["dependsOn"] = [{"name": "x", "namepsace": "y"}]
    with pytest.raises(osc.SchemaError, match="namepsace"):
        _validate(rel, crds)
    rel = _releases(bundle)["gpu-operator"]
    rel["spec"]["install"]["crds"] = "Always"
    with pytest.raises(osc.SchemaError, match="Always"):
        _validate(rel, crds)


def test_a_second_render_changes_nothing(bundles):
    recipe = "gb200-nvke-ubuntu-training"
    inventory = os.path.join(os.path.dirname(bundles[recipe]), "inventory-%s.yml" % recipe)
    rc, out = run_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_bundle_dir=%s" % bundles[recipe],
                           *FORMAT_ARGS, inventory=inventory)
    assert rc == 0, out[-4000:]
    assert recap(out)["changed"] == 0, out[-4000:]


def test_argocd_without_a_repository_is_refused_naming_the_variable(tmp_path):
    rc, out = run_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_recipe=vr200-rke2-ubuntu-training",
                           "-e", "gpu_tray_bundle_dir=%s" % tmp_path, "-e", "gpu_tray_bundle_format=argocd")
    assert rc != 0 and "set gpu_tray_bundle_repo_url" in out, out[-3000:]
    assert not os.path.exists(os.path.join(str(tmp_path), "plan.yaml"))
    rc, out = run_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_recipe=vr200-rke2-ubuntu-training",
                           "-e", "gpu_tray_bundle_dir=%s" % tmp_path, "-e", "gpu_tray_bundle_format=argo")
    assert rc != 0 and "gpu_tray_bundle_format" in out and "argo" in out, out[-3000:]
    assert "stack_bundle_format" not in out and "argument_spec" not in out, out[-3000:]


# Charts we install whose CRDs are templates kept by their values (helm deletes template objects on uninstall unless
# they carry helm.sh/resource-policy: keep), and the values that mark them so.
TEMPLATED_CRDS = {
    "cert-manager": lambda v: v["crds"]["enabled"] is True and v["crds"]["keep"] is True,
    "prometheus-operator-crds": lambda v: v["crds"]["annotations"]["helm.sh/resource-policy"] == "keep",
}
# the value of each chart whose pre-upgrade hook applies its crds/ (chart_crds crds_dir_upgrade_hook): the bundle must
# not turn it off (default true in the upstream data, tests/upstream)
UPGRADE_HOOKS = {"gpu-operator": ("operator", "upgradeCRD"), "network-operator": ("upgradeCRDs",)}


def _catalog_chart_crds():
    """{component: chart_crds} as the catalog declares it, read here on its own (not through the plan)."""
    with open(os.path.join(HERE, "..", "..", "plugins", "plugin_utils", "stack_data", "catalog.yml")) as fh:
        comps = yaml.safe_load(fh)["components"]
    return dict((n, c.get("chart_crds")) for n, c in comps.items() if c["kind"] == "helm")


def _kustomize(tmp_path, rendered, patches=None, transformers=None):
    """kubectl kustomize (kustomize v5, the library Flux's helm-controller runs postRenderers with) over ``rendered``."""
    import subprocess
    work = tmp_path / ("k%d" % len(list(tmp_path.iterdir())))
    work.mkdir()
    (work / "rendered.yaml").write_text(rendered)
    kust = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["rendered.yaml"]}
    if patches:
        kust["patches"] = patches
    (work / "kustomization.yaml").write_text(yaml.safe_dump(kust))
    res = subprocess.run(["kubectl", "kustomize", str(work)], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    return [d for d in yaml.safe_load_all(res.stdout) if d]


def _crd_docs(paths):
    return [d for p in paths for d in _load(p) if d.get("kind") == "CustomResourceDefinition"]


def _local_chart_keeps_its_crds(bundle, chart, release):
    """A local chart as rendered: no CRD among what its templates emit (files/), its CRDs in crds/ byte-equal to the
    release's folder in components/ (the pinned upstream bytes, listed in checksums.txt)."""
    assert os.path.isfile(os.path.join(chart, "Chart.yaml")), chart
    assert not _crd_docs(glob.glob(os.path.join(chart, "files", "*.yaml"))), chart
    held = sorted(glob.glob(os.path.join(chart, "crds", "*.yaml")))
    source = os.path.join(bundle, "components", release)
    assert len(_crd_docs(held)) == len(_crd_docs(glob.glob(os.path.join(source, "*.yaml")))), chart
    for path in held:
        with open(path, "rb") as fh, open(os.path.join(source, os.path.basename(path)), "rb") as orig:
            assert fh.read() == orig.read(), path
    return bool(held)


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_removal_or_disabled_component_deletes_a_crd(bundles, recipe):
    """helm uninstall - helmfile destroy, a release left out of helmfile.yaml, a HelmRelease deleted or pruned by the
    Kustomization when a component is disabled - keeps a chart's crds/ and what carries helm.sh/resource-policy: keep,
    nothing else. Every release of both formats is held to that, so whichever one is removed, no CRD goes."""
    bundle = bundles[recipe]
    values = dict((c, _load(p)[0]) for c, p in ((os.path.basename(os.path.dirname(p)), p) for p in
                                                glob.glob(os.path.join(bundle, "components", "*", "values.yaml"))))
    declared = _catalog_chart_crds()
    readme = open(os.path.join(bundle, "README.md")).read()
    removal = readme.split("## Apply with helmfile", 1)[1].split("## Apply with Argo CD", 1)[0]
    flux = readme.split("## Apply with Flux", 1)[1]
    with_crds = []
    for rel in _load(os.path.join(bundle, "helmfile.yaml"))[0]["releases"]:
        chart = rel["chart"]
        if chart.startswith("./components/"):
            # a plain folder of manifests: helmfile's chartify makes it a chart's templates/, deleted on uninstall
            assert not _crd_docs(glob.glob(os.path.join(bundle, chart[2:], "*.yaml"))), rel["name"]
        elif chart.startswith("./helmfile/charts/"):
            assert chart == "./helmfile/charts/" + rel["name"]
            if _local_chart_keeps_its_crds(bundle, os.path.join(bundle, chart[2:]), rel["name"]):
                with_crds.append(rel["name"])
        else:
            _remote_release_keeps_its_crds(declared, rel["name"], values.get(rel["name"]) or {},
                                           "postRenderer" in rel and rel["postRendererArgs"][0] == "-c", removal)
            if declared[rel["name"]] == "crds_dir":
                # helm never upgrades crds/: the README's command applies them at the release's pin
                chart_name = rel["chart"].split("/", 1)[1]
                assert re.search(r"\nhelm show crds \S*%s( --repo \S+)? --version %s \| kubectl apply --server-side "
                                 r"--force-conflicts -f -\n" % (re.escape(chart_name), re.escape(rel["version"])),
                                 removal), rel["name"]
        if declared.get(rel["name"]) != "templates":
            assert "postRenderer" not in rel, rel["name"]
    for name, rel in _releases(bundle).items():
        spec = rel["spec"]
        chart = (spec.get("chart") or {}).get("spec", {}).get("chart", "")
        if chart.startswith("./%s/flux/charts/" % SUBDIR):
            kept = _local_chart_keeps_its_crds(bundle, os.path.join(bundle, "flux", "charts", name), name)
            assert kept == (name in with_crds), name
            if kept:
                # a new pin replaces the CRDs (helm alone installs crds/ once and never upgrades it)
                assert (spec["install"]["crds"], spec["upgrade"]["crds"]) == ("CreateReplace", "CreateReplace"), name
            else:
                assert "crds" not in spec["install"] and "crds" not in spec["upgrade"], name
        elif name in declared:
            _remote_release_keeps_its_crds(declared, name, spec.get("values") or {}, "postRenderers" in spec, flux)
            replaced = (spec["install"].get("crds"), spec["upgrade"].get("crds")) == ("CreateReplace", "CreateReplace")
            assert replaced == (declared[name] == "crds_dir"), name
            if declared[name] != "templates":
                assert "postRenderers" not in spec, name
    assert ("agentgateway-crds-pre" in with_crds) == ("inference" in recipe)
    assert "`helmfile destroy`, or `helmfile apply` after a release left `helmfile.yaml`" in removal
    assert "helm never deletes what a chart has in `crds/` nor an object marked `helm.sh/resource-policy: keep`" in removal
    for name in with_crds:
        assert "kubectl apply --server-side --force-conflicts -f helmfile/charts/%s/crds/" % name in removal
    assert "pruned by the Kustomization (`--prune=true`)" in flux and "so the CRDs stay" in flux
    argocd = readme.split("## Apply with Argo CD", 1)[1].split("## Apply with Flux", 1)[0]
    assert "Argo CD never deletes a CustomResourceDefinition in a cascading deletion" in argocd
    for comp in ("cert-manager", "prometheus-operator-crds"):
        assert "* `%s`: its chart marks its CRDs `helm.sh/resource-policy: keep`" % comp in removal
    # every Application is deleted with its resources (the finalizer): safe for CRDs only because Argo CD's
    # cascading deletion skips them - nothing in the bundle relies on anything else
    for app in _apps(bundle).values():
        assert app["metadata"]["finalizers"] == ["resources-finalizer.argocd.argoproj.io"]


def _remote_release_keeps_its_crds(declared, name, values, keep_post_renderer, readme):
    """A pinned chart's release in one format, by where the catalog says its CRDs are: crds/ (kept by helm; the
    README's upgrade command, or the chart's own hook left on), templates kept by values, templates marked by the
    bundle's post-renderer (which must be there), or none."""
    kind = declared[name]
    assert kind in ("none", "crds_dir", "crds_dir_upgrade_hook", "templates_kept_by_values", "templates"), name
    if kind == "templates":
        assert keep_post_renderer, "%s: its chart's template CRDs are not marked keep" % name
        assert "* `%s`: the CRDs its chart creates from templates are marked `helm.sh/resource-policy: keep`" % name \
            in readme, name
    elif kind == "templates_kept_by_values":
        assert TEMPLATED_CRDS[name](values), name
    elif kind == "crds_dir_upgrade_hook":
        node = values
        for key in UPGRADE_HOOKS[name][:-1]:
            node = node.get(key) or {}
        assert node.get(UPGRADE_HOOKS[name][-1], True) is True, name
    elif kind == "crds_dir":
        assert "* `%s`: its chart has its CRDs in `crds/`" % name in readme, name


def test_every_pinned_chart_says_where_its_crds_are():
    """Every helm component of the catalog declares chart_crds: a chart added without deciding how its CRDs outlive a
    removal is refused here (the planner would treat it as templates)."""
    declared = _catalog_chart_crds()
    assert declared and all(declared.values()), sorted(n for n, v in declared.items() if not v)


@pytest.mark.parametrize("recipe", ["vr200-rke2-ubuntu-inference", "gb200-nvke-ubuntu-training"])
def test_the_keep_post_renderers_mark_every_crd_and_nothing_else(bundles, tmp_path, recipe):
    """The patch each format carries, run as that format runs it: Flux's postRenderers through kustomize v5 (kubectl
    kustomize: the library helm-controller uses), helmfile's postRenderer through sh with kubectl on the PATH - on a
    rendering with a CRD that has annotations, one that has none, and a ConfigMap whose data must not change."""
    import subprocess
    rendered = "\n".join([
        "---", "# Source: x/templates/crd-a.yaml", "apiVersion: apiextensions.k8s.io/v1",
        "kind: CustomResourceDefinition", "metadata:", "  name: gadgets.example.com",
        "  annotations: {controller-gen.kubebuilder.io/version: v0.20.0}",
        "spec: {group: example.com, scope: Namespaced, names: {kind: Gadget, plural: gadgets}, versions: "
        "[{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}",
        "---", "apiVersion: apiextensions.k8s.io/v1", "kind: CustomResourceDefinition",
        "metadata: {name: widgets.example.com}",
        "spec: {group: example.com, scope: Cluster, names: {kind: Widget, plural: widgets}, versions: "
        "[{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]}",
        "---", "apiVersion: v1", "kind: ConfigMap", "metadata: {name: settings, namespace: ns}",
        "data: {mode: 'on', when: '2026-12-07'}", ""])
    bundle = bundles[recipe]
    keep = [n for n, k in _catalog_chart_crds().items() if k == "templates"]
    flux = [(n, r) for n, r in _releases(bundle).items() if n in keep]
    helmfile = [r for r in _load(os.path.join(bundle, "helmfile.yaml"))[0]["releases"] if r["name"] in keep]
    assert flux and len(flux) == len(helmfile), (flux, helmfile)
    # the README names what the helmfile post-renderer needs
    readme = open(os.path.join(bundle, "README.md")).read()
    assert "Needs helmfile 0.159 or later (a release's `postRendererArgs`) and kubectl on the PATH" in readme
    outputs = []
    for _name, rel in flux:
        (renderer,) = rel["spec"]["postRenderers"]
        outputs.append(_kustomize(tmp_path, rendered, patches=renderer["kustomize"]["patches"]))
    for rel in helmfile:
        res = subprocess.run([rel["postRenderer"]] + rel["postRendererArgs"], input=rendered, capture_output=True,
                             text=True, check=False)
        assert res.returncode == 0, res.stderr
        outputs.append([d for d in yaml.safe_load_all(res.stdout) if d])
    for docs in outputs:
        by_name = dict((d["metadata"]["name"], d) for d in docs)
        assert sorted(by_name) == ["gadgets.example.com", "settings", "widgets.example.com"], by_name
        for crd in ("gadgets.example.com", "widgets.example.com"):
            assert by_name[crd]["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep", by_name[crd]
        assert by_name["gadgets.example.com"]["metadata"]["annotations"]["controller-gen.kubebuilder.io/version"]
        assert "annotations" not in by_name["settings"]["metadata"]
        assert by_name["settings"]["data"] == {"mode": "on", "when": "2026-12-07"}
    # the control: without the patch nothing is marked
    plain = _kustomize(tmp_path, rendered)
    assert not any((d["metadata"].get("annotations") or {}).get("helm.sh/resource-policy") for d in plain)


def test_the_crd_check_can_fail(bundles, tmp_path):
    """A CRD among a plain folder's manifests, or among a local chart's templates, fails the check."""
    import shutil
    bundle = str(tmp_path / "b")
    shutil.copytree(bundles["vr200-rke2-ubuntu-inference"], bundle)
    chart = os.path.join(bundle, "flux", "charts", "agentgateway-crds-pre")
    os.makedirs(os.path.join(chart, "files"), exist_ok=True)
    for path in glob.glob(os.path.join(chart, "crds", "*.yaml")):
        shutil.move(path, os.path.join(chart, "files", os.path.basename(path)))
    with pytest.raises(AssertionError):
        _local_chart_keeps_its_crds(bundle, chart, "agentgateway-crds-pre")
    values = {"crds": {"enabled": True, "keep": False}}
    assert not TEMPLATED_CRDS["cert-manager"](values)
    # a chart whose templates create CRDs, released without the keep post-renderer (agentgateway-crds as it was)
    readme = "* `agentgateway-crds`: the CRDs its chart creates from templates are marked `helm.sh/resource-policy: keep`"
    with pytest.raises(AssertionError):
        _remote_release_keeps_its_crds({"agentgateway-crds": "templates"}, "agentgateway-crds", {}, False, readme)
    with pytest.raises(AssertionError):
        _remote_release_keeps_its_crds({"gpu-operator": "crds_dir_upgrade_hook"}, "gpu-operator",
                                       {"operator": {"upgradeCRD": False}}, False, "")
