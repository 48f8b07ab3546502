# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""make check (tools/check.py): the tests it chooses for a change are the ones that exercise the changed code."""
import subprocess

from qualitykit import load

check = load('tools', 'check.py', name='gpu_tray_check')


def test_a_change_in_the_reboot_plan_reaches_its_tests_its_action_and_its_role():
    chosen = check.select(['plugins/plugin_utils/reboot_plan.py'])
    assert {'tests/unit/plugins/plugin_utils/test_reboot_plan.py',
            'tests/unit/plugins/plugin_utils/test_plan_waves.py',
            'tests/unit/plugins/action/test_reboot_step_action.py',          # the action imports the plan
            'tests/cluster/test_rolling_reboot_reports.py'} <= set(chosen), sorted(chosen)   # the role uses the action
    # a test that names none of them is not chosen
    assert 'tests/unit/plugins/module_utils/test_mstconfig_parser.py' not in chosen
    assert 'tests/quality/test_docs.py' not in chosen


def test_roles_playbooks_docs_and_changed_tests_choose_their_own_tests():
    chosen = check.select(['roles/validate/tasks/main.yml', 'docs/stack.md', 'tests/quality/test_check.py'])
    assert chosen['tests/quality/test_check.py'] == 'changed'
    assert chosen['tests/quality/test_docs.py'] == 'reads the docs'
    assert any(why == 'names roles/validate/tasks/main.yml' for why in chosen.values()), chosen
    assert 'tests/unit/plugins/module_utils/test_mstconfig_parser.py' not in chosen


def test_lint_takes_each_changed_file_to_its_linter():
    commands = check.lint_commands(['roles/validate/tasks/main.yml', 'playbooks/validate.yml',
                                    'plugins/plugin_utils/reboot_plan.py', 'tools/run-tests.sh', 'docs/stack.md'])
    by_tool = {c[0].rsplit('/', 1)[-1]: c for c in commands}
    assert set(by_tool) == {'yamllint', 'ansible-lint', 'flake8', 'shellcheck'}, commands
    assert by_tool['ansible-lint'][-2:] == ['playbooks/validate.yml', 'roles/validate']
    assert by_tool['flake8'][-1] == 'plugins/plugin_utils/reboot_plan.py'
    assert by_tool['shellcheck'][-1] == 'tools/run-tests.sh'
    assert check.lint_commands(['docs/stack.md']) == []


def test_the_changed_files_are_the_work_tree_s_change_and_the_untracked_ones(tmp_path, monkeypatch):
    repo = tmp_path / 'repo'
    repo.mkdir()

    def git(*args):
        subprocess.run(['git', '-c', 'user.name=t', '-c', 'user.email=t@localhost'] + list(args), cwd=repo,
                       check=True, capture_output=True)
    git('init', '-q')
    (repo / 'a.py').write_text('a = 1\n')
    (repo / 'b.py').write_text('b = 1\n')
    git('add', '-A')
    git('commit', '-qm', 'one')
    (repo / 'a.py').write_text('a = 2\n')
    (repo / 'c.py').write_text('c = 1\n')
    (repo / '.gitignore').write_text('ignored.py\n')
    (repo / 'ignored.py').write_text('')
    monkeypatch.setattr(check, 'ROOT', repo)
    assert check.changed_files('HEAD') == ['.gitignore', 'a.py', 'c.py']
