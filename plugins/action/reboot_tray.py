# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.reboot_tray: ansible.builtin.reboot cut in two, so that a wave's width does not
depend on the run's forks.

ansible.builtin.reboot sends the shutdown and then waits for the tray in the same task, holding a worker (a fork)
for the whole reboot: a wave of 144 trays would need --forks 144. Here ``state: sent`` reads the boot id and sends
the shutdown - and returns, the tray still going down - and ``state: back`` waits for a new boot id and the test
command. The role sends the reboot to every tray of a wave first, then waits for each: every tray of the wave is
down together whatever the forks, which bound only how fast the sends and the waits go.

Both halves are ansible.builtin.reboot's own code (its ActionModule is the base class: the boot id read, the
shutdown command and its handling of a connection the shutdown cuts, the wait with back-off and connection
resets, the test command), called as its ``run`` calls them; only where its ``run`` does both in one task, this
one does one per task.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import time

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_text
from ansible.plugins.action import ActionBase
from ansible.plugins.action.reboot import ActionModule as RebootAction

# ansible.builtin.reboot keys its per-distribution defaults by these; every command here is given explicitly
LINUX = {'name': 'linux', 'version': '', 'family': 'linux'}

ARGUMENT_SPEC = dict(
    state=dict(type='str', required=True, choices=['sent', 'back']),
    boot_time_command=dict(type='str', default=RebootAction.DEFAULT_BOOT_TIME_COMMAND),
    reboot_command=dict(type='str', default='/sbin/shutdown -r 0 "%s"' % RebootAction.DEFAULT_REBOOT_MESSAGE),
    sent=dict(type='dict'),
    post_reboot_delay=dict(type='int', default=0),
    reboot_timeout=dict(type='int', default=RebootAction.DEFAULT_REBOOT_TIMEOUT),
    test_command=dict(type='str', default=RebootAction.DEFAULT_TEST_COMMAND),
)


class ActionModule(RebootAction):

    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _supports_check_mode = True

    def _connection_timeout(self):
        for option in ('connection_timeout', 'timeout'):
            try:
                return self._connection.get_option(option)
            except KeyError:
                continue
        return None

    def run(self, tmp=None, task_vars=None):
        result = ActionBase.run(self, tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        if self._connection.transport == 'local':
            return dict(result, failed=True, msg='Running reboot_tray with a local connection would reboot the '
                                                 'controller.')
        if self._task.check_mode:
            return dict(result, changed=args['state'] == 'sent', skipped_in_check_mode=True)
        # the base class reads its options from the task's arguments
        self._task.args = dict((key, value) for key, value in args.items() if value is not None)
        if args['state'] == 'sent':
            return self._send(result, task_vars or {})
        return self._back(result, args)

    def _send(self, result, task_vars):
        try:
            boot_id = self.get_system_boot_time(LINUX)
        except AnsibleError as exc:
            return dict(result, failed=True, msg='Could not read the boot id before the reboot: %s' % to_text(exc))
        sent = self.perform_reboot(task_vars, LINUX)
        if sent.get('failed'):
            return dict(result, failed=True, rebooted=False, boot_id=boot_id, msg=sent.get('msg'))
        return dict(result, changed=True, boot_id=boot_id, sent_at=time.time(),
                    msg='Reboot sent (boot id %s).' % boot_id)

    def _back(self, result, args):
        # only what state sent returned: the boot id read before the shutdown and when it was sent - a boot id read
        # after it could still be the old one (a tray answers for a moment after shutdown starts) and would count
        # the tray back at once
        sent = args.get('sent') or {}
        if not sent.get('boot_id') or not isinstance(sent.get('sent_at'), (int, float)) or sent.get('failed'):
            return dict(result, failed=True, msg='reboot_tray state back needs sent, the result state sent returned '
                                                 'for this tray (its boot_id and sent_at).')
        since = time.time() - sent['sent_at']
        delay = max(0.0, args['post_reboot_delay'] - since)
        if delay:
            time.sleep(delay)
        back = self.validate_reboot(LINUX, self._connection_timeout(),
                                    action_kwargs={'previous_boot_time': sent['boot_id']})
        result.update(back)
        result.pop('rebooted', None)
        if back.get('failed'):
            result.update(rebooted=False, changed=False,
                          msg='Not back within %d s: %s' % (args['reboot_timeout'], back.get('msg') or 'no answer'))
            return result
        result.update(rebooted=True, changed=True, back_at=time.time(), msg='Back with a new boot id.')
        return result
