# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Reading the upstream chart data (../shared/upstream, README there) and holding a rendered bundle against it.

Pure functions over parsed YAML; the tests in this folder feed them the five recipes' bundles. Nothing here
knows our recipes: what our recipes must contain is in the tests.

* `chart_values(chart_dir)`: a chart's default values with each subchart's defaults under its name or alias
  (as helm merges them), plus every property its values.schema.json names.
* `unknown_keys(ours, chart)`: the key paths of `ours` the chart does not have - helm ignores them silently.
* `CrdIndex`: every real CRD of the data, by name and by (group, kind); strict validation of a custom resource
  against its real openAPIV3Schema (tests/cluster/offline_schema.py), and lookup of a status field.
"""

import glob
import json
import os

import yaml

import offline_schema as osc

RECIPES = ["gb200-nvke-ubuntu-training", "gb200-nvke-ubuntu-training-kubeflow", "vr200-rke2-ubuntu-training",
           "vr200-rke2-ubuntu-inference", "vr200-rke2-ubuntu-inference-dynamo"]


def load_yaml(path):
    with open(path) as fh:
        return yaml.safe_load(fh)


def load_all(path):
    with open(path) as fh:
        return [d for d in yaml.safe_load_all(fh) if d is not None]


def source(component_dir):
    """The SOURCE file of one component's data as a dict (repo, ref, commit, catalog_pin, matches_pin, ...)."""
    out = {}
    with open(os.path.join(component_dir, "SOURCE")) as fh:
        for line in fh:
            key, sep, value = line.partition(":")
            if sep and key.strip() and not line.startswith(" "):
                out[key.strip()] = value.strip()
    return out


def _schema_tree(schema):
    """The nested dict of every property a values.schema.json names (values None at the leaves)."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    return dict((k, _schema_tree(v)) for k, v in props.items())


def _merge_known(into, extra):
    """Union of two known-key trees (dicts merge, anything else: `into` wins unless it is None)."""
    if not isinstance(extra, dict):
        return into
    if not isinstance(into, dict):
        return dict(extra) if into is None else into
    for key, value in extra.items():
        into[key] = _merge_known(into[key], value) if key in into else value
    return into


def chart_values(chart_dir):
    """Default values of the chart in `chart_dir` as helm sees them: its values.yaml (+ values.schema.json
    properties), each dependency's defaults under `alias or name` (from charts/<name>/, recursively)."""
    values = load_yaml(os.path.join(chart_dir, "values.yaml")) or {}
    schema_path = os.path.join(chart_dir, "values.schema.json")
    if os.path.exists(schema_path):
        with open(schema_path) as fh:
            values = _merge_known(values, _schema_tree(json.load(fh)))
    chart = load_yaml(os.path.join(chart_dir, "Chart.yaml")) or {}
    for dep in chart.get("dependencies") or []:
        sub_dir = os.path.join(chart_dir, "charts", dep["name"])
        if not os.path.exists(os.path.join(sub_dir, "values.yaml")):
            continue
        key = dep.get("alias") or dep["name"]
        values[key] = _merge_known(values.get(key), chart_values(sub_dir))
    return values


def unknown_keys(ours, chart, free_form=(), path=()):
    """Key paths (dotted) that `ours` sets and the chart's values do not have.

    A mapping in the chart whose default is empty or null is a free-form map the chart passes through whole
    (toYaml / range: nodeSelector, annotations, resources, extraEnv ...): keys below it are not checked.
    `free_form` names more such paths (tuples) - the tests give the reason for each. Lists are leaves: helm
    replaces a list as a whole, so an env list's entries are ours to choose."""
    found = []
    if not isinstance(ours, dict):
        return found
    for key, value in ours.items():
        here = path + (key,)
        if here in free_form:
            continue
        if not isinstance(chart, dict) or key not in chart:
            found.append(".".join(here))
            continue
        default = chart[key]
        if isinstance(value, dict) and default not in (None, {}):
            if isinstance(default, dict):
                found.extend(unknown_keys(value, default, free_form, here))
            else:
                found.append("%s (a mapping where the chart has %s)" % (".".join(here), type(default).__name__))
    return found


def dig(values, dotted):
    """values[a][b][c] for 'a.b.c' (a key with a dot inside is not supported); KeyError if absent."""
    node = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(dotted)
        node = node[part]
    return node


class CrdIndex(object):
    """Every CustomResourceDefinition under the upstream data (each file once, duplicates by name: the first in
    `preferred` order wins, so a component's own copy - e.g. network-operator's Mellanox fork of the SR-IOV
    CRDs - is used before a standalone repository's)."""

    def __init__(self, root, preferred=()):
        self.by_name = {}
        self.origin = {}
        paths = sorted(glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True))
        rank = dict((p, i) for i, p in enumerate(preferred))

        def order(path):
            rel = os.path.relpath(path, root)
            return (min([rank[p] for p in rank if rel.startswith(p)] or [len(rank)]), rel)
        for path in sorted(paths, key=order):
            try:
                docs = load_all(path)
            except yaml.YAMLError:
                continue
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    name = doc["metadata"]["name"]
                    if name not in self.by_name:
                        self.by_name[name] = doc
                        self.origin[name] = os.path.relpath(path, root)

    def for_kind(self, api_version, kind):
        """The CRD serving `kind` in the group of `api_version`, or None."""
        group = api_version.rpartition("/")[0]
        for crd in self.by_name.values():
            if crd["spec"]["group"] == group and crd["spec"]["names"]["kind"] == kind:
                return crd
        return None

    @staticmethod
    def served(crd, version):
        return any(v["name"] == version and v.get("served") for v in crd["spec"]["versions"])

    @staticmethod
    def schema_at(crd, version, dotted):
        """The openAPIV3Schema node of field `dotted` (e.g. 'status.state') in `version`, or None: a path the
        structural schema does not name (unless an ancestor preserves unknown fields, which yields that node)."""
        chosen = [v for v in crd["spec"]["versions"] if v["name"] == version]
        if not chosen:
            return None
        node = chosen[0]["schema"]["openAPIV3Schema"]
        for part in dotted.split("."):
            if node.get("x-kubernetes-preserve-unknown-fields") and part not in (node.get("properties") or {}):
                return node
            props = node.get("properties") or {}
            if part not in props:
                return None
            node = props[part]
        return node

    @staticmethod
    def validate(cr, crd):
        """Strict: raises offline_schema.SchemaError for each violation, unknown fields included (the API server
        prunes them from a structural schema, so a setting there never takes effect)."""
        osc.validate_custom_resource(cr, crd, strict=True)
