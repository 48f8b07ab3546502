"""What the quality tests share: the checkout (ROOT), the toolchain's bin directory (BIN), a command's exit code with
its output, a YAML file of the checkout and a Python file of it loaded as a module."""
import importlib.util
import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent


def run(argv, cwd=ROOT, **kwargs):
    """(exit code, stdout and stderr as one text) of ``argv`` (paths allowed) run in ``cwd``."""
    proc = subprocess.run([str(arg) for arg in argv], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False, **kwargs)
    return proc.returncode, proc.stdout


def read_yaml(*parts):
    """The YAML file ROOT/<parts>, parsed."""
    return yaml.safe_load(ROOT.joinpath(*parts).read_text())


def load(*parts, name=None):
    """The Python file ROOT/<parts> (a tool, a plugin file) as a module of its own, no package imported."""
    spec = importlib.util.spec_from_file_location(name or pathlib.Path(*parts).stem, ROOT.joinpath(*parts))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(dest, env=None):
    """`ansible-galaxy collection build` of the checkout into ``dest``: the one tarball's path."""
    rc, out = run([BIN / "ansible-galaxy", "collection", "build", "--output-path", dest, ROOT], env=env)
    assert rc == 0, out
    tarball, = pathlib.Path(dest).glob("gpu_tray-cluster-*.tar.gz")
    return tarball


def yaml_files(*tops):
    """(path, parsed document) of every .yml file under ROOT/<top>, for each of ``tops``."""
    for top in tops:
        for path in sorted((ROOT / top).rglob("*.yml")):
            yield path, yaml.safe_load(path.read_text())


def mappings(node):
    """Every mapping of a parsed YAML document, depth first (plays, blocks, tasks and all below them)."""
    if isinstance(node, dict):
        yield node
        node = list(node.values())
    if isinstance(node, list):
        for item in node:
            yield from mappings(item)
