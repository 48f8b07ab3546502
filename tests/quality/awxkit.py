"""What AWX does with the objects playbooks/awx_configure.yml defines, rendered without an AWX: a credential type's
injectors (tests/quality/test_awx.py, and tests/lab/test_awx_runner.py for the jobs it runs through ansible-runner)."""
import json
import types

import jinja2
import jinja2.sandbox
import yaml

from qualitykit import ROOT


def credential_injection(inputs, pdd):
    """What a credential of one of the types playbooks/awx_configure.yml creates (the one whose fields are the keys of
    ``inputs``) injects into a job, rendered the way AWX renders a credential type's injectors: file templates are
    written into the private data dir and named by tower.filename.<id>; env and extra_vars templates are rendered in a
    Jinja sandbox with the credential's inputs, an input left blank being undefined (renders as ''). Returns
    (env vars, extra vars)."""
    tasks = yaml.safe_load((ROOT / "playbooks" / "awx_configure.yml").read_text())[0]["tasks"]
    ctype = next(t["awx.awx.credential_type"] for t in tasks
                 if "awx.awx.credential_type" in t and t["awx.awx.credential_type"].get("state") == "present"
                 and set(inputs) <= {f["id"] for f in t["awx.awx.credential_type"]["inputs"]["fields"]})
    # the playbook passes the injectors to AWX through Ansible's templating: {% raw %} ... {% endraw %} goes
    injectors = json.loads(jinja2.Template(json.dumps(ctype["injectors"])).render())
    sandbox = jinja2.sandbox.ImmutableSandboxedEnvironment()
    files = {}
    for key, template in injectors.get("file", {}).items():
        path = pdd / "env" / ("credential_%s" % key.split(".", 1)[1])
        path.write_text(sandbox.from_string(template).render(**inputs))
        path.chmod(0o660)            # as AWX writes it (tempfile.mkstemp + chmod 660)
        files[key.split(".", 1)[1]] = str(path)
    tower = types.SimpleNamespace(filename=types.SimpleNamespace(**files))
    return tuple({var: sandbox.from_string(template).render(tower=tower, **inputs)
                  for var, template in injectors.get(kind, {}).items()} for kind in ("env", "extra_vars"))
