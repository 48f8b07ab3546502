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
sphinx-build -M html rst build -c . --keep-going -q 2> sphinx-warnings.log || { cat sphinx-warnings.log >&2; exit 1; }
echo "collection reference: $here/$out/build/html/index.html ($(grep -c WARNING sphinx-warnings.log || true) warnings, mostly unresolved links into docs.ansible.com offline: $out/sphinx-warnings.log)"
