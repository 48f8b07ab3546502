# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every values file of the five bundles held against the pinned chart that reads it (../shared/upstream):

(a) every key path our values set exists in the chart's values (a subchart's under its name or alias), so none
    is silently ignored by helm; a subchart's keys are set only while its dependency condition is on; the merged
    values pass the chart's values.schema.json where it has one (helm refuses the install otherwise);
(d) each setting the NVKE GB200 / RKE2 VR200 guides insist on is set at the key path the pinned chart's
    templates read (the template is named beside each entry; read at the commit in the component's SOURCE).
"""
import copy
import glob
import json
import os

import jsonschema
import pytest

import upstream
from upstream import RECIPES

# component -> folder under ../shared/upstream/charts with the pinned chart's data (SOURCE says which tag)
CHART_DATA = {
    "cert-manager": "cert-manager", "nfd": "node-feature-discovery", "nodewright-operator": "nodewright",
    "prometheus-operator-crds": "prometheus-operator-crds", "kube-prometheus-stack": "kube-prometheus-stack",
    "gpu-operator": "gpu-operator", "network-operator": "network-operator",
    "k8s-ephemeral-storage-metrics": "k8s-ephemeral-storage-metrics", "kai-scheduler": "kai-scheduler",
    "nvidia-dra-driver-gpu": "dra-driver-nvidia-gpu", "prometheus-adapter": "prometheus-adapter",
    "agentgateway": "agentgateway", "grove": "grove",
}
# components the data does not cover, with the key paths our recipes set for them (unverified here: each is a
# key AICR's own recipes set on the same chart, docs/stack.md "Held against the upstream charts")
NO_CHART_DATA = {
    "nvsentinel": {"labeler.assumeDriverInstalled"},
    "kubeflow-trainer": set(),
    "dynamo-platform": set(),
    "agentgateway-crds": set(),
}
# free-form maps the chart passes through whole, beyond those whose chart default is empty (upstream.unknown_keys)
FREE_FORM = {
    # none needed today: every map we set below a chart key is either a real key path or an empty default
}


def _leaves(values, path=()):
    out = set()
    for key, value in (values or {}).items():
        if isinstance(value, dict) and value:
            out |= _leaves(value, path + (key,))
        else:
            out.add(".".join(path + (key,)))
    return out


def _values(bundle):
    """{component: values} of a bundle's helm components."""
    out = {}
    for path in sorted(glob.glob(os.path.join(bundle, "components", "*", "values.yaml"))):
        out[os.path.basename(os.path.dirname(path))] = upstream.load_yaml(path) or {}
    return out


def _chart_dir(root, component):
    return os.path.join(root, "charts", CHART_DATA[component], "chart")


def _deep_merge(base, top):
    out = copy.deepcopy(base)
    for key, value in (top or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_key_our_values_set_exists_in_the_pinned_chart(bundles, upstream_root, recipe):
    unknown, uncovered = {}, {}
    for component, values in _values(bundles[recipe]).items():
        if component in CHART_DATA:
            chart = upstream.chart_values(_chart_dir(upstream_root, component))
            bad = upstream.unknown_keys(values, chart, FREE_FORM.get(component, ()))
            if bad:
                unknown[component] = bad
        elif _leaves(values) - NO_CHART_DATA.get(component, set()) or component not in NO_CHART_DATA:
            uncovered[component] = sorted(_leaves(values))
    assert not unknown, "keys the pinned charts do not have (helm ignores them): %s" % unknown
    assert not uncovered, ("components without upstream chart data set keys nobody checked (add the chart's "
                           "data beside ../shared/upstream, or list the keys in NO_CHART_DATA with the source): %s"
                           % uncovered)


@pytest.mark.parametrize("recipe", RECIPES)
def test_subchart_keys_are_set_only_where_the_subchart_is_enabled(bundles, upstream_root, recipe):
    off = []
    for component, values in _values(bundles[recipe]).items():
        if component not in CHART_DATA:
            continue
        chart_dir = _chart_dir(upstream_root, component)
        merged = _deep_merge(upstream.load_yaml(os.path.join(chart_dir, "values.yaml")) or {}, values)
        for dep in (upstream.load_yaml(os.path.join(chart_dir, "Chart.yaml")) or {}).get("dependencies") or []:
            key, condition = dep.get("alias") or dep["name"], dep.get("condition")
            if not condition:
                continue
            condition = condition.split(",")[0]
            # the keys set for the subchart, other than its own switch (crds.enabled: false turns crds off)
            set_here = set(p for p in _leaves(values) if p.startswith(key + ".")) - {condition}
            try:
                enabled = upstream.dig(merged, condition)
            except KeyError:
                enabled = True      # helm: a condition path that resolves to nothing leaves the chart on
            if set_here and enabled is not True:
                off.append("%s: %s are set but %s is %r" % (component, sorted(set_here), condition, enabled))
    assert not off, off


@pytest.mark.parametrize("recipe", RECIPES)
def test_merged_values_pass_the_charts_values_schema(bundles, upstream_root, recipe):
    checked, errors = 0, []
    for component, values in _values(bundles[recipe]).items():
        if component not in CHART_DATA:
            continue
        schema_path = os.path.join(_chart_dir(upstream_root, component), "values.schema.json")
        if not os.path.exists(schema_path):
            continue
        with open(schema_path) as fh:
            schema = json.load(fh)
        defaults = upstream.load_yaml(os.path.join(_chart_dir(upstream_root, component), "values.yaml")) or {}
        checked += 1
        for err in jsonschema.validators.validator_for(schema)(schema).iter_errors(_deep_merge(defaults, values)):
            errors.append("%s: %s: %s" % (component, ".".join(str(p) for p in err.absolute_path), err.message))
    assert checked, "no chart of %s has a values.schema.json: the check ran on nothing" % recipe
    assert not errors, errors


# (d) What the guides insist on, at the key path the pinned chart reads.
# (recipes, component, key path, expected, where the chart reads it)
NVKE = ("gb200-nvke-ubuntu-training", "gb200-nvke-ubuntu-training-kubeflow")
VR200 = ("vr200-rke2-ubuntu-training", "vr200-rke2-ubuntu-inference", "vr200-rke2-ubuntu-inference-dynamo")
GUIDE_SETTINGS = [
    # NVKE GB200, "SR-IOV InfiniBand"
    (NVKE, "network-operator", "sriovNetworkOperator.enabled", True, "Chart.yaml: condition of sriov-network-operator"),
    (NVKE, "network-operator", "maintenanceOperator.enabled", True,
     "Chart.yaml: condition of maintenance-operator-chart"),
    (NVKE, "network-operator", "sriov-network-operator.sriovOperatorConfig.deploy", True,
     "charts/sriov-network-operator/templates/sriovoperatorconfig.yaml: {{ if .Values.sriovOperatorConfig.deploy }}"),
    (NVKE, "network-operator", "sriov-network-operator.sriovOperatorConfig.disablePlugins", ["mellanox"],
     "charts/sriov-network-operator/templates/sriovoperatorconfig.yaml: spec.disablePlugins"),
    (NVKE, "network-operator", "sriov-network-operator.operator.externalDrainer.enabled", True,
     "charts/sriov-network-operator/templates/operator.yaml: env USE_EXTERNAL_DRAINER"),
    (NVKE, "network-operator", "operator.maintenanceOperator.useDrainControllerRequestor", True,
     "templates/operator.yaml: env DRAIN_CONTROLLER_ENABLED (SR-IOV drains become NodeMaintenance objects)"),
    (NVKE, "network-operator", "nfd.enabled", False, "Chart.yaml: condition of node-feature-discovery (own component)"),
    (NVKE, "gpu-operator", "driver.enabled", True, "ClusterPolicy spec.driver.enabled"),
    (NVKE, "gpu-operator", "driver.version", "580.173.02",
     "ClusterPolicy spec.driver.version (chart default 595.91.07 has no NVreg_GrdmaPciTopoCheckOverride)"),
    (NVKE, "gpu-operator", "driver.kernelModuleConfig.name", "kernel-module-params",
     "ClusterPolicy spec.driver.kernelModuleConfig.name: ConfigMap keys mounted at /drivers in the driver pod"),
    (NVKE, "gpu-operator", "gdrcopy.enabled", True, "ClusterPolicy spec.gdrcopy.enabled"),
    (NVKE, "nvidia-dra-driver-gpu", "nvidiaDriverRoot", "/run/nvidia/driver", "operator-managed driver root"),
    # RKE2 VR200: host driver, CDI + NRI
    (VR200, "gpu-operator", "driver.enabled", False, "ClusterPolicy spec.driver.enabled"),
    (VR200, "gpu-operator", "cdi.enabled", True, "ClusterPolicy spec.cdi.enabled"),
    (VR200, "gpu-operator", "cdi.nriPluginEnabled", True, "ClusterPolicy spec.cdi.nriPluginEnabled"),
    (VR200, "nvidia-dra-driver-gpu", "nvidiaDriverRoot", "/", "host-installed driver root"),
    (VR200, "kube-prometheus-stack", "prometheus-node-exporter.service.port", 9110,
     "charts/prometheus-node-exporter: RKE2 host images may hold 9100"),
    (VR200, "kube-prometheus-stack", "prometheus-node-exporter.service.targetPort", 9110,
     "charts/prometheus-node-exporter: targetPort must refer to an open container port (port moves it)"),
    # every recipe
    (NVKE + VR200, "gpu-operator", "driver.kernelModuleType", "open",
     "ClusterPolicy spec.driver.kernelModuleType (useOpenKernelModules is a no-op in v26.7)"),
    (NVKE + VR200, "gpu-operator", "nfd.enabled", False, "Chart.yaml: condition of node-feature-discovery"),
    (NVKE + VR200, "kube-prometheus-stack", "crds.enabled", False,
     "Chart.yaml: condition of crds (prometheus-operator-crds owns them, #914)"),
    (NVKE + VR200, "cert-manager", "crds.enabled", True, "templates/crd-*.yaml: {{ if .Values.crds.enabled }}"),
    (NVKE + VR200, "nfd", "topologyUpdater.enable", True, "templates/topologyupdater.yaml"),
]


@pytest.mark.parametrize("recipe", RECIPES)
def test_the_guides_settings_are_set_where_the_pinned_chart_reads_them(bundles, upstream_root, recipe):
    values = _values(bundles[recipe])
    wrong = []
    rows = [row for row in GUIDE_SETTINGS if recipe in row[0]]
    assert rows, "no guide settings listed for %s" % recipe
    for _recipes, component, path, expected, where in rows:
        chart = upstream.chart_values(_chart_dir(upstream_root, component))
        try:
            upstream.dig(chart, path)
        except KeyError:
            wrong.append("%s %s: the pinned chart has no such key (%s)" % (component, path, where))
            continue
        try:
            got = upstream.dig(values.get(component, {}), path)
        except KeyError:
            got = "<not set>"
        if got != expected:
            wrong.append("%s %s = %r, the guide needs %r (%s)" % (component, path, got, expected, where))
    assert not wrong, wrong


@pytest.mark.parametrize("recipe", NVKE)
def test_nvke_sets_no_ofed_upgrade_requestor_and_no_top_level_sriov_config(bundles, recipe):
    """The two keys the NVKE values used to set, which 26.4.1 reads elsewhere or for something else."""
    values = _values(bundles[recipe])["network-operator"]
    assert "sriovOperatorConfig" not in values            # not read at the top level: the subchart reads it
    assert "useRequestor" not in values["operator"]["maintenanceOperator"]   # DOCA-OFED upgrade requestor


def test_the_kernel_module_config_names_the_configmap_the_bundle_applies_before_the_chart(bundles):
    """gpu-operator mounts the ConfigMap's keys at /drivers; the driver container reads /drivers/nvidia.conf one
    line at a time as module parameters and writes 'options nvidia <them>' to modprobe.d itself, so each line is
    bare parameters (gpu-driver-container ubuntu24.04/nvidia-driver _get_module_params)."""
    for recipe in NVKE:
        name = _values(bundles[recipe])["gpu-operator"]["driver"]["kernelModuleConfig"]["name"]
        docs = upstream.load_all(os.path.join(bundles[recipe], "components", "gpu-operator-pre",
                                              "kernel-module-params.yaml"))
        cm = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == name]
        assert cm and cm[0]["metadata"]["namespace"] == "gpu-operator", docs
        lines = [line for line in cm[0]["data"]["nvidia.conf"].splitlines() if line.strip()]
        assert lines == ["NVreg_GrdmaPciTopoCheckOverride=1"], lines
        assert not any(line.startswith("options") for line in lines)


def test_the_nic_cluster_policy_runs_the_release_operand_images(bundles, upstream_root):
    """NicClusterPolicy images = Mellanox/network-operator v26.4.1 hack/release.yaml (release.yaml in the data)."""
    release = upstream.load_yaml(os.path.join(upstream_root, "charts", "network-operator", "release.yaml"))
    want = {"nvIpam": release["nvIpam"], "multus": release["Multus"], "cniPlugins": release["CniPlugins"]}
    for recipe in NVKE:
        ncp = upstream.load_all(os.path.join(bundles[recipe], "components", "network-operator-post",
                                             "nic-cluster-policy.yaml"))[0]["spec"]
        got = {"nvIpam": ncp["nvIpam"], "multus": ncp["secondaryNetwork"]["multus"],
               "cniPlugins": ncp["secondaryNetwork"]["cniPlugins"]}
        for key, rel in want.items():
            image = tuple(got[key][k] for k in ("repository", "image", "version"))
            assert image == (rel["repository"], rel["image"], rel["version"]), (recipe, key, image, rel)


# the checks above can fail: each is fed a planted defect of the kind it exists for
def test_the_key_check_finds_a_top_level_key_that_belongs_to_a_subchart(upstream_root):
    chart = upstream.chart_values(os.path.join(upstream_root, "charts", "network-operator", "chart"))
    planted = {"sriovOperatorConfig": {"deploy": True, "disablePlugins": ["mellanox"]},
               "operator": {"maintenanceOperator": {"useRequestor": True}, "repositry": "x"},
               "sriov-network-operator": {"sriovOperatorConfig": {"disablePlugins": ["mellanox"]}}}
    assert sorted(upstream.unknown_keys(planted, chart)) == ["operator.repositry", "sriovOperatorConfig"]


def test_the_key_check_finds_the_deprecated_open_kernel_modules_key(upstream_root):
    chart = upstream.chart_values(os.path.join(upstream_root, "charts", "gpu-operator", "chart"))
    assert upstream.unknown_keys({"driver": {"useOpenKernelModules": True, "kernelModuleType": "open"}}, chart) \
        == ["driver.useOpenKernelModules"]


def test_free_form_maps_pass_and_a_mapping_over_a_scalar_fails(upstream_root):
    chart = upstream.chart_values(os.path.join(upstream_root, "charts", "network-operator", "chart"))
    assert upstream.unknown_keys({"operator": {"nodeSelector": {"any/label": "x"}}}, chart) == []
    assert upstream.unknown_keys({"operator": {"repository": {"host": "x"}}}, chart) == \
        ["operator.repository (a mapping where the chart has str)"]


def test_the_schema_check_can_fail(upstream_root):
    chart_dir = os.path.join(upstream_root, "charts", "cert-manager", "chart")
    with open(os.path.join(chart_dir, "values.schema.json")) as fh:
        schema = json.load(fh)
    merged = _deep_merge(upstream.load_yaml(os.path.join(chart_dir, "values.yaml")), {"crds": {"enabled": "yes"}})
    errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(merged))
    assert errors and any("crds" in [str(p) for p in e.absolute_path] for e in errors)
