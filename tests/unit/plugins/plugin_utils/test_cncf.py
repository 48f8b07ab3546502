# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The CNCF AI conformance submission from the conformance phase's CTRF (plugin_utils/cncf.py; issue 46 item 6):
per requirement of the v1.35 checklist PASS, FAIL or SKIP, a Markdown file each, the checklist's fields."""

import json

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import cncf, evidence

META = {'recipe': 'vr200-rke2-ubuntu-inference', 'recipe_digest': 'ab' * 32}


def conformance_ctrf():
    checks = [record('gpu-operator-health', 'passed', 'the GPU Operator runs in gpu-operator.'),
              record('dra-support', 'passed', 'resource.k8s.io/v1 is served.'),
              record('pod-autoscaling', 'failed', 'v1beta1.external.metrics.k8s.io is not available.'),
              record('inference-gateway', 'skipped', 'not in this recipe.'),
              record('secure-accelerator-access', 'warning', 'a pod holds a GPU without a request.')]
    return json.dumps(evidence.ctrf({'name': 'conformance', 'checks': checks}, META)).encode('utf-8')


def test_every_requirement_of_the_checklist_is_judged_from_the_checks():
    judged = dict((e['id'], e) for e in cncf.judge(cncf.ctrf_tests(conformance_ctrf())))
    assert len(judged) == 12 and sum(1 for e in judged.values() if e['level'] == 'MUST') == 9
    assert judged['dra_support']['result'] == 'PASS'
    assert judged['accelerator_metrics']['result'] == 'PASS' and 'DCGM' in judged['accelerator_metrics']['covers']
    assert judged['pod_autoscaling']['result'] == 'FAIL'
    assert judged['pod_autoscaling']['why'] == 'v1beta1.external.metrics.k8s.io is not available.'
    assert judged['ai_inference']['result'] == 'SKIP' and judged['ai_inference']['why'] == 'not in this recipe.'
    assert judged['secure_accelerator_access']['result'] == 'PASS'            # a warning passes in CTRF
    assert judged['ai_service_metrics']['result'] == 'SKIP' and 'did not run' in judged['ai_service_metrics']['why']
    for ident in ('gang_scheduling', 'robust_controller', 'gpu_sharing', 'virtualized_accelerator',
                  'cluster_autoscaling'):
        assert judged[ident]['result'] == 'SKIP' and 'has no check for this requirement' in judged[ident]['why']


def test_the_files_are_a_markdown_per_requirement_an_index_and_the_checklist_fields():
    out = cncf.files(conformance_ctrf(), META)
    assert sorted(out) == sorted(['%s.md' % r[0] for r in cncf.REQUIREMENTS] + ['README.md', 'requirements.json'])
    assert out['pod_autoscaling.md'].startswith('# pod_autoscaling: FAIL\n')
    assert '| pod-autoscaling | FAILED | v1beta1.external.metrics.k8s.io is not available. |' in out['pod_autoscaling.md']
    assert 'vr200-rke2-ubuntu-inference (digest %s)' % META['recipe_digest'] in out['dra_support.md']
    assert '| [dra_support](dra_support.md) | MUST | PASS |' in out['README.md']
    checklist = dict((e['id'], e) for e in json.loads(out['requirements.json']))
    assert checklist['dra_support'] == {'id': 'dra_support', 'status': 'Implemented', 'evidence': ['dra_support.md'],
                                        'notes': ''}
    assert checklist['pod_autoscaling']['status'] == 'Not Implemented'
    assert checklist['gang_scheduling']['status'] == '' and checklist['gang_scheduling']['notes']
