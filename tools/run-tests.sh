#!/usr/bin/env bash
# The whole test suite:
#   tests/unit      pure parsers, modules (also via `ansible localhost -m`), filters, lab fixture generation
#   tests/quality   yamllint, ansible-lint (production), ansible-test sanity, build contents, ansible-doc
#   tests/lab       the rehearsal lab itself (boot, SSH, reboot, GRUB -> /proc/cmdline, clean teardown)
#   tests/molecule  every molecule/<scenario> against lab trays, `molecule test -s <scenario>`
#   tests/cluster   the real kube-apiserver test cluster (built once, cached) and what runs against it
#   tests/upstream  the five bundles held against the real upstream charts and CRDs (../shared/upstream; skipped
#                   in one line without it, failing with GPU_TRAY_UPSTREAM_REQUIRE=1)
# as two pytest sessions side by side (tests/conftest.py marks which test is which): `-m machine`, the tests that
# use the machine's one lab and one test cluster, in order, on this terminal; and `-m "not machine"`, the offline
# tests, which meanwhile use the other core (their output follows when both have ended). The last line sums both.
# GPU_TRAY_TEST_SERIAL=1 runs everything as one session instead. docs/testing.md "Make targets and CI" has the times.
# Extra pytest arguments pass through to both: tools/run-tests.sh -k pkey
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
machine_log=output/test-machine.log
"${pytest[@]}" -m "not machine" "${layers[@]}" "$@" >"$offline_log" 2>&1 &
offline_pid=$!
trap 'kill "$offline_pid" 2>/dev/null' EXIT INT TERM
"${pytest[@]}" -m machine "${layers[@]}" "$@" 2>&1 | tee "$machine_log"
rc_machine=${PIPESTATUS[0]}
wait "$offline_pid"
rc_offline=$?
trap - EXIT INT TERM
echo
echo "=================== the offline tests (run beside the machine tests; $offline_log) ==================="
cat "$offline_log"
summary() { grep -E '(passed|failed|errors?|skipped|deselected|no tests ran).* in [0-9.]+s' "$1" | tail -n1 | sed -E 's/^=+ //; s/ =+$//'; }
echo
echo "make test: machine tests: $(summary "$machine_log") (rc $rc_machine); offline tests: $(summary "$offline_log") (rc $rc_offline)"
# each session deselects the other's tests; exit 5 ("no tests collected") counts only when both ran nothing
if [ "$rc_machine" = 5 ] && [ "$rc_offline" = 5 ]; then exit 5; fi
[ "$rc_machine" = 5 ] && rc_machine=0
[ "$rc_offline" = 5 ] && rc_offline=0
[ "$rc_machine" = 0 ] && [ "$rc_offline" = 0 ]
