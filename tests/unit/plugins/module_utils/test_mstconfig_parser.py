# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""mstconfig query output, with and without -e, with '*' modified markers."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpu_tray.cluster.plugins.module_utils import mstconfig as m


@pytest.mark.parametrize('raw, label, value', [
    ('True(1)', 'True', 1), ('False(0)', 'False', 0), ('IB(1)', 'IB', 1), ('ETH(2)', 'ETH', 2),
    ('_256KB(1)', '_256KB', 1), ('16', None, 16), ('0x10', None, 16), ('Array[0..7]', None, None),
])
def test_parse_value(raw, label, value):
    parsed = m.parse_value(raw)
    assert parsed['raw'] == raw and parsed['label'] == label and parsed['value'] == value


def test_extended_ok(fixture_text):
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'cx7_ok_e.txt'))
    assert parsed['columns'] == ['default', 'current', 'next_boot'] and parsed['extended']
    assert parsed['device']['device'] == '0000:03:00.0'
    assert parsed['device']['device_type'] == 'ConnectX7'
    vfs = parsed['params']['NUM_OF_VFS']
    assert (vfs['default']['value'], vfs['current']['value'], vfs['next_boot']['value']) == (16, 16, 16)
    assert not vfs['modified']
    assert parsed['params']['SRIOV_EN']['current']['label'] == 'True'
    assert parsed['params']['LINK_TYPE_P1']['next_boot']['raw'] == 'IB(1)'
    # values glued together by a long label keep the raw text instead of a wrong split
    atomic = parsed['params']['PCI_ATOMIC_MODE']
    assert atomic['current']['raw'].startswith('PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)PCI')
    assert m.check_firmware(parsed, min_num_vfs=16, require_sriov=True, link_type='IB') == []


def test_extended_star_next_boot_lower(fixture_text):
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'cx7_nextboot8_e.txt'))
    vfs = parsed['params']['NUM_OF_VFS']
    assert vfs['modified'] is True
    assert vfs['current']['value'] == 16 and vfs['next_boot']['value'] == 8
    problems = m.check_firmware(parsed, min_num_vfs=16)
    assert [(p['param'], p['column'], p['found']) for p in problems] == [('NUM_OF_VFS', 'next_boot', '8')]
    assert 'current=16' in problems[0]['detail'] and 'next boot=8' in problems[0]['detail']
    assert m.check_firmware(parsed, min_num_vfs=8) == []


def test_extended_sriov_off_and_eth(fixture_text):
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'cx7_sriov_off_eth_e.txt'))
    problems = m.check_firmware(parsed, min_num_vfs=1, require_sriov=True, link_type='IB')
    found = sorted((p['param'], p['column']) for p in problems)
    assert found == [('LINK_TYPE_P1', 'current'), ('LINK_TYPE_P1', 'next_boot'),
                     ('NUM_OF_VFS', 'current'), ('NUM_OF_VFS', 'next_boot'),
                     ('SRIOV_EN', 'current'), ('SRIOV_EN', 'next_boot')]
    # defaults are not judged: only what runs now and what runs after the next boot
    assert m.check_firmware(parsed, require_sriov=False, link_type='ETH') == []


def test_without_e(fixture_text):
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'cx7_ok_no_e.txt'))
    assert parsed['columns'] == ['next_boot'] and not parsed['extended']
    vfs = parsed['params']['NUM_OF_VFS']
    assert vfs['current'] is None and vfs['next_boot']['value'] == 16
    assert m.check_firmware(parsed, min_num_vfs=16, link_type='IB') == []
    bad = m.parse_mstconfig(fixture_text('mstconfig', 'cx7_nextboot8_no_e.txt'))
    assert bad['params']['NUM_OF_VFS']['modified'] is True
    assert [(p['param'], p['column']) for p in m.check_firmware(bad, min_num_vfs=16)] == [('NUM_OF_VFS', 'next_boot')]


def test_bluefield_dpu_two_ports(fixture_text):
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'bf3_dpu_e.txt'))
    assert parsed['params']['INTERNAL_CPU_MODEL']['current']['label'] == 'EMBEDDED_CPU'
    problems = m.check_firmware(parsed, link_type='IB', require_sriov=False)
    assert sorted(set(p['param'] for p in problems)) == ['LINK_TYPE_P1', 'LINK_TYPE_P2']


def test_open_error(fixture_text):
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'open_error.txt'))
    assert parsed['errors'] == ['Failed to open the device'] and parsed['params'] == {}


@pytest.mark.parametrize('text', ['mstconfig: command not found\n', 'Configurations:      Default      Whatever\n'],
                         ids=['garbage', 'unknown-column'])
def test_garbage_and_an_unknown_column_raise(text):
    with pytest.raises(m.MstconfigParseError):
        m.parse_mstconfig(text)


def test_missing_params_are_problems():
    parsed = m.parse_mstconfig('Configurations:      Next Boot\n         NUM_OF_PF      1\n')
    problems = m.check_firmware(parsed, min_num_vfs=1, require_sriov=True, link_type='IB')
    assert sorted(p['param'] for p in problems) == ['NUM_OF_VFS', 'SRIOV_EN']   # no LINK_TYPE_P*: preconfigured


@pytest.mark.parametrize('text', [
    'Configurations:                              Default         Current         Next Boot\n',
    '\nDevice #1:\n----------\n\nDevice type:    ConnectX7\nDevice:         0000:03:00.0\n\n'
    'Configurations:                              Default         Current         Next Boot\n'
    "The '*' shows parameters with next value different from default/current value.\n",
])
def test_table_without_parameters_cannot_pass(text):
    """A cut-off table fails even with require_sriov=false and no min_num_vfs: nothing was verified."""
    parsed = m.parse_mstconfig(text)
    assert parsed['params'] == {}
    problems = m.check_firmware(parsed, min_num_vfs=None, require_sriov=False, link_type=None)
    assert [p['param'] for p in problems] == [m.EMPTY_TABLE]
    assert 'without parameters' in problems[0]['detail']
    assert [p['param'] for p in m.check_firmware(parsed, min_num_vfs=16)] == [m.EMPTY_TABLE]


def test_partial_table_with_errors_cannot_pass(fixture_text):
    """-E- lines printed with (part of) a table: the values read may be incomplete, so the check fails even
    though everything it did read is fine (LINK_TYPE_P1 is cut off, which alone would count as preconfigured)."""
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'cx7_partial_error_e.txt'))
    assert parsed['errors'] == ['Failed to query device current configuration']
    assert parsed['params']['NUM_OF_VFS']['current']['value'] == 16 and 'LINK_TYPE_P1' not in parsed['params']
    for options in ({'min_num_vfs': 16, 'link_type': 'IB'}, {'require_sriov': False}):
        problems = m.check_firmware(parsed, **options)
        assert [p['param'] for p in problems] == [m.QUERY_ERRORS], options
        assert problems[0]['unreadable'] is True
        assert 'Failed to query device current configuration' in problems[0]['detail']
        assert 'may be partial' in problems[0]['detail']


def test_errors_without_a_table_are_both_problems(fixture_text):
    parsed = m.parse_mstconfig('Configurations:      Next Boot\n-E- Failed to open the device\n')
    assert [p['param'] for p in m.check_firmware(parsed)] == [m.EMPTY_TABLE, m.QUERY_ERRORS]


@pytest.mark.parametrize('raw, what', [('N/A', 'a number'), ('Array[0..7]', 'a number'), ('-', 'a number')])
def test_unreadable_num_of_vfs_fails_and_says_so(raw, what):
    parsed = m.parse_mstconfig('Configurations:  Default  Current  Next Boot\n'
                               '   NUM_OF_VFS   16   %s   16\n   SRIOV_EN   True(1)   True(1)   True(1)\n' % raw)
    problems = m.check_firmware(parsed, min_num_vfs=1)
    assert [(p['param'], p['column'], p['found'], p['unreadable']) for p in problems] == [
        ('NUM_OF_VFS', 'current', raw, True)]
    assert problems[0]['detail'] == "cannot read NUM_OF_VFS (current): %r is not %s" % (raw, what)
    assert m.check_firmware(parsed) == []            # NUM_OF_VFS not asked for: not read


@pytest.mark.parametrize('raw, ok', [('True(1)', True), ('1', True), ('False(0)', False), ('0', False),
                                     ('Enabled(1)', None), ('2', None), ('yes', None)])
def test_sriov_en_values(raw, ok):
    parsed = m.parse_mstconfig('Configurations:   Next Boot\n   SRIOV_EN   %s\n' % raw)
    problems = m.check_firmware(parsed)
    if ok:
        assert problems == []
    elif ok is False:
        assert [(p['param'], p['column'], p['found']) for p in problems] == [('SRIOV_EN', 'next_boot', raw)]
        assert 'SR-IOV disabled' in problems[0]['detail'] and not problems[0].get('unreadable')
    else:
        assert [p['param'] for p in problems] == ['SRIOV_EN'] and problems[0]['unreadable']
        assert problems[0]['detail'].startswith('cannot read SRIOV_EN (next boot)')
    assert m.check_firmware(parsed, require_sriov=False) == []


@pytest.mark.parametrize('raw, link', [('IB(1)', 'IB'), ('ETH(2)', 'ETH'), ('1', 'IB'), ('2', 'ETH'),
                                       ('VPI(3)', None), ('3', None), ('0', None)])
def test_link_type_values_labelled_or_not(raw, link):
    """Unlabelled 1/2 are IB/ETH (the sriov-network-operator's reading); anything else cannot be read."""
    parsed = m.parse_mstconfig('Configurations:   Default   Current   Next Boot\n'
                               '   LINK_TYPE_P1   IB(1)   %s   IB(1)\n' % raw)
    for wanted in ('IB', 'ETH'):
        problems = m.check_firmware(parsed, require_sriov=False, link_type=wanted)
        current = [p for p in problems if p['column'] == 'current']
        if link == wanted:
            assert current == []
        elif link is None:
            assert current[0]['unreadable'] and current[0]['detail'].startswith('cannot read LINK_TYPE_P1 (current)')
        else:
            assert current[0]['found'] == raw and current[0]['expected'] == wanted and not current[0].get('unreadable')
        # the next-boot IB(1) is judged too
        assert bool([p for p in problems if p['column'] == 'next_boot']) is (wanted != 'IB')


def test_bare_configurations_header_is_the_next_boot_column():
    """Some mstflint versions print a bare 'Configurations:' header over a single value column."""
    parsed = m.parse_mstconfig('Device:   0000:03:00.0\n\nConfigurations:\n'
                               '        NUM_OF_VFS         8\n        SRIOV_EN           True(1)\n')
    assert parsed['columns'] == ['next_boot'] and parsed['extended'] is False
    assert parsed['params']['NUM_OF_VFS']['next_boot']['value'] == 8 and parsed['params']['NUM_OF_VFS']['current'] is None
    assert [(p['param'], p['column']) for p in m.check_firmware(parsed, min_num_vfs=16)] == [('NUM_OF_VFS', 'next_boot')]


@pytest.mark.parametrize('header', ['Configurations: Default Current Next Boot',
                                    'Configurations:  Default  Current  Next   Boot',
                                    'Configurations:\tDefault\tCurrent\tNext Boot'])
def test_header_columns_one_space_apart(header):
    parsed = m.parse_mstconfig(header + '\n  NUM_OF_VFS 16 16 8\n')
    assert parsed['columns'] == ['default', 'current', 'next_boot']
    assert [parsed['params']['NUM_OF_VFS'][c]['raw'] for c in parsed['columns']] == ['16', '16', '8']


@pytest.mark.parametrize('rest, count, values', [
    ('16  16  8', 3, ['16', '16', '8']),
    ('16 16 8', 3, ['16', '16', '8']),                        # columns one space apart
    ('16  16 8', 3, ['16', '16', '8']),                       # mixed
    ('Array [0..7]  Array [0..7]  x', 3, ['Array [0..7]', 'Array [0..7]', 'x']),   # a value with a space
    ('Array [0..7]', 1, ['Array [0..7]']),
    ('A B C D', 3, ['A B C D'] * 3),                          # ambiguous: every column keeps the whole text
    ('16', 3, ['16'] * 3),
])
def test_split_values(rest, count, values):
    assert m.split_values(rest, count) == values


def test_error_lines_and_usage_errors(fixture_text):
    assert m.error_lines(fixture_text('mstconfig', 'open_error.txt')) == ['Failed to open the device']
    assert m.error_lines('-W- something\n-E- invalid argument: -e\n-E-\n') == ['invalid argument: -e']
    assert m.error_lines(None) == [] and m.error_lines(fixture_text('mstconfig', 'cx7_ok_e.txt')) == []
    assert m.is_usage_error(['invalid argument: -e'])
    assert not m.is_usage_error(['Failed to open the device'])
    assert not m.is_usage_error([])


def test_summarise(fixture_text):
    flat = m.summarise(m.parse_mstconfig(fixture_text('mstconfig', 'cx7_nextboot8_e.txt')))
    assert flat['NUM_OF_VFS'] == {'modified': True, 'default': '16', 'current': '16', 'next_boot': '8'}


_param_name = st.from_regex(r'[A-Z][A-Z0-9_]{2,30}', fullmatch=True)
_word = st.one_of(
    st.integers(min_value=0, max_value=4096).map(str),
    st.tuples(st.sampled_from(['True', 'False', 'IB', 'ETH', 'DISABLED', 'ENABLED', '_256KB', 'ECPF']),
              st.integers(min_value=0, max_value=15)).map(lambda t: '%s(%d)' % t),
    st.sampled_from(['Array[0..7]', 'N/A', '-']),
)
# values with one inner space (never two: that is a column gap), e.g. "Array [0..7]"
_value = st.one_of(_word, st.tuples(_word, _word).map(' '.join))
_gap = st.integers(min_value=1, max_value=12).map(lambda n: ' ' * n)


@given(st.dictionaries(_param_name, st.tuples(st.booleans(), _value, _value, _value, _gap, _gap, _gap),
                       min_size=1, max_size=15),
       _gap, _gap, st.booleans())
def test_rendered_tables_parse_exactly_or_not_at_all(table, head_gap, name_gap, extended):
    """Any table in mstconfig's layout - columns one or more spaces apart, values with an inner space -
    parses back exactly whenever the line can be read unambiguously (every gap two or more spaces, or no
    value with a space); otherwise every column keeps the whole text, so no wrong value is ever read."""
    header = 'Configurations:' + head_gap + (('Default' + head_gap + 'Current' + head_gap + 'Next Boot')
                                             if extended else 'Next Boot')
    lines = ['', 'Device #1:', '----------', '', 'Device type:    ConnectX7', 'Device:         0000:03:00.0', '',
             header]
    for name, (star, default, current, next_boot, gap1, gap2, _gap3) in table.items():
        values = [default, current, next_boot] if extended else [next_boot]
        gaps = [gap1, gap2][:len(values) - 1]
        row = values[0] + ''.join(gap + value for gap, value in zip(gaps, values[1:]))
        lines.append(('*' if star else ' ') + '        ' + name + name_gap + row + '   ')
    parsed = m.parse_mstconfig('\n'.join(lines) + '\n')
    assert parsed['extended'] is extended
    assert sorted(parsed['params']) == sorted(table)
    for name, (star, default, current, next_boot, gap1, gap2, _gap3) in table.items():
        entry = parsed['params'][name]
        assert entry['modified'] is star
        wanted = [default, current, next_boot] if extended else [next_boot]
        gaps = [gap1, gap2][:len(wanted) - 1]
        row = wanted[0] + ''.join(gap + value for gap, value in zip(gaps, wanted[1:]))
        got = [entry[column]['raw'] for column in parsed['columns']]
        if all(len(gap) >= 2 for gap in gaps) or not any(' ' in value for value in wanted):
            assert got == wanted
        else:                                   # one-space gaps AND a value with a space: exact or not at all
            assert got in (wanted, [row] * len(wanted))
        if not extended:
            assert entry['current'] is None and entry['default'] is None


@given(st.tuples(_value, _value, _value), _gap, _gap)
def test_unreadable_columns_never_pass_a_check(values, gap1, gap2):
    """Whatever the layout, NUM_OF_VFS passes min_num_vfs=16 only when both judged columns really hold a
    number >= 16: an ambiguous or unparsable line fails the check."""
    parsed = m.parse_mstconfig('Configurations:  Default  Current  Next Boot\n  NUM_OF_VFS  %s%s%s%s%s\n'
                               % (values[0], gap1, values[1], gap2, values[2]))
    passed = not m.check_firmware(parsed, min_num_vfs=16, require_sriov=False)
    really = all(v.isdigit() and int(v) >= 16 for v in values[1:])
    unambiguous = (len(gap1) >= 2 and len(gap2) >= 2) or not any(' ' in v for v in values)
    assert passed is (really and unambiguous)


def test_lines_after_an_error_are_still_read():
    parsed = m.parse_mstconfig('-E- Failed to query PCI_ATOMIC_MODE\nConfigurations:   Next Boot\n'
                               '   NUM_OF_VFS   16\n-E- second\n   SRIOV_EN   True(1)\n')
    assert parsed['errors'] == ['Failed to query PCI_ATOMIC_MODE', 'second']
    assert sorted(parsed['params']) == ['NUM_OF_VFS', 'SRIOV_EN'] and parsed['columns'] == ['next_boot']
    assert [p['param'] for p in m.check_firmware(parsed, min_num_vfs=16)] == [m.QUERY_ERRORS]


def test_device_header_fields_and_notes_inside_the_table(fixture_text):
    parsed = m.parse_mstconfig(fixture_text('mstconfig', 'cx7_ok_e.txt'))
    assert sorted(parsed['device']) == ['description', 'device', 'device_type', 'name']
    assert parsed['device']['name'] == 'MCX75310AAS-NEA_Ax'
    # a line that is no parameter (a note, a wrapped description) does not end the table
    noted = m.parse_mstconfig("Configurations:   Next Boot\n   NUM_OF_VFS   16\n"
                              "The '*' shows parameters with next value different from default/current value.\n"
                              "   SRIOV_EN   True(1)\n")
    assert sorted(noted['params']) == ['NUM_OF_VFS', 'SRIOV_EN']
    failed = m.parse_mstconfig(fixture_text('mstconfig', 'open_error.txt'))
    assert failed['extended'] is False and failed['columns'] == [] and failed['device'] == {}
