# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation report at the scale of a rack row: 144 trays x 6 tray checks, a few trays failing, a skipped
phase, two NCCL runs. The summary groups the failures by check with the trays listed; the details group by check
and fold the passed trays; headless Chromium renders it with the summary above the fold (issue 36 item 3)."""

import os
import re

import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import evidence
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.nccl_launch import run_check
from browser import find_chromium, read_png, run_chromium

TRAYS = ['tray%03d' % number for number in range(1, 145)]
TRAY_CHECKS = ('tray-read', 'sriov-vfs', 'pkeys', 'vf-ipoib', 'netns-mode', 'pf-state')
PKEY_FIX = 'Set gpu_tray_pkey to the partition the subnet manager assigns, then run site.yml on these trays.'
META = {'recipe': 'vr200-rke2-ubuntu-training', 'recipe_digest': 'sha256:1111', 'cluster': 'https://198.18.0.1:6443',
        'generated': '2026-12-05T04:00:00Z'}


def _tray_check(tray, check):
    if check == 'pkeys' and tray in ('tray120', 'tray005', 'tray017'):   # one finding on three trays
        return record('%s/pkeys' % tray, 'failed', '16 VFs are not in P_Key 0x8001 (their table holds 0x7fff only).',
                      PKEY_FIX, ['mlx5_%d: P_Key table 0x7fff' % port for port in range(4)], obj=tray)
    if check == 'sriov-vfs' and tray in ('tray043', 'tray042'):         # two findings, one each
        return record('%s/sriov-vfs' % tray, 'failed', '%s has %d VFs on mlx5_%d, expected 16.' % (
            tray, 8 if tray == 'tray042' else 0, 1 if tray == 'tray042' else 3),
            'Apply the SriovNetworkNodePolicy again and check the sriov-network-config-daemon log on the tray.', obj=tray)
    if check == 'pf-state' and tray == 'tray088':
        return record('%s/pf-state' % tray, 'warning', 'no preflight record to compare the PF state with.',
                      'Run the preflight on this tray to record its PF state.', obj=tray)
    return record('%s/%s' % (tray, check), 'passed', '%s is as expected.' % check, obj=tray)


def _nccl(variant, busbw, passed, trays=144, gpus=4):
    summary = {'variant': variant, 'workload': 'job', 'namespace': 'gpu-tray-nccl-%s-1' % variant, 'image': 'nccl-tests',
               'trays': trays, 'gpus_per_tray': gpus, 'ranks': trays * gpus, 'sizes': '-b 8 -e 16G -f 2',
               'worker_resources': {'limits': {'nvidia.com/gpu': gpus}}, 'nccl_env': ['NCCL_DEBUG=INFO']}
    nccl = {'busbw': busbw, 'passed': passed, 'min_busbw': 600.0 if variant == 'nvls' else 45.0,
            'threshold': 540.0 if variant == 'nvls' else 40.5, 'ranks': trays * gpus, 'largest_size': 17179869184,
            'transport': 'IB', 'nvls': variant == 'nvls', 'hosts': ['nccl-workers-%d' % i for i in range(trays)],
            'msg': 'all_reduce_perf %s: busbw %g GB/s %s the floor' % (variant, busbw, 'meets' if passed else 'is below'),
            'problems': [] if passed else ['busbw %g GB/s is below 40.5 GB/s' % busbw]}
    return run_check({'variant': variant, 'summary': summary, 'namespace': summary['namespace'], 'timeout': 1800,
                      'error': None, 'launcher': {'kind': 'Job', 'status': {'succeeded': 1}}, 'pods': [], 'log': 'x',
                      'nccl': nccl, 'cleanup': {'changed': True}})


def rack_phases():
    readiness = [record(name, 'passed', '%s is as the recipe requires.' % name)
                 for name in ('server-version', 'service', 'node-count', 'control-plane-gpu-labels')]
    deployment = [record(name, 'passed', '%s is ready.' % name)
                  for name in ('gpu-operator', 'network-operator', 'dra-driver', 'multus', 'sriov-device-plugin')]
    trays = [_tray_check(tray, check) for tray in TRAYS for check in TRAY_CHECKS]
    return [{'name': 'readiness', 'checks': readiness}, {'name': 'deployment', 'checks': deployment},
            {'name': 'trays', 'checks': trays},
            {'name': 'conformance', 'checks': [record('conformance', 'skipped', 'Not run: validate_phases leaves it '
                                                      'out (the CNCF conformance run takes 2 hours).')]},
            {'name': 'performance', 'checks': [_nccl('nvls', 744.71, True), _nccl('net', 31.2, False)]}]


def test_the_summary_groups_the_failures_by_check_with_the_trays():
    phases = [evidence._phase(phase) for phase in rack_phases()]
    failed = evidence.status_groups(phases, 'failed')
    assert [(group['phase'], group['check']) for group in failed] == [
        ('trays', 'sriov-vfs'), ('trays', 'pkeys'), ('performance', 'nccl-all-reduce-bw-net')]
    sriov, pkeys, net = failed
    # one finding on three trays: once, the trays in natural order, the fix once
    assert pkeys['objects'] == ['tray005', 'tray017', 'tray120']
    assert pkeys['findings'] == [{'message': '16 VFs are not in P_Key 0x8001 (their table holds 0x7fff only).',
                                  'fix': PKEY_FIX, 'objects': ['tray005', 'tray017', 'tray120']}]
    assert [item['objects'] for item in sriov['findings']] == [['tray042'], ['tray043']]
    assert net['objects'] == ['gpu-tray-nccl-net-1']
    assert [group['objects'] for group in evidence.status_groups(phases, 'warning')] == [['tray088']]
    assert evidence.skipped_phases(phases) == [
        ('conformance', 'Not run: validate_phases leaves it out (the CNCF conformance run takes 2 hours).')]


def test_the_markdown_report_opens_with_the_summary_and_folds_the_passed_trays():
    text = evidence.markdown(rack_phases(), META)
    summary, details = text.split('\n## readiness: PASSED\n')
    assert '| trays | FAILED | 858 | 5 | 1 | 0 |' in summary                   # 144 x 6 = 864 records
    assert '| **all** | FAILED | 868 | 6 | 1 | 1 |' in summary
    assert ('| **pkeys** | trays | 3 trays: tray005, tray017, tray120 | 16 VFs are not in P_Key 0x8001 (their table '
            'holds 0x7fff only). | %s |' % PKEY_FIX) in summary
    assert summary.count(PKEY_FIX) == 1
    assert '- **conformance**: Not run: validate_phases leaves it out' in summary
    assert '| nccl-all-reduce-bw-nvls | PASSED | 144 | 576 | 744.71 GB/s | 540 GB/s (600 GB/s less 10%) |' in summary
    assert '| nccl-all-reduce-bw-net | FAILED | 144 | 576 | 31.2 GB/s | 40.5 GB/s (45 GB/s less 10%) |' in summary
    trays = details.split('## trays: FAILED')[1].split('\n## ')[0]
    rows = [line for line in trays.splitlines() if line.startswith('| ') and not line.startswith('| Check')]
    assert len(rows) == 5 + 1 + 6                 # the failed and warned trays, then one row per check for the rest
    assert '| pkeys | PASSED | 141 trays: tray001-tray004, tray006-tray016, tray018-tray119, tray121-tray144 |' in trays
    assert '| tray-read | PASSED | 144 trays: tray001-tray144 |' in trays
    assert trays.index('| sriov-vfs | FAILED | tray042 |') < trays.index('| pkeys | FAILED | tray005 |') \
        < trays.index('| pf-state | WARNING | tray088 |') < trays.index('| tray-read | PASSED')
    assert 'Measured: 144 trays, 576 ranks, bus bandwidth 31.2 GB/s, floor 40.5 GB/s (45 GB/s less 10%).' in details


def _chromium_or_skip():
    chromium = find_chromium()
    if chromium is None:
        pytest.skip('chromium is not installed (tools/setup.sh installs it): the report is not rendered')
    return chromium


def screenshot(chromium, page, tmp_path):
    """The page as headless Chromium shows it in a 1280x900 window: the PNG's path, width, height, channels, rows."""
    report = tmp_path / 'report.html'
    report.write_text(page)
    png = tmp_path / 'report.png'
    res = run_chromium(chromium, ['--window-size=1280,900', '--screenshot=%s' % png, 'file://%s' % report])
    assert res.returncode == 0 and png.exists(), 'chromium rc %d:\n%s' % (res.returncode, res.stderr[-2000:])
    return (png,) + tuple(read_png(str(png)))


def test_a_144_tray_report_renders_with_the_failure_summary_above_the_fold(tmp_path):
    chromium = _chromium_or_skip()
    page = evidence.html_report(rack_phases(), META)
    png, width, height, channels, rows = screenshot(chromium, page, tmp_path)
    assert (width, height) == (1280, 900)
    pixels = [tuple(row[x:x + 3]) for row in rows[::10] for x in range(0, width * channels, channels * 10)]
    white = sum(1 for pixel in pixels if pixel == (255, 255, 255))
    assert 0.3 < white / float(len(pixels)) < 0.97, 'a blank or unreadable page: %d of %d white' % (white, len(pixels))
    red = sum(1 for pixel in pixels if pixel == (0xff, 0xdd, 0xdd))             # the failed rows' background
    assert red > 50, 'no failed row is visible in the first screen'
    # the same page, measured by the browser: a script (only in this copy) writes the layout into the DOM
    measured = tmp_path / 'measured.html'
    measured.write_text(page.replace('</body>', '<script>var r = document.getElementById("summary").getBoundingClientRect();'
                                     'var f = document.querySelector("#summary table.groups").getBoundingClientRect();'
                                     'document.body.insertAdjacentHTML("beforeend", "<pre id=\\"layout\\">" + '
                                     '[window.innerWidth, window.innerHeight, r.top, r.bottom, f.top].join(" ") + '
                                     '"</pre>");</script></body>'))
    res = run_chromium(chromium, ['--window-size=1280,900', '--dump-dom', 'file://%s' % measured])
    found = re.search(r'<pre id="layout">([\d. ]+)</pre>', res.stdout)
    assert found, 'chromium rc %d:\n%s' % (res.returncode, res.stderr[-2000:])
    view_width, _view_height, top, bottom, failed_top = [float(value) for value in found.group(1).split()]
    # the vertical layout depends on the width only (--dump-dom's viewport is shorter than the window, the
    # screenshot's is the window): the summary ends within the 900 px of the screenshot
    assert view_width == width
    assert 0 < top < failed_top < bottom <= height, 'summary from %s to %s px, failed checks at %s px' % (
        top, bottom, failed_top)
    keep = os.environ.get('GPU_TRAY_REPORT_SCREENSHOT')
    if keep:                                            # to look at it: GPU_TRAY_REPORT_SCREENSHOT=/tmp/report.png
        png.rename(keep)


def test_the_trays_not_read_are_one_line_of_the_report_however_the_run_stopped():
    """A validation that stopped before its trays phase (the API down) named none of the trays that did not answer
    (issue 54): one line in report.md and report.html, their names folded into ranges at any fleet size, the
    unreachable ones and the failed reads apart; nothing when every tray asked for was read."""
    phases = [{'name': 'readiness', 'checks': [{'name': 'readiness-stopped', 'status': 'failed', 'message': 'down'}]}]
    trays = ['tray%03d' % n for n in range(1, 145)]
    meta = {'recipe': 'r', 'not_read': {'unreachable': trays[:143], 'failed': ['tray144']}}
    line = ('Trays not read (144): unreachable: tray001-tray143; read failed: tray144 - nothing was judged on them.')
    assert evidence.not_read_line(meta) == line
    assert '\n**%s**\n' % line in evidence.markdown(phases, meta)
    assert '<p class="not-read"><b>%s</b></p>' % line in evidence.html_report(phases, meta)
    for empty in ({}, {'not_read': {'unreachable': [], 'failed': []}}):
        assert evidence.not_read_line(empty) == '' and 'Trays not read' not in evidence.markdown(phases, empty)
