# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""When the service-account token in a tray's multus.kubeconfig expires (the NVKE guide's F26).

The Network Operator renders the multus DaemonSet with ``--skip-config-watch``: multus's entrypoint copies its pod's
service-account token into ``/etc/cni/net.d/multus.d/multus.kubeconfig`` on the host (the entrypoint's
``MULTUS_KUBECONFIG_FILE_HOST``) once, when the pod starts, and never rewrites it when the token rotates. The copy is
a projected token whose ``exp`` claim the API server extends for legacy clients (one year from issuance under default
settings, ``serviceaccount.ExpirationExtensionSeconds``; other settings shorten it). When it lapses, the multus CNI
plugin on that tray can no longer read the pods' network attachments from the API server and every new pod there
fails to get its secondary (rail) networks. Restarting the multus pods rewrites the file with a new token.

Pure functions over the file's text: :func:`kubeconfig_token` finds the token the kubeconfig's current context uses,
:func:`jwt_claims` decodes a JWT's payload (no signature check: the claims are read, not trusted - the expiry is
what the API server will enforce), :func:`token_expiry` combines them. The validation's trays phase judges the
result (plugin_utils/tray_validation.py, check ``multus-token``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import binascii
import json

import yaml

# where the multus entrypoint writes the kubeconfig on the host (MULTUS_KUBECONFIG_FILE_HOST, the default the
# Network Operator's DaemonSet keeps)
MULTUS_KUBECONFIG = '/etc/cni/net.d/multus.d/multus.kubeconfig'


class TokenError(ValueError):
    """The kubeconfig or its token cannot be read; the text says what is wrong."""


def jwt_claims(token):
    """The claims (payload) of a JWT ``header.payload.signature``, as a dict; TokenError for anything else."""
    if not isinstance(token, str):
        raise TokenError('the token is not a string')
    parts = token.strip().split('.')
    if len(parts) != 3 or not parts[1]:
        raise TokenError('the token is not a JWT (header.payload.signature)')
    payload = parts[1] + '=' * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload.encode('ascii')).decode('utf-8'))
    except (binascii.Error, ValueError, UnicodeError) as exc:
        raise TokenError('the JWT payload is not base64url-encoded JSON (%s)' % exc)
    if not isinstance(claims, dict):
        raise TokenError('the JWT payload is not a JSON object')
    return claims


def _named(entries, name, kind):
    for entry in entries or []:
        if isinstance(entry, dict) and entry.get('name') == name:
            return entry.get(kind) or {}
    return None


def kubeconfig_token(text):
    """``(token, user name)`` of the user the kubeconfig's current context names (else its only user).

    TokenError when the text is no kubeconfig, the user is not there, or it authenticates otherwise (a ``tokenFile``,
    client certificates): then there is no token in this file whose expiry could be read."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise TokenError('not YAML (%s)' % str(exc).splitlines()[0])
    if not isinstance(config, dict) or not isinstance(config.get('users'), list):
        raise TokenError('not a kubeconfig (no users list)')
    users = [entry for entry in config['users'] if isinstance(entry, dict)]
    name = None
    context = _named(config.get('contexts'), config.get('current-context'), 'context')
    if context:
        name = context.get('user')
    elif len(users) == 1:
        name = users[0].get('name')
    user = _named(users, name, 'user') if name is not None else None
    if user is None:
        raise TokenError('the user of its current context (%s) is not in its users' % (name or 'none'))
    if user.get('token'):
        return str(user['token']), name
    if user.get('tokenFile'):
        raise TokenError('user %s reads its token from %s, not from this file' % (name, user['tokenFile']))
    raise TokenError('user %s has no token (it authenticates otherwise)' % name)


def token_expiry(text):
    """What the kubeconfig's token says of itself: ``{user, exp, iat, subject}`` (``exp`` / ``iat`` in seconds since
    the epoch, None when the claim is absent - a legacy Secret token does not expire). TokenError as above."""
    token, user = kubeconfig_token(text)
    claims = jwt_claims(token)
    times = {}
    for claim in ('exp', 'iat'):
        value = claims.get(claim)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise TokenError('the token\'s %s claim is not a number: %r' % (claim, value))
        times[claim] = int(value) if value is not None else None
    return {'user': user, 'exp': times['exp'], 'iat': times['iat'], 'subject': claims.get('sub')}
