#!/usr/bin/env bash
# The whole test suite:
#   tests/unit      pure parsers, modules (also via `ansible localhost -m`), filters, lab fixture generation
#   tests/quality   yamllint, ansible-lint (production), ansible-test sanity, build contents, ansible-doc
#   tests/lab       the rehearsal lab itself (boot, SSH, reboot, GRUB -> /proc/cmdline, clean teardown)
#   tests/molecule  every molecule/<scenario> against lab trays, `molecule test -s <scenario>`
#   tests/cluster   the real kube-apiserver test cluster (built once, cached) and what runs against it
#   tests/upstream  the five bundles held against the real upstream charts and CRDs (../shared/upstream; skipped
#                   in one line without it, failing with GPU_TRAY_UPSTREAM_REQUIRE=1)
# as pytest sessions side by side (tests/conftest.py marks which test is which): the offline tests (`-m "not
# machine"`), which never touch the lab or the test cluster, on one side; on the other the machine's tests in three
# parts - those that use only the lab (`lab and not cluster`, on this terminal) beside those that use only the test
# cluster (`cluster and not lab`), then those that use both (`lab and cluster`) alone. The other sessions' output
# follows when all have ended; the last line sums them.
# GPU_TRAY_TEST_SERIAL=1 runs everything as one session instead; GPU_TRAY_TEST_MACHINE_SERIAL=1 runs the machine's tests
# as one session beside the offline tests (the layout before). docs/testing.md "Make targets and CI" has the times.
# Extra pytest arguments pass through to every session: tools/run-tests.sh -k pkey
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
layers=()
for d in tests/unit tests/quality tests/upstream tests/lab tests/molecule tests/cluster; do
  [ -d "$d" ] && layers+=("$d")
done
pytest=(.venv/bin/pytest -p no:cacheprovider -rfEs)
if [ "${GPU_TRAY_TEST_SERIAL:-0}" = 1 ]; then
  "${pytest[@]}" "${layers[@]}" "$@"
  exit $?     # pytest exit 5 = "no tests collected": a suite that ran nothing has not passed
fi
mkdir -p output
offline_log=output/test-offline.log
cluster_log=output/test-cluster.log
machine_log=output/test-machine.log
both_log=output/test-machine-both.log
"${pytest[@]}" -m "not machine" "${layers[@]}" "$@" >"$offline_log" 2>&1 &
offline_pid=$!
trap 'kill "$offline_pid" 2>/dev/null' EXIT INT TERM
: >"$cluster_log"; : >"$both_log"
if [ "${GPU_TRAY_TEST_MACHINE_SERIAL:-0}" = 1 ]; then
  "${pytest[@]}" -m machine "${layers[@]}" "$@" 2>&1 | tee "$machine_log"
  rc_lab=${PIPESTATUS[0]}; rc_cluster=5; rc_both=5
else
  "${pytest[@]}" -m "cluster and not lab" "${layers[@]}" "$@" >"$cluster_log" 2>&1 &
  cluster_pid=$!
  trap 'kill "$offline_pid" "$cluster_pid" 2>/dev/null' EXIT INT TERM
  "${pytest[@]}" -m "lab and not cluster" "${layers[@]}" "$@" 2>&1 | tee "$machine_log"
  rc_lab=${PIPESTATUS[0]}
  wait "$cluster_pid"
  rc_cluster=$?
  echo
  echo "=================== the tests that use only the test cluster (run beside the lab's; $cluster_log) ==================="
  cat "$cluster_log"
  echo
  echo "=================== the tests that use the lab and the test cluster (after both; $both_log) ==================="
  "${pytest[@]}" -m "lab and cluster" "${layers[@]}" "$@" 2>&1 | tee "$both_log"
  rc_both=${PIPESTATUS[0]}
fi
wait "$offline_pid"
rc_offline=$?
trap - EXIT INT TERM
echo
echo "=================== the offline tests (run beside the machine tests; $offline_log) ==================="
cat "$offline_log"
summary() { grep -E '(passed|failed|errors?|skipped|deselected|no tests ran).* in [0-9.]+s' "$1" | tail -n1 | sed -E 's/^=+ //; s/ =+$//'; }
echo
echo "make test: lab tests: $(summary "$machine_log") (rc $rc_lab); cluster tests: $(summary "$cluster_log") (rc $rc_cluster);" \
  "lab and cluster tests: $(summary "$both_log") (rc $rc_both); offline tests: $(summary "$offline_log") (rc $rc_offline)"
# each session deselects the others' tests; exit 5 ("no tests collected") counts only when all of them ran nothing
rcs=("$rc_lab" "$rc_cluster" "$rc_both" "$rc_offline")
if [ "${rcs[*]}" = "5 5 5 5" ]; then exit 5; fi
for rc in "${rcs[@]}"; do
  [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit 1
done
exit 0
