# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""module_utils/reboot_controllers.py: which NodeWright / Skyhook objects would interrupt the trays of a run."""
import pytest

from ansible_collections.gpu_tray.cluster.plugins.module_utils import reboot_controllers as rc

GPU = {'nvidia.com/gpu.present': 'true', 'node-role.kubernetes.io/worker': ''}
CP = {'nvidia.com/gpu.present': 'true', 'node-role.kubernetes.io/control-plane': ''}
NODES = {'tray01': GPU, 'tray02': GPU, 'cp01': CP}


def cr(name, packages, selector=None, kind='Skyhook'):
    spec = {'packages': packages}
    if selector is not None:
        spec['nodeSelectors'] = selector
    return {'kind': kind, 'metadata': {'name': name}, 'spec': spec}


TUNED = {'nvidia-tuned': {'interrupt': {'type': 'reboot'}, 'configInterrupts': {'intent': {'type': 'reboot'}}}}


def test_the_aicr_tuning_cr_on_gpu_nodes_is_found_with_every_tray():
    found = rc.foreign_reboot_controllers([cr('tuning', TUNED, {'matchLabels': {'nvidia.com/gpu.present': 'true'}},
                                              'NodeWright')], NODES, ['tray01', 'tray02'])
    assert found == [{'kind': 'NodeWright', 'name': 'tuning', 'interrupts': ['nvidia-tuned: reboot'],
                      'trays': ['tray01', 'tray02']}]


def test_an_absent_selector_matches_every_node_and_config_interrupts_count():
    pkg = {'p': {'configInterrupts': {'service': {'type': 'restartAllServices'}}}}
    assert rc.foreign_reboot_controllers([cr('all', pkg)], NODES, ['tray02'])[0]['trays'] == ['tray02']


@pytest.mark.parametrize('selector, trays', [
    ({'matchLabels': {'nvidia.com/gpu.present': 'false'}}, []),
    ({'matchExpressions': [{'key': 'node-role.kubernetes.io/control-plane', 'operator': 'Exists'}]}, []),
    ({'matchExpressions': [{'key': 'node-role.kubernetes.io/control-plane', 'operator': 'DoesNotExist'}]},
     ['tray01', 'tray02']),
    ({'matchExpressions': [{'key': 'nvidia.com/gpu.present', 'operator': 'In', 'values': ['true']}]}, ['tray01', 'tray02']),
    ({'matchExpressions': [{'key': 'nvidia.com/gpu.present', 'operator': 'NotIn', 'values': ['true']}]}, []),
    ({'matchLabels': {'nvidia.com/gpu.present': 'true'},
      'matchExpressions': [{'key': 'node-role.kubernetes.io/worker', 'operator': 'DoesNotExist'}]}, []),
])
def test_label_selector_semantics(selector, trays):
    found = rc.foreign_reboot_controllers([cr('x', TUNED, selector)], NODES, ['tray01', 'tray02'])
    assert [t for o in found for t in o['trays']] == trays


def test_noop_packages_and_other_nodes_do_not_count():
    noop = cr('noop', {'p': {'interrupt': {'type': 'noop'}}, 'q': {}})
    only_cp = cr('cp', TUNED, {'matchExpressions': [{'key': 'node-role.kubernetes.io/control-plane',
                                                     'operator': 'Exists'}]})
    assert rc.foreign_reboot_controllers([noop, only_cp], NODES, ['tray01', 'tray02']) == []
    # a tray that is no node of the cluster is never matched
    assert rc.foreign_reboot_controllers([cr('all', TUNED)], NODES, ['tray09']) == []


def test_a_bad_operator_is_a_selector_error_a_value_error_the_reboot_step_action_reports():
    bad = cr('bad', TUNED, {'matchExpressions': [{'key': 'a', 'operator': 'Gt', 'values': ['1']}]})
    with pytest.raises(rc.SelectorError, match="operator 'Gt'"):
        rc.foreign_reboot_controllers([bad], NODES, ['tray01'])
    assert issubclass(rc.SelectorError, ValueError)


def test_cluster_preflight_reports_them_on_gpu_nodes_as_a_warning():
    from ansible_collections.gpu_tray.cluster.plugins.modules import cluster_preflight as cp
    nodes = [{'metadata': {'name': name, 'labels': labels}} for name, labels in
             (('tray01', GPU), ('cpu01', {'kubernetes.io/hostname': 'cpu01'}))]
    quiet = cp.check_reboot_controllers([cr('noop', {'p': {'interrupt': {'type': 'noop'}}})], nodes)
    assert quiet['status'] == 'passed' and quiet['data']['found'] == []
    loud = cp.check_reboot_controllers([cr('tuning', TUNED, kind='NodeWright')], nodes)
    assert loud['status'] == 'warning' and [o['trays'] for o in loud['data']['found']] == [['tray01']]
    assert loud['message'].startswith('NodeWright tuning (nvidia-tuned: reboot on tray01) reboot or restart GPU nodes')
    assert 'foreign-reboot-controllers' in cp.CHECKS


def test_each_selector_operator_on_present_and_absent_keys():
    labels = {'rack': 'r1', 'gpu': 'true'}
    expr = rc._expression_matches
    assert expr({'key': 'rack', 'operator': 'In', 'values': ['r1']}, labels) is True
    assert expr({'key': 'rack', 'operator': 'In', 'values': ['r2']}, labels) is False
    assert expr({'key': 'zone', 'operator': 'In', 'values': ['r1']}, labels) is False
    assert expr({'key': 'zone', 'operator': 'NotIn', 'values': ['r1']}, labels) is True
    assert expr({'key': 'rack', 'operator': 'NotIn', 'values': ['r2']}, labels) is True
    assert expr({'key': 'rack', 'operator': 'NotIn', 'values': ['r1']}, labels) is False
    assert expr({'key': 'gpu', 'operator': 'Exists'}, labels) is True
    assert expr({'key': 'zone', 'operator': 'Exists'}, labels) is False
    assert rc.selector_matches({'matchLabels': {'rack': 'r2'}}, labels) is False
    assert rc.selector_matches({'matchLabels': {'rack': 'r1'}, 'matchExpressions': []}, labels) is True


def test_an_object_without_interrupts_does_not_hide_the_next_one():
    quiet = {'kind': 'NodeWright', 'metadata': {'name': 'a-quiet'}, 'spec': {'packages': {'p': {}}}}
    loud = {'kind': 'NodeWright', 'metadata': {'name': 'b-loud'},
            'spec': {'packages': {'tuning': {'interrupt': {'type': 'reboot'}}}}}
    found = rc.foreign_reboot_controllers([quiet, loud], {'t1': {}}, ['t1'])
    assert found == [{'kind': 'NodeWright', 'name': 'b-loud', 'interrupts': ['tuning: reboot'], 'trays': ['t1']}]
