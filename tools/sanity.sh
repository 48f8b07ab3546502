#!/usr/bin/env bash
# ansible-test sanity needs the collection at .../ansible_collections/gpu_tray/cluster. Copy what git knows
# (tracked + untracked-but-not-ignored files) into a temporary tree of that shape and run it there, with no
# tests/sanity/ignore-*.txt. Each sanity test gets its own venv with its pinned requirements (--venv
# --requirements): pylint & co. come from PyPI, so nothing is added to our own toolchain.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
tmp=$(mktemp -d /tmp/gpu-tray-sanity.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dest="$tmp/ansible_collections/gpu_tray/cluster"
mkdir -p "$dest"
git ls-files -co --exclude-standard -z | rsync -a --from0 --files-from=- ./ "$dest/"
if ls "$dest"/tests/sanity/ignore-*.txt >/dev/null 2>&1; then
  echo "tests/sanity/ignore-*.txt exists: this project passes sanity without an ignore file" >&2; exit 1
fi
cd "$dest"
# ansible-test finds files through git when a repository is present; give it one so it sees exactly our files
git init -q . && git add -A >/dev/null && git -c user.name=sanity -c user.email=sanity@localhost commit -qm sanity
"$here/.venv/bin/ansible-test" sanity --color no --python 3.11 --venv --requirements "$@"
