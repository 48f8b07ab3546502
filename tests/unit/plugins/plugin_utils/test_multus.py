# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The multus token's expiry (plugins/plugin_utils/multus.py, F26): the kubeconfig multus's entrypoint writes on the
host (the lab's fixture writes the same format: lab/gpu_tray_lab/fixtures.py multus_kubeconfig), its JWT's claims.
The trays phase's judgement of it: test_tray_validation.py."""

import base64
import json

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import multus
from unithelpers import lab_fixtures

multus_kubeconfig = lab_fixtures().multus_kubeconfig

NOW = 1780000000          # 2026-05-28T20:26:40Z
DAY = 86400


def segment(data):
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip('=')


def test_the_entrypoints_kubeconfig_gives_the_tokens_issue_and_expiry():
    text = multus_kubeconfig(NOW - 355 * DAY, NOW + 10 * DAY, node='tray03')
    assert text.startswith('# Kubeconfig file for Multus CNI plugin.\n') and 'current-context: multus-context' in text
    assert multus.token_expiry(text) == {'user': 'multus', 'exp': NOW + 10 * DAY, 'iat': NOW - 355 * DAY,
                                         'subject': 'system:serviceaccount:nvidia-network-operator:multus'}
    token, user = multus.kubeconfig_token(text)
    claims = multus.jwt_claims(token)
    assert user == 'multus' and claims['kubernetes.io']['pod']['name'] == 'kube-multus-ds-tray03'


def test_the_current_contexts_user_is_the_one_read():
    token = '%s.%s.sig' % (segment({'alg': 'RS256'}), segment({'exp': NOW, 'sub': 'b'}))
    text = json.dumps({'users': [{'name': 'a', 'user': {'token': 'not-a-jwt'}}, {'name': 'b', 'user': {'token': token}}],
                       'contexts': [{'name': 'ctx', 'context': {'user': 'b'}}], 'current-context': 'ctx'})
    assert multus.token_expiry(text)['subject'] == 'b'
    # one user and no context: that user
    single = json.dumps({'users': [{'name': 'b', 'user': {'token': token}}]})
    assert multus.token_expiry(single)['exp'] == NOW


def test_a_legacy_token_without_exp_has_no_expiry():
    token = '%s.%s.sig' % (segment({'alg': 'RS256'}), segment({'iss': 'kubernetes/serviceaccount', 'sub': 'x'}))
    text = json.dumps({'users': [{'name': 'm', 'user': {'token': token}}]})
    assert multus.token_expiry(text) == {'user': 'm', 'exp': None, 'iat': None, 'subject': 'x'}


@pytest.mark.parametrize('text, error', [
    (': not yaml: [', 'not YAML'),
    ('kind: Config\n', 'not a kubeconfig'),
    (json.dumps({'users': [{'name': 'm', 'user': {'tokenFile': '/var/run/token'}}]}),
     'user m reads its token from /var/run/token'),
    (json.dumps({'users': [{'name': 'm', 'user': {'client-certificate-data': 'x'}}]}), 'user m has no token'),
    (json.dumps({'users': [{'name': 'm', 'user': {'token': 'x'}}], 'current-context': 'c',
                 'contexts': [{'name': 'c', 'context': {'user': 'other'}}]}), 'user of its current context (other)'),
    (json.dumps({'users': [{'name': 'm', 'user': {'token': 'abc'}}]}), 'not a JWT'),
    (json.dumps({'users': [{'name': 'm', 'user': {'token': 'a.!!!.c'}}]}), 'not base64url-encoded JSON'),
    (json.dumps({'users': [{'name': 'm', 'user': {'token': 'a.%s.c' % segment([1])}}]}), 'not a JSON object'),
    (json.dumps({'users': [{'name': 'm', 'user': {'token': 'a.%s.c' % segment({'exp': 'soon'})}}]}),
     "exp claim is not a number: 'soon'"),
])
def test_what_cannot_be_read_is_said(text, error):
    with pytest.raises(multus.TokenError, match=error.replace('(', r'\(').replace(')', r'\)').replace('[', r'\[')):
        multus.token_expiry(text)
