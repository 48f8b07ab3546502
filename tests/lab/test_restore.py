"""playbooks/restore_trays.yml on rehearsal-lab VR200 trays: the way back from host preparation.

Two fresh trays (update-grub run once, as on any installed Ubuntu, so that grub.cfg exists; with the LANG Ansible's
modules run with, whose grub-mkconfig locale lines would otherwise differ) are recorded: the /etc tree - every
directory, link (with its target) and file (hashed) - /boot/grub/grub.cfg and /proc/cmdline. Restoring a fresh tray changes nothing and reboots nothing.
prepare_trays.yml then tunes them (GRUB drop-in, sysctl.d, LimitSTACK drop-in, nvidia-imex masked, ib_core
exclusive) with one reboot each; restore_trays.yml --check --diff lists what would go and changes nothing;
restore_trays.yml removes it all with one reboot each, verifying that the tuned arguments are gone and netns_mode is
shared again - the directory the prepare created for the LimitSTACK drop-in included - and the trays record as they
did fresh. A second restore changes nothing.
"""
import json
import re
import subprocess

import pytest

from labtools import BIN, ROOT, ansible_env, lab, lab_up, ssh, tray_status

TRAYS = ("tray01", "tray02")
RESTORE = ROOT / "playbooks" / "restore_trays.yml"
PREPARE = ROOT / "playbooks" / "prepare_trays.yml"
SYSFS = "/var/lib/gpu-tray-lab/sys"


@pytest.fixture(scope="module")
def lab2():
    inventory = lab_up("--platform", "rke2-vr200", "--trays", str(len(TRAYS)))
    for tray in TRAYS:
        # as Ansible runs it (the role's update-grub): LANG=C.UTF-8 makes grub-mkconfig add its locale lines
        ssh(tray, "LANG=C.UTF-8 update-grub >/dev/null 2>&1")
    yield inventory
    lab("down")


def play(inventory, path, tmp_path, *args):
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(path), "-e",
            json.dumps({"gpu_tray_report_dir": str(tmp_path / "report")})] + list(args)
    return subprocess.run(argv, cwd=ROOT, env=ansible_env(), capture_output=True, text=True)


# merged /usr: /lib, /bin, /sbin are /usr's (systemctl enable links /lib/systemd/system/x where the package linked
# /usr/lib/systemd/system/x - the same unit)
MERGED_USR = re.compile(r"^(l .* -> )/(lib|lib64|bin|sbin)/", re.M)


def recorded(tray):
    """The /etc tree - every directory (and other entry that is neither a file nor a link), every link with its target
    (merged-/usr aliases as /usr's), every file's sha256 - the sha256 of /boot/grub/grub.cfg and the booted command
    line."""
    tree = ssh(tray, "find /etc ! -type f -printf '%y %p -> %l\\n' | LC_ALL=C sort; "
                     "find /etc -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum")
    return {"etc": MERGED_USR.sub(r"\1/usr/\2/", tree),
            "grub_cfg": ssh(tray, "sha256sum /boot/grub/grub.cfg"),
            "cmdline": ssh(tray, "cat /proc/cmdline")}


def differences(before, after):
    """What differs between two records: the /etc entries only before and only after, the other parts."""
    old, new = set(before["etc"].splitlines()), set(after["etc"].splitlines())
    return {"gone": sorted(old - new), "new": sorted(new - old),
            "other": [key for key in ("grub_cfg", "cmdline") if before[key] != after[key]]}


def changed(run, tray):
    match = re.search(r"^%s\s+: ok=\d+\s+changed=(\d+)\s+unreachable=0\s+failed=0" % tray, run.stdout, re.M)
    assert match, run.stdout[-4000:]
    return int(match.group(1))


def boots():
    return dict((tray, tray_status(tray)["boot_count"]) for tray in TRAYS)


def netns(tray):
    return ssh(tray, "cat %s/module/ib_core/parameters/netns_mode" % SYSFS).strip()


@pytest.fixture(scope="module")
def fresh(lab2):
    return dict((tray, recorded(tray)) for tray in TRAYS)


def test_restore_of_a_fresh_tray_changes_nothing(lab2, fresh, tmp_path):
    before = boots()
    run = play(lab2, RESTORE, tmp_path)
    assert run.returncode == 0, run.stdout[-4000:]
    assert [changed(run, tray) for tray in TRAYS] == [0, 0]
    assert boots() == before
    assert dict((tray, recorded(tray)) for tray in TRAYS) == fresh


def test_prepare_then_restore_gives_back_the_fresh_trays(lab2, fresh, tmp_path):
    start = boots()
    prepared = play(lab2, PREPARE, tmp_path)
    assert prepared.returncode == 0, prepared.stdout[-6000:]
    assert boots() == dict((tray, count + 1) for tray, count in start.items())
    for tray in TRAYS:
        assert recorded(tray)["cmdline"] != fresh[tray]["cmdline"] and netns(tray) == "N"
        assert ssh(tray, "systemctl is-enabled nvidia-imex.service || true").strip() == "masked"
    after_prepare = dict((tray, recorded(tray)) for tray in TRAYS)
    for tray in TRAYS:
        # the LimitSTACK drop-in of the active runtime unit, in a directory the prepare created
        assert "d /etc/systemd/system/rke2-agent.service.d -> \n" in after_prepare[tray]["etc"], tray
        assert "d /etc/systemd/system/rke2-agent.service.d -> \n" not in fresh[tray]["etc"], tray

    # --check --diff: says what would go, changes nothing, reboots nothing
    check = play(lab2, RESTORE, tmp_path, "--check", "--diff")
    assert check.returncode == 0, check.stdout[-6000:]
    # (the VR200 recipe loads no RDMA modules: no modules-load.d file; the VM test covers that role's restore)
    for path in ("/etc/default/grub.d/99-gpu-tray-kernel-tuning.cfg", "/etc/sysctl.d/90-gpu-tray-tuning.conf",
                 "/etc/modprobe.d/gpu-tray-ib-core-netns.conf"):
        assert path in check.stdout, path
    assert dict((tray, recorded(tray)) for tray in TRAYS) == after_prepare
    assert boots() == dict((tray, count + 1) for tray, count in start.items())

    restored = play(lab2, RESTORE, tmp_path)
    assert restored.returncode == 0, restored.stdout[-6000:]
    assert boots() == dict((tray, count + 2) for tray, count in start.items())          # one reboot each
    rows = dict((row["tray"], row) for row in json.loads((tmp_path / "report" / "rolling-reboot.json").read_text()))
    # verified after the reboot: the tuned arguments are gone from /proc/cmdline
    assert [(rows[tray]["status"], rows[tray]["cmdline_verified"]) for tray in TRAYS] == [("rebooted", "yes")] * 2, rows
    for tray in TRAYS:
        assert netns(tray) == "Y", tray
        assert ssh(tray, "systemctl is-enabled nvidia-imex.service; systemctl is-active nvidia-imex.service").split() \
            == ["enabled", "active"]
        now = recorded(tray)
        assert now == fresh[tray], (tray, differences(fresh[tray], now))

    again = play(lab2, RESTORE, tmp_path)
    assert again.returncode == 0 and [changed(again, tray) for tray in TRAYS] == [0, 0], again.stdout[-4000:]
    assert boots() == dict((tray, count + 2) for tray, count in start.items())
