"""galaxy-importer on the built tarball, as Galaxy runs it on upload: ansible-doc over every plugin, flake8 over
every Python file, ansible-lint (production profile) over the collection, the changelog and role-README checks.

Galaxy stops an import on an ERROR ("No role readme found") and shows every WARNING line on the collection's
page, so both fail here. Differences from Galaxy, all about where it runs, none about what is checked:
  * no container engine here: ansible-test is not run by the importer (RUN_ANSIBLE_TEST=False; tools/sanity.sh
    runs ansible-test sanity in tests/quality/test_collection.py) and no local image is built;
  * the dependency collections (galaxy.yml `dependencies`, and awx.awx for playbooks/awx_configure.yml) are put on
    the importer's Python path from .collections (the importer points ANSIBLE_COLLECTIONS_PATH at its own
    extraction directory), so ansible-lint's syntax check resolves their modules as on an installed system;
  * nothing of this checkout's ansible.cfg or ANSIBLE_* environment leaks in.
"""
import os
import pathlib
import subprocess
import sys
import tarfile

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent

CONFIG = """\
[galaxy-importer]
RUN_ANSIBLE_DOC = True
RUN_FLAKE8 = True
RUN_ANSIBLE_LINT = True
OFFLINE_ANSIBLE_LINT = True
CHECK_CHANGELOG = True
RUN_ANSIBLE_TEST = False
ANSIBLE_TEST_LOCAL_IMAGE = False
LOCAL_IMAGE_DOCKER = False
ANSIBLE_LOCAL_TMP = {tmp}/ansible-tmp
TMP_ROOT_DIR = {tmp}/importer
"""


def dependency_collections():
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    required = yaml.safe_load((ROOT / "requirements.yml").read_text())["collections"]
    return sorted(set(galaxy["dependencies"]) | {c["name"] for c in required})


def test_every_role_has_a_readme():
    missing = [p.name for p in (ROOT / "roles").iterdir() if p.is_dir() and not (p / "README.md").is_file()]
    assert not missing, "Galaxy refuses the import without roles/<role>/README.md: %s" % missing


def test_galaxy_importer_on_the_built_tarball_reports_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "GALAXY_IMPORTER_", "PYTHONPATH"))}
    env["PATH"] = "%s:%s" % (BIN, env.get("PATH", "/usr/bin:/bin"))
    env["ANSIBLE_HOME"] = str(tmp_path / "ansible-home")
    build = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), "."],
                           cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    assert build.returncode == 0, build.stdout
    tarball, = tmp_path.glob("gpu_tray-cluster-*.tar.gz")

    deps = tmp_path / "deps"
    for name in dependency_collections():
        source = ROOT / ".collections" / "ansible_collections" / name.replace(".", "/")
        assert (source / "MANIFEST.json").is_file(), "%s missing from .collections (make setup)" % name
        link = deps / "ansible_collections" / name.replace(".", "/")
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(source)
    (tmp_path / "importer").mkdir()
    config = tmp_path / "galaxy-importer.cfg"
    config.write_text(CONFIG.format(tmp=tmp_path))
    env.update(GALAXY_IMPORTER_CONFIG=str(config), PYTHONPATH=str(deps))

    proc = subprocess.run([str(BIN / "python"), "-m", "galaxy_importer.main", str(tarball)], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False, timeout=900)
    out = proc.stdout
    assert proc.returncode == 0, out[-20000:]
    assert "Importer processing completed successfully" in out, out[-20000:]
    # the three checks really ran (a missing flake8 or ansible-lint is a warning too, but say it plainly)
    assert "Getting doc strings via ansible-doc" in out, out[-5000:]
    assert "Linting module tray_state via flake8" in out, out[-5000:]
    assert "...ansible-lint run complete" in out, out[-5000:]
    reported = [line for line in out.splitlines() if line.startswith(("WARNING", "ERROR", "CRITICAL"))
                or "Traceback" in line]
    assert not reported, "galaxy-importer reports:\n" + "\n".join(reported)


def test_tarball_ships_the_license_and_leaves_out_repository_only_docs(tmp_path):
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())
    # no public home yet: no placeholder addresses (the HTML docs made buttons of them); `repository` is required
    # by Galaxy and holds a placeholder that is no URL (tools/build-docs.sh drops it from the link buttons)
    assert "example.invalid" not in (ROOT / "galaxy.yml").read_text()
    assert galaxy["repository"] and not {"documentation", "issues", "homepage"} & set(galaxy), galaxy
    assert galaxy["license"] == ["GPL-3.0-or-later"]
    copying = (ROOT / "COPYING").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in copying and "Version 3, 29 June 2007" in copying
    proc = subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), "."],
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    assert proc.returncode == 0, proc.stdout
    tarball, = tmp_path.glob("gpu_tray-cluster-*.tar.gz")
    with tarfile.open(tarball) as tar:
        names = set(tar.getnames())
    assert {"COPYING", "requirements.txt", "meta/ee-requirements.txt", "docs/docsite/extra-docs.yml"} <= names
    repository_only = {"docs/lab.md", "docs/lab-hardware.md", "docs/testing.md", "docs/performance.md"}
    assert not repository_only & names, "docs about what the tarball leaves out: %s" % sorted(repository_only & names)
