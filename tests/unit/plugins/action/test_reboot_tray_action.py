# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reboot_tray action in-process against a simulated tray's connection: ``state: sent`` reads the boot id, runs
the shutdown and returns at once (also when the shutdown cuts the connection); ``state: back`` waits for another boot
id - through connection failures, as ansible.builtin.reboot does - then for the test command; a tray that never
comes back fails after the timeout. The lab tests (tests/lab/test_rolling_reboot*.py) run it on real SSH."""

from unittest.mock import MagicMock

import pytest
from ansible.errors import AnsibleConnectionFailure

from ansible_collections.gpu_tray.cluster.plugins.action import reboot_tray
from unithelpers import action_plugin


class Tray(object):
    """What the action's commands see: a boot id that changes when the tray has rebooted, a test command, and a
    connection that fails while the tray is down."""

    def __init__(self, down_for=0, boot='boot-1', test_fails=0, shutdown_rc=0, cut=False, boot_rc=0, stale_reads=0,
                 rebooting=False):
        self.boot, self.down_for, self.test_fails = boot, down_for, test_fails
        self.shutdown_rc, self.cut, self.boot_rc = shutdown_rc, cut, boot_rc
        self.stale_reads = stale_reads      # reads after the shutdown still answered by the old boot (no refusal)
        self.commands = []
        self.answers = []                   # the boot ids read after the shutdown
        self.rebooting = rebooting          # the shutdown already sent (state back)

    def run(self, cmd, sudoable=True, **_kwargs):
        self.commands.append(cmd)
        if 'shutdown' in cmd:
            if self.cut:
                raise AnsibleConnectionFailure('Shared connection to tray01 closed.')
            if self.shutdown_rc:
                return {'rc': self.shutdown_rc, 'stdout': '', 'stderr': 'shutdown: permission denied'}
            self.rebooting = True
            return {'rc': 0, 'stdout': '', 'stderr': ''}
        if self.rebooting and self.stale_reads > 0 and 'boot_id' in cmd:
            self.stale_reads -= 1
            self.answers.append(self.boot)
            return {'rc': 0, 'stdout': self.boot + '\n', 'stderr': ''}
        if self.rebooting and self.down_for > 0:
            self.down_for -= 1
            raise AnsibleConnectionFailure('ssh: connect to host tray01 port 22: Connection refused')
        if 'boot_id' in cmd:
            if self.rebooting and self.down_for == 0:
                self.boot, self.rebooting = 'boot-2', False
                self.answers.append(self.boot)
            return {'rc': self.boot_rc, 'stdout': self.boot + '\n', 'stderr': 'no boot id' if self.boot_rc else ''}
        if 'is-system-running' in cmd:
            if self.test_fails:
                self.test_fails -= 1
                return {'rc': 1, 'stdout': 'starting', 'stderr': ''}
            return {'rc': 0, 'stdout': 'running', 'stderr': ''}
        raise AssertionError('unexpected command %r' % cmd)


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    slept = []
    monkeypatch.setattr(reboot_tray.time, 'sleep', slept.append)
    import ansible.plugins.action.reboot as upstream
    monkeypatch.setattr(upstream.time, 'sleep', slept.append)
    return slept


def action(args, tray, check_mode=False, transport='ssh'):
    connection = MagicMock(transport=transport)
    connection.get_option.side_effect = lambda name: 10 if name == 'connection_timeout' else None
    module = action_plugin(reboot_tray, args, connection, check_mode=check_mode, action='gpu_tray.cluster.reboot_tray')
    module._low_level_execute_command = tray.run
    return module, connection


SENT = {'state': 'sent', 'boot_time_command': 'cat /run/gpu-tray-lab/boot_id',
        'reboot_command': '/sbin/shutdown -r 0 "gpu_tray.cluster rolling reboot for kernel_tuning"'}
BACK = {'state': 'back', 'boot_time_command': 'cat /run/gpu-tray-lab/boot_id',
        'sent': {'changed': True, 'boot_id': 'boot-1', 'sent_at': 0.0, 'msg': 'Reboot sent (boot id boot-1).'},
        'test_command': 'systemctl is-system-running --wait >/dev/null || true', 'reboot_timeout': 30}


def test_sent_reads_the_boot_id_runs_the_shutdown_and_returns_at_once():
    tray = Tray()
    module, _connection = action(SENT, tray)
    result = module.run(task_vars={})
    assert result['changed'] is True and not result.get('failed')
    assert result['boot_id'] == 'boot-1' and isinstance(result['sent_at'], float)
    assert result['msg'] == 'Reboot sent (boot id boot-1).'
    # the absolute path is used as given: no module call searches the tray for shutdown
    assert tray.commands == ['cat /run/gpu-tray-lab/boot_id', SENT['reboot_command']]


def test_a_shutdown_that_cuts_the_connection_was_sent():
    result = action(SENT, Tray(cut=True))[0].run(task_vars={})
    assert result['changed'] is True and result['boot_id'] == 'boot-1'


def test_a_shutdown_that_fails_is_a_failure_with_its_error():
    result = action(SENT, Tray(shutdown_rc=1))[0].run(task_vars={})
    assert result['failed'] is True and result['rebooted'] is False and result['boot_id'] == 'boot-1'
    assert 'shutdown: permission denied' in result['msg']


def test_a_boot_id_that_cannot_be_read_is_a_failure_before_any_shutdown():
    tray = Tray(boot_rc=1)
    result = action(SENT, tray)[0].run(task_vars={})
    assert result['failed'] is True and result['msg'].startswith('Could not read the boot id before the reboot: ')
    assert 'no boot id' in result['msg']
    assert not any('shutdown' in c for c in tray.commands)


def test_back_waits_through_refused_connections_for_a_new_boot_id_then_the_test_command(no_sleep):
    tray = Tray(down_for=3, test_fails=2, rebooting=True)
    module, connection = action(dict(BACK, post_reboot_delay=0), tray)
    result = module.run(task_vars={})
    assert result['rebooted'] is True and result['changed'] is True and not result.get('failed')
    assert isinstance(result['back_at'], float) and result['msg'] == 'Back with a new boot id.'
    assert tray.boot == 'boot-2'
    assert tray.commands.count(BACK['test_command']) == 3       # until systemd is up
    assert connection.reset.called                              # after a refused connection, as upstream does
    assert len(no_sleep) >= 5                                   # backed off between attempts


def test_the_post_reboot_delay_counts_from_the_send(no_sleep, monkeypatch):
    monkeypatch.setattr(reboot_tray.time, 'time', lambda: 1000.0)
    tray = Tray(rebooting=True)
    action(dict(BACK, post_reboot_delay=10, sent=dict(BACK['sent'], sent_at=996.0)), tray)[0].run(task_vars={})
    assert no_sleep[0] == 6.0
    no_sleep[:] = []
    tray = Tray(rebooting=True)
    action(dict(BACK, post_reboot_delay=10, sent=dict(BACK['sent'], sent_at=980.0)), tray)[0].run(task_vars={})
    assert 6.0 not in no_sleep and not [s for s in no_sleep if s >= 4]     # long over: no delay left


def test_a_tray_that_does_not_come_back_fails_after_the_timeout(monkeypatch):
    clock = [0.0]
    import ansible.plugins.action.reboot as upstream

    class Clock(object):
        @staticmethod
        def now(tz=None):
            clock[0] += 5
            return upstream.datetime.fromtimestamp(clock[0], tz)

    monkeypatch.setattr(upstream, 'datetime', type('D', (), {'now': Clock.now,
                                                             'fromtimestamp': upstream.datetime.fromtimestamp}))
    tray = Tray(down_for=10 ** 6, rebooting=True)
    result = action(dict(BACK, reboot_timeout=30), tray)[0].run(task_vars={})
    assert result['failed'] is True and result['rebooted'] is False and result['changed'] is False
    assert result['msg'].startswith('Not back within 30 s: Timed out waiting for last boot time check')
    assert 'back_at' not in result


@pytest.mark.parametrize('sent', [None, {}, {'boot_id': 'boot-1'}, {'boot_id': '', 'sent_at': 1.0},
                                  {'boot_id': 'boot-1', 'sent_at': 1.0, 'failed': True}])
def test_back_needs_what_the_send_returned(sent):
    tray = Tray()
    result = action(dict(BACK, sent=sent), tray)[0].run(task_vars={})
    assert result['failed'] is True and 'needs sent, the result state sent returned' in result['msg'], result
    assert tray.commands == []


def test_a_tray_answering_its_old_boot_id_after_the_shutdown_is_not_back(monkeypatch):
    """The send and the wait as the role chains them, on a tray that still answers - with its old boot id - for a
    few reads after the shutdown started, and no post_reboot_delay to hide it: the wait compares with the boot id
    read before the shutdown (what the send returned), so it is back only with the new one. Were the wait handed a
    boot id read after the send (the old one again, or the tray's answer to a fresh read), it would count the tray
    back at the first read."""
    tray = Tray(stale_reads=3)
    sent = action(SENT, tray)[0].run(task_vars={})
    assert sent['boot_id'] == 'boot-1'
    reads_before = tray.commands.count(SENT['boot_time_command'])
    result = action(dict(BACK, post_reboot_delay=0, sent=sent), tray)[0].run(task_vars={})
    assert result['rebooted'] is True and tray.boot == 'boot-2', result
    # three reads still saw boot-1 (not back), the fourth saw boot-2
    assert tray.commands.count(SENT['boot_time_command']) - reads_before == 4, tray.commands
    assert tray.answers == ['boot-1', 'boot-1', 'boot-1', 'boot-2'], tray.answers


def test_check_mode_sends_nothing():
    tray = Tray()
    result = action(SENT, tray, check_mode=True)[0].run(task_vars={})
    assert result['changed'] is True and tray.commands == []
    result = action(BACK, tray, check_mode=True)[0].run(task_vars={})
    assert result['changed'] is False and tray.commands == []


def test_never_over_a_local_connection():
    tray = Tray()
    result = action(SENT, tray, transport='local')[0].run(task_vars={})
    assert result['failed'] is True and 'would reboot the controller' in result['msg'] and tray.commands == []


def test_unknown_options_and_a_bad_state_are_refused():
    from ansible.errors import AnsibleActionFail
    with pytest.raises(AnsibleActionFail, match='Invalid options for gpu_tray.cluster.reboot_tray: search_paths'):
        action(dict(SENT, search_paths=['/sbin']), Tray())[0].run(task_vars={})
    with pytest.raises(AnsibleActionFail, match='state'):
        action(dict(SENT, state='gone'), Tray())[0].run(task_vars={})


def test_the_connection_timeout_is_read_from_the_plugin():
    module, connection = action(BACK, Tray())
    assert module._connection_timeout() == 10
    connection.get_option.side_effect = KeyError('connection_timeout')
    assert module._connection_timeout() is None
