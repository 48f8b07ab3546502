# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The attested evidence bundle of a validation run, as AI Cluster Runtime's ``--emit-attestation`` writes it
(its "Recipe evidence": ``summary-bundle/`` with ``recipe.yaml``, ``bom.cdx.json``, ``ctrf/<phase>.json``,
``manifest.json``, ``statement.intoto.json`` and ``attestation.intoto.jsonl``), and its verification.

Pure functions over bytes and dicts (the action plugins evidence_bundle and verify_evidence read and write the files):

* ``recipe_document(plan)`` / ``recipe_yaml(doc)`` / ``recipe_digest(doc)``: the canonical recipe (the stack plan's
  canonical part, plugin_utils/stack_plan.py) and its digest: sha256 of its JSON with sorted keys - the digest every
  report of the collection already carries.
* ``bom(doc, pods, ...)``: a CycloneDX 1.6 BOM (cyclonedx-python-lib) of every component with its chart, version and
  the images its pods run.
* ``build(...)``: every file of the bundle; the in-toto Statement (in-toto-attestation) binds the manifest, the
  per-phase CTRF digests and counts, the BOM and the recipe digest; a DSSE envelope (securesystemslib) signs it with
  the site's key, or carries it unsigned when none is given.
* ``verify(files, ...)``: what does not hold of a bundle, one clause each, naming the file or the digest.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import hashlib
import json
import uuid

import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import stack_plan

PREDICATE_TYPE = 'https://aicr.nvidia.com/recipe-evidence/v1'
STATEMENT_TYPE = 'https://in-toto.io/Statement/v1'
PAYLOAD_TYPE = 'application/vnd.in-toto+json'
BUNDLE = 'summary-bundle'
RECIPE = 'recipe.yaml'
BOM = 'bom.cdx.json'
MANIFEST = 'manifest.json'
STATEMENT = 'statement.intoto.json'
ATTESTATION = 'attestation.intoto.jsonl'
# the files that bind the others (not in the manifest: the manifest is bound by the statement, the statement by the
# envelope)
BINDING = (MANIFEST, STATEMENT, ATTESTATION)
TOOL = 'gpu_tray.cluster'


class BundleError(Exception):
    """Input the bundle cannot be built from (a key that does not load, a CTRF file that is not CTRF)."""


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def _bare(digest):
    """A digest as hex, with or without its ``sha256:`` prefix."""
    text = str(digest or '')
    return text.split(':', 1)[1] if text.startswith('sha256:') else text


# --- the recipe ------------------------------------------------------------------------------------------------

def recipe_document(plan):
    """The canonical recipe of a stack plan (a canonical recipe is its own): what its digest covers - the plan's
    mirror-free form where it carries one (``canonical``: where the mirrors sit is no part of the recipe)."""
    if isinstance(plan, dict) and isinstance(plan.get('canonical'), dict):
        return plan['canonical']
    try:
        return stack_plan.canonical(plan)
    except (KeyError, TypeError):
        raise BundleError('the recipe is not a stack plan: it needs recipe and components with name, kind, chart, '
                          'repository, version, namespace, depends_on, values, objects, manifest_urls, '
                          'manifests_phase, readiness, wait and timeout')


def recipe_digest(doc):
    """sha256 of the canonical recipe: its JSON with sorted keys, no whitespace (stack_plan.digest)."""
    return stack_plan.digest(doc)


def recipe_yaml(doc):
    """The canonical recipe as the bundle's recipe.yaml: sorted keys, no comments; loads back to the same digest."""
    return yaml.safe_dump(json.loads(json.dumps(doc)), sort_keys=True, default_flow_style=False, allow_unicode=False)


# --- the BOM ---------------------------------------------------------------------------------------------------

def pod_images(pods):
    """{namespace: sorted [{image, digest}]} of the containers the pods run (status.containerStatuses' imageID
    when the kubelet reported one, else the spec's image)."""
    out = {}
    for pod in pods or []:
        namespace = (pod.get('metadata') or {}).get('namespace') or ''
        statuses = dict((s.get('name'), s) for s in ((pod.get('status') or {}).get('containerStatuses') or []))
        spec = pod.get('spec') or {}
        for container in (spec.get('initContainers') or []) + (spec.get('containers') or []):
            image = container.get('image')
            if not image:
                continue
            image_id = (statuses.get(container.get('name')) or {}).get('imageID') or ''
            digest = image_id.rsplit('@', 1)[1] if '@' in image_id else ''
            entry = {'image': image, 'digest': digest}
            if entry not in out.setdefault(namespace, []):
                out[namespace].append(entry)
    return dict((ns, sorted(images, key=lambda i: (i['image'], i['digest']))) for ns, images in out.items())


def _image_version(image):
    if ':' not in image.rsplit('/', 1)[-1]:
        return image, ''
    name, tag = image.rsplit(':', 1)
    return name, tag


def bom(doc, pods=None, generated=None, version=''):
    """The CycloneDX 1.6 JSON (text) of the recipe's components as installed: per component its chart and version
    (an application; a manifest-only component without a chart has the recipe's version) and, from ``pods`` (the
    pods of the components' namespaces as the cluster reports them; None when they were not read), the images its
    namespace runs (containers, each a dependency of its component)."""
    from cyclonedx.model import Property
    from cyclonedx.model.bom import Bom
    from cyclonedx.model.component import Component, ComponentType
    from cyclonedx.model.contact import OrganizationalEntity
    from cyclonedx.output.json import JsonV1Dot6
    from packageurl import PackageURL

    images = pod_images(pods) if pods is not None else None
    digest = recipe_digest(doc)
    serial = uuid.uuid5(uuid.NAMESPACE_URL, 'gpu-tray:%s:%s:%s' % (doc['recipe'], digest, generated or ''))
    result = Bom(serial_number=serial)
    result.metadata.timestamp = _timestamp(generated)
    result.metadata.supplier = OrganizationalEntity(name=TOOL)
    root = Component(name=doc['recipe'], type=ComponentType.PLATFORM, bom_ref='recipe:%s' % doc['recipe'],
                     version=digest[:12], properties=[Property(name='gpu-tray:recipe-digest', value=digest)])
    result.metadata.component = root
    by_ref = {}
    for comp in doc['components']:
        chart_version = str(comp.get('version') or '')
        props = [Property(name='gpu-tray:namespace', value=comp['namespace']),
                 Property(name='gpu-tray:kind', value=comp['kind'])]
        if comp.get('chart'):
            props.append(Property(name='gpu-tray:chart', value=str(comp['chart'])))
        if comp.get('repository'):
            props.append(Property(name='gpu-tray:repository', value=str(comp['repository'])))
        if images is None:
            props.append(Property(name='gpu-tray:images', value='not read: the cluster was not asked'))
        elif not images.get(comp['namespace']):
            props.append(Property(name='gpu-tray:images', value='none: no pod runs in %s' % comp['namespace']))
        purl = PackageURL('helm', None, str(comp.get('chart') or comp['name']), chart_version or None) \
            if comp['kind'] == 'helm' else None
        component = Component(name=comp['name'], version=chart_version or None, type=ComponentType.APPLICATION,
                              bom_ref='component:%s' % comp['name'], purl=purl, properties=props)
        result.components.add(component)
        children = []
        for entry in (images or {}).get(comp['namespace'], []):
            ref = 'image:%s@%s' % (entry['image'], entry['digest']) if entry['digest'] else 'image:%s' % entry['image']
            if ref not in by_ref:
                name, tag = _image_version(entry['image'])
                hashes_props = [Property(name='gpu-tray:image', value=entry['image'])]
                if entry['digest']:
                    hashes_props.append(Property(name='gpu-tray:image-digest', value=entry['digest']))
                by_ref[ref] = Component(name=name, version=tag or entry['digest'] or None,
                                        type=ComponentType.CONTAINER, bom_ref=ref, properties=hashes_props)
                result.components.add(by_ref[ref])
            children.append(by_ref[ref])
        result.register_dependency(component, children)
    result.register_dependency(root, list(c for c in result.components if c.type == ComponentType.APPLICATION))
    return JsonV1Dot6(result).output_as_string(indent=2) + '\n'


def validate_bom(text):
    """The CycloneDX 1.6 schema's complaint about ``text`` (the library's own schema), or None."""
    from cyclonedx.schema import SchemaVersion
    from cyclonedx.validation.json import JsonStrictValidator
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    return str(error) if error else None


def _timestamp(generated):
    if generated:
        return datetime.datetime.strptime(generated, '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=datetime.timezone.utc)
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


# --- manifest, statement, envelope -----------------------------------------------------------------------------

def manifest(files):
    """manifest.json (bytes) of ``files`` ({relative path: bytes}): every file's sha256, sorted by path."""
    entries = [{'path': path, 'sha256': sha256(files[path])} for path in sorted(files)]
    return (json.dumps({'algorithm': 'sha256', 'files': entries}, indent=2, sort_keys=True) + '\n').encode('utf-8')


def ctrf_counts(path, data):
    """{passed, failed, skipped} of a CTRF file's summary; BundleError naming the file when it is not CTRF."""
    try:
        summary = json.loads(data.decode('utf-8'))['results']['summary']
        return dict((key, int(summary.get(key) or 0)) for key in ('passed', 'failed', 'skipped'))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BundleError('%s is not a CTRF report (no results.summary)' % path)


def predicate(doc, ctrf_files, bom_text, manifest_bytes, attested_at, version='', images=None):
    """The recipe-evidence/v1 predicate: AICR's fields, with the values this collection knows."""
    phases = {}
    for path in sorted(ctrf_files):
        name = path.rsplit('/', 1)[-1][:-len('.json')]
        phases[name] = dict(ctrf_counts(path, ctrf_files[path]), ctrfDigest='sha256:' + sha256(ctrf_files[path]))
    return {
        'attestedAt': attested_at,
        'aicrVersion': '',
        'generator': {'name': TOOL, 'version': version},
        'validatorImages': sorted(images or []),
        'fingerprint': {},
        'criteriaMatch': None,
        'phases': phases,
        'bom': {'path': BOM, 'digest': 'sha256:' + sha256(bom_text.encode('utf-8')), 'format': 'CycloneDX',
                'specVersion': '1.6'},
        'manifest': {'path': MANIFEST, 'digest': 'sha256:' + sha256(manifest_bytes)},
        'redaction': {'applied': False},
        'recipe': {'name': doc['recipe'], 'digest': 'sha256:' + recipe_digest(doc), 'path': RECIPE},
    }


def statement(doc, pred):
    """The in-toto Statement v1 (dict) about ``recipe:<name>``, checked with in-toto-attestation's own rules."""
    from in_toto_attestation.v1.resource_descriptor import ResourceDescriptor
    from in_toto_attestation.v1.statement import Statement
    subject = {'name': 'recipe:%s' % doc['recipe'], 'digest': {'sha256': recipe_digest(doc)}}
    check = Statement([ResourceDescriptor(name=subject['name'], digest=subject['digest']).pb], PREDICATE_TYPE,
                      json.loads(json.dumps(pred)))
    check.validate()
    # written from the dict, not the protobuf Struct: a Struct makes every count a float (3.0)
    return {'_type': STATEMENT_TYPE, 'subject': [subject], 'predicateType': PREDICATE_TYPE, 'predicate': pred}


def load_signer(pem, passphrase=None):
    """A securesystemslib signer for a PEM private key (Ed25519, ECDSA or RSA); BundleError when it does not load."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from securesystemslib.signer import CryptoSigner
    try:
        key = load_pem_private_key(pem, password=passphrase.encode('utf-8') if passphrase else None)
        return CryptoSigner(key)
    except (ValueError, TypeError) as exc:
        raise BundleError('the signing key is not a PEM private key that loads%s (%s)' % (
            ' with the passphrase given' if passphrase else '', exc))


def load_public_key(pem):
    """A securesystemslib key for a PEM public key (or the public half of a PEM private key); BundleError else."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
    from securesystemslib.signer import SSlibKey
    try:
        if b'PRIVATE KEY' in pem:
            return SSlibKey.from_crypto(load_pem_private_key(pem, password=None).public_key())
        return SSlibKey.from_crypto(load_pem_public_key(pem))
    except (ValueError, TypeError) as exc:
        raise BundleError('the public key is not a PEM key that loads (%s)' % exc)


def envelope(statement_bytes, signer=None):
    """The DSSE envelope (dict) of the statement: signed by ``signer``, or with no signature when none is given."""
    from securesystemslib import dsse
    env = dsse.Envelope(payload=statement_bytes, payload_type=PAYLOAD_TYPE, signatures={})
    if signer is not None:
        signature = env.sign(signer)
        env.signatures[signature.keyid] = signature
    return env.to_dict()


def build(ctrf_files, plan, pods=None, signer=None, attested_at=None, version='', validator_images=None):
    """Every file of the bundle, {relative path: bytes}. ``ctrf_files``: {'ctrf/<phase>.json': bytes} as the run
    wrote them; ``plan``: the stack plan (or canonical recipe) the run validated against."""
    if not ctrf_files:
        raise BundleError('no CTRF file to attest: the run wrote no ctrf/<phase>.json')
    doc = recipe_document(plan)
    attested_at = attested_at or _timestamp(None).strftime('%Y-%m-%dT%H:%M:%SZ')
    bom_text = bom(doc, pods, attested_at, version)
    files = dict(ctrf_files)
    files[RECIPE] = recipe_yaml(doc).encode('utf-8')
    files[BOM] = bom_text.encode('utf-8')
    manifest_bytes = manifest(files)
    pred = predicate(doc, ctrf_files, bom_text, manifest_bytes, attested_at, version, validator_images)
    statement_bytes = (json.dumps(statement(doc, pred), indent=2, sort_keys=True) + '\n').encode('utf-8')
    files[MANIFEST] = manifest_bytes
    files[STATEMENT] = statement_bytes
    files[ATTESTATION] = (json.dumps(envelope(statement_bytes, signer), sort_keys=True) + '\n').encode('utf-8')
    return files


# --- verify ----------------------------------------------------------------------------------------------------

def _json(files, path, problems):
    if path not in files:
        problems.append('%s is missing' % path)
        return None
    try:
        return json.loads(files[path].decode('utf-8'))
    except (ValueError, UnicodeDecodeError):
        problems.append('%s is not JSON' % path)
        return None


def _check_manifest(files, problems):
    """Every file against manifest.json, and no file the manifest does not list; how many it lists."""
    listed = _json(files, MANIFEST, problems)
    if listed is None:
        return 0
    try:
        entries = dict((e['path'], e['sha256']) for e in listed['files'])
    except (KeyError, TypeError):
        problems.append('%s lists no files (no files[].path and sha256)' % MANIFEST)
        return 0
    for path in sorted(entries):
        if path not in files:
            problems.append('%s is missing (manifest.json lists it)' % path)
        elif sha256(files[path]) != entries[path]:
            problems.append('%s does not match manifest.json (sha256 %s, recorded %s)'
                            % (path, sha256(files[path])[:12], str(entries[path])[:12]))
    for path in sorted(set(files) - set(entries) - set(BINDING)):
        problems.append('%s is not in manifest.json' % path)
    return len(entries)


def _check_statement(files, stmt, problems):
    """The statement's bindings: the manifest's digest, each phase's CTRF digest and counts, the BOM, the recipe."""
    pred = stmt.get('predicate') or {}
    if stmt.get('predicateType') != PREDICATE_TYPE:
        problems.append('%s has predicate type %r, not %s' % (STATEMENT, stmt.get('predicateType'), PREDICATE_TYPE))
    if MANIFEST in files and _bare((pred.get('manifest') or {}).get('digest')) != sha256(files[MANIFEST]):
        problems.append('%s does not match the statement\'s manifest.digest' % MANIFEST)
    if BOM in files and _bare((pred.get('bom') or {}).get('digest')) != sha256(files[BOM]):
        problems.append('%s does not match the statement\'s bom.digest' % BOM)
    phases = pred.get('phases') or {}
    ctrf = dict((p.rsplit('/', 1)[-1][:-len('.json')], p) for p in files if p.startswith('ctrf/') and p.endswith('.json'))
    for name in sorted(set(phases) | set(ctrf)):
        path = ctrf.get(name, 'ctrf/%s.json' % name)
        if name not in ctrf:
            problems.append('%s is missing (the statement has phase %s)' % (path, name))
        elif name not in phases:
            problems.append('%s is not in the statement\'s phases' % path)
        elif _bare(phases[name].get('ctrfDigest')) != sha256(files[path]):
            problems.append('%s does not match the statement\'s phases.%s.ctrfDigest' % (path, name))
        else:
            try:
                counts = ctrf_counts(path, files[path])
            except BundleError as exc:
                problems.append(str(exc))
                continue
            if any(phases[name].get(k) != v for k, v in counts.items()):
                problems.append('%s counts %s, the statement says %s' % (
                    path, _counts_text(counts), _counts_text(phases[name])))
    recorded = _bare((pred.get('recipe') or {}).get('digest'))
    subjects = [s for s in stmt.get('subject') or [] if str(s.get('name', '')).startswith('recipe:')]
    if not subjects or (subjects[0].get('digest') or {}).get('sha256') != recorded:
        problems.append('the statement\'s subject is not recipe:<name> with the predicate\'s recipe.digest %s'
                        % recorded[:12])
    if RECIPE in files:
        try:
            doc = yaml.safe_load(files[RECIPE])
            actual = recipe_digest(doc)
        except (yaml.YAMLError, KeyError, TypeError, ValueError):
            problems.append('%s is not a canonical recipe' % RECIPE)
        else:
            if actual != recorded:
                problems.append('%s has recipe digest %s, the statement records %s' % (RECIPE, actual, recorded))
    return recorded


def _counts_text(counts):
    return '/'.join('%s %s' % (counts.get(k), k) for k in ('passed', 'failed', 'skipped'))


def _check_envelope(files, public_key, require_signature, problems):
    """The DSSE envelope: its payload is statement.intoto.json, and its signature verifies with ``public_key``.
    Returns 'verified', 'unsigned' or 'not checked'."""
    from securesystemslib import dsse
    from securesystemslib.exceptions import VerificationError
    if ATTESTATION not in files:
        problems.append('%s is missing' % ATTESTATION)
        return 'missing'
    lines = [line for line in files[ATTESTATION].decode('utf-8', 'replace').splitlines() if line.strip()]
    try:
        env = dsse.Envelope.from_dict(json.loads(lines[0]))
    except (ValueError, KeyError, IndexError, TypeError):
        problems.append('%s is not a DSSE envelope' % ATTESTATION)
        return 'invalid'
    if env.payload_type != PAYLOAD_TYPE:
        problems.append('%s has payload type %s, not %s' % (ATTESTATION, env.payload_type, PAYLOAD_TYPE))
    if STATEMENT in files and env.payload != files[STATEMENT]:
        problems.append('%s does not carry %s (its payload differs)' % (ATTESTATION, STATEMENT))
    if not env.signatures:
        if require_signature:
            problems.append('%s is not signed' % ATTESTATION)
        return 'unsigned'
    if public_key is None:
        if require_signature:
            problems.append('%s is signed but no public key was given to check it' % ATTESTATION)
        return 'not checked'
    try:
        env.verify([public_key], 1)
    except (VerificationError, ValueError):
        problems.append('%s\'s signature does not verify with key %s' % (ATTESTATION, public_key.keyid[:12]))
        return 'invalid'
    return 'verified'


def verify(files, public_key=None, current_digest=None, require_signature=False):
    """What does not hold of a bundle (``files``: {relative path: bytes}): ``problems`` (one clause each, naming
    the file or digest), ``signature`` (verified, unsigned, not checked, invalid, missing), ``recipe``,
    ``recorded_digest``, ``current_digest`` and ``files`` (how many the manifest binds)."""
    problems = []
    listed = _check_manifest(files, problems)
    stmt = _json(files, STATEMENT, problems)
    recorded = _check_statement(files, stmt, problems) if isinstance(stmt, dict) else ''
    signature = _check_envelope(files, public_key, require_signature, problems)
    current = _bare(current_digest) if current_digest else ''
    if current and recorded and current != recorded:
        problems.append('recipe digest %s recorded, the recipe resolves to %s today (recipe or overrides changed: '
                        'validate again)' % (recorded, current))
    pred = (stmt.get('predicate') or {}) if isinstance(stmt, dict) else {}
    return {'problems': problems, 'signature': signature, 'recipe': (pred.get('recipe') or {}).get('name', ''),
            'recorded_digest': recorded, 'current_digest': current, 'files': listed}


def sentence(where, result):
    """One sentence: what does not hold of the bundle at ``where``, or that it holds and how far."""
    if result['problems']:
        return 'Evidence bundle %s does not hold: %s.' % (where, '; '.join(result['problems']))
    signature = {'verified': 'its signature verified', 'unsigned': 'unsigned',
                 'not checked': 'signed (no public key given, the signature was not checked)'}[result['signature']]
    today = (', the recipe digest is the recipe\'s today' if result['current_digest']
             else ' (the recipe of today was not compared)')
    return 'Evidence bundle %s holds: %d files match manifest.json, %s%s.' % (where, result['files'], signature, today)
