#!/usr/bin/env bash
# make matrix: the collection on every ansible-core release line that is supported upstream, each on a
# controller Python that this core's own ansible-test lists. Per core:
#   units   tests/unit with that core (the module, filter and `ansible localhost -m` tests)
#   sanity  ansible-test sanity of that core, no ignore files (tools/sanity.sh)
#   lab     playbooks/preflight.yml and playbooks/prepare_trays.yml (roles + rolling reboot) on two lab trays
# and every deprecation warning any of them printed is a failure (listed at the end).
#
# Supported range (ansible-core release matrix, https://docs.ansible.com/ansible/latest/reference_appendices/
# release_and_maintenance.html): 2.18 reached end of life in Nov 2026; 2.19 is in limited security support
# until May 2027; 2.20 (Nov 2025) and 2.21 (May 2026, the newest) are maintained. Update MATRIX_CORES (and
# requires_ansible in meta/runtime.yml, the README support section) when a line ends or a new one ships.
# The oldest line is the pinned toolchain in requirements-dev.txt (the project .venv).
#
# Which Python runs which core is not hand-written: each core's wheel carries ansible-test's table of
# controller Pythons (ansible_test/_util/target/common/constants.py, CONTROLLER_PYTHON_VERSIONS). Going from
# the oldest core to the newest, each takes the oldest listed Python found on this machine (python3.X on
# PATH or pyenv) that no earlier core took, so the matrix covers as many Pythons as cores.
#
# Usage: tools/matrix.sh [--steps units,sanity,lab] [--cores "2.20.10 2.21.5"] [--ci] [--venvs-only] [--plan]
#   --ci  what .ci/run adds to `make test` (within the CI budget, docs/testing.md has the times): units and
#         sanity on the newest core only (make test ran the pinned core's units); the lab smoke on all. The units
#         are the offline ones (`-m "not machine"`): .ci/run runs `--steps units,sanity` beside make test, whose lab
#         part owns the lab meanwhile, and `--steps lab` after it (the lab's own tests, tests/unit/lab_infra, test the
#         harness, not the collection: make test runs them).
# Logs: output/matrix/<core>/{units,sanity,lab,ansible}.log, deprecations in output/matrix/deprecations.txt.
set -uo pipefail
# (all in main(): bash parses it whole, so editing this file during a run cannot change that run)
main() {
local started; started=$(date +%s)
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1

: "${GPU_TRAY_CACHE:=/var/cache/gpu-tray-cluster}"
default_core=$(sed -n 's/^ansible-core==//p' requirements-dev.txt)
MATRIX_CORES="$default_core 2.20.10 2.21.5"
run_cores=""
steps=units,sanity,lab
venvs_only=0
ci=0
plan_only=0
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --cores) run_cores=$2; shift 2 ;;   # a subset; the core -> Python plan is always the full matrix's
    --ci) ci=1; shift ;;
    --venvs-only) venvs_only=1; shift ;;
    --plan) plan_only=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [--steps units,sanity,lab] [--cores 'X.Y.Z ...'] [--venvs-only] [--plan]" >&2; exit 2 ;;
  esac
done
# What the unit tests import besides ansible-core, at the toolchain's pins (requirements-dev.txt), with the
# toolchain's transitive pins (constraints.txt) except ansible-core's own.
UNIT_REQS=(pytest hypothesis kubernetes netaddr jmespath PyYAML jsonschema cyclonedx-python-lib in-toto-attestation securesystemslib)
out=${MATRIX_OUT:-$here/output/matrix}
wheels="$GPU_TRAY_CACHE/wheels"
mkdir -p "$out" "$wheels" "$GPU_TRAY_CACHE/matrix"
# the checkout's Ansible environment (tools/ansible_env.py: its ansible.cfg, ANSIBLE_HOME, .collections, no colour)
eval "$(python3 "$here/tools/ansible_env.py" --shell --root "$here" || echo exit 1)"
export PYTHONDONTWRITEBYTECODE=1 ANSIBLE_DEPRECATION_WARNINGS=1

log() { printf '[matrix] %s\n' "$*"; }
now() { date +%s; }
first_file() { local f; for f in "$@"; do [ -e "$f" ] && { echo "$f"; return 0; }; done; return 1; }

# find_python X.Y -> an interpreter of that version: python3 / pythonX.Y on PATH, else pyenv's newest X.Y.*
find_python() {
  local v=$1 c
  local pyroot; pyroot=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for c in python3 "python$v" $(printf '%s\n' "$pyroot"/versions/"$v".*/bin/python"$v" | sort -V -r); do
    if command -v "$c" >/dev/null 2>&1 \
       && [ "$("$c" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = "$v" ]; then
      "$c" -c 'import sys; print(sys.executable)'; return 0
    fi
  done
  return 1
}

# controller_pythons CORE -> ansible-test's CONTROLLER_PYTHON_VERSIONS of that core, read from its wheel
controller_pythons() {
  local core=$1 whl
  whl=$(first_file "$wheels"/ansible_core-"$core"-*.whl)
  if [ -z "$whl" ]; then
    .venv/bin/pip download -q --no-deps --only-binary=:all: --python-version 3.13 -d "$wheels" "ansible-core==$core" >&2 || return 1
    whl=$(first_file "$wheels"/ansible_core-"$core"-*.whl)
  fi
  .venv/bin/python - "$whl" <<'PY'
import ast, sys, zipfile
src = zipfile.ZipFile(sys.argv[1]).read("ansible_test/_util/target/common/constants.py").decode()
tree = ast.parse(src)
for node in tree.body:
    if isinstance(node, ast.Assign) and node.targets[0].id == "CONTROLLER_PYTHON_VERSIONS":
        print(" ".join(ast.literal_eval(node.value)))
PY
}

# the plan: core -> python
declare -A PY PYVER SUPPORTED
used=" "
for core in $MATRIX_CORES; do
  supported=$(controller_pythons "$core") || { log "cannot read ansible-test's Python table of ansible-core $core"; exit 1; }
  SUPPORTED[$core]=$supported
  pick=""
  for v in $supported; do
    case $used in *" $v "*) continue ;; esac
    if p=$(find_python "$v"); then pick=$v; break; fi
  done
  if [ -z "$pick" ]; then   # fewer Pythons than cores: the newest supported one found
    for v in $(echo "$supported" | tr ' ' '\n' | sort -V -r); do
      if p=$(find_python "$v"); then pick=$v; break; fi
    done
  fi
  [ -n "$pick" ] || { log "no Python of ${supported// /, } (ansible-core $core's controller Pythons) on this machine"; exit 1; }
  PY[$core]=$p; PYVER[$core]=$pick; used="$used$pick "
done
for core in ${run_cores:-$MATRIX_CORES}; do
  case " $MATRIX_CORES " in *" $core "*) ;; *) log "ansible-core $core is not in the matrix ($MATRIX_CORES)"; exit 2 ;; esac
done
newest_core=${MATRIX_CORES##* }
MATRIX_CORES=${run_cores:-$MATRIX_CORES}
for core in $MATRIX_CORES; do
  log "ansible-core $core on Python ${PYVER[$core]} (${PY[$core]}; ansible-test controller Pythons: ${SUPPORTED[$core]})"
done
[ "$plan_only" = 1 ] && exit 0

# venv_for CORE -> a venv with that core on its Python and the unit-test requirements: the project .venv
# when it is that toolchain, else a cached one, built under a lock and used only once complete.
venv_for() {
  local core=$1 py=${PY[$1]} pv=${PYVER[$1]} venv
  if [ "$core" = "$default_core" ] && [ "$(.venv/bin/python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "$pv" ]; then
    echo "$here/.venv"; return 0
  fi
  local pins=() r key
  for r in "${UNIT_REQS[@]}"; do pins+=("$(grep -ihE "^$r(\[[^]]*\])?==" requirements-dev.txt constraints.txt | head -n1)"); done
  # keyed by the pins too: a changed pin builds a new venv
  key=$( (printf '%s\n' "${pins[@]}"; grep -vE '^ansible-core==' constraints.txt) | sha256sum | cut -c1-8)
  venv="$GPU_TRAY_CACHE/matrix/venv-core$core-py$pv-$key"
  (
    flock 9
    if [ ! -f "$venv/.complete" ]; then
      log "building $venv" >&2
      rm -rf "$venv"
      "$py" -m venv "$venv" && "$venv/bin/pip" install -q -U pip >&2 || exit 1
      grep -vE '^ansible-core==' constraints.txt > "$venv/constraints.txt"
      "$venv/bin/pip" install -q -c "$venv/constraints.txt" "ansible-core==$core" "${pins[@]}" >&2 || exit 1
      touch "$venv/.complete"
    fi
  ) 9>"$venv.lock" || return 1
  echo "$venv"
}

declare -A VENV
for core in $MATRIX_CORES; do
  t0=$(now)
  VENV[$core]=$(venv_for "$core") || { log "venv for ansible-core $core failed"; exit 1; }
  log "venv for $core ready in $(( $(now) - t0 )) s: ${VENV[$core]}"
done

# Dependency collections: the matrix runs every core with the newest community package's collections
# (MATRIX_ANSIBLE_WHEEL), `make test` with the pinned older set of tools/setup.sh, so both ends of galaxy.yml's
# dependency ranges are tested. ansible 12.3.0's kubernetes.core 6.2.0, ansible.posix 2.1.0 and ansible.utils
# 6.0.0 import ansible.module_utils._text, which ansible-core 2.20+ reports as deprecated (ansible.posix.sysctl
# and its json callback, kubernetes.core's k8s_* modules); ansible 14.5.0's (kubernetes.core 6.6.0,
# community.general 13.5.0, ansible.posix 2.2.2, ansible.utils 6.1.1) do not, and still support 2.19.
local wheel_version=14.5.0 colls whl
colls="$GPU_TRAY_CACHE/matrix/collections-ansible-$wheel_version"
read -r -a wanted <<< "$(sed -n 's/^COLLECTIONS=(\(.*\))$/\1/p' tools/setup.sh)"
(
  flock 9
  if [ ! -f "$colls/.complete" ]; then
    whl=$(first_file "$wheels"/ansible-"$wheel_version"-*.whl)
    if [ -z "$whl" ]; then
      .venv/bin/pip download -q --no-deps --only-binary=:all: --python-version 3.13 -d "$wheels" "ansible==$wheel_version" || exit 1
      whl=$(first_file "$wheels"/ansible-"$wheel_version"-*.whl)
    fi
    log "extracting ${wanted[*]} from $(basename "$whl")"
    rm -rf "$colls"
    # a collection the community package no longer ships comes from the pinned wheel of tools/setup.sh
    .venv/bin/python - "$colls" "${wanted[@]}" -- "$whl" "$wheels"/ansible-"$(sed -n 's/^ANSIBLE_WHEEL_VERSION=//p' tools/setup.sh)"-*.whl <<'PY' || exit 1
import sys, zipfile
dest, rest = sys.argv[1], sys.argv[2:]
wanted, wheels = rest[:rest.index("--")], rest[rest.index("--") + 1:]
for wheel in wheels:
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.startswith(tuple("ansible_collections/%s/" % c for c in wanted))]
        found = [c for c in wanted if any(n.startswith("ansible_collections/%s/" % c) for n in names)]
        z.extractall(dest, names)
    print("[matrix] %s from %s" % (" ".join(found), wheel.rsplit("/", 1)[-1]))
    wanted = [c for c in wanted if c not in found]
if wanted:
    sys.exit("not in %s: %s" % (" ".join(wheels), wanted))
PY
    touch "$colls/.complete"
  fi
) 9>"$colls.lock" || { log "dependency collections from ansible $wheel_version failed"; exit 1; }
# this checkout's view: the cached namespaces + gpu_tray/cluster -> here
rm -rf "$out/collections"; mkdir -p "$out/collections/ansible_collections/gpu_tray"
for ns in "$colls"/ansible_collections/*/; do ln -s "${ns%/}" "$out/collections/ansible_collections/"; done
ln -s "$here" "$out/collections/ansible_collections/gpu_tray/cluster"
eval "$(python3 "$here/tools/ansible_env.py" --shell --collections "$out/collections" --only collections || echo exit 1)"
log "dependency collections: $(cd "$colls/ansible_collections" && for c in */*/MANIFEST.json; do
  printf '%s %s, ' "${c%/MANIFEST.json}" "$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$c" | head -n1)"; done | tr / . | sed 's/, $//')"
[ "$venvs_only" = 1 ] && exit 0

has_step() { case ",$core_steps," in *",$1,"*) return 0 ;; esac; return 1; }
# the smoke: the preflight alone (read-only), then host preparation (which runs the preflight again first, then
# the roles and the rolling reboot), once that playbook is part of the collection (tracked in git)
smoke_playbooks=(playbooks/preflight.yml)
git ls-files --error-unmatch playbooks/prepare_trays.yml >/dev/null 2>&1 && smoke_playbooks+=(playbooks/prepare_trays.yml)

declare -A RESULT
rc_all=0
: > "$out/deprecations.txt"
for core in $MATRIX_CORES; do
  venv=${VENV[$core]}; d="$out/$core"; rm -rf "$d"; mkdir -p "$d"
  # every ansible process of this core also writes its display output (deprecations included) here
  export ANSIBLE_LOG_PATH="$d/ansible.log"
  res=""
  core_steps=$steps
  if [ "$ci" = 1 ] && [ "$core" != "$newest_core" ]; then   # CI: units and sanity on the newest core only
    core_steps=$(echo ",$steps," | sed 's/,sanity,/,/')
    # units on the newest core only: the pinned core's ran in make test just before, and the cores between run the
    # same code paths as the newest (the full `make matrix` runs them all)
    core_steps=${core_steps/,units,/,}
  fi
  if has_step units; then
    t0=$(now)
    units_mark=(); [ "$ci" = 1 ] && units_mark=(-m "not machine")
    "$venv/bin/python" -m pytest -p no:cacheprovider -q -W default::DeprecationWarning "${units_mark[@]}" tests/unit \
      >"$d/units.log" 2>&1
    r=$?; res+=" units=$([ $r = 0 ] && echo ok || echo FAIL)($(( $(now) - t0 ))s)"; [ $r = 0 ] || rc_all=1
    tail -n1 "$d/units.log" | sed "s/^/[matrix] $core units: /"
  fi
  if has_step sanity; then
    t0=$(now)
    GPU_TRAY_SANITY_CORE=$core GPU_TRAY_SANITY_PYTHON=${PY[$core]} PATH="$(dirname "${PY[$core]}"):$PATH" \
      bash tools/sanity.sh >"$d/sanity.log" 2>&1
    r=$?; res+=" sanity=$([ $r = 0 ] && echo ok || echo FAIL)($(( $(now) - t0 ))s)"; [ $r = 0 ] || rc_all=1
    [ $r = 0 ] || grep -E '^ERROR' "$d/sanity.log" | head -n 20
  fi
  if has_step lab; then
    t0=$(now)
    # shellcheck disable=SC2016  # the inner script gets its values as arguments
    flock /var/lock/gpu-tray-lab.lock bash -c '
      venv=$1; d=$2; shift 2
      echo "lab lock acquired at $(date +%s)"
      lab/lab down >/dev/null 2>&1
      rc=0
      if lab/lab up --platform nvke-gb200 --trays 2; then
        inv=$(lab/lab inventory)
        for pb in "$@"; do
          echo "== $pb"
          "$venv/bin/ansible-playbook" -i "$inv" "$pb" -e gpu_tray_report_dir="$d/report" || { rc=1; break; }
        done
      else rc=1; fi
      lab/lab down; exit $rc' lab-smoke "$venv" "$d" "${smoke_playbooks[@]}" >"$d/lab.log" 2>&1
    r=$?; t1=$(sed -n 's/^lab lock acquired at //p' "$d/lab.log"); t1=${t1:-$t0}
    res+=" lab=$([ $r = 0 ] && echo ok || echo FAIL)($(( $(now) - t1 ))s + $(( t1 - t0 ))s waiting for the lab lock)"
    [ $r = 0 ] || rc_all=1
    [ $r = 0 ] || grep -E 'fatal:|FAILED!|PLAY RECAP' -A3 "$d/lab.log" | head -n 30
  fi
  # deprecations: Ansible's own ([DEPRECATION WARNING] in any output or the log) and Python's
  # DeprecationWarning raised in ansible, ansible_test or this collection (pytest's warnings summary)
  { grep -hoE '\[DEPRECATION WARNING\].*' "$d"/*.log 2>/dev/null
    grep -hE '(ansible|ansible_test|ansible_collections/gpu_tray|/plugins/)[^ ]*\.py:[0-9]+: [A-Za-z]*DeprecationWarning' "$d"/*.log 2>/dev/null
  } | sed "s|$here/||g" | sort -u | sed "s/^/$core: /" > "$d/deprecations.txt"
  ndep=$(wc -l < "$d/deprecations.txt")
  cat "$d/deprecations.txt" >> "$out/deprecations.txt"
  res+=" deprecations=$ndep"; [ "$ndep" = 0 ] || rc_all=1
  RESULT[$core]=$res
  log "ansible-core $core / Python ${PYVER[$core]}:$res"
done
unset ANSIBLE_LOG_PATH

echo
log "summary (logs in output/matrix/<core>/)"
for core in $MATRIX_CORES; do printf '  ansible-core %-8s Python %-5s %s\n' "$core" "${PYVER[$core]}" "${RESULT[$core]}"; done
if [ -s "$out/deprecations.txt" ]; then
  log "deprecation warnings are failures in the matrix; fix these:"
  sed 's/^/  /' "$out/deprecations.txt"
fi
log "matrix $([ "$rc_all" = 0 ] && echo PASSED || echo FAILED) in $(( $(now) - started )) s"
exit "$rc_all"
}
main "$@"
