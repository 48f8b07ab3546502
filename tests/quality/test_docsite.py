"""The manual in the HTML docs: docs/docsite/ (extra-docs.yml + rst/) is generated from docs/**/*.md by
tools/docsite.py and committed, so the docs antsibull-docs builds from the tarball carry the guides, runbooks and
failure modes. A Markdown edit without a regeneration fails here; `antsibull-docs lint-collection-docs
--check-extra-docs-refs` (test_docs.py) checks the generated RST and its references."""
import sys

from qualitykit import ROOT, read_yaml, run


def test_docsite_is_generated_from_the_markdown():
    rc, out = run([sys.executable, ROOT / "tools" / "docsite.py", "--check"])
    assert rc == 0, out


def test_extra_docs_hold_the_platform_guides_runbooks_and_failure_modes():
    index = read_yaml("docs", "docsite", "extra-docs.yml")
    listed = {ref for section in index["sections"] for ref in section["toctree"]}
    runbooks = {"runbooks_" + p.stem.replace("-", "_") for p in (ROOT / "docs" / "runbooks").glob("*.md")
                if p.name != "README.md"}
    platforms = {"platforms_" + p.stem.replace("-", "_") for p in (ROOT / "docs" / "platforms").glob("*.md")}
    wanted = runbooks | platforms | {"runbooks", "failure_modes"}
    assert wanted <= listed, "missing from docs/docsite/extra-docs.yml: %s" % sorted(wanted - listed)
    for ref in listed:
        assert (ROOT / "docs" / "docsite" / "rst" / ("%s.rst" % ref)).is_file(), ref
