# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line tokeniser (lib/cmdline.c next_arg) and checks."""

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ansible_collections.gpu_tray.cluster.plugins.module_utils import cmdline as c

GB200_TOKENS = ['iommu.passthrough=1', 'console=tty0', 'console=ttyS0,115200n8', 'init_on_alloc=0',
                'numa_balancing=disable', 'earlycon', 'hugepagesz=2M', 'hugepages=5128', 'hugepagesz=1G',
                'hugepages=2']


def test_tokenize_plain(fixture_text):
    tokens = c.tokenize(fixture_text('cmdline', 'gb200_tuned.txt'))
    assert tokens[0] == ('BOOT_IMAGE', '/vmlinuz-6.8.0-1021-nvidia-64k')
    assert tokens[1] == ('root', 'UUID=0b5a7d2e-1f3c-4f7b-9a3d-6c2b1e0f9a11')   # only the first '=' splits
    assert ('ro', None) in tokens and ('earlycon', None) in tokens


def test_tokenize_quotes_and_double_dash(fixture_text):
    tokens = c.tokenize(fixture_text('cmdline', 'quoted.txt'))
    assert ('dyndbg', 'file drivers/infiniband/* +p') in tokens
    assert ('isolcpus', '1-3') in tokens                    # leading quote around the whole argument
    assert ('vt.handoff', '7') == tokens[-1]                # '--' ends the kernel's arguments
    assert ('single', None) not in tokens


@pytest.mark.parametrize('line, expected', [
    ('', []),
    ('   ', []),
    ('a  b\tc\n', [('a', None), ('b', None), ('c', None)]),
    ('foo="a b"', [('foo', 'a b')]),
    ('foo="', [('foo', '')]),
    ('"foo=a b"', [('foo', 'a b')]),
    ('"flag"', [('flag', None)]),
    ('foo=a"b c"', [('foo', 'a"b c"')]),
    ('=x=y', [('=x', 'y')]),
    ('a=1 -- b=2', [('a', '1')]),
    ('a=--', [('a', '--')]),
])
def test_tokenize_kernel_edge_cases(line, expected):
    assert c.tokenize(line) == expected


def test_duplicates_from_dropin_plus_tuned_params(fixture_text):
    report = c.check_cmdline(fixture_text('cmdline', 'vr200_duplicated.txt'), GB200_TOKENS)
    assert report['missing'] == []
    dups = dict((d['arg'], d['count']) for d in report['duplicates'])
    assert dups['init_on_alloc=0'] == 2 and dups['iommu.passthrough=1'] == 2
    assert dups['console=tty0'] == 2 and dups['hugepages=5128'] == 2 and dups['earlycon'] == 2
    # the same hugepagesz=/hugepages= pair twice: each hugepages= is named with its size
    contexts = dict((d['arg'], d['context']) for d in report['duplicates'])
    assert contexts['hugepages=5128'] == 'hugepagesz=2M' and contexts['hugepages=2'] == 'hugepagesz=1G'
    assert contexts['init_on_alloc=0'] is None


@pytest.mark.parametrize('line, expected', [
    # one pool per size with the same count: valid, no duplicate (the reviewer's case)
    ('hugepagesz=2M hugepages=512 hugepagesz=1G hugepages=512', []),
    # the first hugepages= sizes the default pool, the second the 1G pool
    ('hugepages=512 hugepagesz=1G hugepages=512', []),
    ('default_hugepagesz=2M hugepagesz=2M hugepages=64 hugepagesz=1G hugepages=64', []),
    # the same size twice: both hugepagesz= and its hugepages= are duplicates
    ('hugepagesz=2M hugepages=8 hugepagesz=2M hugepages=8',
     [('hugepagesz=2M', None, 2), ('hugepages=8', 'hugepagesz=2M', 2)]),
    ('hugepages=4 hugepages=4', [('hugepages=4', None, 2)]),
    ('hugepagesz=1G hugepages=2 hugepagesz=2M hugepagesz=1G hugepages=2',
     [('hugepagesz=1G', None, 2), ('hugepages=2', 'hugepagesz=1G', 2)]),
])
def test_hugepages_counts_with_its_hugepagesz(line, expected):
    dups = c.check_cmdline(line)['duplicates']
    assert [(d['arg'], d['context'], d['count']) for d in dups] == expected


def test_repeated_keys_with_different_values_are_not_duplicates(fixture_text):
    report = c.check_cmdline(fixture_text('cmdline', 'gb200_tuned.txt'), GB200_TOKENS)
    assert report['duplicates'] == []
    assert report['missing'] == [] and report['present'] == GB200_TOKENS


def test_missing_and_forbidden(fixture_text):
    report = c.check_cmdline(fixture_text('cmdline', 'quoted.txt'),
                             required=['iommu.passthrough=1', 'quiet', 'splash=1', 'vt.handoff=7'],
                             forbidden=['isolcpus', 'quiet=1', 'single'])
    assert report['missing'] == ['iommu.passthrough=1', 'splash=1']
    assert report['present'] == ['quiet', 'vt.handoff=7']
    assert report['forbidden_present'] == ['isolcpus=1-3']          # 'single' is after '--': init's, not the kernel's


def test_bare_required_flag_accepts_value_and_dash_underscore():
    report = c.check_cmdline('earlycon=pl011,0x9000000 numa-balancing=disable', ['earlycon', 'numa_balancing=disable'])
    assert report['missing'] == []


def test_parse_spec_rejects_several_arguments():
    with pytest.raises(ValueError):
        c.parse_spec('a=1 b=2')
    with pytest.raises(ValueError):
        c.parse_spec('   ')


_name = st.from_regex(r'[a-z][a-z0-9_.]{0,12}', fullmatch=True)
_plain_value = st.from_regex(r'[A-Za-z0-9,./:+-]{0,12}', fullmatch=True)
_spaced_value = st.from_regex(r'[A-Za-z0-9,./:+ -]{0,12}', fullmatch=True)


@given(st.lists(st.tuples(_name, st.one_of(st.none(), _plain_value)), max_size=12),
       st.sampled_from([' ', '  ', '\t', ' \n ']))
def test_tokenize_roundtrip_plain(args, sep):
    line = sep.join(c.format_arg(name, value) for name, value in args)
    assert c.tokenize(line) == args


@given(st.lists(st.tuples(_name, _spaced_value), max_size=8))
def test_tokenize_roundtrip_quoted_values(args):
    line = ' '.join('%s="%s"' % (name, value) for name, value in args)
    assert c.tokenize(line) == args


@given(st.text(alphabet=st.sampled_from(list('ab=" \t-')), max_size=40))
def test_tokenize_total(line):
    """Any input tokenises without error; no token contains unquoted whitespace."""
    tokens = c.tokenize(line)
    for param, value in tokens:
        if '"' not in line:
            assert param
            assert not any(ch in param for ch in ' \t') and (value is None or ' ' not in value)


@given(st.lists(st.tuples(_name, st.one_of(st.none(), _plain_value)), min_size=1, max_size=8))
def test_duplicates_found_for_any_repeated_token(args):
    assume(args[0][0] not in c.PAIRED)          # hugepages= counts per hugepagesz=: tested above
    line = ' '.join(c.format_arg(n, v) for n, v in args + args[:1])
    dups = c.check_cmdline(line)['duplicates']
    assert c.format_arg(*args[0]) in [d['arg'] for d in dups]
