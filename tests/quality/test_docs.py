"""The collection reference is antsibull-docs' to build (`make docs`, tools/build-docs.sh); this gate is its linter.

`antsibull-docs lint-collection-docs --plugin-docs` renders every module, filter and role entry point the way the
docsite does and validates the documentation schema, the semantic markup (O(), V(), M(), RV() ...) and every
reference to a plugin or option of this collection or of the collections it depends on.
"""
import pathlib
import subprocess
import sys

from ansible_env import checkout_env

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(sys.executable).parent


def test_antsibull_docs_lint_collection_docs():
    env = checkout_env(ROOT, config=False, home=False, nocolor=False, bin_path=str(BIN))
    proc = subprocess.run([str(BIN / "antsibull-docs"), "lint-collection-docs", "--plugin-docs",
                           "--validate-collection-refs", "all", "--disallow-unknown-collection-refs",
                           "--check-extra-docs-refs", "."],
                          cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout
