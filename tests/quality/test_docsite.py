"""The manual in the HTML docs: docs/docsite/ (extra-docs.yml + rst/) is generated from docs/**/*.md by
tools/docsite.py and committed, so the docs antsibull-docs builds from the tarball carry the guides, runbooks and
failure modes. A Markdown edit without a regeneration fails here; `antsibull-docs lint-collection-docs
--check-extra-docs-refs` (test_docs.py) checks the generated RST and its references."""
import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_docsite_is_generated_from_the_markdown():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "docsite.py"), "--check"], cwd=ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    assert proc.returncode == 0, proc.stdout


def test_extra_docs_hold_the_platform_guides_runbooks_and_failure_modes():
    index = yaml.safe_load((ROOT / "docs" / "docsite" / "extra-docs.yml").read_text())
    listed = {ref for section in index["sections"] for ref in section["toctree"]}
    runbooks = {"runbooks_" + p.stem.replace("-", "_") for p in (ROOT / "docs" / "runbooks").glob("*.md")
                if p.name != "README.md"}
    platforms = {"platforms_" + p.stem.replace("-", "_") for p in (ROOT / "docs" / "platforms").glob("*.md")}
    wanted = runbooks | platforms | {"runbooks", "failure_modes"}
    assert wanted <= listed, "missing from docs/docsite/extra-docs.yml: %s" % sorted(wanted - listed)
    for ref in listed:
        assert (ROOT / "docs" / "docsite" / "rst" / ("%s.rst" % ref)).is_file(), ref
