# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run's reports go (plugins/plugin_utils/report_dir.py; the lookup gpu_tray.cluster.report_dir over it runs
in tests/lab/test_awx_runner.py, where AWX's job variables decide it): the command line writes into
gpu_tray_report_dir itself, an AWX job into its own folder under /var/lib/gpu-tray-report, every job of one workflow
into the same one."""

import os
import time

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import report_dir


def test_the_command_line_writes_into_the_report_dir_itself():
    assert report_dir.locate() == {'base': 'gpu-tray-report', 'run_id': '', 'dir': 'gpu-tray-report', 'latest': ''}
    assert report_dir.locate('/srv/report/') == {'base': '/srv/report', 'run_id': '', 'dir': '/srv/report',
                                                 'latest': ''}
    assert report_dir.locate('', None)['dir'] == 'gpu-tray-report'          # a blank survey answer: the default


def test_an_awx_job_writes_into_its_own_folder_and_a_workflow_shares_one():
    assert report_dir.locate(awx_job_id=41) == {
        'base': '/var/lib/gpu-tray-report', 'run_id': 'awx-job-41', 'dir': '/var/lib/gpu-tray-report/awx-job-41',
        'latest': '/var/lib/gpu-tray-report/latest'}
    # the preflight, prepare-trays and validate nodes of workflow job 40 (jobs 41, 42, 44): one folder
    assert {report_dir.locate(awx_job_id=job, awx_workflow_job_id='40')['dir'] for job in (41, 42, 44)} == {
        '/var/lib/gpu-tray-report/awx-workflow-job-40'}
    assert report_dir.locate('/mnt/evidence', awx_job_id=41)['dir'] == '/mnt/evidence/awx-job-41'
    assert report_dir.locate('/mnt/evidence', 'rack1-2026-06', awx_job_id=41)['dir'] == '/mnt/evidence/rack1-2026-06'
    assert report_dir.locate(gpu_tray_run_id='rack1')['dir'] == 'gpu-tray-report/rack1'


@pytest.mark.parametrize('value', ['../x', 'a/b', 'latest', '.hidden', 'x' * 129])
def test_a_run_id_that_is_no_folder_name_is_refused_naming_the_variable(value):
    with pytest.raises(report_dir.ReportDirError, match='gpu_tray_run_id: '):
        report_dir.locate(gpu_tray_run_id=value)
    with pytest.raises(report_dir.ReportDirError, match='awx_job_id'):
        report_dir.locate(awx_job_id='4; rm')


def test_newest_run_folder_holding_a_file(tmp_path):
    base = tmp_path / 'report'
    for name, age in (('awx-job-1', 300), ('awx-job-2', 100), ('awx-job-3', 200)):
        (base / name / 'tray01').mkdir(parents=True)
        record = base / name / 'tray01' / 'preflight.json'
        record.write_text('{}')
        os.utime(str(record), (time.time() - age, time.time() - age))
    (base / 'awx-job-4').mkdir()                          # a later validate-only job: no preflight record
    os.symlink('awx-job-4', str(base / 'latest'))
    assert report_dir.newest_with(str(base), 'tray01/preflight.json') == str(base / 'awx-job-2')
    assert report_dir.newest_with(str(base), 'tray01/preflight.json', prefer=str(base / 'awx-job-3')) == \
        str(base / 'awx-job-3')
    assert report_dir.newest_with(str(base), 'tray01/preflight.json', prefer=str(base / 'awx-job-4')) == \
        str(base / 'awx-job-2')
    assert report_dir.newest_with(str(base), 'tray02/preflight.json') == ''
    assert report_dir.newest_with(str(tmp_path / 'none'), 'tray01/preflight.json') == ''


def test_the_latest_link_is_never_the_folder_found_and_folders_without_the_file_are_passed_over(tmp_path):
    """'latest' (a link to the newest run) is not a run folder: the run folder it points at is named. Folders that
    do not hold the file (a dozen validate-only jobs) are passed over, whichever order the directory lists them."""
    base = tmp_path / 'report'
    for number in range(1, 13):
        (base / ('awx-job-%d' % number)).mkdir(parents=True)
    (base / 'awx-job-7' / 'tray01').mkdir()
    (base / 'awx-job-7' / 'tray01' / 'preflight.json').write_text('{}')
    (base / 'notes.txt').write_text('a file beside the run folders')
    os.symlink('awx-job-7', str(base / 'latest'))
    assert report_dir.newest_with(str(base), 'tray01/preflight.json') == str(base / 'awx-job-7')


def test_newest_reads_the_run_folders_with_a_run_id_and_the_report_dir_itself_without(tmp_path):
    """newest(): a run placed in run folders (an AWX job) reads the newest one that holds the file (its own first);
    a run without them (the command line) reads its report directory itself, or the folder it prefers."""
    base = tmp_path / 'report'
    (base / 'awx-job-3' / 'tray01').mkdir(parents=True)
    (base / 'awx-job-3' / 'tray01' / 'preflight.json').write_text('{}')
    job = report_dir.locate(str(base), None, 9, None)
    assert job['run_id'] == 'awx-job-9'
    assert report_dir.newest(job, 'tray01/preflight.json') == str(base / 'awx-job-3')
    assert report_dir.newest(job, 'tray02/preflight.json') == ''
    plain = report_dir.locate(str(base), None, None, None)
    assert plain['run_id'] == '' and report_dir.newest(plain, 'tray01/preflight.json') == ''
    (base / 'tray01').mkdir()
    (base / 'tray01' / 'preflight.json').write_text('{}')
    assert report_dir.newest(plain, 'tray01/preflight.json') == str(base)
    other = tmp_path / 'elsewhere'
    assert report_dir.newest(plain, 'tray01/preflight.json', prefer=str(other)) == ''
    assert report_dir.newest(plain, 'tray01/preflight.json', prefer=str(base / 'awx-job-3')) == str(base / 'awx-job-3')
