# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.verify_evidence: check an attested evidence bundle on the controller - its
signature, every file against its manifest, the recipe digest against the recipe as it resolves today
(plugin_utils/attestation.py verify)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native

from ansible_collections.gpu_tray.cluster.plugins.action.evidence_bundle import read_tree
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import attestation
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.controller_action import ControllerAction

ARGUMENT_SPEC = dict(
    path=dict(type='path', required=True),
    public_key=dict(type='path'),
    recipe=dict(type='dict'),
    recipe_digest=dict(type='str'),
    require_signature=dict(type='bool', default=False),
    fail_on_error=dict(type='bool', default=True),
)


class ActionModule(ControllerAction):

    ARGUMENT_SPEC = ARGUMENT_SPEC
    MUTUALLY_EXCLUSIVE = [['recipe', 'recipe_digest']]

    def act(self, args):
        path = os.path.abspath(os.path.expanduser(args['path']))
        if os.path.isdir(os.path.join(path, attestation.BUNDLE)):
            path = os.path.join(path, attestation.BUNDLE)
        if not os.path.isdir(path):
            raise AnsibleActionFail('verify_evidence: path %s is not a directory (an evidence bundle, or the evidence '
                                    'directory holding %s/)' % (path, attestation.BUNDLE))
        key = None
        if args['public_key']:
            try:
                with open(args['public_key'], 'rb') as handle:
                    key = attestation.load_public_key(handle.read())
            except (IOError, OSError) as exc:
                raise AnsibleActionFail('verify_evidence: public_key %s cannot be read: %s'
                                        % (args['public_key'], to_native(exc)))
            except attestation.BundleError as exc:
                raise AnsibleActionFail('verify_evidence: public_key %s: %s' % (args['public_key'], exc))
        current = args['recipe_digest']
        if args['recipe'] is not None:
            try:
                current = attestation.recipe_digest(attestation.recipe_document(args['recipe']))
            except attestation.BundleError as exc:
                raise AnsibleActionFail('verify_evidence: recipe: %s' % exc)
        checked = attestation.verify(read_tree(path), key, current, args['require_signature'])
        result = dict(checked, path=path, changed=False, msg=attestation.sentence(path, checked))
        if checked['problems'] and args['fail_on_error']:
            result['failed'] = True
        return result
