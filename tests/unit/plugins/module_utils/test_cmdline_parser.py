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
    ('', []), ('   ', []), ('a  b\tc\n', [('a', None), ('b', None), ('c', None)]), ('foo="a b"', [('foo', 'a b')]),
    ('foo="', [('foo', '')]), ('"foo=a b"', [('foo', 'a b')]), ('"flag"', [('flag', None)]),
    ('foo=a"b c"', [('foo', 'a"b c"')]), ('=x=y', [('=x', 'y')]), ('a=1 -- b=2', [('a', '1')]), ('a=--', [('a', '--')]),
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


def kernel_parse_args(line):
    """Test oracle: lib/cmdline.c next_arg() and the loop of kernel/params.c parse_args(), transcribed
    statement by statement on a NUL-terminated buffer (C pointer arithmetic, not the module's string
    slicing), so the tokeniser is checked against the kernel's own algorithm on arbitrary input."""
    buf = list(line) + ['\0']
    space = set(' \t\n\v\f\r')

    def cstr(at):
        end = at
        while buf[end] != '\0':
            end += 1
        return ''.join(buf[at:end])

    def skip_spaces(at):
        while buf[at] in space:
            at += 1
        return at

    out = []
    args = skip_spaces(0)
    while buf[args] != '\0':
        equals, in_quote, quoted = 0, False, False
        if buf[args] == '"':
            args += 1
            in_quote = quoted = True
        i = 0
        while buf[args + i] != '\0':
            if buf[args + i] in space and not in_quote:
                break
            if equals == 0 and buf[args + i] == '=':
                equals = i
            if buf[args + i] == '"':
                in_quote = not in_quote
            i += 1
        param = args
        val = None
        if equals:
            buf[args + equals] = '\0'
            val = args + equals + 1
            if buf[val] == '"':
                val += 1
                if buf[args + i - 1] == '"':
                    buf[args + i - 1] = '\0'
        if quoted and i > 0 and buf[args + i - 1] == '"':
            buf[args + i - 1] = '\0'
        if buf[args + i] != '\0':
            buf[args + i] = '\0'
            nxt = args + i + 1
        else:
            nxt = args + i
        token = (cstr(param), None if val is None else cstr(val))
        if token == ('--', None):
            break
        out.append(token)
        args = skip_spaces(nxt)
    return out


@pytest.mark.parametrize('line', ['""a b', '"a b" c', 'a="b" "c=d e"', 'x="" y', '"=a b"', 'a=b"c d" e', '" a',
                                  '"', '" b', '"a="b""', '"a="b"" c', '"a=b""',
                                  'a="b', '"a=b"c" d', '= a', '"" ""', 'a -- b', '"--" b', '-- ', 'a\x0bb'])
def test_tokenize_matches_the_kernel_on_quoting_corners(line):
    assert c.tokenize(line) == kernel_parse_args(line)


@given(st.text(alphabet=st.sampled_from(list('ab=" \t-\n')), max_size=40))
def test_tokenize_is_the_kernels_tokeniser(line):
    """Any mix of quotes, '=', '--' and whitespace (the hard cases) tokenises exactly as the kernel does."""
    assert c.tokenize(line) == kernel_parse_args(line)


@given(st.lists(st.tuples(_name, st.one_of(st.none(), _plain_value, _spaced_value)), max_size=8))
def test_formatted_arguments_read_back_through_the_kernel(args):
    """format_arg quotes values with whitespace; the kernel's tokeniser gives back name and value."""
    line = ' '.join(c.format_arg(name, value) for name, value in args)
    assert kernel_parse_args(line) == args and c.tokenize(line) == args


@given(st.lists(st.tuples(_name, st.one_of(st.none(), _plain_value)), min_size=1, max_size=8))
def test_duplicates_found_for_any_repeated_token(args):
    assume(args[0][0] not in c.PAIRED)          # hugepages= counts per hugepagesz=: tested above
    line = ' '.join(c.format_arg(n, v) for n, v in args + args[:1])
    dups = c.check_cmdline(line)['duplicates']
    assert c.format_arg(*args[0]) in [d['arg'] for d in dups]


@pytest.mark.parametrize('param, value, text', [
    ('earlycon', None, 'earlycon'), ('iommu.passthrough', '1', 'iommu.passthrough=1'), ('x', '', 'x='),
    ('dyndbg', 'file drivers/infiniband/* +p', 'dyndbg="file drivers/infiniband/* +p"'),
    ('a', 'tab\there', 'a="tab\there"'),
])
def test_format_arg_quotes_values_with_whitespace(param, value, text):
    assert c.format_arg(param, value) == text
    assert c.tokenize(text) == [(param, value)]
