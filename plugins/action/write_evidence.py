# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.write_evidence: write report files on the controller, in-process.

Used with run_once: one task writes every tray's evidence and the summary, where a copy or template
per tray would start a module process per file (the cost that grows with the fleet).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_bytes, to_native
from ansible.plugins.action import ActionBase

ARGUMENT_SPEC = dict(
    dest=dict(type='path', required=True),
    files=dict(type='list', elements='dict', required=True, options=dict(
        path=dict(type='str', required=True),
        content=dict(type='str'),
        json=dict(type='raw'),
    ), required_one_of=[['content', 'json']], mutually_exclusive=[['content', 'json']]),
    mode=dict(type='str', default='0644'),
)


def render(item):
    """The bytes of one file: ``content`` as given, ``json`` as sorted, indented JSON plus a newline."""
    if item.get('json') is not None:
        return to_bytes(json.dumps(item['json'], indent=4, sort_keys=True) + '\n')
    return to_bytes(item['content'])


def target(dest, relative):
    """``dest/relative``; refuses absolute paths and ``..`` (a file must stay under dest)."""
    parts = relative.replace('\\', '/').split('/')
    if os.path.isabs(relative) or '..' in parts or not relative.strip('/'):
        raise AnsibleActionFail('write_evidence: files[].path %r must be a relative path under dest' % relative)
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
        written = []
        try:
            for item in args['files']:
                path = target(dest, item['path'])
                if write_if_changed(path, render(item), mode):
                    written.append(path)
        except (IOError, OSError) as exc:
            raise AnsibleActionFail('write_evidence: cannot write under %s: %s' % (dest, to_native(exc)))
        result.update(changed=bool(written), dest=dest, written=written,
                      msg='%d of %d files written under %s.' % (len(written), len(args['files']), dest))
        return result
