# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.write_evidence: write report files on the controller, in-process.

Used with run_once: one task writes every tray's evidence and the summary, where a copy or template
per tray would start a module process per file (the cost that grows with the fleet).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native
from ansible.plugins.action import ActionBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.report_dir import (
    LATEST, ReportDirError, point_latest, render, target, write_if_changed)

ARGUMENT_SPEC = dict(
    dest=dict(type='path', required=True),
    files=dict(type='list', elements='dict', required=True, options=dict(
        path=dict(type='str', required=True),
        content=dict(type='str'),
        json=dict(type='raw'),
    ), required_one_of=[['content', 'json']], mutually_exclusive=[['content', 'json']]),
    mode=dict(type='str', default='0644'),
    run_dir=dict(type='path'),
)


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        try:
            mode = int(args['mode'], 8)
        except ValueError:
            raise AnsibleActionFail('write_evidence: mode %r is not an octal mode such as 0644' % args['mode'])
        dest = os.path.abspath(os.path.expanduser(args['dest']))
        run_dir = os.path.abspath(os.path.expanduser(args['run_dir'])) if args.get('run_dir') else None
        if run_dir and dest != run_dir and not dest.startswith(run_dir + os.sep):
            raise AnsibleActionFail('write_evidence: dest %s is not inside run_dir %s' % (dest, run_dir))
        written = []
        latest = None
        try:
            for item in args['files']:
                path = target(dest, item['path'])
                if write_if_changed(path, render(item), mode):
                    written.append(path)
            if run_dir:
                latest = point_latest(run_dir)
        except (IOError, OSError, ReportDirError) as exc:
            raise AnsibleActionFail('write_evidence: cannot write under %s: %s' % (dest, to_native(exc)))
        result.update(changed=bool(written), dest=dest, written=written,
                      msg='%d of %d files written under %s%s.' % (
                          len(written), len(args['files']), dest,
                          '; %s points at it' % latest if latest else ''))
        if run_dir:
            result['latest'] = os.path.join(os.path.dirname(run_dir), LATEST)
        return result
