# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's BMC model (lab/gpu_tray_lab/bmc.py, trays.Tray power): what a tray's BMC reports from the supervisor's
files, and what a Redfish reset type does to the supervisor. A stand-in process plays the supervisor (its command
line names supervisor.py and the tray's state dir, as the real one's does); the lab tests (tests/lab/test_bmc_rollout.py)
drive the real one through the real emulator."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from ansible_env import checkout_env

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "lab"))

from gpu_tray_lab import bmc, fixtures, trays, util  # noqa: E402

# sleeps until SIGUSR1 (a reset), then writes "reset" into the file named by its last argument
STAND_IN = ("import signal, sys, time\n"
            "signal.signal(signal.SIGUSR1, lambda *a: open(sys.argv[-1] + '/got', 'w').write('reset'))\n"
            "time.sleep(60)\n")


@pytest.fixture
def tray(tmp_path, monkeypatch):
    monkeypatch.setenv("GPU_TRAY_LAB_STATE", str(tmp_path))
    t = trays.Tray(2)
    t.dir.mkdir(parents=True)
    util.write_json(t.dir / "tray.json", {"faults": ["no-return-from-reboot"]})
    procs = []

    def supervise(state):
        (t.dir / "state").write_text(state + "\n")
        proc = subprocess.Popen([sys.executable, "-c", STAND_IN, str(trays.SUPERVISOR), str(t.dir)])
        procs.append(proc)
        (t.dir / "supervisor.pid").write_text("%d\n" % proc.pid)
        assert util.wait_for(lambda: t.supervisor_pid() == proc.pid, 10)
        time.sleep(0.3)                      # the stand-in installs its handler
        return proc

    t.supervise = supervise
    yield t
    for proc in procs:
        proc.kill()
        proc.wait()


def test_a_running_tray_is_on_with_its_os_running_and_its_smbios_identity(tray):
    tray.supervise("running (boot 1)")
    view = bmc.system_view(tray, "rke2-vr200")
    ident = fixtures.identity("rke2-vr200", 2)
    assert view["Id"] == "System_0" and view["Name"] == "tray02"
    assert view["SerialNumber"] == ident["product_serial"] and view["UUID"] == ident["product_uuid"]
    assert (view["PowerState"], view["BootProgress"], view["Health"]) == ("On", "OSRunning", "OK")


def test_a_tray_hanging_in_post_is_on_stuck_and_critical(tray):
    tray.supervise("down (fault no-return-from-reboot: did not come back from reboot)")
    view = bmc.system_view(tray, "rke2-vr200")
    assert (view["PowerState"], view["BootProgress"], view["Health"]) == ("On", "PCIResourceConfigStarted",
                                                                          "Critical")


def test_a_booting_tray_and_a_tray_without_supervisor(tray):
    tray.supervise("booting (boot 2)")
    assert bmc.system_view(tray, "rke2-vr200")["BootProgress"] == "OSBootStarted"
    os.kill(tray.supervisor_pid(), signal.SIGKILL)
    assert util.wait_for(lambda: tray.supervisor_pid() is None, 10)
    (tray.dir / "state").write_text("off (powered off through the BMC)\n")
    view = bmc.system_view(tray, "rke2-vr200")
    assert (view["PowerState"], view["BootProgress"], view["Health"]) == ("Off", "None", "OK")


def test_a_reset_signals_the_supervisor_and_nmi_and_on_change_nothing(tray):
    tray.supervise("down (fault no-return-from-reboot: did not come back from reboot)")
    assert tray.power("On") == "already on"
    assert tray.power("Nmi") == "nothing (no NMI in the lab)"
    assert tray.power("ForceRestart") == "reset"
    assert util.wait_for((tray.dir / "got").is_file, 10)
    with pytest.raises(util.LabError):
        tray.power("Bounce")


def test_power_off_asks_the_supervisor_to_say_so_and_on_needs_a_set_up_tray(tray):
    tray.supervise("running (boot 1)")
    assert tray.power("ForceOff") == "powered off"
    assert tray.supervisor_pid() is None
    assert (tray.dir / "power_request").read_text() == "off\n"     # the real supervisor reads and removes it
    assert tray.power("GracefulShutdown") == "already off"
    with pytest.raises(util.LabError, match="not set up"):
        tray.power("On")                     # no mounted root in this stand-in tray


def test_sel_entries_are_redfish_log_entries(tray):
    (tray.dir / "sel.jsonl").write_text("\n".join(json.dumps(e) for e in [
        {"id": 1, "created": "2026-12-04T10:00:00+00:00", "severity": "OK", "message": "Host power on"},
        {"id": 2, "created": "2026-12-04T10:01:00+00:00", "severity": "Critical", "message": "POST hang: x"}])
        + "\nnot json\n")
    entries = bmc.sel_entries(tray)
    assert [(e["Id"], e["Severity"], e["Message"], e["EntryType"]) for e in entries] == [
        ("1", "OK", "Host power on", "SEL"), ("2", "Critical", "POST hang: x", "SEL")]
    assert entries[1]["Created"] == "2026-12-04T10:01:00+00:00"


def test_each_tray_has_its_own_bmc_port_and_the_base_can_move(monkeypatch):
    assert bmc.address(1) == "https://127.0.0.1:%d" % (bmc.PORT_BASE + 1)
    monkeypatch.setenv("GPU_TRAY_LAB_BMC_PORT", "20000")
    assert bmc.address(3) == "https://127.0.0.1:20003"


def ansible_module(module, args):
    """Run a module on localhost with the repository's ansible (the json callback); return its result."""
    env = checkout_env(REPO, callback="ansible.posix.json", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
                       ANSIBLE_DEPRECATION_WARNINGS="0", ANSIBLE_LOCALHOST_WARNING="0",
                       ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    argv = [str(pathlib.Path(sys.executable).parent / "ansible"), "localhost", "-m", module, "-a", json.dumps(args)]
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False)
    return json.loads(proc.stdout)["plays"][0]["tasks"][0]["hosts"]["localhost"]


def test_the_real_emulator_serves_the_tray_to_community_general_redfish(tray, monkeypatch):
    """The lab's BMC server (sushy-tools with LabTrayDriver) on loopback, TLS from the lab CA, basic auth, read and
    driven by community.general's redfish_info / redfish_command as the roles use them."""
    pytest.importorskip("sushy_tools.emulator.main")
    monkeypatch.setenv("GPU_TRAY_LAB_BMC_PORT", "28540")
    tray.supervise("down (fault no-return-from-reboot: did not come back from reboot)")
    (tray.dir / "sel.jsonl").write_text(json.dumps({"id": 1, "created": "2026-12-04T10:00:00+00:00",
                                                    "severity": "Critical", "message": "POST hang: x"}) + "\n")
    util.write_json(util.state_dir() / "lab.json", {"platform": "rke2-vr200", "trays": 2, "faults": []})
    (util.state_dir() / "inventory").mkdir()
    try:
        assert bmc.up([2], "rke2-vr200", timeout=60) == [("tray02", "https://127.0.0.1:28542")]
        creds = json.loads((bmc.bmc_dir() / "credentials.json").read_text())
        common = {"baseuri": "127.0.0.1:28542", "username": creds["username"], "password": creds["password"],
                  "validate_certs": True, "ca_path": str(bmc.bmc_dir() / "ca.pem"), "timeout": 10}
        info = ansible_module("community.general.redfish_info", dict(common, category="Systems",
                                                                     command="GetSystemInventory"))
        (where, system), = info["redfish_facts"]["system"]["entries"]
        assert where == {"system_uri": "/redfish/v1/Systems/System_0"}
        assert system["SerialNumber"] == fixtures.identity("rke2-vr200", 2)["product_serial"]
        assert system["PowerState"] == "On" and system["BootProgress"] == {"LastState": "PCIResourceConfigStarted"}
        assert system["Status"]["Health"] == "Critical"
        logs = ansible_module("community.general.redfish_info", dict(common, category="Manager", command="GetLogs"))
        assert logs["redfish_facts"]["log"]["entries"][0]["Entries"][0]["Message"] == "POST hang: x"
        denied = ansible_module("community.general.redfish_info", dict(common, password="wrong", category="Systems",
                                                                       command="GetSystemInventory"))
        assert denied["failed"] and "HTTP Error 401" in denied["msg"]
        cycle = ansible_module("community.general.redfish_command", dict(common, category="Systems",
                                                                         command="PowerForceRestart",
                                                                         resource_id="System_0"))
        assert cycle["changed"] and not cycle.get("failed"), cycle
        assert util.wait_for((tray.dir / "got").is_file, 10)         # the reset reached the tray's supervisor
        hv = (bmc.host_vars_file("tray02")).read_text()
        assert '"https://127.0.0.1:28542"' in hv and creds["password"] in hv
    finally:
        assert bmc.down() == ["tray02"]
    assert not bmc.host_vars_file("tray02").exists() and bmc.running_pid("tray02") is None
