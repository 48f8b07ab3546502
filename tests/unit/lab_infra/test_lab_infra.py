"""Pure parts of the lab CLI (lab/gpu_tray_lab): fault parsing, the inventory and ssh_config it writes,
the rootfs cache key, and the supervisor's reboot loop with a stand-in for systemd-nspawn."""
import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "lab"))

from gpu_tray_lab import cgroups, cli, inventory, rootfs, util  # noqa: E402


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TRAY_LAB_STATE", str(tmp_path / "state"))
    (tmp_path / "state" / "ssh").mkdir(parents=True)
    return tmp_path / "state"


def test_fault_default_index_is_tray_1_and_duplicates_collapse():
    assert cli.parse_faults(["pkey-limited-pf", "pkey-limited-pf@1", "num-vfs-8@3"], 4) == [
        ("pkey-limited-pf", 1), ("num-vfs-8", 3)]


@pytest.mark.parametrize("spec, message", [
    (["bogus"], "unknown fault 'bogus'"),
    (["pkey-limited-pf@5"], "outside 1..4"),
    (["pkey-limited-pf@0"], "outside 1..4"),
    (["pkey-limited-pf@x"], "NAME@N"),
])
def test_bad_faults_are_refused_with_the_reason(spec, message):
    with pytest.raises(util.LabError, match=message):
        cli.parse_faults(spec, 4)


def test_every_fault_of_the_interface_is_known():
    assert set(cli.known_faults()) >= {
        "pkey-limited-pf", "pkey-limited-vf", "num-vfs-8", "sriov-disabled", "link-type-eth",
        "grub-dropin-override", "no-return-from-reboot", "imex-reenabled", "hugepage-1g"}
    assert cli.fault_kind("hugepage-1g") == "inventory"
    assert cli.fault_kind("no-return-from-reboot") == "tray"


def test_inventory_groups_vars_and_inventory_level_fault(state):
    spec = {"platform": "rke2-vr200", "trays": 3, "faults": ["pkey-limited-vf@1", "hugepage-1g@2"]}
    path = cli.write_inventory(spec)
    inv = yaml.safe_load(path.read_text())["all"]["children"]
    assert list(inv) == ["gpu_trays"]                               # each tray listed once, in its
    assert list(inv["gpu_trays"]["children"]) == ["rke2_vr200"]     # platform group under gpu_trays
    hosts = inv["gpu_trays"]["children"]["rke2_vr200"]["hosts"]
    assert sorted(hosts) == ["tray01", "tray02", "tray03"]
    assert hosts["tray02"]["ansible_host"] == "198.18.2.2"
    assert hosts["tray01"]["gpu_tray_lab_faults"] == ["pkey-limited-vf"]
    assert hosts["tray02"]["gpu_tray_tuning_hugepages"] == [{"size": "2M", "count": 5128},
                                                            {"size": "1G", "count": 2}]
    assert "gpu_tray_tuning_hugepages" not in hosts["tray01"]       # the group_vars value applies there
    for host in hosts.values():                                     # lab vars are host vars (see below)
        assert host["gpu_tray_lab"] is True
        assert host["gpu_tray_sysfs_root"] == "/var/lib/gpu-tray-lab/sys"
        assert host["gpu_tray_proc_root"] == "/proc"
        assert host["gpu_tray_boot_time_command"] == "cat /run/gpu-tray-lab/boot_id"
    v = inv["gpu_trays"]["vars"]
    assert "gpu_tray_sysfs_root" not in v
    assert v["ansible_user"] == "root"
    assert v["ansible_ssh_private_key_file"] == str(state / "ssh" / "id_ed25519")
    assert "StrictHostKeyChecking=no" in v["ansible_ssh_common_args"]
    link = path.parent / "group_vars"
    assert os.readlink(link) == str(REPO / "inventories" / "rke2-vr200" / "group_vars")
    assert (link / "rke2_vr200.yml").is_file()


def test_inventory_is_what_ansible_inventory_sees(state):
    path = cli.write_inventory({"platform": "nvke-gb200", "trays": 2, "faults": []})
    proc = subprocess.run([str(pathlib.Path(sys.executable).parent / "ansible-inventory"),
                           "-i", str(path.parent), "--host", "tray02"],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    hv = json.loads(proc.stdout)
    assert hv["gpu_tray_platform"] == "nvke-gb200"                 # from the linked group_vars
    assert hv["gpu_tray_recipe"] == "gb200-nvke-ubuntu-training" and hv["gpu_tray_pkey"] == "0xffff"
    assert "gpu_tray_rails" not in hv                                # a platform fact: the profile has it
    assert hv["ansible_host"] == "198.18.2.2"
    assert hv["gpu_tray_sysfs_root"] == "/var/lib/gpu-tray-lab/sys"
    assert hv["gpu_tray_boot_time_command"] == "cat /run/gpu-tray-lab/boot_id"


def _ansible_inventory_host(inventory_dir, host):
    proc = subprocess.run([str(pathlib.Path(sys.executable).parent / "ansible-inventory"),
                           "-i", str(inventory_dir), "--host", host],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_lab_vars_win_over_platform_group_vars(state, tmp_path, monkeypatch):
    """A platform group_vars file (more specific group than gpu_trays) that sets the real paths must not
    send the lab's trays to /sys: the lab vars are host vars."""
    group_vars = tmp_path / "platform" / "group_vars"
    group_vars.mkdir(parents=True)
    (group_vars / "nvke_gb200.yml").write_text(
        "---\ngpu_tray_sysfs_root: /sys\ngpu_tray_boot_time_command: cat /proc/sys/kernel/random/boot_id\n"
        "gpu_tray_lab: false\n")
    monkeypatch.setattr(inventory, "platform_group_vars", lambda platform: group_vars)
    path = cli.write_inventory({"platform": "nvke-gb200", "trays": 1, "faults": []})
    hv = _ansible_inventory_host(path.parent, "tray01")
    assert hv["gpu_tray_sysfs_root"] == "/var/lib/gpu-tray-lab/sys"
    assert hv["gpu_tray_boot_time_command"] == "cat /run/gpu-tray-lab/boot_id"
    assert hv["gpu_tray_lab"] is True


def test_inventory_fault_vars_come_from_fixtures_only(state, monkeypatch):
    monkeypatch.setattr(cli.fixtures_module(), "inventory_vars",
                        lambda platform, faults: {"gpu_tray_tuning_hugepages": [{"size": "7M", "count": 1}]})
    path = cli.write_inventory({"platform": "rke2-vr200", "trays": 1, "faults": ["hugepage-1g@1"]})
    hosts = yaml.safe_load(path.read_text())["all"]["children"]["gpu_trays"]["children"]["rke2_vr200"]["hosts"]
    assert hosts["tray01"]["gpu_tray_tuning_hugepages"] == [{"size": "7M", "count": 1}]


def test_ssh_config_has_one_entry_per_tray(state):
    inventory.write_ssh_config([1, 2])
    text = (state / "ssh" / "config").read_text()
    assert "Host tray01 198.18.1.2\n  HostName 198.18.1.2\n  User root" in text
    assert "Host tray02 198.18.2.2" in text and "tray03" not in text


def test_to_yaml_round_trips_nested_values():
    data = {"a": {"b": [{"size": "2M", "count": 1}, {"size": "1G", "count": 2}], "c": [], "d": {}},
            "e": True, "f": "x: y # z", "g": ["one", "two"]}
    assert yaml.safe_load("\n".join(inventory.to_yaml(data))) == data


def test_prepared_rootfs_key_follows_the_tray_files(tmp_path, monkeypatch):
    lab = tmp_path / "lab"
    (lab / "trayfs/usr/local/sbin").mkdir(parents=True)
    (lab / "gpu_tray_lab").mkdir()
    (lab / "trayfs/usr/local/sbin/modprobe").write_text("#!/bin/sh\n")
    monkeypatch.setattr(util, "LAB_DIR", lab)
    k1 = rootfs.prepared_key()
    (lab / "trayfs/usr/local/sbin/modprobe").write_text("#!/bin/sh\nexit 1\n")
    k2 = rootfs.prepared_key()
    os.chmod(lab / "trayfs/usr/local/sbin/modprobe", 0o755)
    k3 = rootfs.prepared_key()
    (lab / "gpu_tray_lab/fixtures.py").write_text("")
    k4 = rootfs.prepared_key()
    assert len({k1, k2, k3, k4}) == 4
    base = rootfs.base_key()
    # none of those edits touches the (slow, debootstrap) base: its key stays the same ...
    (lab / "trayfs/usr/local/sbin/modprobe").write_text("#!/bin/sh\nexit 2\n")
    assert rootfs.prepared_key() != k4
    assert rootfs.base_key() == base
    # ... and it changes with the package list (then the prepared key follows)
    monkeypatch.setattr(rootfs, "PACKAGES", rootfs.PACKAGES + ("socat",))
    assert rootfs.base_key() != base
    assert rootfs.prepared_key() not in {k1, k2, k3, k4}


FAKE_NSPAWN = """#!/bin/sh
# stand-in for systemd-nspawn: exit codes from a list, one per boot; boot number $FAKE_UNBOOTABLE_AT
# behaves like a tray whose boot unit found no kernel (reason file in the root, then power off)
n=$(cat "$FAKE_DIR/calls" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$FAKE_DIR/calls"
echo "$@" > "$FAKE_DIR/argv"
if [ "$n" = "${FAKE_UNBOOTABLE_AT:-}" ]; then
  mkdir -p "$FAKE_ROOT/var/lib/gpu-tray-lab"
  echo "GRUB default entry boots /boot/vmlinuz-x, which does not exist" > "$FAKE_ROOT/var/lib/gpu-tray-lab/unbootable"
  exit 0
fi
rc=$(sed -n "${n}p" "$FAKE_DIR/codes"); exit ${rc:-0}
"""


def _run_supervisor(tmp_path, codes, faults, unbootable_at=None, background=False):
    """The supervisor over a fake nspawn that exits with ``codes`` in turn; ``background``: return it running (the
    caller signals it and waits), else run it to its end (60 s at most)."""
    bindir, tray, root = tmp_path / "bin", tmp_path / "tray", tmp_path / "root"
    bindir.mkdir()
    tray.mkdir()
    root.mkdir(exist_ok=True)
    (bindir / "systemd-nspawn").write_text(FAKE_NSPAWN)
    os.chmod(bindir / "systemd-nspawn", 0o755)
    (tmp_path / "codes").write_text("\n".join(map(str, codes)) + "\n")
    name = "unit%d" % os.getpid()
    (tray / "tray.json").write_text(json.dumps({
        "root": str(root), "machine": "gtl-" + name, "hostname": name, "netns": "gtl-" + name,
        "faults": faults}))
    env = dict(os.environ, PATH="%s:%s" % (bindir, os.environ["PATH"]), FAKE_DIR=str(tmp_path), FAKE_ROOT=str(root),
               FAKE_UNBOOTABLE_AT=str(unbootable_at or ""))
    argv = [sys.executable, str(REPO / "lab/gpu_tray_lab/supervisor.py"), str(tray)]
    if background:
        return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), tray
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    finally:
        for d in cgroups.recorded(tray):
            cgroups.remove_tree(d)
    return proc, tray


@pytest.mark.lab_needs("root", reason="the supervisor joins a cgroup of its own")
def test_supervisor_reboots_on_133_and_stops_on_poweroff(tmp_path):
    proc, tray = _run_supervisor(tmp_path, [133, 133, 0], [])
    assert proc.returncode == 0, proc.stderr
    assert (tray / "boot_count").read_text().strip() == "3"
    assert (tray / "state").read_text().startswith("stopped (powered off, nspawn rc 0)")
    assert not (tray / "supervisor.pid").exists() and not (tray / "nspawn.pid").exists()
    argv = (tmp_path / "argv").read_text().split()
    for flag in ("-b", "--register=no", "--keep-unit", "--console=passive"):
        assert flag in argv
    assert argv[argv.index("-M") + 1].startswith("gtl-unit")


def _state(tray):
    return (tray / "state").read_text() if (tray / "state").exists() else ""


def _sel(tray):
    return [json.loads(line)["message"] for line in (tray / "sel.jsonl").read_text().splitlines()]


def _finish(proc, tray, timeout=30):
    try:
        return proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for d in cgroups.recorded(tray):
            cgroups.remove_tree(d)


@pytest.mark.lab_needs("root", reason="the supervisor joins a cgroup of its own")
def test_supervisor_no_return_fault_hangs_in_post_until_a_bmc_reset(tmp_path):
    proc, tray = _run_supervisor(tmp_path, [133, 0], ["no-return-from-reboot"], background=True)
    try:
        assert util.wait_for(lambda: _state(tray).startswith("down (fault no-return-from-reboot"), 30), _state(tray)
        assert proc.poll() is None                                    # powered on, hanging: the supervisor waits
        assert (tray / "boot_count").read_text().strip() == "1"
        assert "does not come back" in (tray / "supervisor.log").read_text()
        assert _sel(tray)[-1].startswith("POST hang")
        proc.send_signal(signal.SIGUSR1)                              # a reset through the BMC: a cold boot
        assert _finish(proc, tray) == 0                               # boot 2 powers off (fake nspawn rc 0)
    finally:
        _finish(proc, tray)
    assert (tray / "boot_count").read_text().strip() == "2"
    assert _state(tray).startswith("stopped (powered off, nspawn rc 0)")
    assert "Host reset through the BMC (ForceRestart) while hanging in POST" in _sel(tray)


@pytest.mark.lab_needs("root", reason="the supervisor joins a cgroup of its own")
def test_supervisor_stuck_in_post_hangs_again_after_a_reset_and_a_bmc_power_off_says_so(tmp_path):
    proc, tray = _run_supervisor(tmp_path, [133, 0], ["stuck-in-post"], background=True)
    try:
        assert util.wait_for(lambda: _state(tray).startswith("down (fault stuck-in-post"), 30), _state(tray)
        proc.send_signal(signal.SIGUSR1)
        assert util.wait_for(lambda: _sel(tray)[-1].endswith("again after a power cycle)"), 30), _sel(tray)
        assert _state(tray).startswith("down (fault stuck-in-post") and proc.poll() is None
        assert (tray / "boot_count").read_text().strip() == "1"       # it never booted again
        (tray / "power_request").write_text("off\n")                   # what Tray.power('ForceOff') writes
        proc.send_signal(signal.SIGTERM)
        assert _finish(proc, tray) == 0
    finally:
        _finish(proc, tray)
    assert _state(tray) == "off (powered off through the BMC)\n"
    assert _sel(tray)[-1] == "Host powered off through the BMC" and not (tray / "power_request").exists()
    assert (tray / "hung").exists()                                  # a power-on hangs again (lab up clears it)


@pytest.mark.lab_needs("root", reason="the supervisor joins a cgroup of its own")
def test_supervisor_stops_a_reboot_loop(tmp_path):
    proc, tray = _run_supervisor(tmp_path, [133] * 40, [])
    assert (tray / "state").read_text().startswith("stopped (reboot loop)")
    assert int((tray / "boot_count").read_text()) == 15


@pytest.mark.lab_needs("root", reason="the supervisor joins a cgroup of its own")
def test_supervisor_reports_an_unbootable_tray_and_keeps_it_down(tmp_path):
    # boot 1 reboots (133); boot 2 finds no kernel image: the tray powers off and stays down, saying why
    (tmp_path / "root" / "var/lib/gpu-tray-lab").mkdir(parents=True)
    (tmp_path / "root" / "var/lib/gpu-tray-lab/unbootable").write_text("stale reason of an earlier lab\n")
    proc, tray = _run_supervisor(tmp_path, [133, 133, 133], [], unbootable_at=2)
    assert proc.returncode == 0, proc.stderr
    assert (tray / "boot_count").read_text().strip() == "2"
    state = (tray / "state").read_text()
    assert state.startswith("down (unbootable: GRUB default entry boots /boot/vmlinuz-x, which does not exist)")
    assert "did not boot" in (tray / "supervisor.log").read_text()


def test_faults_the_platform_cannot_have_are_refused_before_anything_is_built():
    args = cli.build_parser().parse_args(["up", "--platform", "nvke-gb200", "--trays", "2",
                                          "--fault", "imex-reenabled@2"])
    with pytest.raises(util.LabError, match=r"tray02: fault imex-reenabled: platform nvke-gb200 has no nvidia-imex"):
        cli.desired(args)
    args = cli.build_parser().parse_args(["up", "--platform", "rke2-vr200", "--trays", "2",
                                          "--fault", "imex-reenabled@2"])
    assert cli.desired(args)["faults"] == ["imex-reenabled@2"]


def test_reset_with_a_fault_but_no_platform_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["reset", "--fault", "pkey-limited-pf@1"])
    assert exc.value.code == 2
    assert "--fault needs --platform and --trays" in capsys.readouterr().err


class _FakeTray:
    def __init__(self, index, log, failing):
        self.index, self.name, self.log, self.failing = index, util.tray_name(index), log, failing

    def _step(self, what):
        self.log.append((self.name, what))
        if (self.name, what) in self.failing:
            raise util.LabError("%s failed" % what)

    def stop(self):
        self._step("stop")

    def remove_cgroups(self):
        self._step("cgroups")

    def umount(self):
        self._step("umount")


def test_down_carries_on_after_a_failing_tray_and_reports_every_error(state, monkeypatch):
    for i in (1, 2, 3):
        (state / "trays" / util.tray_name(i)).mkdir(parents=True)
    log, deleted = [], []
    failing = {("tray01", "stop"), ("tray02", "umount")}
    monkeypatch.setattr(cli.trays, "Tray", lambda i: _FakeTray(i, log, failing))
    monkeypatch.setattr(cli.trays, "mounts_under", lambda prefix: [])
    monkeypatch.setattr(cli.net, "delete", deleted.append)
    monkeypatch.setattr(cli.net, "list_ours", lambda: [])
    with pytest.raises(util.LabError) as exc:
        cli._down_locked()  # pylint: disable=protected-access
    message = str(exc.value)
    assert "2 problem(s)" in message and "tray01: stop: stop failed" in message
    assert "tray02: unmount: umount failed" in message
    # every tray got every step, the failing ones included
    for name in ("tray01", "tray02", "tray03"):
        assert [w for n, w in log if n == name] == ["stop", "cgroups", "umount"]
    assert deleted == [1, 2, 3]
    assert state.exists()                     # kept: `lab down` again finishes the job


def test_stale_rootfs_build_is_unmounted_before_it_is_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TRAY_CACHE", str(tmp_path))
    final = tmp_path / "rootfs-base-abc"
    stale = tmp_path / "rootfs-base-abc.tmp-999999999"        # no such pid: its builder is gone
    (stale / "proc").mkdir(parents=True)
    mounted = {str(stale / "proc"), str(stale / "dev/pts"), str(stale / "dev")}
    calls = []

    def fake_run(argv, check=True, capture=False, **_kw):
        calls.append(list(argv))
        if argv[0] == "umount":
            mounted.discard(argv[-1])
        elif argv[0] == "rm":
            assert not mounted, "deleted while %s was mounted" % mounted
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(rootfs.util, "run", fake_run)
    monkeypatch.setattr(rootfs.trays, "mounts_under",
                        lambda p: sorted(m for m in mounted if m.startswith(str(p) + "/")))
    rootfs._remove_stale_tmps(final)  # pylint: disable=protected-access
    assert calls == [["umount", str(stale / "dev/pts")], ["umount", str(stale / "proc")],
                     ["umount", str(stale / "dev")], ["rm", "-rf", "--one-file-system", str(stale)]]
