#!/usr/bin/env bash
# The whole test suite, as one pytest session (two workers) so it ends with one summary line:
#   tests/unit      pure parsers, modules (also via `ansible localhost -m`), filters, lab fixture generation
#   tests/quality   yamllint, ansible-lint (production), ansible-test sanity, build contents, ansible-doc
#   tests/lab       the rehearsal lab itself (boot, SSH, reboot, GRUB -> /proc/cmdline, clean teardown)
#   tests/molecule  every molecule/<scenario> against lab trays, `molecule test -s <scenario>`
#   tests/cluster   the real kube-apiserver test cluster (built once, cached) and what runs against it
#   tests/upstream  the five bundles held against the real upstream charts and CRDs (../shared/upstream; skipped
#                   in one line without it, failing with GPU_TRAY_UPSTREAM_REQUIRE=1)
# Extra pytest arguments pass through: tools/run-tests.sh -k pkey
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
layers=()
for d in tests/unit tests/quality tests/upstream tests/lab tests/molecule tests/cluster; do
  [ -d "$d" ] && layers+=("$d")
done
# Two pytest-xdist workers (GPU_TRAY_TEST_WORKERS; 0 runs everything in this process): the tests that use the
# machine's one lab and one test cluster form one group that a single worker runs in order (tests/conftest.py),
# while the other worker runs the offline layers beside them. docs/testing.md "Make targets and CI" has the times.
workers=${GPU_TRAY_TEST_WORKERS:-2}
xdist=()
[ "$workers" -gt 0 ] 2>/dev/null && xdist=(-n "$workers" --dist loadgroup)
.venv/bin/pytest -p no:cacheprovider -rfEs "${xdist[@]}" "${layers[@]}" "$@"
rc=$?
# pytest exit 5 = "no tests collected": a suite that ran nothing has not passed.
exit "$rc"
