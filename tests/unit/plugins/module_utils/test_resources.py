# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Health rules of expected_resources (module_utils/resources.py) on objects shaped as the API returns them."""

from ansible_collections.gpu_tray.cluster.plugins.module_utils.check_record import record
from ansible_collections.gpu_tray.cluster.plugins.module_utils import resources as rs

NOW = 1796256000  # 2026-12-03T00:00:00Z


def meta(name, namespace=None, **extra):
    out = dict(name=name, **extra)
    if namespace:
        out['namespace'] = namespace
    return out


def test_namespace():
    assert rs.check_namespace('gpu-operator', None)['status'] == 'failed'
    assert rs.check_namespace('gpu-operator', {'status': {'phase': 'Active'}})['status'] == 'passed'
    result = rs.check_namespace('gpu-operator', {'status': {'phase': 'Terminating'}})
    assert result['status'] == 'failed' and result['message'] == (
        'namespace gpu-operator is Terminating (expected Active; a Terminating namespace is being deleted)')
    assert rs.check_namespace('gpu-operator', {'status': {'phase': 'Active'}})['message'] == 'namespace gpu-operator is Active'


def test_crd_established_and_name_conflict():
    ok = {'status': {'conditions': [{'type': 'NamesAccepted', 'status': 'True'}, {'type': 'Established', 'status': 'True'}]}}
    assert rs.check_crd('clusterpolicies.nvidia.com', ok)['status'] == 'passed'
    conflict = {'status': {'conditions': [
        {'type': 'NamesAccepted', 'status': 'False', 'reason': 'ListKindConflict', 'message': '"ClusterPolicyList" is already in use'},
        {'type': 'Established', 'status': 'False', 'reason': 'NotAccepted'}]}}
    result = rs.check_crd('clusterpolicies.example.com', conflict)
    assert result['status'] == 'failed' and 'NamesAccepted=False' in result['message'] and 'already in use' in result['message']
    assert 'does not exist' in rs.check_crd('x.y', None)['message']


def test_deployment():
    dep = {'metadata': meta('gpu-operator', 'gpu-operator', generation=2), 'spec': {'replicas': 2},
           'status': {'observedGeneration': 2, 'availableReplicas': 2}}
    assert rs.check_deployment(dep)['status'] == 'passed'
    dep['status']['availableReplicas'] = 1
    assert rs.check_deployment(dep)['status'] == 'warning'
    dep['status'] = {'observedGeneration': 2}
    result = rs.check_deployment(dep)
    assert result['status'] == 'failed' and 'Deployment gpu-operator/gpu-operator has 0 of 2' in result['message']
    assert rs.check_deployment({'metadata': meta('a', 'b'), 'spec': {'replicas': 0}, 'status': {}})['status'] == 'passed'


def test_deployment_defaults_and_generations():
    # spec.replicas absent means 1 (the API's default): nothing available is a failure, not "scaled to 0"
    result = rs.check_deployment({'metadata': meta('op', 'ns'), 'spec': {}, 'status': {}})
    assert result['status'] == 'failed' and 'has 0 of 1 replicas available' in result['message']
    # the controller has not observed the first generation yet (no observedGeneration at all)
    fresh = {'metadata': meta('op', 'ns', generation=1), 'spec': {'replicas': 1}, 'status': {'availableReplicas': 1}}
    result = rs.check_deployment(fresh)
    assert result['status'] == 'warning' and result['message'] == (
        'Deployment ns/op has 1 of 1 replicas available, its controller has not observed the latest generation yet')
    # an object without generation fields (as some fixtures and older API servers give) is judged on its replicas
    bare = {'metadata': meta('op', 'ns'), 'spec': {'replicas': 1}, 'status': {'availableReplicas': 1}}
    assert rs.check_deployment(bare) == {'name': 'deployment', 'status': 'passed', 'object': 'Deployment ns/op',
                                         'message': 'Deployment ns/op has 1 of 1 replicas available', 'fix': '',
                                         'details': [], 'data': {}}


def test_daemonset_rollout():
    ds = {'metadata': meta('nvidia-driver-daemonset', 'gpu-operator', generation=3),
          'status': {'desiredNumberScheduled': 4, 'numberReady': 4, 'updatedNumberScheduled': 4, 'observedGeneration': 3}}
    assert rs.check_daemonset(ds)['status'] == 'passed'
    ds['status'].update(numberReady=2, updatedNumberScheduled=3, observedGeneration=2)
    result = rs.check_daemonset(ds)
    assert result['status'] == 'failed'
    assert '2 of 4 pods ready; 3 of 4 pods updated; observedGeneration 2 < generation 3' in result['message']
    result = rs.check_daemonset({'metadata': meta('x', 'y'), 'status': {'desiredNumberScheduled': 0}})
    assert result['status'] == 'failed' and 'no node is selected' in result['message']


def test_daemonset_fields_the_api_omits():
    # the API leaves out zero counts: one node selected, nothing ready or updated yet
    result = rs.check_daemonset({'metadata': meta('plugin', 'ns', generation=1),
                                 'status': {'desiredNumberScheduled': 1, 'observedGeneration': 1}})
    assert result['message'] == 'DaemonSet ns/plugin is not rolled out: 0 of 1 pods ready; 0 of 1 pods updated'
    # no generation fields at all: judged on its counts
    result = rs.check_daemonset({'metadata': meta('plugin', 'ns'),
                                 'status': {'desiredNumberScheduled': 2, 'numberReady': 2, 'updatedNumberScheduled': 2}})
    assert result['status'] == 'passed' and result['message'] == 'DaemonSet ns/plugin is rolled out on 2 nodes'
    result = rs.check_daemonset({'metadata': meta('plugin', 'ns', generation=1),
                                 'status': {'desiredNumberScheduled': 2, 'numberReady': 2, 'updatedNumberScheduled': 2}})
    assert result['message'] == ('DaemonSet ns/plugin is not rolled out: observedGeneration 0 < generation 1 '
                                 '(rollout not observed yet)')


def test_pod_problems():
    pods = [
        {'metadata': meta('broken', 'ns', creationTimestamp='2026-12-02T23:59:00Z'),
         'status': {'phase': 'Running', 'containerStatuses': [
             {'name': 'app', 'state': {'waiting': {'reason': 'CrashLoopBackOff', 'message': 'back-off 40s'}}}]}},
        {'metadata': meta('pull', 'ns'), 'status': {'phase': 'Pending', 'initContainerStatuses': [
            {'name': 'init', 'state': {'waiting': {'reason': 'ImagePullBackOff'}}}]}},
        {'metadata': meta('stuck', 'ns', creationTimestamp='2026-12-02T23:50:00Z'),
         'status': {'phase': 'Pending', 'conditions': [{'type': 'PodScheduled', 'status': 'False',
                                                        'message': '0/3 nodes are available: 3 Insufficient nvidia.com/gpu.'}]}},
        {'metadata': meta('young', 'ns', creationTimestamp='2026-12-02T23:59:30Z'), 'status': {'phase': 'Pending'}},
        {'metadata': meta('fine', 'ns'), 'status': {'phase': 'Running', 'containerStatuses': [
            {'name': 'app', 'state': {'running': {}}}]}},
    ]
    found = rs.pod_problems(pods, 300, now=NOW)
    assert [item['object'] for item in found] == ['Pod ns/broken', 'Pod ns/pull', 'Pod ns/stuck']
    assert 'container app is CrashLoopBackOff: back-off 40s' in found[0]['message']
    assert 'container init is ImagePullBackOff' in found[1]['message']
    assert 'Pending for 600s (> 300s): 0/3 nodes are available' in found[2]['message']


def test_pending_timeout_bounds():
    # a pod Pending exactly the timeout is not yet flagged; a running pod is never "Pending too long", nor is a
    # Pending pod flagged twice (its bad waiting reason is the finding)
    pods = [{'metadata': meta('edge', 'ns', creationTimestamp='2026-12-02T23:55:00Z'), 'status': {'phase': 'Pending'}},
            {'metadata': meta('second', 'ns', creationTimestamp='2026-12-02T23:54:59Z'), 'status': {'phase': 'Pending'}},
            {'metadata': meta('old', 'ns', creationTimestamp='2026-11-01T00:00:00Z'), 'status': {'phase': 'Running'}},
            {'metadata': meta('pull', 'ns', creationTimestamp='2026-11-01T00:00:00Z'), 'status': {
                'phase': 'Pending', 'containerStatuses': [{'name': 'app', 'state': {'waiting': {'reason': 'ErrImagePull'}}}]}}]
    assert [item['message'] for item in rs.pod_problems(pods, 300, now=NOW)] == [
        'Pod ns/second: Pending for 301s (> 300s)', 'Pod ns/pull: container app is ErrImagePull']


def test_failed_and_unknown_pods():
    pods = [{'metadata': meta('evicted', 'ns'), 'status': {'phase': 'Failed', 'reason': 'Evicted',
                                                           'message': 'The node was low on resource: memory.'}},
            {'metadata': meta('lost', 'ns'), 'status': {'phase': 'Unknown'}},
            {'metadata': meta('done', 'ns'), 'status': {'phase': 'Succeeded'}}]
    assert rs.pod_problems(pods, 300, now=NOW) == [
        record('pod', 'failed', 'Pod ns/evicted: phase Failed (Evicted)', obj='Pod ns/evicted'),
        record('pod', 'failed', 'Pod ns/lost: phase Unknown', obj='Pod ns/lost')]


def test_ready_cr():
    spec = {'api_version': 'nvidia.com/v1', 'kind': 'ClusterPolicy', 'name': 'cluster-policy', 'path': 'status.state',
            'value': 'ready'}
    assert rs.check_ready(spec, {'status': {'state': 'ready'}})['status'] == 'passed'
    result = rs.check_ready(spec, {'status': {'state': 'notReady'}})
    assert result['status'] == 'failed' and 'status.state=notReady (expected ready' in result['message']
    assert rs.check_ready(spec, {})['status'] == 'failed' and 'does not exist' in rs.check_ready(spec, None)['message']
    assert rs.check_ready(spec, None)['status'] == 'failed'


def test_select_workloads():
    objs = [{'metadata': meta('a', annotations={'meta.helm.sh/release-name': 'gpu-operator'})},
            {'metadata': meta('b', annotations={'meta.helm.sh/release-name': 'gpu-operator-post'})},
            {'metadata': meta('c', labels={'app.kubernetes.io/instance': 'gpu-operator'})},
            {'metadata': meta('d', annotations={'meta.helm.sh/release-name': 'other'})}]
    assert [o['metadata']['name'] for o in rs.select_workloads(objs, 'gpu-operator')] == ['a', 'b', 'c']
    assert len(rs.select_workloads(objs, 'gpu-operator', True)) == 4


def node(name, labels, allocatable):
    return {'metadata': meta(name, labels=labels), 'spec': {}, 'status': {'allocatable': allocatable}}


def test_sriov_rails():
    rails = dict(('nvidia.com/sriov_resource_rail_%d' % i, '16') for i in range(4))
    missing = dict(rails)
    del missing['nvidia.com/sriov_resource_rail_2']
    nodes = [node('tray01', {'nvidia.com/gpu.present': 'true'}, rails),
             node('tray02', {'nvidia.com/gpu.present': 'true'}, missing),
             node('tray03', {'nvidia.com/gpu.present': 'true'}, dict(rails, **{'nvidia.com/sriov_resource_rail_0': '8'})),
             node('cp01', {'nvidia.com/gpu.present': 'true', 'node-role.kubernetes.io/control-plane': ''}, {}),
             node('cpu01', {}, {})]
    result = rs.check_sriov_rails(nodes, rs.sriov_resources(4, 16))
    assert [(item['object'], item['status']) for item in result] == [
        ('Node tray01', 'passed'), ('Node tray02', 'failed'), ('Node tray03', 'failed')]
    assert 'nvidia.com/sriov_resource_rail_2=missing (expected 16)' in result[1]['message']
    assert 'nvidia.com/sriov_resource_rail_0=8' in result[2]['message']
    assert rs.check_sriov_rails(nodes[3:], rs.sriov_resources(4, 16))[0]['status'] == 'failed'
    # the highest rail is judged too, and a rail beyond the recipe's count is not
    short = node('tray04', {'nvidia.com/gpu.present': 'true'}, dict(rails, **{'nvidia.com/sriov_resource_rail_3': '15'}))
    result = rs.check_sriov_rails([short], rs.sriov_resources(4, 16))[0]
    assert result['status'] == 'failed' and result['message'].startswith('node tray04: nvidia.com/sriov_resource_rail_3=15 ')
    extra = node('tray05', {'nvidia.com/gpu.present': 'true'}, dict(rails, **{'nvidia.com/sriov_resource_rail_4': '2'}))
    assert rs.check_sriov_rails([extra], rs.sriov_resources(4, 16))[0]['message'] == 'node tray05 advertises 16 VFs on each of 4 rails'


def test_sriov_rails_judged_against_the_plans_count():
    """8 VFs asked (gpu_tray_num_vfs: 8): a node advertising 8 passes, one advertising 16 fails naming the rail."""
    eight = dict(('nvidia.com/sriov_resource_rail_%d' % i, '8') for i in range(4))
    sixteen = dict(eight, **{'nvidia.com/sriov_resource_rail_1': '16'})
    asked = [('nvidia.com/sriov_resource_rail_%d' % i, 8) for i in range(4)]
    good, bad = rs.check_sriov_rails([node('tray01', {'nvidia.com/gpu.present': 'true'}, eight),
                                      node('tray02', {'nvidia.com/gpu.present': 'true'}, sixteen)], asked)
    assert good['status'] == 'passed' and good['message'] == 'node tray01 advertises 8 VFs on each of 4 rails'
    assert bad['status'] == 'failed'
    assert bad['message'].startswith('node tray02: nvidia.com/sriov_resource_rail_1=16 (expected 8) ')


def test_sriov_states_and_multus():
    states = [{'metadata': meta('tray01', 'nvidia-network-operator'), 'status': {'syncStatus': 'Succeeded'}},
              {'metadata': meta('tray02', 'nvidia-network-operator'),
               'status': {'syncStatus': 'Failed', 'lastSyncError': 'mlx5_3: cannot set numvfs'}}]
    result = rs.check_sriov_node_states(states)
    assert [item['status'] for item in result] == ['passed', 'failed'] and 'cannot set numvfs' in result[1]['message']
    assert rs.check_sriov_node_states([])[0]['status'] == 'failed'
    assert rs.check_multus([])[0]['status'] == 'failed'
    multus = {'metadata': meta('kube-multus-ds', 'nvidia-network-operator', generation=1), 'status': {
        'desiredNumberScheduled': 2, 'numberReady': 2, 'updatedNumberScheduled': 2, 'observedGeneration': 1}}
    assert rs.check_multus([multus]) == [dict(rs.check_daemonset(multus), name='multus')]
