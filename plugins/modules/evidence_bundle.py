#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: evidence_bundle
short_description: Write the attested evidence bundle of a validation run
version_added: 0.2.0
description:
  - Writes C(summary-bundle/) beside a run's reports in the layout of AI Cluster Runtime's C(--emit-attestation) -
    C(recipe.yaml) (the canonical recipe), C(bom.cdx.json) (a CycloneDX 1.6 BOM of every component of the recipe with
    its chart, version and the images its pods run), C(ctrf/<phase>.json), C(manifest.json) (every file's sha256),
    C(statement.intoto.json) (an in-toto Statement v1, predicate type C(https://aicr.nvidia.com/recipe-evidence/v1),
    about C(recipe:<name>) with the recipe digest; its predicate carries the manifest's digest, the BOM's, and per
    phase the passed/failed/skipped counts and the CTRF file's digest) and C(attestation.intoto.jsonl) (the Statement
    in a DSSE envelope, signed with O(signing_key), unsigned when none is given).
  - The recipe digest is the one every report of the collection carries - sha256 of the canonical recipe's JSON with
    sorted keys - so P(gpu_tray.cluster.verify_evidence#module) can compare it with the recipe as it resolves later.
  - Runs on the controller as an action plugin; evidence is a record of the run, so it is written in check mode too.
    Files of an earlier bundle in O(dest) that this one does not have are removed.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
requirements:
  - cyclonedx-python-lib, in-toto-attestation and securesystemslib[crypto] on the controller (meta/ee-requirements.txt)
options:
  dir:
    description: The run's evidence directory; its C(ctrf/<phase>.json) files are the phases attested.
    type: path
    required: true
  dest:
    description: Where the bundle is written.
    type: path
    default: O(dir)/summary-bundle
  recipe:
    description: The stack plan the run validated against (the C(stack_plan) action's result), or its canonical recipe.
    type: dict
    required: true
  pods:
    description:
      - The pods of the recipe's namespaces as the cluster reports them (C(kubernetes.core.k8s_info) resources); the
        BOM lists each namespace's images (the C(imageID) digest the kubelet reports).
      - Not given, the BOM says for each component that its images were not read.
    type: list
    elements: dict
  preflight:
    description:
      - The preflight's records the validation found, per tray (C(records) of the lookup
        C(gpu_tray.cluster.preflight_records)); their checks become the bundle's phase C(ctrf/preflight.json),
        named C(<tray>/<check>), a tray without a record a skipped check saying so.
      - Not given, the bundle holds the run's own phases only.
    type: dict
  signing_key:
    description: A PEM private key (Ed25519, ECDSA or RSA) the site provides, a file or an AWX credential's file.
    type: path
  signing_key_passphrase:
    description: The passphrase of O(signing_key), when it is encrypted.
    type: str
  attested_at:
    description: The time recorded as C(attestedAt) (C(%Y-%m-%dT%H:%M:%SZ)); now when not given.
    type: str
  version:
    description: The version of this collection, recorded as the predicate's C(generator.version).
    type: str
    default: ''
  cncf_submission:
    description:
      - With a conformance phase (C(ctrf/conformance.json)), also write O(dir)/cncf-submission/ as AICR's
        C(--cncf-submission) does - one Markdown file per requirement of the CNCF Kubernetes AI Conformance v1.35
        checklist with PASS, FAIL or SKIP (a requirement no check of this collection shows is SKIP, saying so),
        C(README.md) (the table) and C(requirements.json) (the checklist's id, status, evidence, notes).
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.controller_action
attributes:
  check_mode:
    support: none
    description: Writes in check mode too - the bundle attests what a check-mode run found.
  diff_mode:
    support: none
    description: No diff is shown; the files written are listed in RV(written).
seealso:
  - module: gpu_tray.cluster.verify_evidence
  - module: gpu_tray.cluster.write_evidence
'''

EXAMPLES = r'''
- name: Attest the run's evidence, signed with the site's key
  gpu_tray.cluster.evidence_bundle:
    dir: /var/lib/gpu-tray-report/validation
    recipe: "{{ __stack_plan }}"
    pods: "{{ pods.resources }}"
    signing_key: /etc/gpu-tray/evidence-key.pem
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
dest:
  description: The bundle's directory (absolute).
  type: str
  returned: always
files:
  description: The bundle's files, relative to RV(dest).
  type: list
  elements: str
  returned: always
  sample: [attestation.intoto.jsonl, bom.cdx.json, ctrf/trays.json, manifest.json, recipe.yaml, statement.intoto.json]
written:
  description: Files whose content changed and were written.
  type: list
  elements: str
  returned: always
removed:
  description: Files of an earlier bundle that this one does not have, removed.
  type: list
  elements: str
  returned: always
signed:
  description: Whether the envelope carries a signature.
  type: bool
  returned: always
cncf_submission:
  description: The directory of the CNCF submission, or null when there was no conformance phase or it is off.
  type: str
  returned: always
recipe_digest:
  description: The recipe digest the Statement records (hex).
  type: str
  returned: always
msg:
  description: Where the bundle was written and whether it is signed.
  type: str
  returned: always
'''
