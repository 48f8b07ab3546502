# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The write_evidence action in-process (test_tray_state runs it through the ansible CLI): every file is
rewritten when its content differs - a stale "passed" never outlives a failed re-validation - and only then."""

import os
import stat

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.gpu_tray.cluster.plugins.action import write_evidence
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import report_dir
from unithelpers import action_plugin, target_connection


def run(args, connection=None):
    return action_plugin(write_evidence, args, connection or target_connection('write_evidence')).run(task_vars={})


def test_the_target_is_never_touched(tmp_path):
    """No remote temporary directory (TRANSFERS_FILES false): the files are written in-process on the controller."""
    connection = target_connection('write_evidence')
    result = run({'dest': str(tmp_path), 'files': [{'path': 'a.md', 'content': 'x'}]}, connection)
    assert result['written'] == [str(tmp_path / 'a.md')]
    assert connection.exec_command.call_count == 0 and connection.put_file.call_count == 0


def test_rewrites_exactly_the_files_whose_content_changed(tmp_path):
    dest = tmp_path / 'report'
    files = [{'path': 'ctrf/trays.json', 'json': {'status': 'passed'}}, {'path': 'report.md', 'content': '# ok\n'}]
    first = run({'dest': str(dest), 'files': files})
    assert first['changed'] is True and first['written'] == [str(dest / 'ctrf' / 'trays.json'), str(dest / 'report.md')]
    assert first['msg'] == '2 of 2 files written under %s.' % dest and first['dest'] == str(dest)
    assert (dest / 'ctrf' / 'trays.json').read_text() == '{\n    "status": "passed"\n}\n'
    assert stat.S_IMODE((dest / 'report.md').stat().st_mode) == 0o644
    same = run({'dest': str(dest), 'files': files})
    assert same['changed'] is False and same['written'] == [] and same['msg'].startswith('0 of 2 files')
    failed = [{'path': 'ctrf/trays.json', 'json': {'status': 'failed'}}, files[1]]
    again = run({'dest': str(dest), 'files': failed, 'mode': '0600'})
    assert again['changed'] is True and again['written'] == [str(dest / 'ctrf' / 'trays.json')]
    assert '"failed"' in (dest / 'ctrf' / 'trays.json').read_text()
    assert stat.S_IMODE((dest / 'ctrf' / 'trays.json').stat().st_mode) == 0o600
    assert sorted(os.listdir(str(dest / 'ctrf'))) == ['trays.json']        # no temporary file left behind


def test_refuses_paths_outside_dest_bad_modes_and_unwritable_places(tmp_path):
    for bad in ('../x', '/etc/passwd', 'a/../../x', '/', ''):
        with pytest.raises(report_dir.ReportDirError, match='must be a relative path under dest'):
            write_evidence.target(str(tmp_path), bad)
    assert write_evidence.target(str(tmp_path), 'a//b/') == os.path.join(str(tmp_path), 'a', 'b')
    assert write_evidence.target(str(tmp_path), 'a\\b') == os.path.join(str(tmp_path), 'a', 'b')
    with pytest.raises(AnsibleActionFail, match="mode 'rw' is not an octal mode"):
        run({'dest': str(tmp_path), 'files': [{'path': 'a', 'content': 'x'}], 'mode': 'rw'})
    blocker = tmp_path / 'file'
    blocker.write_text('not a directory')
    with pytest.raises(AnsibleActionFail, match='cannot write under %s' % blocker):
        run({'dest': str(blocker), 'files': [{'path': 'a', 'content': 'x'}]})


def test_render_and_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    assert write_evidence.render({'json': [2, 1]}) == b'[\n    2,\n    1\n]\n'
    # keys sorted: the same result renders the same bytes, so an unchanged report is not rewritten
    assert write_evidence.render({'json': {'b': 1, 'a': {'d': 0, 'c': 0}}}) == (
        b'{\n    "a": {\n        "c": 0,\n        "d": 0\n    },\n    "b": 1\n}\n')
    assert write_evidence.render({'json': 0, 'content': 'x'}) == b'0\n'
    assert write_evidence.render({'json': None, 'content': 'text'}) == b'text'
    target = str(tmp_path / 'out' / 'f')
    assert write_evidence.write_if_changed(target, b'a', 0o640) is True
    assert write_evidence.write_if_changed(target, b'a', 0o640) is False

    def refuse(*_args):
        raise OSError('read-only file system')
    monkeypatch.setattr(write_evidence.os, 'rename', refuse)
    with pytest.raises(OSError):
        write_evidence.write_if_changed(target, b'b', 0o640)
    assert os.listdir(str(tmp_path / 'out')) == ['f'] and open(target, 'rb').read() == b'a'


@pytest.mark.parametrize('args, missing', [
    ({'files': [{'path': 'a', 'content': 'x'}]}, 'dest'),
    ({'dest': 'DEST'}, 'files'),
    ({'dest': 'DEST', 'files': [{'content': 'x'}]}, 'path'),
])
def test_required_arguments(tmp_path, args, missing):
    args = dict((key, str(tmp_path) if value == 'DEST' else value) for key, value in args.items())
    with pytest.raises(AnsibleActionFail, match='missing required arguments: %s' % missing):
        run(args)
    assert os.listdir(str(tmp_path)) == []


def test_run_dir_points_latest_at_the_run_that_wrote_last(tmp_path):
    """One folder per run (an AWX job or workflow), `latest` beside them pointing at the one written last: a relative
    link, so the base directory can be mounted elsewhere (a persistent volume)."""
    base = tmp_path / 'gpu-tray-report'
    first = run({'dest': str(base / 'awx-workflow-job-7'), 'run_dir': str(base / 'awx-workflow-job-7'),
                 'files': [{'path': 'preflight-summary.md', 'content': 'x'}]})
    assert os.readlink(str(base / 'latest')) == 'awx-workflow-job-7'
    assert first['latest'] == str(base / 'latest') and first['msg'].endswith('; %s points at it.' % (base / 'latest'))
    # the validation writes below the run folder: latest still names the run folder
    second = run({'dest': str(base / 'awx-job-9' / 'validation'), 'run_dir': str(base / 'awx-job-9'),
                  'files': [{'path': 'summary.json', 'json': {}}]})
    assert os.readlink(str(base / 'latest')) == 'awx-job-9' and (base / 'latest' / 'validation' / 'summary.json').is_file()
    assert second['latest'] == str(base / 'latest')
    again = run({'dest': str(base / 'awx-job-9' / 'validation'), 'run_dir': str(base / 'awx-job-9'),
                 'files': [{'path': 'summary.json', 'json': {}}]})
    assert again['changed'] is False and again['msg'] == '0 of 1 files written under %s.' % (base / 'awx-job-9' / 'validation')
    assert sorted(os.listdir(str(base))) == ['awx-job-9', 'awx-workflow-job-7', 'latest']     # no temporary link left
    with pytest.raises(AnsibleActionFail, match='is not inside run_dir'):
        run({'dest': str(tmp_path / 'elsewhere'), 'run_dir': str(base / 'awx-job-9'), 'files': [{'path': 'a', 'content': ''}]})
    (tmp_path / 'other' / 'latest').mkdir(parents=True)
    with pytest.raises(AnsibleActionFail, match='latest exists and is not a link'):
        run({'dest': str(tmp_path / 'other' / 'run1'), 'run_dir': str(tmp_path / 'other' / 'run1'),
             'files': [{'path': 'a', 'content': ''}]})
