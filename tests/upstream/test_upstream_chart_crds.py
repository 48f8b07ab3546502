# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No removal deletes a CRD of a pinned chart: each chart of the five recipes, as the upstream data has it at its pin,
rendered the way helm renders it for the bundle's release - its crds/ apart (helm installs them, never deletes them),
its template CRDs through the bundle's post-renderer where the catalog says the chart does not mark them
(chart_crds: templates) - and held to the rule helm uninstall applies: a CRD of the templates survives only when it
carries helm.sh/resource-policy: keep.

* The catalog's chart_crds agrees with the data: a chart whose data holds crds/ (its own or a subchart's) is crds_dir
  or crds_dir_upgrade_hook, the hook's value is on in the chart's defaults, crds_dir_upgrade_hook only with the
  hook; a chart kept by its values names values the chart has.
* The data holds no chart templates (upstream code stays out, ../shared/upstream/README.md). A chart the catalog says
  creates CRDs from templates is rendered as a stand-in chart whose templates are the CRDs the data holds for it
  (NodeWright's, from the operator's sources) or, where the data holds none (agentgateway-crds, nvsentinel,
  dynamo-platform), one CRD: what its release's post-renderer does to them is what it does to the real ones.
* GPU_TRAY_REAL_CHARTS=<folder> with <folder>/<component>/ unpacked real charts (a chart repository's checkout at the
  SOURCE commit): those are rendered for real (helm template with the bundle's values and the release's
  post-renderer), every template CRD counted and each one required to be kept.
"""

import glob
import os
import shutil
import subprocess

import pytest

import upstream
from upstream import RECIPES
from test_upstream_values import CHART_DATA

HERE = os.path.dirname(os.path.abspath(__file__))
CATALOG = os.path.join(HERE, "..", "..", "plugins", "plugin_utils", "stack_data", "catalog.yml")
# the value each chart's own pre-upgrade hook reads (chart_crds crds_dir_upgrade_hook)
UPGRADE_HOOKS = {"gpu-operator": "operator.upgradeCRD", "network-operator": "upgradeCRDs"}
# the values that mark a chart's template CRDs keep (chart_crds templates_kept_by_values)
KEEP_VALUES = {"cert-manager": "crds.keep", "prometheus-operator-crds": "crds.annotations"}
KEEP = "helm.sh/resource-policy"


def _declared():
    cat = upstream.load_yaml(CATALOG)["components"]
    return dict((n, c.get("chart_crds")) for n, c in cat.items() if c["kind"] == "helm")


def _data_crd_files(root, component):
    """The crds/ files the data holds for a component's chart (its own, its subcharts'), sorted."""
    chart = os.path.join(root, "charts", CHART_DATA[component], "chart")
    own = glob.glob(os.path.join(chart, "crds", "*.yaml"))
    return sorted(own + glob.glob(os.path.join(chart, "charts", "*", "crds", "*.yaml")))


def _crds_of(paths):
    return [d for p in paths for d in upstream.load_all(p) if isinstance(d, dict)
            and d.get("kind") == "CustomResourceDefinition"]


def test_the_catalog_says_where_each_charts_crds_are_as_the_data_has_them(upstream_root):
    declared = _declared()
    for component, data in sorted(CHART_DATA.items()):
        kind = declared[component]
        files = _data_crd_files(upstream_root, component)
        values = upstream.load_yaml(os.path.join(upstream_root, "charts", data, "chart", "values.yaml")) or {}
        if files:
            assert kind in ("crds_dir", "crds_dir_upgrade_hook"), (component, kind, files)
        if kind == "crds_dir_upgrade_hook":
            assert upstream.dig(values, UPGRADE_HOOKS[component]) is True, component
        if kind == "crds_dir" and component in UPGRADE_HOOKS:
            pytest.fail("%s has an upgrade hook: crds_dir_upgrade_hook" % component)
        if kind == "templates_kept_by_values":
            upstream.dig(values, KEEP_VALUES[component])      # the key exists in the chart (KeyError otherwise)
            assert not files, component
        if kind in ("crds_dir", "crds_dir_upgrade_hook"):
            assert files or component == "grove", (component, "the data holds no crds/")
    # grove: the data holds values only; its values.yaml says where its CRDs are
    grove = open(os.path.join(upstream_root, "charts", "grove", "chart", "values.yaml")).read()
    assert "CRDs are installed by Helm on fresh install via" in grove and declared["grove"] == "crds_dir"


def _helm():
    from clusterhelpers import helm_binary
    return helm_binary()


def _post_renderer(bundle, component):
    """helm's --post-renderer arguments of the component's release as the bundle's helmfile.yaml has them, or []."""
    rel = dict((r["name"], r) for r in upstream.load_yaml(os.path.join(bundle, "helmfile.yaml"))["releases"])[component]
    if "postRenderer" not in rel:
        return []
    return ["--post-renderer", rel["postRenderer"]] + ["--post-renderer-args=%s" % a for a in rel["postRendererArgs"]]


def _standin(root, component, crd_docs):
    """A chart named after the component with ``crd_docs`` in its templates/ (as the real chart has them)."""
    import yaml
    chart = os.path.join(str(root), component)
    os.makedirs(os.path.join(chart, "templates"))
    with open(os.path.join(chart, "Chart.yaml"), "w") as fh:
        fh.write("apiVersion: v2\nname: %s\nversion: 0.0.1\n" % component)
    with open(os.path.join(chart, "templates", "crds.yaml"), "w") as fh:
        yaml.safe_dump_all(crd_docs, fh)
    return chart


ONE_CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "standins.example.test"},
           "spec": {"group": "example.test", "scope": "Namespaced", "names": {"kind": "Standin", "plural": "standins"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object"}}}]}}


def _render(chart, component, bundle, with_renderer=True, namespace="default"):
    """(template CRDs, of them kept) of ``chart`` rendered as the bundle's release renders it."""
    values = os.path.join(bundle, "components", component, "values.yaml")
    argv = [_helm(), "template", component, chart, "--namespace", namespace]
    argv += ["-f", values] if os.path.exists(values) else []
    argv += _post_renderer(bundle, component) if with_renderer else []
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert res.returncode == 0, (component, res.stderr[-2000:])
    import yaml

    class Loader(yaml.SafeLoader):
        pass
    # a bare "=" in a CRD's enum (prometheus-operator's): YAML 1.1's value type, the string "=" to helm
    Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))
    crds = [d for d in yaml.load_all(res.stdout, Loader=Loader) if isinstance(d, dict)
            and d.get("kind") == "CustomResourceDefinition"]
    return crds, [c for c in crds if ((c.get("metadata") or {}).get("annotations") or {}).get(KEEP) == "keep"]


@pytest.mark.parametrize("recipe", RECIPES)
def test_no_template_crd_of_a_pinned_chart_is_deleted_by_a_removal(bundles, upstream_root, tmp_path, recipe):
    bundle = bundles[recipe]
    declared = _declared()
    real = os.environ.get("GPU_TRAY_REAL_CHARTS")
    plan = upstream.load_yaml(os.path.join(bundle, "plan.yaml"))
    counted = {}
    for comp in plan["components"]:
        name = comp["name"]
        if comp["kind"] != "helm":
            continue
        if real and os.path.isdir(os.path.join(real, name)):
            crds, kept = _render(os.path.join(real, name), name, bundle, namespace=comp["namespace"])
        elif declared[name] == "templates":
            docs = _crds_of(_data_crd_files(upstream_root, name)) if name in CHART_DATA else []
            if name == "nodewright-operator":
                docs = _crds_of(sorted(glob.glob(os.path.join(upstream_root, "charts", "nodewright", "crds", "*.yaml"))))
                assert docs, "the data's NodeWright CRDs"
            chart = _standin(tmp_path / recipe, name, docs or [ONE_CRD])
            crds, kept = _render(chart, name, bundle)
            # the control: the same chart without the release's post-renderer keeps nothing
            assert _render(chart, name, bundle, with_renderer=False)[1] == [], name
        else:
            continue
        counted[name] = (len(crds), len(kept))
        assert len(kept) == len(crds), "%s: %d of its %d template CRDs would be deleted by a removal" % (
            name, len(crds) - len(kept), len(crds))
    assert counted, recipe
    if "inference" in recipe:
        assert "agentgateway-crds" in counted, counted


def test_the_rule_fails_on_a_chart_whose_template_crds_are_not_marked(bundles, tmp_path):
    """A release of a templates chart without its post-renderer: the check above would find its CRD unkept."""
    bundle = shutil.copytree(bundles["vr200-rke2-ubuntu-inference"], str(tmp_path / "b"))
    chart = _standin(tmp_path, "agentgateway-crds", [ONE_CRD])
    crds, kept = _render(chart, "agentgateway-crds", bundle, with_renderer=False)
    assert len(crds) == 1 and kept == []
