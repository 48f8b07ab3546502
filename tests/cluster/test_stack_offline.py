# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bundles of the five recipes (playbooks/render_bundle.yml, no cluster): layout, plan, the same objects from every
playbook, helmfile levels, every rendered core object against Kubernetes 1.34 (kubernetes-validate --strict), and
every values file for its shape and the forbidden DOCA-OFED / nvidia-peermem keys.

Custom resources, values key paths and readiness gates are held against the REAL charts and CRDs of the pinned
components in tests/upstream (which needs ../shared/upstream); nothing here is checked against copies we wrote."""

import copy
import glob
import json
import os
import re
import sys

import pytest
import yaml

import offline_schema as osc
from clusterhelpers import helm_binary
from stackhelpers import RAIL_PCI, RECIPES, collection_on_path, stack_inventory, start_playbook

PLAN_KEYS = ["name", "kind", "chart", "repository", "version", "namespace", "tier", "depends_on"]
# the custom kinds the bundles contain (tests/upstream validates them against the real CRDs)
CUSTOM_KINDS = ("NicClusterPolicy", "IPPool", "SriovNetworkNodePolicy", "SriovIBNetwork", "MaintenanceOperatorConfig",
                "NodeWright", "Gateway", "CustomResourceDefinition")


@pytest.fixture(scope="module")
def bundles(stack_bundles):
    return stack_bundles


def _load(path):
    with open(path) as fh:
        return [d for d in yaml.safe_load_all(fh) if d is not None]


def _forbidden(values):
    collection_on_path()
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack
    return stack.forbidden_values(values)


@pytest.mark.parametrize("recipe", RECIPES)
def test_plan_lists_every_component_in_install_order(bundles, recipe):
    plan = _load(os.path.join(bundles[recipe], "plan.yaml"))[0]
    assert list(plan) == ["recipe", "recipe_digest", "components"]
    assert plan["recipe"] == recipe
    tiers = [c["tier"] for c in plan["components"]]
    assert tiers == sorted(tiers) and tiers[0] == 0 and all(isinstance(t, int) for t in tiers)
    seen = []
    for comp in plan["components"]:
        assert list(comp) == PLAN_KEYS
        assert comp["kind"] in ("helm", "manifests")
        for dep in comp["depends_on"]:
            assert dep in seen, "%s installs before its dependency %s" % (comp["name"], dep)
        seen.append(comp["name"])
        folder = os.path.join(bundles[recipe], "components", comp["name"])
        if comp["kind"] == "helm":
            assert comp["repository"].startswith(("https://", "oci://")) and comp["chart"]
            assert os.path.isfile(os.path.join(folder, "values.yaml"))
        else:
            assert comp["repository"] == "" and comp["chart"] == ""
            assert glob.glob(os.path.join(folder, "*.yaml")) and not os.path.exists(os.path.join(folder, "values.yaml"))


def test_the_same_inventory_plans_the_same_objects_from_every_playbook(bundles, tmp_path):
    """render_bundle, deploy_stack --check and site.yml --check from one inventory plan the same components, objects
    included (the digest covers them): the plan depends on the inventory only. The deploy and site runs are limited to
    the API host (the trays of the inventory are never contacted) and carry a fact cache in which both trays hold
    rdma facts with OTHER PF addresses - what a preflight leaves behind - which must change nothing."""
    cache = tmp_path / "facts"
    cache.mkdir()
    for tray in ("tray01", "tray02"):
        devices = [{"name": rail, "kind": "pf", "pci_address": "0000:%02x:00.0" % (0x40 + i), "sriov_totalvfs": 16}
                   for i, rail in enumerate(RAIL_PCI)]
        (cache / tray).write_text(json.dumps({"gpu_tray_rdma": {"rails": sorted(RAIL_PCI), "devices": devices}}))
    env = {"ANSIBLE_CACHE_PLUGIN": "jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(cache),
           "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "0"}
    helm = ("-e", "stack_helm_binary=%s" % helm_binary())           # deploy_stack checks that helm runs first
    runs = {}
    for recipe in RECIPES:
        inventory = os.path.join(os.path.dirname(bundles[recipe]), "inventory-%s.yml" % recipe)
        runs[(recipe, "deploy_stack")] = start_playbook("gpu_tray.cluster.deploy_stack", "--check", "--limit",
                                                        "localhost", *helm, inventory=inventory, **env)
        runs[(recipe, "site")] = start_playbook("gpu_tray.cluster.site", "--check", "--limit", "localhost", "-e",
                                                "gpu_tray_validate=false", *helm, inventory=inventory, **env)
    for (recipe, playbook), proc in runs.items():
        out = proc.communicate()[0]
        assert proc.returncode == 0, "%s %s:\n%s" % (playbook, recipe, out[-4000:])
        want = _load(os.path.join(bundles[recipe], "plan.yaml"))[0]["recipe_digest"]
        assert re.findall(r"%s: \d+ components in \d+ tiers, digest ([0-9a-f]{64})" % recipe, out) == [want], \
            (playbook, recipe, out[-3000:])


def test_vr200_training_bundle_holds_aicrs_thirteen_components(bundles):
    plan = _load(os.path.join(bundles["vr200-rke2-ubuntu-training"], "plan.yaml"))[0]
    assert sorted(c["name"] for c in plan["components"]) == sorted([
        "cert-manager", "dranet", "nfd", "nodewright-operator", "nodewright-customizations", "prometheus-operator-crds",
        "kube-prometheus-stack", "gpu-operator", "k8s-ephemeral-storage-metrics", "kai-scheduler",
        "nvidia-dra-driver-gpu", "nvsentinel", "prometheus-adapter"])
    kinds = dict((c["name"], c["kind"]) for c in plan["components"])
    assert kinds["dranet"] == kinds["nodewright-customizations"] == "manifests"


@pytest.mark.parametrize("recipe", RECIPES)
def test_helmfile_has_one_level_per_tier(bundles, recipe):
    plan = _load(os.path.join(bundles[recipe], "plan.yaml"))[0]
    helmfile = _load(os.path.join(bundles[recipe], "helmfile.yaml"))[0]
    releases = helmfile["releases"]
    ids = dict(("%s/%s" % (r["namespace"], r["name"]), r) for r in releases)
    tier_of = dict((c["name"], c["tier"]) for c in plan["components"])
    assert set(r["labels"]["component"] for r in releases) == set(tier_of)
    for rel in releases:
        tier = int(rel["labels"]["tier"])
        assert tier == tier_of[rel["labels"]["component"]]
        for need in rel.get("needs", []):
            assert need in ids, "%s needs unknown release %s" % (rel["name"], need)
            assert int(ids[need]["labels"]["tier"]) in (tier - 1, tier)
        if tier > 0 and rel["name"] == rel["labels"]["component"] or rel["name"].endswith("-pre"):
            assert tier == 0 or rel.get("needs"), rel
        chart = rel["chart"]
        if chart.startswith("./"):
            assert glob.glob(os.path.join(bundles[recipe], chart, "*.yaml")), chart
        else:
            for value in rel.get("values", []):
                assert os.path.isfile(os.path.join(bundles[recipe], value))
    # every release of tier n needs every component of tier n-1 (its last release): tiers in order
    for rel in releases:
        tier = int(rel["labels"]["tier"])
        if tier and not rel["name"].endswith("-post") and rel["name"] == rel["labels"]["component"] \
                and not any(r["name"] == rel["name"] + "-pre" for r in releases):
            prev = set(c for c, t in tier_of.items() if t == tier - 1)
            assert set(ids[n]["labels"]["component"] for n in rel["needs"]) == prev


def _objects(bundle):
    out = []
    for path in sorted(glob.glob(os.path.join(bundle, "components", "*", "*.yaml"))):
        if os.path.basename(path) != "values.yaml":
            out.extend((path, doc) for doc in _load(path))
    return out


def test_nvke_policies_select_the_inventorys_rail_addresses_and_nothing_else(bundles):
    policies = [d for _p, d in _objects(bundles["gb200-nvke-ubuntu-training"]) if d["kind"] == "SriovNetworkNodePolicy"]
    assert sorted((p["metadata"]["name"], json.dumps(p["spec"]["nicSelector"], sort_keys=True)) for p in policies) == [
        ("sriov-ib-rail-%d" % i, json.dumps({"rootDevices": [RAIL_PCI[rail]], "vendor": "15b3"}, sort_keys=True))
        for i, rail in enumerate(RAIL_PCI)]


def test_rails_given_as_a_comma_list_on_the_command_line_render_those_rails(tmp_path):
    """-e gpu_tray_rails=mlx5_0,mlx5_1 (a string, as -e key=value gives it): the input check accepts it as a list of
    two rails, and the bundle has the policies of exactly those two rails - the planner once walked the string
    letter by letter (issue 53 item 4)."""
    recipe = "gb200-nvke-ubuntu-training"
    proc = start_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_bundle_dir=%s" % (tmp_path / "bundle"),
                          "-e", "gpu_tray_rails=mlx5_0,mlx5_1", inventory=stack_inventory(tmp_path, recipe, {
                              "gpu_tray_rail_pci_addresses": dict((r, RAIL_PCI[r]) for r in ("mlx5_0", "mlx5_1"))}))
    out = proc.communicate()[0]
    assert proc.returncode == 0, out[-4000:]
    policies = [d for _p, d in _objects(str(tmp_path / "bundle")) if d["kind"] == "SriovNetworkNodePolicy"]
    assert sorted(p["spec"]["nicSelector"]["rootDevices"][0] for p in policies) == \
        sorted(RAIL_PCI[rail] for rail in ("mlx5_0", "mlx5_1")), [p["metadata"]["name"] for p in policies]


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_rendered_core_object_validates_and_every_custom_kind_is_known(bundles, recipe):
    objects = _objects(bundles[recipe])
    assert objects, "no manifests rendered for %s" % recipe
    core = [doc for _path, doc in objects if doc["kind"] not in CUSTOM_KINDS]
    if core:
        out = osc.kubernetes_validate(yaml.safe_dump_all(core))
        assert out.count("passed") >= len(core), out
    # a kind outside the list would pass kubernetes-validate with a warning only (offline_schema fails on it)
    assert set(doc["kind"] for _p, doc in objects) - set(d["kind"] for d in core) <= set(CUSTOM_KINDS)


@pytest.mark.parametrize("recipe", RECIPES)
def test_values_files_are_one_mapping_without_doca_ofed_or_peermem(bundles, recipe):
    values = {}
    for path in glob.glob(os.path.join(bundles[recipe], "components", "*", "values.yaml")):
        docs = _load(path)
        assert len(docs) == 1 and isinstance(docs[0], dict), path
        values[os.path.basename(os.path.dirname(path))] = docs[0]
    assert values and _forbidden(values) == []
    # each forbidden key, planted in the values file where a user would add it, is found (not only in the
    # NicClusterPolicy object): nvidia-peermem through the GPU Operator, DOCA-OFED through the Network Operator
    planted = dict(values, **{"gpu-operator": dict(values["gpu-operator"], driver={"rdma": {"enabled": True}})})
    assert _forbidden(planted) == [{"component": "gpu-operator", "path": "driver.rdma"}]
    assert "network-operator" in values or not recipe.startswith("gb200-nvke"), sorted(values)
    if "network-operator" in values:
        ofed = dict(values, **{"network-operator": dict(values["network-operator"], ofedDriver={"deploy": True})})
        assert _forbidden(ofed) == [{"component": "network-operator", "path": "ofedDriver"}]


def test_nvke_fabric_objects(bundles):
    objects = [doc for _p, doc in _objects(bundles["gb200-nvke-ubuntu-training"])]
    by_kind = {}
    for doc in objects:
        by_kind.setdefault(doc["kind"], []).append(doc)
    pools = sorted(by_kind["IPPool"], key=lambda d: d["metadata"]["name"])
    assert [p["spec"]["subnet"] for p in pools] == ["10.255.0.0/22", "10.255.4.0/22", "10.255.8.0/22", "10.255.12.0/22"]
    for pol in by_kind["SriovNetworkNodePolicy"]:
        spec = pol["spec"]
        assert (spec["linkType"], spec["isRdma"], spec["deviceType"], spec["numVfs"]) == ("IB", True, "netdevice", 16)
        assert spec["nodeSelector"] == {"feature.node.kubernetes.io/rdma.available": "true"}
    nets = by_kind["SriovIBNetwork"]
    assert len(nets) == 4 and all(n["spec"]["networkNamespace"] == "default" for n in nets)
    assert sorted(yaml.safe_load(n["spec"]["ipam"])["poolName"] for n in nets) == [p["metadata"]["name"] for p in pools]
    ncp = by_kind["NicClusterPolicy"][0]["spec"]
    assert "ofedDriver" not in ncp and set(ncp) >= {"nvIpam", "secondaryNetwork"}
    assert set(ncp["secondaryNetwork"]) == {"multus", "cniPlugins"}
    cm = by_kind["ConfigMap"][0]
    assert cm["metadata"]["name"] == "kernel-module-params"
    assert cm["data"]["nvidia.conf"].strip() == "NVreg_GrdmaPciTopoCheckOverride=1"


def test_the_core_check_can_fail(bundles):
    ds = [d for _p, d in _objects(bundles["vr200-rke2-ubuntu-training"]) if d["kind"] == "DaemonSet"][0]
    bad = copy.deepcopy(ds)
    bad["spec"]["template"]["spec"]["hostNetwrok"] = True
    with pytest.raises(osc.SchemaError, match="'hostNetwrok' was unexpected"):
        osc.kubernetes_validate(yaml.safe_dump(bad))


def test_offline_without_a_mirror_the_render_stops_in_one_sentence_before_writing_anything(tmp_path):
    """No mirror of stack_repositories.github_raw (.invalid never resolves, as offline): one sentence naming the first
    file, its URL and the variable, no network error per file, nothing written, changed=0. A partial
    stack_repositories (-e, only github_raw) keeps every other repository's default."""
    from stackhelpers import recap, run_playbook, stack_inventory
    recipe = "vr200-rke2-ubuntu-inference"
    inventory = stack_inventory(tmp_path, recipe, {"gpu_tray_stack_overrides": {}})
    bundle = tmp_path / "bundle"
    rc, out = run_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_bundle_dir=%s" % bundle,
                           "-e", "gpu_tray_bundle_format=helmfile,flux",
                           "-e", json.dumps({"stack_repositories": {"github_raw": "https://github-raw.invalid"}}),
                           inventory=inventory)
    assert rc != 0
    failed = [line for line in out.splitlines() if "FAILED!" in line or line.startswith("failed:")]
    assert len(failed) == 1, out[-3000:]
    msg = json.loads(failed[0].split("=> ", 1)[1])["msg"]
    # every file missing, by its path below the mirror (issue 54: the refusal named only the first)
    match = re.match(r"^Cannot fetch 12 of the 12 pinned manifests below stack_repositories\.github_raw "
                     r"https://github-raw\.invalid \((.+)\): (.+) - point stack_repositories\.github_raw at a mirror "
                     r"that holds these paths below it, or at an absolute local directory of the same layout, and render "
                     r"again - nothing was written\.$", msg)
    assert match, msg
    paths = match.group(2).split(", ")
    assert len(paths) == 12 and paths[0] == ("kubernetes-sigs/gateway-api/v1.6.1/config/crd/standard/"
                                             "gateway.networking.k8s.io_backendtlspolicies.yaml"), paths
    assert sum(p.startswith("kubernetes-sigs/gateway-api-inference-extension/v1.5.0/config/crd/bases/")
               for p in paths) == 2, paths
    assert msg.count(". ") == 0, msg   # one sentence
    # the network error only inside that sentence (ansible prints the failed task's message twice), never per file
    assert not [line for line in out.splitlines() if "Request failed" in line and "Cannot fetch" not in line]
    assert "ignoring" not in out and "=> (item=" not in out.replace("ok: [localhost] => (item=", "")
    assert not bundle.exists()
    counts = recap(out)
    assert (counts["failed"], counts["changed"]) == (1, 0), counts


def test_a_second_rack_that_does_not_fit_the_rail_pools_is_refused_naming_the_pool(tmp_path):
    """The add-a-rack runbook's check (issue 54): the NVKE rail pools (/22, perNodeBlockSize 50) hold 20 nodes; an
    inventory of two 18-tray racks is refused by the stack's plan - render_bundle --check, no cluster, nothing written -
    naming the pool, the count and what fits, and the size it names renders."""
    from stackhelpers import PLATFORM, RAIL_PCI, run_playbook
    trays = dict(("gb200-r%02d-t%02d" % (rack, slot), {"ansible_host": "192.0.2.%d" % (rack * 20 + slot)})
                 for rack in (1, 2) for slot in range(1, 19))
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {
        "hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}},
        "children": {"gpu_trays": {"hosts": trays, "vars": {
            "gpu_tray_platform": PLATFORM["gb200"], "gpu_tray_recipe": "gb200-nvke-ubuntu-training",
            "gpu_tray_rail_pci_addresses": RAIL_PCI}}}}}))
    bundle = tmp_path / "bundle"
    rc, out = run_playbook("gpu_tray.cluster.render_bundle", "--check", "-e", "gpu_tray_bundle_dir=%s" % bundle,
                           inventory=str(inventory))
    assert rc != 0, out[-3000:]
    flat = " ".join(out.split())
    assert ("IPPool sriov-ib-rail-0 (10.255.0.0/22, perNodeBlockSize 50) holds 20 nodes, the inventory has 36 GPU "
            "trays: nv-ipam gives a node no rail address once the pool is out of blocks - set "
            "stack_ippool_per_node_block_size 28 or stack_ippool_prefix 21") in flat, out[-3000:]
    assert not bundle.exists()
    rc, out = run_playbook("gpu_tray.cluster.render_bundle", "--check", "-e", "gpu_tray_bundle_dir=%s" % bundle,
                           "-e", "stack_ippool_prefix=21", inventory=str(inventory))
    assert rc == 0, out[-3000:]
