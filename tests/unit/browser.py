# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Headless Chromium for the tests that look at a report as a person would: a screenshot, the DOM after layout,
and a PNG reader (zlib and the PNG filters, so no imaging library is needed; Pillow is not a dependency)."""

import os
import shutil
import struct
import subprocess
import tempfile
import zlib

CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
                  '--disable-component-update', '--disable-sync', '--no-first-run', '--hide-scrollbars']


def find_chromium():
    """Debian's chromium (tools/setup.sh installs it; a fresh machine without it gets it here when root), or None."""
    found = shutil.which('chromium')
    if found is None and os.geteuid() == 0 and shutil.which('apt-get'):
        env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
        subprocess.run(['apt-get', 'update', '-qq'], capture_output=True, env=env, check=False)
        subprocess.run(['apt-get', 'install', '-y', '-qq', '--no-install-recommends', 'chromium'],
                       capture_output=True, env=env, check=False)
        found = shutil.which('chromium')
    return found


def run_chromium(chromium, args, timeout=180):
    """Chromium with CHROMIUM_FLAGS, a fresh profile and ``args``; the finished process (text output)."""
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([chromium] + CHROMIUM_FLAGS + ['--user-data-dir=%s' % profile] + list(args),
                              capture_output=True, text=True, timeout=timeout, check=False)


def read_png(path):
    """``(width, height, channels, rows)`` of an 8-bit RGB or RGBA PNG, each row ``width`` x ``channels`` bytes."""
    with open(path, 'rb') as fh:
        blob = fh.read()
    assert blob[:8] == b'\x89PNG\r\n\x1a\n', '%s is not a PNG' % path
    pos, idat, header = 8, [], None
    while pos < len(blob):
        length, kind = struct.unpack('>I4s', blob[pos:pos + 8])
        chunk = blob[pos + 8:pos + 8 + length]
        if kind == b'IHDR':
            header = struct.unpack('>IIBBBBB', chunk)
        elif kind == b'IDAT':
            idat.append(chunk)
        pos += 12 + length
    width, height, depth, colour, _compression, _filter, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, 'unexpected PNG format %r' % (header,)
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b''.join(idat))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xff
        elif kind == 2:
            line = bytearray((a + b) & 0xff for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xff
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b = previous[i]
                c = previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows
