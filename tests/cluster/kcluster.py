# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kcluster - the gpu_tray.cluster test Kubernetes cluster (real kube-apiserver 1.20, 127.0.0.1 only).

  kcluster up [--platform nvke-gb200|rke2-vr200] [--nodes N] [--no-build]
  kcluster down
  kcluster status [--json]
  kcluster kubeconfig                      print the admin kubeconfig path
  kcluster env                             shell exports: KUBECONFIG, K8S_AUTH_KUBECONFIG, KCLUSTER_HELM
  kcluster fault node-notready NODE        the simulated kubelet reports Ready=False for NODE
  kcluster fault node-unreachable NODE     the simulated kubelet stops heartbeating NODE
  kcluster fault sriov-vfs NODE --count N  NODE advertises N VFs on each SR-IOV rail (another numVfs applied)
  kcluster fault clear NODE|all

Pieces: etcd (Debian etcd-server), kube-apiserver + kube-controller-manager (built by build.sh from
Debian's kubernetes 1.20.2 source, cached under $GPU_TRAY_CACHE), TLS from a private CA, RBAC on,
service-account key pair, and simkubelet.py (simulated kubelet for trays tray01..trayNN + cp01, serving
container logs from the log map $KCLUSTER_STATE/container-logs.json on 127.0.0.1:$KCLUSTER_KUBELET_PORT).
State (pids, certs, kubeconfigs, logs, etcd data) lives in $KCLUSTER_STATE (default
/run/gpu-tray-kcluster); `down` stops every process it started by recorded PID and removes it.
Only the standard library is needed here; simkubelet runs on the repo's .venv python (kubernetes client).
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
STATE = os.environ.get("KCLUSTER_STATE", "/run/gpu-tray-kcluster")
CACHE = os.environ.get("GPU_TRAY_CACHE", "/var/cache/gpu-tray-cluster")


def build_default(name):
    """The default of `name` in build.sh (`NAME=${NAME:-default}`): build.sh is the one place it is set."""
    with open(os.path.join(HERE, "build.sh")) as fh:
        for line in fh:
            m = re.match(r"%s=\$\{%s:-([^}]+)\}\s*$" % (name, name), line)
            if m:
                return m.group(1)
    raise RuntimeError("tests/cluster/build.sh sets no default for %s" % name)


K8S_SRC_VERSION = os.environ.get("K8S_SRC_VERSION") or build_default("K8S_SRC_VERSION")
HELM_VERSION = os.environ.get("HELM_VERSION") or build_default("HELM_VERSION")
ETCD_CLIENT_PORT = int(os.environ.get("KCLUSTER_ETCD_PORT", "23790"))
ETCD_PEER_PORT = int(os.environ.get("KCLUSTER_ETCD_PEER_PORT", "23800"))
APISERVER_PORT = int(os.environ.get("KCLUSTER_APISERVER_PORT", "16443"))
KUBELET_PORT = int(os.environ.get("KCLUSTER_KUBELET_PORT", "16250"))   # the simulated kubelet's log endpoint
LOG_MAP = "container-logs.json"        # simkubelet --log-map: {"<image>": "<log file>"} (clusterhelpers.container_logs)
SERVICE_CIDR = "198.19.255.0/24"
SERVICE_FIRST_IP = "198.19.255.1"
ETCD_BIN = os.environ.get("KCLUSTER_ETCD", "/usr/bin/etcd")
PROCS = ("etcd", "kube-apiserver", "kube-controller-manager", "simkubelet")
PLATFORMS = ("nvke-gb200", "rke2-vr200")


def k8s_bin_dir():
    return os.path.join(CACHE, "k8s-" + K8S_SRC_VERSION, "bin")


def helm_path():
    return os.path.join(CACHE, "helm-" + HELM_VERSION, "helm")


def kubeconfig_path():
    return os.path.join(STATE, "admin.kubeconfig")


def p(*parts):
    return os.path.join(STATE, *parts)


def say(msg):
    print("kcluster: %s" % msg, flush=True)


class Fail(Exception):
    pass


# ------------------------------------------------------------------ processes by PID

def proc_start_time(pid):
    """Start time (clock ticks since boot) of `pid`, or None if it is gone/zombie."""
    try:
        with open("/proc/%d/stat" % pid) as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(")") + 2:].split()
    if fields[0] == "Z":
        return None
    return fields[19]


def load_pids():
    try:
        with open(p("pids.json")) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return {}


def save_pids(pids):
    tmp = p("pids.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(pids, fh, indent=1)
    os.replace(tmp, p("pids.json"))


def alive(entry):
    """True if the recorded process still runs (same PID *and* same start time: no PID reuse).

    An entry without a start time never counts as running: a dead PID also reads as None.
    """
    if not entry or entry.get("start") is None:
        return False
    return proc_start_time(entry["pid"]) == entry["start"]


def start_proc(name, argv, env=None):
    log = open(p("logs", name + ".log"), "ab")
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, cwd=STATE, env=env)
    log.close()
    pids = load_pids()
    start = None
    for _attempt in range(50):
        start = proc_start_time(proc.pid)
        if start:
            break
        time.sleep(0.01)
    if not start:
        # gone (or a zombie) before its start time could be read: it cannot be tracked safely.
        # The Popen object still owns the PID (not reaped yet), so killing it here cannot hit another process.
        if proc.poll() is None:
            proc.kill()
        rc = proc.wait()
        raise Fail("%s exited right after start (rc %s); last log lines:\n%s" % (name, rc, log_tail(name)))
    pids[name] = {"pid": proc.pid, "start": start, "argv0": argv[0]}
    save_pids(pids)
    return proc


def stop_entry(name, entry, timeout=15.0):
    if not alive(entry):
        return False
    pid = entry["pid"]
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not alive(entry):
            say("stopped %s (pid %d)" % (name, pid))
            return True
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for _attempt in range(50):
        if not alive(entry):
            break
        time.sleep(0.1)
    say("killed %s (pid %d) after %ds" % (name, pid, timeout))
    return True


def log_tail(name, lines=25):
    try:
        with open(p("logs", name + ".log"), "rb") as fh:
            data = fh.read().decode("utf-8", "replace").splitlines()
        return "\n".join(data[-lines:])
    except OSError:
        return "(no log)"


# ------------------------------------------------------------------ TLS material

def openssl(*args):
    subprocess.run(["openssl"] + list(args), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_pki():
    pki = p("pki")
    os.makedirs(pki, mode=0o700, exist_ok=True)

    def key(name):
        openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", os.path.join(pki, name + ".key"))

    key("ca")
    openssl("req", "-x509", "-new", "-key", os.path.join(pki, "ca.key"), "-sha256", "-days", "30",
            "-subj", "/CN=gpu-tray-kcluster-ca", "-out", os.path.join(pki, "ca.crt"),
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def leaf(name, subj, ext):
        key(name)
        csr = os.path.join(pki, name + ".csr")
        extfile = os.path.join(pki, name + ".ext")
        with open(extfile, "w") as fh:
            fh.write(ext)
        openssl("req", "-new", "-key", os.path.join(pki, name + ".key"), "-subj", subj, "-out", csr)
        openssl("x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"), "-CAkey", os.path.join(pki, "ca.key"),
                "-CAcreateserial", "-days", "30", "-sha256", "-extfile", extfile, "-out", os.path.join(pki, name + ".crt"))
        os.unlink(csr)
        os.unlink(extfile)

    client_ext = "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n"
    leaf("apiserver", "/CN=kube-apiserver",
         "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
         "subjectAltName=IP:127.0.0.1,IP:%s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,"
         "DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n" % SERVICE_FIRST_IP)
    leaf("admin", "/O=system:masters/CN=gpu-tray-admin", client_ext)
    leaf("controller-manager", "/CN=system:kube-controller-manager", client_ext)
    leaf("simkubelet", "/O=system:masters/CN=gpu-tray-simkubelet", client_ext)
    # the simulated kubelet's log endpoint (serving) and the API server's client certificate for it
    leaf("kubelet-serving", "/CN=gpu-tray-simkubelet-serving",
         "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
         "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    leaf("apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", client_ext)
    # service-account token signing key pair
    key("sa")
    openssl("pkey", "-in", os.path.join(pki, "sa.key"), "-pubout", "-out", os.path.join(pki, "sa.pub"))


def write_kubeconfig(path, user):
    pki = p("pki")
    server = "https://127.0.0.1:%d" % APISERVER_PORT
    text = """apiVersion: v1
kind: Config
clusters:
- name: gpu-tray-kcluster
  cluster:
    server: {server}
    certificate-authority: {pki}/ca.crt
users:
- name: {user}
  user:
    client-certificate: {pki}/{user}.crt
    client-key: {pki}/{user}.key
contexts:
- name: gpu-tray-kcluster
  context:
    cluster: gpu-tray-kcluster
    user: {user}
current-context: gpu-tray-kcluster
""".format(server=server, pki=pki, user=user)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o600)


# ------------------------------------------------------------------ API access (stdlib only)

def api_get(path, timeout=3.0):
    ctx = ssl.create_default_context(cafile=p("pki", "ca.crt"))
    ctx.load_cert_chain(p("pki", "admin.crt"), p("pki", "admin.key"))
    url = "https://127.0.0.1:%d%s" % (APISERVER_PORT, path)
    with urllib.request.urlopen(url, context=ctx, timeout=timeout) as resp:
        body = resp.read().decode()
    return json.loads(body) if body[:1] in "{[" else body


def wait_for(what, check, timeout, procs):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        for name in procs:
            if not alive(load_pids().get(name)):
                raise Fail("%s exited while waiting for %s; last log lines:\n%s" % (name, what, log_tail(name)))
        try:
            if check():
                return
        except (OSError, urllib.error.URLError, ValueError, ssl.SSLError, KeyError) as exc:
            last = exc
        time.sleep(0.25)
    raise Fail("timed out after %ds waiting for %s (last error: %s); logs in %s" % (timeout, what, last, p("logs")))


def port_free(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # like the Go servers: connections in TIME_WAIT from an earlier cluster do not block the port
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def venv_python():
    override = os.environ.get("KCLUSTER_PYTHON")
    if override:
        return override
    candidate = os.path.join(REPO, ".venv", "bin", "python")
    return candidate if os.path.exists(candidate) else sys.executable


# ------------------------------------------------------------------ commands

def read_meta():
    try:
        with open(p("cluster.json")) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def running_state():
    meta = read_meta()
    pids = load_pids()
    procs = {name: alive(pids.get(name)) for name in PROCS}
    return meta, pids, procs


def cmd_up(args):
    t0 = time.time()
    meta, _pids, procs = running_state()
    if meta and all(procs.values()):
        if (meta["platform"], meta["nodes"]) != (args.platform, args.nodes):
            raise Fail("a cluster is already up with platform %s and %d trays; run `kcluster down` first to get %s/%d"
                       % (meta["platform"], meta["nodes"], args.platform, args.nodes))
        api_get("/readyz")
        say("already up (platform %s, %d trays)" % (meta["platform"], meta["nodes"]))
        print(kubeconfig_path())
        return 0
    if any(procs.values()) or os.path.exists(STATE):
        say("found leftovers of an earlier cluster in %s: cleaning up first" % STATE)
        cmd_down(args)

    bindir = k8s_bin_dir()
    if not (os.access(os.path.join(bindir, "kube-apiserver"), os.X_OK)
            and os.path.exists(os.path.join(os.path.dirname(bindir), ".complete"))):
        if args.no_build:
            raise Fail("kube-apiserver is not built in %s; run tests/cluster/build.sh (10-20 min cold)" % bindir)
        say("binaries not cached in %s: building (10-20 min on 2 cores, log on stderr)" % bindir)
        subprocess.run([os.path.join(HERE, "build.sh"), "k8s"], check=True)
    if not os.access(ETCD_BIN, os.X_OK):
        raise Fail("%s not found: install Debian's etcd-server (tests/cluster/build.sh does)" % ETCD_BIN)
    for port in (ETCD_CLIENT_PORT, ETCD_PEER_PORT, APISERVER_PORT, KUBELET_PORT):
        if not port_free(port):
            raise Fail("127.0.0.1:%d is in use by another program; set KCLUSTER_ETCD_PORT/KCLUSTER_ETCD_PEER_PORT/"
                       "KCLUSTER_APISERVER_PORT/KCLUSTER_KUBELET_PORT to free ports" % port)

    os.makedirs(p("logs"), mode=0o700, exist_ok=True)
    os.makedirs(p("etcd"), mode=0o700, exist_ok=True)
    save_pids({})
    with open(p("faults.json"), "w") as fh:
        fh.write("{}\n")
    try:
        make_pki()
        write_kubeconfig(kubeconfig_path(), "admin")
        write_kubeconfig(p("controller-manager.kubeconfig"), "controller-manager")
        write_kubeconfig(p("simkubelet.kubeconfig"), "simkubelet")
        pki = p("pki")

        etcd_url = "http://127.0.0.1:%d" % ETCD_CLIENT_PORT
        start_proc("etcd", [ETCD_BIN, "--name", "kcluster", "--data-dir", p("etcd"),
                            "--listen-client-urls", etcd_url, "--advertise-client-urls", etcd_url,
                            "--listen-peer-urls", "http://127.0.0.1:%d" % ETCD_PEER_PORT,
                            "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % ETCD_PEER_PORT,
                            "--initial-cluster", "kcluster=http://127.0.0.1:%d" % ETCD_PEER_PORT,
                            "--initial-cluster-state", "new", "--log-level", "warn"])

        def etcd_ok():
            with urllib.request.urlopen(etcd_url + "/health", timeout=2) as resp:
                return json.loads(resp.read()).get("health") == "true"
        wait_for("etcd health", etcd_ok, 30, ["etcd"])

        start_proc("kube-apiserver", [
            os.path.join(bindir, "kube-apiserver"),
            "--etcd-servers=" + etcd_url,
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            "--secure-port=%d" % APISERVER_PORT, "--insecure-port=0",
            "--tls-cert-file=%s/apiserver.crt" % pki, "--tls-private-key-file=%s/apiserver.key" % pki,
            "--client-ca-file=%s/ca.crt" % pki,
            "--authorization-mode=Node,RBAC", "--anonymous-auth=false",
            "--service-account-key-file=%s/sa.pub" % pki,
            "--service-account-signing-key-file=%s/sa.key" % pki,
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=" + SERVICE_CIDR,
            "--allow-privileged=true", "--profiling=false", "--v=1",
            # container logs come from the simulated kubelet's log endpoint (its nodes' InternalDNS address,
            # localhost), verified both ways with the cluster CA
            "--kubelet-preferred-address-types=InternalDNS,InternalIP,Hostname,ExternalDNS,ExternalIP",
            "--kubelet-certificate-authority=%s/ca.crt" % pki,
            "--kubelet-client-certificate=%s/apiserver-kubelet-client.crt" % pki,
            "--kubelet-client-key=%s/apiserver-kubelet-client.key" % pki,
        ])
        wait_for("kube-apiserver /readyz", lambda: api_get("/readyz") == "ok", 90, ["etcd", "kube-apiserver"])

        start_proc("kube-controller-manager", [
            os.path.join(bindir, "kube-controller-manager"),
            "--kubeconfig=" + p("controller-manager.kubeconfig"),
            "--authentication-kubeconfig=" + p("controller-manager.kubeconfig"),
            "--authorization-kubeconfig=" + p("controller-manager.kubeconfig"),
            "--bind-address=127.0.0.1", "--secure-port=0", "--port=0",
            "--leader-elect=false", "--use-service-account-credentials=true",
            "--service-account-private-key-file=%s/sa.key" % pki, "--root-ca-file=%s/ca.crt" % pki,
            "--cluster-signing-cert-file=%s/ca.crt" % pki, "--cluster-signing-key-file=%s/ca.key" % pki,
            "--controllers=*,-route,-service,-cloud-node-lifecycle,-nodeipam",
            "--node-monitor-grace-period=20s", "--node-monitor-period=2s",
            "--profiling=false", "--v=1",
        ])
        start_proc("simkubelet", [
            venv_python(), os.path.join(HERE, "simkubelet.py"),
            "--kubeconfig", p("simkubelet.kubeconfig"), "--platform", args.platform,
            "--nodes", str(args.nodes), "--fault-file", p("faults.json"),
            "--log-port", str(KUBELET_PORT), "--tls-cert", "%s/kubelet-serving.crt" % pki,
            "--tls-key", "%s/kubelet-serving.key" % pki, "--client-ca", "%s/ca.crt" % pki,
            "--log-map", p(LOG_MAP),
        ])
        all_procs = list(PROCS)

        def nodes_ready():
            items = api_get("/api/v1/nodes")["items"]
            ready = [n for n in items if any(c["type"] == "Ready" and c["status"] == "True"
                                             for c in n.get("status", {}).get("conditions", []))]
            return len(ready) == args.nodes + 1

        def sa_token():
            secrets = api_get("/api/v1/namespaces/default/secrets")["items"]
            return any(s.get("type") == "kubernetes.io/service-account-token" for s in secrets)
        wait_for("%d Ready nodes from simkubelet" % (args.nodes + 1), nodes_ready, 60, all_procs)
        wait_for("controller-manager (service-account token in default)", sa_token, 60, all_procs)
        # the node lifecycle controller removes the not-ready taint added at registration
        wait_for("node taints cleared", lambda: all(
            not any(t.get("key") == "node.kubernetes.io/not-ready" for t in n["spec"].get("taints", []) or [])
            for n in api_get("/api/v1/nodes")["items"]), 60, all_procs)
    except (Fail, subprocess.CalledProcessError, OSError) as exc:
        say("start-up failed: %s" % exc)
        if isinstance(exc, subprocess.CalledProcessError) and exc.stderr:
            say(exc.stderr.decode(errors="replace"))
        cmd_down(args)
        raise Fail("cluster did not come up")

    meta = {"platform": args.platform, "nodes": args.nodes, "kubeconfig": kubeconfig_path(),
            "apiserver": "https://127.0.0.1:%d" % APISERVER_PORT, "etcd": "http://127.0.0.1:%d" % ETCD_CLIENT_PORT,
            "helm": helm_path(), "k8s_bin": bindir, "state": STATE, "started": time.time(),
            "startup_seconds": round(time.time() - t0, 1)}
    with open(p("cluster.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    say("up in %.1f s: platform %s, trays %s + cp01, kube-apiserver %s"
        % (time.time() - t0, args.platform, ",".join("tray%02d" % i for i in range(1, args.nodes + 1)), meta["apiserver"]))
    say("kubeconfig: %s" % kubeconfig_path())
    print(kubeconfig_path())
    return 0


def cmd_down(_args=None):
    pids = load_pids()
    for name in reversed(PROCS):
        stop_entry(name, pids.get(name))
    if os.path.isdir(STATE):
        leftovers = [n for n in PROCS if alive(pids.get(n))]
        if leftovers:
            raise Fail("could not stop %s; state kept in %s" % (", ".join(leftovers), STATE))
        shutil.rmtree(STATE)
        say("removed %s" % STATE)
    return 0


def cmd_status(args):
    meta, pids, procs = running_state()
    out = {"up": False, "processes": {n: {"pid": (pids.get(n) or {}).get("pid"), "running": procs[n]} for n in PROCS}}
    if meta:
        out.update(meta)
    if meta and all(procs.values()):
        try:
            out["readyz"] = api_get("/readyz")
            out["version"] = api_get("/version")["gitVersion"]
            nodes = api_get("/api/v1/nodes")["items"]
            out["node_ready"] = {}
            for node in nodes:
                ready = [c["status"] for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
                out["node_ready"][node["metadata"]["name"]] = ready[0] if ready else "?"
            with open(p("faults.json")) as fh:
                out["faults"] = json.load(fh)
            out["up"] = out["readyz"] == "ok"
        except (OSError, urllib.error.URLError, ValueError, ssl.SSLError) as exc:
            out["error"] = str(exc)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print("up: %s" % ("yes" if out["up"] else "no"))
        for n in PROCS:
            pr = out["processes"][n]
            print("  %-24s pid %-8s %s" % (n, pr["pid"] or "-", "running" if pr["running"] else "not running"))
        if out.get("up"):
            print("platform: %s  version: %s" % (out["platform"], out["version"]))
            print("kubeconfig: %s" % out["kubeconfig"])
            for node, ready in sorted(out["node_ready"].items()):
                print("  node %-10s Ready=%s%s" % (node, ready, "  fault=" + out["faults"][node] if node in out["faults"] else ""))
    return 0 if out["up"] else 3


def cmd_fault(args):
    meta, _pids, procs = running_state()
    if not meta or not procs.get("simkubelet"):
        raise Fail("the test cluster is not up (run `kcluster up`)")
    path = p("faults.json")
    try:
        with open(path) as fh:
            faults = json.load(fh)
    except (OSError, ValueError):
        faults = {}
    known = ["tray%02d" % i for i in range(1, meta["nodes"] + 1)] + ["cp01"]
    known += ["all"] if args.action == "sriov-vfs" else []
    if args.action == "clear":
        if args.node == "all":
            faults = {}
        else:
            faults.pop(args.node, None)
    else:
        if args.node not in known:
            raise Fail("no simulated node %r (nodes: %s)" % (args.node, ", ".join(known)))
        if args.action == "sriov-vfs":
            if args.count is None or args.count < 0:
                raise Fail("sriov-vfs needs --count N (0 or more)")
            for node in (known[:-2] if args.node == "all" else [args.node]):     # all: every tray
                faults[node] = "sriov-vfs=%d" % args.count
        else:
            faults[args.node] = {"node-notready": "notready", "node-unreachable": "unreachable"}[args.action]
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(faults, fh)
    os.replace(tmp, path)
    say("faults now: %s" % (json.dumps(faults) if faults else "none"))
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(prog="kcluster", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up")
    up.add_argument("--platform", choices=PLATFORMS, default=os.environ.get("KCLUSTER_PLATFORM", "nvke-gb200"))
    up.add_argument("--nodes", type=int, default=int(os.environ.get("KCLUSTER_NODES", "2")))
    up.add_argument("--no-build", action="store_true", help="fail instead of building missing binaries")
    sub.add_parser("down")
    st = sub.add_parser("status")
    st.add_argument("--json", action="store_true")
    sub.add_parser("kubeconfig")
    sub.add_parser("env")
    fa = sub.add_parser("fault")
    fa.add_argument("action", choices=("node-notready", "node-unreachable", "sriov-vfs", "clear"))
    fa.add_argument("node")
    fa.add_argument("--count", type=int, default=None, help="sriov-vfs: the VFs each rail advertises")
    args = ap.parse_args(argv)
    if args.cmd == "up" and not 1 <= args.nodes <= 64:
        ap.error("--nodes must be between 1 and 64")
    try:
        if args.cmd == "up":
            return cmd_up(args)
        if args.cmd == "down":
            return cmd_down(args)
        if args.cmd == "status":
            return cmd_status(args)
        if args.cmd == "env":
            # K8S_AUTH_KUBECONFIG is what kubernetes.core modules read when `kubeconfig` is not set
            print("export KUBECONFIG=%s K8S_AUTH_KUBECONFIG=%s KCLUSTER_HELM=%s" % (kubeconfig_path(), kubeconfig_path(), helm_path()))
            return 0 if os.path.exists(kubeconfig_path()) else 3
        if args.cmd == "kubeconfig":
            print(kubeconfig_path())
            return 0 if os.path.exists(kubeconfig_path()) else 3
        return cmd_fault(args)
    except Fail as exc:
        print("kcluster: error: %s" % exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
