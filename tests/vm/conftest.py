"""tests/vm: the host-preparation roles on real Debian VMs under qemu (lab/vm/vmlab). Run by `make test-vm`,
not by `make test`/.ci/run (tools/run-tests.sh lists its layers; docs/testing.md says why and how long).

They need root (the image build uses loop devices; apt installs qemu). Without root they fail: the suite
is only ever run on purpose.
"""
import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if pathlib.Path(str(item.fspath)).resolve().parent != HERE:
        return
    if os.geteuid() != 0:
        pytest.fail("tests/vm need root (loop devices for the image build, apt-get for qemu)", pytrace=False)


def pytest_terminal_summary(terminalreporter):
    import vmtools   # noqa: E402  (tests/vm is on sys.path through rootdir-relative conftest import)
    if not vmtools.TIMINGS:
        return
    terminalreporter.section("VM lab timings")
    for phase, seconds in vmtools.TIMINGS.items():
        terminalreporter.write_line("%-48s %7.0f s" % (phase, seconds))
    for note in vmtools.NOTES:
        terminalreporter.write_line(note)
