#!/usr/bin/env python3
"""Where the suite's time went: output/test-times.md (and .json) from what tools/run-tests.sh and .ci/run leave.

Reads ``<out>/test-parts.tsv`` (one line a part of `make test`: name, start, end, exit status; epoch seconds),
``<out>/ci-parts.tsv`` where .ci/run wrote it (setup, make test, make matrix, the same columns) and every
``<out>/junit-<part>.xml`` (pytest's JUnit XML: each test's setup + call + teardown time, pytest's default
``junit_duration_report = total``). Writes a table of the parts (wall time, exit status, tests run, the sum of the
test times), the molecule scenarios' share of the lab part, and the ``--slowest`` (40) slowest tests with their part.

Usage: tools/test_times.py [--out output] [--slowest 40]   (standard library only)
"""
import argparse
import json
import pathlib
import sys
import xml.etree.ElementTree as ET


def read_parts(path):
    """[(name, start, end, rc)] of a parts file; [] where there is none."""
    rows = []
    if path.is_file():
        for line in path.read_text().splitlines():
            fields = line.split('\t')
            if len(fields) == 4 and fields[1].isdigit() and fields[2].isdigit():
                rows.append((fields[0], int(fields[1]), int(fields[2]), fields[3]))
    return rows


def read_junit(path):
    """[(test id, seconds, outcome)] of one JUnit XML file (pytest's)."""
    tests = []
    try:
        root = ET.parse(str(path)).getroot()
    except (ET.ParseError, OSError):
        return tests
    for case in root.iter('testcase'):
        cls, name = case.get('classname', ''), case.get('name', '')
        outcome = 'passed'
        for child in case:
            if child.tag in ('failure', 'error'):
                outcome = 'failed'
            elif child.tag == 'skipped':
                outcome = 'skipped'
        test_id = '%s::%s' % (cls.replace('.', '/') + '.py', name) if cls else name
        tests.append((test_id, float(case.get('time') or 0), outcome))
    return tests


def collect(out):
    parts = [dict(name=n, start=s, end=e, seconds=e - s, rc=rc, kind='make test')
             for n, s, e, rc in read_parts(out / 'test-parts.tsv')]
    ci = [dict(name=n, start=s, end=e, seconds=e - s, rc=rc, kind='.ci/run')
          for n, s, e, rc in read_parts(out / 'ci-parts.tsv')]
    tests = []
    for part in parts:
        junit = read_junit(out / ('junit-%s.xml' % part['name']))
        run = [t for t in junit if t[2] != 'skipped']
        part.update(tests=len(run), test_seconds=round(sum(t[1] for t in junit), 1))
        tests.extend(dict(id=t[0], seconds=round(t[1], 1), outcome=t[2], part=part['name']) for t in junit)
    molecule = [t for t in tests if t['id'].startswith('tests/molecule/')]
    return dict(ci=ci, parts=parts, tests=tests,
                molecule=dict(tests=len(molecule), seconds=round(sum(t['seconds'] for t in molecule), 1)))


def minutes(seconds):
    return '%d s (%d min %02d s)' % (seconds, seconds // 60, seconds % 60)


def render(data):
    lines = ['# Where the suite\'s time went', '']
    starts = [p['start'] for p in data['ci'] + data['parts']]
    if data['ci']:
        lines += ['| .ci/run | wall time | exit status |', '|---|---|---|']
        lines += ['| %s | %s | %s |' % (p['name'], minutes(p['seconds']), p['rc']) for p in data['ci']]
        total = max(p['end'] for p in data['ci']) - min(p['start'] for p in data['ci'])
        lines += ['| all | %s | |' % minutes(total), '']
    if data['parts']:
        origin = min(starts)
        lines += ['| make test part | starts at | wall time | exit status | tests run | sum of test times |',
                  '|---|---|---|---|---|---|']
        for p in data['parts']:
            lines.append('| %s | +%d s | %s | %s | %d | %.0f s |' % (
                p['name'], p['start'] - origin, minutes(p['seconds']), p['rc'], p['tests'], p['test_seconds']))
        if data['molecule']['tests']:
            lines.append('| (molecule, in lab) | | | | %d | %.0f s |' % (
                data['molecule']['tests'], data['molecule']['seconds']))
        lines.append('')
    ranked = data['slowest']
    if ranked:
        lines += ['The %d slowest tests (setup + call + teardown):' % len(ranked), '',
                  '| seconds | part | test |', '|---|---|---|']
        lines += ['| %.1f | %s | `%s` |' % (t['seconds'], t['part'], t['id']) for t in ranked]
        lines.append('')
    return '\n'.join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--out', default='output', type=pathlib.Path)
    parser.add_argument('--slowest', default=40, type=int)
    args = parser.parse_args(argv)
    data = collect(args.out)
    if not data['parts'] and not data['ci']:
        print('no %s/test-parts.tsv or ci-parts.tsv: nothing to report' % args.out, file=sys.stderr)
        return 1
    data['slowest'] = sorted(data.pop('tests'), key=lambda t: -t['seconds'])[:args.slowest]
    text = render(data)
    (args.out / 'test-times.md').write_text(text)
    (args.out / 'test-times.json').write_text(json.dumps(data, indent=1, sort_keys=True) + '\n')
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
