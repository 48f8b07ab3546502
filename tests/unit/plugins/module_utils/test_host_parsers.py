# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Huge pages, containerd TOML, os-release, kernel flavour, systemctl and option parsers."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpu_tray.cluster.plugins.module_utils import common, containerd, hugepages, tray
from trayfixture import build_tray
from unithelpers import containerd_tree, fixture_path, write_toml


# ---- option parsers -------------------------------------------------------------------------------

@pytest.mark.parametrize('text, kb', [
    ('2M', 2048), ('1G', 1048576), ('16G', 16777216), ('512M', 524288), ('2048kB', 2048), ('64K', 64),
    ('1GiB', 1048576), (' 2 M ', 2048), ('32M', 32768), ('1T', 1073741824), ('2t', 2147483648),
])
def test_parse_size_kb(text, kb):
    assert common.parse_size_kb(text) == kb


@pytest.mark.parametrize('text', ['2', 'xyz', '2Q', '-2M', '0M', '', '1.5G'])
def test_parse_size_kb_rejects(text):
    with pytest.raises(ValueError):
        common.parse_size_kb(text)


@pytest.mark.parametrize('kb, text', [
    (64, '64K'), (2048, '2M'), (524288, '512M'), (1048576, '1G'), (16777216, '16G'), (1073741824, '1T'),
    (1536, '1536K'), (3145728, '3G'),
])
def test_format_size_kb(kb, text):
    assert common.format_size_kb(kb) == text


@given(st.integers(min_value=1, max_value=1 << 32))
def test_size_format_roundtrip(kb):
    assert common.parse_size_kb(common.format_size_kb(kb)) == kb


@pytest.mark.parametrize('value, expected', [
    ('0xffff', 0xffff), ('0x8123', 0x8123), ('0123', 0x0123), ('0X7FFF', 0x7fff), ('1', 1), (' 8123 ', 0x8123),
])
def test_parse_pkey_option(value, expected):
    assert common.parse_pkey_option(value) == expected


@pytest.mark.parametrize('value', ['xyz', '0x12345', '', '0x', 70000, -1, 'ffff ffff', None, 1.5, ['0xffff']])
def test_parse_pkey_option_rejects(value):
    with pytest.raises(ValueError):
        common.parse_pkey_option(value)


@pytest.mark.parametrize('value, expected', [(0x8123, 0x8123), (65535, 0xffff), (0o123, 0x53), (1, 1)])
def test_parse_pkey_option_takes_yaml_integers_as_the_number_they_are(value, expected):
    """YAML turns an unquoted 0x8123 into 33059 and 65535 into 0xffff: the number is the key."""
    assert common.parse_pkey_option(value) == expected


@pytest.mark.parametrize('value, words', [(True, 'true is not a partition key'), (0, '0 is not a partition key'),
                                          (65536, '65536 is not a partition key: a key is 0x0001-0xffff'),
                                          (['0xffff'], 'got a list'), (None, 'got no value')])
def test_parse_pkey_option_names_the_value_not_a_type(value, words):
    with pytest.raises(ValueError) as info:
        common.parse_pkey_option(value)
    assert words in str(info.value) and 'int' not in str(info.value).replace('point', '')


@pytest.mark.parametrize('text, value', [('42', 42), (' 7\n', 7), ('-1', -1), ('', None), (None, None), ('x', None),
                                         ('1.5', None)])
def test_to_int(text, value):
    assert common.to_int(text) == value


class _FakeModule(object):
    def __init__(self, found):
        self.found = found
        self.calls = []

    def get_bin_path(self, name, required=False, opt_dirs=None):
        self.calls.append((name, required, opt_dirs))
        return self.found


def test_find_tool(tmp_path):
    tool = tmp_path / 'mstconfig'
    tool.write_text('#!/bin/sh\n')
    tool.chmod(0o755)
    plain = tmp_path / 'not-executable'
    plain.write_text('')
    module = _FakeModule('/usr/sbin/mstconfig')
    assert common.find_tool(module, str(tool)) == str(tool)
    assert common.find_tool(module, str(plain)) is None
    assert common.find_tool(module, str(tmp_path)) is None            # a directory is executable, not a tool
    assert common.find_tool(module, str(tmp_path / 'missing')) is None
    assert module.calls == []                                          # paths are never looked up in PATH
    assert common.find_tool(module, 'mstconfig') == '/usr/sbin/mstconfig'
    assert module.calls == [('mstconfig', False, ['/usr/sbin', '/usr/local/sbin', '/sbin'])]


# ---- huge pages -----------------------------------------------------------------------------------

@pytest.mark.parametrize('name, kb', [
    ('hugepages-2048kB', 2048), ('hugepages-1048576kB', 1048576), ('hugepages-524288kB', 524288),
    ('hugepages-16777216kB', 16777216), ('hugepages-64kB', 64), ('hugepages', None), ('hugepages-2MB', None),
])
def test_pool_dirname(name, kb):
    assert hugepages.parse_pool_dirname(name) == kb


def test_64k_kernel_has_no_1g_pool(tmp_path):
    t = build_tray(str(tmp_path / 't'))             # default: 2M (5128), 512M, 16G
    _base, pools = hugepages.read_pools(t['sys'])
    assert [pools[k]['size'] for k in sorted(pools)] == ['2M', '512M', '16G']
    results = hugepages.check_requests(pools, [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}])
    assert results[0]['ok'] and results[0]['nr_hugepages'] == 5128
    assert not results[1]['ok'] and not results[1]['pool_exists']
    assert 'no 1G huge page pool' in results[1]['problem'] and '2M, 512M, 16G' in results[1]['problem']


def test_meminfo_hugepagesize():
    assert hugepages.meminfo_hugepagesize_kb('MemTotal: 1 kB\nHugepagesize:     524288 kB\nHugetlb: 0 kB\n') == 524288
    assert hugepages.meminfo_hugepagesize_kb('Hugepagesize:       2048 kB') == 2048
    assert hugepages.meminfo_hugepagesize_kb('MemTotal: 1 kB\n') is None
    assert hugepages.meminfo_hugepagesize_kb(None) is None


def test_4k_kernel_shortfall(tmp_path):
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 100, 1048576: 2})
    _base, pools = hugepages.read_pools(t['sys'])
    results = hugepages.check_requests(pools, [{'size': '2048kB', 'count': 5128}, {'size': '1G', 'count': 2},
                                               {'size': '2M', 'count': None}])
    assert [r['ok'] for r in results] == [False, True, True]
    assert results[0]['problem'].startswith('the 2M pool holds 100 of the 5128 requested pages (nr_hugepages); '
                                            'likely causes: not enough free memory')
    # before the reboot only the sizes count: the same pools pass, a missing size still fails
    sizes = hugepages.check_requests(pools, [{'size': '2M', 'count': 5128}, {'size': '16G', 'count': 1}], 'sizes')
    assert [r['ok'] for r in sizes] == [True, False] and 'no 16G huge page pool' in sizes[1]['problem']


def test_unreadable_count_fails_only_in_counts(tmp_path):
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 1})
    base, pools = hugepages.read_pools(t['sys'])
    pools[2048]['nr_hugepages'] = None                 # what read_pools gives for an unreadable file
    counts = hugepages.check_requests(pools, [{'size': '2M', 'count': 0}], 'counts', base)
    assert not counts[0]['ok']
    assert counts[0]['problem'] == ('cannot read the page count of the 2M pool (%s/hugepages-2048kB/nr_hugepages): '
                                    'no integer in it' % base)
    assert hugepages.check_requests(pools, [{'size': '2M', 'count': 0}], 'sizes', base)[0]['ok']
    assert hugepages.check_requests(pools, [{'size': '2M'}], 'counts', base)[0]['ok']   # no count: existence only
    with pytest.raises(ValueError):
        hugepages.check_requests(pools, [{'size': '2M'}], 'pages')


# ---- containerd -----------------------------------------------------------------------------------

def test_v3_root_with_v4_dropin_fails(tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml', [('99-nvidia-v4.toml', '99-nvidia.toml')])
    result, errors, warnings = containerd.inspect(config, dropdir, None)
    assert result['version'] == 3 and result['imports'] == ['conf.d/*.toml']
    assert result['dropins'][0]['version'] == 4 and result['dropins'][0]['imported']
    assert len(errors) == 1 and 'version 4, higher than root' in errors[0]
    assert 'drop-in config version 4 higher than root config version 3' in errors[0]
    assert any('RUNTIME_CONFIG_SOURCE=file' in w for w in warnings)      # default source is command,file


def test_v3_root_file_source_clean(tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml', [('99-nvidia-v3.toml', '99-nvidia.toml')])
    result, errors, warnings = containerd.inspect(config, dropdir, 'file=/etc/containerd/config.toml')
    assert errors == [] and warnings == []
    assert result['toolkit_reads_command'] is False
    assert result['runtime_config_source'] == ['file=/etc/containerd/config.toml']


def test_dropin_not_imported_is_warned_not_failed(tmp_path):
    # root-v2 imports /etc/containerd/conf.d/*.toml; the drop-in dir checked is elsewhere in that root
    containerd_tree(tmp_path / 'opt', 'root-v2.toml', [('99-nvidia-v4.toml', '99-nvidia.toml')])
    os.makedirs(str(tmp_path / 'etc' / 'containerd' / 'conf.d'))
    os.rename(str(tmp_path / 'opt' / 'containerd' / 'config.toml'), str(tmp_path / 'etc' / 'containerd' / 'config.toml'))
    result, errors, warnings = containerd.inspect('/etc/containerd/config.toml', '/opt/containerd/conf.d', 'file',
                                                  root=str(tmp_path))
    assert errors == []
    assert result['dropins'][0]['imported'] is False
    assert any('containerd does not read it' in w for w in warnings)


def test_absolute_imports_resolve_under_root(tmp_path):
    """A config read under another root (a mounted image, a test tree) checks the drop-ins of THAT root:
    root-v2 imports /etc/containerd/conf.d/*.toml, which must be <root>/etc/containerd/conf.d/*.toml."""
    image = tmp_path / 'image'
    containerd_tree(image / 'etc', 'root-v2.toml', [('99-nvidia-v4.toml', '99-nvidia.toml')])
    result, errors, warnings = containerd.inspect('/etc/containerd/config.toml', '/etc/containerd/conf.d', 'file',
                                                  root=str(image))
    dropin = str(image / 'etc' / 'containerd' / 'conf.d' / '99-nvidia.toml')
    assert result['config_path'] == str(image / 'etc' / 'containerd' / 'config.toml')
    assert [(d['path'], d['imported'], d['version']) for d in result['dropins']] == [(dropin, True, 4)]
    assert len(errors) == 1 and 'higher than root' in errors[0] and dropin in errors[0]
    assert not any('does not read it' in w for w in warnings)


def test_nested_absolute_imports_resolve_under_root(tmp_path):
    image = tmp_path / 'image'
    config, dropdir = containerd_tree(image / 'etc', 'root-v2.toml')
    write_toml(os.path.join(dropdir, '10-chain.toml'), 'version = 2\nimports = ["/opt/extra/*.toml"]\n')
    deep = write_toml(image / 'opt' / 'extra' / '20-deep.toml', 'version = 3\n')
    result, errors, _warnings = containerd.inspect('/etc/containerd/config.toml', None, 'file', root=str(image))
    assert [d['path'] for d in result['dropins']] == [os.path.join(dropdir, '10-chain.toml'), deep]
    assert len(errors) == 1 and deep in errors[0]
    # the root config itself, imported again through the mounted path, is not loaded twice
    write_toml(os.path.join(dropdir, '30-loop.toml'), 'version = 2\nimports = ["/etc/containerd/config.toml"]\n')
    again, _errors, _warnings = containerd.inspect('/etc/containerd/config.toml', None, 'file', root=str(image))
    assert config not in [d['path'] for d in again['dropins']]


def test_broken_dropin_and_root(tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml', [('broken.toml', '50-broken.toml')])
    _result, errors, _warnings = containerd.inspect(config, dropdir, 'file')
    assert len(errors) == 1 and 'is not valid TOML' in errors[0]
    with pytest.raises(containerd.ContainerdConfigError):
        containerd.inspect(fixture_path('containerd', 'broken.toml'))
    with pytest.raises(containerd.ContainerdConfigError):
        containerd.inspect(str(tmp_path / 'missing.toml'))


@pytest.mark.parametrize('dropin', ['99-nvidia-v2.toml', '99-nvidia-v3.toml', '99-nvidia-v4.toml'])
def test_root_without_version_is_version_1(tmp_path, dropin):
    """containerd treats a missing version as 1: any v2+ drop-in stops it from starting."""
    config, dropdir = containerd_tree(tmp_path, 'root-noversion.toml', [(dropin, '99-nvidia.toml')])
    result, errors, warnings = containerd.inspect(config, dropdir, 'file')
    assert result['version'] is None and result['dropins'][0]['imported'] is True
    assert len(errors) == 1
    assert 'higher than root config version 1' in errors[0] and '1 (no version key)' in errors[0]
    assert any('has no version key' in w for w in warnings)


def test_root_without_version_and_unversioned_dropin_pass(tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-noversion.toml')
    write_toml(os.path.join(dropdir, '10-plain.toml'), '[plugins.cri]\n  sandbox_image = "pause:3.9"\n')
    result, errors, _warnings = containerd.inspect(config, dropdir, 'file')
    assert errors == [] and result['dropins'][0]['version'] is None


@pytest.mark.parametrize('text, words', [
    ('version = "2"\n', ['version', "'2'", 'not an integer']), ('version = 2.0\n', ['version', 'not an integer']),
    ('version = true\n', ['version', 'not an integer']),
    ('version = 3\nimports = 5\n', ['imports = 5', 'not a list of strings']),
    ('version = 3\nimports = "conf.d/*.toml"\n', ['imports', 'not a list of strings']),
    ('version = 3\nimports = [1, 2]\n', ['imports', 'not a list of strings']),
])
def test_root_with_wrong_types_is_an_error_naming_the_file(tmp_path, text, words):
    path = write_toml(tmp_path / 'config.toml', text)
    with pytest.raises(containerd.ContainerdConfigError) as info:
        containerd.inspect(path)
    for word in words + [path]:
        assert word in str(info.value)


def test_dropin_with_string_version_is_an_error(tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml')
    write_toml(os.path.join(dropdir, '99-nvidia.toml'), 'version = "2"\n')
    result, errors, _warnings = containerd.inspect(config, dropdir, 'file')
    assert len(errors) == 1 and 'not an integer' in errors[0] and '99-nvidia.toml' in errors[0]
    assert result['dropins'][0]['error'] == errors[0]


def test_imports_are_followed_recursively_with_cycles(tmp_path):
    """An imported file's own imports are loaded too (relative to that file), each file once."""
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml')
    write_toml(os.path.join(dropdir, '10-chain.toml'), 'version = 3\nimports = ["../nested/*.toml"]\n')
    nested = write_toml(tmp_path / 'containerd' / 'nested' / '20-deep.toml',
                        'version = 4\nimports = ["/nonexistent/*.toml", "../conf.d/10-chain.toml", "../config.toml"]\n')
    result, errors, _warnings = containerd.inspect(config, dropdir, 'file')
    assert [(os.path.basename(d['path']), os.path.basename(d['imported_by'])) for d in result['dropins']] == [
        ('10-chain.toml', 'config.toml'), ('20-deep.toml', '10-chain.toml')]
    assert len(errors) == 1 and nested in errors[0] and 'version 4, higher than root' in errors[0]


@pytest.mark.parametrize('value, sources, command', [
    (None, ['command', 'file'], True), ('command', ['command'], True), ('file', ['file'], False),
    ('file=/etc/containerd/config.toml,command', ['file=/etc/containerd/config.toml', 'command'], False),
    (' command , file ', ['command', 'file'], True),
])
def test_runtime_config_source(value, sources, command):
    parsed = containerd.parse_source(value)
    assert parsed == sources and containerd.toolkit_reads_command(parsed) is command


# ---- tray -----------------------------------------------------------------------------------------

def test_os_release():
    with open(fixture_path('os-release', 'ubuntu-24.04')) as handle:
        data = tray.parse_os_release(handle.read())
    assert data['ID'] == 'ubuntu' and data['VERSION_ID'] == '24.04' and data['VERSION_CODENAME'] == 'noble'
    assert data['PRETTY_NAME'] == 'Ubuntu 24.04.3 LTS'
    assert tray.parse_os_release("A='single quoted'\nB=\"esc\\\"aped\"\n# C=1\nbad line\n") == {
        'A': 'single quoted', 'B': 'esc"aped'}


@pytest.mark.parametrize('release, size', [
    ('6.8.0-1021-nvidia-64k', 65536), ('7.0.0-5-nvidia-bos-64k', 65536), ('6.8.0-1021-nvidia', 4096),
    ('6.1.0-18-arm64', 4096), ('6.8.0-64-generic', 4096), ('6.8.0-1021-nvidia-16k', 16384), (None, None),
    # RHEL family (kernel-64k): the flavour follows a '+' after the architecture
    ('5.14.0-427.13.1.el9_4.aarch64+64k', 65536), ('6.12.0-55.9.1.el10_0.aarch64+64k', 65536),
    ('5.14.0-427.13.1.el9_4.aarch64', 4096), ('5.14.0-427.13.1.el9_4.aarch64+debug', 4096),
    ('5.14.0-427.13.1.el9_4.aarch64+64k-debug', 65536), ('6.8.0-1021-nvidia-64k+dbg', 65536),
])
def test_kernel_flavour_page_size(release, size):
    assert tray.kernel_flavour_page_size(release) == size


@pytest.mark.parametrize('text, mode', [('Y', 'shared'), ('N\n', 'exclusive'), (None, None), ('?', 'unknown'),
                                        ('1', 'shared'), ('0\n', 'exclusive'), ('y', 'shared'), ('n', 'exclusive'),
                                        ('', 'unknown')])
def test_netns_mode(text, mode):
    assert tray.parse_netns_mode(text) == mode


def test_modules(tmp_path):
    t = build_tray(str(tmp_path / 't'))
    names, loadable = tray.read_modules(t['sys'])
    assert names == ['ib_core', 'mlx5_core', 'mlx5_ib', 'printk']
    assert loadable == ['ib_core', 'mlx5_core', 'mlx5_ib']


def test_systemctl_parsing():
    units = ['nvidia-imex.service', 'containerd.service', 'rke2-server.service', 'rke2-agent.service']
    active = tray.parse_is_active('inactive\ninactive\ninactive\nactive\n', units)
    assert active['rke2-agent.service'] == 'active'
    assert tray.active_runtime(active) == ('rke2-agent', ['rke2-agent.service'])
    both = dict(active, **{'containerd.service': 'active'})
    assert tray.active_runtime(both) == ('rke2-agent', ['rke2-agent.service', 'containerd.service'])
    assert tray.active_runtime({}) == (None, [])
    assert tray.parse_is_enabled('masked\n', ['nvidia-imex.service']) == {'nvidia-imex.service': 'masked'}
    assert tray.parse_is_enabled('', ['nvidia-imex.service']) == {'nvidia-imex.service': 'unknown'}
    assert tray.parse_is_active('weird\n', ['x'])['x'] == 'unknown'


def test_read_pools_ignores_other_entries(tmp_path):
    t = build_tray(str(tmp_path / 't'), hugepages={2048: 8, 1048576: 1})
    base = os.path.join(t['sys'], 'kernel', 'mm', 'hugepages')
    os.makedirs(os.path.join(base, 'hugepages-2MB'))            # not the kernel's name: not a pool
    with open(os.path.join(base, 'aaa-notes'), 'w') as handle:   # sorts first
        handle.write('x\n')
    _base, pools = hugepages.read_pools(t['sys'])
    assert sorted(pools) == [2048, 1048576] and pools[1048576]['nr_hugepages'] == 1


def test_file_helpers(tmp_path, monkeypatch):
    (tmp_path / 'attr').write_text('  4: ACTIVE \n')
    assert common.read_text(str(tmp_path / 'attr')) == '4: ACTIVE'
    assert common.read_text(str(tmp_path / 'missing')) is None
    assert common.read_text(str(tmp_path / 'missing'), default='n/a') == 'n/a'
    assert common.read_text(str(tmp_path), default='dir') == 'dir'                 # EISDIR: unreadable
    (tmp_path / 'bad').write_bytes(b'\xff\xfe')
    assert common.read_text(str(tmp_path / 'bad'), default='x') == 'x'
    (tmp_path / 'd').mkdir()
    for name in ('b', 'a', 'c'):
        (tmp_path / 'd' / name).write_text('')
    assert common.list_dir(str(tmp_path / 'd')) == ['a', 'b', 'c'] and common.list_dir(str(tmp_path / 'no')) == []
    os.symlink('../../devices/pci0000:00/0000:03:00.0/', str(tmp_path / 'device'))
    assert common.link_basename(str(tmp_path / 'device')) == '0000:03:00.0'
    assert common.link_basename(str(tmp_path / 'attr')) is None                    # not a link
    assert sorted(['mlx5_10', 'mlx5_9', 'mlx5_1'], key=common.natural_key) == ['mlx5_1', 'mlx5_9', 'mlx5_10']
    # total: a number and a text at the same place compare (the number first), so any names sort
    assert sorted(['x1', '10', 'a', '1x', '', 'tray2', 'tray10'], key=common.natural_key) == [
        '', '1x', '10', 'a', 'tray2', 'tray10', 'x1']
    assert common.join_root('/lab/sys', '/class/infiniband') == '/lab/sys/class/infiniband'
    assert common.format_pkey(0x8123) == '0x8123' and common.format_pkey(0x7f) == '0x007f'

    def broken():
        raise OSError('no name')
    monkeypatch.setattr(common.socket, 'gethostname', broken)
    assert common.hostname() == 'unknown-host'
    monkeypatch.setattr(common.socket, 'gethostname', lambda: '')
    assert common.hostname() == 'unknown-host'


def test_imports_skip_directories_and_repeats(tmp_path):
    """A glob that matches a directory, and two globs that match the same file: each file is loaded once."""
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml')
    write_toml(config, 'version = 3\nimports = ["conf.d/*", "conf.d/10-a.toml"]\n')
    os.makedirs(os.path.join(dropdir, 'subdir.toml'))
    write_toml(os.path.join(dropdir, '10-a.toml'), 'version = 3\n')
    result, errors, _warnings = containerd.inspect(config, None, 'file')
    assert [os.path.basename(d['path']) for d in result['dropins']] == ['10-a.toml'] and errors == []


def test_a_repeated_import_does_not_stop_the_rest(tmp_path):
    """10-a imports 20-b (already queued by the root) and 30-c: 30-c is still loaded and judged."""
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml')
    write_toml(config, 'version = 3\nimports = ["conf.d/10-a.toml", "conf.d/20-b.toml"]\n')
    write_toml(os.path.join(dropdir, '10-a.toml'), 'version = 3\nimports = ["20-b.toml", "../extra/30-c.toml"]\n')
    write_toml(os.path.join(dropdir, '20-b.toml'), 'version = 3\n')
    deep = write_toml(tmp_path / 'containerd' / 'extra' / '30-c.toml', 'version = 4\n')
    result, errors, _warnings = containerd.inspect(config, None, 'file')
    assert [os.path.basename(d['path']) for d in result['dropins']] == ['10-a.toml', '20-b.toml', '30-c.toml']
    assert len(errors) == 1 and deep in errors[0]


def test_every_dropin_is_judged_after_a_broken_or_imported_one(tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml', [('broken.toml', '10-broken.toml'),
                                                                 ('99-nvidia-v4.toml', '20-nvidia.toml')])
    _result, errors, _warnings = containerd.inspect(config, dropdir, 'file')
    assert len(errors) == 2 and 'not valid TOML' in errors[0] and 'version 4, higher than root' in errors[1]
    # only 10-* is imported: 50-x.toml (readable) is warned about, 60-y.toml (broken) is an error
    write_toml(config, 'version = 3\nimports = ["conf.d/10-*.toml"]\n')
    write_toml(os.path.join(dropdir, '10-broken.toml'), 'version = 3\n')
    os.remove(os.path.join(dropdir, '20-nvidia.toml'))
    write_toml(os.path.join(dropdir, '50-x.toml'), 'version = 3\n')
    write_toml(os.path.join(dropdir, '60-y.toml'), 'version = [\n')
    result, errors, warnings = containerd.inspect(config, dropdir, 'file')
    assert [(os.path.basename(d['path']), d['imported']) for d in result['dropins']] == [
        ('10-broken.toml', True), ('50-x.toml', False), ('60-y.toml', False)]
    assert len(errors) == 1 and '60-y.toml' in errors[0] and 'not valid TOML' in errors[0]
    assert [w for w in warnings if 'not matched' in w] == [
        '%s is not matched by the root config imports %s: containerd does not read it'
        % (os.path.join(dropdir, '50-x.toml'), ['conf.d/10-*.toml'])]


def test_dropin_dir_without_imports_says_none(tmp_path):
    config, dropdir = containerd_tree(tmp_path, 'root-v3.toml', [('99-nvidia-v3.toml', '99-nvidia.toml')])
    write_toml(config, 'version = 3\n')
    _result, errors, warnings = containerd.inspect(config, dropdir, 'file')
    assert errors == [] and any(w.endswith('imports (none): containerd does not read it') for w in warnings)


@pytest.mark.parametrize('text, data', [
    ("EMPTY=\nBROKEN='no end\n1BAD=x\n  SPACED = \"a b\"  \nNAME=Ubuntu\nNAME=Later\n",
     {'EMPTY': '', 'BROKEN': 'no end', 'SPACED': 'a b', 'NAME': 'Later'}),
    ('# a comment\n\nA=1\nno equals sign\n# B=2\nC="x #y"\nD=e#f\n', {'A': '1', 'C': 'x #y', 'D': 'e#f'}),
    (None, {}),
])
def test_os_release_edge_lines_comments_and_hash_values(text, data):
    assert tray.parse_os_release(text) == data
