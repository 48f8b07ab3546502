#!/usr/bin/env python3
"""The manual (docs/**/*.md, the source) as antsibull-docs extra docs: docs/docsite/rst/*.rst + extra-docs.yml.

antsibull-docs only takes RST extra docs, so the Markdown guides are converted here (markdown-it-py, which the
toolchain already carries) and the result is committed: the published HTML docs, built from the tarball, carry the
whole manual. Links between the converted documents become :ref: links; links to repository files that are not
converted become literals; external links stay links.

  tools/docsite.py           rewrite docs/docsite/
  tools/docsite.py --check   exit 1 when docs/docsite/ is stale (tests/quality/test_docsite.py)
"""
import pathlib
import re
import sys

from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "docsite"
PREFIX = "ansible_collections.gpu_tray.cluster.docsite."

# (section title, [markdown sources]) in the order of the HTML docs; the repository-only docs (lab, testing,
# lab-hardware, performance: build_ignore in galaxy.yml) are not part of the published manual.
SECTIONS = [
    ("Guides", ["docs/architecture.md", "docs/host-preparation.md", "docs/modules.md", "docs/stack.md",
                "docs/airgap.md", "docs/validation.md", "docs/awx.md"]),
    ("Platform guides", ["docs/platforms/nvke-gb200.md", "docs/platforms/rke2-vr200.md"]),
    ("Runbooks and failure modes", ["docs/failure-modes.md", "docs/runbooks/README.md",
                                    "docs/runbooks/tray-not-back-from-reboot.md",
                                    "docs/runbooks/orphaned-node-maintenance.md",
                                    "docs/runbooks/unmask-nvidia-imex.md", "docs/runbooks/revert-netns-mode.md",
                                    "docs/runbooks/upgrade-pinned-component.md", "docs/runbooks/add-a-rack.md"]),
]
SOURCES = [src for _, srcs in SECTIONS for src in srcs]
UNDERLINE = {1: "=", 2: "-", 3: "~", 4: "^", 5: '"', 6: "'"}


def doc_name(source):
    """docs/runbooks/add-a-rack.md -> runbooks_add_a_rack; docs/runbooks/README.md -> runbooks."""
    parts = pathlib.PurePosixPath(source).relative_to("docs").with_suffix("").parts
    if parts[-1] == "README":
        parts = parts[:-1]
    return "_".join(parts).replace("-", "_")


def escape(text):
    text = text.replace("\\", "\\\\")
    text = re.sub(r"([*`|])", r"\\\1", text)
    return re.sub(r"(?<=\w)_(?=\W|$)", r"\\_", text)


def literal(text):
    return "``%s``" % text if "``" not in text else ":code:`%s`" % text.replace("`", "\\`")


class Converter:
    def __init__(self, source):
        self.source = source

    def resolve(self, href):
        """A markdown link target -> ('ref', label) | ('url', href) | ('path', repository path)."""
        if re.match(r"^[a-z]+:", href):
            return "url", href
        path, _, _anchor = href.partition("#")
        if not path:
            return "ref", PREFIX + doc_name(self.source)
        target = (ROOT / self.source).parent.joinpath(path).resolve()
        try:
            rel = target.relative_to(ROOT).as_posix()
        except ValueError:
            return "path", path
        if target.is_dir() and (target / "README.md").is_file():
            rel += "/README.md"
        if rel in SOURCES:
            return "ref", PREFIX + doc_name(rel)
        return "path", rel

    def inline(self, node):
        out = []
        for child in node.children:
            out.append(self.inline_node(child))
        text = ""
        for piece in out:
            # inline markup needs a non-word character on both sides: join with an escaped space where needed
            if text and piece and (piece[0] in "*`:" and text[-1].isalnum() or
                                   text[-1] in "*`" and piece[0].isalnum()):
                text += "\\ "
            text += piece
        return text

    def inline_node(self, node):
        kind = node.type
        if kind == "text":
            return escape(node.content)
        if kind in ("softbreak", "hardbreak"):
            return " "
        if kind == "code_inline":
            return literal(node.content)
        if kind == "strong":
            return "**%s**" % self.plain(node)
        if kind == "em":
            return "*%s*" % self.plain(node)
        if kind == "link":
            label = self.plain(node)
            code = [c.content for c in node.children if c.type == "code_inline"]
            how, where = self.resolve(node.attrs["href"])
            if how == "url":
                return "`%s <%s>`__" % (label.replace("<", "\\<") or where, where)
            if how == "ref":
                if re.search(r"(^|/)[\w.-]+\.md(#|$)|^#|/$", node.attrs["href"]) and label in (
                        escape(node.attrs["href"]), node.attrs["href"]) or label.endswith(".md"):
                    return ":ref:`%s`" % where         # a bare path as the text: the document's title instead
                return ":ref:`%s <%s>`" % (label.replace("<", "\\<"), where)
            if code and len(code) == 1 and len(node.children) == 1:
                return literal(code[0])
            return "%s (%s)" % (self.inline(node), literal(where))
        if kind == "html_inline":
            return ""
        if kind == "image":
            return escape(node.attrs.get("alt", ""))
        raise ValueError("%s: unsupported inline %s" % (self.source, kind))

    def plain(self, node):
        """Text of a strong/em/link: nested markup flattened (RST does not nest it)."""
        parts = []
        for child in node.children:
            if child.type == "text":
                parts.append(escape(child.content))
            elif child.type == "code_inline":
                parts.append(child.content.replace("*", "\\*").replace("`", "\\`"))
            elif child.type in ("softbreak", "hardbreak"):
                parts.append(" ")
            else:
                parts.append(self.plain(child))
        return "".join(parts)

    def blocks(self, node, indent=""):
        out = []
        for child in node.children:
            lines = self.block(child)
            if lines is None:
                continue
            out.extend([(indent + line).rstrip() for line in lines])
            out.append("")
        return out

    def block(self, node):
        kind = node.type
        if kind == "heading":
            level = int(node.tag[1])
            title = self.inline(node.children[0])
            lines = [title, UNDERLINE[level] * max(len(title), 3)]
            if level == 1:
                lines.insert(0, UNDERLINE[1] * max(len(title), 3))
            return lines
        if kind == "paragraph":
            return [self.inline(node.children[0])]
        if kind in ("bullet_list", "ordered_list"):
            lines = []
            for number, item in enumerate(node.children, start=int(node.attrs.get("start", 1) or 1)):
                marker = "* " if kind == "bullet_list" else "%d. " % number
                body = self.blocks(item, " " * len(marker))
                while body and not body[-1]:
                    body.pop()
                if body:
                    body[0] = marker + body[0][len(marker):]
                lines.extend(body)
                if item is not node.children[-1] and any(c.type != "paragraph" for c in item.children):
                    lines.append("")
            return lines
        if kind in ("fence", "code_block"):
            lang = (node.info or "").strip() or "text"
            return [".. code-block:: %s" % lang, ""] + ["   " + line for line in node.content.rstrip("\n").split("\n")]
        if kind == "table":
            rows = [row for part in node.children for row in part.children]
            lines = [".. list-table::", "   :header-rows: 1", ""]
            for row in rows:
                for index, cell in enumerate(row.children):
                    text = self.inline(cell.children[0]) if cell.children else ""
                    lines.append(("   * - " if index == 0 else "     - ") + (text or "\\ "))
            return lines
        if kind == "blockquote":
            return self.blocks(node, "   ")
        if kind in ("hr", "html_block"):
            return None
        raise ValueError("%s: unsupported block %s" % (self.source, kind))

    def convert(self):
        tree = SyntaxTreeNode(MarkdownIt("commonmark").enable("table").parse((ROOT / self.source).read_text()))
        head = [".. Generated by tools/docsite.py from %s - edit the Markdown, then run tools/docsite.py." % self.source,
                "", ".. _%s%s:" % (PREFIX, doc_name(self.source)), ""]
        body = self.blocks(tree)
        while body and not body[-1]:
            body.pop()
        return "\n".join(head + body) + "\n"


def render():
    files = {"extra-docs.yml": "---\n# Generated by tools/docsite.py: the manual (docs/**/*.md) in the HTML docs.\nsections:\n"}
    for title, sources in SECTIONS:
        files["extra-docs.yml"] += "  - title: %s\n    toctree:\n" % title
        for source in sources:
            files["extra-docs.yml"] += "      - %s\n" % doc_name(source)
            files["rst/%s.rst" % doc_name(source)] = Converter(source).convert()
    return files


def main(argv):
    files = render()
    existing = {p.relative_to(OUT).as_posix() for p in OUT.rglob("*") if p.is_file()} if OUT.is_dir() else set()
    stale = sorted(name for name, text in files.items()
                   if not (OUT / name).is_file() or (OUT / name).read_text() != text)
    extra = sorted(name for name in existing - set(files) if name.startswith("rst/") or name == "extra-docs.yml")
    if "--check" in argv:
        if stale or extra:
            print("docs/docsite is stale (run tools/docsite.py): %s" % (stale + extra))
            return 1
        return 0
    for name in extra:
        (OUT / name).unlink()
    for name in stale:
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_text(files[name])
    print("docs/docsite: %d written, %d removed, %d up to date" % (len(stale), len(extra), len(files) - len(stale)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
