#!/usr/bin/env bash
# `make docs`: the collection reference (modules, filters, roles and their entry points) built by antsibull-docs
# from the plugins' DOCUMENTATION and the roles' meta/argument_specs.yml, as a Sphinx HTML site in build/docs
# (ignored by git and by the galaxy build). The Sphinx project is generated each time by `antsibull-docs
# sphinx-init`, so nothing here can drift from the antsibull-docs version pinned in requirements-dev.txt.
# Offline (as on our build machines) the intersphinx inventories of docs.ansible.com cannot be fetched, so links
# into the Ansible docsite stay unresolved: Sphinx warns about them and the build does not use -W. The gate for
# the docs themselves is `antsibull-docs lint-collection-docs` (tests/quality/test_docs.py).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
out=build/docs
rm -rf "$out"
mkdir -p build && mkdir -m 700 "$out"   # antsibull-docs wants its output directory writable by its owner only
antsibull-docs sphinx-init --use-current --squash-hierarchy --fail-on-error --sphinx-theme alabaster \
  --project gpu_tray.cluster --title gpu_tray.cluster --copyright "gpu_tray.cluster contributors" \
  --dest-dir "$out" gpu_tray.cluster >/dev/null
cd "$out"
mkdir -m 700 rst.new && rm -rf rst && mv rst.new rst
antsibull-docs --config-file antsibull-docs.cfg collection --cleanup everything --fail-on-error --use-current \
  --squash-hierarchy --dest-dir rst gpu_tray.cluster
# galaxy.yml's `repository` is a placeholder until someone publishes the collection (it has no public home):
# a link button to it would lead nowhere, so links that are no http(s) URL are dropped from the pages.
python3 - rst <<'PY'
import pathlib, re, sys
entry = re.compile(r'^  - title: "[^"\n]*"\n    url: "(?!https?://)[^"\n]*"\n(    external: true\n)?', re.M)
empty = re.compile(r'^\.\. ansible-links::\n\n(?!  - )', re.M)
for page in pathlib.Path(sys.argv[1]).rglob("*.rst"):
    text = page.read_text()
    fixed = empty.sub("", entry.sub("", text))
    if fixed != text:
        page.write_text(fixed)
PY
sphinx-build -M html rst build -c . --keep-going -q 2> sphinx-warnings.log || { cat sphinx-warnings.log >&2; exit 1; }
echo "collection reference: $here/$out/build/html/index.html ($(grep -c WARNING sphinx-warnings.log || true) warnings, mostly unresolved links into docs.ansible.com offline: $out/sphinx-warnings.log)"
