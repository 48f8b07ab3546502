# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 46 items 1 and 2 against the test cluster: playbooks/validate.yml writes the attested bundle
(summary-bundle/) beside its reports, signed with the site's key, its BOM listing the images a component's namespace
runs; playbooks/verify_evidence.yml passes on it, fails naming the CTRF file one byte of which changed, and naming
the digest after an override changes the recipe as the inventory resolves it."""

import json
import os
import subprocess
import sys
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from ansible_env import checkout_env
from clusterhelpers import closed_port
from stackhelpers import RAIL_PCI

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NVKE = 'gb200-nvke-ubuntu-training'
IMAGE = 'nvcr.io/nvidia/gpu-operator:v26.7.0'


def _playbook(kubeconfig, home, playbook, *extra):
    env = checkout_env(REPO, home=home, local_temp=True, K8S_AUTH_KUBECONFIG=kubeconfig)
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', 'localhost,', '-c', 'local',
            '-e', 'ansible_python_interpreter=%s' % sys.executable, os.path.join(REPO, 'playbooks', playbook),
            '-e', json.dumps({'gpu_tray_rail_pci_addresses': RAIL_PCI})]
    for item in extra:
        argv += ['-e', json.dumps(item)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


@pytest.fixture(scope='module')
def operator_pod(k8s_api):
    """A pod in the gpu-operator namespace, so the BOM has an image; once for the module's tests (they only read
    it: a namespace being deleted cannot be made again until it is gone)."""
    core = client.CoreV1Api(k8s_api)
    core.create_namespace({'metadata': {'name': 'gpu-operator'}})
    # the namespace's default service account (and its token) is created by the controller manager a moment later
    deadline = time.time() + 60
    while True:
        try:
            core.create_namespaced_pod('gpu-operator', {'metadata': {'name': 'gpu-operator-0'},
                                                        'spec': {'containers': [{'name': 'operator', 'image': IMAGE}]}})
            break
        except ApiException as exc:
            if time.time() > deadline or exc.status not in (403, 500):
                raise
            time.sleep(1)
    yield
    core.delete_namespace('gpu-operator')


def test_validate_writes_a_signed_bundle_and_verify_names_what_changed(kubeconfig, tmp_path, operator_pod):
    key = ed25519.Ed25519PrivateKey.generate()
    (tmp_path / 'key.pem').write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    (tmp_path / 'key.pub').write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    evidence_dir = tmp_path / 'evidence'
    log = os.path.join(REPO, 'tests', 'unit', 'fixtures', 'nccl', 'vr200_nvls_ib_mpirun.log')
    res = _playbook(kubeconfig, str(tmp_path), 'validate.yml',
                    {'validate_recipe': NVKE, 'validate_evidence_dir': str(evidence_dir),
                     'validate_nccl_logs': [{'path': log, 'variant': 'nvls'}],
                     'gpu_tray_evidence_signing_key': str(tmp_path / 'key.pem')})
    assert 'Validation of %s failed' % NVKE in res.stdout, res.stdout[-3000:]      # nothing is installed
    bundle = evidence_dir / 'summary-bundle'
    assert sorted(os.listdir(str(bundle))) == ['attestation.intoto.jsonl', 'bom.cdx.json', 'ctrf', 'manifest.json',
                                               'recipe.yaml', 'statement.intoto.json']
    assert (bundle / 'ctrf' / 'readiness.json').read_bytes() == (evidence_dir / 'ctrf' / 'readiness.json').read_bytes()
    statement = json.loads((bundle / 'statement.intoto.json').read_text())
    digest = json.loads((evidence_dir / 'summary.json').read_text())['recipe_digest']
    assert statement['subject'] == [{'name': 'recipe:%s' % NVKE, 'digest': {'sha256': digest}}]
    assert statement['predicate']['phases']['performance']['passed'] == 1
    bom = json.loads((bundle / 'bom.cdx.json').read_text())
    refs = dict((d['ref'], d.get('dependsOn', [])) for d in bom['dependencies'])
    # the simulated kubelet runs the pod and reports its image's digest, as a kubelet does
    assert len(refs['component:gpu-operator']) == 1
    assert refs['component:gpu-operator'][0].startswith('image:%s@sha256:' % IMAGE), refs['component:gpu-operator']
    assert json.loads((bundle / 'attestation.intoto.jsonl').read_text())['signatures']

    verify = {'verify_evidence_path': str(evidence_dir), 'verify_evidence_public_key': str(tmp_path / 'key.pub'),
              'verify_evidence_require_signature': True}
    res = _playbook(kubeconfig, str(tmp_path), 'verify_evidence.yml', verify)
    assert res.returncode == 0 and 'holds: ' in res.stdout and 'its signature verified' in res.stdout, res.stdout[-3000:]

    # an override of today: the recipe resolves to another digest, which verify names
    res = _playbook(kubeconfig, str(tmp_path), 'verify_evidence.yml', verify,
                    {'gpu_tray_stack_overrides': {'nfd': {'values': {'worker': {'tolerations': []}}}}})
    assert res.returncode != 0 and 'recipe digest %s recorded, the recipe resolves to ' % digest in res.stdout, \
        res.stdout[-3000:]

    # one byte of one CTRF file
    path = bundle / 'ctrf' / 'readiness.json'
    data = bytearray(path.read_bytes())
    data[10] ^= 0x01
    path.write_bytes(bytes(data))
    res = _playbook(kubeconfig, str(tmp_path), 'verify_evidence.yml', verify)
    assert res.returncode != 0 and 'does not hold: ctrf/readiness.json does not match manifest.json' in res.stdout, \
        res.stdout[-3000:]


@pytest.mark.parametrize('platform, phase, drift', [
    ('rke2-vr200', 'readiness', True),      # the VR200 guide's check before installing, drift on (the default)
    ('nvke-gb200', 'deployment', False),    # drift off: the BOM reads the pods itself
], ids=['vr200-readiness', 'gb200-deployment-no-drift'])
def test_one_phase_alone_with_the_api_up_writes_its_report_and_bundle(kubeconfig, tmp_path, operator_pod, platform,
                                                                      phase, drift):
    """Issue 53: a phase alone on a sample inventory (its tray names, each tray's SSH sent to a closed loopback port:
    a phase alone never reads the trays) against the test cluster: the report, the bundle with the images the
    cluster's pods run - whether drift read them or not - and drift naming the trays it could not compare."""
    report_dir = tmp_path / 'report'
    env = checkout_env(REPO, home=str(tmp_path), local_temp=True, K8S_AUTH_KUBECONFIG=kubeconfig)
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i',
            os.path.join(REPO, 'inventories', platform), os.path.join(REPO, 'playbooks', 'validate.yml'),
            '-e', json.dumps({'gpu_tray_rail_pci_addresses': RAIL_PCI, 'ansible_python_interpreter': sys.executable,
                              'ansible_host': '127.0.0.1', 'ansible_port': closed_port(),
                              'gpu_tray_report_dir': str(report_dir), 'gpu_tray_validate_phases': [phase],
                              'gpu_tray_validate_drift': drift})]
    res = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert 'has no attribute' not in res.stdout and 'is undefined' not in res.stdout, res.stdout[-4000:]
    assert 'UNREACHABLE' not in res.stdout, res.stdout[-4000:]           # no tray was contacted
    evidence = report_dir / 'validation'
    summary = json.loads((evidence / 'summary.json').read_text())
    assert list(summary['phases']) == [phase], summary
    assert '**Result: ' in (evidence / 'report.md').read_text()
    bom = json.loads((evidence / 'summary-bundle' / 'bom.cdx.json').read_text())
    refs = dict((d['ref'], d.get('dependsOn', [])) for d in bom['dependencies'])
    assert [ref.split('@', 1)[0] for ref in refs['component:gpu-operator']] == ['image:%s' % IMAGE], refs
    if drift:
        report = json.loads((evidence / 'drift.json').read_text())
        assert report['not_compared']['images'] is False, report       # the pods were read
        trays = report['not_compared']['trays']
        assert trays == ['vr200-r01-t%02d' % index for index in range(1, 19)], trays      # the sample's rack
        assert ' Not compared: 18 trays (vr200-r01-t01' in report['summary'], report
        assert report['summary'].endswith(') not read this run.'), report          # not the images: they were read
        assert 'Not compared: 18 trays' in (evidence / 'report.md').read_text()
    else:
        assert not (evidence / 'drift.json').exists()
