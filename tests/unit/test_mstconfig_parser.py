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


def test_garbage_raises():
    with pytest.raises(m.MstconfigParseError):
        m.parse_mstconfig('mstconfig: command not found\n')


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


def test_error_lines_and_usage_errors(fixture_text):
    assert m.error_lines(fixture_text('mstconfig', 'open_error.txt')) == ['Failed to open the device']
    assert m.error_lines('-W- something\n-E- invalid argument: -e\n-E-\n') == ['invalid argument: -e']
    assert m.error_lines(None) == [] and m.error_lines(fixture_text('mstconfig', 'cx7_ok_e.txt')) == []
    assert m.is_usage_error(['invalid argument: -e'])
    assert not m.is_usage_error(['Failed to open the device'])
    assert not m.is_usage_error([])


def test_unknown_column_is_an_error():
    with pytest.raises(m.MstconfigParseError):
        m.parse_mstconfig('Configurations:      Default      Whatever\n')


def test_summarise(fixture_text):
    flat = m.summarise(m.parse_mstconfig(fixture_text('mstconfig', 'cx7_nextboot8_e.txt')))
    assert flat['NUM_OF_VFS'] == {'modified': True, 'default': '16', 'current': '16', 'next_boot': '8'}


_param_name = st.from_regex(r'[A-Z][A-Z0-9_]{2,30}', fullmatch=True)
_value = st.one_of(
    st.integers(min_value=0, max_value=4096).map(str),
    st.tuples(st.sampled_from(['True', 'False', 'IB', 'ETH', 'DISABLED', 'ENABLED', '_256KB', 'ECPF']),
              st.integers(min_value=0, max_value=15)).map(lambda t: '%s(%d)' % t),
)


@given(st.dictionaries(_param_name, st.tuples(st.booleans(), _value, _value, _value), min_size=1, max_size=15),
       st.integers(min_value=2, max_value=12), st.booleans())
def test_roundtrip_rendered_tables(table, gap, extended):
    """Any table rendered in mstconfig's layout (with or without -e, '*' markers) parses back exactly."""
    pad = ' ' * gap
    header = 'Configurations:' + pad + (('Default' + pad + 'Current' + pad + 'Next Boot') if extended else 'Next Boot')
    lines = ['', 'Device #1:', '----------', '', 'Device type:    ConnectX7', 'Device:         0000:03:00.0', '',
             header]
    for name, (star, default, current, next_boot) in table.items():
        values = [default, current, next_boot] if extended else [next_boot]
        lines.append(('*' if star else ' ') + '        ' + name + pad + pad.join(values) + '   ')
    parsed = m.parse_mstconfig('\n'.join(lines) + '\n')
    assert parsed['extended'] is extended
    assert sorted(parsed['params']) == sorted(table)
    for name, (star, default, current, next_boot) in table.items():
        entry = parsed['params'][name]
        assert entry['modified'] is star
        assert entry['next_boot']['raw'] == next_boot
        if extended:
            assert entry['default']['raw'] == default and entry['current']['raw'] == current
        else:
            assert entry['current'] is None and entry['default'] is None
