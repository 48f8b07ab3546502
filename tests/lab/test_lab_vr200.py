"""Issue 3 items on BOOTED trays (one rke2-vr200 lab of 4 trays for the whole module): VR200 services, kernel
files that refuse writes like a kernel, the imex-reenabled / grub-dropin-override / sriov-disabled /
link-type-eth faults seen over SSH and through gpu_tray.cluster modules, netns_mode from modprobe.d only after a
reboot, and a tray GRUB cannot boot staying down with the reason in `lab status`.

Trays: tray01 grub-dropin-override, tray02 imex-reenabled, tray03 sriov-disabled, tray04 link-type-eth (and,
last, made unbootable). Tests run in file order; each uses its own tray, so the order only matters for tray04.
"""
import re
import time

import pytest

from labtools import ROOT, ansible_json, lab, lab_up, playbook, reboot_tray, ssh, ssh_rc, tray_status

SYSFS = "/var/lib/gpu-tray-lab/sys"
PLAYBOOKS = ROOT / "tests" / "lab" / "playbooks"
LAST_RAIL, LAST_RAIL_BDF = "mlx5_3", "0012:03:00.0"       # the rail single-rail faults apply to (VR200)


@pytest.fixture(scope="module")
def inventory():
    inv = lab_up("--platform", "rke2-vr200", "--trays", "4", "--fault", "grub-dropin-override@1",
                 "--fault", "imex-reenabled@2", "--fault", "sriov-disabled@3", "--fault", "link-type-eth@4")
    yield inv
    lab("down")


def test_vr200_services_as_on_a_tray(inventory):
    for tray in ("tray01", "tray03"):
        assert ssh(tray, "systemctl is-active rke2-agent.service").strip() == "active"
        rc, out, _err = ssh_rc(tray, "systemctl is-active containerd.service")
        assert (rc, out.strip()) == (3, "inactive")
        assert ssh(tray, "systemctl is-enabled nvidia-imex.service").strip() == "enabled"
        assert ssh(tray, "cat /proc/sys/kernel/osrelease").strip().endswith("-nvidia-bos-64k")
        assert 'VERSION_ID="26.04"' in ssh(tray, "cat /etc/os-release")


@pytest.mark.parametrize("path, value", [
    (SYSFS + "/module/ib_core/parameters/netns_mode", "Y"),
    (SYSFS + "/class/infiniband/mlx5_0/ports/1/pkeys/0", "0xffff"),
    (SYSFS + "/class/infiniband/mlx5_0/device/sriov_totalvfs", "16"),
    ("/proc/cmdline", None),
    ("/proc/sys/kernel/osrelease", None),
])
def test_kernel_files_refuse_writes_even_from_root(inventory, path, value):
    before = ssh("tray03", "cat %s" % path)
    if value is not None:
        assert before.strip() == value
    rc, _out, err = ssh_rc("tray03", "echo 0x7fff > %s" % path)
    assert rc != 0 and "Read-only file system" in err, err
    assert ssh("tray03", "cat %s" % path) == before


def test_sriov_numvfs_and_nr_hugepages_still_take_writes(inventory):
    dev = SYSFS + "/class/infiniband/mlx5_0/device"
    ssh("tray03", "echo 2 > %s/sriov_numvfs" % dev)
    ssh("tray03", "for i in $(seq 50); do [ -e %s/virtfn1 ] && break; sleep 0.1; done" % dev)
    assert ssh("tray03", "cat %s/sriov_numvfs; readlink %s/virtfn1/physfn" % (dev, dev)).split() == [
        "2", "../0000:03:00.0"]
    pool = SYSFS + "/kernel/mm/hugepages/hugepages-2048kB"
    ssh("tray03", "echo 4 > %s/nr_hugepages" % pool)
    ssh("tray03", "for i in $(seq 50); do [ $(cat %s/free_hugepages) = 4 ] && break; sleep 0.1; done" % pool)
    assert ssh("tray03", "cat %s/nr_hugepages %s/free_hugepages" % (pool, pool)).split() == ["4", "4"]


def _facts(hosts, tray):
    return {d["name"]: d for d in hosts[tray]["ansible_facts"]["gpu_tray_rdma"]["devices"]}


def test_sriov_disabled_and_link_type_eth_seen_by_rdma_facts(inventory):
    rc, hosts = ansible_json(inventory, "tray03,tray04", "gpu_tray.cluster.rdma_facts", "sysfs_root=%s" % SYSFS)
    assert rc == 0, hosts
    t3, t4 = _facts(hosts, "tray03"), _facts(hosts, "tray04")
    assert t3[LAST_RAIL]["sriov_totalvfs"] is None and t3["mlx5_0"]["sriov_totalvfs"] == 16
    assert t4[LAST_RAIL]["ports"][0]["link_layer"] == "Ethernet"
    assert t4[LAST_RAIL]["ports"][0]["pkeys"] == ["0xffff"]          # RoCE: a one-entry P_Key table
    assert t4["mlx5_0"]["ports"][0]["link_layer"] == "InfiniBand"


def test_sriov_disabled_and_link_type_eth_fail_nic_firmware(inventory):
    rails = "0000:03:00.0,0002:03:00.0,0010:03:00.0,%s" % LAST_RAIL_BDF
    rc, hosts = ansible_json(inventory, "tray03,tray04", "gpu_tray.cluster.nic_firmware",
                             "sysfs_root=%s devices=%s min_num_vfs=16 fail_on_error=false" % (SYSFS, rails))
    assert rc == 0, hosts

    def problems(tray):
        return {bdf: sorted({p["param"] for p in dev["problems"]}) for bdf, dev in hosts[tray]["devices"].items()}

    assert problems("tray03")[LAST_RAIL_BDF] == ["SRIOV_EN"], hosts["tray03"]
    assert problems("tray04")[LAST_RAIL_BDF] == ["LINK_TYPE_P1"], hosts["tray04"]
    for tray in ("tray03", "tray04"):
        assert sorted(problems(tray)) == sorted(rails.split(","))
        assert all(not p for bdf, p in problems(tray).items() if bdf != LAST_RAIL_BDF), problems(tray)


def test_grub_dropin_override_wins_through_update_grub_and_reboot(inventory):
    proc = playbook(inventory, PLAYBOOKS / "grub_dropin.yml", limit="tray01")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    m = re.search(r"CMDLINE_BEFORE=(.*?) CMDLINE_AFTER=(.*?)\"", proc.stdout)
    assert m, proc.stdout[-3000:]
    after = m.group(2).split()
    # the fault's 99-zz-override.cfg sorts after the playbook's 99-test.cfg and sets the value wholesale
    assert "gtl_test.arg=1" not in after
    assert after[-2:] == ["quiet", "splash"] and "console=ttyAMA0,115200n8" not in after
    assert "gtl_test.arg=1" in ssh("tray01", "cat /etc/default/grub.d/99-test.cfg")


def test_imex_reenabled_survives_disable_but_not_mask(inventory):
    ssh("tray02", "systemctl disable --now nvidia-imex.service")
    assert ssh_rc("tray02", "systemctl is-enabled nvidia-imex.service")[1].strip() == "disabled"
    reboot_tray("tray02")
    assert ssh("tray02", "systemctl is-enabled nvidia-imex.service").strip() == "enabled"
    assert ssh("tray02", "systemctl is-active nvidia-imex.service").strip() == "active"
    ssh("tray02", "systemctl mask --now nvidia-imex.service")
    reboot_tray("tray02")
    assert ssh_rc("tray02", "systemctl is-enabled nvidia-imex.service")[1].strip() == "masked"
    assert ssh_rc("tray02", "systemctl is-active nvidia-imex.service")[1].strip() == "inactive"


def test_netns_mode_from_modprobe_d_only_after_a_reboot(inventory):
    param = SYSFS + "/module/ib_core/parameters/netns_mode"
    ssh("tray03", "echo 'options ib_core netns_mode=0' > /etc/modprobe.d/ib_core-netns.conf")
    assert ssh("tray03", "cat %s" % param).strip() == "Y"          # ib_core is loaded: options apply at load
    reboot_tray("tray03")
    assert ssh("tray03", "cat %s" % param).strip() == "N"


def test_tray_grub_cannot_boot_stays_down_and_says_why(inventory):
    # a drop-in with a shell syntax error: the real update-grub fails (nothing is written)
    rc, _out, err = ssh_rc("tray04", "echo 'GRUB_CMDLINE_LINUX_DEFAULT=\"unterminated' > /etc/default/grub.d/60-bad.cfg"
                                     " && update-grub")
    assert rc != 0 and "Unterminated quoted string" in err, err
    ssh("tray04", "rm /etc/default/grub.d/60-bad.cfg && update-grub")
    # the kernel image of grub.cfg's default entry goes away (a package removed without update-grub)
    image = ssh("tray04", "ls /boot/vmlinuz-*").strip()
    ssh("tray04", "rm %s" % image)
    ssh_rc("tray04", "systemctl reboot")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not tray_status("tray04")["state"].startswith("down"):
        time.sleep(0.3)
    t4 = tray_status("tray04")
    assert t4["supervisor_pid"] is None and t4["nspawn_pid"] is None, t4
    assert t4["state"].startswith("down (unbootable: GRUB default entry boots %s, which does not exist" % image), t4
    assert ssh_rc("tray04", "true")[0] != 0
    assert tray_status("tray01")["state"].startswith("running")
