"""The execution environment: `ansible-builder create` turns execution-environment.yml into a build context
(no container engine is needed for that, and none runs here) - and refuses to without the built tarball (its galaxy
requirements are build/ee-requirements.yml, which tools/ee_requirements.py writes beside the tarball) - and
ansible-builder's own introspection finds the Python dependencies this collection declares in
meta/execution-environment.yml."""
import re
import shutil
import sys

import yaml

from qualitykit import BIN, ROOT, read_yaml, run
from qualitykit import build as build_tarball

EE = read_yaml("execution-environment.yml")
VERSION = read_yaml("galaxy.yml")["version"]
TARBALL = "gpu_tray-cluster-%s.tar.gz" % VERSION
CREATE = [BIN / "ansible-builder", "create", "-f", "execution-environment.yml", "--context", "context",
          "--output-filename", "Containerfile"]
EE_REQUIREMENTS = [sys.executable, ROOT / "tools" / "ee_requirements.py", "--build-dir"]


def build(directory):
    """make build into ``directory``/build: the tarball and ee-requirements.yml beside it."""
    build_tarball(directory / "build")
    rc, out = run(EE_REQUIREMENTS + [directory / "build"], cwd=directory)
    assert rc == 0, out
    return yaml.safe_load((directory / "build" / "ee-requirements.yml").read_text())["collections"]


def test_definition_names_this_version_and_the_pinned_toolchain(tmp_path):
    assert EE["version"] == 3
    assert EE["dependencies"]["galaxy"] == "build/ee-requirements.yml"
    collections = build(tmp_path)
    galaxy = [c["name"] for c in collections]
    assert "collections/%s" % TARBALL in galaxy, "the EE would install another version than galaxy.yml's"
    assert [f["src"] for f in EE["additional_build_files"]] == ["build/%s" % TARBALL]
    pins = dict(line.split("==") for line in (ROOT / "requirements-dev.txt").read_text().split()
                if "==" in line and not line.startswith("#"))
    assert EE["dependencies"]["ansible_core"]["package_pip"] == "ansible-core==%s" % pins["ansible-core"]
    assert EE["dependencies"]["ansible_runner"]["package_pip"] == "ansible-runner==%s" % pins["ansible-runner"]
    required = read_yaml("requirements.yml")["collections"]
    needed = {c["name"] for c in required if c["name"] != "awx.awx"}   # awx.awx: the workstation's awx_configure
    assert needed <= set(galaxy), "dependency collections missing from the EE: %s" % sorted(needed - set(galaxy))
    # the dependency collections at exactly the versions the suite runs with (.collections, tools/setup.sh)
    pinned = dict((c["name"], c.get("version")) for c in collections if not c["name"].startswith("collections/"))
    assert sorted(pinned) == sorted(read_yaml("galaxy.yml")["dependencies"])
    for name, version in pinned.items():
        manifest = ROOT / ".collections" / "ansible_collections" / name.replace(".", "/") / "MANIFEST.json"
        tested = yaml.safe_load(manifest.read_text())["collection_info"]["version"]
        assert version == "==%s" % tested, "%s: the EE takes %s, the suite tests %s" % (name, version, tested)
    # jmespath: community.general.json_query in the stack role's readiness gates (every gate fails without it)
    python = EE["dependencies"]["python"]
    for lib in ("kubernetes", "jmespath", "netaddr"):
        assert any(p.startswith(lib + "==") and p == "%s==%s" % (lib, pins[lib]) for p in python), (lib, python)
    assert any(line.startswith("jmespath") for line in (ROOT / "meta" / "ee-requirements.txt").read_text().splitlines())
    # helm and helm-diff are checked against sha256 sums pinned in the definition, not fetched beside the archive
    steps = "\n".join(EE["additional_build_steps"]["append_final"])
    for arg in ("HELM_SHA256_amd64", "HELM_DIFF_SHA256_amd64"):
        assert re.search(r"ARG %s=[0-9a-f]{64}$" % arg, steps, re.M), arg
    assert steps.count("sha256sum -c -") == 2 and ".sha256sum" not in steps and "checksums.txt" not in steps
    build_sh = (ROOT / "tests" / "cluster" / "build.sh").read_text()
    helm = re.search(r'^HELM_VERSION=\$\{HELM_VERSION:-([0-9.]+)\}', build_sh, re.M)
    assert "ARG HELM_VERSION=%s" % helm.group(1) in EE["additional_build_steps"]["append_final"], \
        "the EE's helm differs from the one the test cluster runs the stack role with"


def test_ansible_builder_create_fails_without_the_built_tarball(tmp_path):
    """Before `make build` there is no image to describe: create stops and names what is missing, never "Complete!"."""
    shutil.copy(ROOT / "execution-environment.yml", tmp_path)
    rc, out = run(CREATE, cwd=tmp_path)
    assert rc != 0 and "Complete!" not in out, out
    assert "build/ee-requirements.yml does not exist" in out, out
    # the generator refuses to write the requirements without the tarball
    (tmp_path / "build").mkdir()
    rc, out = run(EE_REQUIREMENTS + [tmp_path / "build"], cwd=tmp_path)
    assert rc == 1 and "%s is not built: run make build" % (tmp_path / "build" / TARBALL) in out, out
    assert not (tmp_path / "build" / "ee-requirements.yml").exists()


def test_ansible_builder_create_writes_a_build_context(tmp_path):
    shutil.copy(ROOT / "execution-environment.yml", tmp_path)
    build(tmp_path)
    rc, out = run(CREATE, cwd=tmp_path)
    assert rc == 0 and "No matches" not in out and "Complete!" in out, out
    context = tmp_path / "context"
    containerfile = (context / "Containerfile").read_text()
    assert (context / "_build" / "collections" / TARBALL).is_file(), "the collection tarball is not in the context"
    galaxy = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert {"name": "collections/%s" % TARBALL, "type": "file"} in galaxy["collections"]
    requirements = (context / "_build" / "requirements.txt").read_text()
    assert "kubernetes==" in requirements and "jmespath==" in requirements, requirements
    for step in ("ansible-galaxy collection install", "install -m 0755 /tmp/linux-${TARGETARCH}/helm",
                 "mkdir -p /var/lib/gpu-tray-report && chgrp 0 /var/lib/gpu-tray-report",
                 "helm-diff-linux-${TARGETARCH}.tgz", "sha256sum -c -", "helm plugin list | grep -q '^diff'",
                 "ansible-core==", "ansible-runner=="):
        assert step in containerfile, "%s missing from the Containerfile" % step


def test_introspection_reads_the_collection_python_dependencies():
    meta = read_yaml("meta", "execution-environment.yml")
    assert meta["dependencies"]["python"] == "meta/ee-requirements.txt"
    assert "system" not in meta["dependencies"], "helm is downloaded, never a bindep package (kubernetes.core#1141)"
    rc, out = run([BIN / "ansible-builder", "introspect", "--sanitize", ROOT / ".collections"])
    assert rc == 0, out
    ours = sorted(line.split("#")[0].strip(" '-") for line in out.splitlines()
                  if "from collection gpu_tray.cluster" in line)
    declared = sorted(line.strip() for line in (ROOT / "meta" / "ee-requirements.txt").read_text().splitlines()
                      if line.strip() and not line.startswith("#"))
    assert ours == declared and any(d.startswith("kubernetes") for d in ours), out
