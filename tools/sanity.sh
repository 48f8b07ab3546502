#!/usr/bin/env bash
# ansible-test sanity needs the collection at .../ansible_collections/gpu_tray/cluster. Copy the collection
# content - what git knows (tracked + untracked-but-not-ignored files) minus the development tooling that
# galaxy.yml's build_ignore keeps out of the tarball, plus tests/unit - into a temporary tree of that shape
# and run it there, with no tests/sanity/ignore-*.txt. The tooling that is not collection content (lab/ with
# the scripts that run inside lab trays, tools/, .ci/, molecule/, the other test layers) is not ansible-test's
# to judge (e.g. a tray-side `#!/usr/bin/python3` double is right there); tests/quality checks it instead
# (shellcheck, pytest, ansible-lint). The sanity tests' own pinned requirements (pylint & co., from PyPI) go into a
# separate venv, so they never leak into the project toolchain. (`ansible-test --venv` would do that per test
# but bootstraps pip from an ansible CI host these machines cannot reach.)
# ansible-test still builds one venv per sanity test and bootstraps pip into it with a get-pip.py it downloads
# from an Ansible CI host; tools/ansible-test-get-pip.py does that job from PyPI and is put where ansible-test
# looks for a cached copy.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
tmp=$(mktemp -d /tmp/gpu-tray-sanity.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
dest="$tmp/ansible_collections/gpu_tray/cluster"
mkdir -p "$dest"
git ls-files -co --exclude-standard -z \
  | "$here/.venv/bin/python" "$here/tools/collection_files.py" \
  | rsync -a --from0 --files-from=- ./ "$dest/"
if ls "$dest"/tests/sanity/ignore-*.txt >/dev/null 2>&1; then
  echo "tests/sanity/ignore-*.txt exists: this project passes sanity without an ignore file" >&2; exit 1
fi
: "${GPU_TRAY_CACHE:=/var/cache/gpu-tray-cluster}"
# Which ansible-core runs the tests, on which Python: the pinned toolchain's by default; tools/matrix.sh sets
# GPU_TRAY_SANITY_CORE (a version) and GPU_TRAY_SANITY_PYTHON (an interpreter) for the other supported cores.
core=${GPU_TRAY_SANITY_CORE:-$(sed -n 's/^ansible-core==//p' "$here/requirements-dev.txt")}
py=${GPU_TRAY_SANITY_PYTHON:-python3}
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
svenv="$GPU_TRAY_CACHE/sanity-venv-$core-py$pyver"
mkdir -p "$GPU_TRAY_CACHE"
exec 9>"$svenv.lock"; flock 9            # concurrent runs build the venv once
if [ ! -f "$svenv/.complete" ]; then     # a half-built venv (interrupted run) is rebuilt, never used
  rm -rf "$svenv"
  "$py" -m venv "$svenv"
  "$svenv/bin/pip" install -q -U pip
  "$svenv/bin/pip" install -q "ansible-core==$core"
  touch "$svenv/.complete"
fi
exec 9>&-
pipver=$("$svenv/bin/python" - <<'PY'
import re, pathlib, ansible_test
src = pathlib.Path(ansible_test.__file__).parent.joinpath("_internal", "python_requirements.py").read_text()
print(re.search(r"pip='([0-9.]+)'", src).group(1))
PY
)
getpip="$HOME/.ansible/test/cache/get_pip_${pipver//./_}.py"
if ! cmp -s "$here/tools/ansible-test-get-pip.py" "$getpip"; then
  mkdir -p "$(dirname "$getpip")" && cp "$here/tools/ansible-test-get-pip.py" "$getpip"
fi
cd "$dest"
# ansible-test finds files through git when a repository is present; give it one so it sees exactly our files
git init -q . && git add -A >/dev/null && git -c user.name=sanity -c user.email=sanity@localhost commit -qm sanity
"$svenv/bin/python" "$svenv/bin/ansible-test" sanity --color no --python "$pyver" --requirements "$@"
