"""testinfra checks of the gb200_prepare scenario (converge = playbooks/prepare_trays.yml, run twice), over ssh://.

The RDMA upper-layer modules must be loaded (the kernel's record, /sys/module/<name>, in the lab's sysfs tree) and
persisted in exactly one modules-load.d file, the role's; nothing NVKE needs requires a reboot, so every tray is
still in its first boot; the VR200-only changes (imex mask, ib_core netns_mode, GRUB drop-in) must not be there.
"""
import pytest

SYSFS = "/var/lib/gpu-tray-lab/sys"
MODULES = ["rdma_ucm", "ib_umad", "ib_ipoib"]
LOAD_FILE = "/etc/modules-load.d/gpu-tray-rdma.conf"
IPOIB_NETDEVS = ["ibp3s0", "ibP2p3s0", "ibP16p3s0", "ibP18p3s0"]


@pytest.mark.parametrize("module", MODULES)
def test_module_is_loaded(host, module):
    assert host.file("%s/module/%s" % (SYSFS, module)).is_directory


def test_modules_are_persisted_in_the_roles_file(host):
    f = host.file(LOAD_FILE)
    assert f.is_file and f.user == "root" and f.mode == 0o644
    names = [line.strip() for line in f.content_string.splitlines() if line.strip() and not line.startswith("#")]
    assert names == MODULES


def test_one_modules_load_file_names_the_modules(host):
    listed = host.check_output("grep -lrwE '%s' /etc/modules-load.d /run/modules-load.d 2>/dev/null || true"
                               % "|".join(MODULES)).split()
    assert listed == [LOAD_FILE]


def test_ipoib_netdevs_exist_on_every_rail(host):
    # ib_ipoib loaded -> an IPoIB netdev per InfiniBand rail (none before: the NVKE image does not load it)
    for netdev in IPOIB_NETDEVS:
        assert host.file("%s/class/net/%s" % (SYSFS, netdev)).exists, netdev


def test_no_tray_rebooted(host):
    # converge + idempotence: nothing on GB200 needs a reboot
    assert host.file("/var/lib/gpu-tray-lab/boot_count").content_string.strip() == "1"


@pytest.mark.parametrize("path", [
    "/etc/modprobe.d/gpu-tray-ib-core-netns.conf",
    "/etc/default/grub.d/99-gpu-tray-kernel-tuning.cfg",
    "/etc/sysctl.d/90-gpu-tray-tuning.conf",
])
def test_vr200_only_changes_are_absent(host, path):
    assert not host.file(path).exists
