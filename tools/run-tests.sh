#!/usr/bin/env bash
# The whole test suite:
#   tests/unit      pure parsers, modules (also via `ansible localhost -m`), filters, lab fixture generation
#   tests/quality   yamllint, ansible-lint (production), ansible-test sanity, build contents, ansible-doc
#   tests/lab       the rehearsal lab itself (boot, SSH, reboot, GRUB -> /proc/cmdline, clean teardown)
#   tests/molecule  every molecule/<scenario> against lab trays, `molecule test -s <scenario>`
#   tests/cluster   the real kube-apiserver test cluster (built once, cached) and what runs against it
#   tests/upstream  the five bundles held against the real upstream charts and CRDs (../shared/upstream; skipped
#                   in one line without it, failing with GPU_TRAY_UPSTREAM_REQUIRE=1)
# as pytest sessions ("parts") side by side (tests/conftest.py marks which test is which), in two chains and two
# lone parts, so that no core waits while one part runs alone:
#   static   the static tools (`-m static`: ansible-test sanity, ansible-lint, galaxy-importer, antsibull-docs), one
#            process, all along;
#   offline  every other test that never touches the lab or the test cluster (`-m "not machine and not static"`),
#            all along;
#   lab      the tests that use only the lab (`lab and not cluster`, on this terminal), then
#   both     those that use the lab and a test cluster (`lab and cluster`) - on a test cluster of their own (BOTH_CLUSTER:
#            its own state directory and ports), so they start as soon as the lab is free, beside
#   cluster  the tests that use only the test cluster (`cluster and not lab`, the session's cluster on the default
#            ports; the first of them builds the binaries when the cache is cold).
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

# part NAME EXPRESSION [tee] [VAR=value ...]: one pytest session over every layer with `-m EXPRESSION` (in the
# environment plus the VAR=value given); its line in $parts_file
part() {
  local name=$1 expr=$2 show=${3:-} t0 r
  shift 3
  t0=$(date +%s)
  local argv=(env "$@" "${pytest[@]}" --junitxml="$out/junit-$name.xml")
  # PART_NICE=N: the part runs at that niceness (its ansible-playbook and tool processes too)
  [ -n "${PART_NICE:-}" ] && argv=(nice -n "$PART_NICE" "${argv[@]}")
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
# The second test cluster, of the tests that use the lab and a cluster (kcluster.py reads these; test_cluster_live.py's
# hook cluster has its own too). .ci/run stops it on exit as it stops the default one.
BOTH_CLUSTER=(KCLUSTER_STATE=/run/gpu-tray-kcluster-both KCLUSTER_ETCD_PORT=23990 KCLUSTER_ETCD_PEER_PORT=24000
              KCLUSTER_APISERVER_PORT=16643 KCLUSTER_KUBELET_PORT=16650)
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
  # The two chains - the lab then both, and the cluster (with the binaries' build when the cache is cold) - are the
  # critical path: the static and offline parts yield the cores to them (nice 10) and take what they leave (reboot
  # waits, time-outs by design), then the whole machine once the chains are done.
  PART_NICE=10 part static "static" "" & pids+=($!)
  PART_NICE=10 part offline "not machine and not static" "" & pids+=($!)
  part cluster "cluster and not lab" "" & pids+=($!)
  part lab "lab and not cluster" tee
  echo
  echo "=================== the tests that use the lab and a test cluster (after the lab's; $out/test-both.log) ==================="
  part both "lab and cluster" tee "${BOTH_CLUSTER[@]}"
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
