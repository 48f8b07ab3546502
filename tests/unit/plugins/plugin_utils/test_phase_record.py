# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The way out of every phase (plugin_utils/phase_record.py, issue 53): the reports byte for byte, the failures each
host ends with, the artifact (the one search for an earlier run is report_dir.newest's: test_report_dir.py, and the
action's find: tests/unit/plugins/action/test_phase_record_action.py).

The fixtures under fixtures/reports/ are the inputs of the two report templates the roles had
(roles/preflight/templates/summary.md.j2, roles/rolling_reboot/templates/rolling-reboot.md.j2), and each ``.md`` beside
its input is what that template wrote from it (rendered with ansible-core's template lookup before the templates went),
with three deliberate changes, reviewed: the trays that left the play before the rolling reboot listed in the play's
order (the template's ``difference`` filter gave them in a set's order, different from run to run), and the unread
trays' two lines of the preflight summary on two lines (the template ran them together, "tray03.Read failed").
The stop matrix (tests/cluster/test_stop_matrix.py) holds the real runs' files to golden/stop_matrix/."""

import json
import pathlib

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import phase_record

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / 'fixtures' / 'reports'
NAMES = sorted(p.name[:-len('.input.json')] for p in FIXTURES.glob('*.input.json'))


def _rendered(name):
    data = json.loads((FIXTURES / ('%s.input.json' % name)).read_text())
    if name.startswith('rolling-reboot'):
        given = data['vars']
        meta = {'check_mode': given['ansible_check_mode'], 'group_by': given['rolling_reboot_group_by'],
                'play_hosts': given['ansible_play_hosts_all'], 'hosts': given['__rolling_reboot_hosts']}
        if '__rolling_reboot_nodes' in given:
            meta['nodes_msg'] = given['__rolling_reboot_nodes'].get('msg', 'no answer')
        return phase_record.rolling_reboot_markdown(data['final'], meta)
    return phase_record.preflight_markdown(data['ansible_play_hosts_all'], dict(
        (host, values.get('preflight_report')) for host, values in data['hostvars'].items()))


def test_every_fixture_has_its_report():
    assert len(NAMES) >= 8 and all((FIXTURES / ('%s.md' % name)).is_file() for name in NAMES), NAMES


@pytest.mark.parametrize('name', NAMES)
def test_the_report_is_the_one_the_template_wrote(name):
    assert _rendered(name) == (FIXTURES / ('%s.md' % name)).read_text()


def _check(name, status, message='', fix='', details=()):
    return {'name': name, 'status': status, 'object': 't', 'message': message, 'fix': fix, 'details': list(details),
            'data': {}}


def test_preflight_fails_the_unread_trays_always_and_the_failed_ones_when_asked(tmp_path):
    unread = {'host': 'b', 'platform': 'p', 'passed': False, 'unreachable': True, 'failed_checks': ['tray_read'],
              'checks': [_check('tray_read', 'failed', 'b is unreachable: refused')]}
    failed = {'host': 'a', 'platform': 'p', 'passed': False, 'failed_checks': ['rails'],
              'checks': [_check('rails', 'failed', 'mlx5_3 is missing', 'Seat it.'), _check('os', 'passed')]}
    values = {'a': {'preflight_report': failed, '__preflight_evidence': {'path': 'a/preflight.json', 'json': {}}},
              'b': {'preflight_report': unread, '__preflight_evidence': {'path': 'b/preflight.json', 'json': unread}},
              'c': {}}
    out = phase_record.preflight(['a', 'b', 'c'], values, str(tmp_path))
    assert sorted(out['failures']) == ['a', 'b']
    assert out['failures']['b'] == 'b is unreachable: refused. Nothing was checked on it, nothing was changed. ' \
                                   'Summary: %s/preflight-summary.md' % tmp_path
    assert out['failures']['a'] == 'Preflight failed (rails); nothing was changed on the tray. rails: mlx5_3 is ' \
                                   'missing Details and the fix: %s/a/preflight.json' % tmp_path
    assert [f['path'] for f in out['files']] == ['a/preflight.json', 'b/preflight.json', 'preflight-summary.md']
    assert out['artifact']['failed_trays'] == ['a', 'b'] and out['artifact']['unreachable'] == ['b']
    # preflight_fail false: a tray whose checks failed goes on; one that was not read never does
    assert sorted(phase_record.preflight(['a', 'b'], values, str(tmp_path), fail=False)['failures']) == ['b']


def test_a_stack_run_fails_on_the_host_that_stopped_it_and_says_where():
    stopped = {'api': {'task': 'Install', 'message': 'helm said no', 'component': 'gpu-operator', 'tier': 1},
               'other': None}
    out = phase_record.stack('deploy', [['a', 'b'], ['gpu-operator']], stopped, '/r', check_mode=False)
    assert out['failures'] == {'api': 'helm said no'}
    assert out['artifact']['result'] == 'failed' and out['artifact']['files']['report'] == '/r/stack-deploy.md'
    md = [f for f in out['files'] if f['path'] == 'stack-deploy.md'][0]['content']
    assert '**Result: FAILED** - stopped in component gpu-operator (tier 2) at task "Install": helm said no' in md
    assert md.endswith('| 1 | a, b |\n| 2 | gpu-operator |\n')
    passed = phase_record.stack('teardown', [['a']], {}, '/r', check_mode=True)
    assert passed['failures'] == {} and passed['artifact']['result'] == 'passed'
    assert passed['files'][1]['content'].startswith('# Stack teardown (check mode: nothing was changed)\n\n'
                                                    '**Result: PASSED**\n')


def test_the_recovery_says_what_it_released_or_would_release():
    found = [{'metadata': {'namespace': 'nm', 'name': 'x'}, 'spec': {'nodeName': 'n1'}},
             {'metadata': {'namespace': 'nm', 'name': 'y'}, 'spec': {'nodeName': 'n1'}}]
    out = phase_record.stack_recover(found, {}, '/r', 'f', check_mode=True)
    assert out['summary'] == 'would release 2 NodeMaintenance object(s) and uncordon node(s) n1'
    assert '| nm/x | n1 |\n| nm/y | n1 |\n' in out['files'][1]['content']
    none = phase_record.stack_recover([], {}, '/r', 'maintenance.nvidia.com/finalizer')
    assert none['summary'] == 'nothing to recover: no NodeMaintenance pending on maintenance.nvidia.com/finalizer'
    stopped = phase_record.stack_recover([], {'api': {'task': 'List', 'message': 'refused'}}, '/r', 'f')
    assert stopped['failures'] == {'api': 'refused'} and stopped['artifact']['result'] == 'failed'


def test_a_rolling_reboot_stopped_before_it_knew_its_trays_writes_nothing_and_still_fails():
    out = phase_record.rolling_reboot({'skipped': True}, {}, '/r', {'t1': {'task': 'Plan', 'message': 'no'}})
    assert out == {'files': [], 'artifact': None, 'failures': {'t1': 'no'}}


def test_a_validation_fails_on_its_api_host_naming_the_phase_and_the_missing_records():
    phases = [{'name': 'readiness', 'checks': [_check('api', 'failed', 'the API is down', 'Start it.')]},
              {'name': 'trays', 'checks': [_check('pkeys', 'passed', 'ok')]}]
    meta = {'recipe': 'r', 'recipe_digest': 'd', 'record_sources': {'missing': ['t1']}, 'report_dir': '/rep',
            'run_dir': '', 'files': [{'path': 'drift.json', 'json': {}}]}
    out = phase_record.validation(phases, meta, '/rep/validation', 'api')
    assert list(out['failures']) == ['api']
    assert out['failures']['api'].startswith('Validation of r failed in readiness: api: the API is down. No preflight '
                                             'record of t1 (looked in /rep): ')
    assert out['replace'] == ['ctrf'] and 'drift.json' in [f['path'] for f in out['files']]
    assert out['artifact']['preflight_records'] == {'missing': ['t1']}
    passed = phase_record.validation(phases[1:], dict(meta, record_sources={}), '/rep/validation', 'api')
    assert passed['failures'] == {} and passed['summary'] == 'Validation of r passed; evidence in /rep/validation.'
