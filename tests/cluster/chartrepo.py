# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Chart repositories on loopback for the vendoring tests (a plain module: test files must not import conftest).

* `make_tls(dir)`: a test CA and a server certificate for 127.0.0.1 (openssl). helm (Go) trusts the CA through
  SSL_CERT_FILE, as it would a site's own CA: no --insecure-skip-tls-verify anywhere.
* `HttpsChartRepo`: the test charts packaged with `helm package`, indexed with `helm repo index`, served over HTTPS
  by Python's http.server on 127.0.0.1 (a real Helm repository: index.yaml + archives).
* `OciRegistry`: the Distribution registry (Debian package docker-registry, /usr/bin/docker-registry) on
  127.0.0.1; charts are pushed with `helm push`, so `helm pull oci://` talks to a real OCI registry. Plain HTTP:
  helm's registry client speaks plain HTTP to a loopback registry (containerd's resolver rule for localhost),
  whatever the URL, so a TLS listener there would answer it with 400.
Both record the sha256 of every archive as it was published, which the provenance of a vendored bundle must equal.
"""

import hashlib
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time

import yaml

REGISTRY = "/usr/bin/docker-registry"


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_tls(directory):
    """{ca, cert, key}: a CA and a 127.0.0.1 server certificate signed by it."""
    os.makedirs(directory, exist_ok=True)
    p = dict((k, os.path.join(directory, k + ".pem")) for k in ("ca", "ca_key", "cert", "key"))
    ext = os.path.join(directory, "san.cnf")
    with open(ext, "w") as fh:
        fh.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n"
                 "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
    csr = os.path.join(directory, "server.csr")
    for argv in (["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                  "/CN=gpu-tray test CA", "-keyout", p["ca_key"], "-out", p["ca"],
                  "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
                 ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                  "-keyout", p["key"], "-out", csr],
                 ["openssl", "x509", "-req", "-in", csr, "-CA", p["ca"], "-CAkey", p["ca_key"], "-CAcreateserial",
                  "-days", "2", "-extfile", ext, "-out", p["cert"]]):
        subprocess.run(argv, check=True, capture_output=True)
    return {"ca": p["ca"], "cert": p["cert"], "key": p["key"]}


def helm_env(home, ca):
    """Environment for helm: its own cache/config/data under `home` (no repository a developer added), the test CA."""
    env = dict(os.environ)
    env.update({"HELM_CACHE_HOME": os.path.join(home, "cache"), "HELM_CONFIG_HOME": os.path.join(home, "config"),
                "HELM_DATA_HOME": os.path.join(home, "data"), "SSL_CERT_FILE": ca})
    return env


def package(helm, chart_dir, dest, env):
    """helm package; returns the archive path."""
    os.makedirs(dest, exist_ok=True)
    out = subprocess.run([helm, "package", chart_dir, "--destination", dest], capture_output=True, text=True,
                         env=env, check=True).stdout
    return out.strip().rsplit(" ", 1)[-1].strip()


def _wait_port(port, proc=None, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError("server on port %d exited (rc %s)" % (port, proc.returncode))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("nothing listens on 127.0.0.1:%d after %d s" % (port, timeout))


class _Quiet(http.server.SimpleHTTPRequestHandler):
    requests = []

    def log_message(self, fmt, *args):
        _Quiet.requests.append(self.path)


class HttpsChartRepo(object):
    """A Helm chart repository over HTTPS on 127.0.0.1: `helm package` + `helm repo index`."""

    def __init__(self, helm, charts, root, tls, env):
        self.root = root
        os.makedirs(root, exist_ok=True)
        self.archives = dict((os.path.basename(a), sha256(a)) for a in
                             (package(helm, c, root, env) for c in charts))
        self.port = free_port()
        self.url = "https://127.0.0.1:%d" % self.port
        subprocess.run([helm, "repo", "index", root, "--url", self.url], check=True, capture_output=True, env=env)
        with open(os.path.join(root, "index.yaml")) as fh:
            self.index = yaml.safe_load(fh)
        handler = lambda *a, **kw: _Quiet(*a, directory=root, **kw)  # noqa: E731 - bind the served directory
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls["cert"], tls["key"])
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        _wait_port(self.port)

    def requests(self):
        return list(_Quiet.requests)

    def stop(self):
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.thread.join(timeout=10)
            self.server = None


class OciRegistry(object):
    """The Distribution registry on 127.0.0.1 (plain HTTP, see above); charts are pushed with `helm push`."""

    def __init__(self, helm, archives, root, env, namespace="charts"):
        self.root = root
        os.makedirs(root, exist_ok=True)
        self.port = free_port()
        config = {"version": 0.1, "log": {"level": "error", "accesslog": {"disabled": True}},
                  "storage": {"filesystem": {"rootdirectory": os.path.join(root, "data")},
                              "delete": {"enabled": True}},
                  "http": {"addr": "127.0.0.1:%d" % self.port}}
        path = os.path.join(root, "config.yml")
        with open(path, "w") as fh:
            yaml.safe_dump(config, fh)
        self.log = open(os.path.join(root, "registry.log"), "w")
        self.proc = subprocess.Popen([REGISTRY, "serve", path], stdout=self.log, stderr=subprocess.STDOUT)
        _wait_port(self.port, self.proc)
        self.url = "oci://127.0.0.1:%d/%s" % (self.port, namespace)
        self.archives = {}
        for archive in archives:
            res = subprocess.run([helm, "push", archive, self.url], capture_output=True, text=True, env=env)
            assert res.returncode == 0, "helm push %s %s: %s" % (archive, self.url, res.stderr)
            self.archives[os.path.basename(archive)] = sha256(archive)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None
        self.log.close()


def registry_missing():
    """Why the OCI registry cannot run here (None when it can)."""
    if not os.access(REGISTRY, os.X_OK):
        return "%s not found (Debian package docker-registry; tests/cluster/build.sh installs it)" % REGISTRY
    if shutil.which("openssl") is None:
        return "openssl not found"
    return None
