"""What tag selections and empty in-memory groups do to the playbooks, without a tray or a cluster:
  * prepare_trays.yml's preflight cannot be left out by --tags / --skip-tags (only on purpose, by a variable);
  * a run without a chart stack (gpu_tray_stack_deploy=false, or before the stack role added its in-memory hosts)
    does not warn about the group stack_components."""
import pytest

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, read_yaml, run
INVENTORY = ROOT / "inventories" / "rke2-vr200"
PREFLIGHT_TASK = "gpu_tray.cluster.preflight : Read the tray once and judge it"
NO_MATCH = "Could not match supplied host pattern"


def playbook(*argv):
    rc, out = run([BIN / "ansible-playbook", *argv], env=checkout_env(ROOT, force_color_off=True))
    assert rc == 0, out[-6000:]
    return out


@pytest.mark.parametrize("selection", [[], ["--skip-tags", "preflight"], ["--tags", "imex"],
                                       ["--skip-tags", "preflight,kernel_tuning"], ["--tags", "rolling_reboot"]],
                         ids=lambda s: " ".join(s) or "all")
def test_prepare_trays_runs_the_preflight_whatever_the_tags(selection):
    out = playbook("-i", str(INVENTORY), "playbooks/prepare_trays.yml", "--list-tasks", *selection)
    assert PREFLIGHT_TASK in out, out
    # --list-tasks does not list a block's always section: the summary is written there, in the read's own block
    # (whose tags it inherits), whatever happened to the trays
    tasks = read_yaml("roles", "preflight", "tasks", "main.yml")
    block = next(t for t in tasks if "block" in t
                 and any(PREFLIGHT_TASK.split(" : ")[1] in b.get("name", "") for b in t["block"]))
    assert "tags" not in block and any(a.get("gpu_tray.cluster.phase_record", {}).get("phase") == "preflight" for a in block["always"])


def test_prepare_trays_header_says_how_to_skip_the_preflight_on_purpose():
    text = (ROOT / "playbooks" / "prepare_trays.yml").read_text()
    assert "-e gpu_tray_skip_preflight=true" in text.split("\n- name:")[0]
    assert "when: not (gpu_tray_skip_preflight | default(false) | bool)" in text


@pytest.mark.parametrize("name", ["site.yml", "deploy_stack.yml", "teardown_stack.yml", "validate.yml"])
def test_no_host_pattern_warning_without_a_stack(name):
    out = playbook("-i", str(INVENTORY), "playbooks/%s" % name, "--list-hosts", "-e", "gpu_tray_stack_deploy=false")
    assert NO_MATCH not in out, out


def test_deploy_stack_without_a_stack_runs_without_a_warning():
    out = playbook("-i", "localhost,", "-c", "local", "playbooks/deploy_stack.yml", "-e", "gpu_tray_stack_deploy=false")
    assert "skipping: no hosts matched" in out, out
    assert NO_MATCH not in out and "[WARNING]" not in out, out


@pytest.mark.parametrize("tags, kept, dropped", [
    ("rdma_netns", ["RDMA netns mode - the modprobe.d file"], ["Kernel tuning - GRUB drop-in", "Host IMEX service"]),
    ("kernel_tuning,imex", ["Kernel tuning - GRUB drop-in", "Host IMEX service"], ["RDMA netns mode", "RDMA modules"]),
])
def test_restore_trays_is_scoped_per_role_and_always_ends_with_the_rolling_reboot(tags, kept, dropped):
    out = playbook("-i", str(INVENTORY), "playbooks/restore_trays.yml", "--list-tasks", "--tags", tags)
    for name in kept + ["gpu_tray.cluster.rolling_reboot : Say why the tray needs the reboot"]:
        assert name in out, (name, out)
    for name in dropped:
        assert name not in out, (name, out)
    skipped = playbook("-i", str(INVENTORY), "playbooks/restore_trays.yml", "--list-tasks", "--skip-tags", "rolling_reboot")
    assert "gpu_tray.cluster.rolling_reboot : " not in skipped and "Kernel tuning - GRUB drop-in" in skipped, skipped
