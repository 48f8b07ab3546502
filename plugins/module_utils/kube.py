# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes API access for the cluster validation modules, with kubernetes.core's options and rules.

The options, their aliases and the ``K8S_AUTH_<OPTION>`` environment fallbacks are those of
kubernetes.core (``plugins/module_utils/args_common.py`` AUTH_ARG_SPEC, ``k8s/client.py``), so the same
``module_defaults`` / AWX credential environment serve both collections; the subset is what a read-only
check needs (no username/password: API servers dropped basic auth in 1.19; no proxy options).

Why not import kubernetes.core's ``get_api_client``: a module that imports another collection's
module_utils cannot be loaded by ``ansible-test sanity`` (validate-modules, import) unless that collection
sits in the same ``ansible_collections`` tree, which the offline sanity run here does not have. The logic
is small: the same order (explicit host+token/cert, else kubeconfig/context, else in-cluster, else
``~/.kube/config``), but loaded into a private ``Configuration`` rather than the process-wide default.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import traceback

from ansible.module_utils.basic import missing_required_lib

try:
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config
    from kubernetes.client.rest import ApiException
    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError as _exc:  # pragma: no cover - exercised only without the kubernetes client
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = _exc
    k8s_client = k8s_config = None

    class ApiException(Exception):
        status = None
        reason = None

AUTH_ARG_SPEC = dict(
    kubeconfig=dict(type='raw', no_log=True),
    context=dict(type='str'),
    host=dict(type='str'),
    api_key=dict(type='str', no_log=True),
    validate_certs=dict(type='bool', aliases=['verify_ssl']),
    ca_cert=dict(type='path', aliases=['ssl_ca_cert']),
    client_cert=dict(type='path', aliases=['cert_file']),
    client_key=dict(type='path', aliases=['key_file']),
)
# option -> names of its K8S_AUTH_* variables (kubernetes.core reads K8S_AUTH_<option> or K8S_AUTH_<client name>)
_ENV = dict(
    kubeconfig=('K8S_AUTH_KUBECONFIG',),
    context=('K8S_AUTH_CONTEXT',),
    host=('K8S_AUTH_HOST',),
    api_key=('K8S_AUTH_API_KEY',),
    validate_certs=('K8S_AUTH_VALIDATE_CERTS', 'K8S_AUTH_VERIFY_SSL'),
    ca_cert=('K8S_AUTH_CA_CERT', 'K8S_AUTH_SSL_CA_CERT'),
    client_cert=('K8S_AUTH_CLIENT_CERT', 'K8S_AUTH_CERT_FILE'),
    client_key=('K8S_AUTH_CLIENT_KEY', 'K8S_AUTH_KEY_FILE'),
)


class KubeConfigError(Exception):
    """The connection options do not lead to an API server (message says which option to fix)."""


def auth_settings(params, environ=None):
    """Options given to the module, else their K8S_AUTH_* variables (booleans: 0/false/no are false).

    An empty variable counts as unset: AWX injects a credential's blank optional field as ``VAR=""``, and
    kubernetes.core would look for a context named "" (a deliberate difference from kubernetes.core).
    """
    environ = os.environ if environ is None else environ
    auth = {}
    for option, names in _ENV.items():
        value = params.get(option)
        if value is None:
            for name in names:
                if environ.get(name):
                    value = environ[name]
                    if option == 'validate_certs':
                        value = value.lower() not in ('0', 'false', 'no')
                    break
        if value is not None:
            auth[option] = value
    return auth


def api_client(auth):
    """A kubernetes ``ApiClient`` for ``auth`` (from auth_settings). Raises KubeConfigError."""
    if not HAS_KUBERNETES:
        raise KubeConfigError('the kubernetes Python client is not installed: %s' % KUBERNETES_IMPORT_ERROR)
    configuration = k8s_client.Configuration()
    host = (auth.get('host') or '').rstrip('/')
    explicit = host and (auth.get('api_key') or (auth.get('client_cert') and auth.get('client_key')))
    kubeconfig = auth.get('kubeconfig')
    try:
        if explicit:
            pass
        elif kubeconfig or auth.get('context'):
            _load_kubeconfig(kubeconfig, auth.get('context'), configuration)
        else:
            try:
                k8s_config.load_incluster_config(client_configuration=configuration)
            except k8s_config.ConfigException:
                _load_kubeconfig(None, None, configuration)
    except (k8s_config.ConfigException, IOError, OSError, ValueError, TypeError) as exc:
        raise KubeConfigError('cannot load the kubeconfig %s%s: %s (check options kubeconfig/context or '
                              'K8S_AUTH_KUBECONFIG/K8S_AUTH_CONTEXT)'
                              % (kubeconfig if isinstance(kubeconfig, str) else ('(inline)' if kubeconfig else '~/.kube/config'),
                                 ' context %s' % auth['context'] if auth.get('context') else '', exc))
    if host:
        configuration.host = host
    if auth.get('api_key'):
        configuration.api_key = {'authorization': 'Bearer %s' % auth['api_key']}
    if auth.get('validate_certs') is not None:
        configuration.verify_ssl = auth['validate_certs']
    for option, attribute in (('ca_cert', 'ssl_ca_cert'), ('client_cert', 'cert_file'), ('client_key', 'key_file')):
        if auth.get(option):
            setattr(configuration, attribute, auth[option])
    return k8s_client.ApiClient(configuration=configuration)


def _load_kubeconfig(kubeconfig, context, configuration):
    if isinstance(kubeconfig, dict):
        k8s_config.load_kube_config_from_dict(config_dict=kubeconfig, context=context, client_configuration=configuration)
    elif kubeconfig is None or isinstance(kubeconfig, str):
        if kubeconfig and not os.path.isfile(kubeconfig):
            raise IOError('no such file')
        k8s_config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=configuration)
    else:
        raise TypeError('kubeconfig must be a path or a dict, got %s' % type(kubeconfig).__name__)


def api_error(exc):
    """Short text of an ApiException or a connection error."""
    if isinstance(exc, ApiException):
        return 'HTTP %s %s' % (exc.status, (exc.reason or '').strip())
    return str(exc)


def to_dict(api, obj):
    """A typed client object as the plain JSON dict the API sent (camelCase keys)."""
    return api.sanitize_for_serialization(obj)


class Reader(object):
    """The API groups of one client, read as the plain JSON dicts the API sent (camelCase keys, no null fields).

    A missing object or resource type (HTTP 404) is ``None`` for one object and ``[]`` for a list; every other
    API error propagates to the module's ``read_or_fail``. The cluster check modules subclass it with the reads
    their checks need.
    """

    def __init__(self, api):
        self.api = api
        self.core = k8s_client.CoreV1Api(api)
        self.apps = k8s_client.AppsV1Api(api)
        self.ext = k8s_client.ApiextensionsV1Api(api)
        self.custom = k8s_client.CustomObjectsApi(api)

    def get(self, call, *args, **kwargs):
        """``call(*args, **kwargs)`` as a dict; ``None`` when the API answers 404."""
        try:
            result = call(*args, **kwargs)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise
        return result if isinstance(result, dict) else to_dict(self.api, result)

    def items(self, call, *args, **kwargs):
        """The items of a list call as dicts; ``[]`` when the resource type is not served (404)."""
        found = self.get(call, *args, **kwargs)
        return (found or {}).get('items') or []


# What every cluster check module does around its checks: connect, read, report (one place for the messages).

def connect(module):
    """The API client for the module's connection options; fails the module saying why when there is none."""
    if not HAS_KUBERNETES:
        module.fail_json(msg=missing_required_lib('kubernetes'), exception=str(KUBERNETES_IMPORT_ERROR))
    try:
        return api_client(auth_settings(module.params))
    except KubeConfigError as exc:
        module.fail_json(msg=str(exc))


def read_or_fail(module, server, read, what, output):
    """``read()``; an API refusal fails the module naming ``what`` was read, an unreachable server says so."""
    try:
        return read()
    except ApiException as exc:
        module.fail_json(msg='%s: reading %s failed: %s' % (server, what, api_error(exc)), **output)
    except Exception as exc:  # connection refused, TLS errors: urllib3 raises many types
        module.fail_json(msg='%s: cannot reach the API server: %s (check host/kubeconfig/context and the CA)'
                             % (server, exc), exception=traceback.format_exc(), **output)


def finish(module, output, failed):
    """Exit with ``output``; when ``failed``, fail (fail_on_error) or warn with its msg."""
    if failed and module.params['fail_on_error']:
        module.fail_json(**output)
    if failed:
        module.warn(output['msg'])
    module.exit_json(**output)
