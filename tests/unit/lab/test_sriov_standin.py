# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""`lab sriov`, the lab's stand-in for the SR-IOV config daemon (lab/gpu_tray_lab/cli.py SRIOV_SCRIPT), run by /bin/sh
against a tray in a directory whose kernel stand-in (traylab.reconcile, which the tray's path unit starts after a
write of sriov_numvfs) applies each write a moment later, as on a running lab tray. A changed count goes through 0 and
the new count is written only once the old VFs are gone (written at once, the kernel refuses it as busy and the tray
keeps its old VFs); a tray that does not end at the count asked fails the command."""

import os
import subprocess
import threading

import pytest

from gpu_tray_lab import cli

# two rails, few VFs: each VF costs the kernel stand-in ~40 ms of files (P_Key tables)
RAILS = ('mlx5_0', 'mlx5_4')


@pytest.fixture
def kernel():
    """Applies the tray's sriov_numvfs writes every 50 ms, as the lab tray's path unit does after a write."""
    stop = threading.Event()
    threads = []

    def start(tray):
        def loop():
            while not stop.wait(0.05):
                tray.reconcile()
        threads.append(threading.Thread(target=loop, daemon=True))
        threads[-1].start()
    yield start
    stop.set()
    for thread in threads:
        thread.join(5)


def sriov(tray, num_vfs, timeout=20, rails=RAILS):
    # as cmd_sriov runs it over SSH in the tray (sh -c SCRIPT sriov N TIMEOUT RAILS...)
    env = dict(os.environ, GPU_TRAY_LAB_SYS=tray.sys())
    return subprocess.run(['sh', '-c', cli.SRIOV_SCRIPT, 'sriov', str(num_vfs), str(timeout)] + list(rails), env=env,
                          capture_output=True, text=True, timeout=timeout + 30, check=False)


def vfs(tray, rail):
    device = tray.sys('class/infiniband/%s/device' % rail)
    return (int(tray.read('class/infiniband/%s/device/sriov_numvfs' % rail)),
            sum(1 for name in os.listdir(device) if name.startswith('virtfn')))


def test_a_changed_count_waits_for_the_old_vfs_and_ends_at_the_count_asked(make_tray, kernel):
    tray = make_tray('nvke-gb200')
    for rail in RAILS:
        tray.write_numvfs(rail, 2)
    kernel(tray)
    run = sriov(tray, 1)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ['mlx5_0 1', 'mlx5_4 1']
    assert [vfs(tray, rail) for rail in RAILS] == [(1, 1)] * 2
    assert 'EBUSY' not in ''.join(tray.reconcile())
    removed = sriov(tray, 0)
    assert removed.returncode == 0 and [vfs(tray, rail) for rail in RAILS] == [(0, 0)] * 2, removed.stderr


def test_a_tray_that_does_not_end_at_the_count_fails_naming_the_rail(make_tray, kernel):
    tray = make_tray('nvke-gb200', faults=['num-vfs-8'])      # the last rail's firmware allows 8 VFs
    kernel(tray)
    run = sriov(tray, 9, rails=['mlx5_4'])
    assert run.returncode == 1
    assert run.stderr == 'not at 9 VFs on: mlx5_4 (sriov_numvfs reads 0: the write of 9 was refused)\n'
    assert run.stdout.splitlines() == ['mlx5_4 0']
