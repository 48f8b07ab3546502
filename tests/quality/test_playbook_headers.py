"""Every playbook starts with a header that says what it does, what it changes and how to undo it."""

import pytest

from qualitykit import ROOT

PLAYBOOKS = sorted((ROOT / "playbooks").glob("*.yml"))


@pytest.mark.parametrize("path", PLAYBOOKS, ids=lambda p: p.name)
def test_header_says_what_changes_and_how_to_undo(path):
    lines = path.read_text().splitlines()
    header = []
    for line in lines[1:] if lines and lines[0] == "---" else lines:
        if not line.startswith("#"):
            break
        header.append(line)
    text = "\n".join(header)
    assert len(header) >= 3, "%s: no header comment before the first play" % path.name
    assert "Changes" in text or "changes:" in text, "%s: the header does not say what it changes" % path.name
    assert "Undo" in text, "%s: the header does not say how to undo it" % path.name
