"""testinfra checks of the lab_smoke scenario, run over ssh:// with the ssh_config the lab writes.

They check the tray as a user's playbook sees it: real sshd and systemd, the emulated HCA sysfs tree in the
kernel's formats, the boot id the lab's boot unit writes.
"""
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


def test_boot_id_written_this_boot(host):
    boot_id = host.file("/run/gpu-tray-lab/boot_id")
    assert boot_id.is_file
    assert boot_id.content_string.strip()
