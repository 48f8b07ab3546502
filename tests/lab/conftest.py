"""tests/lab: tests that boot rehearsal-lab trays (helpers in labtools.py). They need root.

Without root they skip, with the reason in the summary. In CI a lab that cannot start must fail, as the test
cluster does with KCLUSTER_REQUIRE: with GPU_TRAY_LAB_REQUIRE=1 (.ci/run sets it) they fail instead, before
any lab is started. GPU_TRAY_LAB_ASSUME_MISSING=root plays a machine without root (the switch's own test,
tests/unit/lab_infra/test_lab_require.py).
"""
import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def cannot_run():
    """Why lab trays cannot be booted here, or None."""
    if os.geteuid() != 0 or "root" in os.environ.get("GPU_TRAY_LAB_ASSUME_MISSING", "").split(","):
        return "the lab needs root (mounts, network namespaces, systemd-nspawn)"
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if pathlib.Path(str(item.fspath)).resolve().parent != HERE:
        return
    reason = cannot_run()
    if reason is None:
        return
    if os.environ.get("GPU_TRAY_LAB_REQUIRE") == "1":
        pytest.fail("%s (GPU_TRAY_LAB_REQUIRE=1: failing instead of skipping)" % reason, pytrace=False)
    pytest.skip(reason)
