"""A stop test must meet trays (issue 53): the way a phase ends broke twice on inventories with trays while its stop
tests ran with `-i localhost,`, an inventory without any. So every playbook that ends a phase is in the stop matrix
(tests/cluster/test_stop_matrix.py), each of its endings has a cell on a sample inventory whose gpu_trays group has
trays, and a playbook a stop test runs with localhost alone (tests/cluster/test_stopped_phases.py) has its tray cells
in the matrix too."""
import re
import sys

from qualitykit import ROOT, load

# the playbooks whose roles end a phase with a report and a job artifact (preflight, rolling reboot, the stack's
# deploy, teardown and NodeMaintenance recovery, validate); restore_trays' rolling reboot is rolling_reboot's
PHASE_PLAYBOOKS = {'preflight', 'prepare_trays', 'rolling_reboot', 'deploy_stack', 'teardown_stack',
                   'recover_node_maintenance', 'validate'}
# the stop tests besides the matrix: the playbook runs of tests/cluster and tests/lab named test_stop*.py (the
# matrix's cells are checked above)
STOP_TESTS = sorted(str(path.relative_to(ROOT)) for folder in ('cluster', 'lab')
                    for path in (ROOT / 'tests' / folder).glob('test_stop*.py') if path.name != 'test_stop_matrix.py')


def matrix():
    sys.path.insert(0, str(ROOT / 'tests' / 'cluster'))
    try:
        return load('tests', 'cluster', 'test_stop_matrix.py', name='stop_matrix_for_quality')
    finally:
        sys.path.remove(str(ROOT / 'tests' / 'cluster'))


def ending_kind(ending):
    """api-down-readiness-alone -> readiness alone: a phase alone is an ending of its own."""
    match = re.match(r'^api-down-(\w+)-alone$', ending)
    return '%s alone' % match.group(1) if match else ending


def uncovered(cells, samples):
    """(playbook, ending) pairs of ``cells`` with no cell on an inventory of ``samples`` (the ones with trays)."""
    pairs = set((c['playbook'], ending_kind(c['ending'])) for c in cells)
    with_trays = set((c['playbook'], ending_kind(c['ending'])) for c in cells if c['inventory'] in samples)
    return sorted(pairs - with_trays)


def test_every_phase_playbook_and_ending_has_a_cell_on_an_inventory_with_trays():
    module = matrix()
    cells = [param.values[0] for param in module.CELLS]
    assert set(c['playbook'] for c in cells) == PHASE_PLAYBOOKS
    samples = [name for name, folder in module.SAMPLES.items() if module.inventory_trays(folder)]
    assert sorted(samples) == sorted(module.SAMPLES), 'a sample inventory without trays'
    assert uncovered(cells, samples) == []
    # every validate phase alone, and all of them
    validate = set(ending_kind(c['ending']) for c in cells if c['playbook'] == 'validate')
    assert {'%s alone' % phase for phase in module.PHASES} <= validate and 'api-down' in validate


def test_the_rule_refuses_a_matrix_whose_cells_have_no_trays():
    cells = [{'playbook': 'validate', 'inventory': 'localhost', 'ending': 'api-down'},
             {'playbook': 'validate', 'inventory': 'gb200', 'ending': 'api-down-trays-alone'},
             {'playbook': 'preflight', 'inventory': 'localhost', 'ending': 'trays-unreachable'}]
    assert uncovered(cells, ['gb200', 'vr200']) == [('preflight', 'trays-unreachable'), ('validate', 'api-down')]


def test_a_playbook_a_stop_test_runs_on_localhost_has_its_tray_cells_in_the_matrix():
    module = matrix()
    cells = [param.values[0] for param in module.CELLS]
    covered = set(c['playbook'] for c in cells if c['inventory'] in module.SAMPLES)
    playbooks = set(path.stem for path in (ROOT / 'playbooks').glob('*.yml'))
    assert 'tests/cluster/test_stopped_phases.py' in STOP_TESTS
    for name in STOP_TESTS:
        text = (ROOT / name).read_text()
        run = set(re.findall(r"['\"](\w+)\.yml['\"]", text)) & playbooks
        run |= set(re.findall(r"'playbooks' / '(\w+)\.yml'", text)) & playbooks
        assert run, name
        assert run <= covered | {'verify_evidence'}, (name, sorted(run - covered))
