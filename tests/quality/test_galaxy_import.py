"""galaxy-importer on the built tarball, as Galaxy runs it on upload: ansible-doc over every plugin, flake8 over
every Python file, ansible-lint (production profile, --offline) over the collection, the changelog and role-README
checks.

Galaxy stops an import on an ERROR ("No role readme found") and shows every WARNING line on the collection's
page, so both fail here. As on Galaxy, the importer runs with its own collections search path (its extraction
directory) and no dependency collection installed: ansible-lint's syntax check resolves the dependency
collections' modules through the mock_modules of the shipped .ansible-lint (mocks come after installed
collections, so `make lint` still checks the real argument specs); the tests below keep that list exact. The
differences from Galaxy are about where it runs, none about what is checked:
  * no container engine here: ansible-test is not run by the importer (RUN_ANSIBLE_TEST=False; tools/sanity.sh
    runs ansible-test sanity in tests/quality/test_collection.py) and no local image is built;
  * nothing of this checkout's ansible.cfg or ANSIBLE_* environment leaks in.
"""
import os
import re
import tarfile

import pytest
import yaml

from qualitykit import BIN, ROOT, build, read_yaml, run

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


# the dependency collections whose modules the shipped content calls (galaxy.yml dependencies, and awx.awx for
# playbooks/awx_configure.yml)
DEPENDENCIES = ("ansible.posix", "ansible.utils", "awx.awx", "community.general", "kubernetes.core")
MODULE_CALL = re.compile(r"^\s*-?\s*((%s)\.[a-z0-9_]+):" % "|".join(re.escape(d) for d in DEPENDENCIES), re.M)


def modules_called():
    """Every module of a dependency collection that a shipped role or playbook calls as a task."""
    called = set()
    for path in list((ROOT / "roles").rglob("*.yml")) + list((ROOT / "playbooks").rglob("*.yml")):
        called.update(match.group(1) for match in MODULE_CALL.finditer(path.read_text()))
    return called


def test_lint_config_mocks_exactly_the_dependency_modules_called():
    """A mock hides nothing only if it names a real module (a misspelt one would pass Galaxy's syntax check): each
    mock is a module of the installed dependency collection, and each such module the collection calls is mocked
    (otherwise Galaxy's syntax check stops at it)."""
    mocks = read_yaml(".ansible-lint")["mock_modules"]
    assert mocks == sorted(set(mocks)), "keep mock_modules sorted and unique: %s" % mocks
    for name in mocks:
        namespace, collection, module = name.split(".")
        plugins = ROOT / ".collections" / "ansible_collections" / namespace / collection / "plugins"
        runtime = yaml.safe_load((plugins.parent / "meta" / "runtime.yml").read_text()) or {}
        redirect = (runtime.get("plugin_routing", {}).get("modules", {}).get(module) or {}).get("redirect")
        assert (plugins / "modules" / ("%s.py" % module)).is_file() or redirect, \
            "mock_modules: %s is no module of the installed %s.%s" % (name, namespace, collection)
    assert modules_called(), "no dependency module found: the pattern is broken"
    missing = sorted(modules_called() - set(mocks))
    assert not missing, "called but not in .ansible-lint mock_modules (Galaxy's import would warn): %s" % missing
    unused = sorted(set(mocks) - modules_called())
    assert not unused, "mocked but never called (remove from mock_modules): %s" % unused
    build_ignore = read_yaml("galaxy.yml")["build_ignore"]
    assert ".ansible-lint" not in build_ignore, "Galaxy's ansible-lint reads the shipped .ansible-lint"


def test_every_role_has_a_readme():
    missing = [p.name for p in (ROOT / "roles").iterdir() if p.is_dir() and not (p / "README.md").is_file()]
    assert not missing, "Galaxy refuses the import without roles/<role>/README.md: %s" % missing


@pytest.mark.static
def test_galaxy_importer_on_the_built_tarball_reports_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "GALAXY_IMPORTER_", "PYTHONPATH"))}
    env["PATH"] = "%s:%s" % (BIN, env.get("PATH", "/usr/bin:/bin"))
    env["ANSIBLE_HOME"] = str(tmp_path / "ansible-home")
    tarball = build(tmp_path, env=env)
    (tmp_path / "importer").mkdir()
    config = tmp_path / "galaxy-importer.cfg"
    config.write_text(CONFIG.format(tmp=tmp_path))
    env["GALAXY_IMPORTER_CONFIG"] = str(config)

    rc, out = run([BIN / "python", "-m", "galaxy_importer.main", tarball], cwd=tmp_path, env=env, timeout=900)
    assert rc == 0, out[-20000:]
    assert "Importer processing completed successfully" in out, out[-20000:]
    # the three checks really ran (a missing flake8 or ansible-lint is a warning too, but say it plainly)
    assert "Getting doc strings via ansible-doc" in out, out[-5000:]
    assert "Linting module tray_state via flake8" in out, out[-5000:]
    assert "...ansible-lint run complete" in out, out[-5000:]
    reported = [line for line in out.splitlines() if line.startswith(("WARNING", "ERROR", "CRITICAL"))
                or "Traceback" in line]
    assert not reported, "galaxy-importer reports:\n" + "\n".join(reported)


def test_tarball_ships_the_license_and_leaves_out_repository_only_docs(tmp_path):
    galaxy = read_yaml("galaxy.yml")
    # no public home yet: no placeholder addresses (the HTML docs made buttons of them); `repository` is required
    # by Galaxy and holds a placeholder that is no URL (tools/build-docs.sh drops it from the link buttons)
    assert "example.invalid" not in (ROOT / "galaxy.yml").read_text()
    assert galaxy["repository"] and not {"documentation", "issues", "homepage"} & set(galaxy), galaxy
    assert galaxy["license"] == ["GPL-3.0-or-later"]
    copying = (ROOT / "COPYING").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in copying and "Version 3, 29 June 2007" in copying
    with tarfile.open(build(tmp_path)) as tar:
        names = set(tar.getnames())
    assert {"COPYING", "requirements.txt", "meta/ee-requirements.txt", "docs/docsite/extra-docs.yml"} <= names
    repository_only = {"docs/lab.md", "docs/lab-hardware.md", "docs/testing.md", "docs/performance.md", "CONTRIBUTING.md"}
    assert not repository_only & names, "docs about what the tarball leaves out: %s" % sorted(repository_only & names)
