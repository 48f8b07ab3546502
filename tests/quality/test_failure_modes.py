"""docs/failure-modes.md is tested against the checks that exist: every `kind/name` it cites is a preflight check,
a check of the validation's trays phase, a conformance check, a module or a role of this collection, every
preflight, trays and conformance check has a row, and every runbook it links exists."""
import re

from qualitykit import ROOT

DOC = ROOT / "docs" / "failure-modes.md"
CITED = re.compile(r"`(preflight|trays|conformance|module|role)/([a-z0-9_-]+)`")
# the file whose CHECKS each kind of check is (controller rules in plugin_utils, the API host's in module_utils)
SOURCES = {"preflight": "plugin_utils/preflight", "trays": "plugin_utils/tray_validation",
           "conformance": "module_utils/conformance"}


def checks(module):
    """The CHECKS tuple of plugins/<module>.py, read as text (no collection import needed)."""
    source = (ROOT / "plugins" / ("%s.py" % module)).read_text()
    body = re.search(r"^CHECKS = \(([^)]*)\)", source, re.M).group(1)
    return set(re.findall(r"'([a-z0-9_-]+)'", body))


def rows():
    table = [line for line in DOC.read_text().splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert table, "no table rows"
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in table]


def test_every_row_has_symptom_check_and_fix():
    for row in rows():
        assert len(row) == 3 and all(row), row
        assert CITED.search(row[1]), "no check cited: %s" % row


def test_cited_checks_exist():
    known = {"preflight": checks(SOURCES["preflight"]), "trays": checks(SOURCES["trays"]),
             "conformance": checks(SOURCES["conformance"]),
             "module": {p.stem for p in (ROOT / "plugins" / "modules").glob("*.py")},
             "role": {p.name for p in (ROOT / "roles").iterdir() if p.is_dir()}}
    cited = CITED.findall(DOC.read_text())
    unknown = sorted("%s/%s" % c for c in cited if c[1] not in known[c[0]])
    assert not unknown, "docs/failure-modes.md cites checks that do not exist: %s" % unknown


def test_every_preflight_trays_and_conformance_check_has_a_row():
    cited = set(CITED.findall(DOC.read_text()))
    for kind, source in SOURCES.items():
        missing = sorted(c for c in checks(source) if (kind, c) not in cited)
        assert not missing, "%s checks without a failure-mode row: %s" % (kind, missing)


def test_linked_runbooks_exist():
    links = re.findall(r"\]\((runbooks/[^)]+)\)", DOC.read_text())
    assert links
    missing = [link for link in links if not (DOC.parent / link).is_file()]
    assert not missing, missing
