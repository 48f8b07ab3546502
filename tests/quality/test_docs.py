"""The collection reference is antsibull-docs' to build (`make docs`, tools/build-docs.sh); this gate is its linter.

`antsibull-docs lint-collection-docs --plugin-docs` renders every module, filter and role entry point the way the
docsite does and validates the documentation schema, the semantic markup (O(), V(), M(), RV() ...) and every
reference to a plugin or option of this collection or of the collections it depends on.
"""
import pytest

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, run


@pytest.mark.static
def test_antsibull_docs_lint_collection_docs():
    env = checkout_env(ROOT, config=False, home=False, nocolor=False, bin_path=str(BIN))
    rc, out = run([BIN / "antsibull-docs", "lint-collection-docs", "--plugin-docs", "--validate-collection-refs", "all",
                   "--disallow-unknown-collection-refs", "--check-extra-docs-refs", "."], env=env)
    assert rc == 0 and not out.strip(), out
