# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type


class ModuleDocFragment(object):
    """Connection options of the cluster validation modules (kubernetes.core's names and K8S_AUTH_* variables)."""

    DOCUMENTATION = r'''
options:
  kubeconfig:
    description:
      - Path to a kubeconfig, or the kubeconfig itself as a dict. Without it (and without I(host)) the module tries
        the in-cluster service account, then C(~/.kube/config). Also read from C(K8S_AUTH_KUBECONFIG).
    type: raw
  context:
    description:
      - The kubeconfig context to use. Also read from C(K8S_AUTH_CONTEXT).
    type: str
  host:
    description:
      - URL of the API server; with I(api_key), or I(client_cert) and I(client_key), no kubeconfig is read.
        Also read from C(K8S_AUTH_HOST).
    type: str
  api_key:
    description:
      - Bearer token. Also read from C(K8S_AUTH_API_KEY).
    type: str
  validate_certs:
    description:
      - Verify the API server's certificate. Also read from C(K8S_AUTH_VERIFY_SSL).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - CA bundle for the API server's certificate. Also read from C(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Client certificate. Also read from C(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Key of the client certificate. Also read from C(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
requirements:
  - kubernetes (the Python client) >= 24.2.0
  - packaging
notes:
  - The options, aliases and C(K8S_AUTH_*) variables are those of C(kubernetes.core), so one
    C(module_defaults) or AWX credential serves both collections (action group
    C(gpu_tray.cluster.cluster_api), which holds this collection's cluster checks and kubernetes.core's groups
    C(k8s) and C(helm)).
  - The module only reads from the API (get/list). It always returns C(changed=false) and runs identically in
    check mode.
attributes:
  check_mode:
    support: full
    description: The module only reads, so it runs identically in check mode.
  diff_mode:
    support: none
    description: The module never changes anything, so there is nothing to diff.
  platform:
    support: full
    platforms: posix
    description: Runs where the kubernetes Python client is (usually the controller, C(delegate_to=localhost)).
'''
