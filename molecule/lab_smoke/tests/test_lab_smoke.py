"""testinfra checks of the lab_smoke scenario, run over ssh:// with the ssh_config the lab writes.

They check the tray as a user's playbook sees it: real sshd and systemd, the emulated HCA sysfs tree in the
kernel's formats, the boot id the lab's boot unit writes.
"""
import json
import re

SYSFS = "/var/lib/gpu-tray-lab/sys"
IB = SYSFS + "/class/infiniband"
GB200_DEVICES = ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"]


def test_hostname_matches_inventory_name(host):
    assert host.check_output("hostname") == host.backend.hostname


def test_systemd_is_running_without_failed_units(host):
    state = host.run("systemctl is-system-running")
    failed = host.check_output("systemctl --failed --no-legend --plain")
    assert state.stdout.strip() == "running", failed


def test_sshd_runs_as_a_systemd_service(host):
    ssh = host.service("ssh")
    assert ssh.is_running
    assert ssh.is_enabled


def test_infiniband_class_has_the_five_gb200_devices(host):
    assert sorted(host.file(IB).listdir()) == GB200_DEVICES


def test_rail_pkey_is_the_default_partition_full_member(host):
    pkey = host.file(IB + "/mlx5_0/ports/1/pkeys/0")
    assert pkey.is_file
    assert pkey.content_string.strip() == "0xffff"


def test_rail_port_is_active_infiniband(host):
    port = IB + "/mlx5_0/ports/1"
    assert host.file(port + "/state").content_string.strip() == "4: ACTIVE"
    assert host.file(port + "/link_layer").content_string.strip() == "InfiniBand"
    assert re.fullmatch(r"\d+ Gb/sec \(\d+X [A-Z]+\d*\)", host.file(port + "/rate").content_string.strip())


def test_bluefield_is_not_a_connectx7(host):
    assert host.file(IB + "/mlx5_2/device/device").content_string.strip() == "0xa2dc"
    assert host.file(IB + "/mlx5_0/device/device").content_string.strip() == "0x1021"


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")


def test_boot_id_written_this_boot(host):
    """The boot id (gpu_tray_boot_time_command, how the reboot role tells a new boot from the old one) is a
    fresh UUID written during THIS boot: on the tmpfs /run (gone with the previous boot), modified after PID 1
    started, by the boot unit that ran successfully this boot. A stale id - a file from an earlier boot, a
    copy of another tray's, a constant - fails."""
    path = "/run/gpu-tray-lab/boot_id"
    boot_id = host.file(path)
    assert boot_id.is_file
    assert UUID.fullmatch(boot_id.content_string.strip()), boot_id.content_string
    assert host.check_output("findmnt -n -o FSTYPE --target %s" % path) == "tmpfs"
    now = int(host.check_output("date +%s"))
    pid1_age = int(host.check_output("ps -o etimes= -p 1").strip())
    assert boot_id.mtime.timestamp() >= now - pid1_age - 1, "boot id older than this boot"
    unit = host.check_output("systemctl show -p Result -p ActiveState gpu-tray-lab-boot.service")
    assert "Result=success" in unit and "ActiveState=active" in unit, unit


def test_boot_ids_differ_between_trays(host):
    other = "tray02" if host.backend.hostname == "tray01" else "tray01"
    peer = host.get_host("ssh://%s" % other, ssh_config=host.backend.ssh_config)
    assert peer.file("/run/gpu-tray-lab/boot_id").content_string != host.file("/run/gpu-tray-lab/boot_id").content_string


def test_converge_record_matches_the_tray(host):
    """What converge recorded from the modules agrees with the tray read directly (and was written once)."""
    record = json.loads(host.file("/var/lib/gpu-tray-lab-smoke/facts.json").content_string)
    assert record["kernel_release"] == host.file("/proc/sys/kernel/osrelease").content_string.strip()
    assert record["kernel_release"].endswith("-64k") and record["kernel_flavour_page_size"] == 65536
    assert record["rails"] == ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4"]
    for name, bdf in zip(record["rails"], record["rail_pci_addresses"]):
        assert host.check_output("readlink -f %s/%s/device" % (IB, name)).endswith("/" + bdf)
    netns = host.file(SYSFS + "/module/ib_core/parameters/netns_mode").content_string.strip()
    assert record["ib_core_netns_mode"] == {"Y": "shared", "N": "exclusive"}[netns]
