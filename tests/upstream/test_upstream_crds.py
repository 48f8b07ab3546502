# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Custom resources and readiness gates held against the REAL CRDs of the pinned components (../shared/upstream):

(b) every custom resource a bundle renders validates strictly against its real CRD's openAPIV3Schema - a field the
    structural schema does not name fails, as the API server would prune it - in a served version;
(c) every readiness gate (`wait_for_crds`, `ready`, `after_removal`), every api_version/kind the roles and
    playbooks read, and the kinds the validation modules read name a CRD, version and status field that exist.

The CEL rules (x-kubernetes-validations) of the real CRDs are not evaluated offline; on create they only order an
IPPool exclusion range and make fields immutable, which the objects here do not touch.
"""
import copy
import glob
import os
import subprocess

import pytest
import yaml

import offline_schema as osc
import upstream
import upstreamdata
from upstream import RECIPES
from stackhelpers import REPO, collection_on_path

CORE_GROUPS = ("", "apps", "rbac.authorization.k8s.io", "resource.k8s.io", "batch", "policy", "apiextensions.k8s.io",
               "storage.k8s.io", "networking.k8s.io", "coordination.k8s.io")
# NodeWright v0.18+ renamed the Skyhook kind (nodewright.nvidia.com/v1alpha1 NodeWright, same spec; nodeprep.md
# 1.1, AICR docs/integrator/components/nodewright.md). The catalog pins v0.19.0, whose chart is not public: the
# newest public data is skyhook-operator 0.15.1 with the Skyhook CRD (charts/nodewright/SOURCE), so a NodeWright is
# held against that schema under its old name. Remove this once the data carries the NodeWright CRD.
RENAMED = {("nodewright.nvidia.com", "NodeWright"): ("skyhook.nvidia.com", "Skyhook", "skyhooks.skyhook.nvidia.com")}


def _group(api_version):
    return api_version.rpartition("/")[0]


def _crd(crd_index, api_version, kind):
    """(crd, api_version to validate under, kind) - through RENAMED where the real CRD is the older name."""
    group, version = _group(api_version), api_version.rpartition("/")[2]
    if (group, kind) in RENAMED:
        old_group, old_kind, name = RENAMED[(group, kind)]
        return crd_index.by_name.get(name), "%s/%s" % (old_group, version), old_kind
    return crd_index.for_kind(api_version, kind), api_version, kind


def _crd_by_name(crd_index, name):
    for (group, kind), (_og, _ok, old) in RENAMED.items():
        plural = "%ss.%s" % (kind.lower(), group)
        if name == plural:
            return crd_index.by_name.get(old)
    return crd_index.by_name.get(name)


def _objects(bundle):
    out = []
    for path in sorted(glob.glob(os.path.join(bundle, "components", "*", "*.yaml"))):
        if os.path.basename(path) != "values.yaml":
            out.extend((os.path.relpath(path, bundle), doc) for doc in upstream.load_all(path))
    return out


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_custom_resource_validates_strictly_against_its_real_crd(bundles, crd_index, recipe):
    custom = [(p, d) for p, d in _objects(bundles[recipe]) if _group(d["apiVersion"]) not in CORE_GROUPS]
    assert custom, "no custom resource rendered for %s" % recipe
    problems = []
    for path, doc in custom:
        crd, api_version, kind = _crd(crd_index, doc["apiVersion"], doc["kind"])
        where = "%s (%s %s)" % (path, doc["kind"], doc["metadata"]["name"])
        if crd is None:
            problems.append("%s: no real CRD serves %s %s" % (where, doc["apiVersion"], doc["kind"]))
            continue
        version = api_version.rpartition("/")[2]
        if not crd_index.served(crd, version):
            problems.append("%s: CRD %s does not serve %s" % (where, crd["metadata"]["name"], version))
            continue
        obj = copy.deepcopy(doc)
        obj["apiVersion"], obj["kind"] = api_version, kind
        try:
            crd_index.validate(obj, crd)
        except osc.SchemaError as exc:
            problems.append("%s: %s" % (where, exc))
    assert not problems, "\n".join(problems)


def _catalog_gates():
    """(component, gate kind, entry) for every readiness gate in the catalog and the recipes (the registry)."""
    collection_on_path()
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry
    out = []
    table = registry.catalog()
    for recipe in registry.recipes().values():
        for name, ref in ((recipe or {}).get("components") or {}).items():
            if (ref or {}).get("readiness"):
                table.setdefault("%s (recipe)" % name, {})["readiness"] = ref["readiness"]
    for name, entry in table.items():
        readiness = (entry or {}).get("readiness") or {}
        for crd in (readiness.get("wait_for_crds") or []) + (readiness.get("crds_from_operator") or []):
            out.append((name, "wait_for_crds", crd))
        for key in ("ready", "after_removal"):
            for gate in readiness.get(key) or []:
                out.append((name, key, gate))
    return out


def test_the_catalog_has_readiness_gates_to_check():
    kinds = set(k for _n, k, _e in _catalog_gates())
    assert kinds == {"wait_for_crds", "ready", "after_removal"}, kinds


def test_every_readiness_gate_names_a_real_crd_kind_and_status_field(crd_index):
    problems = []
    for name, kind, entry in _catalog_gates():
        if kind == "wait_for_crds":
            if _crd_by_name(crd_index, entry) is None:
                problems.append("%s wait_for_crds %s: no such CRD in the pinned components" % (name, entry))
            continue
        crd, api_version, crd_kind = _crd(crd_index, entry["api_version"], entry["kind"])
        if crd is None:
            problems.append("%s %s: no real CRD serves %s %s" % (name, kind, entry["api_version"], entry["kind"]))
            continue
        version = api_version.rpartition("/")[2]
        if not crd_index.served(crd, version):
            problems.append("%s %s: %s does not serve %s" % (name, kind, crd["metadata"]["name"], version))
            continue
        field = crd_index.schema_at(crd, version, entry["path"])
        if field is None:
            problems.append("%s %s: %s %s has no field %s" % (name, kind, crd_kind, version, entry["path"]))
        elif "enum" in field and entry["value"] not in field["enum"]:
            problems.append("%s %s: %s.%s is one of %s, never %r" % (name, kind, crd_kind, entry["path"],
                                                                  field["enum"], entry["value"]))
    assert not problems, "\n".join(problems)


def _api_refs(node, where, out):
    """Every mapping with a literal api_version and kind in a YAML tree (module arguments, gate entries)."""
    if isinstance(node, dict):
        api_version, kind = node.get("api_version"), node.get("kind")
        if isinstance(api_version, str) and isinstance(kind, str) and "{{" not in api_version + kind:
            out.append((where, api_version, kind))
        for value in node.values():
            _api_refs(value, where, out)
    elif isinstance(node, list):
        for value in node:
            _api_refs(value, where, out)


def _role_and_playbook_refs():
    out = []
    for path in sorted(glob.glob(os.path.join(REPO, "roles", "*", "**", "*.yml"), recursive=True)
                       + glob.glob(os.path.join(REPO, "playbooks", "*.yml"))):
        with open(path) as fh:
            for doc in yaml.safe_load_all(fh):
                _api_refs(doc, os.path.relpath(path, REPO), out)
    # read by the validation modules in Python (plugins/module_utils/conformance.py, plugins/modules/expected_resources.py)
    out.append(("plugins/module_utils/conformance.py", "nvidia.com/v1", "ClusterPolicy"))
    out.append(("plugins/modules/expected_resources.py", "sriovnetwork.openshift.io/v1", "SriovNetworkNodeState"))
    return out


def test_every_custom_kind_the_roles_and_modules_read_is_served_by_a_real_crd(crd_index):
    refs = [r for r in _role_and_playbook_refs() if _group(r[1]) not in CORE_GROUPS]
    assert len(set((a, k) for _w, a, k in refs)) >= 4, refs
    problems = []
    for where, api_version, kind in refs:
        crd, api, _kind = _crd(crd_index, api_version, kind)
        if crd is None or not crd_index.served(crd, api.rpartition("/")[2]):
            problems.append("%s: %s %s is served by no real CRD of the pinned components" % (where, api_version, kind))
    assert not problems, "\n".join(problems)


def test_the_crds_the_tests_take_are_in_the_upstream_data_and_none_is_committed():
    """The test cluster and the offline tests take their real CRDs from the upstream data (tests/cluster/
    upstreamdata.py): each set is there, each file a CustomResourceDefinition; and no fetched file is committed."""
    for name in sorted(upstreamdata.CRDS):
        for path in upstreamdata.upstream_crds(name):
            assert [doc["kind"] for doc in upstream.load_all(path)] == ["CustomResourceDefinition"], path
    tracked = subprocess.run(["git", "-C", REPO, "ls-files", "tests"], capture_output=True, text=True,
                             check=True).stdout.split()
    fetched = set(os.path.basename(rel) for rels in upstreamdata.CRDS.values() for rel in rels)
    assert not [path for path in tracked if os.path.basename(path) in fetched or path.endswith("/SOURCE")
                and not path.startswith("tests/unit/fixtures/")], tracked


# the checks can fail
def test_a_field_the_real_schema_does_not_name_fails(bundles, crd_index):
    pol = [d for _p, d in _objects(bundles["gb200-nvke-ubuntu-training"]) if d["kind"] == "SriovNetworkNodePolicy"][0]
    bad = copy.deepcopy(pol)
    bad["spec"]["numVF"] = bad["spec"].pop("numVfs")
    crd = crd_index.for_kind(bad["apiVersion"], bad["kind"])
    with pytest.raises(osc.SchemaError, match="numVF"):
        crd_index.validate(bad, crd)


def test_a_wrong_enum_in_a_real_crd_fails(bundles, crd_index):
    pol = [d for _p, d in _objects(bundles["gb200-nvke-ubuntu-training"]) if d["kind"] == "SriovNetworkNodePolicy"][0]
    bad = copy.deepcopy(pol)
    bad["spec"]["deviceType"] = "net-device"
    with pytest.raises(osc.SchemaError, match="deviceType"):
        crd_index.validate(bad, crd_index.for_kind(bad["apiVersion"], bad["kind"]))


def test_a_status_field_that_does_not_exist_is_found(crd_index):
    crd = crd_index.for_kind("nvidia.com/v1", "ClusterPolicy")
    assert crd_index.schema_at(crd, "v1", "status.state")["enum"] == ["ignored", "ready", "notReady"]
    assert crd_index.schema_at(crd, "v1", "status.phase") is None
    assert crd_index.for_kind("mellanox.com/v1alpha1", "NicClusterPolicies") is None
