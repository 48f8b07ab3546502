"""The changelog (antsibull-changelog): fragments lint clean, every fragment is folded into the release of the
galaxy.yml version, and CHANGELOG.md / CHANGELOG.rst are what antsibull-changelog generates from
changelogs/changelog.yaml (so nobody edits them by hand). `make changelog` fixes the last two."""
import pytest
import yaml

from qualitykit import BIN, ROOT, read_yaml, run

TOOL = BIN / "antsibull-changelog"
CHANGES = read_yaml("changelogs", "changelog.yaml")
CONFIG = read_yaml("changelogs", "config.yaml")
VERSION = read_yaml("galaxy.yml")["version"]


def test_changelog_lint():
    rc, out = run([TOOL, "lint"])
    assert rc == 0 and not out.strip(), out


def test_every_fragment_is_in_the_release():
    release = CHANGES["releases"].get(VERSION)
    assert release, "changelogs/changelog.yaml has no release %s (galaxy.yml version): run make changelog" % VERSION
    fragments = sorted(p.name for p in (ROOT / "changelogs" / "fragments").iterdir() if p.suffix in (".yml", ".yaml"))
    assert fragments, "no changelog fragments"
    missing = sorted(set(fragments) - set(release.get("fragments", [])))
    assert not missing, "fragments not in the changelog of %s: %s - run make changelog" % (VERSION, missing)


def test_released_entries_match_the_fragments():
    """An edited fragment must be folded in again (make changelog refreshes the entries)."""
    changes = CHANGES["releases"][VERSION]["changes"]
    for path in sorted((ROOT / "changelogs" / "fragments").glob("*.yml")):
        for section, entries in yaml.safe_load(path.read_text()).items():
            entries = [entries] if isinstance(entries, str) else entries
            recorded = changes.get(section, [])
            recorded = [recorded] if isinstance(recorded, str) else recorded
            stale = [e for e in entries if e.strip() not in [r.strip() for r in recorded]]
            assert not stale, "%s: %s entries differ from changelog.yaml - run make changelog" % (path.name, section)


@pytest.mark.parametrize("output", CONFIG["output"], ids=lambda o: o["file"])
def test_generated_changelog_is_current(output, tmp_path):
    generated = tmp_path / output["file"]
    rc, out = run([TOOL, "generate", "--output", str(generated), "--output-format", output["format"]])
    assert rc == 0, out
    committed = (ROOT / output["file"]).read_text()
    assert committed == generated.read_text(), "%s differs from antsibull-changelog generate: run make changelog" % (
        output["file"])
