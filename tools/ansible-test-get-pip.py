"""Stand-in for the `get-pip.py` bootstrap script that ansible-test downloads from an Ansible CI host.

ansible-test creates each sanity test's virtual environment without pip and then runs get-pip.py in it, with
pip-install style arguments (`pip==24.2 ...`, plus get-pip's own `--no-setuptools`/`--no-wheel`). Our build
machines reach PyPI but not that host, so tools/sanity.sh puts this file where ansible-test looks for a cached
copy (~/.ansible/test/cache/get_pip_<version>.py). It does the same job with the standard library's
`ensurepip` (the pip wheel bundled with CPython) and then lets that pip install the requested packages from
PyPI.

ansible-test runs it with a scrubbed environment (no PIP_CERT), so on machines whose HTTPS goes through a
TLS-inspecting proxy pip would fail certificate checks; where the OS CA bundle exists it is written into the
venv's own pip.conf, which ansible-test's later `pip install` calls in the same venv read too.
"""
import ensurepip
import os
import subprocess
import sys

OS_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")


def main():
    args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
    bundle = next((b for b in OS_CA_BUNDLES if os.path.exists(b)), None)
    conf = os.path.join(sys.prefix, "pip.conf")
    if bundle and sys.prefix != sys.base_prefix and not os.path.exists(conf):
        with open(conf, "w") as handle:
            handle.write("[global]\ncert = %s\n" % bundle)
    ensurepip.bootstrap(upgrade=True)
    env = dict(os.environ)
    env.pop("PIP_CONFIG_FILE", None)  # ensurepip sets it to os.devnull in this process; let pip read pip.conf
    return subprocess.call([sys.executable, "-m", "pip", "install"] + args, env=env)


if __name__ == "__main__":
    sys.exit(main())
