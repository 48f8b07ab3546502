"""The example inventories (inventories/<platform>): `ansible-inventory` reads each, every one has the groups the
playbooks target, its rack is a real NVL72 rack (18 compute trays, each with the rack / NVLink-domain variable the
rolling reboot groups by), the reboot waves over it never take two trays of a rack down together, and the
rke2-vr200 intent presets resolve to recipes and tuning intents that exist."""
import json
import subprocess
import sys

import pytest
import yaml

from ansible_env import checkout_env
from qualitykit import BIN, ROOT, read_yaml
INVENTORIES = sorted(p.name for p in (ROOT / "inventories").iterdir() if p.is_dir())
ENV = checkout_env(ROOT, home=False)


def inventory(*args, path=None):
    proc = subprocess.run([str(BIN / "ansible-inventory"), "-i", str(path)] + list(args), cwd=ROOT, env=ENV,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "WARNING" not in proc.stderr, proc.stdout + proc.stderr
    return proc.stdout


def listed(path):
    data = json.loads(inventory("--list", path=path))
    return data, data["_meta"]["hostvars"]


def members(data, group):
    """Every host of group and of its children, in inventory order."""
    hosts = list(data.get(group, {}).get("hosts", []))
    for child in data.get(group, {}).get("children", []):
        hosts += [h for h in members(data, child) if h not in hosts]
    return hosts


@pytest.mark.parametrize("name", INVENTORIES)
def test_graph_has_the_groups_the_playbooks_target(name):
    graph = inventory("--graph", path=ROOT / "inventories" / name)
    for group in ("gpu_trays", "control_plane", "k8s_api", name.replace("-", "_")):
        assert "@%s:" % group in graph, graph


@pytest.mark.parametrize("name", INVENTORIES)
def test_an_nvl72_rack_with_the_reboot_grouping_variables(name):
    data, hostvars = listed(ROOT / "inventories" / name)
    trays = members(data, "gpu_trays")
    assert len(trays) == 18, trays
    group_by = {hostvars[t]["gpu_tray_reboot_group_by"] for t in trays}
    assert group_by == {"rack"}, group_by
    assert all(hostvars[t].get("rack") and hostvars[t].get("nvlink_domain") for t in trays)
    assert len({hostvars[t]["ansible_host"] for t in trays}) == 18
    assert not set(trays) & set(members(data, "control_plane")), "a control-plane node listed as a GPU tray"
    assert {hostvars[t]["gpu_tray_platform"] for t in trays} == {name}


@pytest.mark.parametrize("name", INVENTORIES)
def test_reboot_waves_take_one_tray_per_rack_at_a_time(name):
    # once on sys.path: a second equal entry gives the collection's namespace packages two paths, which
    # ansible-core's collection loader refuses in every later test of the session
    if str(ROOT / ".collections") not in sys.path:
        sys.path.insert(0, str(ROOT / ".collections"))
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.reboot_plan import plan_waves
    data, hostvars = listed(ROOT / "inventories" / name)
    trays = members(data, "gpu_trays")
    # a second rack, as an operator adds one: r02 copies of the trays
    second = [t.replace("-r01-", "-r02-") for t in trays]
    group_of = dict({t: hostvars[t]["rack"] for t in trays}, **{t: "r02" for t in second})
    waves = plan_waves(trays + second, trays + second, hostvars[trays[0]][
        "gpu_tray_reboot_batch"], group_of, "rack")
    assert len(waves) == 18 and all(sorted(group_of[h] for h in w) == ["r01", "r02"] for w in waves), waves


INTENTS = {"rke2_vr200_inference": "vr200-rke2-ubuntu-inference",
           "rke2_vr200_inference_dynamo": "vr200-rke2-ubuntu-inference-dynamo"}


@pytest.mark.parametrize("group", sorted(INTENTS))
def test_intent_presets_win_over_the_platform_vars(group, tmp_path):
    """A tray moved into an intent group gets that recipe and tuning intent, and the k8s_api host follows it."""
    hosts = read_yaml("inventories", "rke2-vr200", "hosts.yml")
    vr200 = hosts["all"]["children"]["gpu_trays"]["children"]["rke2_vr200"]
    moved = dict(list(vr200["hosts"].items())[:1])
    vr200["hosts"] = {}
    vr200["children"][group]["hosts"] = moved
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(hosts))
    (tmp_path / "group_vars").symlink_to(ROOT / "inventories" / "rke2-vr200" / "group_vars")
    data, hostvars = listed(tmp_path)
    tray = next(iter(moved))
    assert hostvars[tray]["gpu_tray_recipe"] == INTENTS[group]
    assert hostvars[tray]["gpu_tray_platform"] == "rke2-vr200"               # still a VR200 tray
    assert tray in members(data, "rke2_vr200")
    recipes = read_yaml("plugins", "plugin_utils", "stack_data", "recipes.yml")["recipes"]
    assert INTENTS[group] in recipes, "unknown recipe %s" % INTENTS[group]
    # the recipe's nvidia-tuned intent comes from the registry, and the platform profile has that intent
    profile = read_yaml("plugins", "plugin_utils", "platforms", "rke2-vr200.yml")
    assert "gpu_tray_tuned_intent" not in hostvars[tray], "the inventory keeps site facts only"
    assert recipes[INTENTS[group]]["platform"] == "rke2-vr200"
    assert recipes[INTENTS[group]]["tuned_intent"] in profile["tuning"]["intents"]
    # the API host follows the trays through the run context (plugin_utils/run_context.py), not inventory copies
    proc = subprocess.run([str(BIN / "ansible"), "-i", str(tmp_path), "k8s_api", "-m", "ansible.builtin.debug",
                           "-a", "msg={{ lookup('gpu_tray.cluster.run_context', 'recipe') }}"], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and INTENTS[group] in proc.stdout, proc.stdout + proc.stderr
