# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render validation evidence on the controller (pure functions in plugin_utils/evidence.py)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
name: validation_evidence
short_description: The evidence files of a validation run - CTRF per phase, JUnit XML, Markdown and HTML reports
version_added: 0.1.0
description:
  - Turns the results of the validation phases into the files of an evidence directory, as a list of
    C({path, content}) for M(gpu_tray.cluster.write_evidence) -
    C(ctrf/<phase>.json) (CTRF, one per phase), C(junit.xml) (one testsuite per phase), C(report.md) and
    C(report.html) (a summary first - the phases with their counts, the failed checks and the warnings grouped by
    check with the trays they hold for, the skipped phases and why, what the NCCL runs measured - then the checks
    of each phase grouped by check, failures first, the passed trays of a check in one row), and C(summary.json) (recipe,
    recipe digest, result per phase).
  - A phase's C(checks) may hold check dicts (C(name), C(status) passed/failed/warning/skipped, C(message),
    optional C(fix), C(duration) in ms, C(object), C(details) - one text per finding), registered results of M(gpu_tray.cluster.cluster_preflight)
    (their C(checks) are taken), or any other registered module result with a C(check_name) key (failed when it
    failed or returned C(passed=false), skipped when skipped, warning when it warned).
  - With C(recorded_digest) in O(meta) different from its C(recipe_digest), the reports say the evidence is stale.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
positional: meta
options:
  _input:
    description: The phases, each C({name, checks, start, stop}); C(name) is readiness, deployment, trays, conformance or
      performance, C(start)/C(stop) in epoch milliseconds.
    type: list
    elements: dict
    required: true
  meta:
    description:
      - C(recipe), C(recipe_digest), C(cluster), C(generated) (a timestamp), C(recorded_digest) (the digest
        of earlier evidence), C(version).
      - C(drift) (P(gpu_tray.cluster.validation_drift#filter)'s C(report)) - the reports open with what changed
        since the last passing run.
      - "C(racks) (C({tray: rack})) - C(report.html) opens with a rack map, one cell per tray colored by its worst
        status across the phases, each linking to its first row."
    type: dict
    default: {}
'''

EXAMPLES = r'''
- name: Write the evidence directory
  gpu_tray.cluster.write_evidence:
    dest: "{{ validate_evidence_dir }}"
    files: "{{ phases | gpu_tray.cluster.validation_evidence({'recipe': recipe, 'recipe_digest': digest}) }}"
  run_once: true
  delegate_to: localhost
'''

RETURN = r'''
  _value:
    description: The files, each C({path, content}).
    type: list
    elements: dict
'''

from ansible.errors import AnsibleFilterError

# the collection's own code is imported inside the functions (docs/performance.md "Filter plugins and the workers")


def validation_evidence(phases, meta=None):
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.evidence import evidence_files
    if not isinstance(phases, list):
        raise AnsibleFilterError('validation_evidence: the input must be a list of phases, got %s' % type(phases).__name__)
    if meta is not None and not isinstance(meta, dict):
        raise AnsibleFilterError('validation_evidence: meta must be a dict, got %s' % type(meta).__name__)
    try:
        return evidence_files(phases, meta or {})
    except (ValueError, TypeError, AttributeError) as exc:
        raise AnsibleFilterError('validation_evidence: %s' % exc)


class FilterModule(object):
    def filters(self):
        return {'validation_evidence': validation_evidence}
