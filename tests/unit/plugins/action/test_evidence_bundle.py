# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The evidence_bundle and verify_evidence actions in-process, on an evidence directory as the validate role writes
it (write_evidence over the 144-tray rack run): summary-bundle/ written beside the reports, signed with a key file;
verify passes, then fails naming the CTRF file one byte of which changed, and naming the digest of an override."""

import json
import os
import sys

import pytest
from ansible.errors import AnsibleActionFail
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from ansible_collections.gpu_tray.cluster.plugins.action import evidence_bundle, verify_evidence, write_evidence
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import evidence
from unithelpers import action_plugin, target_connection

# the rack run and the registry's plans, as the plugin_utils tests build them
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'plugin_utils'))
from test_evidence_report import META, rack_phases  # noqa: E402
from test_stack_plan import plan  # noqa: E402

RECIPE = 'vr200-rke2-ubuntu-training'


def run(module, args):
    return action_plugin(module, args, target_connection(module.__name__.rsplit('.', 1)[1])).run(task_vars={})


@pytest.fixture()
def run_dir(tmp_path):
    """A validation's evidence directory (write_evidence), a site key pair on disk."""
    dest = tmp_path / 'validation'
    run(write_evidence, {'dest': str(dest), 'files': evidence.evidence_files(rack_phases(), META)})
    key = ed25519.Ed25519PrivateKey.generate()
    (tmp_path / 'key.pem').write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    (tmp_path / 'key.pub').write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return tmp_path


def test_the_bundle_is_written_beside_the_reports_and_verifies(run_dir):
    the_plan = plan(RECIPE)
    result = run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan,
                                   'signing_key': str(run_dir / 'key.pem'), 'pods': []})
    bundle = run_dir / 'validation' / 'summary-bundle'
    assert result['dest'] == str(bundle) and result['signed'] is True and result['recipe_digest'] == the_plan['digest']
    assert result['msg'] == 'Evidence bundle of 5 phases written to %s, signed.' % bundle
    assert (bundle / 'ctrf' / 'trays.json').read_bytes() == (run_dir / 'validation' / 'ctrf' / 'trays.json').read_bytes()
    # the rack run skipped its conformance phase: the CNCF submission says SKIP for every requirement, and why
    submission = run_dir / 'validation' / 'cncf-submission'
    assert result['cncf_submission'] == str(submission) and len(list(submission.glob('*.md'))) == 13
    assert (submission / 'dra_support.md').read_text().startswith('# dra_support: SKIP\n')
    checked = run(verify_evidence, {'path': str(run_dir / 'validation'), 'public_key': str(run_dir / 'key.pub'),
                                    'recipe': the_plan, 'require_signature': True})
    assert not checked.get('failed') and checked['problems'] == [] and checked['signature'] == 'verified'
    assert checked['msg'].startswith('Evidence bundle %s holds: 7 files match manifest.json' % bundle)


def test_verify_fails_naming_the_ctrf_file_and_the_recipe_digest(run_dir):
    the_plan = plan(RECIPE)
    run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan,
                          'signing_key': str(run_dir / 'key.pem')})
    bundle = run_dir / 'validation' / 'summary-bundle'
    path = bundle / 'ctrf' / 'readiness.json'
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01
    path.write_bytes(bytes(data))
    checked = run(verify_evidence, {'path': str(bundle), 'public_key': str(run_dir / 'key.pub'), 'recipe': the_plan})
    assert checked['failed'] is True
    assert checked['msg'].startswith('Evidence bundle %s does not hold: ctrf/readiness.json does not match '
                                     'manifest.json' % bundle)
    # the same bundle restored, against the recipe with an override of today
    run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan,
                          'signing_key': str(run_dir / 'key.pem')})
    today = plan(RECIPE, overrides={'gpu-operator': {'values': {'dcgmExporter': {'enabled': False}}}})
    checked = run(verify_evidence, {'path': str(bundle), 'public_key': str(run_dir / 'key.pub'), 'recipe': today})
    assert checked['failed'] is True and checked['problems'] == [
        'recipe digest %s recorded, the recipe resolves to %s today (recipe or overrides changed: validate again)'
        % (the_plan['digest'], today['digest'])]
    answer = run(verify_evidence, {'path': str(bundle), 'recipe_digest': 'sha256:' + today['digest'],
                                   'fail_on_error': False})
    assert not answer.get('failed') and answer['recorded_digest'] == the_plan['digest']
    assert answer['signature'] == 'not checked'


def test_require_signature_refuses_an_unsigned_bundle_and_a_signature_it_cannot_check(run_dir):
    """require_signature reaches the check through the action (issue 53, item 7): an unsigned bundle fails, and a
    signed one fails without a public key - its signature was never checked - and passes with the key."""
    the_plan = plan(RECIPE)
    run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan})
    unsigned = run(verify_evidence, {'path': str(run_dir / 'validation'), 'require_signature': True})
    assert unsigned['failed'] is True and unsigned['signature'] == 'unsigned'
    assert unsigned['problems'] == ['attestation.intoto.jsonl is not signed'], unsigned['problems']
    assert run(verify_evidence, {'path': str(run_dir / 'validation')})['problems'] == []   # not asked: it holds
    run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan,
                          'signing_key': str(run_dir / 'key.pem')})
    no_key = run(verify_evidence, {'path': str(run_dir / 'validation'), 'require_signature': True})
    assert no_key['failed'] is True and no_key['signature'] == 'not checked'
    assert no_key['problems'] == ['attestation.intoto.jsonl is signed but no public key was given to check it']
    assert ' does not hold: ' in no_key['msg']
    keyed = run(verify_evidence, {'path': str(run_dir / 'validation'), 'require_signature': True,
                                  'public_key': str(run_dir / 'key.pub')})
    assert not keyed.get('failed') and keyed['signature'] == 'verified' and keyed['problems'] == []


def test_a_rewrite_removes_what_the_new_bundle_does_not_have(run_dir):
    the_plan = plan(RECIPE)
    run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan})
    (run_dir / 'validation' / 'ctrf' / 'performance.json').unlink()
    again = run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan})
    assert again['removed'] == ['ctrf/performance.json'] and again['signed'] is False
    assert 'unsigned (no signing key given)' in again['msg']
    phases = json.loads((run_dir / 'validation' / 'summary-bundle' / 'statement.intoto.json').read_text())
    assert sorted(phases['predicate']['phases']) == ['conformance', 'deployment', 'readiness', 'trays']
    assert run(verify_evidence, {'path': str(run_dir / 'validation')})['problems'] == []


def test_bad_inputs_name_the_option(run_dir):
    the_plan = plan(RECIPE)
    (run_dir / 'bad.pem').write_text('not a key')
    with pytest.raises(AnsibleActionFail, match='^evidence_bundle: signing_key: the signing key is not a PEM'):
        run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan,
                              'signing_key': str(run_dir / 'bad.pem')})
    with pytest.raises(AnsibleActionFail, match='^evidence_bundle: signing_key .*missing.pem cannot be read'):
        run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan,
                              'signing_key': str(run_dir / 'missing.pem')})
    with pytest.raises(AnsibleActionFail, match='^evidence_bundle: recipe: the recipe is not a stack plan'):
        run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': {'recipe': 'x'}})
    with pytest.raises(AnsibleActionFail, match='^evidence_bundle: dir: no CTRF file to attest'):
        run(evidence_bundle, {'dir': str(run_dir / 'nothing'), 'recipe': the_plan})
    with pytest.raises(AnsibleActionFail, match='^verify_evidence: path .* is not a directory'):
        run(verify_evidence, {'path': str(run_dir / 'nothing')})
    with pytest.raises(AnsibleActionFail, match='^verify_evidence: public_key .*bad.pem: the public key is not'):
        run(verify_evidence, {'path': str(run_dir / 'validation'), 'public_key': str(run_dir / 'bad.pem')})


def test_the_preflight_is_a_phase_of_the_bundle(run_dir):
    """The preflight's records the validation found become ctrf/preflight.json: each tray's checks under
    <tray>/<check>, a tray without a record a skipped check; the statement counts it and verify holds."""
    the_plan = plan(RECIPE)
    checks = [{'name': 'os_image', 'status': 'passed', 'message': 'Runs ubuntu 26.04.', 'object': 'tray01',
               'fix': '', 'details': [], 'data': {}},
              {'name': 'pkeys', 'status': 'failed', 'message': '2 ports lack 0xffff.', 'object': 'tray01',
               'fix': 'Set the P_Key.', 'details': ['mlx5_0 port 1'], 'data': {}}]
    records = {'tray10': {'source': None, 'dir': None, 'rdma': None, 'checks': []},
               'tray01': {'source': 'this run', 'dir': 'this run', 'rdma': {}, 'checks': checks}}
    result = run(evidence_bundle, {'dir': str(run_dir / 'validation'), 'recipe': the_plan, 'preflight': records,
                                   'signing_key': str(run_dir / 'key.pem')})
    assert result['msg'].startswith('Evidence bundle of 6 phases written'), result['msg']
    bundle = run_dir / 'validation' / 'summary-bundle'
    tests = json.loads((bundle / 'ctrf' / 'preflight.json').read_text())['results']['tests']
    assert [(t['name'], t['status'], t['extra']['object']) for t in tests] == [
        ('tray01/os_image', 'passed', 'tray01'), ('tray01/pkeys', 'failed', 'tray01'),
        ('tray10/preflight', 'skipped', 'tray10')], tests
    assert 'No preflight record of tray10 was found' in tests[2]['message']
    statement = json.loads((bundle / 'statement.intoto.json').read_text())
    assert {k: statement['predicate']['phases']['preflight'][k] for k in ('passed', 'failed', 'skipped')} == {
        'passed': 1, 'failed': 1, 'skipped': 1}, statement['predicate']['phases']
    # the run's own reports keep their phases: nothing was added beside them
    assert not (run_dir / 'validation' / 'ctrf' / 'preflight.json').exists()
    checked = run(verify_evidence, {'path': str(bundle), 'public_key': str(run_dir / 'key.pub'), 'recipe': the_plan,
                                    'require_signature': True})
    assert checked['problems'] == [], checked['problems']
