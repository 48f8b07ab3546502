"""The execution environment: `ansible-builder create` turns execution-environment.yml into a build context
(no container engine is needed for that, and none runs here), and ansible-builder's own introspection finds the
Python dependencies this collection declares in meta/execution-environment.yml."""
import pathlib
import re
import shutil
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent
EE = yaml.safe_load((ROOT / "execution-environment.yml").read_text())
VERSION = yaml.safe_load((ROOT / "galaxy.yml").read_text())["version"]
TARBALL = "gpu_tray-cluster-%s.tar.gz" % VERSION


def run(argv, cwd):
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    return proc.returncode, proc.stdout


def test_definition_names_this_version_and_the_pinned_toolchain():
    assert EE["version"] == 3
    galaxy = [c["name"] for c in EE["dependencies"]["galaxy"]["collections"]]
    assert "collections/%s" % TARBALL in galaxy, "execution-environment.yml installs another version than galaxy.yml's"
    assert [f["src"] for f in EE["additional_build_files"]] == ["build/%s" % TARBALL]
    pins = dict(line.split("==") for line in (ROOT / "requirements-dev.txt").read_text().split()
                if "==" in line and not line.startswith("#"))
    assert EE["dependencies"]["ansible_core"]["package_pip"] == "ansible-core==%s" % pins["ansible-core"]
    assert EE["dependencies"]["ansible_runner"]["package_pip"] == "ansible-runner==%s" % pins["ansible-runner"]
    required = yaml.safe_load((ROOT / "requirements.yml").read_text())["collections"]
    needed = {c["name"] for c in required if c["name"] != "awx.awx"}   # awx.awx: the workstation's awx_configure
    assert needed <= set(galaxy), "dependency collections missing from the EE: %s" % sorted(needed - set(galaxy))
    build_sh = (ROOT / "tests" / "cluster" / "build.sh").read_text()
    helm = re.search(r'^HELM_VERSION=\$\{HELM_VERSION:-([0-9.]+)\}', build_sh, re.M)
    assert "ARG HELM_VERSION=%s" % helm.group(1) in EE["additional_build_steps"]["append_final"], \
        "the EE's helm differs from the one the test cluster runs the stack role with"


def test_ansible_builder_create_writes_a_build_context(tmp_path):
    shutil.copy(ROOT / "execution-environment.yml", tmp_path)
    rc, out = run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path / "build"),
                   str(ROOT)], cwd=tmp_path)
    assert rc == 0, out
    rc, out = run([str(BIN / "ansible-builder"), "create", "-f", "execution-environment.yml", "--context", "context",
                   "--output-filename", "Containerfile"], cwd=tmp_path)
    assert rc == 0 and "No matches" not in out, out
    context = tmp_path / "context"
    containerfile = (context / "Containerfile").read_text()
    assert (context / "_build" / "collections" / TARBALL).is_file(), "the collection tarball is not in the context"
    galaxy = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert {"name": "collections/%s" % TARBALL, "type": "file"} in galaxy["collections"]
    assert "kubernetes==" in (context / "_build" / "requirements.txt").read_text()
    for step in ("ansible-galaxy collection install", "install -m 0755 /tmp/linux-${TARGETARCH}/helm",
                 "helm-diff-linux-${TARGETARCH}.tgz", "sha256sum -c -", "helm plugin list | grep -q '^diff'",
                 "ansible-core==", "ansible-runner=="):
        assert step in containerfile, "%s missing from the Containerfile" % step


def test_introspection_reads_the_collection_python_dependencies():
    meta = yaml.safe_load((ROOT / "meta" / "execution-environment.yml").read_text())
    assert meta["dependencies"]["python"] == "meta/ee-requirements.txt"
    assert "system" not in meta["dependencies"], "helm is downloaded, never a bindep package (kubernetes.core#1141)"
    rc, out = run([str(BIN / "ansible-builder"), "introspect", "--sanitize", str(ROOT / ".collections")], cwd=ROOT)
    assert rc == 0, out
    ours = sorted(line.split("#")[0].strip(" '-") for line in out.splitlines()
                  if "from collection gpu_tray.cluster" in line)
    declared = sorted(line.strip() for line in (ROOT / "meta" / "ee-requirements.txt").read_text().splitlines()
                      if line.strip() and not line.startswith("#"))
    assert ours == declared and any(d.startswith("kubernetes") for d in ours), out
