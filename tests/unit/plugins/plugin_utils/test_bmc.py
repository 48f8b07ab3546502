# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""plugin_utils/bmc.py: the BMC decisions of the preflight and the rolling reboot, over redfish_info answers in the
shape community.general returns them (the lab's BMC answers were recorded into tests/unit/fixtures/redfish)."""

import copy
import json
import pathlib

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import bmc

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "redfish"
SETTINGS = {"address": "https://bmc-tray02.example", "username": "admin", "password": "s3cret", "system_id": ""}


def fixture(name):
    return json.loads((FIXTURES / name).read_text())


def system(**changes):
    props = {"Id": "System_0", "Name": "tray02", "SerialNumber": "1794523000123", "PowerState": "On",
             "Status": {"State": "Enabled", "Health": "OK", "HealthRollup": "OK"},
             "BootProgress": {"LastState": "OSRunning"}}
    props.update(changes)
    return props


def inventory(*systems):
    return {"changed": False, "redfish_facts": {"system": {"ret": True, "entries": [
        [{"system_uri": "/redfish/v1/Systems/%s" % s["Id"]}, s] for s in systems]}}}


def failed(msg):
    return {"failed": False, "failed_when_result": False, "msg": msg}      # as failed_when: false registers it


# ---------------------------------------------------------------- access (before the first reboot)

def test_a_healthy_bmc_whose_system_has_the_trays_serial_is_ok():
    found = bmc.access(SETTINGS, inventory(system()), serial="1794523000123")
    assert found["ok"] and found["kind"] == "ok"
    assert found["system_id"] == "System_0" and found["power_state"] == "On" and found["health"] == "OK"
    assert found["boot_progress"] == "OSRunning" and found["fix"] is None
    assert found["msg"] == ("The BMC at https://bmc-tray02.example answers; system System_0 (serial 1794523000123) "
                            "is On, health OK.")
    assert "s3cret" not in json.dumps(found)


def test_the_recorded_lab_bmc_answer_is_judged_ok():
    result = fixture("system_inventory_on.json")
    serial = bmc.systems(result)[0]["SerialNumber"]
    found = bmc.access(SETTINGS, result, serial=serial)
    assert found["ok"], found
    assert found["system_id"] == "System_0" and found["boot_progress"] == "OSRunning"


@pytest.mark.parametrize("missing, named", [
    ({"address": ""}, "gpu_tray_bmc_address"),
    ({"username": None}, "gpu_tray_bmc_username"),
    ({"password": False}, "gpu_tray_bmc_password"),
    ({"password": "  "}, "gpu_tray_bmc_password"),
])
def test_missing_settings_are_named_and_the_fix_says_how_to_set_or_opt_out(missing, named):
    found = bmc.access(dict(SETTINGS, **missing), inventory(system()), serial="1794523000123")
    assert not found["ok"] and found["kind"] == "settings"
    assert named in found["msg"] and found["msg"].endswith(".")
    assert "gpu_tray_bmc_required: false" in found["fix"] and "docs/awx.md" in found["fix"]


def test_the_settings_message_is_one_sentence():
    found = bmc.access(dict(SETTINGS, address=" "), None)
    assert found["msg"] == "No BMC access configured for the tray (gpu_tray_bmc_address not set)."


def test_failure_messages_keep_their_first_line_and_at_most_300_characters():
    long = "Connection refused " + "x" * 400 + "\nsecond line"
    found = bmc.access(SETTINGS, {"msg": long})
    assert found["kind"] == "unreachable" and "second line" not in found["msg"]
    assert found["msg"] == "The BMC at https://bmc-tray02.example does not answer: %s." % long.splitlines()[0][:300]
    assert bmc.access(SETTINGS, {"changed": False})["msg"] == \
        "The BMC at https://bmc-tray02.example answered with an error: no message."
    unread = bmc.state(SETTINGS, {"msg": long})
    assert unread["error"].endswith(long.splitlines()[0][:300]) and "x" * 301 not in unread["error"]
    logs = bmc.state(SETTINGS, inventory(system()), {"msg": "y" * 400 + "\nz"}, "1794523000123")
    assert logs["log_error"] == "y" * 300


def test_a_password_given_as_set_true_counts_as_set():
    assert bmc.settings_problem(dict(SETTINGS, password=True)) is None
    assert bmc.access(dict(SETTINGS, password=True), inventory(system()), "1794523000123")["ok"]


@pytest.mark.parametrize("name, kind", [
    ("system_inventory_401.json", "auth"),
    ("system_inventory_refused.json", "unreachable"),
    ("system_inventory_tls.json", "tls"),
])
def test_recorded_failures_are_classified_with_their_fix(name, kind):
    found = bmc.access(SETTINGS, fixture(name), serial="x")
    assert not found["ok"] and found["kind"] == kind, found
    assert found["msg"].startswith("The BMC at https://bmc-tray02.example ")
    assert found["fix"] == bmc.FIX[kind].format(address=SETTINGS["address"])


@pytest.mark.parametrize("msg, kind", [
    ("HTTP Error 401 on GET request to 'https://b/redfish/v1/Systems', extended message: 'Unauthorized'", "auth"),
    ("HTTP Error 403 on GET request to 'https://b/redfish/v1/Systems'", "auth"),
    ("URL Error on GET request to 'https://b/redfish/v1/': '[SSL: CERTIFICATE_VERIFY_FAILED] certificate "
     "verify failed'", "tls"),
    ("URL Error on GET request to 'https://b/redfish/v1/': '[Errno 111] Connection refused'", "unreachable"),
    ("Failed GET request to 'https://b/redfish/v1/': 'The read operation timed out'", "unreachable"),
    ("URL Error on GET request to 'https://b/redfish/v1/': '[Errno -2] Name or service not known'", "unreachable"),
    ("Session login failed: Unauthorized", "auth"),
    ("URL Error on GET request to 'https://b/redfish/v1/': '[SSL: WRONG_VERSION_NUMBER] wrong version number'", "tls"),
    ("tlsv1 alert internal error", "tls"),
    ("HTTP Error 500 on GET request to 'https://b/redfish/v1/Systems'", "error"),
    ("Systems resource not found", "error"),
    (None, "error"),
])
def test_classify_error(msg, kind):
    assert bmc.classify_error(msg) == kind


def test_a_failure_registered_with_failed_when_false_is_still_a_failure():
    refused = fixture("system_inventory_refused.json")
    assert refused["failed"] is False and bmc.answer_failed(refused)
    assert bmc.answer_msg(refused).endswith("[Errno 111] Connection refused'")
    part = {"redfish_facts": {"system": {"ret": False, "msg": "HTTP Error 401 on GET request to x"}}}
    assert bmc.answer_failed(part) and bmc.answer_msg(part) == "HTTP Error 401 on GET request to x"
    assert bmc.access(SETTINGS, part, "1")["kind"] == "auth"
    assert not bmc.answer_failed(fixture("system_inventory_on.json"))
    assert bmc.answer_failed(None) and bmc.answer_msg(None) == ""
    assert bmc.answer_msg({"msg": "x", "redfish_facts": {"system": {"ret": True}}}) == "x"


def test_an_unrecorded_answer_is_an_error_not_a_pass():
    for result in (None, {"skipped": True}, "text"):
        found = bmc.access(SETTINGS, result, serial="1")
        assert not found["ok"] and found["kind"] == "error"


def test_power_off_and_critical_health_are_refused():
    off = bmc.access(SETTINGS, inventory(system(PowerState="Off")), serial="1794523000123")
    assert off["kind"] == "power" and "PowerState Off, not On" in off["msg"] and "power it on" in off["fix"]
    unknown = bmc.access(SETTINGS, inventory(system(PowerState=None)), serial="1794523000123")
    assert unknown["kind"] == "power" and "PowerState unknown" in unknown["msg"]
    critical = bmc.access(SETTINGS, inventory(system(Status={"Health": "Critical"})), serial="1794523000123")
    assert critical["kind"] == "health" and "health Critical" in critical["msg"]
    warning = bmc.access(SETTINGS, inventory(system(Status={"Health": "Warning"})), serial="1794523000123")
    assert warning["ok"] and warning["health"] == "Warning"
    unreported = bmc.access(SETTINGS, inventory(system(Status=None)), serial="1794523000123")
    assert unreported["ok"] and "health not reported" in unreported["msg"]


# ---------------------------------------------------------------- which system is the tray's

def test_find_system_by_serial_case_and_blanks_ignored():
    a, b = system(Id="1", SerialNumber="AAA"), system(Id="2", SerialNumber=" bbb ")
    assert bmc.find_system([a, b], serial="BBB") == (b, None)


def test_a_single_system_with_another_serial_is_not_the_trays():
    found, why = bmc.find_system([system(SerialNumber="OTHER")], serial="1794523000123")
    assert found is None
    assert why == "no ComputerSystem of the BMC has the tray's serial 1794523000123 (it has System_0 (serial OTHER))"
    result = bmc.access(SETTINGS, inventory(system(SerialNumber="OTHER")), serial="1794523000123")
    assert result["kind"] == "no_system" and "not a neighbour's" in result["fix"]


def test_two_systems_with_the_serial_need_a_system_id():
    found, why = bmc.find_system([system(Id="1"), system(Id="2")], serial="1794523000123")
    assert found is None and "2 ComputerSystems with the tray's serial" in why and "gpu_tray_bmc_system_id" in why


def test_the_system_id_wins_over_the_serial_and_matches_the_uri_tail():
    chosen = system(Id=None, _uri="/redfish/v1/Systems/Self", SerialNumber="OTHER")
    assert bmc.find_system([system(), chosen], serial="1794523000123", system_id="Self") == (chosen, None)
    found, why = bmc.find_system([system()], system_id="System_9")
    assert found is None and why == "the BMC has no ComputerSystem System_9 (gpu_tray_bmc_system_id); " \
                                    "it has System_0 (serial 1794523000123)"


def test_without_a_serial_only_a_single_system_is_taken():
    only = system(SerialNumber=None)
    assert bmc.find_system([only], serial=None) == (only, None)
    found, why = bmc.find_system([system(Id="1"), system(Id="2")], serial="")
    assert found is None and "serial could not be read" in why and "2 ComputerSystems" in why
    assert bmc.find_system([], serial="1") == (None, "the BMC lists no ComputerSystem")


def test_systems_reads_the_aggregate_and_keeps_the_uri():
    listed = bmc.systems(inventory(system(Id="A"), system(Id="B")))
    assert [s["Id"] for s in listed] == ["A", "B"] and listed[1]["_uri"] == "/redfish/v1/Systems/B"
    assert bmc.systems({"redfish_facts": {"system": {"entries": [{"Id": "C", "@odata.id": "/x/C"}, "junk"]}}}) == \
        [{"Id": "C", "@odata.id": "/x/C", "_uri": "/x/C"}]
    assert bmc.systems({}) == [] and bmc.systems(None) == []


def test_boot_progress_and_health_readers():
    assert bmc.boot_progress(system(BootProgress={"LastState": "OEM", "OemLastState": "PCIe training"})) == \
        "OEM (PCIe training)"
    assert bmc.boot_progress(system(BootProgress={"LastState": "OEM"})) == "OEM"
    assert bmc.boot_progress(system(BootProgress=None)) is None
    assert bmc.boot_progress("x") is None
    assert bmc.health(system(Status={"State": "Enabled"})) is None


# ---------------------------------------------------------------- the preflight's check record

def test_preflight_check_required_failure_fails_with_the_fix():
    record = bmc.preflight_check(SETTINGS, failed("HTTP Error 401 on GET request"), serial="1")
    assert record["name"] == "bmc" and record["status"] == "failed"
    assert record["fix"] == bmc.FIX["auth"] and record["data"]["kind"] == "auth" and record["data"]["required"]
    assert record["details"] == ["BMC https://bmc-tray02.example, tray serial 1"]


def test_preflight_check_not_configured_and_not_required_is_skipped():
    record = bmc.preflight_check(dict(SETTINGS, address="", required=False), None)
    assert record["status"] == "skipped"
    assert record["message"] == "Not checked: no BMC configured and gpu_tray_bmc_required is false."


def test_preflight_check_configured_not_required_reports_without_failing():
    record = bmc.preflight_check(dict(SETTINGS, required=False), failed("[Errno 111] Connection refused"), "1")
    # a warning: it does not fail the tray, its fix is the record's
    assert record["status"] == "warning" and record["fix"].startswith("check that the BMC answers")
    assert "does not answer" in record["message"] and "Not required (gpu_tray_bmc_required is false)" in record["message"]


def test_preflight_check_passes_and_keeps_the_evidence_without_the_password():
    record = bmc.preflight_check(SETTINGS, inventory(system()), "1794523000123")
    assert record["status"] == "passed" and record["data"]["system_id"] == "System_0" and record["data"]["ok"]
    assert "s3cret" not in json.dumps(record)


def test_preflight_check_required_by_default_missing_address_fails():
    record = bmc.preflight_check({"address": ""}, None)
    assert record["status"] == "failed" and record["data"]["kind"] == "settings"


# ---------------------------------------------------------------- a tray that did not come back

def test_state_of_the_recorded_hung_tray_with_its_sel():
    result, logs = fixture("system_inventory_hung.json"), fixture("logs_hung.json")
    serial = bmc.systems(result)[0]["SerialNumber"]
    found = bmc.state(SETTINGS, result, logs, serial=serial, count=3, recover="power_cycle")
    assert found["read"] and found["power_state"] == "On" and found["boot_progress"] == "PCIResourceConfigStarted"
    assert found["health"] == "Critical" and len(found["log"]) == 3
    assert found["log"][-1]["severity"] == "Critical" and found["log"][-1]["message"].startswith("POST hang")
    assert found["summary"].startswith("BMC: PowerState On, BootProgress PCIResourceConfigStarted, health Critical; "
                                       "latest log entry: [Critical] POST hang")
    assert found["recovery"] == {"power_cycle": True, "command": "PowerForceRestart",
                                 "why": "power cycle through the BMC (PowerForceRestart), once"}


def test_state_recovery_rules():
    hung = inventory(system(BootProgress={"LastState": "MemoryInitializationStarted"}))
    off = inventory(system(PowerState="Off"))
    serial = "1794523000123"
    assert bmc.state(SETTINGS, off, None, serial, recover="power_cycle")["recovery"]["command"] == "PowerOn"
    none = bmc.state(SETTINGS, hung, None, serial)["recovery"]
    assert none == {"power_cycle": False, "command": None, "why": "no recovery: gpu_tray_bmc_recover is none"}
    again = bmc.state(SETTINGS, hung, None, serial, recover="power_cycle", attempted=True)["recovery"]
    assert not again["power_cycle"] and "already power-cycled once" in again["why"]
    unread = bmc.state(SETTINGS, failed("[Errno 111] Connection refused"), None, serial, recover="power_cycle")
    assert not unread["read"] and not unread["recovery"]["power_cycle"]
    assert unread["recovery"]["why"].startswith("no recovery: the BMC at https://bmc-tray02.example could not be "
                                                "read (unreachable)")
    assert unread["summary"].startswith("BMC not read: the BMC at")
    stranger = bmc.state(SETTINGS, inventory(system(SerialNumber="OTHER")), None, serial, recover="power_cycle")
    assert not stranger["read"] and not stranger["recovery"]["power_cycle"]      # never power-cycle another tray
    with pytest.raises(ValueError):
        bmc.state(SETTINGS, hung, None, serial, recover="reboot")


def test_state_defaults_and_keys():
    found = bmc.state(SETTINGS, inventory(system()), None, "1794523000123", recover="power_cycle")
    assert found["recovery"]["power_cycle"]                            # not attempted unless said so
    assert sorted(found) == ["address", "boot_progress", "error", "health", "log", "log_error", "power_state", "read",
                             "recovery", "summary", "system_id"]
    unread = bmc.state(SETTINGS, failed("[Errno 111] Connection refused"), fixture("logs_hung.json"), "1")
    assert unread["log"] == [] and unread["log_error"] is None          # no log without the system


def test_state_without_settings_or_answer():
    assert bmc.state({"address": ""}, None)["error"].startswith("no BMC access configured")
    assert bmc.state(SETTINGS, None)["error"] == "the BMC was not read"
    assert bmc.state(SETTINGS, {"skipped": True})["summary"] == "BMC not read: the BMC was not read"


def test_state_log_failure_keeps_the_system_part():
    found = bmc.state(SETTINGS, inventory(system()), failed("LogServices resource not found"), "1794523000123")
    assert found["read"] and found["log"] == [] and found["log_error"] == "LogServices resource not found"
    assert found["summary"] == "BMC: PowerState On, BootProgress OSRunning, health OK"
    bare = bmc.state(SETTINGS, inventory(system(BootProgress=None, Status=None)), None, "1794523000123")
    assert bare["summary"] == "BMC: PowerState On, BootProgress not reported, health not reported"


def test_log_entries_latest_first_by_created_and_count():
    logs = {"redfish_facts": {"log": {"ret": True, "entries": [
        {"Description": "SEL", "Entries": [
            {"Created": "2026-12-04T10:00:02+00:00", "Severity": "OK", "Message": "b"},
            {"Created": "2026-12-04T10:00:01+00:00", "Severity": "OK", "Message": "a"},
            {"Created": "2026-12-04T10:00:03+00:00", "Severity": "Critical", "MessageId": "Hang.1"}]},
        "junk",
        {"Description": "Other", "Lclog": [{"Severity": "Warning", "Message": "undated"}, "junk"]}]}}}
    entries = bmc.log_entries(logs, count=3)
    assert [e["message"] for e in entries] == ["a", "b", "Hang.1"]
    assert entries[-1] == {"created": "2026-12-04T10:00:03+00:00", "severity": "Critical", "message": "Hang.1",
                           "log": "Entries"}
    assert [e["message"] for e in bmc.log_entries(logs, count=10)] == ["undated", "a", "b", "Hang.1"]
    assert bmc.log_entries(logs, count=0) == [] and bmc.log_entries(None) == []


def test_inputs_are_not_changed():
    result = inventory(system())
    before = copy.deepcopy(result)
    bmc.access(SETTINGS, result, "1794523000123")
    bmc.state(SETTINGS, result, None, "1794523000123", recover="power_cycle")
    assert result == before
