"""playbooks/prepare_trays.yml on rehearsal-lab VR200 trays, the failure runs of issue 8 (one lab for the module):

- tray01 (`imex-reenabled`): `--check --diff` changes nothing - every file under /etc, /boot and the lab's fixture
  tree (/var/lib/gpu-tray-lab) hashes the same, no file appears under /root, /tmp or /var/tmp, no boot - and it
  still says which roles would need the reboot; then the imex role masks the unit (the mask survives the fault's
  re-enable at the next boot), `gpu_tray_imex_host_service: enabled` brings it back, `masked` again masks it.
- tray02 (`grub-dropin-override`): the run fails before anything is written and before any reboot, naming the
  drop-in that overwrites GRUB_CMDLINE_LINUX_DEFAULT.
- tray03 (`hugepage-1g`): the 1G request is refused with a message that suggests 2M/512M pages; nothing is written,
  no reboot.
"""
import json
import re
import subprocess

import pytest

from labtools import BIN, ROOT, ansible_env, lab, lab_up, reboot_tray, ssh, tray_status

PREPARE = ROOT / "playbooks" / "prepare_trays.yml"
# every file a preparing role could write, plus the lab's fixture tree (sysfs, boot count, hardware description)
HASHED = "/etc /boot /var/lib/gpu-tray-lab"
LISTED = "/root /tmp /var/tmp"
OUR_FILES = ["/etc/default/grub.d/99-gpu-tray-kernel-tuning.cfg", "/etc/sysctl.d/90-gpu-tray-tuning.conf",
             "/etc/modprobe.d/gpu-tray-ib-core-netns.conf"]


@pytest.fixture(scope="module")
def inventory():
    inv = lab_up("--platform", "rke2-vr200", "--trays", "3", "--fault", "imex-reenabled@1",
                 "--fault", "grub-dropin-override@2", "--fault", "hugepage-1g@3")
    yield inv
    lab("down")


def prepare(inventory, tmp_path, limit, *args, extra_vars=None):
    argv = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(PREPARE), "--limit", limit] + list(args)
    argv += ["-e", json.dumps(dict({"gpu_tray_report_dir": str(tmp_path / "report")}, **(extra_vars or {})))]
    return subprocess.run(argv, cwd=ROOT, env=ansible_env(), capture_output=True, text=True)


def snapshot(tray):
    """sha256 of every file under HASHED, the names of every entry under LISTED, the boot count."""
    hashes = ssh(tray, "find %s -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum" % HASHED)
    listed = ssh(tray, "find %s 2>/dev/null | sort" % LISTED)
    return {"hashes": hashes, "listed": listed, "boots": tray_status(tray)["boot_count"]}


def unit_state(tray):
    return ssh(tray, "systemctl is-enabled nvidia-imex.service; systemctl is-active nvidia-imex.service || true").split()


def failed_msg(run, tray):
    """The msg of the task that failed on tray (the default callback's `fatal: [tray]: FAILED! => {...}`)."""
    match = re.search(r"fatal: \[%s\]: FAILED! => (\{.*\})" % tray, run.stdout)
    assert match, run.stdout[-6000:]
    return json.loads(match.group(1))["msg"]


def test_check_mode_changes_nothing_and_says_which_roles_need_the_reboot(inventory, tmp_path):
    before = snapshot("tray01")
    assert before["hashes"].count("\n") > 100          # the fixture tree alone has hundreds of files
    run = prepare(inventory, tmp_path, "tray01", "--check", "--diff")
    assert run.returncode == 0, run.stdout[-6000:]
    # the rolling reboot says per tray which roles ask for the reboot, and why (their result records)
    assert re.search(r"Reboot required by kernel_tuning, rdma_netns: kernel arguments init_on_alloc=0 .* are not in "
                     r"/proc/cmdline yet; .*ib_core netns_mode is shared, not exclusive: the role sets it", run.stdout), \
        run.stdout[-6000:]
    assert "99-gpu-tray-kernel-tuning.cfg" in run.stdout          # --diff shows the drop-in it would write
    after = snapshot("tray01")
    assert after == before
    assert unit_state("tray01") == ["enabled", "active"]


def test_a_bad_input_of_a_later_phase_stops_the_run_before_any_tray_is_changed(inventory, tmp_path):
    """A value only a later role would refuse (rdma_netns) and a misspelt name stop prepare_trays at its first task
    (gpu_tray.cluster.check_inputs), named as the user wrote them: on a real tray the GRUB drop-in would otherwise be
    written and nvidia-imex masked before the run stops. One lab run: every rule of the check, and that each
    playbook runs it first, are tested offline (tests/unit/plugins/plugin_utils/test_inputs.py,
    tests/unit/plugins/action/test_check_inputs.py, tests/quality/test_input_checks.py)."""
    before = snapshot("tray01")
    run = prepare(inventory, tmp_path, "tray01",
                  extra_vars={"gpu_tray_ib_core_netns_mode": "exlusive", "gpu_tray_pkeys": "0x8001"})
    assert run.returncode != 0, run.stdout[-6000:]
    msg = " ".join(failed_msg(run, "tray01").split())
    for words in ("gpu_tray_pkeys is not a variable of gpu_tray.cluster (did you mean gpu_tray_pkey?)",
                  "gpu_tray_ib_core_netns_mode must be one of: exclusive, shared, unmanaged, got 'exlusive'"):
        assert words in msg, msg
    assert "PLAY [Prepare every GPU tray (no reboot here)]" not in run.stdout, run.stdout[-6000:]
    assert snapshot("tray01") == before                  # nothing written, nothing read that leaves a trace, no reboot
    assert unit_state("tray01") == ["enabled", "active"]


def test_imex_is_masked_the_mask_survives_a_reenable_and_enabled_reverses_it(inventory, tmp_path):
    assert unit_state("tray01") == ["enabled", "active"]
    run = prepare(inventory, tmp_path, "tray01", "--tags", "imex")
    assert run.returncode == 0, run.stdout[-6000:]
    assert unit_state("tray01") == ["masked", "inactive"]
    assert ssh("tray01", "readlink /etc/systemd/system/nvidia-imex.service").strip() == "/dev/null"
    # the imex-reenabled fault re-enables and starts the unit at every boot, like a driver package postinst
    reboot_tray("tray01")
    assert unit_state("tray01") == ["masked", "inactive"]
    assert "nvidia-imex" in ssh("tray01", "cat /var/log/gpu-tray-lab/faults.log")
    back = prepare(inventory, tmp_path, "tray01", "--tags", "imex", extra_vars={"gpu_tray_imex_host_service": "enabled"})
    assert back.returncode == 0, back.stdout[-6000:]
    assert unit_state("tray01") == ["enabled", "active"]
    again = prepare(inventory, tmp_path, "tray01", "--tags", "imex")
    assert again.returncode == 0, again.stdout[-6000:]
    assert unit_state("tray01") == ["masked", "inactive"]
    rerun = prepare(inventory, tmp_path, "tray01", "--tags", "imex")
    assert re.search(r"tray01\s+: ok=\d+\s+changed=0\s.*failed=0", rerun.stdout), rerun.stdout[-3000:]


def test_grub_dropin_override_fails_before_anything_is_written_naming_the_file(inventory, tmp_path):
    before = snapshot("tray02")
    run = prepare(inventory, tmp_path, "tray02", extra_vars={"gpu_tray_skip_preflight": True})
    assert run.returncode != 0, run.stdout[-6000:]
    msg = failed_msg(run, "tray02")
    assert msg.startswith("/etc/default/grub.d/99-zz-override.cfg overwrites GRUB_CMDLINE_LINUX_DEFAULT"), msg
    assert "append" in msg
    assert snapshot("tray02") == before                  # checked before the first write: nothing written, no reboot
    assert unit_state("tray02") == ["enabled", "active"]  # no other role ran either


def test_hugepage_1g_is_refused_nothing_written_no_reboot(inventory, tmp_path):
    before = snapshot("tray03")
    run = prepare(inventory, tmp_path, "tray03", extra_vars={"gpu_tray_skip_preflight": True})
    assert run.returncode != 0, run.stdout[-6000:]
    msg = failed_msg(run, "tray03")
    # the variable the user set comes first; the role's refusal is the preflight's sizes verdict, with its fix
    assert msg.startswith("gpu_tray_tuning_hugepages asks for 1G huge pages, but the running kernel has no 1G huge "
                          "page pool. Request only sizes"), msg
    assert msg.endswith("On this 64k-page kernel request 2M or 512M pages instead of 1G."), msg
    assert snapshot("tray03") == before
    for path in OUR_FILES:
        assert ssh("tray03", "test -e %s && echo yes || echo no" % path).strip() == "no", path
    # the whole playbook refuses it earlier, in the read-only preflight (its page size check), rebooting nothing
    full = prepare(inventory, tmp_path, "tray03")
    assert full.returncode != 0, full.stdout[-6000:]
    assert "Preflight failed (hugepages)" in failed_msg(full, "tray03")
    assert ("hugepages: gpu_tray_tuning_hugepages asks for 1G huge pages, but the running kernel has no 1G huge page "
            "pool." in failed_msg(full, "tray03"))
    assert "1G" in (tmp_path / "report" / "tray03" / "preflight.json").read_text()
    assert snapshot("tray03") == before
