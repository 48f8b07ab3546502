# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/kube.py: kubernetes.core's connection options and K8S_AUTH_* fallbacks, without a cluster."""

import pytest
import yaml

from ansible_collections.gpu_tray.cluster.plugins.module_utils import kube
from ansible_collections.gpu_tray.cluster.plugins.modules import cluster_preflight, component_version

KUBECONFIG = {
    'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'a',
    'clusters': [{'name': 'a', 'cluster': {'server': 'https://198.51.100.1:6443', 'insecure-skip-tls-verify': True}},
                 {'name': 'b', 'cluster': {'server': 'https://198.51.100.2:6443', 'insecure-skip-tls-verify': True}}],
    'users': [{'name': 'u', 'user': {'token': 't0ken'}}],
    'contexts': [{'name': 'a', 'context': {'cluster': 'a', 'user': 'u'}},
                 {'name': 'b', 'context': {'cluster': 'b', 'user': 'u'}}],
}


@pytest.mark.parametrize('options, env, auth', [
    ({'kubeconfig': '/opt/kc', 'context': None},          # options win over the environment
     {'K8S_AUTH_KUBECONFIG': '/env/kubeconfig', 'K8S_AUTH_CONTEXT': 'env-ctx', 'K8S_AUTH_VERIFY_SSL': 'no',
      'K8S_AUTH_SSL_CA_CERT': '/env/ca.pem'},
     {'kubeconfig': '/opt/kc', 'context': 'env-ctx', 'validate_certs': False, 'ca_cert': '/env/ca.pem'}),
    ({}, {'K8S_AUTH_VALIDATE_CERTS': 'true'}, {'validate_certs': True}),
    ({}, {}, {}),
    # AWX injects a blank optional credential field as VAR="": that must not select a context named ''
    ({}, {'K8S_AUTH_CONTEXT': '', 'K8S_AUTH_KUBECONFIG': '/env/kubeconfig', 'K8S_AUTH_VERIFY_SSL': '',
          'K8S_AUTH_VALIDATE_CERTS': 'no'}, {'kubeconfig': '/env/kubeconfig', 'validate_certs': False}),
    # the first environment name of an option wins
    ({}, {'K8S_AUTH_VALIDATE_CERTS': 'yes', 'K8S_AUTH_VERIFY_SSL': 'no', 'K8S_AUTH_CA_CERT': '/a.pem',
          'K8S_AUTH_SSL_CA_CERT': '/b.pem'}, {'validate_certs': True, 'ca_cert': '/a.pem'}),
])
def test_auth_settings_from_options_and_environment(options, env, auth):
    assert kube.auth_settings(options, env) == auth


def test_kubeconfig_file_and_context(tmp_path):
    path = tmp_path / 'kubeconfig'
    path.write_text(yaml.safe_dump(KUBECONFIG))
    api = kube.api_client({'kubeconfig': str(path)})
    assert api.configuration.host == 'https://198.51.100.1:6443'
    assert 'Bearer t0ken' in api.configuration.api_key.values()
    api = kube.api_client({'kubeconfig': str(path), 'context': 'b', 'validate_certs': True})
    assert api.configuration.host == 'https://198.51.100.2:6443' and api.configuration.verify_ssl is True
    api = kube.api_client({'kubeconfig': KUBECONFIG, 'context': 'b'})
    assert api.configuration.host == 'https://198.51.100.2:6443'


def test_explicit_host_and_token_read_no_kubeconfig(tmp_path, monkeypatch):
    monkeypatch.setenv('KUBECONFIG', str(tmp_path / 'absent'))
    api = kube.api_client({'host': 'https://203.0.113.9:6443/', 'api_key': 'abc', 'ca_cert': '/etc/ca.pem'})
    assert api.configuration.host == 'https://203.0.113.9:6443'
    assert api.configuration.api_key == {'authorization': 'Bearer abc'} and api.configuration.ssl_ca_cert == '/etc/ca.pem'


def test_a_token_without_host_or_a_certificate_without_key_still_reads_the_kubeconfig(tmp_path, monkeypatch):
    """Only host plus a token, or host plus certificate and key, stand without a kubeconfig; a token alone
    overrides the kubeconfig user's, a lone certificate adds to the kubeconfig's connection."""
    path = tmp_path / 'kubeconfig'
    path.write_text(yaml.safe_dump(KUBECONFIG))
    api = kube.api_client({'kubeconfig': str(path), 'api_key': 'override'})
    assert api.configuration.host == 'https://198.51.100.1:6443'
    assert api.configuration.api_key == {'authorization': 'Bearer override'}
    api = kube.api_client({'kubeconfig': str(path), 'host': 'https://203.0.113.9:6443', 'client_cert': '/etc/c.pem'})
    assert api.configuration.host == 'https://203.0.113.9:6443' and api.configuration.cert_file == '/etc/c.pem'
    assert 'Bearer t0ken' in api.configuration.api_key.values()        # the kubeconfig was read
    monkeypatch.setenv('KUBECONFIG', str(tmp_path / 'absent'))
    api = kube.api_client({'host': 'https://203.0.113.9:6443', 'client_cert': '/etc/c.pem', 'client_key': '/etc/k.pem'})
    assert (api.configuration.cert_file, api.configuration.key_file) == ('/etc/c.pem', '/etc/k.pem')
    assert not api.configuration.api_key


def test_the_token_option_is_never_logged(run_module):
    result = run_module(cluster_preflight, {'host': 'https://127.0.0.1:1', 'api_key': 'secret-api-key-4567',
                                            'recipe': 'gb200-nvke-ubuntu-training', 'checks': ['server-version']})
    assert result.failed and 'cannot reach the API server' in result['msg']
    assert 'secret-api-key-4567' not in str(result)
    assert kube.AUTH_ARG_SPEC['api_key']['no_log'] is True
    # ansible-core <= 2.20 returns the invocation of a failed module with the no_log value masked; 2.21 returns
    # no invocation there: where there is one, the value is masked
    if 'invocation' in result:
        assert result['invocation']['module_args']['api_key'] == 'VALUE_SPECIFIED_IN_NO_LOG_PARAMETER'


@pytest.mark.parametrize('auth, text', [
    ({'kubeconfig': '/nonexistent/kubeconfig'}, 'cannot load the kubeconfig /nonexistent/kubeconfig'),
    ({'kubeconfig': KUBECONFIG, 'context': 'zzz'}, 'context zzz'),
    ({'kubeconfig': 42}, 'kubeconfig must be a path or a dict'),
])
def test_bad_kubeconfig_is_a_clean_error(auth, text):
    with pytest.raises(kube.KubeConfigError) as info:
        kube.api_client(auth)
    assert text in str(info.value)


def test_modules_report_unreachable_api_server(run_module, tmp_path):
    # kubeconfig is no_log (as in kubernetes.core: it may hold credentials), so its values are masked in the
    # output: the names here are long enough not to mask the message.
    config = {'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'closed-port',
              'clusters': [{'name': 'closed-cluster', 'cluster': {'server': 'https://127.0.0.1:1'}}],
              'users': [{'name': 'token-user', 'user': {'token': 'secret-token-123'}}],
              'contexts': [{'name': 'closed-port', 'context': {'cluster': 'closed-cluster', 'user': 'token-user'}}]}
    result = run_module(cluster_preflight, {'kubeconfig': config, 'recipe': 'gb200-nvke-ubuntu-training',
                                            'checks': ['server-version']})
    assert result.failed and 'cannot reach the API server' in result['msg']   # the URL is masked: it is in the kubeconfig
    assert 'Connection refused' in result['msg'] and 'secret-token-123' not in str(result)
    result = run_module(component_version, {'kubeconfig': config, 'component': 'gpu-operator'})
    assert result.failed and 'cannot reach the API server' in result['msg']
    result = run_module(cluster_preflight, {'kubeconfig': config, 'recipe': 'x'})
    assert result.failed and 'value of recipe must be one of' in result['msg']
    result = run_module(cluster_preflight, {'kubeconfig': config, 'recipe': 'gb200-nvke-ubuntu-training',
                                            'added_pods_per_gpu_node': -1})
    assert result.failed and 'option added_pods_per_gpu_node must be 0 or more' in result['msg']


def test_reader_reads_404_as_absent_and_raises_every_other_api_error():
    """A service account without rights (403) must fail the check, not pass it over zero objects."""
    from kubernetes.client.rest import ApiException

    def answer(status):
        def call(*_args, **_kwargs):
            raise ApiException(status=status, reason='Forbidden' if status == 403 else 'Not Found')
        return call

    reader = kube.Reader(kube.k8s_client.ApiClient())
    assert reader.get(answer(404)) is None and reader.items(answer(404)) == []
    for status in (401, 403, 500, 503):
        with pytest.raises(ApiException) as raised:
            reader.items(answer(status))
        assert raised.value.status == status
        assert kube.api_error(raised.value) == 'HTTP %d %s' % (status, raised.value.reason)
    assert reader.get(lambda name: {'metadata': {'name': name}}, 'x') == {'metadata': {'name': 'x'}}
    assert reader.items(lambda: {'items': [{'a': 1}]}) == [{'a': 1}]
    assert reader.items(lambda: {'items': None}) == []
    # the typed objects of the kubernetes client come back as the plain dicts the API sent
    meta = kube.k8s_client.V1ObjectMeta(name='n', resource_version='7')
    assert reader.get(lambda: meta) == {'name': 'n', 'resourceVersion': '7'}
    listing = kube.k8s_client.V1NamespaceList(items=[kube.k8s_client.V1Namespace(metadata=meta)])
    assert reader.items(lambda: listing) == [{'metadata': {'name': 'n', 'resourceVersion': '7'}}]


def test_api_error_text():
    from kubernetes.client.rest import ApiException

    assert kube.api_error(ApiException(status=403, reason='Forbidden ')) == 'HTTP 403 Forbidden'
    assert kube.api_error(ApiException(status=500)) == 'HTTP 500 '
    assert kube.api_error(ConnectionRefusedError(111, 'Connection refused')) == '[Errno 111] Connection refused'


def test_no_kubeconfig_and_no_cluster_says_where_it_looked(tmp_path, monkeypatch):
    """Outside a pod and without ~/.kube/config the error names the default file (the in-cluster fallback ran)."""
    monkeypatch.setenv('HOME', str(tmp_path))
    monkeypatch.delenv('KUBERNETES_SERVICE_HOST', raising=False)
    monkeypatch.delenv('KUBECONFIG', raising=False)
    from kubernetes.config import kube_config
    monkeypatch.setattr(kube_config, 'KUBE_CONFIG_DEFAULT_LOCATION', str(tmp_path / 'none'))
    with pytest.raises(kube.KubeConfigError) as raised:
        kube.api_client({})
    assert str(raised.value).startswith('cannot load the kubeconfig ~/.kube/config: ')
    with pytest.raises(kube.KubeConfigError) as raised:
        kube.api_client({'kubeconfig': {'apiVersion': 'v1', 'kind': 'Config'}})
    assert str(raised.value).startswith('cannot load the kubeconfig (inline): ')


class _Module(object):
    """The parts of AnsibleModule that connect/read_or_fail/finish use; fail_json/exit_json end the call."""

    def __init__(self, params=None):
        self.params = dict({'fail_on_error': True}, **(params or {}))
        self.result = None
        self.warnings = []

    def fail_json(self, **kwargs):
        self.result = dict(kwargs, failed=True)
        raise SystemExit(1)

    def exit_json(self, **kwargs):
        self.result = kwargs
        raise SystemExit(0)

    def warn(self, text):
        self.warnings.append(text)


def test_module_helpers_fail_warn_and_exit():
    from kubernetes.client.rest import ApiException

    def refused():
        raise ApiException(status=403, reason='Forbidden')

    def unreachable():
        raise ConnectionRefusedError('refused')

    module = _Module()
    assert kube.read_or_fail(module, 'https://h:6443', lambda: 42, 'nodes', {}) == 42
    with pytest.raises(SystemExit):
        kube.read_or_fail(module, 'https://h:6443', refused, 'nodes', {'checks': []})
    assert module.result == {'msg': 'https://h:6443: reading nodes failed: HTTP 403 Forbidden', 'checks': [],
                             'failed': True}
    with pytest.raises(SystemExit):
        kube.read_or_fail(module, 'https://h:6443', unreachable, 'nodes', {})
    assert module.result['msg'].startswith('https://h:6443: cannot reach the API server: refused')
    with pytest.raises(SystemExit):
        kube.finish(module, {'msg': 'bad'}, True)
    assert module.result == {'msg': 'bad', 'failed': True}
    lenient = _Module({'fail_on_error': False})
    with pytest.raises(SystemExit):
        kube.finish(lenient, {'msg': 'bad'}, True)
    assert lenient.result == {'msg': 'bad'} and lenient.warnings == ['bad']
    fine = _Module()
    with pytest.raises(SystemExit):
        kube.finish(fine, {'msg': 'good'}, False)
    assert fine.result == {'msg': 'good'} and fine.warnings == []
    broken = _Module({'kubeconfig': '/nonexistent/kubeconfig'})
    with pytest.raises(SystemExit):
        kube.connect(broken)
    assert broken.result['failed'] and 'cannot load the kubeconfig /nonexistent/kubeconfig' in broken.result['msg']
    assert kube.to_dict(kube.k8s_client.ApiClient(), kube.k8s_client.V1ObjectMeta(name='n')) == {'name': 'n'}


def test_connect_without_the_kubernetes_client(monkeypatch):
    from ansible.module_utils.basic import missing_required_lib

    monkeypatch.setattr(kube, 'HAS_KUBERNETES', False)
    monkeypatch.setattr(kube, 'KUBERNETES_IMPORT_ERROR', ImportError('No module named kubernetes'))
    module = _Module()
    with pytest.raises(SystemExit):
        kube.connect(module)
    assert module.result == {'msg': missing_required_lib('kubernetes'), 'exception': 'No module named kubernetes',
                             'failed': True}


@pytest.mark.parametrize('spelling, validate', [('0', False), ('false', False), ('False', False), ('FALSE', False),
                                                ('no', False), ('No', False), ('1', True), ('true', True),
                                                ('yes', True), ('True', True)])
@pytest.mark.parametrize('name', ['K8S_AUTH_VERIFY_SSL', 'K8S_AUTH_VALIDATE_CERTS'])
def test_every_spelling_of_false_turns_certificate_validation_off_and_nothing_else_does(name, spelling, validate):
    """kubernetes.core's environment variables: 0, false and no (any case) switch TLS verification off; any other
    value keeps it on."""
    assert kube.auth_settings({}, {name: spelling}) == {'validate_certs': validate}
