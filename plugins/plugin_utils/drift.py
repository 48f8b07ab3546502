# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Drift: what changed since the last passing validation, per tray and per component (issue 46 item 3).

A run records the values a later run compares (``state.json`` of its evidence): per tray what its read shows
(kernel, kernel arguments, GPU driver, per PF its VF count, per InfiniBand port its P_Keys), per component of the
recipe its version and the images its namespace runs. The last passing run's values are carried from run to run
(``last-pass.json``: this run's own when it passed, else the one it found), so a failed run in between never
becomes the baseline. ``changes(before, after)`` lists what differs; ``groups(changes)`` folds the same change on
many trays into one row, as the report shows it. Pure functions."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.evidence import name_ranges, natural_key

STATE = 'state.json'
LAST_PASS = 'last-pass.json'
DRIFT = 'drift.json'
FORMAT = 1


def tray_values(state):
    """{what: value} of one tray_state read (None when the tray was not read): ``kernel``, ``kernel arguments``,
    ``GPU driver``, ``<pf> VFs`` (sriov_numvfs), ``<device> port <n> P_Keys`` (PFs and the VFs the host sees)."""
    if not isinstance(state, dict) or not isinstance(state.get('ansible_facts'), dict):
        return None
    facts = state['ansible_facts']
    tray = facts.get('gpu_tray') or {}
    out = {}
    if tray.get('kernel_release'):
        out['kernel'] = tray['kernel_release']
    cmdline = (state.get('cmdline') or {}).get('text')
    if cmdline:
        out['kernel arguments'] = ' '.join(token for token in cmdline.split() if not token.startswith('BOOT_IMAGE='))
    for path, entry in sorted((state.get('files') or {}).items()):
        if path.endswith('/driver/nvidia/version') and isinstance(entry, dict) and entry.get('content'):
            out['GPU driver'] = entry['content'].strip().splitlines()[0].strip()
    for device in (facts.get('gpu_tray_rdma') or {}).get('devices') or []:
        if device.get('kind') == 'pf' and device.get('sriov_numvfs') is not None:
            out['%s VFs' % device['name']] = device['sriov_numvfs']
        for port in device.get('ports') or []:
            if port.get('pkeys') is not None:
                out['%s port %s P_Keys' % (device['name'], port.get('port'))] = ', '.join(port['pkeys'])
    return out


def component_values(plan, images):
    """{component: {version, images}}: the recipe's version of each component and the images its namespace runs
    (``images``: {namespace: [{image, digest}]} as attestation.pod_images makes it; None when not read)."""
    out = {}
    for comp in plan.get('components') or []:
        entry = {'version': str(comp.get('version') or '')}
        if images is not None:
            entry['images'] = ', '.join(sorted('%s@%s' % (i['image'], i['digest']) if i['digest'] else i['image']
                                               for i in images.get(comp['namespace'], [])))
        out[comp['name']] = entry
    return out


def record(trays, components, generated, result):
    """state.json: the values of this run, its time and result."""
    return {'format': FORMAT, 'generated': generated, 'result': result,
            'trays': dict((name, values) for name, values in trays.items() if values is not None),
            'components': components}


def last_pass(current, previous_last_pass, unread=()):
    """last-pass.json of this run: its own record when it passed, else the last passing one it found (or None). A
    passing run that did not read some of its trays (``unread``: a phase run alone) or the cluster's pods keeps the
    earlier pass's values of those: a baseline never loses what this run could not see."""
    previous = previous_last_pass if isinstance(previous_last_pass, dict) else None
    if current.get('result') != 'passed':
        return previous
    if previous is None:
        return current
    trays = dict(current.get('trays') or {})
    for name in unread:
        if name in (previous.get('trays') or {}):
            trays[name] = previous['trays'][name]
    components = {}
    for name, entry in (current.get('components') or {}).items():
        components[name] = dict(entry)
        before = (previous.get('components') or {}).get(name) or {}
        if 'images' not in entry and 'images' in before:     # the pods were not read this run
            components[name]['images'] = before['images']
    return dict(current, trays=trays, components=components)


def changes(before, after):
    """What changed from ``before`` (a last-pass record) to ``after`` (this run's): [{scope (tray or component),
    object, what, before, after}], trays then components, naturally sorted. A tray or component in only one of them
    is one change (what ``tray`` / ``component``); a tray this run could not read is not a change."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    out = []
    for scope, key in (('tray', 'trays'), ('component', 'components')):
        old, new = before.get(key) or {}, after.get(key) or {}
        for name in sorted(set(old) | set(new), key=natural_key):
            if name not in new:
                if scope == 'component':
                    out.append(_change(scope, name, scope, 'in the recipe', 'not in the recipe'))
                continue
            if name not in old:
                out.append(_change(scope, name, scope, 'not there', 'in the recipe' if scope == 'component'
                                   else 'new'))
                continue
            for what in sorted(set(old[name]) | set(new[name]), key=natural_key):
                if scope == 'component' and what == 'images' and what not in new[name]:
                    continue        # the cluster's pods were not read this run: not compared (not_compared says so)
                if what in new[name] and what in old[name] and old[name][what] != new[name][what]:
                    out.append(_change(scope, name, what, old[name][what], new[name][what]))
                elif what not in old[name] or what not in new[name]:
                    out.append(_change(scope, name, what, old[name].get(what, 'none'), new[name].get(what, 'none')))
    return out


def _change(scope, obj, what, before, after):
    return {'scope': scope, 'object': obj, 'what': what, 'before': _text(before), 'after': _text(after)}


def _text(value):
    return '' if value is None else str(value)


def groups(found):
    """The changes folded for the report: one row per (scope, what, before, after) with the objects it holds for,
    a tray's device keys folded across trays (``mlx5_4 VFs: 16 -> 8`` on tray042 and tray043 is one row)."""
    rows = {}
    for change in found:
        key = (change['scope'], change['what'], change['before'], change['after'])
        rows.setdefault(key, []).append(change['object'])
    out = [{'scope': key[0], 'what': key[1], 'before': key[2], 'after': key[3],
            'objects': sorted(objects, key=natural_key)} for key, objects in rows.items()]
    return sorted(out, key=lambda row: (row['scope'] != 'tray', natural_key(row['objects'][0]), natural_key(row['what'])))


def where(row):
    """``3 trays: tray005, tray017, tray120`` (ranges for runs) or the one object."""
    if len(row['objects']) == 1:
        return row['objects'][0]
    return '%d %ss: %s' % (len(row['objects']), row['scope'], name_ranges(row['objects']))


def sentence(found, baseline, unread=None, result='passed'):
    """One line for a task message and the AWX artifact: how many changes on how many trays and components since
    the baseline's time, or that nothing changed (with no baseline: whether this run becomes the first - only a pass
    does); then what this run could not compare (``unread``: not_compared)."""
    return _sentence(found, baseline, result) + _unread_sentence(unread or {})


def _unread_sentence(unread):
    parts = []
    if unread.get('trays'):
        trays = unread['trays']
        parts.append('%d tray%s (%s) not read this run' % (len(trays), '' if len(trays) == 1 else 's',
                                                           name_ranges(trays)))
    if unread.get('images'):
        parts.append('the images (the cluster\'s pods were not read)')
    return (' Not compared: %s.' % '; '.join(parts)) if parts else ''


def _sentence(found, baseline, result):
    if baseline is None:
        return 'No earlier passing run to compare with%s' % (
            ': this run is the first baseline.' if result == 'passed' else ' (this run failed: it is no baseline).')
    if not found:
        return 'Nothing changed since the last passing run (%s).' % baseline.get('generated')
    trays = sorted(set(c['object'] for c in found if c['scope'] == 'tray'), key=natural_key)
    comps = sorted(set(c['object'] for c in found if c['scope'] == 'component'), key=natural_key)
    parts = []
    if trays:
        parts.append('%d tray%s (%s)' % (len(trays), '' if len(trays) == 1 else 's', name_ranges(trays)))
    if comps:
        parts.append('%d component%s (%s)' % (len(comps), '' if len(comps) == 1 else 's', ', '.join(comps)))
    return '%d change%s since the last passing run (%s) on %s.' % (
        len(found), '' if len(found) == 1 else 's', baseline.get('generated'), ' and '.join(parts))


def evaluate(trays, plan, pods, previous, generated, result):
    """Everything a run does with drift, from its inputs: ``trays`` ({tray: tray_state result or None}), ``plan``
    (the stack plan), ``pods`` (the cluster's pods, None when not read), ``previous`` (the last-pass record found,
    or None), this run's time and result (passed or failed). Returns ``changes``, ``report`` (for the reports:
    summary, baseline time, grouped rows) and ``files`` (state.json, last-pass.json and drift.json for
    write_evidence)."""
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.attestation import pod_images
    if result not in ('passed', 'failed'):
        raise ValueError('result must be passed or failed, got %r' % (result,))
    values = dict((name, tray_values(state)) for name, state in (trays or {}).items())
    current = record(values, component_values(plan or {}, pod_images(pods) if pods is not None else None),
                     generated, result)
    baseline = previous if isinstance(previous, dict) and previous.get('format') == FORMAT else None
    found = changes(baseline, current)
    rows = [dict(row, where=where(row)) for row in groups(found)]
    unread = {'trays': sorted((name for name, value in values.items() if value is None), key=natural_key),
              'images': pods is None}
    report = {'summary': sentence(found, baseline, unread, result), 'baseline': (baseline or {}).get('generated'),
              'rows': rows, 'changes': found, 'not_compared': unread}
    files = [{'path': STATE, 'json': current}, {'path': DRIFT, 'json': report}]
    carried = last_pass(current, baseline, unread['trays'])
    if carried is not None:
        files.append({'path': LAST_PASS, 'json': carried})
    return {'changes': found, 'report': report, 'files': files}
