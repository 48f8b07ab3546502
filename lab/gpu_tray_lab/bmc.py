# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab trays' BMCs: one OpenStack sushy-tools Redfish emulator per tray, on loopback, TLS + basic auth.

    lab/lab bmc up      start a BMC per tray (https://127.0.0.1:<GPU_TRAY_LAB_BMC_PORT + N>), write the trays'
                        gpu_tray_bmc_* variables into the lab inventory (host_vars/<tray>.yml)
    lab/lab bmc down    stop them and remove those variables (lab/lab down does it too)
    lab/lab bmc status  addresses, PIDs, what each BMC reports

Each BMC is the stock sushy-tools emulator (its Flask application, routes, basic-auth middleware) with one systems
driver of our own, :class:`LabTrayDriver`: one ComputerSystem (``System_0``, as NVIDIA's GB200 BMCs name it) backed
by the lab tray - its SerialNumber/UUID are the tray's SMBIOS identity (fixtures.identity, what the tray's
sysfs class/dmi/id shows), its PowerState and BootProgress come from the tray's supervisor, and a Reset action
really powers the lab tray off, on or resets it (trays.Tray.power: the supervisor stops or boots the tray). Two
things sushy-tools does not emulate are added around its views: BootProgress/SerialNumber/Status.Health on the
System, and a log service on the Manager (``LogServices/SEL``) that serves the supervisor's System Event Log
(sel.jsonl: power on, warm reset, POST hang, resets through the BMC) - the LogServices community.general's
redfish_info GetLogs reads.

The management side (up/down/status) is stdlib only, like the rest of the lab; the servers run on a Python with
sushy-tools (requirements-dev.txt: the repository's .venv, or GPU_TRAY_LAB_BMC_PYTHON).
"""

import argparse
import json
import os
import pathlib
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

if __package__ in (None, ""):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from gpu_tray_lab import util  # noqa: E402

SYSTEM_ID = "System_0"
USERNAME = "admin"
PORT_BASE = 18440


def port_base():
    return int(os.environ.get("GPU_TRAY_LAB_BMC_PORT", PORT_BASE))


def bmc_dir():
    return util.state_dir() / "bmc"


def address(index):
    return "https://127.0.0.1:%d" % (port_base() + index)


def python():
    """A Python that has sushy-tools: GPU_TRAY_LAB_BMC_PYTHON, this one, or the repository's .venv."""
    candidates = [os.environ.get("GPU_TRAY_LAB_BMC_PYTHON"), sys.executable, str(util.REPO_DIR / ".venv/bin/python")]
    for candidate in candidates:
        if candidate and os.path.exists(candidate) and subprocess.run(
                [candidate, "-c", "import sushy_tools.emulator.main"], capture_output=True).returncode == 0:
            return candidate
    raise util.LabError("the lab's BMCs need sushy-tools (requirements-dev.txt): run `make setup`, or point "
                        "GPU_TRAY_LAB_BMC_PYTHON at a Python that has it")


# ---- what a tray's BMC reports (pure: read from the lab's files; unit-tested without sushy-tools) ----------------

def system_view(tray, platform):
    """The ComputerSystem of a lab tray: {Id, UUID, Name, SerialNumber, PowerState, BootProgress, Health, ...}."""
    from gpu_tray_lab import fixtures
    ident = fixtures.identity(platform, tray.index)
    return {
        "Id": SYSTEM_ID,
        "UUID": ident["product_uuid"],
        "Name": tray.name,
        "SerialNumber": ident["product_serial"],
        "Manufacturer": ident["sys_vendor"],
        "Model": ident["product_name"],
        "PowerState": tray.power_state(),
        "BootProgress": tray.boot_progress(),
        "Health": tray.health(),
    }


def sel_entries(tray):
    """The supervisor's System Event Log of the tray as Redfish LogEntry members (oldest first)."""
    path = tray.dir / "sel.jsonl"
    out = []
    for line in util.read_text(path).splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        out.append({
            "@odata.id": "/redfish/v1/Managers/%s/LogServices/SEL/Entries/%d" % ("{manager}", entry["id"]),
            "@odata.type": "#LogEntry.v1_9_0.LogEntry",
            "Id": str(entry["id"]),
            "Name": "SEL entry %d" % entry["id"],
            "EntryType": "SEL",
            "Created": entry["created"],
            "Severity": entry["severity"],
            "Message": entry["message"],
        })
    return out


# ---- the server (runs on a Python with sushy-tools) --------------------------------------------------------------

def serve(index, port, cert, key, auth_file, platform):
    from sushy_tools import error
    from sushy_tools.emulator import main as emulator
    from sushy_tools.emulator.resources.systems.base import AbstractSystemsDriver
    import flask

    from gpu_tray_lab import trays

    tray = trays.Tray(index)

    class LabTrayDriver(AbstractSystemsDriver):
        """One ComputerSystem backed by one lab tray; power actions power the lab tray (trays.Tray.power)."""

        @classmethod
        def initialize(cls, config, logger, *args, **kwargs):
            cls._config, cls._logger = config, logger
            return cls

        def _check(self, identity):
            view = system_view(tray, platform)
            if identity not in (SYSTEM_ID, view["UUID"], view["Name"]):
                raise error.NotFound("System %s not found" % identity)
            return view

        @property
        def driver(self):
            return "<gpu-tray-lab %s>" % tray.name

        @property
        def systems(self):
            return [SYSTEM_ID]

        def uuid(self, identity):
            return self._check(identity)["UUID"]

        def name(self, identity):
            return self._check(identity)["Name"]

        def get_power_state(self, identity):
            return self._check(identity)["PowerState"]

        def set_power_state(self, identity, state):
            self._check(identity)
            try:
                done = tray.power(state)
            except util.LabError as exc:
                raise error.FishyError(str(exc))
            self._logger.info("%s: ResetType %s: %s", tray.name, state, done)

        def get_boot_device(self, identity):
            self._check(identity)
            return "Hdd"

        def set_boot_device(self, identity, boot_source):
            raise error.NotSupportedError("the lab's BMC does not change the boot device")

    driver = LabTrayDriver.initialize(emulator.app.config, emulator.app.logger)()
    emulator.Application.systems = property(lambda _self: driver)
    app = emulator.app
    app.configure(extra_config={"SUSHY_EMULATOR_AUTH_FILE": auth_file,
                                "SUSHY_EMULATOR_STATE_DIR": str(bmc_dir() / ("%s.state" % tray.name))})

    def patched(endpoint, change):
        original = app.view_functions[endpoint]

        def view(*args, **kwargs):
            response = flask.make_response(original(*args, **kwargs))
            if flask.request.method == "GET" and response.status_code == 200:
                data = json.loads(response.get_data(as_text=True))
                change(data, **kwargs)
                response.set_data(json.dumps(data, indent=2))
            return response
        app.view_functions[endpoint] = view

    def system_extra(data, identity):
        view = system_view(tray, platform)
        data.update(SerialNumber=view["SerialNumber"], Manufacturer=view["Manufacturer"], Model=view["Model"],
                    BootProgress={"LastState": view["BootProgress"]})
        data.setdefault("Status", {}).update(State="Enabled", Health=view["Health"], HealthRollup=view["Health"])

    def manager_extra(data, identity):
        data["LogServices"] = {"@odata.id": "/redfish/v1/Managers/%s/LogServices" % identity}

    patched("system_resource", system_extra)
    patched("manager_resource", manager_extra)

    def manager_known(identity):
        if identity not in app.managers.managers:
            flask.abort(404)

    @app.route("/redfish/v1/Managers/<identity>/LogServices")
    def log_services(identity):
        manager_known(identity)
        return flask.jsonify({
            "@odata.id": "/redfish/v1/Managers/%s/LogServices" % identity,
            "@odata.type": "#LogServiceCollection.LogServiceCollection", "Name": "Log Services",
            "Members@odata.count": 1,
            "Members": [{"@odata.id": "/redfish/v1/Managers/%s/LogServices/SEL" % identity}]})

    @app.route("/redfish/v1/Managers/<identity>/LogServices/SEL")
    def log_service(identity):
        manager_known(identity)
        return flask.jsonify({
            "@odata.id": "/redfish/v1/Managers/%s/LogServices/SEL" % identity,
            "@odata.type": "#LogService.v1_3_0.LogService", "Id": "SEL", "Name": "System Event Log",
            "LogEntryType": "SEL", "ServiceEnabled": True,
            "Entries": {"@odata.id": "/redfish/v1/Managers/%s/LogServices/SEL/Entries" % identity}})

    @app.route("/redfish/v1/Managers/<identity>/LogServices/SEL/Entries")
    def log_entries(identity):
        manager_known(identity)
        members = json.loads(json.dumps(sel_entries(tray)).replace("{manager}", identity))
        return flask.jsonify({
            "@odata.id": "/redfish/v1/Managers/%s/LogServices/SEL/Entries" % identity,
            "@odata.type": "#LogEntryCollection.LogEntryCollection", "Name": "System Event Log Entries",
            "Description": "System Event Log of %s" % tray.name,
            "Members@odata.count": len(members), "Members": members})

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    app.run(host="127.0.0.1", port=port, ssl_context=context, threaded=True)


# ---- management (stdlib; called by lab/lab bmc ...) --------------------------------------------------------------

def _openssl(args):
    util.run(["openssl"] + args, capture=True)


def ensure_certificates(directory):
    """A lab CA and the BMCs' certificate (SAN 127.0.0.1, localhost), signed by it: verification on, as against a
    site's BMCs with gpu_tray_bmc_ca_path."""
    ca_key, ca, key, csr, cert = (directory / n for n in ("ca.key", "ca.pem", "bmc.key", "bmc.csr", "bmc.pem"))
    if ca.exists() and cert.exists() and key.exists():
        return ca, cert, key
    _openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=gpu-tray lab BMC CA",
              "-keyout", str(ca_key), "-out", str(ca),
              "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
    _openssl(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr)])
    ext = directory / "bmc.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                   "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
                   "authorityKeyIdentifier=keyid\nsubjectKeyIdentifier=hash\n")
    _openssl(["x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
              "-days", "30", "-extfile", str(ext), "-out", str(cert)])
    for path in (ca_key, key):
        os.chmod(path, 0o600)
    return ca, cert, key


def credentials(directory, py):
    """The BMCs' account (one per lab, a random password) and its htpasswd file (bcrypt, as sushy-tools reads it)."""
    path = directory / "credentials.json"
    creds = util.read_json(path)
    if not creds:
        creds = {"username": USERNAME, "password": secrets.token_urlsafe(18)}
        path.write_text(json.dumps(creds))
        os.chmod(path, 0o600)
    auth = directory / "htpasswd"
    if not auth.exists():
        proc = subprocess.run([py, "-c", "import bcrypt, sys; sys.stdout.write(bcrypt.hashpw(sys.stdin.read().encode(),"
                               " bcrypt.gensalt()).decode())"], input=creds["password"], capture_output=True, text=True,
                              check=True)
        auth.write_text("%s:%s\n" % (creds["username"], proc.stdout.strip()))
        os.chmod(auth, 0o600)
    return creds, auth


def pid_file(tray_name):
    return bmc_dir() / ("%s.pid" % tray_name)


def running_pid(tray_name):
    pid = util.read_pid(pid_file(tray_name))
    argv = util.pid_cmdline(pid) if pid and util.pid_alive(pid) else []
    if any(arg.endswith("gpu_tray_lab/bmc.py") for arg in argv) and tray_name in argv:
        return pid
    return None


def _answers(url, ca, timeout=2):
    context = ssl.create_default_context(cafile=str(ca))
    try:
        with urllib.request.urlopen(url + "/redfish/v1", timeout=timeout, context=context) as response:
            return response.status == 200
    except (OSError, ValueError):
        return False


def host_vars_file(tray_name):
    from gpu_tray_lab import inventory
    return inventory.inventory_dir() / "host_vars" / ("%s.yml" % tray_name)


def write_host_vars(tray_name, index, creds, ca):
    """The tray's BMC in the lab inventory, as a site's inventory names it (host_vars beside hosts.yml)."""
    from gpu_tray_lab import inventory
    path = host_vars_file(tray_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"gpu_tray_bmc_address": address(index), "gpu_tray_bmc_username": creds["username"],
           "gpu_tray_bmc_password": creds["password"], "gpu_tray_bmc_ca_path": str(ca)}
    path.write_text("# Generated by `lab/lab bmc up`: the tray's BMC (sushy-tools Redfish emulator); removed by "
                    "`lab/lab bmc down`\n---\n" + "\n".join(inventory.to_yaml(doc)) + "\n")
    os.chmod(path, 0o600)


def up(indexes, platform, timeout=60):
    directory = bmc_dir()
    directory.mkdir(parents=True, exist_ok=True)
    os.chmod(directory, 0o700)
    py = python()
    ca, cert, key = ensure_certificates(directory)
    creds, auth = credentials(directory, py)
    started = []
    for index in indexes:
        name = util.tray_name(index)
        if running_pid(name):
            continue
        port = port_base() + index
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                raise util.LabError("port %d (the BMC of %s) is in use by another process; set "
                                    "GPU_TRAY_LAB_BMC_PORT to another base port" % (port, name))
        logf = open(directory / ("%s.log" % name), "ab")
        proc = subprocess.Popen([py, str(pathlib.Path(__file__).resolve()), "serve", "--tray-name", name,
                                 "--index", str(index), "--port", str(port), "--cert", str(cert), "--key", str(key),
                                 "--auth-file", str(auth), "--platform", platform],
                                stdin=subprocess.DEVNULL, stdout=logf, stderr=logf, close_fds=True,
                                start_new_session=True, cwd="/", env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
        logf.close()
        pid_file(name).write_text("%d\n" % proc.pid)
        started.append((name, index, proc))
    deadline = time.monotonic() + timeout
    for name, index, proc in started:
        while not _answers(address(index), ca):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = "\n".join(util.read_text(directory / ("%s.log" % name)).splitlines()[-15:])
                raise util.LabError("the BMC of %s did not start (exit status %s); last lines of %s:\n%s"
                                    % (name, proc.poll(), directory / ("%s.log" % name), tail))
            time.sleep(0.3)
    for index in indexes:
        write_host_vars(util.tray_name(index), index, creds, ca)
    return [(util.tray_name(i), address(i)) for i in indexes]


def down():
    """Stop every BMC of the lab (by recorded PID) and remove their inventory variables."""
    directory = bmc_dir()
    stopped = []
    for path in sorted(directory.glob("tray[0-9][0-9].pid")) if directory.is_dir() else []:
        name = path.name[:-4]
        pid = running_pid(name)
        if pid:
            os.kill(pid, signal.SIGTERM)
            if not util.wait_for(lambda: not util.pid_alive(pid), 10):
                os.kill(pid, signal.SIGKILL)
                util.wait_for(lambda: not util.pid_alive(pid), 5)
            stopped.append(name)
        path.unlink(missing_ok=True)
        host_vars_file(name).unlink(missing_ok=True)
    return stopped


def status(indexes):
    rows = []
    for index in indexes:
        name = util.tray_name(index)
        rows.append({"tray": name, "address": address(index), "pid": running_pid(name)})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bmc.py", description="the lab's BMC server (run by `lab/lab bmc up`)")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sv = sub.add_parser("serve")
    sv.add_argument("--tray-name", required=True)
    sv.add_argument("--index", type=int, required=True)
    sv.add_argument("--port", type=int, required=True)
    sv.add_argument("--cert", required=True)
    sv.add_argument("--key", required=True)
    sv.add_argument("--auth-file", required=True)
    sv.add_argument("--platform", required=True)
    args = parser.parse_args(argv)
    serve(args.index, args.port, args.cert, args.key, args.auth_file, args.platform)
    return 0


if __name__ == "__main__":
    sys.exit(main())
