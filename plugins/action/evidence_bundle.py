# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.evidence_bundle: write the attested evidence bundle of a run's evidence directory
on the controller, in-process (plugin_utils/attestation.py builds it)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpu_tray.cluster.plugins.action.write_evidence import target, write_if_changed
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import attestation, cncf, evidence, preflight_records
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.controller_action import ControllerAction

ARGUMENT_SPEC = dict(
    dir=dict(type='path', required=True),
    dest=dict(type='path'),
    recipe=dict(type='dict', required=True),
    pods=dict(type='list', elements='dict'),
    preflight=dict(type='dict'),
    signing_key=dict(type='path'),
    signing_key_passphrase=dict(type='str', no_log=True),
    attested_at=dict(type='str'),
    version=dict(type='str', default=''),
    cncf_submission=dict(type='bool', default=True),
)
CNCF = 'cncf-submission'
PREFLIGHT = 'ctrf/preflight.json'


def read_tree(root):
    """{relative path: bytes} of every file under ``root`` (none when it does not exist)."""
    out = {}
    for parent, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(parent, name)
            with open(path, 'rb') as handle:
                out[os.path.relpath(path, root).replace(os.sep, '/')] = handle.read()
    return out


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC

    def act(self, args):
        source = os.path.abspath(os.path.expanduser(args['dir']))
        dest = os.path.abspath(os.path.expanduser(args['dest'] or os.path.join(source, attestation.BUNDLE)))
        ctrf = dict(('ctrf/' + path, data) for path, data in read_tree(os.path.join(source, 'ctrf')).items()
                    if path.endswith('.json') and '/' not in path)
        if args['preflight']:
            # the preflight's checks as a phase of its own (the run's reports keep their phases; the bundle binds both)
            phase = {'name': 'preflight', 'checks': preflight_records.phase_checks(args['preflight'])}
            text = json.dumps(evidence.ctrf(phase, {'version': args['version']}), indent=2, sort_keys=True)
            ctrf[PREFLIGHT] = (text + '\n').encode('utf-8')
        signer = None
        try:
            if args['signing_key']:
                try:
                    with open(args['signing_key'], 'rb') as handle:
                        pem = handle.read()
                except (IOError, OSError) as exc:
                    raise AnsibleActionFail('evidence_bundle: signing_key %s cannot be read: %s'
                                            % (args['signing_key'], to_native(exc)))
                signer = attestation.load_signer(pem, args['signing_key_passphrase'])
            files = attestation.build(ctrf, args['recipe'], args['pods'], signer, args['attested_at'],
                                      args['version'])
        except attestation.BundleError as exc:
            option = 'signing_key' if 'signing key' in str(exc) else 'recipe' if 'recipe' in str(exc) else 'dir'
            raise AnsibleActionFail('evidence_bundle: %s: %s' % (option, exc))
        written = []
        try:
            for path in sorted(files):
                full = target(dest, path)
                if write_if_changed(full, files[path], 0o644):
                    written.append(full)
            stale = sorted(set(read_tree(dest)) - set(files))
            for path in stale:
                os.unlink(target(dest, path))
        except (IOError, OSError) as exc:
            raise AnsibleActionFail('evidence_bundle: cannot write under %s: %s' % (dest, to_native(exc)))
        digest = attestation.recipe_digest(attestation.recipe_document(args['recipe']))
        submission = None
        if args['cncf_submission'] and 'ctrf/conformance.json' in ctrf:
            submission = os.path.join(source, CNCF)
            try:
                texts = cncf.files(ctrf['ctrf/conformance.json'], {'recipe': args['recipe'].get('recipe'),
                                                                   'recipe_digest': digest})
            except (ValueError, KeyError, TypeError) as exc:
                raise AnsibleActionFail('evidence_bundle: dir: ctrf/conformance.json is not a CTRF report (%s)' % exc)
            try:
                for path in sorted(texts):
                    full = target(submission, path)
                    if write_if_changed(full, texts[path].encode('utf-8'), 0o644):
                        written.append(full)
            except (IOError, OSError) as exc:
                raise AnsibleActionFail('evidence_bundle: cannot write under %s: %s' % (submission, to_native(exc)))
        return dict(changed=bool(written or stale), dest=dest, written=written, removed=stale, signed=bool(signer),
                    recipe_digest=digest, files=sorted(files), cncf_submission=submission,
                    msg='Evidence bundle of %d phases written to %s, %s.' % (
                        len(ctrf), dest, 'signed' if signer else 'unsigned (no signing key given)'))
