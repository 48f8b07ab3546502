#!/usr/bin/env bash
# The whole test suite:
#   tests/unit      pure parsers, modules (also via `ansible localhost -m`), filters, lab fixture generation
#   tests/quality   yamllint, ansible-lint (production), ansible-test sanity, build contents, ansible-doc
#   tests/lab       the rehearsal lab itself (boot, SSH, reboot, GRUB -> /proc/cmdline, clean teardown)
#   tests/molecule  every molecule/<scenario> against lab trays, `molecule test -s <scenario>`
#   tests/cluster   the real kube-apiserver test cluster (built once, cached) and what runs against it
#   tests/upstream  the five bundles held against the real upstream charts and CRDs (../shared/upstream; skipped
#                   in one line without it, failing with GPU_TRAY_UPSTREAM_REQUIRE=1)
# as pytest sessions ("parts") side by side (tests/conftest.py marks which test is which):
#   static   the static tools (`-m static`: ansible-test sanity, ansible-lint, galaxy-importer, antsibull-docs, the
#            collection build), one process, all along;
#   offline  every other test that never touches the lab or the test cluster (`-m "not machine and not static"`),
#            all along;
#   lab      the tests that use only the lab (`lab and not cluster`, on this terminal) beside
#   cluster  those that use only the test cluster (`cluster and not lab`); then
#   both     those that use both (`lab and cluster`), once lab and cluster have ended.
# Each part writes output/test-<part>.log and output/junit-<part>.xml, and one line (part, start, end, exit status) to
# output/test-parts.tsv; tools/test_times.py turns them into output/test-times.md (the time of each part and the 40
# slowest tests). The verdict is taken from that file for every part of PARTS: a part that failed, or that left no
# line, fails the suite (tests/quality/test_run_tests.py plants a failing test in each part and checks it).
# GPU_TRAY_TEST_SERIAL=1 runs everything as one session instead (part "all").
# Extra pytest arguments pass through to every session: tools/run-tests.sh -k pkey
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
layers=()
for d in tests/unit tests/quality tests/upstream tests/lab tests/molecule tests/cluster; do
  [ -d "$d" ] && layers+=("$d")
done
pytest=(.venv/bin/pytest -p no:cacheprovider -rfEs)
out=output
mkdir -p "$out"
parts_file=$out/test-parts.tsv
: >"$parts_file"
rm -f "$out"/junit-*.xml

# part NAME EXPRESSION [tee]: one pytest session over every layer with `-m EXPRESSION`; its line in $parts_file
part() {
  local name=$1 expr=$2 show=${3:-} t0 r
  t0=$(date +%s)
  local argv=("${pytest[@]}" --junitxml="$out/junit-$name.xml")
  [ -n "$expr" ] && argv+=(-m "$expr")
  if [ "$show" = tee ]; then
    "${argv[@]}" "${layers[@]}" "${extra[@]}" 2>&1 | tee "$out/test-$name.log"
    r=${PIPESTATUS[0]}
  else
    "${argv[@]}" "${layers[@]}" "${extra[@]}" >"$out/test-$name.log" 2>&1
    r=$?
  fi
  printf '%s\t%s\t%s\t%s\n' "$name" "$t0" "$(date +%s)" "$r" >>"$parts_file"
  return "$r"
}
extra=("$@")

pids=()
# shellcheck disable=SC2317  # called by the trap
stop_all() { local p; for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; return 0; }
trap stop_all EXIT INT TERM

if [ "${GPU_TRAY_TEST_SERIAL:-0}" = 1 ]; then
  PARTS=(all)
  part all "" tee
else
  PARTS=(static offline lab cluster both)
  part static "static" & pids+=($!)
  part offline "not machine and not static" & pids+=($!)
  part cluster "cluster and not lab" & cluster_pid=$!; pids+=("$cluster_pid")
  part lab "lab and not cluster" tee
  wait "$cluster_pid"
  echo
  echo "=================== the tests that use the lab and the test cluster (after both; $out/test-both.log) ==================="
  part both "lab and cluster" tee
  wait
  for p in static offline cluster; do
    echo
    echo "=================== part $p (run beside the others; $out/test-$p.log) ==================="
    cat "$out/test-$p.log"
  done
fi
trap - EXIT INT TERM

summary() { grep -E '(passed|failed|errors?|skipped|deselected|no tests ran).* in [0-9.]+s' "$1" 2>/dev/null | tail -n1 | sed -E 's/^=+ //; s/ =+$//'; }
# the verdict: every part of PARTS must have its line, and its exit status must be 0 or 5 (each session deselects the
# others' tests); exit 5 ("no tests collected") counts only when every part ran nothing
line="make test:"
failed=0; empty=0
for p in "${PARTS[@]}"; do
  rc=$(awk -F'\t' -v p="$p" '$1 == p { r = $4 } END { print r }' "$parts_file")
  line+=" $p: $(summary "$out/test-$p.log") (rc ${rc:-none});"
  case $rc in
    0) ;;
    5) empty=$((empty + 1)) ;;
    *) failed=1 ;;
  esac
done
echo
echo "${line%;}" | tee "$out/test-summary.txt"
if [ -x .venv/bin/python ]; then
  .venv/bin/python tools/test_times.py --out "$out" >/dev/null || echo "tools/test_times.py could not write $out/test-times.md"
fi
[ "$failed" = 0 ] || exit 1
[ "$empty" -lt "${#PARTS[@]}" ] || exit 5     # a suite that ran nothing has not passed
exit 0
