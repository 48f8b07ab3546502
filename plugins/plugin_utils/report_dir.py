# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a run's reports go on the controller (docs/awx.md "Where the reports go"), as pure functions.

``gpu_tray_report_dir`` is the base directory: by default ``gpu-tray-report`` (relative to where ansible-playbook
was started) outside AWX, and ``/var/lib/gpu-tray-report`` in an AWX / AAP job (``awx_job_id`` is set), where the
working directory is the project inside the job's execution environment and vanishes with it: a persistent volume
mounted there keeps the reports. A run that has an id - ``gpu_tray_run_id``, else in AWX the workflow job's
(``awx-workflow-job-<awx_workflow_job_id>``: every node of one workflow writes into the same folder, so validate finds
the preflight's records) or the job's (``awx-job-<awx_job_id>``) - writes into its own folder ``<base>/<run id>``,
and ``<base>/latest`` points at the last run that wrote reports. A run without an id (the command line) writes into
the base directory itself, as before.

:func:`locate` says where; :func:`newest_with` finds the newest run folder holding a file (the preflight record an
earlier job left, the validation summary to compare the recipe digest with). The lookup
``gpu_tray.cluster.report_dir`` gives them to the roles' defaults; the write_evidence action points ``latest``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import re
import tempfile

from ansible.module_utils.common.text.converters import to_bytes

DEFAULT_REPORT_DIR = 'gpu-tray-report'
AWX_REPORT_DIR = '/var/lib/gpu-tray-report'
LATEST = 'latest'
_RUN_ID = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$')


class ReportDirError(ValueError):
    """A value that cannot name a report folder; the text names the variable."""


def _given(value):
    return value is not None and str(value).strip() != ''


def run_id(gpu_tray_run_id=None, awx_job_id=None, awx_workflow_job_id=None):
    """The run's folder name: gpu_tray_run_id, else the AWX workflow job's, else the AWX job's; '' without one."""
    if _given(gpu_tray_run_id):
        name = str(gpu_tray_run_id).strip()
        if not _RUN_ID.match(name) or name == LATEST:
            raise ReportDirError('gpu_tray_run_id: %r is not a folder name (letters, digits, ".", "_", "-", at most 128, '
                                 'not "latest")' % name)
        return name
    for variable, prefix, value in (('awx_workflow_job_id', 'awx-workflow-job-', awx_workflow_job_id),
                                    ('awx_job_id', 'awx-job-', awx_job_id)):
        if _given(value):
            if not re.match(r'^[0-9]+$', str(value).strip()):
                raise ReportDirError('%s: %r is not an AWX job id' % (variable, value))
            return prefix + str(value).strip()
    return ''


def locate(report_dir=None, gpu_tray_run_id=None, awx_job_id=None, awx_workflow_job_id=None):
    """``{base, run_id, dir, latest}``: the base directory, the run's id ('' without one), the directory this run
    writes its reports into, and the ``latest`` link beside it ('' without a run id)."""
    if _given(report_dir):
        base = str(report_dir).rstrip('/') or '/'
    else:
        base = AWX_REPORT_DIR if _given(awx_job_id) else DEFAULT_REPORT_DIR
    name = run_id(gpu_tray_run_id, awx_job_id, awx_workflow_job_id)
    if not name:
        return {'base': base, 'run_id': '', 'dir': base, 'latest': ''}
    return {'base': base, 'run_id': name, 'dir': os.path.join(base, name), 'latest': os.path.join(base, LATEST)}


def newest_with(base, relative, prefer=None):
    """The run folder under ``base`` holding ``relative`` (a path inside a run folder) that was written last (by the
    file's mtime), or '' when none does. ``prefer`` (a run folder) wins when it holds the file: the run's own."""
    if prefer and os.path.isfile(os.path.join(prefer, relative)):
        return prefer
    try:
        entries = [entry for entry in os.scandir(base) if entry.name != LATEST and entry.is_dir()]
    except OSError:
        return ''
    found = []
    for entry in entries:
        try:
            found.append((os.stat(os.path.join(entry.path, relative)).st_mtime, entry.name, entry.path))
        except OSError:
            continue
    return max(found)[2] if found else ''


def newest(where, relative, prefer=None):
    """The run folder to read ``relative`` from, for a run placed by ``locate`` (``where``): with run folders, the
    newest under the base that holds it (``newest_with``); without, the run's own directory (or ``prefer``) when it
    holds it. '' when none does."""
    if not where['run_id']:
        prefer = prefer or where['dir']
        return prefer if os.path.isfile(os.path.join(prefer, relative)) else ''
    return newest_with(where['base'], relative, prefer=prefer)


# ---- writing a report (the write_evidence and phase_record actions) ----------------------------------------------

def render(item):
    """The bytes of one file: ``content`` as given, ``json`` as sorted, indented JSON plus a newline."""
    if item.get('json') is not None:
        return to_bytes(json.dumps(item['json'], indent=4, sort_keys=True) + '\n')
    return to_bytes(item['content'])


def target(dest, relative):
    """``dest/relative``; refuses absolute paths and ``..`` (a file must stay under dest)."""
    parts = relative.replace('\\', '/').split('/')
    if os.path.isabs(relative) or '..' in parts or not relative.strip('/'):
        raise ReportDirError('files[].path %r must be a relative path under dest' % relative)
    return os.path.join(dest, *[part for part in parts if part])


def write_if_changed(path, data, mode):
    """Atomically replace ``path`` when its content differs; True when it was written."""
    try:
        with open(path, 'rb') as handle:
            if handle.read() == data:
                return False
    except (IOError, OSError):
        pass
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    fd, tmp = tempfile.mkstemp(prefix='.evidence-', dir=parent)
    try:
        with os.fdopen(fd, 'wb') as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    except Exception:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def point_latest(run_dir):
    """Point the link ``latest`` beside ``run_dir`` at it (relative, replaced atomically); the link's path, or None
    when it already pointed there. Refuses to replace a ``latest`` that is not a link."""
    run_dir = os.path.abspath(run_dir)
    parent, name = os.path.split(run_dir)
    link = os.path.join(parent, LATEST)
    if os.path.islink(link) and os.readlink(link) == name:
        return None
    if os.path.lexists(link) and not os.path.islink(link):
        raise ReportDirError('%s exists and is not a link: it cannot point at the latest run' % link)
    tmp = os.path.join(parent, '.%s.%d' % (LATEST, os.getpid()))
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(name, tmp)
    os.rename(tmp, link)
    return link
