# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Huge page pools from /sys/kernel/mm/hugepages/hugepages-<size>kB/.

A 4k-page arm64/x86 kernel has 2M and 1G pools (arm64 4k also 64K/32M);
a 64k-page arm64 kernel has 2M, 512M and 16G pools and no 1G pool, so a
``hugepagesz=1G hugepages=2`` request is silently ignored there.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os
import re

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    format_size_kb,
    join_root,
    list_dir,
    parse_size_kb,
    read_text,
    to_int,
)

_POOL_DIR = re.compile(r'^hugepages-(\d+)kB$')
_MEMINFO_SIZE = re.compile(r'^Hugepagesize:\s+(\d+)\s+kB\s*$', re.MULTILINE)


def parse_pool_dirname(name):
    """``hugepages-2048kB`` -> 2048; None for anything else."""
    match = _POOL_DIR.match(name)
    return int(match.group(1)) if match else None


def meminfo_hugepagesize_kb(text):
    """``Hugepagesize:     524288 kB`` line of /proc/meminfo -> 524288; None when absent."""
    match = _MEMINFO_SIZE.search(text or '')
    return int(match.group(1)) if match else None


def read_pools(sysfs_root):
    """``{size_kb: {'size': '2M', 'size_kb': 2048, 'nr_hugepages': n, ...}}``."""
    base = join_root(sysfs_root, 'kernel/mm/hugepages')
    pools = {}
    for name in list_dir(base):
        size_kb = parse_pool_dirname(name)
        if size_kb is None:
            continue
        pool_dir = os.path.join(base, name)
        pools[size_kb] = {
            'size': format_size_kb(size_kb),
            'size_kb': size_kb,
            'nr_hugepages': to_int(read_text(os.path.join(pool_dir, 'nr_hugepages'))),
            'free_hugepages': to_int(read_text(os.path.join(pool_dir, 'free_hugepages'))),
            'resv_hugepages': to_int(read_text(os.path.join(pool_dir, 'resv_hugepages'))),
            'surplus_hugepages': to_int(read_text(os.path.join(pool_dir, 'surplus_hugepages'))),
        }
    return base, pools


# Why a pool can hold fewer pages than the kernel command line asks for, after the reboot that applied it.
SHORTFALL_CAUSES = ('not enough free memory at boot for that many pages, a later GRUB drop-in overriding '
                    'our hugepages= arguments, or the tray booted another boot entry')

CHECKS = ('sizes', 'counts')


def nr_hugepages_path(base, size_kb):
    """``<base>/hugepages-<size>kB/nr_hugepages``."""
    return os.path.join(base, 'hugepages-%dkB' % size_kb, 'nr_hugepages')


def check_requests(pools, requested, check='counts', base=''):
    """Compare ``requested`` ([{'size': '1G', 'count': 2}]) with ``pools``.

    ``check='sizes'``: every requested size must have a pool (before the change: the counts are
    allocated by the ``hugepages=`` argument only after the reboot). ``check='counts'``: the pool
    must also hold at least ``count`` pages; an unreadable ``nr_hugepages`` (under ``base``) is a
    failure, never a pass. Returns a list of result dicts with ``ok`` and a ``problem`` text.
    Sizes must already be valid (``parse_size_kb`` raises on bad input).
    """
    if check not in CHECKS:
        raise ValueError('check must be one of %s, got %r' % (', '.join(CHECKS), check))
    results = []
    existing = ', '.join(pools[size]['size'] for size in sorted(pools)) or 'none'
    for item in requested:
        size_kb = parse_size_kb(item['size'])
        count = item.get('count')
        pool = pools.get(size_kb)
        result = {
            'size': format_size_kb(size_kb),
            'size_kb': size_kb,
            'count': count,
            'pool_exists': pool is not None,
            'nr_hugepages': pool['nr_hugepages'] if pool else None,
            'ok': True,
            'problem': None,
        }
        if pool is None:
            result['ok'] = False
            result['problem'] = ('the running kernel has no %s huge page pool (pools on this kernel: %s)'
                                 % (result['size'], existing))
        elif check == 'counts' and count is not None:
            if pool['nr_hugepages'] is None:
                result['ok'] = False
                result['problem'] = ('cannot read the page count of the %s pool (%s): no integer in it'
                                     % (result['size'], nr_hugepages_path(base, size_kb)))
            elif pool['nr_hugepages'] < count:
                result['ok'] = False
                result['problem'] = ('the %s pool holds %d of the %d requested pages (nr_hugepages); likely causes: %s'
                                     % (result['size'], pool['nr_hugepages'], count, SHORTFALL_CAUSES))
        results.append(result)
    return results
