"""Collection-level quality gates, run as part of the single `make test` pytest session.

Each test runs the real tool and fails with the tool's own output, so a lint or sanity regression reads the
same here as on a developer's terminal.
"""
import subprocess
import tarfile

import pytest
import yaml

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, build, read_yaml, run


def module_names():
    return sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__")


def test_yamllint():
    rc, out = run([str(BIN / "yamllint"), "-s", "."])
    assert rc == 0, out


@pytest.mark.static
def test_ansible_lint_production_profile():
    config = read_yaml(".ansible-lint")
    assert config["profile"] == "production"
    assert not config.get("skip_list") and not config.get("warn_list"), "no skip or warn list: use a local noqa with a reason"
    rc, out = run([str(BIN / "ansible-lint"), "--offline", "--profile", "production", "--nocolor"])
    assert rc == 0, out


def shell_scripts():
    """Every shell script git knows of, by shebang (lab doubles, tools, CI), wherever it lives."""
    proc = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, stdout=subprocess.PIPE,
                          text=True, check=True)
    found = []
    for name in proc.stdout.split():
        path = ROOT / name
        if not path.is_file() or path.is_symlink():
            continue
        with open(path, "rb") as handle:
            first = handle.readline(200)
        if first.startswith(b"#!") and (b"sh" in first.split(b"/")[-1].split()[0] or b"bash" in first):
            found.append(name)
    return sorted(found)


def test_shellcheck_all_shell_scripts():
    scripts = shell_scripts()
    assert ".ci/run" in scripts and "tools/setup.sh" in scripts, scripts
    rc, out = run(["shellcheck", "--severity=style"] + scripts)
    assert rc == 0, out


@pytest.mark.static
def test_ansible_test_sanity():
    rc, out = run(["bash", "tools/sanity.sh"])
    assert rc == 0, out[-20000:]


def test_build_excludes_dev_content(tmp_path):
    with tarfile.open(build(tmp_path)) as tar:
        names = tar.getnames()
    forbidden = (".venv", ".collections", ".cache", ".git", "lab", "molecule", "tests", "tools", ".ci", ".config",
                 "build", "output", "gpu-tray-report")
    leaked = sorted({n for n in names if n.split("/")[0] in forbidden or "__pycache__" in n})
    assert not leaked, "build_ignore lets dev content into the tarball: %s" % leaked[:20]
    for required in ("MANIFEST.json", "FILES.json", "meta/runtime.yml", "README.md"):
        assert required in names, "%s missing from the tarball" % required
    for mod in module_names():
        assert "plugins/modules/%s.py" % mod in names


def host_module_names():
    """Modules that take the shared host paths (doc fragment gpu_tray.cluster.host_paths)."""
    return [m for m in module_names()
            if "gpu_tray.cluster.host_paths" in (ROOT / "plugins" / "modules" / ("%s.py" % m)).read_text()]


def test_action_group_lists_every_host_module():
    runtime = read_yaml("meta", "runtime.yml")
    group = set(runtime["action_groups"]["host_checks"])
    assert {"tray_facts", "rdma_facts", "hugepage_check"} <= set(host_module_names())
    missing = [m for m in host_module_names() if m not in group]
    unknown = sorted(group - set(module_names()))
    assert not missing and not unknown, "action group drift: missing %s, unknown %s" % (missing, unknown)


@pytest.mark.parametrize("module", module_names())
def test_ansible_doc_renders(module):
    env = checkout_env(ROOT, config=False, home=False, nocolor=False)
    rc, out = run([str(BIN / "ansible-doc"), "gpu_tray.cluster.%s" % module], env=env)
    assert rc == 0, out
    assert "gpu_tray.cluster.%s" % module in out and "EXAMPLES" in out and "RETURN VALUES" in out, out[:2000]


def role_names():
    return sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())


@pytest.mark.parametrize("role", role_names())
def test_role_argument_spec_matches_defaults(role):
    """Every public default is documented in meta/argument_specs.yml and prefixed with the role name."""
    spec = read_yaml("roles", role, "meta", "argument_specs.yml")
    options = set(spec["argument_specs"]["main"]["options"])
    defaults_file = ROOT / "roles" / role / "defaults" / "main.yml"
    defaults = set(yaml.safe_load(defaults_file.read_text()) or {}) if defaults_file.exists() else set()
    assert defaults <= options, "defaults without an argument spec: %s" % sorted(defaults - options)
    unprefixed = sorted(o for o in options | defaults if not o.startswith(role + "_"))
    assert not unprefixed, "public variables must start with %s_: %s" % (role, unprefixed)
    vars_file = ROOT / "roles" / role / "vars" / "main.yml"
    internal = set(yaml.safe_load(vars_file.read_text()) or {}) if vars_file.exists() else set()
    bad = sorted(v for v in internal if not v.startswith("__%s_" % role))
    assert not bad, "internal variables must start with __%s_: %s" % (role, bad)
