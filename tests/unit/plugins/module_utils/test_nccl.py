# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""nccl_result: the all_reduce_perf parser (module_utils/nccl.py) and the module.

Fixtures in tests/unit/fixtures/nccl are in nccl-tests' exact print formats (src/util.cu: row preamble
``%12li  %12li  %8s  %6s  %6s``, per placement ``  %7s  %6s  %6s  %6g``, the footer lines), with the launcher
prefixes and NCCL_DEBUG=INFO lines real runs carry.
"""

import socket

import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils import nccl
from ansible_collections.gpu_tray.cluster.plugins.modules import nccl_result
from unithelpers import fixture_path

HOST = socket.gethostname()


def read(name):
    with open(fixture_path('nccl', name)) as handle:
        return handle.read()


def parse(name):
    return nccl.parse_all_reduce(read(name))


# ---- parser ------------------------------------------------------------------------------------------

def test_multi_node_ib_nvls_with_mpirun_prefixes():
    result = parse('vr200_nvls_ib_mpirun.log')
    assert len(result['rows']) == 15 and result['partial_rows'] == []
    assert result['largest_size'] == 17179869184
    assert result['busbw'] == 743.89 and result['in_place_busbw'] == 740.93     # out-of-place column, not in-place
    assert result['avg_busbw'] == 489.444 and result['avg_status'] is None
    assert result['out_of_bounds'] == 0 and result['wrong'] == 0 and result['concluded']
    assert result['transport'] == 'IB' and result['transports'] == ['IB']
    assert result['nvls'] is True and result['nccl_info'] is True
    assert result['hosts'] == ['vr200-tray-01', 'vr200-tray-02'] and result['ranks'] == 8
    assert result['header']['max_bytes'] == 17179869184 and result['header']['graph'] == 0
    first = result['rows'][0]
    assert first['size'] == 1048576 and first['count'] == 262144 and first['root'] == -1
    assert first['type'] == 'float' and first['redop'] == 'sum'
    assert nccl.evaluate(result, 'nvls', 600.0, 0.1) == ([], [])


def test_socket_fallback_fails_net_and_nvls_but_not_default():
    result = parse('gb200_net_socket.log')
    assert result['transport'] == 'Socket' and result['nvls'] is False
    assert result['busbw'] == 11.2 and result['largest_size'] == 8589934592
    problems = nccl.evaluate(result, 'net', 40.0, 0.1)[0]
    assert any('Socket transport' in p for p in problems)
    assert any('11.2 GB/s' in p and 'below 36 GB/s' in p for p in problems)
    problems = nccl.evaluate(result, 'default', 10.0, 0.1)[0]
    assert problems == []


def test_wrong_values_and_out_of_bounds():
    result = parse('gb200_net_wrong.log')
    assert result['out_of_bounds'] == 3 and result['out_of_bounds_status'] == 'FAILED'
    assert result['wrong'] == 2 * (2 + 131072) and result['wrong_sizes'] == [1073741824, 4294967296]
    problems = nccl.evaluate(result, 'net', 40.0, 0.1)[0]
    assert len(problems) == 2
    assert '3 out-of-bounds values' in problems[0]
    assert '#wrong is 262148' in problems[1] and '1073741824, 4294967296' in problems[1]


def test_graph_run_with_srun_prefixes_and_min_bw_footer():
    result = parse('gb200_nvls_graph_srun.log')
    assert result['header']['graph'] == 100
    assert result['largest_size'] == 17179869184 and result['busbw'] == 611.69
    assert result['avg_status'] == 'OK' and result['transport'] == 'IBext_v8'
    assert nccl.evaluate(result, 'nvls', 500.0, 0.1) == ([], [])
    problems = nccl.evaluate(result, 'nvls', 700.0, 0.1)[0]
    assert problems == ['out-of-place busbw 611.69 GB/s at the largest size 17179869184 bytes is below 630 GB/s '
                        '(floor 700 GB/s minus 10% tolerance)']


def test_truncated_log():
    result = parse('vr200_truncated.log')
    assert result['largest_size'] == 2147483648 and result['busbw'] == 736.24
    assert result['partial_rows'] == [4294967296] and not result['concluded'] and result['out_of_bounds'] is None
    problems = nccl.evaluate(result, 'nvls', 600.0, 0.1)[0]
    text = ' '.join(problems)
    assert 'cut off at sizes 4294967296' in text
    assert 'ends before the "# Out of bounds values" footer' in text
    assert 'maxBytes 17179869184' in text


def test_no_rows_aborted_run():
    result = parse('vr200_nvls_no_rows.log')
    assert result['rows'] == [] and result['busbw'] is None and result['largest_size'] is None
    assert len(result['errors']) == 3 and 'Cuda failure 801' in result['errors'][0]
    problems = nccl.evaluate(result, 'nvls', 600.0, 0.1)[0]
    assert 'no all_reduce_perf result rows' in problems[0]
    assert any('NVLS did not initialise' in p for p in problems)
    assert any('Cuda failure 801' in p for p in problems)


def test_old_format_without_root_column_kubectl_prefixes():
    result = parse('gb200_old_format_kubectl.log')
    assert result['largest_size'] == 4294967296 and result['rows'][-1]['root'] is None
    assert result['busbw'] == 519.28 and result['wrong'] == 0
    assert result['transport'] is None and result['nvls'] is None
    problems, warnings = nccl.evaluate(result, 'nvls', 500.0, 0.1)
    assert problems == [] and 'transport cannot be verified' in warnings[0]


def test_data_check_off_warns():
    result = parse('vr200_nocheck.log')
    assert result['wrong'] is None and result['header']['validation'] == 0
    problems, warnings = nccl.evaluate(result, 'default', 600.0, 0.1)
    assert problems == [] and any('-c 0' in w for w in warnings)


def test_row_parsing_edge_cases():
    assert nccl.parse_row('# size count') is None
    assert nccl.parse_row('NCCL version 2.28.3+cuda13.0') is None
    # Per-iteration columns (-I 1) and a timestamp (-S 1): in-place values come after the 4 extra columns.
    row = nccl.parse_row('  1048576  262144  float  sum  -1  61.4  17.08  29.89  0  60.1  62.0  63.5  1.20'
                         '  61.0  17.19  30.08  0  60.0  61.9  63.1  1.10  2026-11-02 10:00:01')
    assert row['out_of_place']['busbw'] == 29.89 and row['in_place']['busbw'] == 30.08
    # getFloatStr switches to exponent notation for huge times; %6g prints big #wrong as 1e+06.
    row = nccl.parse_row('17179869184  4294967296  float  sum  -1  1.2e+07  1.43  2.50  1e+06  1.2e+07  1.43  2.50  0')
    assert row['out_of_place']['time_us'] == 1.2e7 and row['out_of_place']['wrong'] == 1000000
    assert nccl.parse_row('1048576  262144  float  sum  -1  61.4  17.08') == {'partial': True, 'size': 1048576}
    # a reduction row cut before its last value is partial, without a header too
    assert nccl.parse_row('1048576  262144  float  sum  -1  61.4  17.08  29.89  0  60.1  17.45  30.08') == {
        'partial': True, 'size': 1048576}
    assert nccl.strip_prefix('[1,12]<stderr>:  0: x') == 'x'


def test_a_memory_limited_run_ends_at_its_reduced_maxbytes_and_noise_between_rows_is_skipped():
    """nccl-tests prints ``# Reducing maxBytes to N due to memory limitation`` after the device list and then
    measures up to N; an ssh or MPI warning printed between two rows is no row and the table goes on after it."""
    lines = [line for line in read('vr200_nocheck.log').splitlines()
             if not line.strip().startswith(('8589934592', '17179869184'))]
    at = next(i for i, line in enumerate(lines) if 'out-of-place' in line)
    lines[at:at] = ['# Reducing maxBytes to 4294967296 due to memory limitation', '#']
    at = next(i for i, line in enumerate(lines) if line.strip().startswith('1073741824'))
    lines.insert(at, "Warning: Permanently added 'vr200-tray-02' (ED25519) to the list of known hosts.")
    result = nccl.parse_all_reduce('\n'.join(lines))
    assert result['header']['max_bytes'] == 4294967296 and result['header']['min_bytes'] == 1048576
    assert result['largest_size'] == 4294967296 and result['busbw'] == 755.42 and len(result['rows']) == 13
    assert not any('maxBytes' in problem for problem in nccl.evaluate(result, 'default', 600.0, 0.1)[0])


@pytest.mark.parametrize('line, root, out_busbw, in_busbw', [
    # broadcast / reduce print the root rank (0 here) where reductions print -1: 13, 15, 21 and 23 tokens
    ('1048576  262144  float  none  0  61.4  17.08  17.08  0  60.1  17.45  17.45  0', 0, 17.08, 17.45),
    ('1048576  262144  float  none  0  61.4  17.08  17.08  0  60.1  17.45  17.45  0  2026-11-02 10:00:01',
     0, 17.08, 17.45),
    ('1048576  262144  float  none  0  61.4  17.08  17.08  0  60.0  61.9  63.1  1.10'
     '  60.1  17.45  17.45  0  59.9  60.2  61.0  1.00', 0, 17.08, 17.45),
    ('1048576  262144  float  none  0  61.4  17.08  17.08  0  60.0  61.9  63.1  1.10'
     '  60.1  17.45  17.45  0  59.9  60.2  61.0  1.00  2026-11-02 10:00:01', 0, 17.08, 17.45),
    # an old release without the root column, whose time is a whole number: 12 and 14 (timestamp) tokens
    ('1048576  262144  float  sum  61  17.08  29.89  0  60  17.45  30.08  0', None, 29.89, 30.08),
    ('1048576  262144  float  sum  61  17.08  29.89  0  60  17.45  30.08  0  2026-11-02 10:00:01', None, 29.89, 30.08),
    # per-iteration columns of a reduction without the timestamp: 16 values after the root
    ('1048576  262144  float  sum  -1  61.4  17.08  29.89  0  60.1  62.0  63.5  1.20'
     '  61.0  17.19  30.08  0  60.0  61.9  63.1  1.10', -1, 29.89, 30.08),
])
def test_rows_without_a_column_header_are_read_by_their_root_value_and_width(line, root, out_busbw, in_busbw):
    row = nccl.parse_row(line)
    assert (row['root'], row['out_of_place']['busbw'], row['in_place']['busbw']) == (root, out_busbw, in_busbw)


def test_lowest_busbw_counts_when_sizes_repeat():
    text = ('#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n'
            '  1024  256  float  sum  -1  10.0  0.10  0.18  0  10.0  0.10  0.18  0\n'
            '  1024  512   half  sum  -1  10.0  0.10  0.15  0  10.0  0.10  0.16  0\n'
            '# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.1675 \n')
    result = nccl.parse_all_reduce(text)
    assert result['busbw'] == 0.15 and len(result['rows']) == 2


def test_recipe_floors():
    assert nccl.recipe_floor('nvls', 'gb200') == 500.0
    assert nccl.recipe_floor('nvls', 'vr200') == 600.0
    assert nccl.recipe_floor('net', None) == 40.0 and nccl.recipe_floor('net', 'vr200') == 40.0
    assert nccl.recipe_floor('nvls', None) is None and nccl.recipe_floor('default', 'gb200') is None


# ---- module ------------------------------------------------------------------------------------------

def test_module_pass_with_recipe_floor(run_module):
    result = run_module(nccl_result, {'path': fixture_path('nccl', 'vr200_nvls_ib_mpirun.log'),
                                      'variant': 'nvls', 'platform': 'vr200', '_ansible_check_mode': True})
    assert not result.failed and result['changed'] is False and result['passed'] is True
    assert result['busbw'] == 743.89 and result['avg_busbw'] == 489.444 and result['largest_size'] == 17179869184
    assert result['transport'] == 'IB' and result['out_of_bounds'] == 0 and result['wrong'] == 0
    assert result['min_busbw'] == 600.0 and result['threshold'] == 540.0
    assert len(result['rows']) == 15 and result['rows'][-1]['in_place_busbw'] == 740.93
    assert HOST in result['msg'] and 'OK' in result['msg']


def test_module_below_floor_and_socket(run_module):
    result = run_module(nccl_result, {'content': read('gb200_net_socket.log'), 'variant': 'net'})
    assert result.failed and result['passed'] is False and result['min_busbw'] == 40.0
    assert 'Socket transport' in result['msg'] and '11.2 GB/s' in result['msg'] and HOST in result['msg']
    assert 'content' in result['msg']


def test_module_report_only(run_module):
    result = run_module(nccl_result, {'path': fixture_path('nccl', 'gb200_net_wrong.log'), 'variant': 'net',
                                      'fail_on_error': False})
    assert not result.failed and result['passed'] is False and result['wrong'] == 262148
    assert any('out-of-bounds' in text for text in result.warning_texts)


def test_module_tolerance_boundary(run_module):
    path = fixture_path('nccl', 'gb200_nvls_graph_srun.log')
    # 611.69 >= 680 * 0.9 = 612 is false; >= 678 * 0.9 = 610.2 is true.
    assert run_module(nccl_result, {'path': path, 'min_busbw': 680, 'variant': 'nvls'}).failed
    assert not run_module(nccl_result, {'path': path, 'min_busbw': 678, 'variant': 'nvls'}).failed
    assert not run_module(nccl_result, {'path': path, 'min_busbw': 611.69, 'tolerance': 0}).failed
    assert run_module(nccl_result, {'path': path, 'min_busbw': 611.7, 'tolerance': 0}).failed


def test_module_no_rows_and_missing_file(run_module, tmp_path):
    result = run_module(nccl_result, {'path': fixture_path('nccl', 'vr200_nvls_no_rows.log'), 'variant': 'nvls',
                                      'platform': 'vr200'})
    assert result.failed and 'no all_reduce_perf result rows' in result['msg'] and result['busbw'] is None
    missing = str(tmp_path / 'nope.log')
    result = run_module(nccl_result, {'path': missing, 'min_busbw': 10})
    assert result.failed and 'cannot read the NCCL log %s' % missing in result['msg'] and HOST in result['msg']
    result = run_module(nccl_result, {'path': str(tmp_path), 'min_busbw': 10})
    assert result.failed and 'is a directory' in result['msg']
    empty = tmp_path / 'empty.log'
    empty.write_text('')
    result = run_module(nccl_result, {'path': str(empty), 'min_busbw': 10})
    assert result.failed and 'no all_reduce_perf result rows' in result['msg']


@pytest.mark.parametrize('args, expected', [
    ({'content': 'x'}, 'no recipe floor for variant default'),
    ({'content': 'x', 'variant': 'nvls'}, 'give option min_busbw'),
    ({'content': 'x', 'min_busbw': 10, 'tolerance': 1.5}, 'option tolerance must be a fraction'),
    ({'content': 'x', 'min_busbw': -1}, 'option min_busbw must be a positive'),
    ({'content': 'x', 'path': '/x', 'min_busbw': 1}, 'mutually exclusive'),
    ({'min_busbw': 1}, 'one of the following is required: path, content'),
    ({'content': 'x', 'min_busbw': 'fast'}, 'min_busbw'),
    ({'content': 'x', 'variant': 'ring', 'min_busbw': 1}, 'value of variant must be one of'),
    ({'content': 'x', 'platform': 'h100', 'variant': 'nvls'}, 'value of platform must be one of'),
])
def test_module_bad_options(run_module, args, expected):
    result = run_module(nccl_result, args)
    assert result.failed and expected in result['msg']
    assert 'Traceback' not in result['msg']
