# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The attested evidence bundle (plugin_utils/attestation.py, issue 46 items 1 and 2), built offline from a
validation run's evidence (evidence.evidence_files of the 144-tray rack phases) and a registry recipe's real plan:
AICR's layout and predicate fields, the BOM against the CycloneDX schema the library ships, a DSSE signature that
verifies, and verify naming the file after one byte of one CTRF file changes and the digest after an override."""

import base64
import json

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import attestation, evidence, stack_plan
from test_evidence_report import META, rack_phases
from test_stack_plan import RECIPES, plan

RECIPE = 'gb200-nvke-ubuntu-training'
ATTESTED = '2026-12-06T05:00:00Z'


def pem(key):
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def public_pem(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


KEY = ed25519.Ed25519PrivateKey.generate()


def ctrf_files(phases=None):
    """{'ctrf/<phase>.json': bytes} as write_evidence writes them for the rack run."""
    files = evidence.evidence_files(phases or rack_phases(), META)
    return dict((f['path'], f['content'].encode('utf-8')) for f in files if f['path'].startswith('ctrf/'))


def pods(the_plan):
    """One pod per component namespace, two images each (one a digest the kubelet reported), and one pod of an
    unrelated namespace the BOM must leave out."""
    out = []
    for index, comp in enumerate(the_plan['components']):
        init = {'name': 'init', 'image': 'registry.example/%s-init:1.%d' % (comp['name'], index)}
        main = {'name': 'main', 'image': 'registry.example/%s:v%d' % (comp['name'], index)}
        status = {'name': 'main', 'imageID': 'registry.example/%s@sha256:%064x' % (comp['name'], index)}
        out.append({'metadata': {'namespace': comp['namespace'], 'name': '%s-0' % comp['name']},
                    'spec': {'initContainers': [init], 'containers': [main]},
                    'status': {'containerStatuses': [status]}})
    out.append({'metadata': {'namespace': 'unrelated'}, 'spec': {'containers': [{'name': 'x', 'image': 'other:1'}]}})
    return out


@pytest.fixture(scope='module')
def the_plan():
    return plan(RECIPE)


@pytest.fixture(scope='module')
def signed(the_plan):
    return attestation.build(ctrf_files(), the_plan, pods(the_plan), attestation.load_signer(pem(KEY)), ATTESTED,
                             '0.2.0')


def test_the_bundle_has_aicrs_files_and_the_manifest_binds_every_other_file(signed):
    assert sorted(signed) == ['attestation.intoto.jsonl', 'bom.cdx.json', 'ctrf/conformance.json',
                              'ctrf/deployment.json', 'ctrf/performance.json', 'ctrf/readiness.json',
                              'ctrf/trays.json', 'manifest.json', 'recipe.yaml', 'statement.intoto.json']
    manifest = json.loads(signed['manifest.json'])
    assert manifest['algorithm'] == 'sha256'
    assert [e['path'] for e in manifest['files']] == sorted(set(signed) - set(attestation.BINDING))
    for entry in manifest['files']:
        assert entry['sha256'] == attestation.sha256(signed[entry['path']])


def test_the_statement_carries_the_recipe_digest_phase_counts_and_ctrf_digests(signed, the_plan):
    statement = json.loads(signed['statement.intoto.json'])
    assert statement['_type'] == 'https://in-toto.io/Statement/v1'
    assert statement['predicateType'] == 'https://aicr.nvidia.com/recipe-evidence/v1'
    assert statement['subject'] == [{'name': 'recipe:%s' % RECIPE, 'digest': {'sha256': the_plan['digest']}}]
    pred = statement['predicate']
    assert set(pred) >= {'attestedAt', 'aicrVersion', 'validatorImages', 'fingerprint', 'criteriaMatch', 'phases',
                         'bom', 'manifest', 'redaction', 'recipe'}
    assert pred['attestedAt'] == ATTESTED
    assert pred['recipe'] == {'name': RECIPE, 'digest': 'sha256:' + the_plan['digest'], 'path': 'recipe.yaml'}
    assert pred['manifest']['digest'] == 'sha256:' + attestation.sha256(signed['manifest.json'])
    assert pred['bom']['digest'] == 'sha256:' + attestation.sha256(signed['bom.cdx.json'])
    # the rack run: 3 P_Key and 2 VF failures among 864 tray records (one warning counts as passed in CTRF)
    assert pred['phases']['trays'] == {'passed': 859, 'failed': 5, 'skipped': 0,
                                       'ctrfDigest': 'sha256:' + attestation.sha256(signed['ctrf/trays.json'])}
    assert pred['phases']['conformance']['skipped'] == 1 and pred['phases']['readiness']['passed'] == 4
    assert isinstance(pred['phases']['trays']['passed'], int)


def test_the_envelope_is_dsse_over_the_statement_and_signed_by_the_sites_key(signed):
    env = json.loads(signed['attestation.intoto.jsonl'].decode('utf-8').splitlines()[0])
    assert env['payloadType'] == 'application/vnd.in-toto+json'
    assert base64.b64decode(env['payload']) == signed['statement.intoto.json']
    key = attestation.load_public_key(public_pem(KEY))
    assert [s['keyid'] for s in env['signatures']] == [key.keyid]


def test_recipe_yaml_is_canonical_and_loads_back_to_every_recipes_digest():
    for name in RECIPES:
        the_plan = plan(name)
        text = attestation.recipe_yaml(attestation.recipe_document(the_plan))
        assert '#' not in text.split('\n', 1)[0]
        assert attestation.recipe_digest(yaml.safe_load(text)) == the_plan['digest'] == stack_plan.digest(
            the_plan['canonical'])


def test_the_bom_lists_every_component_with_version_and_images_and_validates(signed, the_plan):
    text = signed['bom.cdx.json'].decode('utf-8')
    assert attestation.validate_bom(text) is None
    bom = json.loads(text)
    assert (bom['bomFormat'], bom['specVersion']) == ('CycloneDX', '1.6')
    components = dict((c['bom-ref'], c) for c in bom['components'])
    depends = dict((d['ref'], d.get('dependsOn', [])) for d in bom['dependencies'])
    assert sorted(depends['recipe:%s' % RECIPE]) == sorted('component:%s' % c['name'] for c in the_plan['components'])
    for index, comp in enumerate(the_plan['components']):
        entry = components['component:%s' % comp['name']]
        assert entry['type'] == 'application' and entry.get('version') == (str(comp['version']) or None)
        props = dict((p['name'], p['value']) for p in entry['properties'])
        assert props['gpu-tray:namespace'] == comp['namespace']
        images = sorted(components[ref]['properties'][0]['value'] for ref in depends['component:%s' % comp['name']])
        # every image of the component's namespace, its own and those of components sharing the namespace
        mine = ['registry.example/%s-init:1.%d' % (comp['name'], index), 'registry.example/%s:v%d' % (comp['name'], index)]
        assert set(mine) <= set(images)
    main = components['image:registry.example/%s:v0@sha256:%064x' % (the_plan['components'][0]['name'], 0)]
    assert main['type'] == 'container' and main['version'] == 'v0'
    assert not any('other' in c['name'] for c in bom['components'])
    # the schema check is live (jsonschema without its format extras, requirements-dev.txt): a component of a type
    # CycloneDX does not define is refused
    bom['components'][0]['type'] = 'not-a-component-type'
    assert 'not-a-component-type' in (attestation.validate_bom(json.dumps(bom)) or '')


def test_a_bom_without_a_cluster_read_says_so_per_component(the_plan):
    bom = json.loads(attestation.bom(attestation.recipe_document(the_plan), None, ATTESTED))
    for entry in bom['components']:
        props = dict((p['name'], p['value']) for p in entry['properties'])
        assert props['gpu-tray:images'] == 'not read: the cluster was not asked'


def test_verify_passes_on_the_bundle_it_wrote(signed, the_plan):
    result = attestation.verify(signed, attestation.load_public_key(public_pem(KEY)), the_plan['digest'], True)
    assert result['problems'] == [] and result['signature'] == 'verified' and result['files'] == 7
    assert attestation.sentence('b', result) == ('Evidence bundle b holds: 7 files match manifest.json, its '
                                                 'signature verified, the recipe digest is the recipe\'s today.')


def test_one_byte_of_one_ctrf_file_changed_is_named(signed, the_plan):
    files = dict(signed)
    data = bytearray(files['ctrf/trays.json'])
    data[data.index(b'"failed"')] = ord("'")
    files['ctrf/trays.json'] = bytes(data)
    result = attestation.verify(files, attestation.load_public_key(public_pem(KEY)), the_plan['digest'])
    assert result['problems'][0].startswith('ctrf/trays.json does not match manifest.json (sha256 ')
    assert all('ctrf/trays.json' in problem for problem in result['problems'])
    assert attestation.sentence('b', result).startswith('Evidence bundle b does not hold: ctrf/trays.json does not '
                                                        'match manifest.json')


def test_a_recipe_override_since_the_run_is_named_by_its_digest(signed, the_plan):
    today = plan(RECIPE, overrides={'nfd': {'values': {'worker': {'tolerations': []}}}})
    assert today['digest'] != the_plan['digest']
    result = attestation.verify(signed, attestation.load_public_key(public_pem(KEY)), today['digest'])
    assert result['problems'] == ['recipe digest %s recorded, the recipe resolves to %s today (recipe or overrides '
                                  'changed: validate again)' % (the_plan['digest'], today['digest'])]


def test_a_file_rewritten_with_a_matching_manifest_is_caught_by_the_signed_statement(signed, the_plan):
    files = dict(signed)
    files['ctrf/trays.json'] = files['ctrf/trays.json'].replace(b'"failed": 5', b'"failed": 0')
    files['manifest.json'] = attestation.manifest(dict((p, d) for p, d in files.items()
                                                       if p not in attestation.BINDING))
    problems = attestation.verify(files, attestation.load_public_key(public_pem(KEY)), the_plan['digest'])['problems']
    assert problems == ['manifest.json does not match the statement\'s manifest.digest',
                        'ctrf/trays.json does not match the statement\'s phases.trays.ctrfDigest']


@pytest.mark.parametrize('key', ['passed', 'failed', 'skipped'])
def test_a_phase_whose_counts_differ_in_one_figure_is_named(the_plan, key):
    """The statement says one phase counted one more of ``key`` than its CTRF file (the file's digest still matches,
    the envelope carries the rewritten statement, unsigned): each of the three figures is compared (issue 53)."""
    files = attestation.build(ctrf_files(), the_plan, None, None, ATTESTED)
    statement = json.loads(files['statement.intoto.json'])
    phase = statement['predicate']['phases']['trays']
    was = '%(passed)s passed/%(failed)s failed/%(skipped)s skipped' % phase
    phase[key] += 1
    files['statement.intoto.json'] = (json.dumps(statement, indent=2, sort_keys=True) + '\n').encode('utf-8')
    env = json.loads(files['attestation.intoto.jsonl'])
    env['payload'] = base64.b64encode(files['statement.intoto.json']).decode('ascii')
    files['attestation.intoto.jsonl'] = (json.dumps(env) + '\n').encode('utf-8')
    said = '%(passed)s passed/%(failed)s failed/%(skipped)s skipped' % phase
    assert attestation.verify(files, None, the_plan['digest'])['problems'] == [
        'ctrf/trays.json counts %s, the statement says %s' % (was, said)]


def test_a_statement_rewritten_breaks_the_signature(signed):
    files = dict(signed)
    statement = json.loads(files['statement.intoto.json'])
    statement['predicate']['attestedAt'] = '2027-01-01T00:00:00Z'
    files['statement.intoto.json'] = (json.dumps(statement, indent=2, sort_keys=True) + '\n').encode('utf-8')
    env = json.loads(files['attestation.intoto.jsonl'])
    env['payload'] = base64.b64encode(files['statement.intoto.json']).decode('ascii')
    files['attestation.intoto.jsonl'] = (json.dumps(env) + '\n').encode('utf-8')
    result = attestation.verify(files, attestation.load_public_key(public_pem(KEY)))
    assert result['signature'] == 'invalid'
    assert result['problems'] == ['attestation.intoto.jsonl\'s signature does not verify with key %s'
                                  % attestation.load_public_key(public_pem(KEY)).keyid[:12]]


def test_another_key_does_not_verify_and_an_extra_file_is_named(signed):
    files = dict(signed, **{'ctrf/extra.json': b'{}'})
    other = attestation.load_public_key(public_pem(ec.generate_private_key(ec.SECP256R1())))
    problems = attestation.verify(files, other)['problems']
    assert 'ctrf/extra.json is not in manifest.json' in problems
    assert 'attestation.intoto.jsonl\'s signature does not verify with key %s' % other.keyid[:12] in problems


def test_unsigned_is_complete_and_verifies_unless_a_signature_is_required(the_plan):
    files = attestation.build(ctrf_files(), the_plan, None, None, ATTESTED)
    env = json.loads(files['attestation.intoto.jsonl'])
    assert env['signatures'] == [] and base64.b64decode(env['payload']) == files['statement.intoto.json']
    result = attestation.verify(files, None, the_plan['digest'])
    assert result['problems'] == [] and result['signature'] == 'unsigned'
    assert 'unsigned' in attestation.sentence('b', result)
    assert attestation.verify(files, None, None, True)['problems'] == ['attestation.intoto.jsonl is not signed']


def test_bad_inputs_are_named():
    with pytest.raises(attestation.BundleError, match='signing key is not a PEM private key'):
        attestation.load_signer(b'not a key')
    with pytest.raises(attestation.BundleError, match='public key is not a PEM key'):
        attestation.load_public_key(b'-----BEGIN PUBLIC KEY-----\nxx\n-----END PUBLIC KEY-----\n')
    with pytest.raises(attestation.BundleError, match='not a stack plan'):
        attestation.recipe_document({'recipe': 'x'})
    with pytest.raises(attestation.BundleError, match='ctrf/trays.json is not a CTRF report'):
        attestation.build({'ctrf/trays.json': b'[]'}, plan(RECIPE))
    with pytest.raises(attestation.BundleError, match='no CTRF file'):
        attestation.build({}, plan(RECIPE))


def test_an_encrypted_key_signs_with_its_passphrase(the_plan):
    key = ec.generate_private_key(ec.SECP256R1())
    encrypted = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.BestAvailableEncryption(b'site-secret'))
    with pytest.raises(attestation.BundleError, match='with the passphrase given'):
        attestation.load_signer(encrypted, 'wrong')
    files = attestation.build(ctrf_files(), the_plan, None, attestation.load_signer(encrypted, 'site-secret'), ATTESTED)
    result = attestation.verify(files, attestation.load_public_key(public_pem(key)), the_plan['digest'], True)
    assert result['problems'] == [] and result['signature'] == 'verified'
