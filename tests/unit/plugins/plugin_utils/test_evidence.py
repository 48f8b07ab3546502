# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Validation evidence (plugin_utils/evidence.py, filter validation_evidence): CTRF, JUnit, Markdown, HTML."""

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.validation_evidence import FilterModule, validation_evidence
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import evidence

META = {'recipe': 'vr200-rke2-ubuntu-training', 'recipe_digest': 'sha256:1111', 'cluster': 'https://198.18.0.1:6443',
        'generated': '2026-12-03T00:40:00Z'}
PREFLIGHT_RESULT = {  # a registered cluster_preflight result
    'changed': False, 'failed': True, 'msg': '...',
    'checks': [
        {'name': 'server-version', 'status': 'failed', 'found': 'v1.20.2', 'expected': '>= 1.34.1',
         'message': 'Kubernetes v1.20.2 is outside >= 1.34.1 for vr200-rke2-ubuntu-training'},
        {'name': 'service', 'status': 'passed', 'message': 'the cluster is rke2'},
        {'name': 'control-plane-gpu-labels', 'status': 'warning', 'message': 'cp01 carries <gpu> labels & more'},
        {'name': 'load-balancer', 'status': 'skipped', 'message': 'only the inference recipes need one'},
    ]}
NCCL_RESULT = {'changed': False, 'failed': True, 'passed': False, 'check_name': 'nccl-all-reduce-bw-nvls',
               'msg': 'busbw 420 GB/s is below 540 GB/s'}
VERSION_RESULT = {'changed': False, 'passed': True, 'component': 'gpu-operator', 'object': 'Deployment gpu-operator/gpu-operator',
                  'msg': 'gpu-operator is v26.7.0'}


def phases():
    return [
        {'name': 'readiness', 'checks': [PREFLIGHT_RESULT], 'start': 1000, 'stop': 3500},
        {'name': 'deployment', 'checks': [VERSION_RESULT, {'name': 'dra', 'status': 'passed', 'message': 'ok',
                                                           'duration': 1250}], 'start': 3500, 'stop': 5000},
        {'name': 'performance', 'checks': [NCCL_RESULT, {'skipped': True, 'skip_reason': 'no NCCL log given',
                                                         'check_name': 'nccl-all-reduce-bw-net'}]},
        {'name': 'conformance', 'checks': []},
    ]


def test_ctrf_per_phase():
    report = evidence.ctrf(phases()[0], META)
    assert report['reportFormat'] == 'CTRF'
    results = report['results']
    assert results['tool']['name'] == 'gpu_tray.cluster'
    assert results['summary'] == {'tests': 4, 'passed': 2, 'failed': 1, 'skipped': 1, 'pending': 0, 'other': 0,
                                  'start': 1000, 'stop': 3500}
    by_name = dict((test['name'], test) for test in results['tests'])
    assert by_name['server-version']['status'] == 'failed' and by_name['server-version']['suite'] == ['readiness']
    assert by_name['control-plane-gpu-labels']['status'] == 'passed'
    assert by_name['control-plane-gpu-labels']['extra'] == {'warning': True}       # CTRF has no warning status
    assert results['environment'] == {'recipe': 'vr200-rke2-ubuntu-training', 'recipe_digest': 'sha256:1111',
                                      'cluster': 'https://198.18.0.1:6443'}
    json.dumps(report)


def test_registered_results_become_checks():
    checks = evidence.checks_from_result(NCCL_RESULT)
    # the one record shape, from a module that returns none
    assert checks == [{'name': 'nccl-all-reduce-bw-nvls', 'status': 'failed', 'message': 'busbw 420 GB/s is below 540 GB/s',
                       'fix': '', 'details': [], 'data': {}, 'object': ''}]
    assert evidence.checks_from_result(VERSION_RESULT)[0]['name'] == 'gpu-operator'
    assert evidence.checks_from_result(VERSION_RESULT)[0]['status'] == 'passed'
    warned = dict(VERSION_RESULT, warnings=[{'event': {}, 'msg': 'DRA 0.5.0 with OwnerReferences...'}])
    assert evidence.checks_from_result(warned)[0]['status'] == 'warning'
    assert evidence.checks_from_result({'skipped': True, 'check_name': 'x'})[0]['status'] == 'skipped'
    with pytest.raises(ValueError, match='needs a check_name'):
        evidence.checks_from_result({'changed': False, 'msg': 'anonymous'})
    with pytest.raises(ValueError, match="status 'ok'"):
        evidence.normalise_check({'name': 'a', 'status': 'ok'})


def test_junit_xml():
    root = ET.fromstring(evidence.junit(phases(), META).split('\n', 1)[1])
    assert root.tag == 'testsuites' and root.get('tests') == '8' and root.get('failures') == '2' and root.get('skipped') == '2'
    suites = dict((suite.get('name'), suite) for suite in root)
    assert list(suites) == ['readiness', 'deployment', 'performance', 'conformance']
    assert suites['readiness'].get('time') == '2.500' and suites['conformance'].get('tests') == '0'
    failure = suites['readiness'].find("testcase[@name='server-version']/failure")
    assert failure.get('message').startswith('Kubernetes v1.20.2 is outside')
    warning = suites['readiness'].find("testcase[@name='control-plane-gpu-labels']/system-out")
    assert warning.text == 'WARNING: cp01 carries <gpu> labels & more'          # escaped by ElementTree, parsed back
    assert suites['deployment'].find("testcase[@name='dra']").get('time') == '1.250'
    assert suites['performance'].find("testcase[@name='nccl-all-reduce-bw-net']/skipped") is not None


def test_markdown_failures_first_and_stale():
    text = evidence.markdown(phases(), META)
    assert text.startswith('# Validation report: vr200-rke2-ubuntu-training')
    assert '| readiness | FAILED | 1 | 1 | 1 | 1 |' in text and '| conformance | SKIPPED | 0 | 0 | 0 | 0 |' in text
    assert '| **all** | FAILED | 3 | 2 | 1 | 2 |' in text and '**Result: FAILED** (2 of 4 phases failed)' in text
    assert text.index('### Failed checks') < text.index('### Warnings') < text.index('## readiness: FAILED')
    assert '| **server-version** | readiness | - | Kubernetes v1.20.2 is outside >= 1.34.1' in text
    readiness = text.split('## readiness: FAILED')[1].split('##')[0]
    rows = [line.split('|')[1].strip() for line in readiness.splitlines() if line.startswith('| ') and 'Check' not in line]
    # failed, warning, passed, then skipped: a skip ranks last (issue 53, item 6)
    assert rows == ['server-version', 'control-plane-gpu-labels', 'service', 'load-balancer']
    assert 'STALE' not in text
    stale = evidence.markdown(phases(), dict(META, recorded_digest='sha256:0000'))
    assert 'STALE: this evidence was recorded for recipe digest sha256:0000, the recipe is now sha256:1111' in stale
    assert evidence.stale_note('sha256:1', 'sha256:1') == '' and evidence.stale_note(None, 'sha256:1') == ''


class _Text(HTMLParser):
    def __init__(self):
        HTMLParser.__init__(self)
        self.text, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_and_escaped():
    page = evidence.html_report(phases(), dict(META, recorded_digest='sha256:0000'))
    parser = _Text()
    parser.feed(page)
    text = ' '.join(parser.text)
    assert 'Kubernetes v1.20.2 is outside >= 1.34.1' in text and 'cp01 carries <gpu> labels & more' in text
    assert 'STALE' in text
    assert '<gpu>' not in page and '&lt;gpu&gt; labels &amp; more' in page
    tags = [tag for tag, _attrs in parser.tags]
    assert 'script' not in tags and 'link' not in tags and 'img' not in tags
    assert not [attrs for _tag, attrs in parser.tags if 'src' in attrs or 'href' in attrs]
    summary, details = page.split('<section id="summary">')[1].split('</section>')

    def rows(fragment):
        found = _Text()
        found.feed(fragment)
        return [attrs.get('class') for tag, attrs in found.tags if tag == 'tr' and attrs.get('class')]

    assert page.index('<section id="summary">') < page.index('<h2>readiness: FAILED</h2>')
    assert rows(summary) == ['failed', 'passed', 'failed', 'skipped',            # the phases
                             'failed', 'failed',                                 # failed checks: readiness, performance
                             'warning',                                          # warnings
                             'failed', 'skipped']                                # the NCCL table
    assert rows(details)[:4] == ['failed', 'warning', 'passed', 'skipped']       # readiness, failures first, skips last
    assert '<li><b>conformance</b>: No checks ran in this phase.</li>' in summary


def test_evidence_files_and_filter():
    assert FilterModule().filters() == {'validation_evidence': validation_evidence}
    files = validation_evidence(phases(), META)
    paths = [item['path'] for item in files]
    assert paths == ['ctrf/readiness.json', 'ctrf/deployment.json', 'ctrf/performance.json', 'ctrf/conformance.json',
                     'junit.xml', 'report.md', 'report.html', 'summary.json']
    summary = json.loads(files[-1]['content'])
    assert summary == {'recipe': 'vr200-rke2-ubuntu-training', 'recipe_digest': 'sha256:1111',
                       'generated': '2026-12-03T00:40:00Z', 'result': 'failed',
                       'phases': {'readiness': 'failed', 'deployment': 'passed', 'performance': 'failed',
                                  'conformance': 'skipped'}}
    assert json.loads(files[2]['content'])['results']['summary']['failed'] == 1
    with pytest.raises(AnsibleFilterError, match="unknown phase 'smoke'"):
        validation_evidence([{'name': 'smoke', 'checks': []}])
    with pytest.raises(AnsibleFilterError, match='must be a list'):
        validation_evidence({'name': 'readiness'})
    with pytest.raises(AnsibleFilterError, match='a check must be a dict'):
        validation_evidence([{'name': 'readiness', 'checks': ['x']}])


def test_registered_results_name_and_status_from_every_field():
    by = evidence.checks_from_result
    invocation = {'invocation': {'module_args': {'component': 'network-operator'}}, 'msg': 'ok'}
    assert by(invocation)[0]['name'] == 'network-operator'
    assert by({'component': 'gpu-operator', 'check_name': 'versions', 'msg': 'x'})[0]['name'] == 'versions'
    assert by({'component': 'gpu-operator', 'msg': 'x'}, name='given')[0]['name'] == 'given'
    assert by({'component': 'gpu-operator'})[0] == {'name': 'gpu-operator', 'status': 'passed', 'message': 'passed',
                                                    'fix': '', 'details': [], 'data': {}, 'object': ''}
    assert by({'check_name': 'n', 'failed': True})[0]['message'] == 'failed'
    assert by({'check_name': 'n', 'passed': False, 'msg': 'low'})[0]['status'] == 'failed'
    assert by({'check_name': 'n', 'passed': True, 'failed': False})[0]['status'] == 'passed'
    warned = by({'check_name': 'n', 'msg': 'done', 'warnings': [{'msg': 'a dict warning'}, 'a text warning']})[0]
    assert warned['status'] == 'warning'
    assert warned['message'] == 'done (warnings: a dict warning; a text warning)'
    assert by({'check_name': 'n', 'warnings': ['w']})[0]['message'] == ' (warnings: w)'
    assert by({'check_name': 'n', 'skipped': True, 'checks': [{'name': 'x', 'status': 'passed'}]})[0]['status'] == \
        'skipped'
    assert by({'check_name': 'n', 'skipped': True, 'skip_reason': 'no NCCL log given'})[0]['message'] == \
        'no NCCL log given'
    assert by({'check_name': 'n', 'skipped': True})[0]['message'] == 'skipped'


def test_phase_result_counts_the_failures_it_does_not_show():
    checks = [{'name': 'c%d' % i, 'status': 'failed', 'message': 'bad %d' % i} for i in range(5)]
    result = evidence.phase_result({'name': 'trays', 'checks': checks}, limit=2)
    assert result == {'status': 'failed', 'findings': 'c0: bad 0; c1: bad 1; 3 more'}
    assert evidence.phase_result({'name': 'trays', 'checks': checks[:2]}, limit=2)['findings'] == \
        'c0: bad 0; c1: bad 1'


def test_reports_list_failures_before_warnings_and_every_phase_after_an_empty_one():
    meta = dict(META)
    phases = [{'name': 'readiness', 'checks': []},
              {'name': 'deployment', 'checks': [{'name': 'warned', 'status': 'warning', 'message': 'w'},
                                                {'name': 'broken', 'status': 'failed', 'message': 'f'}]}]
    md = evidence.markdown(phases, meta)
    assert '- Cluster: `https://198.18.0.1:6443`' in md and '- Recipe digest: `sha256:1111`' in md
    assert '- Generated: `2026-12-03T00:40:00Z`' in md
    assert md.count('No checks ran in this phase.') == 2        # the skipped phases of the summary, the phase
    assert '### Skipped phases\n\n- **readiness**: No checks ran in this phase.\n' in md
    assert '## deployment: FAILED' in md and md.index('| broken |') < md.index('| warned |')
    page = evidence.html_report(phases, meta)
    assert '<li>Cluster: <code>https://198.18.0.1:6443</code></li>' in page
    assert '<li>Generated: <code>2026-12-03T00:40:00Z</code></li>' in page
    assert page.count('<p>No checks ran in this phase.</p>') == 1
    details = page.split('</section>')[1]
    assert '<h2>deployment: FAILED</h2>' in details and details.index('<td>broken</td>') < details.index('<td>warned</td>')
    plain = evidence.markdown(phases, {'recipe': 'r'})
    assert '- Cluster' not in plain and '- Generated' not in plain


def test_nccl_rows_say_what_was_measured():
    judged = {'changed': False, 'passed': True, 'msg': 'busbw 744.71 GB/s meets the floor', 'busbw': 744.71,
              'min_busbw': 600.0, 'threshold': 540.0, 'ranks': 8, 'transport': 'IB',
              'hosts': ['tray01', 'tray01', 'tray02', 'tray02'], 'item': {'path': '/logs/nvls.log', 'variant': 'nvls'},
              'check_name': 'nccl-all-reduce-bw-nvls'}
    check = evidence.checks_from_result(judged)[0]
    assert check['data'] == {'busbw': 744.71, 'min_busbw': 600.0, 'threshold': 540.0, 'transport': 'IB',
                             'hosts': ['tray01', 'tray01', 'tray02', 'tray02'], 'ranks': 8, 'trays': 2,
                             'gpus_per_tray': None, 'variant': 'nvls'}
    assert evidence.nccl_row(check) == {'trays': '2', 'ranks': '8', 'busbw': '744.71 GB/s',
                                        'floor': '540 GB/s (600 GB/s less 10%)'}
    exact = evidence.nccl_row({'data': {'busbw': 50.0, 'min_busbw': 45.0, 'threshold': 45.0}})
    assert exact['floor'] == '45 GB/s' and exact['trays'] == '-'
    phases = [{'name': 'performance', 'checks': [judged, {'name': 'nccl-all-reduce-bw-net', 'status': 'skipped',
                                                          'message': 'no NCCL log given'}]}]
    md = evidence.markdown(phases, META)
    assert '| nccl-all-reduce-bw-nvls | PASSED | 2 | 8 | 744.71 GB/s | 540 GB/s (600 GB/s less 10%) |' in md
    assert '| nccl-all-reduce-bw-net | SKIPPED | - | - | - | - |' in md
    assert 'Measured: 2 trays, 8 ranks, bus bandwidth 744.71 GB/s, floor 540 GB/s (600 GB/s less 10%).' in md
    page = evidence.html_report(phases, META)
    assert ('<tr class="passed"><td>nccl-all-reduce-bw-nvls</td><td>PASSED</td><td>2</td><td>8</td>'
            '<td>744.71 GB/s</td><td>540 GB/s (600 GB/s less 10%)</td></tr>') in page.split('</section>', maxsplit=1)[0]


def test_grouping_names_and_ranges():
    natural = sorted(['tray10', 'tray9', 'tray100', 'tray1'], key=evidence.natural_key)
    assert natural == ['tray1', 'tray9', 'tray10', 'tray100']
    check = evidence.normalise_check({'name': 'tray02/pkeys', 'status': 'failed', 'object': 'tray02',
                                      'message': 'tray02: 16 VFs are not in P_Key 0x8001.'})
    assert evidence.check_group(check) == 'pkeys' and evidence.finding(check) == '16 VFs are not in P_Key 0x8001.'
    plain = evidence.normalise_check({'name': 'multus', 'status': 'passed', 'object': 'DaemonSet kube-system/multus'})
    assert evidence.check_group(plain) == 'multus'
    assert evidence.name_ranges(['tray%03d' % i for i in range(1, 145) if i not in (5, 17, 120)]) == \
        'tray001-tray004, tray006-tray016, tray018-tray119, tray121-tray144'
    assert evidence.name_ranges(['w-%d' % i for i in range(144)]) == 'w-0-w-143'
    assert evidence.name_ranges(['tray2', 'tray1', 'tray09', 'tray10', 'a', 'x-1', 'x-3']) == \
        'a, tray1, tray2, tray09, tray10, x-1, x-3'


def test_a_check_failing_on_several_objects_with_different_findings_is_one_group():
    checks = [{'name': '%s/sriov-vfs' % tray, 'object': tray, 'status': 'failed', 'message': message, 'fix': 'same fix'}
              for tray, message in (('tray10', '8 VFs'), ('tray2', '0 VFs'), ('tray9', '8 VFs'))]
    phase = evidence._phase({'name': 'trays', 'checks': checks + [{'name': 'tray1/sriov-vfs', 'object': 'tray1',
                                                                   'status': 'passed', 'message': 'ok'}]})
    (group,) = evidence.status_groups([phase], 'failed')
    assert group['objects'] == ['tray2', 'tray9', 'tray10']
    assert group['findings'] == [{'message': '0 VFs', 'fix': 'same fix', 'objects': ['tray2']},
                                 {'message': '8 VFs', 'fix': 'same fix', 'objects': ['tray9', 'tray10']}]
    md = evidence.markdown([phase], META)
    assert '| **sriov-vfs** | trays | 1 tray: tray2 | 0 VFs | same fix |' in md
    assert '|  |  | 2 trays: tray9, tray10 | 8 VFs | (as above) |' in md
    assert md.count('same fix') == 1 + 3                # once in the summary, then on every failed row of the phase
    assert '| sriov-vfs | PASSED | tray1 | ok |  |' in md    # a single passed object is a row of its own
