#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: verify_evidence
short_description: Check an attested evidence bundle - signature, files, recipe digest
version_added: 0.2.0
description:
  - Checks a bundle written by P(gpu_tray.cluster.evidence_bundle#module) (or by AI Cluster Runtime's
    C(--emit-attestation), same layout) - every file against C(manifest.json), and no file it does not list; the
    Statement's bindings (the manifest's digest, each phase's CTRF digest and counts, the BOM's digest, C(recipe.yaml)
    against the recipe digest); the DSSE envelope's payload and its signature with O(public_key); and the recorded
    recipe digest against the recipe as the collection resolves it today (O(recipe) or O(recipe_digest)).
  - The result's message is one sentence naming what does not hold (the file, the digest), or that the bundle holds.
  - Runs on the controller as an action plugin; reads only.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
requirements:
  - in-toto-attestation and securesystemslib[crypto] on the controller (meta/ee-requirements.txt)
options:
  path:
    description: The bundle's directory, or the evidence directory that holds C(summary-bundle/).
    type: path
    required: true
  public_key:
    description: The PEM public key (or the private key) whose signature the envelope must carry.
    type: path
  recipe:
    description: The stack plan of the recipe as it resolves today (the C(stack_plan) action's result); its digest
      must be the recorded one. Mutually exclusive with O(recipe_digest).
    type: dict
  recipe_digest:
    description: The recipe digest of today (hex, C(sha256:) prefix allowed), when O(recipe) is not given.
    type: str
  require_signature:
    description: Whether an unsigned envelope, or a signature not checked (no O(public_key)), is a problem.
    type: bool
    default: false
  fail_on_error:
    description: Whether the task fails when something does not hold; false returns RV(problems) only.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.controller_action
attributes:
  check_mode:
    support: full
    description: Reads only; the same in check mode.
  diff_mode:
    support: none
    description: Changes nothing.
seealso:
  - module: gpu_tray.cluster.evidence_bundle
'''

EXAMPLES = r'''
- name: Check the latest validation's bundle against the recipe of today
  gpu_tray.cluster.verify_evidence:
    path: /var/lib/gpu-tray-report/latest/validation
    public_key: /etc/gpu-tray/evidence-key.pub
    recipe: "{{ __stack_plan }}"
    require_signature: true
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
problems:
  description: What does not hold, one clause each, naming the file or the digest.
  type: list
  elements: str
  returned: always
  sample: ['ctrf/trays.json does not match manifest.json (sha256 0fd488ad3edb, recorded 4196a288adb3)']
signature:
  description: C(verified), C(unsigned), C(not checked) (no O(public_key)), C(invalid) or C(missing).
  type: str
  returned: always
recipe:
  description: The recipe the bundle attests.
  type: str
  returned: always
recorded_digest:
  description: The recipe digest the Statement records (hex).
  type: str
  returned: always
current_digest:
  description: The recipe digest of today (hex), empty when neither O(recipe) nor O(recipe_digest) was given.
  type: str
  returned: always
files:
  description: How many files C(manifest.json) lists.
  type: int
  returned: always
path:
  description: The bundle's directory checked.
  type: str
  returned: always
msg:
  description: One sentence - what does not hold, or that the bundle holds.
  type: str
  returned: always
'''
