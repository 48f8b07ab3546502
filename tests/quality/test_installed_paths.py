"""Relative paths a user passes resolve against the directory ansible-playbook was started in, for every task, when
the collection is installed from its tarball (as from Galaxy) and run by FQCN from another directory.

Module tasks see the playbook's directory as their working directory, action plugins and filters the controller
process's; the roles resolve each user-given directory once (realpath filter) so both agree: a relative bundle
directory is found again by the next run (no "does not exist" warning, a component dropped from the recipe is
removed), and stale CTRF files of a relative evidence directory are removed.
"""
import os
import subprocess
import sys

import yaml

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, build, run

NCCL_LOG = ROOT / "tests" / "unit" / "fixtures" / "nccl" / "vr200_nvls_ib_mpirun.log"


def _installed(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTHONPATH"))}
    env.update(PATH="%s:%s" % (BIN, env.get("PATH", "/usr/bin:/bin")), ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "home" / "tmp"))
    installed = tmp_path / "collections"
    rc, out = run([BIN / "ansible-galaxy", "collection", "install", "--no-deps", "-p", installed, build(tmp_path, env)],
                  cwd=tmp_path, env=env)
    assert rc == 0, out
    # the dependency collections from the checkout's .collections (Galaxy is unreachable here); the installed
    # gpu_tray.cluster comes first, so the checkout's own copy is never used
    env = checkout_env(ROOT, base=env, collections=[installed, ROOT / ".collections"], config=False, home=False,
                       nocolor=False)
    work = tmp_path / "work"
    work.mkdir()
    return env, work, installed / "ansible_collections" / "gpu_tray" / "cluster"


# an NVKE recipe's SR-IOV policies need each rail's PF address (the lab tray model's)
RAIL_PCI = ('{"gpu_tray_rail_pci_addresses": {"mlx5_0": "0000:03:00.0", "mlx5_1": "0002:03:00.0", '
            '"mlx5_3": "0010:03:00.0", "mlx5_4": "0012:03:00.0"}}')


def _play(env, work, playbook, *extra):
    argv = [str(BIN / "ansible-playbook"), "-i", "localhost,", "-c", "local", "gpu_tray.cluster." + playbook,
            "-e", "ansible_python_interpreter=%s" % sys.executable]
    for item in extra:
        argv += ["-e", item]
    return subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, check=False)


def test_relative_bundle_dir_is_the_start_directory_and_dropped_components_go(tmp_path):
    env, work, collection = _installed(tmp_path)
    first = _play(env, work, "render_bundle", "gpu_tray_recipe=gb200-nvke-ubuntu-training", RAIL_PCI,
                  "gpu_tray_bundle_dir=./bundle")
    assert first.returncode == 0, first.stdout[-4000:]
    rendered = set(os.listdir(work / "bundle" / "components"))
    again = _play(env, work, "render_bundle", "gpu_tray_recipe=vr200-rke2-ubuntu-training",
                  "gpu_tray_bundle_dir=./bundle")
    assert again.returncode == 0, again.stdout[-4000:]
    assert "WARNING" not in again.stdout + again.stderr, again.stdout[-4000:] + again.stderr
    plan = yaml.safe_load((work / "bundle" / "plan.yaml").read_text())
    assert plan["recipe"] == "vr200-rke2-ubuntu-training"
    names = {c["name"] for c in plan["components"]}
    left = set(os.listdir(work / "bundle" / "components"))
    assert left and all(d in names or d.rsplit("-", 1)[0] in names for d in left), sorted(left - names)
    assert rendered - left, "the second recipe drops no component: the test proves nothing"
    # nothing was written inside the installed collection
    assert not (collection / "playbooks" / "bundle").exists() and not list(collection.rglob("plan.yaml"))


def test_relative_report_dir_gets_the_evidence_and_loses_stale_ctrf(tmp_path):
    env, work, collection = _installed(tmp_path)
    common = ["gpu_tray_recipe=gb200-nvke-ubuntu-training", RAIL_PCI, "gpu_tray_report_dir=report"]
    perf = _play(env, work, "validate", *common, '{"gpu_tray_validate_phases": ["performance"], "gpu_tray_nccl_logs": '
                 '[{"path": "%s", "variant": "nvls"}]}' % NCCL_LOG)
    assert perf.returncode == 0, perf.stdout[-4000:]
    ctrf = work / "report" / "validation" / "ctrf"
    assert sorted(os.listdir(ctrf)) == ["performance.json"]
    trays = _play(env, work, "validate", *common, '{"gpu_tray_validate_phases": ["trays"]}')
    assert trays.returncode == 0, trays.stdout[-4000:]
    assert sorted(os.listdir(ctrf)) == ["trays.json"], "stale CTRF of the first run left behind"
    report = (work / "report" / "validation" / "report.md").read_text()
    assert "No GPU trays in inventory group gpu_trays" in report and "| trays | SKIPPED |" in report
    assert not list(collection.rglob("report.md")) and not (collection.parent / "gpu-tray-evidence").exists()
