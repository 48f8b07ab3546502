# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the helm check says when kubernetes.core.helm_plugin_info fails before it runs helm (a kubeconfig that is not
one): the module's own words, whichever shape ansible-core hands them in - never "no answer" (the stop matrix's
module-error cells run it: tests/cluster/test_stop_matrix.py)."""
import types

from ansible_collections.gpu_tray.cluster.plugins.action.check_inputs import failure_text


def test_the_message_of_a_2_19_error_summary_is_read():
    event = types.SimpleNamespace(msg='while parsing a flow sequence\n  in "/k/broken", line 1, column 11')
    assert failure_text({'failed': True, 'exception': types.SimpleNamespace(event=event)}) == \
        'while parsing a flow sequence in "/k/broken", line 1, column 11'


def test_msg_then_stderr_then_the_last_line_of_a_traceback():
    assert failure_text({'msg': 'bad\n  thing', 'module_stderr': 'x'}) == 'bad thing'
    assert failure_text({'module_stderr': 'pyenv: python3.13: command not found\n'}) == \
        'pyenv: python3.13: command not found'
    assert failure_text({'exception': 'Traceback (most recent call last):\n  File "x"\nyaml.YAMLError: bad\n'}) == \
        'yaml.YAMLError: bad'
    assert failure_text({'failed': True}) == 'no answer'
