# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Offline schema checks for manifests that target the platforms' Kubernetes (1.34+), which the
1.20 test cluster cannot serve (e.g. resource.k8s.io/v1).

* `kubernetes_validate(text)`: runs `kubernetes-validate -k 1.34.0 --strict` on rendered manifests.
  kubernetes-validate only *warns* (exit 0) on a kind it has no schema for - a mistyped apiVersion
  would pass - so this wrapper fails on that warning unless the kind is listed in `crd_kinds`
  (custom resources are checked with `validate_custom_resource` instead).
* `crd_jsonschema(crd, version)` / `validate_custom_resource(cr, crd)`: a CRD's `openAPIV3Schema`
  as JSON Schema (jsonschema library), strict by default: unknown fields are errors, as with
  `kubectl apply --validate=strict` against the real server.
* `helm_template(helm, chart, ...)`: `helm template` to text.
"""

import copy
import os
import shutil
import subprocess
import sys
import tempfile

import jsonschema
import yaml

TARGET_KUBERNETES = "1.34.0"


class SchemaError(AssertionError):
    pass


def helm_template(helm, chart, release="t", namespace="default", set_values=(), kube_version=TARGET_KUBERNETES):
    argv = [helm, "template", release, chart, "--namespace", namespace, "--kube-version", kube_version]
    for item in set_values:
        argv += ["--set", item]
    res = subprocess.run(argv, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SchemaError("helm template %s failed (rc %d): %s" % (chart, res.returncode, res.stderr.strip()))
    return res.stdout


def kubernetes_validate(text, version=TARGET_KUBERNETES, strict=True, crd_kinds=(), binary=None):
    """Validate multi-document YAML; returns the tool's output, raises SchemaError on any failure."""
    if binary is None:
        beside = os.path.join(os.path.dirname(sys.executable), "kubernetes-validate")
        binary = beside if os.path.exists(beside) else (shutil.which("kubernetes-validate") or beside)
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        fh.write(text)
        path = fh.name
    try:
        argv = [binary, "-k", version] + (["--strict"] if strict else []) + [path]
        res = subprocess.run(argv, capture_output=True, text=True, check=False)
    finally:
        os.unlink(path)
    out = (res.stdout + res.stderr).replace(path, "<manifest>")
    unknown = [line for line in out.splitlines() if "Couldn't find schema for kind" in line
               and not any(" kind %s " % k in line for k in crd_kinds)]
    if res.returncode != 0 or unknown:
        raise SchemaError("kubernetes-validate -k %s%s failed (rc %d):\n%s"
                          % (version, " --strict" if strict else "", res.returncode, out))
    return out


def _to_jsonschema(node, strict):
    if isinstance(node, list):
        return [_to_jsonschema(n, strict) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties"):
            out[key] = {k: _to_jsonschema(v, strict) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not") or key in ("allOf", "anyOf", "oneOf"):
            out[key] = _to_jsonschema(value, strict)
        elif key.startswith("x-kubernetes-") or key == "nullable":
            continue
        else:
            out[key] = value
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if (strict and "properties" in node and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


def crd_jsonschema(crd, version=None, strict=True):
    """JSON Schema of one served version of a CRD (the storage version if `version` is None)."""
    versions = crd["spec"]["versions"]
    chosen = [v for v in versions if (v["name"] == version if version else v.get("storage"))]
    if not chosen:
        names = [v["name"] for v in versions]
        raise SchemaError("CRD %s has no version %r (has %s)" % (crd["metadata"]["name"], version, names))
    schema = copy.deepcopy(chosen[0]["schema"]["openAPIV3Schema"])
    schema.setdefault("properties", {})
    # apiVersion/kind/metadata are validated by the server itself, not by the CRD schema
    schema["properties"].setdefault("apiVersion", {"type": "string"})
    schema["properties"].setdefault("kind", {"type": "string"})
    schema["properties"].setdefault("metadata", {"type": "object"})
    return _to_jsonschema(schema, strict)


def validate_custom_resource(cr, crd, strict=True):
    """Raise SchemaError listing every violation of `cr` against `crd`'s schema."""
    group = crd["spec"]["group"]
    api_group, version = cr.get("apiVersion", "").rpartition("/")[::2]
    if api_group != group or cr.get("kind") != crd["spec"]["names"]["kind"]:
        raise SchemaError("%s/%s is not a %s.%s" % (cr.get("apiVersion"), cr.get("kind"), crd["spec"]["names"]["kind"], group))
    schema = crd_jsonschema(crd, version, strict)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(cr), key=lambda e: list(e.absolute_path))
    if errors:
        raise SchemaError("; ".join("%s: %s" % (".".join(str(p) for p in e.absolute_path) or "<root>", e.message)
                                    for e in errors))


def load_yaml_documents(text):
    return [d for d in yaml.safe_load_all(text) if d]
