# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rack map report.html opens with (issue 46 item 5): 144 trays in 8 racks of 18 (the rack run of
test_evidence_report), one cell per tray colored by its worst status across the phases, drift outlined, each linking
to the tray's first row. Headless Chromium shows it in the first screen, the failing trays' cells in the failure
color, and every link lands on a row of its tray."""

import json
import re

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import evidence
from browser import run_chromium
from test_evidence_report import META, TRAYS, _chromium_or_skip, rack_phases, screenshot

RACKS = dict((tray, 'r%02d' % (index // 18 + 1)) for index, tray in enumerate(TRAYS))
FAILING = ['tray005', 'tray017', 'tray042', 'tray043', 'tray120']
DRIFT = {'summary': '1 change since the last passing run (then) on 1 tray (tray042).', 'baseline': 'then',
         'rows': [{'scope': 'tray', 'what': 'mlx5_1 VFs', 'before': '16', 'after': '8', 'objects': ['tray042'],
                   'where': 'tray042'}],
         'changes': [{'scope': 'tray', 'object': 'tray042', 'what': 'mlx5_1 VFs', 'before': '16', 'after': '8'}]}


def meta():
    return dict(META, racks=RACKS, drift=DRIFT)


def test_each_trays_worst_status_across_the_phases_by_rack():
    phases = [evidence._phase(phase) for phase in rack_phases()]
    rows = evidence.rack_map(phases, RACKS, {'tray042'})
    assert [rack['rack'] for rack in rows] == ['r01', 'r02', 'r03', 'r04', 'r05', 'r06', 'r07', 'r08']
    assert all(len(rack['trays']) == 18 for rack in rows)
    status = dict((t['tray'], t['status']) for rack in rows for t in rack['trays'])
    assert sorted(tray for tray, value in status.items() if value == 'failed') == FAILING
    assert status['tray088'] == 'warning' and status['tray001'] == 'passed'
    assert [t['tray'] for rack in rows for t in rack['trays'] if t['drift']] == ['tray042']
    # a tray the run has no record of is not read (never passed); one without a rack goes to rack "-"
    assert evidence.rack_map(phases, {'tray999': None})[0] == {
        'rack': '-', 'trays': [{'tray': 'tray999', 'status': 'not read', 'drift': False}]}


def test_cells_link_to_the_first_row_of_their_tray_and_no_map_without_racks():
    page = evidence.html_report(rack_phases(), meta())
    assert page.index('<section id="rackmap">') < page.index('<section id="drift">') < page.index('<section id="summary">')
    cells = re.findall(r'<a class="cell ([a-z ]+)" href="#tray-(tray\d+)"', page)
    assert len(cells) == 144 and [tray for _cls, tray in cells] == TRAYS
    assert dict((tray, cls) for cls, tray in cells)['tray042'] == 'failed drift'
    for tray in TRAYS:
        assert page.count('id="tray-%s"' % tray) == 1
    assert re.search(r'<tr class="failed" id="tray-tray005"><td>pkeys</td>', page)
    assert re.search(r'<li id="tray-tray001">tray001: ', page)
    plain = evidence.html_report(rack_phases(), META)
    assert '<section id="rackmap">' not in plain and 'id="tray-' not in plain


MEASURE = '''<script>
var map = document.getElementById("rackmap").getBoundingClientRect();
var cells = [];
document.querySelectorAll("#rackmap table a.cell").forEach(function (a) {
  var target = document.getElementById(a.getAttribute("href").slice(1));
  var row = target && (target.closest("tr") || target);
  cells.push([a.title.split(":")[0], getComputedStyle(a).backgroundColor,
              target ? target.textContent.indexOf(a.title.split(":")[0]) >= 0 : false, row ? row.className : ""]);
});
document.body.insertAdjacentHTML("beforeend", "<pre id=\\"layout\\">" +
  JSON.stringify({top: map.top, bottom: map.bottom, width: window.innerWidth, cells: cells}) + "</pre>");
</script></body>'''


def test_chromium_shows_the_rack_map_in_the_first_screen_with_the_failing_trays_red(tmp_path):
    chromium = _chromium_or_skip()
    page = evidence.html_report(rack_phases(), meta())
    _png, width, height, channels, rows = screenshot(chromium, page, tmp_path)
    red = sum(1 for row in rows for x in range(0, width * channels, channels) if tuple(row[x:x + 3]) == (0xdd, 0x22, 0x22))
    assert red > 5 * 200, 'the five failing trays\' cells are not visible in the first screen (%d red pixels)' % red
    measured = tmp_path / 'measured.html'
    measured.write_text(page.replace('</body>', MEASURE))
    res = run_chromium(chromium, ['--window-size=1280,900', '--dump-dom', 'file://%s' % measured])
    found = re.search(r'<pre id="layout">(.*?)</pre>', res.stdout)
    assert found, 'chromium rc %d:\n%s' % (res.returncode, res.stderr[-2000:])
    layout = json.loads(found.group(1).replace('&quot;', '"'))
    assert layout['width'] == width and 0 < layout['top'] < layout['bottom'] <= height, layout
    cells = dict((tray, (color, lands, row)) for tray, color, lands, row in layout['cells'])
    assert sorted(cells) == sorted(TRAYS)
    for tray in FAILING:
        assert cells[tray] == ('rgb(221, 34, 34)', True, 'failed'), (tray, cells[tray])
    assert cells['tray088'][0] == 'rgb(255, 204, 51)' and cells['tray088'][2] == 'warning'
    assert cells['tray001'][0] == 'rgb(153, 221, 153)' and cells['tray001'][1] is True
    assert all(lands for _color, lands, _row in cells.values())


def _vr200_pass():
    """A passing VR200 trays phase as the lab's run writes it: four trays, their P_Key checks passed, their VF checks
    skipped (VR200 has no VFs), tray04 read nothing but skips."""
    checks = []
    for tray in ('tray01', 'tray02', 'tray03'):
        checks.append({'name': '%s/pkeys' % tray, 'status': 'passed', 'object': tray, 'message': 'full membership'})
        checks.append({'name': '%s/vfs' % tray, 'status': 'skipped', 'object': tray, 'message': 'no VFs on VR200'})
    checks.append({'name': 'tray04/pkeys', 'status': 'skipped', 'object': 'tray04', 'message': 'not read'})
    checks.append({'name': 'tray04/vfs', 'status': 'skipped', 'object': 'tray04', 'message': 'no VFs on VR200'})
    return [{'name': 'trays', 'checks': checks}]


def test_a_tray_whose_checks_passed_and_some_skipped_is_passed():
    """Issue 53, item 6: the lab's passing VR200 validation read "4 trays in 1 racks: 4 skipped", every cell grey - a
    skip ranked worse than a pass. A tray's cell is its worst real finding; skipped only where nothing else ran."""
    racks = {'tray01': 'r01', 'tray02': 'r01', 'tray03': 'r01', 'tray04': 'r01'}
    page = evidence.html_report(_vr200_pass(), dict(META, racks=racks))
    cells = dict((tray, cls) for cls, tray in re.findall(r'<a class="cell ([a-z ]+)" href="#tray-(tray\d+)"', page))
    assert cells == {'tray01': 'passed', 'tray02': 'passed', 'tray03': 'passed', 'tray04': 'skipped'}
    assert '4 trays in 1 racks: <a class="cell passed"></a> 3 passed, <a class="cell skipped"></a> 1 skipped' in page
    # and a failure still wins over a pass and a skip of the same tray
    failing = _vr200_pass()
    failing[0]['checks'][0]['status'] = 'failed'
    assert evidence.tray_status([evidence._phase(p) for p in failing], ['tray01'])['tray01'] == 'failed'


def test_the_skipped_rows_of_a_check_fold_into_one_line_after_the_rows_that_say_something():
    text = evidence.markdown(_vr200_pass(), META)
    rows = [line for line in text.split('## trays: PASSED', 1)[1].splitlines() if line.startswith('| ')][1:]
    assert rows == [
        '| pkeys | PASSED | 3 trays: tray01-tray03 | full membership | |',
        '| pkeys | SKIPPED | tray04 | not read |  |',          # one record: its own row (its fix column empty)
        '| vfs | SKIPPED | 4 trays: tray01-tray04 | no VFs on VR200 | |'], rows
    page = evidence.html_report(_vr200_pass(), META)
    trays = page.split('<h2>trays: PASSED</h2>', 1)[1]
    assert trays.index('<tr class="passed"><td>pkeys</td>') < trays.index('<tr class="skipped"><td>pkeys</td>') \
        < trays.index('<tr class="skipped"><td>vfs</td><td>SKIPPED</td><td colspan="3"><details><summary>4 trays: '
                      'tray01-tray04 - no VFs on VR200</summary>')


def test_a_tray_no_record_is_about_is_a_not_read_cell_without_a_link():
    """A phase run alone (readiness) reads no tray: each tray's cell says "not read this run" and links nowhere (it
    has no row), and the legend counts them as not read - never as skipped or passed."""
    racks = {'tray01': 'r01', 'tray02': 'r01'}
    phases = [{'name': 'readiness', 'checks': [{'name': 'k8s-version', 'status': 'passed', 'message': 'ok'}]}]
    page = evidence.html_report(phases, dict(META, racks=racks))
    assert '<a class="cell unread" title="tray01: not read this run">01</a>' in page
    assert '2 trays in 1 racks: <a class="cell unread"></a> 2 not read</p>' in page
    assert 'href="#tray-' not in page
