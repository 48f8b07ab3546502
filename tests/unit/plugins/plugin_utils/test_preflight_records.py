# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the validation finds each tray's preflight record (plugin_utils/preflight_records.py): this run's first,
then the folders in order, then the newest run folder; the first file found is the record; one without the PF state
counts as none; a record that is not JSON is named."""

import json

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import preflight_records

RDMA = {'mlx5_0': {'state': 'ACTIVE'}}


def record(rdma=None, checks=None):
    return json.dumps({'rdma': rdma or RDMA, 'checks': checks or [{'name': 'os_image', 'status': 'passed'}]})


def find(trays, files, this_run=None, dirs=(), newest=None):
    read = files.get
    return preflight_records.find(trays, this_run or {}, list(dirs),
                                  read, lambda relative: (newest or {}).get(relative, ''))


def test_this_run_first_then_the_folders_in_order_then_the_newest():
    files = {'/run/tray02/preflight.json': record(), '/art/tray02/preflight.json': record({'x': 1}),
             '/art/tray03/preflight.json': record(), '/old/tray04/preflight.json': record()}
    out = find(['tray01', 'tray02', 'tray03', 'tray04', 'tray05'], files,
               this_run={'tray01': {'rdma': None, 'checks': [{'name': 'a', 'status': 'failed'}]}},
               dirs=['/run', '', '/art'], newest={'tray04/preflight.json': '/old'})
    records = out['records']
    assert records['tray01'] == {'source': 'this run', 'dir': 'this run', 'rdma': None,
                                 'checks': [{'name': 'a', 'status': 'failed'}]}
    assert records['tray02']['source'] == '/run/tray02/preflight.json' and records['tray02']['rdma'] == RDMA
    assert records['tray03']['dir'] == '/art' and records['tray04']['dir'] == '/old'
    assert records['tray05'] == {'source': None, 'dir': None, 'rdma': None, 'checks': []}
    assert out['found'] == {'this run': ['tray01'], '/run': ['tray02'], '/art': ['tray03'], '/old': ['tray04']}
    assert out['missing'] == ['tray05']


def test_a_record_without_the_pf_state_counts_as_none_and_stops_the_search():
    files = {'/run/tray01/preflight.json': json.dumps({'checks': []}), '/art/tray01/preflight.json': record()}
    out = find(['tray01'], files, dirs=['/run', '/art'], newest={'tray01/preflight.json': '/art'})
    assert out['records']['tray01']['dir'] is None and out['missing'] == ['tray01']


def test_a_record_that_is_not_json_is_named():
    with pytest.raises(ValueError, match=r'/run/tray01/preflight.json is not JSON'):
        find(['tray01'], {'/run/tray01/preflight.json': '{not json'}, dirs=['/run'])


def test_the_phase_names_each_check_by_its_tray():
    records = find(['tray2', 'tray10', 'tray1'], {'/r/tray10/preflight.json': record(), '/r/tray1/preflight.json': record(
        checks=[{'name': 'pkeys', 'status': 'failed', 'object': 'x'}])}, dirs=['/r'])['records']
    checks = preflight_records.phase_checks(records)
    assert [(c['name'], c['status'], c['object']) for c in checks] == [
        ('tray1/pkeys', 'failed', 'tray1'), ('tray2/preflight', 'skipped', 'tray2'), ('tray10/os_image', 'passed', 'tray10')]


def test_an_empty_record_in_the_newest_folder_counts_as_none():
    """A record file that is empty (a preflight stopped while writing it) is no record, and no JSON error."""
    out = find(['tray01'], {'/old/tray01/preflight.json': ''}, newest={'tray01/preflight.json': '/old'})
    assert out['records']['tray01']['dir'] is None and out['missing'] == ['tray01']
