# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure parser and judge for nccl-tests ``all_reduce_perf`` logs (module gpu_tray.cluster.nccl_result).

The format is the one ``NVIDIA/nccl-tests`` prints (``src/util.cu``, nccl-tests 2.x):

* a header ``# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) ... validation: 1 graph: 0``,
  ``#  Rank  N Group  G Pid P on <host> device D [bus] <name>`` lines, optionally
  ``# Reducing maxBytes to N due to memory limitation``;
* a column header naming ``size count type redop root time algbw busbw #wrong`` twice (out-of-place,
  then in-place; older releases have no ``root`` column, ``-I 1`` adds four per-iteration columns after
  each ``#wrong``, ``-S 1`` a trailing timestamp);
* one row per message size: ``%12li  %12li  %8s  %6s  %6s`` then ``  %7s  %6s  %6s  %6g`` per placement
  (``N/A`` instead of the count when data checking is off, ``-c 0``);
* the footer ``# Out of bounds values : %d OK|FAILED``, ``# Avg bus bandwidth    : %g [OK|FAILED]`` and
  ``# Collective test concluded: <program>``.

NCCL itself (``NCCL_DEBUG=INFO``) adds ``<host>:<pid>:<tid> [<dev>] NCCL INFO Using network <name>`` lines
(``IB``, ``IBext_v8``, ``Socket``, ``AWS Libfabric`` ...) and, when NVLink SHARP is usable,
``NVLS multicast support is available on dev N``.

Like AICR (``validators/performance/nccl_all_reduce_bw_constraint.go``) the bandwidth judged is the
out-of-place busbw of the largest message size, never the ``Avg bus bandwidth`` (a mean over all sizes),
compared with a floor minus a tolerance (10 %).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re

# Recipe floors, GB/s busbw (AICR recipes: gb200 nccl-all-reduce-bw-nvls >= 500 and -net >= 40;
# vr200-rke2-ubuntu-training nccl-all-reduce-bw-nvls >= 600). A net floor applies whatever the platform.
RECIPE_FLOORS = {
    ('gb200', 'nvls'): 500.0,
    ('vr200', 'nvls'): 600.0,
    ('gb200', 'net'): 40.0,
    ('vr200', 'net'): 40.0,
    (None, 'net'): 40.0,
}
VARIANTS = ('nvls', 'net', 'default')
PLATFORMS = ('gb200', 'vr200')

# Line prefixes that launchers add: Open MPI --tag-output ``[1,0]<stdout>:``, MPICH -prepend-rank ``[0] ``,
# Slurm srun -l ``0: ``, kubectl logs --prefix ``[pod/name/container] ``, kubectl logs --timestamps
# ``2026-11-02T10:00:00.123456789Z ``.
_PREFIXES = (
    re.compile(r'^\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:\s?'),
    re.compile(r'^\[pod/[^\]]*\]\s'),
    re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)\s'),
    re.compile(r'^\s*\d+:\s'),
    re.compile(r'^\[\d+\]\s'),
)
_INT = re.compile(r'^\d+$')
_WORD = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
_NUMBER = re.compile(r'^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$')
_HEADER = re.compile(r'^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)')
_HEADER_FIELDS = {
    'validation': re.compile(r'\bvalidation:\s*(\d+)'),
    'graph': re.compile(r'\bgraph:\s*(\d+)'),
}
_REDUCED = re.compile(r'^#\s*Reducing maxBytes to (\d+)')
_RANK = re.compile(r'^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device')
_COLUMNS = re.compile(r'^#\s*size\s+count\s+type\s+redop\b')
_OOB = re.compile(r'^#\s*Out of bounds values\s*:\s*(\d+)\s*(OK|FAILED)?')
_AVG = re.compile(r'^#\s*Avg bus bandwidth\s*:\s*(\S+)\s*(OK|FAILED)?')
_CONCLUDED = re.compile(r'^#\s*Collective test concluded')
_NETWORK = re.compile(r'NCCL INFO Using network (.+?)\s*$')
_NVLS_OK = re.compile(r'NCCL INFO NVLS multicast support is available')
_NCCL_ERROR = re.compile(r'NCCL WARN|Test (?:NCCL |CUDA )?failure|Cuda failure|NCCL error')


def strip_prefix(line):
    """Remove launcher prefixes (any combination, outermost first) from one log line."""
    changed = True
    while changed:
        changed = False
        for pattern in _PREFIXES:
            match = pattern.match(line)
            if match and match.end() > 0:
                line = line[match.end():]
                changed = True
    return line


def _number(token):
    return float(token) if _NUMBER.match(token) else None


def _placement(tokens):
    """``time algbw busbw #wrong`` -> dict, or None when a value is not a number (a cut-off row)."""
    if len(tokens) < 4:
        return None
    time_us, algbw, busbw = (_number(token) for token in tokens[:3])
    if None in (time_us, algbw, busbw):
        return None
    if tokens[3] == 'N/A':
        wrong = None
    else:
        wrong_value = _number(tokens[3])
        if wrong_value is None:
            return None
        wrong = int(wrong_value)
    return dict(time_us=time_us, algbw=algbw, busbw=busbw, wrong=wrong)


def parse_row(line, has_root=None, per_iter=None):
    """Parse one result row (prefix already stripped). Returns a dict or None when ``line`` is no row.

    A row that starts like one but is cut off (a truncated log) returns ``{'partial': True, 'size': ...}``.
    ``has_root`` / ``per_iter`` come from the column header; None means unknown (no header seen), then
    the ``root`` column is recognised by its value (-1 for reductions; an old release's time is never
    negative) and per-iteration columns by the number of values.
    """
    tokens = line.split()
    if len(tokens) < 5 or not (_INT.match(tokens[0]) and _INT.match(tokens[1])):
        return None
    if not (_WORD.match(tokens[2]) and _WORD.match(tokens[3])):
        return None
    size, count = int(tokens[0]), int(tokens[1])
    if has_root is None:
        has_root = tokens[4] == '-1' or (re.match(r'^-?\d+$', tokens[4]) is not None and len(tokens) in (13, 15, 21, 23))
    values = tokens[5:] if has_root else tokens[4:]
    if per_iter is None:
        per_iter = len(values) >= 16
    width = 8 if per_iter else 4
    out_of_place = _placement(values[:4])
    in_place = _placement(values[width:width + 4])
    if out_of_place is None or in_place is None:
        return dict(partial=True, size=size)
    return dict(size=size, count=count, type=tokens[2], redop=tokens[3],
                root=int(tokens[4]) if has_root else None,
                out_of_place=out_of_place, in_place=in_place)


def parse_all_reduce(text):
    """Parse an all_reduce_perf log (any launcher prefixes, NCCL_DEBUG lines mixed in).

    Returns a dict: ``rows`` (complete result rows in log order), ``partial_rows`` (sizes of cut-off rows),
    ``largest_size``, ``busbw`` (out-of-place busbw at the largest size; the lowest one when several rows
    share that size, e.g. ``-d all``), ``in_place_busbw``, ``avg_busbw``, ``avg_status`` (OK/FAILED/None),
    ``out_of_bounds``, ``wrong`` (sum of #wrong, None when every row says N/A), ``wrong_sizes``,
    ``transport`` (Socket when any rank fell back to it, else the first name), ``transports``,
    ``nccl_info`` (NCCL_DEBUG=INFO lines present), ``nvls`` (True when NVLS multicast was reported
    available, False when INFO lines exist without it, None without INFO lines), ``header`` (min/max bytes,
    graph, validation, nThread, nGpus), ``ranks``, ``hosts``, ``concluded`` (footer seen), ``errors``
    (NCCL WARN / test failure lines, at most 20).
    """
    rows, partial, transports, errors, hosts = [], [], [], [], []
    header = {}
    ranks = set()
    has_root = per_iter = None
    out_of_bounds = avg_busbw = avg_status = oob_status = None
    concluded = nccl_info = nvls_seen = False
    for raw in (text or '').splitlines():
        line = strip_prefix(raw.rstrip('\r'))
        stripped = line.strip()
        if not stripped:
            continue
        if 'NCCL INFO' in stripped:
            nccl_info = True
            match = _NETWORK.search(stripped)
            if match and match.group(1) not in transports:
                transports.append(match.group(1))
            if _NVLS_OK.search(stripped):
                nvls_seen = True
            continue
        if _NCCL_ERROR.search(stripped):
            if len(errors) < 20:
                errors.append(stripped)
            continue
        if stripped.startswith('#'):
            match = _HEADER.match(stripped)
            if match:
                header.update(nthread=int(match.group(1)), ngpus=int(match.group(2)),
                              min_bytes=int(match.group(3)), max_bytes=int(match.group(4)))
                for key, pattern in _HEADER_FIELDS.items():
                    found = pattern.search(stripped)
                    header[key] = int(found.group(1)) if found else None
                continue
            match = _REDUCED.match(stripped)
            if match:
                header['max_bytes'] = int(match.group(1))
                continue
            match = _RANK.match(stripped)
            if match:
                ranks.add(int(match.group(1)))
                if match.group(2) not in hosts:
                    hosts.append(match.group(2))
                continue
            if _COLUMNS.match(stripped):
                columns = stripped.lstrip('#').split()
                has_root = 'root' in columns
                per_iter = 'i_min' in columns
                continue
            match = _OOB.match(stripped)
            if match:
                out_of_bounds, oob_status = int(match.group(1)), match.group(2)
                continue
            match = _AVG.match(stripped)
            if match:
                avg_busbw, avg_status = _number(match.group(1)), match.group(2)
                continue
            if _CONCLUDED.match(stripped):
                concluded = True
            continue
        row = parse_row(stripped, has_root, per_iter)
        if row is None:
            continue
        if row.get('partial'):
            partial.append(row['size'])
        else:
            rows.append(row)
    result = dict(rows=rows, partial_rows=partial, header=header, ranks=len(ranks), hosts=hosts,
                  out_of_bounds=out_of_bounds, out_of_bounds_status=oob_status,
                  avg_busbw=avg_busbw, avg_status=avg_status,
                  concluded=concluded or out_of_bounds is not None,
                  transports=transports, nccl_info=nccl_info, errors=errors,
                  largest_size=None, busbw=None, in_place_busbw=None, wrong=None, wrong_sizes=[])
    result['transport'] = 'Socket' if 'Socket' in transports else (transports[0] if transports else None)
    result['nvls'] = True if nvls_seen else (False if nccl_info else None)
    if rows:
        largest = max(row['size'] for row in rows)
        at_largest = [row for row in rows if row['size'] == largest]
        result['largest_size'] = largest
        result['busbw'] = min(row['out_of_place']['busbw'] for row in at_largest)
        result['in_place_busbw'] = min(row['in_place']['busbw'] for row in at_largest)
        counted = [row for row in rows if row['out_of_place']['wrong'] is not None or row['in_place']['wrong'] is not None]
        if counted:
            result['wrong'] = sum((row['out_of_place']['wrong'] or 0) + (row['in_place']['wrong'] or 0) for row in counted)
            result['wrong_sizes'] = sorted(set(
                row['size'] for row in counted if (row['out_of_place']['wrong'] or 0) + (row['in_place']['wrong'] or 0) > 0))
    return result


def recipe_floor(variant, platform=None):
    """Default busbw floor (GB/s) of a recipe for ``variant`` on ``platform``; None when the recipes set none."""
    return RECIPE_FLOORS.get((platform, variant), RECIPE_FLOORS.get((None, variant)))


def _gb(value):
    return '%g GB/s' % value


def evaluate(result, variant, min_busbw, tolerance):
    """Judge a parse_all_reduce() result. Returns (problems, warnings), lists of sentences.

    Fails when: no complete row; the log ends before the footer or before maxBytes (truncated run);
    busbw < min_busbw * (1 - tolerance); out-of-bounds values; a non-zero #wrong; the Socket transport for
    ``nvls``/``net``; no NVLS for ``nvls`` when the log has NCCL INFO lines; NCCL/CUDA failure lines.
    """
    problems, warnings = [], []
    rows = result['rows']
    if not rows:
        problems.append('the log has no all_reduce_perf result rows (a row is "size count type redop root time '
                        'algbw busbw #wrong ..."): the test did not run or this is not its output')
    threshold = None
    if min_busbw is not None:
        threshold = min_busbw * (1 - tolerance)
    if rows and threshold is not None and result['busbw'] < threshold:
        problems.append('out-of-place busbw %s at the largest size %d bytes is below %s (floor %s minus %g%% '
                        'tolerance)' % (_gb(result['busbw']), result['largest_size'], _gb(round(threshold, 3)),
                                        _gb(min_busbw), tolerance * 100))
    if result['partial_rows']:
        problems.append('result rows cut off at sizes %s (truncated log)'
                        % ', '.join(str(size) for size in result['partial_rows']))
    if rows and not result['concluded']:
        problems.append('the log ends before the "# Out of bounds values" footer (truncated log, or the test '
                        'crashed after size %d bytes)' % result['largest_size'])
    max_bytes = result['header'].get('max_bytes')
    if rows and max_bytes and result['largest_size'] < max_bytes:
        problems.append('the largest size measured is %d bytes, the run asked for maxBytes %d (truncated run)'
                        % (result['largest_size'], max_bytes))
    if result['out_of_bounds']:
        problems.append('%d out-of-bounds values (data corruption reported by nccl-tests)' % result['out_of_bounds'])
    if result['wrong']:
        problems.append('#wrong is %d (wrong elements at sizes %s): the reduction produced wrong data'
                        % (result['wrong'], ', '.join(str(size) for size in result['wrong_sizes'])))
    if rows and result['wrong'] is None:
        warnings.append('#wrong is N/A on every row: the run did not check data (-c 0)')
    if variant in ('nvls', 'net'):
        if 'Socket' in result['transports']:
            problems.append('NCCL used the Socket transport (TCP fallback, "Using network Socket") instead of '
                            'InfiniBand/RDMA; check the IB devices in the pod (NCCL_IB_HCA, rdma resources, '
                            'SR-IOV VFs)')
        elif result['transport'] is None:
            warnings.append('no "NCCL INFO Using network" line: the transport cannot be verified (run with '
                            'NCCL_DEBUG=INFO)')
    if variant == 'nvls' and result['nvls'] is False:
        problems.append('no "NVLS multicast support is available" line although NCCL INFO lines are present: '
                        'NVLS did not initialise (a ComputeDomain/IMEX channel is needed for multi-node NVLink)')
    if result['errors']:
        problems.append('NCCL/CUDA failures in the log: %s' % ' | '.join(result['errors'][:3]))
    return problems, warnings
