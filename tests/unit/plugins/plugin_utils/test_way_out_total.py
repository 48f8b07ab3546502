# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every function on the way out is total (issue 53, item 2): the reports, the rack map, drift and the attested bundle
take whatever phases ran - any subset of the five, in the order validate runs them - and whatever trays were read
(all, some, none), and name a tray without a read as not read; none of them raises. The runs that end this way:
tests/cluster/test_stop_matrix.py."""
import itertools
import json

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import attestation, drift, evidence
from test_stack_plan import plan

TRAYS = ['tray01', 'tray02', 'tray03']
RACKS = {'tray01': 'r01', 'tray02': 'r01', 'tray03': 'r02'}
PLAN = plan('gb200-nvke-ubuntu-training')


def phase(name, read):
    """One phase's records as validate writes them; the trays phase judges only the trays in ``read``."""
    if name == 'trays':
        checks = [{'name': '%s/pkeys' % tray, 'status': 'passed', 'object': tray, 'message': 'full members'}
                  for tray in read]
        checks += [{'name': '%s/sriov-vfs' % tray, 'status': 'failed', 'object': tray, 'message': 'not read in this run',
                    'fix': 'read it'} for tray in TRAYS if tray not in read]
        return {'name': name, 'checks': checks}
    return {'name': name, 'checks': [{'name': '%s-check' % name, 'status': 'passed', 'message': 'ok'}]}


def state(tray):
    """A tray_state read of ``tray`` as drift reads it."""
    return {'ansible_facts': {'gpu_tray': {'kernel_release': '6.8.0-1010-nvidia-64k'}}, 'cmdline': {'text': 'ro quiet'}}


COMBOS = [list(names) for size in range(0, 6) for names in itertools.combinations(evidence.RUN_PHASES, size)]
READS = [TRAYS, ['tray02'], []]


@pytest.mark.parametrize('names', COMBOS, ids=['+'.join(names) or 'none' for names in COMBOS])
def test_any_phases_and_any_reads_make_every_report_and_the_bundle(names):
    for read in READS:
        phases = [phase(name, read) for name in names]
        values = dict((tray, state(tray) if tray in read else None) for tray in TRAYS)
        found = drift.evaluate(values, PLAN, None, None, '2026-12-07T00:00:00Z', 'failed')
        assert found['report']['not_compared']['trays'] == [tray for tray in TRAYS if tray not in read]
        meta = {'recipe': 'gb200-nvke-ubuntu-training', 'racks': RACKS, 'drift': found['report']}
        files = dict((f['path'], f['content']) for f in evidence.evidence_files(phases, meta))
        assert sorted(path for path in files if path.startswith('ctrf/')) == ['ctrf/%s.json' % n for n in sorted(names)]
        html = files['report.html']
        judged = set(read) if 'trays' in names else set()
        for tray in TRAYS:
            # a tray no record is about says so; a tray the trays phase judged (or failed as unread) links to its row
            about = 'trays' in names
            assert ('title="%s: not read this run"' % tray in html) == (not about), (names, read, tray)
            if tray in judged:
                assert 'href="#tray-%s"' % tray in html
        summary = json.loads(files['summary.json'])
        assert sorted(summary['phases']) == sorted(names)
        ctrf = dict((path, content.encode('utf-8')) for path, content in files.items() if path.startswith('ctrf/'))
        if ctrf:
            bundle = attestation.build(ctrf, PLAN, None, None, '2026-12-07T00:00:00Z')
            assert attestation.verify(bundle, None, PLAN['digest'])['problems'] == []
        else:
            with pytest.raises(attestation.BundleError, match='no CTRF file to attest'):
                attestation.build(ctrf, PLAN, None, None, '2026-12-07T00:00:00Z')
