# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the validation finds each tray's preflight record (``<run folder>/<tray>/preflight.json``), as one pure
function over the places it looks - the lookup gpu_tray.cluster.preflight_records reads the files.

The order (docs/validation.md "The trays phase"): this run's preflight (the tray's ``preflight_evidence``), else the
record in this run's report directory (one AWX workflow writes one folder), else in the folder the preflight's
artifacts name (``gpu_tray_evidence.preflight.dir``, handed on by AWX), else the newest earlier run folder that holds
one (a validate job launched on its own). A record without the PF state (``rdma``) counts as none."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

THIS_RUN = 'this run'


def record_path(tray):
    return '%s/preflight.json' % tray


def _entry(source, where, data):
    rdma = (data or {}).get('rdma')
    if source != THIS_RUN and not rdma:
        return {'source': None, 'dir': None, 'rdma': None, 'checks': []}
    return {'source': source, 'dir': where, 'rdma': rdma, 'checks': list((data or {}).get('checks') or [])}


def find(trays, this_run, dirs, read, newest):
    """``{'records': {tray: {source, dir, rdma, checks}}, 'found': {dir: [trays]}, 'missing': [trays]}``.

    ``this_run``: {tray: the preflight evidence of this run}; ``dirs``: the directories to look in first, in order
    (empty ones skipped); ``read(path)``: the file's text or None; ``newest(relative)``: the newest run folder that
    holds it, or ''. The first file found is the record (a later place is not looked at), as the trays phase has
    always read it. ValueError names a record that is not JSON."""
    records = {}
    for tray in trays:
        if tray in this_run:
            records[tray] = _entry(THIS_RUN, THIS_RUN, this_run[tray])
            continue
        relative = record_path(tray)
        where, text = None, None
        for directory in [d for d in dirs if d]:
            text = read('%s/%s' % (directory, relative))
            if text:
                where = directory
                break
        if not where:
            directory = newest(relative)
            if directory:
                where, text = directory, read('%s/%s' % (directory, relative))
        data = None
        if where and text:
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise ValueError('%s/%s is not JSON (%s)' % (where, relative, exc))
        records[tray] = _entry('%s/%s' % (where, relative) if where else None, where, data)
    found, missing = {}, []
    for tray in sorted(records):
        if records[tray]['dir']:
            found.setdefault(records[tray]['dir'], []).append(tray)
        else:
            missing.append(tray)
    return {'records': records, 'found': found, 'missing': missing}


def phase_checks(records):
    """The preflight's checks as a phase of the evidence bundle: each tray's records found, named ``<tray>/<check>``
    with the tray as their object, trays in order; a tray without a record is a skipped check saying so."""
    from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record, renamed
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.evidence import natural_key
    out = []
    for tray in sorted(records, key=natural_key):
        entry = records[tray]
        if not entry.get('dir'):
            out.append(record('%s/preflight' % tray, 'skipped',
                              'No preflight record of %s was found: its preflight is not part of this evidence.' % tray,
                              obj=tray))
            continue
        for check in entry.get('checks') or []:
            out.append(renamed(check, '%s/%s' % (tray, check.get('name')), obj=tray))
    return out
