# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CNCF Kubernetes AI Conformance submission from the conformance phase's CTRF (issue 46 item 6), as AICR's
``--cncf-submission`` writes it: one Markdown file per requirement with PASS, SKIP or FAIL, and the checklist's
fields (id, status, evidence, notes) for a PRODUCT.yaml. The requirements are the v1.35 checklist (12: 9 MUST,
3 SHOULD); each maps to the conformance checks of this collection that show it, or to none (SKIP, saying so).
Pure functions."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

VERSION = 'v1.35'
# (id, category, level, what must hold, the conformance checks that show it, what the checks cover of it)
REQUIREMENTS = (
    ('dra_support', 'Accelerators', 'MUST', 'DRA APIs usable for fine-grained device requests',
     ('dra-support',), ''),
    ('driver_runtime_management', 'Accelerators', 'SHOULD', 'a verifiable way to know that compatible drivers and '
     'container-runtime configuration are installed on accelerator nodes', ('gpu-operator-health',),
     'the GPU Operator\'s ClusterPolicy ready (driver and container toolkit state), not a per-node version check'),
    ('gpu_sharing', 'Accelerators', 'SHOULD', 'at least one static sharing strategy (hardware partitions or '
     'time-slicing)', (), ''),
    ('virtualized_accelerator', 'Accelerators', 'SHOULD', 'vGPU-style devices exposed and managed consistently with '
     'fractional GPUs', (), ''),
    ('ai_inference', 'Networking', 'MUST', 'Gateway API with an implementation for inference traffic',
     ('inference-gateway',), ''),
    ('gang_scheduling', 'Scheduling & Orchestration', 'MUST', 'at least one all-or-nothing scheduler installs and '
     'works', (), ''),
    ('cluster_autoscaling', 'Scheduling & Orchestration', 'MUST', 'node groups with a given accelerator scale on '
     'pending pods that request it (if the platform autoscales nodes)', (), ''),
    ('pod_autoscaling', 'Scheduling & Orchestration', 'MUST', 'HPA works for accelerator pods, including on custom '
     'AI/ML metrics', ('pod-autoscaling',), ''),
    ('accelerator_metrics', 'Observability', 'MUST', 'per-accelerator utilization and memory via a machine-readable '
     'endpoint', ('gpu-operator-health',), 'the DCGM exporter DaemonSet rolled out, not a scrape of its endpoint'),
    ('ai_service_metrics', 'Observability', 'MUST', 'a monitoring system that discovers and scrapes workloads '
     'exposing Prometheus metrics', ('ai-service-metrics',), ''),
    ('secure_accelerator_access', 'Security', 'MUST', 'accelerator access only through the device plugin or DRA and '
     'the runtime', ('secure-accelerator-access',), ''),
    ('robust_controller', 'Operator Support', 'MUST', 'one complex AI operator with a CRD installs, its webhooks '
     'work, its custom resources reconcile', (), ''),
)
STATUS = {'passed': 'PASS', 'failed': 'FAIL', 'skipped': 'SKIP'}
CHECKLIST = {'PASS': 'Implemented', 'FAIL': 'Not Implemented'}


def ctrf_tests(data):
    """{test name: test} of a CTRF report (bytes or dict)."""
    report = json.loads(data.decode('utf-8')) if isinstance(data, bytes) else data
    return dict((test['name'], test) for test in report['results']['tests'])


def judge(tests):
    """Per requirement: ``{id, category, level, requirement, result (PASS, FAIL, SKIP), checks [{name, status,
    message}], why, covers}``. FAIL when a check of it failed; PASS when every check of it that ran passed (a warning
    is passed in CTRF); SKIP when it has no check here or its checks did not run (not in this recipe)."""
    out = []
    for ident, category, level, text, names, covers in REQUIREMENTS:
        found = [dict(name=name, status=tests[name]['status'], message=tests[name].get('message', ''))
                 for name in names if name in tests]
        ran = [check for check in found if check['status'] != 'skipped']
        if not names:
            result, why = 'SKIP', 'gpu_tray.cluster has no check for this requirement: show it with the platform\'s ' \
                                  'own evidence'
        elif not ran:
            result, why = 'SKIP', ('%s did not run (not among the recipe\'s conformance checks)' % ', '.join(names)
                                   if not found else '; '.join(c['message'] for c in found))
        elif any(check['status'] == 'failed' for check in ran):
            result, why = 'FAIL', '; '.join(c['message'] for c in ran if c['status'] == 'failed')
        else:
            result, why = 'PASS', '; '.join(c['message'] for c in ran)
        out.append(dict(id=ident, category=category, level=level, requirement=text, result=result, checks=found,
                        why=why, covers=covers))
    return out


def markdown(entry, meta):
    """One requirement's Markdown file."""
    lines = ['# %s: %s' % (entry['id'], entry['result']), '',
             '- Checklist: CNCF Kubernetes AI Conformance %s, %s, %s' % (VERSION, entry['category'], entry['level']),
             '- Requirement: %s' % entry['requirement'],
             '- Result: **%s** - %s' % (entry['result'], entry['why'].replace('\n', ' ')),
             '- Recipe: %s (digest %s)' % (meta.get('recipe') or '-', meta.get('recipe_digest') or '-'),
             '- Evidence: `ctrf/conformance.json` of the validation (attested in `summary-bundle/`)']
    if entry['covers']:
        lines.append('- What the check covers: %s' % entry['covers'])
    if entry['checks']:
        lines += ['', '| Check | Status | Message |', '|---|---|---|']
        lines += ['| %s | %s | %s |' % (c['name'], c['status'].upper(), c['message'].replace('|', '\\|').replace('\n', ' '))
                  for c in entry['checks']]
    return '\n'.join(lines) + '\n'


def files(conformance_ctrf, meta=None):
    """{relative path: text}: ``<id>.md`` per requirement, ``README.md`` (the table of results) and
    ``requirements.json`` (the checklist's fields per requirement: id, status - Implemented for PASS, Not Implemented
    for FAIL, empty for SKIP -, evidence, notes)."""
    meta = meta or {}
    judged = judge(ctrf_tests(conformance_ctrf))
    out = dict(('%s.md' % entry['id'], markdown(entry, meta)) for entry in judged)
    rows = ['# CNCF Kubernetes AI Conformance %s: %s' % (VERSION, meta.get('recipe') or 'cluster'), '',
            '| Requirement | Level | Result |', '|---|---|---|']
    rows += ['| [%s](%s.md) | %s | %s |' % (e['id'], e['id'], e['level'], e['result']) for e in judged]
    out['README.md'] = '\n'.join(rows) + '\n'
    # a SKIP has no status: this collection did not show it either way (the submitter fills it in, notes say why)
    checklist = [dict(id=e['id'], status=CHECKLIST.get(e['result'], ''), evidence=['%s.md' % e['id']],
                      notes=e['why'] if e['result'] == 'SKIP' else e['covers']) for e in judged]
    out['requirements.json'] = json.dumps(checklist, indent=2, sort_keys=True) + '\n'
    return out
