"""Bad inventory input stops a role at its argument spec, with a message naming the variable (no traceback,
and before any task touches a host)."""
import json
import re
import sys

import pytest

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, run


def playbook(path, extra_vars, *argv):
    """(exit code, output) of ansible-playbook ``path`` with ``extra_vars``."""
    return run([BIN / "ansible-playbook", *argv, path, "-e", json.dumps(extra_vars)],
               env=checkout_env(ROOT, force_color_off=True))


def run_role(role, extra_vars, tmp_path):
    play = tmp_path / "play.yml"
    play.write_text("- hosts: localhost\n  connection: local\n  gather_facts: false\n  roles:\n"
                    "    - gpu_tray.cluster.%s\n" % role)
    return playbook(play, extra_vars)


@pytest.mark.parametrize("extra_vars, variable, words", [
    ({"preflight_platform": "gb300-eks"}, "preflight_platform", ["nvke-gb200", "rke2-vr200"]),
    ({"gpu_tray_platform": "nvke-gb200", "preflight_min_num_vfs": "sixteen"}, "preflight_min_num_vfs", ["int"]),
    ({"gpu_tray_platform": "nvke-gb200", "preflight_hugepages_requested": [{"size": "2M"}]}, "count", ["required"]),
    ({"gpu_tray_platform": "rke2-vr200", "preflight_rails": "mlx5_0,mlx5_1"}, None, ["expected mlx5_0, mlx5_1"]),
])
def test_preflight_rejects_bad_input_by_name(extra_vars, variable, words, tmp_path):
    rc, out = run_role("preflight", dict(extra_vars, preflight_sysfs_root="/nonexistent-gpu-tray-test",
                                         preflight_report_dir=str(tmp_path / "report")), tmp_path)
    assert rc != 0, out
    assert "Traceback" not in out, out
    if variable is None:
        # a comma-separated string where a list is expected is accepted and split; the checks then run against
        # the nonexistent sysfs root and fail on their own, naming the rails that were asked for (evidence)
        assert "Preflight failed (" in out and "rails" in out, out
        evidence = (tmp_path / "report" / "localhost" / "preflight.json").read_text()
        for word in words:
            assert word in evidence, evidence
        return
    assert "Validating arguments against arg spec" in out, out
    assert "TASK [gpu_tray.cluster.preflight : Read the tray" not in out, "a task ran despite bad input:\n" + out
    assert variable in out, out
    for word in words:
        assert word in out, out


def run_preflight_playbook(extra_vars, tmp_path):
    """playbooks/preflight.yml with localhost as the one GPU tray."""
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  children:\n    gpu_trays:\n      hosts:\n        localhost:\n"
                         "          ansible_connection: local\n          ansible_python_interpreter: %s\n" % sys.executable)
    return playbook(ROOT / "playbooks" / "preflight.yml", extra_vars, "-i", inventory)


def test_preflight_checks_every_phase_input_by_its_gpu_tray_name_before_reading_the_tray(tmp_path):
    """Inputs of later phases (rdma_netns, kernel_tuning), one the preflight role takes itself (gpu_tray_num_vfs) and
    the P_Key are refused by playbook preflight.yml's first task (gpu_tray.cluster.check_inputs), named as the user
    wrote them (gpu_tray_*), all in one message, before the tray is read; a P_Key given as a number passes. The rules
    one by one: tests/unit/plugins/plugin_utils/test_inputs.py."""
    base = {"gpu_tray_platform": "rke2-vr200", "gpu_tray_sysfs_root": "/nonexistent-gpu-tray-test",
            "gpu_tray_report_dir": str(tmp_path / "report")}
    rc, out = run_preflight_playbook(dict(base, gpu_tray_ib_core_netns_mode="exlusive", gpu_tray_tuned_intent="trainig",
                                         gpu_tray_pkey=70000, gpu_tray_num_vfs="sixteen"), tmp_path)
    assert rc != 0 and "Traceback" not in out, out
    text = " ".join(out.split())
    assert "The run's inputs are refused, nothing was read, written or installed: " in text, out
    for words in ("gpu_tray_ib_core_netns_mode must be one of: exclusive, shared, unmanaged, got 'exlusive'",
                  "gpu_tray_tuned_intent must be one of: '' (empty), performance, multiNodeTraining, inference, got "
                  "'trainig'", "gpu_tray_num_vfs must be an integer, got 'sixteen'",
                  "gpu_tray_pkey is not a partition key: 70000 is not a partition key"):
        assert words in text, words
    assert "TASK [gpu_tray.cluster.preflight : Read the tray" not in out, out
    assert "rdma_netns_mode" not in text and "kernel_tuning_intent" not in text, out
    assert "preflight_min_num_vfs" not in text, out
    rc, out = run_preflight_playbook(dict(base, gpu_tray_pkey=0x8001), tmp_path)
    assert "The run's inputs are refused" not in out and "TASK [gpu_tray.cluster.preflight : Read the tray" in out, out


def test_the_role_alone_checks_the_inputs_before_reading_the_tray(tmp_path):
    """The preflight role run without the playbook (main.yml includes inputs.yml when no play checked them):
    gpu_tray_pkeys=0x8001 (for gpu_tray_pkey) would leave the preflight checking 0xffff - refused, named, with the
    closest known name, beside a site name that is not listed in gpu_tray_site_variables."""
    base = {"gpu_tray_platform": "nvke-gb200", "preflight_sysfs_root": "/nonexistent-gpu-tray-test",
            "preflight_report_dir": str(tmp_path / "report")}
    rc, out = run_role("preflight", dict(base, gpu_tray_pkeys="0x8001", gpu_tray_rack_label="r01"), tmp_path)
    assert rc != 0 and "Traceback" not in out, out
    assert ("gpu_tray_pkeys is not a variable of gpu_tray.cluster (did you mean gpu_tray_pkey?); gpu_tray_rack_label "
            "is not a variable of gpu_tray.cluster; a gpu_tray_* variable of the site itself goes in "
            "gpu_tray_site_variables.") in " ".join(out.split()), out
    assert "TASK [gpu_tray.cluster.preflight : Read the tray" not in out, out


@pytest.mark.parametrize("role, extra_vars, variable, words", [
    ("imex", {"gpu_tray_platform": "rke2-vr200", "gpu_tray_imex_host_service": "off"}, "imex_host_service",
     ["masked", "enabled"]),
    ("rdma_modules", {"gpu_tray_platform": "nvke-gb200", "gpu_tray_rdma_modules_enabled": "maybe"},
     "rdma_modules_enabled", ["bool"]),
    ("rdma_netns", {"gpu_tray_platform": "rke2-vr200", "gpu_tray_ib_core_netns_mode": "exclusiv"}, "rdma_netns_mode",
     ["exclusive", "shared"]),
    ("kernel_tuning", {"gpu_tray_platform": "rke2-vr200", "gpu_tray_tuned_intent": "multiNodeTraining",
                       "gpu_tray_tuning_hugepages": [{"size": "2M"}]}, "count", ["required"]),
    ("kernel_tuning", {"gpu_tray_platform": "gb300-eks"}, "kernel_tuning_platform", ["nvke-gb200", "rke2-vr200"]),
])
def test_preparing_roles_reject_bad_inventory_input_by_name(role, extra_vars, variable, words, tmp_path):
    # every case fails at the argument spec, so no task of the role touches this machine
    rc, out = run_role(role, extra_vars, tmp_path)
    assert rc != 0, out
    assert "Traceback" not in out, out
    assert "Validating arguments against arg spec" in out, out
    assert not re.search(r"TASK \[gpu_tray\.cluster\.%s : (?!Validating)" % role, out), "a task ran:\n" + out
    assert variable in out, out
    for word in words:
        assert word in out, out
