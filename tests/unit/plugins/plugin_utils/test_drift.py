# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift (plugin_utils/drift.py, filter validation_drift; issue 46 item 3): fixture trays read by the real tray_state
module, a second read after a change on one tray (one rail's VF count, a VF's P_Key), compared with the last passing
run: the report opens with the change, naming the tray and the value before and after, before what is wrong."""

import json

import pytest

from ansible_collections.gpu_tray.cluster.plugins.filter.validation_drift import validation_drift
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import drift, evidence
from test_evidence_report import META, rack_phases
from test_stack_plan import plan
from test_tray_validation import build, read, tools  # noqa: F401  # pylint: disable=unused-import

RECIPE = 'gb200-nvke-ubuntu-training'


def tray_read(run_module, tools, tmp_path, name, **kwargs):  # noqa: F811
    directory = tmp_path / name
    directory.mkdir()
    state, _path = read(run_module, build(directory, **kwargs), tools, directory)
    return state


def pods(image):
    return [{'metadata': {'namespace': 'gpu-operator'}, 'spec': {'containers': [{'name': 'o', 'image': image}]}}]


@pytest.fixture
def reads(run_module, tools, tmp_path):  # noqa: F811
    good = tray_read(run_module, tools, tmp_path, 'good')
    changed = tray_read(run_module, tools, tmp_path, 'changed', num_vfs=2, vf_pkeys=('0x7fff',), limited_rail='mlx5_1')
    fewer = tray_read(run_module, tools, tmp_path, 'fewer', num_vfs=1)
    return {'good': good, 'changed': changed, 'fewer': fewer}


def test_a_tray_read_gives_the_values_a_later_run_compares(reads):
    values = drift.tray_values(reads['good'])
    assert values['mlx5_4 VFs'] == 2 and values['mlx5_0 port 1 P_Keys'] == '0xffff'
    assert values['kernel'] and 'BOOT_IMAGE' not in values.get('kernel arguments', '')
    assert drift.tray_values(None) is None and drift.tray_values({'failed': True}) is None


def test_a_vf_pkey_and_a_vf_count_changed_on_one_tray_are_named_before_and_after(reads):
    the_plan = plan(RECIPE)
    first = validation_drift({'tray01': reads['good'], 'tray02': reads['good']}, the_plan, pods('op:1'), None,
                             '2026-12-01T00:00:00Z', 'passed')
    assert first['changes'] == [] and first['report']['summary'] == (
        'No earlier passing run to compare with: this run is the first baseline.')
    baseline = dict((f['path'], f['json']) for f in first['files'])['last-pass.json']
    # the P_Key of mlx5_1's VFs changed on tray02 (to the limited default partition)
    second = validation_drift({'tray01': reads['good'], 'tray02': reads['changed']}, the_plan, pods('op:1'), baseline,
                              '2026-12-02T00:00:00Z', 'failed')
    changed = list(second['changes'])
    assert changed and all(c['object'] == 'tray02' and c['scope'] == 'tray' for c in changed)
    pkey_rows = [c for c in changed if c['what'].endswith('P_Keys')]
    assert pkey_rows and all((c['before'], c['after']) == ('0xffff', '0x7fff') for c in pkey_rows)
    assert second['report']['summary'].startswith('%d changes since the last passing run (2026-12-01T00:00:00Z) on '
                                                  '1 tray (tray02)' % len(changed))
    # a failed run is not the next baseline: the first run's values are carried
    carried = dict((f['path'], f['json']) for f in second['files'])
    assert carried['last-pass.json'] == baseline and carried['state.json']['result'] == 'failed'
    # one rail's VF count on tray01, and the operator's image, after that failed run: compared with the first run
    third = validation_drift({'tray01': reads['fewer'], 'tray02': reads['good']}, the_plan, pods('op:2'),
                             carried['last-pass.json'], '2026-12-03T00:00:00Z', 'passed')
    rows = dict(((r['where'], r['what']), (r['before'], r['after'])) for r in third['report']['rows'])
    assert rows[('tray01', 'mlx5_4 VFs')] == ('2', '1')
    assert rows[('gpu-operator', 'images')] == ('op:1', 'op:2')
    assert not any(where == 'tray02' for where, _what in rows)
    assert dict((f['path'], f['json']) for f in third['files'])['last-pass.json']['generated'] == '2026-12-03T00:00:00Z'


def test_the_same_change_on_many_trays_is_one_row_and_unread_trays_are_no_change(reads):
    the_plan = plan(RECIPE)
    trays = ['tray%03d' % n for n in range(1, 145)]
    before = drift.record(dict((t, drift.tray_values(reads['good'])) for t in trays), {}, 'then', 'passed')
    after_reads = dict((t, reads['fewer'] if t in ('tray005', 'tray006', 'tray007', 'tray100') else reads['good'])
                       for t in trays)
    after_reads['tray050'] = None                                            # not read this run
    result = drift.evaluate(after_reads, the_plan, None, before, 'now', 'failed')
    rows = [r for r in result['report']['rows'] if r['what'] == 'mlx5_4 VFs']
    assert rows == [{'scope': 'tray', 'what': 'mlx5_4 VFs', 'before': '2', 'after': '1',
                     'objects': ['tray005', 'tray006', 'tray007', 'tray100'],
                     'where': '4 trays: tray005-tray007, tray100'}]
    assert not any('tray050' in r['objects'] for r in result['report']['rows'])


def test_a_run_that_read_neither_trays_nor_pods_names_them_and_a_pass_keeps_their_baseline(reads):
    """A phase run alone (readiness: no tray read, the pods perhaps not either) compares what it has: the trays it did
    not read and the images are named as not compared, never as changes, and when it passes the baseline it carries
    forward keeps the earlier pass's values of them - so the next full run still compares every tray."""
    the_plan = plan(RECIPE)
    first = validation_drift({'tray01': reads['good'], 'tray02': reads['good']}, the_plan, pods('op:1'), None,
                             'then', 'passed')
    baseline = dict((f['path'], f['json']) for f in first['files'])['last-pass.json']
    alone = validation_drift({'tray01': None, 'tray02': None}, the_plan, None, baseline, 'now', 'passed')
    assert alone['changes'] == [], alone['changes']
    assert alone['report']['not_compared'] == {'trays': ['tray01', 'tray02'], 'images': True}
    assert alone['report']['summary'] == ('Nothing changed since the last passing run (then). Not compared: 2 trays '
                                          '(tray01, tray02) not read this run; the images (the cluster\'s pods were '
                                          'not read).')
    carried = dict((f['path'], f['json']) for f in alone['files'])['last-pass.json']
    assert carried['generated'] == 'now' and carried['trays'] == baseline['trays']
    assert carried['components']['gpu-operator']['images'] == baseline['components']['gpu-operator']['images'] != ''
    # the next full run against that baseline: one tray's VF count is a change, as it would be against the first run
    full = validation_drift({'tray01': reads['good'], 'tray02': reads['fewer']}, the_plan, pods('op:2'), carried,
                            'later', 'failed')
    against_first = validation_drift({'tray01': reads['good'], 'tray02': reads['fewer']}, the_plan, pods('op:2'),
                                     baseline, 'later', 'failed')
    assert full['changes'] == against_first['changes']
    assert {('tray02', 'mlx5_4 VFs'), ('gpu-operator', 'images')} <= {(c['object'], c['what']) for c in full['changes']}
    assert full['report']['not_compared'] == {'trays': [], 'images': False}
    assert 'Not compared' not in full['report']['summary']
    # no earlier pass and this run failed: it is no baseline either, and says so
    lone = validation_drift({'tray01': reads['good']}, the_plan, pods('op:1'), None, 'x', 'failed')
    assert lone['report']['summary'] == 'No earlier passing run to compare with (this run failed: it is no baseline).'
    assert 'last-pass.json' not in [f['path'] for f in lone['files']]
    # one tray unread of two, a failed run: named in the sentence; the baseline stays the earlier pass
    half = validation_drift({'tray01': reads['good'], 'tray02': None}, the_plan, pods('op:1'), baseline, 'x', 'failed')
    assert half['report']['summary'].endswith('Not compared: 1 tray (tray02) not read this run.')
    assert dict((f['path'], f['json']) for f in half['files'])['last-pass.json'] == baseline


def test_the_report_opens_with_the_drift_before_what_is_wrong(reads):
    the_plan = plan(RECIPE)
    baseline = drift.record({'tray042': drift.tray_values(reads['good'])}, {}, '2026-12-01T00:00:00Z', 'passed')
    result = drift.evaluate({'tray042': reads['fewer']}, the_plan, None, baseline, 'now', 'failed')
    meta = dict(META, drift=result['report'])
    report = evidence.markdown(rack_phases(), meta)
    assert report.index('## Changed since the last passing run') < report.index('## Summary') < \
        report.index('### Failed checks')
    assert '| tray042 | mlx5_4 VFs | 2 | 1 |' in report
    page = evidence.html_report(rack_phases(), meta)
    assert page.index('<section id="drift">') < page.index('<section id="summary">')
    assert '<td>tray042</td><td>mlx5_4 VFs</td><td>2</td><td>1</td>' in page
    files = dict((f['path'], f) for f in evidence.evidence_files(rack_phases(), META))
    assert 'Changed since' not in files['report.md']['content']               # no drift given: no section


def test_bad_input_is_named():
    from ansible.errors import AnsibleFilterError
    with pytest.raises(AnsibleFilterError, match='result must be passed or failed'):
        validation_drift({}, plan(RECIPE), None, None, 'now', 'maybe')
    with pytest.raises(AnsibleFilterError, match="expects the trays' reads as a dict"):
        validation_drift([], plan(RECIPE))
    assert json.dumps(validation_drift({}, plan(RECIPE), None, {'format': 0}, 'now', 'passed')['report'])


def _state(cmdline, devices):
    """A tray_state result as drift reads it: the kernel, the booted command line, the RDMA devices."""
    return {'ansible_facts': {'gpu_tray': {'kernel_release': '6.8.0-1021-nvidia-64k'},
                              'gpu_tray_rdma': {'devices': devices}},
            'cmdline': {'text': cmdline}}


PF = {'name': 'mlx5_4', 'kind': 'pf', 'sriov_numvfs': 16, 'ports': [{'port': 1, 'pkeys': ['0xffff']}]}
VF = {'name': 'mlx5_20', 'kind': 'vf', 'ports': [{'port': 1, 'pkeys': ['0xffff', '0x8001']}]}


def test_kernel_arguments_are_compared_in_their_order_and_a_value_that_disappeared_is_a_change():
    """Pins (issue 53 item 7): the same arguments in another order are another command line (the kernel applies a
    repeated parameter's last value), and a PF or a VF port gone since the last pass is a change to "none", not
    silence."""
    was = _state('BOOT_IMAGE=/vmlinuz iommu=pt hugepages=4 hugepages=8', [PF, VF])
    now = _state('BOOT_IMAGE=/vmlinuz iommu=pt hugepages=8 hugepages=4', [])
    before = drift.record({'tray01': drift.tray_values(was)}, {}, 'then', 'passed')
    after = drift.record({'tray01': drift.tray_values(now)}, {}, 'now', 'failed')
    found = dict((c['what'], (c['before'], c['after'])) for c in drift.changes(before, after))
    assert found == {'kernel arguments': ('iommu=pt hugepages=4 hugepages=8', 'iommu=pt hugepages=8 hugepages=4'),
                     'mlx5_4 VFs': ('16', 'none'), 'mlx5_4 port 1 P_Keys': ('0xffff', 'none'),
                     'mlx5_20 port 1 P_Keys': ('0xffff, 0x8001', 'none')}, found
