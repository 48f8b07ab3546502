# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The air-gap kit and a mirror that moves (issue 54, item 2), with playbooks/render_bundle.yml, validate.yml and
verify_evidence.yml - no test cluster (the API is a closed loopback port), no lab.

* The kit (mirror/) of vr200-rke2-ubuntu-inference is held against the bundle it sits in, read independently of the
  code that wrote it: the twelve upstream files against the mirror's own files (sha256sum -c in its folder), the
  charts against helmfile.yaml, the images against every string of the bundle's values and manifests that names the
  site's registry mirror; images.txt, image-copies.txt and skopeo-sync.yaml name the same images.
* The mirror moves: the same twelve files (the same sha256) in another folder give the same recipe digest (plan.yaml)
  and the same bundle (checksums.txt, its digest): the README used to record the controller's file:// path. Evidence
  validated with the files in one folder verifies with them in another and the registries moved to a mirror; a
  changed pin does not verify. The registries moved change the bundle (its values name them) - where the bundle
  digest should not hold, it does not.

The CRDs are the REAL v1.6.1 / v1.5.0 files (a mirror of the upstream data as stack_repositories.github_raw).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import yaml

from ansible_env import checkout_env
from clusterhelpers import down_kubeconfig
from stackhelpers import REPO, recap, stack_inventory, start_playbook
from upstreamdata import MISSING, ROOT, crd_mirror, unavailable

RECIPE = "vr200-rke2-ubuntu-inference"
BIN = os.path.dirname(sys.executable)
# the site's registries as `skopeo sync --scoped <mirror>` lays them out: <mirror>/<upstream host>/<path>
MIRROR = "mirror.test"
REGISTRIES = {"nvcr": MIRROR + "/nvcr.io", "ghcr": MIRROR + "/ghcr.io", "k8s": MIRROR + "/registry.k8s.io"}
# two chart repositories moved, the others upstream
REPOSITORIES = {"ngc": "oci://%s/charts/ngc" % MIRROR, "jetstack": "https://%s/charts/jetstack" % MIRROR}
UPSTREAM_HOSTS = {"nvcr.io", "ghcr.io", "registry.k8s.io"}


def _render_all(jobs):
    """render_bundle.yml (helmfile and flux) of the inference recipe for each (folder, github_raw, registries,
    repositories), in parallel; the bundle goes to <folder>/bundle. Returns {folder: output}; asserts every render
    passed."""
    procs = {}
    for where, raw, registries, repositories in jobs:
        inventory = stack_inventory(where, RECIPE, {"gpu_tray_stack_overrides": {}})
        site = {"stack_repositories": dict(repositories or {}, github_raw=str(raw))}
        if registries:
            site["stack_registries"] = registries
        procs[where] = start_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_bundle_dir=%s/bundle" % where,
                                      "-e", "gpu_tray_bundle_format=helmfile,flux", "-e", json.dumps(site),
                                      inventory=inventory)
    outputs = dict((where, proc.communicate()[0]) for where, proc in procs.items())
    failed = dict((str(w), out[-4000:]) for w, out in outputs.items() if procs[w].returncode != 0)
    assert not failed, failed
    return outputs


def _mirror(where):
    if MISSING:
        unavailable(MISSING)
    return crd_mirror(where / "github-raw", ROOT)


def _sha256(path):
    with open(str(path), "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _strings(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


def _name(ref):
    """An image reference without its tag and digest (a colon before the last / is a port)."""
    ref = ref.split("@", 1)[0]
    head, _, last = ref.rpartition("/")
    return (head + "/" if head else "") + last.split(":", 1)[0]


def test_the_kit_lists_every_upstream_file_chart_and_image_of_the_bundle(tmp_path):
    mirror = _mirror(tmp_path)
    out = _render_all([(tmp_path, mirror, REGISTRIES, REPOSITORIES)])[tmp_path]
    bundle = tmp_path / "bundle"
    kit = yaml.safe_load((bundle / "mirror" / "kit.yaml").read_text())
    assert (kit["recipe"], kit["recipe_digest"]) == (RECIPE, yaml.safe_load((bundle / "plan.yaml").read_text())[
        "recipe_digest"])
    assert "air-gap kit mirror/: 13 charts, 3 images (+9 image repositories the charts tag), 12 upstream files" in out

    # the upstream files: all twelve the mirror holds, by their path below it and the sha256 of the real bytes
    held = {}
    for base, _dirs, names in os.walk(mirror):
        for name in names:
            held[os.path.relpath(os.path.join(base, name), mirror)] = _sha256(os.path.join(base, name))
    assert len(held) == 12
    assert dict((f["path"], f["sha256"]) for f in kit["files"]) == held
    assert all(f["url"] == "https://raw.githubusercontent.com/" + f["path"] for f in kit["files"])
    check = subprocess.run(["sha256sum", "-c", str(bundle / "mirror" / "files.sha256")], cwd=mirror,
                           capture_output=True, text=True, check=False)
    assert check.returncode == 0 and check.stdout.count(": OK\n") == 12, check.stdout + check.stderr
    for path in held:       # and the bundle holds each of them
        assert _sha256(bundle / "components" / "agentgateway-crds-pre" / os.path.basename(path)) == held[path]

    # the charts: every release of helmfile.yaml that installs a chart from a repository, where the bundle takes it
    helmfile = yaml.safe_load((bundle / "helmfile.yaml").read_text().split("\n", 3)[-1])
    repos = dict((r["name"], ("oci://" if r.get("oci") else "") + r["url"]) for r in helmfile["repositories"])
    releases = set((r["chart"].split("/", 1)[1], r["version"], repos[r["chart"].split("/", 1)[0]])
                   for r in helmfile["releases"] if "version" in r)
    assert len(releases) == 13
    assert set((c["chart"], c["version"], c["mirror"]) for c in kit["charts"]) == releases
    # each chart's upstream is the catalog's default of its stack_repositories key (read here from the catalog file)
    with open(os.path.join(REPO, "plugins", "plugin_utils", "stack_data", "catalog.yml")) as handle:
        catalog = yaml.safe_load(handle)["sources"]
    for chart in kit["charts"]:
        key = chart["variable"].split(".", 1)[1]
        assert chart["repository"] == catalog["repositories"][key], chart
        assert chart["mirror"] == REPOSITORIES.get(key, catalog["repositories"][key]), chart
    rows = [line.split(" ") for line in (bundle / "mirror" / "charts.txt").read_text().splitlines()]
    assert rows == [[c["repository"], c["chart"], c["version"], c["mirror"]] for c in kit["charts"]]

    # the images: every string of the bundle's values and manifests that names the site's registry mirror ...
    named = {}
    for base, _dirs, names in os.walk(bundle / "components"):
        for name in names:
            path = os.path.join(base, name)
            with open(path) as handle:
                for doc in yaml.safe_load_all(handle):
                    for text in _strings(doc):
                        if MIRROR + "/" in text:
                            named.setdefault(text, set()).add(os.path.relpath(path, str(bundle)))
    assert named, "the bundle names no image at the mirror"
    assert not [t for t in named if not t.startswith(MIRROR + "/")], named
    # ... is in the kit, as an image (whole, or its name beside a tag the same object gives) or an image repository
    images = dict((_name(i["reference"]), i) for i in kit["images"])
    repositories = dict((r["mirror"], r) for r in kit["image_repositories"])
    for text, files in named.items():
        assert text in repositories or _name(text) in images, (text, files)
        if text in repositories:
            assert repositories[text]["file"] in files, (text, files)
    # and every kit entry is named by the bundle (whole, or its name), its tag or digest in the file that uses it
    names = set(named) | set(_name(text) for text in named)
    for item in kit["images"]:
        assert item["reference"] in named or _name(item["reference"]) in named, item
        pin = item["reference"][len(_name(item["reference"])) + 1:].split("@")
        for used in item["used_by"]:
            text = (bundle / used.split(": ", 1)[0]).read_text()
            assert all(part.split(":")[-1] in text for part in pin), (item, used)
    assert all(r["mirror"] in named for r in kit["image_repositories"])
    assert len(kit["images"]) == 3 and len(kit["image_repositories"]) == 9

    # images.txt: the upstream references, none at the mirror, each the mirror's path below <mirror>/<host>
    sources = (bundle / "mirror" / "images.txt").read_text().splitlines()
    assert sources == sorted(i["source"] for i in kit["images"]) and len(sources) == 3
    assert all(s.split("/", 1)[0] in UPSTREAM_HOSTS and MIRROR not in s for s in sources), sources
    assert "registry.k8s.io/networking/dranet@sha256:3248d8a520584100a5e87a2b92039591ea3b83a5492cc3e2d881b20d3b18ada6" \
        in sources
    pairs = [line.split(" ") for line in (bundle / "mirror" / "image-copies.txt").read_text().splitlines()]
    assert [p[0] for p in pairs] == sources
    for source, destination in pairs:
        assert _name(destination) == "%s/%s" % (MIRROR, _name(source)) and _name(destination) in names
    # skopeo-sync.yaml names the same images, and --scoped into the mirror is where the bundle expects them
    sync = yaml.safe_load((bundle / "mirror" / "skopeo-sync.yaml").read_text())
    flat = sorted("%s/%s%s%s" % (host, path, "@" if ref.startswith("sha256:") else ":", ref)
                  for host, spec in sync.items() for path, refs in spec["images"].items() for ref in refs)
    assert flat == sources
    assert kit["skopeo_sync_destination"] == MIRROR

    # checksums.txt covers the kit like every other file of the bundle
    sums = dict(reversed(line.split("  ", 1)) for line in (bundle / "checksums.txt").read_text().splitlines())
    kit_files = sorted(p for p in sums if p.startswith("mirror/"))
    assert kit_files == ["mirror/charts.txt", "mirror/files.sha256", "mirror/image-copies.txt", "mirror/images.txt",
                         "mirror/kit.yaml", "mirror/skopeo-sync.yaml"]
    assert all(sums[p] == _sha256(bundle / p) for p in kit_files)


def _playbook(home, kubeconfig, playbook, extra):
    env = checkout_env(REPO, without=("K8S_AUTH_*",), home=str(home), local_temp=True, bin_path=BIN,
                       K8S_AUTH_KUBECONFIG=kubeconfig)
    argv = [os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
            os.path.join(REPO, "playbooks", playbook),
            "-e", json.dumps(dict({"ansible_python_interpreter": sys.executable, "gpu_tray_recipe": RECIPE,
                                   "gpu_tray_stack_use_nodewright": True}, **extra))]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)


def test_moving_the_mirror_keeps_the_recipe_digest_the_bundle_and_the_evidence(tmp_path):
    """The same twelve upstream files (the same sha256) in another folder were "a changed recipe" to verify and
    another bundle (issue 54). Renders with the mirror in two folders write the same recipe digest and the same bundle
    (checksums.txt and with it the bundle digest, the kit included); a third, with the registries and two chart
    repositories moved to a site mirror, keeps the recipe digest and changes the bundle (its values and sources name
    the mirror). Evidence of a validation with the files in the first folder verifies with them in the second and
    everything else moved; with a changed pin it does not."""
    one, two, moved = tmp_path / "one", tmp_path / "two", tmp_path / "moved"
    for where in (one, two, moved):
        where.mkdir()
    first = _mirror(one)
    shutil.copytree(first, str(two / "github-raw"), symlinks=True)
    outputs = _render_all([(one, first, None, None), (two, two / "github-raw", None, None),
                           (moved, first, REGISTRIES, REPOSITORIES)])
    assert all(recap(out)["failed"] == 0 for out in outputs.values())
    plans = [yaml.safe_load((where / "bundle" / "plan.yaml").read_text()) for where in (one, two, moved)]
    digest = plans[0]["recipe_digest"]
    assert [p["recipe_digest"] for p in plans] == [digest] * 3 and plans[0]["recipe"] == RECIPE
    sums = [(where / "bundle" / "checksums.txt").read_text() for where in (one, two, moved)]
    # the mirror's folder is no part of the bundle: byte for byte the same files, the README's sources upstream
    assert sums[0] == sums[1]
    assert str(one) not in (one / "bundle" / "README.md").read_text()
    assert (one / "bundle" / "mirror" / "kit.yaml").read_bytes() == (two / "bundle" / "mirror" / "kit.yaml").read_bytes()
    # the registries are: the values, the kit's destinations, and so the bundle digest change
    assert sums[2] != sums[0]
    changed = set(line.split("  ", 1)[1] for line in set(sums[2].splitlines()) ^ set(sums[0].splitlines()))
    assert {"components/gpu-operator/values.yaml", "components/dranet/dranet.yaml", "helmfile.yaml",
            "mirror/kit.yaml", "mirror/image-copies.txt"} <= changed, sorted(changed)
    assert not [p for p in changed if p.startswith("components/agentgateway-crds-pre/")], sorted(changed)

    # validate (the API down: its readiness phase stops, the evidence is written) with the files in the first folder
    kubeconfig = str(tmp_path / "kubeconfig")
    down_kubeconfig(kubeconfig)
    report = tmp_path / "report"
    res = _playbook(tmp_path, kubeconfig, "validate.yml", {
        "gpu_tray_report_dir": str(report), "gpu_tray_validate_phases": ["readiness"],
        "stack_repositories": {"github_raw": first}})
    assert res.returncode == 2 and "readiness-stopped" in res.stdout, res.stdout[-3000:]
    statement = json.loads((report / "validation" / "summary-bundle" / "statement.intoto.json").read_text())
    assert statement["subject"] == [{"name": "recipe:%s" % RECIPE, "digest": {"sha256": digest}}], statement["subject"]
    # verify with the files in the second folder, and the registries and chart repositories at a site mirror
    verify = {"verify_evidence_path": str(report / "validation"),
              "stack_repositories": dict(REPOSITORIES, github_raw=str(two / "github-raw")),
              "stack_registries": REGISTRIES}
    res = _playbook(tmp_path, kubeconfig, "verify_evidence.yml", verify)
    assert res.returncode == 0 and "holds: " in res.stdout and "the recipe digest is the recipe's today" in res.stdout, \
        res.stdout[-3000:]
    # a pin is what the digest is of: another chart version does not verify
    res = _playbook(tmp_path, kubeconfig, "verify_evidence.yml", dict(
        verify, gpu_tray_stack_overrides={"nfd": {"version": "0.19.1"}}))
    assert res.returncode != 0 and "recipe digest %s recorded, the recipe resolves to " % digest in res.stdout, \
        res.stdout[-3000:]
