# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""deploy_stack's helm post-renderer (roles/stack/templates/keep-crds.py.j2), rendered as the role renders it and run
as helm runs it (stdin: helm's output, stdout: what helm installs), and the filter unkept_crds that reads the stored
release back: every CRD marked keep, every other document byte for byte as helm wrote it, a CRD it cannot read
refused (helm stops) rather than passed through unmarked."""

import os
import subprocess
import sys

import jinja2
import pytest
import yaml

from ansible_collections.gpu_tray.cluster.plugins.filter.unkept_crds import FilterModule

TEMPLATE = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'roles', 'stack', 'templates',
                        'keep-crds.py.j2')

HELM_OUTPUT = '''---
# Source: c/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: on
  when: 2026-12-07
---
# Source: c/templates/crd-a.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
  annotations:
    controller-gen.kubebuilder.io/version: v0.20.0
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          op: {type: string, enum: [=, '!=']}
          since: {type: string, default: 2026-01-01}
---
# Source: c/templates/crd-b.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Cluster
  names: {kind: Widget, plural: widgets}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
'''


@pytest.fixture(scope='module')
def renderer(tmp_path_factory):
    with open(TEMPLATE) as fh:
        text = jinja2.Template(fh.read(), keep_trailing_newline=True).render(__stack_post_renderer_python=sys.executable)
    assert text.startswith('#!%s\n' % sys.executable)
    path = str(tmp_path_factory.mktemp('post-renderer') / 'keep-crds')
    with open(path, 'w') as fh:
        fh.write(text)
    os.chmod(path, 0o700)
    return path


def _run(renderer, text):
    return subprocess.run([renderer], input=text, capture_output=True, text=True, check=False)


def test_every_crd_is_marked_and_every_other_document_passes_as_it_was(renderer):
    res = _run(renderer, HELM_OUTPUT)
    assert res.returncode == 0, res.stderr
    assert '# Source: c/templates/configmap.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n' \
           '  mode: on\n  when: 2026-12-07\n' in res.stdout
    filter_ = FilterModule().filters()['unkept_crds']
    assert filter_(HELM_OUTPUT) == ['gadgets.example.com', 'widgets.example.com']
    assert filter_(res.stdout) == []
    docs = dict((d['metadata']['name'], d) for d in yaml.safe_load_all(res.stdout.replace('[=,', '["=",')) if d)
    gadget = docs['gadgets.example.com']
    assert gadget['metadata']['annotations'] == {'controller-gen.kubebuilder.io/version': 'v0.20.0',
                                                 'helm.sh/resource-policy': 'keep'}
    props = gadget['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']
    assert props['op']['enum'] == ['=', '!='] and props['since']['default'] == '2026-01-01'
    assert docs['widgets.example.com']['metadata']['annotations'] == {'helm.sh/resource-policy': 'keep'}
    assert _run(renderer, res.stdout).stdout == res.stdout        # marking twice changes nothing


def test_a_crd_it_cannot_read_stops_helm_instead_of_passing_unmarked(renderer):
    broken = HELM_OUTPUT + '---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: [\n'
    res = _run(renderer, broken)
    assert res.returncode != 0 and 'cannot read a CustomResourceDefinition' in res.stderr


def test_empty_output_stays_empty(renderer):
    res = _run(renderer, '')
    assert res.returncode == 0 and res.stdout == ''
