# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""lookup gpu_tray.cluster.forks: the command line's --forks wins over the configured forks (which is all the
ansible.builtin.config lookup can see), and a run through `ansible-playbook --forks` really reports it."""
import os
import subprocess
import sys

from ansible import context
from ansible.module_utils.common.collections import ImmutableDict

from ansible_collections.gpu_tray.cluster.plugins.lookup.forks import LookupModule

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..'))


def test_the_command_line_forks_win(monkeypatch):
    monkeypatch.setattr(context, 'CLIARGS', ImmutableDict(forks=3))
    assert LookupModule().run([]) == [3]


def test_without_a_command_line_the_configured_forks_apply(monkeypatch):
    monkeypatch.setattr(context, 'CLIARGS', ImmutableDict())
    monkeypatch.setenv('ANSIBLE_FORKS', '7')
    from ansible import constants as C
    monkeypatch.setattr(C.config, 'get_config_value', lambda name, *a, **k: 7 if name == 'DEFAULT_FORKS' else None)
    assert LookupModule().run([]) == [7]


def test_ansible_reports_the_forks_it_runs_with():
    env = dict(os.environ, ANSIBLE_FORKS='9')
    out = {}
    for args in ([], ['--forks', '2']):
        proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible'), 'localhost', '-c', 'local',
                               '-m', 'ansible.builtin.debug', '-a', "msg=forks={{ lookup('gpu_tray.cluster.forks') }}"]
                              + args, cwd=REPO, env=env, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out[tuple(args)] = proc.stdout
    assert '"msg": "forks=9"' in out[()] and '"msg": "forks=2"' in out[('--forks', '2')], out
