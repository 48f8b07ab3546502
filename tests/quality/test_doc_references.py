"""Every name the manual gives in backticks or as a link exists in the repository.

Docs: README.md, docs/**/*.md (not the generated docs/docsite) and roles/*/README.md. Checked:
  * variables: `gpu_tray_*`, `<role>_*`, `validate_*`, `awx_configure_*` identifiers must occur in the code
    (roles, playbooks, plugins, inventories, lab, meta);
  * playbooks: `playbooks/<name>.yml`, `<name>.yml` of a phase, `gpu_tray.cluster.<name>` (a playbook, role, module,
    filter, lookup or action group of this collection);
  * tags: `--tags X` / `--skip-tags X` must be tags some play, role or task carries;
  * files: backticked repository paths (a `<placeholder>` or `*` matches anything) and relative link targets;
  * filters: a backticked name right after the word "filter" must be one of plugins/filter/.
A finding names the doc, the line and the name. A legitimate name that lives outside this repository goes into
ALLOWED with a comment saying what it is.
"""
import fnmatch
import pathlib
import re

import pytest

from qualitykit import ROOT, mappings, read_yaml, yaml_files

DOCS = sorted([ROOT / "README.md"] + [p for p in (ROOT / "docs").rglob("*.md") if "docsite" not in p.parts]
              + list((ROOT / "roles").glob("*/README.md")))
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if p.is_dir())
PLAYBOOKS = sorted(p.stem for p in (ROOT / "playbooks").glob("*.yml"))
FILTERS = sorted(p.stem for p in (ROOT / "plugins" / "filter").glob("*.py") if p.stem != "__init__")
MODULES = sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
LOOKUPS = sorted(p.stem for p in (ROOT / "plugins" / "lookup").glob("*.py") if p.stem != "__init__")
TOP = ("roles/", "playbooks/", "docs/", "plugins/", "inventories/", "lab/", "tests/", "tools/", "meta/",
       "changelogs/", "molecule/", ".ci/")
VAR = re.compile(r"\b((?:gpu_tray|validate|awx_configure|%s)_[a-z0-9_]*[a-z0-9])\b" % "|".join(ROLES))

# Names the docs may give that do not exist in this repository, each with the reason.
ALLOWED = {
    # files on a tray or a controller, not in the repository (they start with /, so never checked), and names
    # of other projects' variables/options that share a prefix with ours:
    "validate_certs",                      # kubernetes.core / awx.awx option
    "tools/modprobe.c",                    # kmod's source file (docs/lab-hardware.md cites kmod's rmmod logic)
    # placeholders in prose: the pattern a role's variables follow
    "gpu_tray_", "preflight_", "stack_",
    # docs/testing.md, docs/stack.md: owned by the stack work, fixed separately (none at the time of writing)
}


def code_corpus():
    texts = []
    for base in ("roles", "playbooks", "plugins", "inventories", "lab", "meta", "molecule", "tools", "tests"):
        for path in (ROOT / base).rglob("*"):
            if path.name == pathlib.Path(__file__).name:
                continue                     # its probe names are made up on purpose
            if path.is_file() and path.suffix in (".yml", ".yaml", ".py", ".j2", ".json", ".cfg", ".sh", "") \
                    and "__pycache__" not in path.parts and path.stat().st_size < 2_000_000:
                try:
                    texts.append(path.read_text())
                except UnicodeDecodeError:
                    continue
    return "\n".join(texts)


def tags_in_use():
    found = {"always", "never", "all", "tagged", "untagged"}
    for node in (node for _path, doc in yaml_files("playbooks", "roles") for node in mappings(doc)):
        tags = node.get("tags")
        if isinstance(tags, str):
            found.update(t.strip() for t in tags.split(","))
        elif isinstance(tags, list):
            found.update(str(t) for t in tags)
    return found


def spans(text):
    """(line number, code span) for every inline `code` outside fenced blocks, and (line, link target)."""
    out, links, fenced = [], [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        out.extend((number, m.group(1), line[:m.start()]) for m in re.finditer(r"`([^`\n]+)`", line))
        links.extend((number, m.group(1)) for m in re.finditer(r"\]\(([^)\s]+)\)", line))
    return out, links


def path_exists(candidate, doc_dir):
    """Relative to the repository, to the doc's directory, or to a role (`meta/argument_specs.yml`)."""
    candidate = candidate.rstrip("/").split("#")[0]
    candidate = re.sub(r"\{([^},]*),[^}]*\}", r"\1", candidate)     # {create,destroy}.yml: the first one
    bases = [ROOT / d for d in (".", doc_dir.relative_to(ROOT).as_posix())] + sorted((ROOT / "roles").glob("*"))
    return any(_exists(base, candidate) for base in bases)


def _exists(root, candidate):
    pattern = re.sub(r"<[^>]+>", "*", candidate)
    pattern = re.sub(r"\{[^}]+\}", "*", pattern)
    if "*" not in pattern:
        return (root / pattern).exists()
    head = pattern.split("*")[0].rsplit("/", 1)[0] if "/" in pattern.split("*")[0] else "."
    base = root / head
    if not base.is_dir():
        return False
    return any(fnmatch.fnmatch(p.relative_to(root).as_posix(), pattern) for p in base.rglob("*"))


def collection_names():
    runtime = read_yaml("meta", "runtime.yml")
    return set(PLAYBOOKS) | set(ROLES) | set(FILTERS) | set(MODULES) | set(LOOKUPS) | set(runtime.get("action_groups", {}))


def findings_for(doc, corpus, tags, names, doc_dir=None):
    """doc_dir: where the doc's relative names resolve (its directory; a probe outside the repository passes one)."""
    text = doc.read_text()
    doc_dir = doc_dir or doc.parent
    rel = doc.relative_to(ROOT).as_posix() if doc.is_relative_to(ROOT) else doc.name
    found = []
    code, links = spans(text)
    for number, span, before in code:
        where = "%s:%d" % (rel, number)
        for var in VAR.findall(span):
            if var not in ALLOWED and not re.search(r"\b%s\b" % re.escape(var), corpus):
                found.append("%s: variable `%s` is not in the code" % (where, var))
        for fqcn in re.findall(r"\bgpu_tray\.cluster\.([a-z0-9_]+)", span):
            if fqcn not in names:
                found.append("%s: `gpu_tray.cluster.%s` is no playbook, role, module, filter or group" % (where, fqcn))
        for flag, value in re.findall(r"--(tags|skip-tags)[ =]([A-Za-z0-9_,<>-]+)", span):
            for tag in value.split(","):
                if not tag.startswith("<") and tag not in tags and tag not in ALLOWED:
                    found.append("%s: tag `%s` (--%s) is not carried by any play, role or task" % (where, tag, flag))
        for token in re.findall(r"(?<![\w./-])((?:%s)(?:[\w./<>*-]|\{[^}]*\})*)" % "|".join(re.escape(t) for t in TOP), span):
            token = token.rstrip(".,;:)")
            if token not in ALLOWED and not path_exists(token, doc_dir):
                found.append("%s: path `%s` does not exist" % (where, token))
        for name in re.findall(r"(?<![\w/.-])([a-z0-9_]+\.yml)\b", span):
            if name in ("galaxy.yml", "requirements.yml", "extra-docs.yml", "runtime.yml", "argument_specs.yml",
                        "main.yml", "molecule.yml", "hosts.yml", "catalog.yml", "recipes.yml", "links.yml",
                        "execution-environment.yml", "changelog.yaml", "config.yaml") or "/" in span:
                continue
            if name[:-4] not in PLAYBOOKS and name not in ALLOWED and not list(ROOT.rglob(name)):
                found.append("%s: `%s` is no playbook or file of the repository" % (where, name))
        if re.search(r"\bfilters?\s*$", before) and re.fullmatch(r"[a-z0-9_.]+", span):
            short = span.rsplit(".", 1)[-1]
            if (span.startswith("gpu_tray.cluster.") or "." not in span) and short not in FILTERS \
                    and span not in ALLOWED:
                found.append("%s: filter `%s` does not exist (plugins/filter/)" % (where, span))
    for number, target in links:
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc_dir / target.split("#")[0]).resolve()
        if not path.exists():
            found.append("%s:%d: link target %s does not exist" % (rel, number, target))
    return found


@pytest.fixture(scope="module")
def context():
    return code_corpus(), tags_in_use(), collection_names()


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_doc_names_only_what_exists(doc, context):
    corpus, tags, names = context
    found = findings_for(doc, corpus, tags, names)
    assert not found, "\n".join(found)


def test_the_checker_finds_made_up_names(tmp_path, context):
    corpus, tags, names = context
    doc = tmp_path / "probe.md"
    doc.write_text("Set `gpu_tray_no_such_knob`, run `playbooks/no_such.yml` or `gpu_tray.cluster.no_such`,\n"
                   "`--skip-tags no_such_tag`, read `roles/stack/vars/no_such.yml`, filter `no_such_filter`,\n"
                   "[a link](no-such.md).\n")
    found = "\n".join(findings_for(doc, corpus, tags, names, doc_dir=ROOT / "docs"))
    for name in ("gpu_tray_no_such_knob", "playbooks/no_such.yml", "gpu_tray.cluster.no_such", "no_such_tag",
                 "roles/stack/vars/no_such.yml", "no_such_filter", "no-such.md"):
        assert name in found, (name, found)
