"""The rehearsal lab as Ansible sees it: 4 simulated NVKE GB200 trays reached over real SSH.

Issue 3 "done when": ping over the lab inventory, a fixture P_Key read through gpu_tray.cluster code over SSH,
a reboot that comes back with a new boot id, a GRUB drop-in that reaches /proc/cmdline only through
update-grub and a reboot.
"""
import re

import pytest

from labtools import ROOT, ansible_json, lab, lab_status, lab_up, playbook, ssh, tray_status

TRAYS = ["tray01", "tray02", "tray03", "tray04"]
SYSFS = "/var/lib/gpu-tray-lab/sys"
PLAYBOOKS = ROOT / "tests" / "lab" / "playbooks"


@pytest.fixture(scope="module")
def inventory():
    inv = lab_up("--platform", "nvke-gb200", "--trays", "4", "--fault", "pkey-limited-pf@2")
    yield inv
    lab("down")


def test_status_lists_four_running_trays(inventory):
    status = lab_status()
    assert status["lab"]["platform"] == "nvke-gb200"
    assert [t["name"] for t in status["trays"]] == TRAYS
    for t in status["trays"]:
        assert t["supervisor_pid"] and t["nspawn_pid"], t
        assert t["state"].startswith("running"), t
        assert t["address"] == "198.18.%d.2" % t["index"]


def test_up_again_with_the_same_options_is_a_no_op(inventory):
    before = {t["name"]: (t["supervisor_pid"], t["nspawn_pid"], t["boot_count"]) for t in lab_status()["trays"]}
    proc = lab("up", "--platform", "nvke-gb200", "--trays", "4", "--fault", "pkey-limited-pf@2")
    assert "nothing to do" in proc.stderr
    after = {t["name"]: (t["supervisor_pid"], t["nspawn_pid"], t["boot_count"]) for t in lab_status()["trays"]}
    assert after == before


def test_up_with_other_options_refuses_and_names_the_fix(inventory):
    proc = lab("up", "--platform", "rke2-vr200", "--trays", "2", check=False)
    assert proc.returncode != 0
    assert "lab/lab down" in proc.stderr and "lab/lab reset" in proc.stderr
    assert len(lab_status()["trays"]) == 4


def test_ansible_ping_reaches_every_tray_over_ssh(inventory):
    rc, hosts = ansible_json(inventory, "gpu_trays", "ansible.builtin.ping")
    assert rc == 0, hosts
    assert sorted(hosts) == TRAYS
    assert all(h.get("ping") == "pong" for h in hosts.values()), hosts


def test_inventory_carries_platform_group_vars_and_lab_vars(inventory):
    rc, hosts = ansible_json(inventory, "nvke_gb200", "ansible.builtin.debug",
                             "msg={{ [gpu_tray_platform, lookup('gpu_tray.cluster.platform_profile', gpu_tray_platform)"
                             ".rails, gpu_tray_sysfs_root, ansible_host] }}")
    assert rc == 0
    assert hosts["tray03"]["msg"] == ["nvke-gb200", ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4"],
                                      SYSFS, "198.18.3.2"]


def _rails_pkeys(hosts, tray):
    devices = hosts[tray]["ansible_facts"]["gpu_tray_rdma"]["devices"]
    return {d["name"]: d["ports"][0]["pkeys"] for d in devices if d["is_rail"]}


def test_rdma_facts_reads_the_fixture_pkeys_over_ssh(inventory):
    rc, hosts = ansible_json(inventory, "tray01,tray02", "gpu_tray.cluster.rdma_facts",
                             "sysfs_root=%s" % SYSFS)
    assert rc == 0, hosts
    healthy, faulty = _rails_pkeys(hosts, "tray01"), _rails_pkeys(hosts, "tray02")
    assert sorted(healthy) == ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4"]
    # what the module returns is what the tray's (emulated) kernel files say
    assert healthy["mlx5_0"] == [ssh("tray01", "cat %s/class/infiniband/mlx5_0/ports/1/pkeys/0" % SYSFS).strip()]
    assert all(p == ["0xffff"] for p in healthy.values()), healthy
    # the pkey-limited-pf fault on tray02: a rail PF holds only the limited-member key
    assert ["0x7fff"] in faulty.values(), faulty


def test_reboot_comes_back_with_a_new_boot_id_and_count(inventory):
    before_id = ssh("tray03", "cat /run/gpu-tray-lab/boot_id").strip()
    before = tray_status("tray03")
    proc = playbook(inventory, PLAYBOOKS / "reboot.yml", limit="tray03")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    after = tray_status("tray03")
    after_id = ssh("tray03", "cat /run/gpu-tray-lab/boot_id").strip()
    assert before_id and after_id and after_id != before_id
    assert after["boot_count"] == before["boot_count"] + 1
    assert after["supervisor_pid"] == before["supervisor_pid"]       # same supervisor, new nspawn
    assert after["nspawn_pid"] != before["nspawn_pid"]
    assert ssh("tray03", "systemctl is-system-running").strip() == "running"


def test_grub_dropin_reaches_proc_cmdline_only_through_update_grub_and_reboot(inventory):
    proc = playbook(inventory, PLAYBOOKS / "grub_dropin.yml", limit="tray04")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    m = re.search(r"CMDLINE_BEFORE=(.*?) CMDLINE_AFTER=(.*?)\"", proc.stdout)
    assert m, proc.stdout[-3000:]
    before, after = m.group(1).split(), m.group(2).split()
    assert "gtl_test.arg=1" not in before
    assert "gtl_test.arg=1" in after
    # the real update-grub wrote it into the default entry's linux line
    grub_cfg = ssh("tray04", "cat /boot/grub/grub.cfg")
    assert re.search(r"^\s*linux\s+/boot/vmlinuz-\S+ root=\S+ ro\b.*gtl_test\.arg=1", grub_cfg, re.M), grub_cfg
    # and the other trays are untouched
    assert "gtl_test.arg=1" not in ssh("tray01", "cat /proc/cmdline")
