# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fresh ed25519 SSH key pair, made on the controller, for one NCCL run's mpirun (role validate).

The pair lives only in the run's namespace (a Secret deleted with it) and in memory. It is made with the
``cryptography`` library, which ansible-core itself depends on, so the controller needs nothing more: not
``ssh-keygen`` (absent from execution environments built on a bare base image) and not community.crypto, which is
not a dependency of this collection.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: ssh_keypair
short_description: A fresh ed25519 SSH key pair in OpenSSH format
version_added: 0.1.0
description:
  - Returns one dict, C({private, public}) - an unencrypted ed25519 private key in OpenSSH format and its public key
    line (C(ssh-ed25519 AAAA... <comment>)), made on the controller with the C(cryptography) library (an
    ansible-core dependency). Every call makes a new pair.
  - Used by role C(gpu_tray.cluster.validate) for the key its NCCL launcher's mpirun uses to reach the workers; keep
    the result out of logs (C(no_log)).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  comment:
    description: The comment of the public key line.
    type: str
    default: gpu-tray-cluster
'''

EXAMPLES = r'''
- name: A key pair for this run
  ansible.builtin.set_fact:
    run_keys: "{{ lookup('gpu_tray.cluster.ssh_keypair', comment='gpu-tray-nccl-r1') }}"
  no_log: true
'''

RETURN = r'''
_raw:
  description: One dict, C({private, public}).
  type: list
  elements: dict
'''

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase

try:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
except ImportError:  # pragma: no cover - ansible-core requires cryptography
    Ed25519PrivateKey = None


def make_keypair(comment='gpu-tray-cluster'):
    """(private key in OpenSSH PEM format, public key line)."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption()).decode('ascii')
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH).decode('ascii')
    return private, '%s %s' % (public, comment) if comment else public


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        self.set_options(var_options=variables, direct=kwargs)
        if Ed25519PrivateKey is None:
            raise AnsibleLookupError('ssh_keypair needs the Python cryptography library on the controller')
        private, public = make_keypair(self.get_option('comment'))
        return [{'private': private, 'public': public}]
