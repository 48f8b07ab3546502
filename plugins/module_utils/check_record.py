# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one record of a check, in every phase: the judges, the check modules, the preflight, the rolling reboot's
verification, the validation (trays, resources, conformance, cluster rules), the evidence and the reports.

A record is a dict with exactly these keys:

``name``
    the check (``pkeys``); a phase that judges many objects in one table qualifies it (``tray02/pkeys``)
``status``
    ``passed``, ``failed``, ``warning`` (passed, with something it could not judge - listed in ``details``) or
    ``skipped`` (not judged; ``message`` says why)
``message``
    one sentence stating the finding: the object and what is wrong; never the host, which Ansible prints and the
    reports show beside it
``fix``
    what a person does about it; ``''`` unless the check failed or warned
``details``
    one text per finding (the ports, files, objects the message summarises), then what could not be judged
``data``
    the structured findings, for the evidence (JSON); a judge keeps what it could not judge in ``data.notes`` too
``object``
    what was checked - a tray, a Kubernetes object - or ``''``
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

STATUSES = ('passed', 'failed', 'warning', 'skipped')
KEYS = ('name', 'status', 'message', 'fix', 'details', 'data', 'object')


def record(name, status, message, fix=None, details=None, data=None, obj=None):
    """A check record (see the module docstring); ValueError for a status that is not one of STATUSES."""
    if status not in STATUSES:
        raise ValueError('check %s: status %r is not one of %s' % (name, status, ', '.join(STATUSES)))
    return {'name': name, 'status': status, 'message': message,
            'fix': (fix or '') if status in ('failed', 'warning') else '',
            'details': list(details or []), 'data': dict(data or {}), 'object': obj or ''}


def renamed(check, name, obj=None):
    """The same record under another name (a phase that qualifies it: ``tray02/pkeys``) and object."""
    return dict(check, name=name, object=check['object'] if obj is None else obj)


def failed(check):
    return check['status'] == 'failed'


def findings(check):
    """A judged record's findings: its details without the notes it keeps in ``data.notes`` (what could not be
    judged, which follow the findings in ``details``)."""
    notes = check['data'].get('notes') or []
    return check['details'][:len(check['details']) - len(notes)] if notes else list(check['details'])
