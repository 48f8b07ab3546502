# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL benchmark runs of the performance phase (plugin_utils/nccl_launch.py, filters nccl_run_plan, nccl_lease,
nccl_phase): the objects of each variant and workload, the scripts the pods run (executed here with sh),
the run lock and the NET preflight rule on the driver's /proc files."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.nccl_lease import nccl_lease
from ansible_collections.gpu_tray.cluster.plugins.filter.nccl_phase import nccl_phase
from ansible_collections.gpu_tray.cluster.plugins.filter.nccl_run_check import nccl_run_check
from ansible_collections.gpu_tray.cluster.plugins.filter.nccl_run_plan import nccl_run_plan
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import nccl_launch as nl
from ansible_collections.gpu_tray.cluster.plugins.module_utils.tray import read_files
from ansible_env import checkout_env
from unithelpers import fixture_path

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
RUN_ID = '20261204101500-k3x9a'
NS = 'gpu-tray-nccl-net-' + RUN_ID
RAILS = [{'resource': 'nvidia.com/sriov_resource_rail_%d' % i, 'network': 'default/sriov-network-rail-%d' % i}
         for i in range(4)]
NVKE_NET_SHAPE = {
    'annotations': {'k8s.v1.cni.cncf.io/networks': ','.join('default/sriov-network-rail-%d' % i for i in range(4))},
    'limits': {'nvidia.com/gpu': 4, 'nvidia.com/sriov_resource_rail_0': 1, 'nvidia.com/sriov_resource_rail_1': 1,
               'nvidia.com/sriov_resource_rail_2': 1, 'nvidia.com/sriov_resource_rail_3': 1},
}
SELECTOR_PLANS = [(variant, workload) for variant in ('nvls', 'net') for workload in ('job', 'trainjob')]
NOW = 1796378400.0   # 2026-12-04T10:00:00Z


def spec(**over):
    out = dict(run_id=RUN_ID, variant='net', workload='job', image='nvcr.io/nvidia/pytorch:25.06-py3',
               trays=2, gpus_per_tray=4, timeout=1800, min_bytes='1K', max_bytes='16G', step_factor=2, rails=RAILS,
               ssh_private_key='-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n',
               ssh_public_key='ssh-ed25519 AAAAC3Nz gpu-tray-nccl')
    out.update(over)
    return out


def workload_spec(workload, **over):
    """spec() for ``workload`` as the role gives it: a TrainJob gets no key pair (Kubeflow Trainer makes its own)."""
    keys = {'ssh_private_key': None, 'ssh_public_key': None} if workload == 'trainjob' else {}
    return spec(workload=workload, **dict(keys, **over))


def _plans():
    """(variant, workload, plan) of every variant and workload."""
    for variant, workload in SELECTOR_PLANS:
        yield variant, workload, nccl_run_plan(workload_spec(workload, variant=variant))


def by_kind(plan):
    out = {}
    for obj in plan['prepare'] + plan['workload']:
        out.setdefault(obj['kind'], []).append(obj)
    return out


def scripts(plan):
    return by_kind(plan)['ConfigMap'][0]['data']


def exec_line(script):
    return [text for text in script.splitlines() if text.startswith('exec ')][0]


def env_of(container):
    return dict((e['name'], e['value']) for e in container['env'])


def _templates(plan):
    """{'worker': [pod templates], 'launcher': [...]} of a plan's workload (Jobs or the TrainingRuntime)."""
    kinds = by_kind(plan)
    if 'TrainingRuntime' in kinds:
        jobs = kinds['TrainingRuntime'][0]['spec']['template']['spec']['replicatedJobs']
        pick = {'node': 'worker', 'launcher': 'launcher'}
        pairs = [(pick[j['name']], j['template']['spec']['template']) for j in jobs]
    else:
        pick = {nl.WORKERS: 'worker', nl.LAUNCHER: 'launcher'}
        pairs = [(pick[j['metadata']['name']], j['spec']['template']) for j in kinds['Job']]
    out = {'worker': [], 'launcher': []}
    for role, template in pairs:
        out[role].append(template)
    return out


def worker_pod(plan):
    return _templates(plan)['worker'][0]


def _pod_specs(plan):
    """(role, pod spec) of every pod a plan's workload makes."""
    return [(role, template['spec']) for role, templates in _templates(plan).items() for template in templates]


def _doc(*parts):
    with open(os.path.join(REPO, *parts), encoding='utf-8') as handle:
        return handle.read()


def _role_options():
    return yaml.safe_load(_doc('roles', 'validate', 'meta', 'argument_specs.yml'))['argument_specs']['main']['options']


def _lease_body():
    return nl.lease_decision(None, 'r1@api', 60, NOW, 'default')['body']


def test_nvke_net_job_is_the_guides_pod_shape_in_a_namespace_of_its_own():
    plan = nccl_run_plan(spec())
    assert plan['namespace'] == NS
    kinds = by_kind(plan)
    assert [o['kind'] for o in plan['prepare']] == ['Namespace', 'ConfigMap', 'Secret', 'Service']
    assert [o['kind'] for o in plan['workload']] == ['Job', 'Job']
    assert kinds['Namespace'][0]['metadata']['labels']['pod-security.kubernetes.io/enforce'] == 'privileged'
    assert all(o['metadata']['namespace'] == NS for o in plan['prepare'][1:] + plan['workload'])
    assert all(o['metadata']['labels'][nl.LABEL_RUN] == RUN_ID for o in plan['prepare'] + plan['workload'])
    template = worker_pod(plan)
    assert template['metadata']['annotations'] == NVKE_NET_SHAPE['annotations']
    container = template['spec']['containers'][0]
    assert container['resources']['limits'] == NVKE_NET_SHAPE['limits'] == container['resources']['requests']
    assert container['securityContext'] == {'capabilities': {'add': ['IPC_LOCK']}}
    assert 'resourceClaims' not in template['spec'] and 'claims' not in container['resources']
    workers = kinds['Job'][0]['spec']
    assert (workers['completionMode'], workers['completions'], workers['parallelism'], workers['backoffLimit']) == (
        'Indexed', 2, 2, 0)
    assert template['spec']['subdomain'] == kinds['Service'][0]['metadata']['name'] == nl.WORKERS
    assert kinds['Service'][0]['spec']['clusterIP'] == 'None'
    assert kinds['ConfigMap'][0]['data']['hostfile'] == (
        'nccl-workers-0.nccl-workers slots=4\nnccl-workers-1.nccl-workers slots=4\n')
    assert kinds['Secret'][0]['stringData']['authorized_keys'] == 'ssh-ed25519 AAAAC3Nz gpu-tray-nccl\n'
    launcher = kinds['Job'][1]
    # the role's wait (timeout) ends first; the Job's deadline is the safety net of a role that died
    assert launcher['spec']['activeDeadlineSeconds'] == 1920 and launcher['spec']['backoffLimit'] == 0
    assert 'nvidia.com/gpu' not in launcher['spec']['template']['spec']['containers'][0]['resources']['limits']
    assert plan['launcher']['kind'] == 'Job' and plan['launcher']['name'] == nl.LAUNCHER
    assert plan['wait_for'] == []
    assert plan['summary']['ranks'] == 8 and plan['summary']['sizes'] == '-b 1K -e 16G -f 2'


def test_net_runs_nccl_over_ib_with_nvls_off_and_mpirun_exports_it():
    line = exec_line(scripts(nccl_run_plan(spec()))['launch.sh'])
    for setting in ('NCCL_DEBUG=INFO', 'NCCL_NVLS_ENABLE=0', 'NCCL_MNNVL_ENABLE=0', 'NCCL_NET_PLUGIN=none',
                    'NCCL_IB_DISABLE=0', 'NCCL_SOCKET_IFNAME=eth0'):
        assert '-x %s' % setting in line
    assert '-np 8 --hostfile "$HOSTFILE"' in line
    assert line.endswith('/bin/sh /etc/gpu-tray-nccl/bin/rank.sh /usr/local/bin/all_reduce_perf_mpi '
                         '-b 1K -e 16G -f 2 -g 1')


def test_nvls_claims_the_imex_channel_of_a_compute_domain():
    plan = nccl_run_plan(spec(variant='nvls', rails=[]))
    kinds = by_kind(plan)
    domain = kinds['ComputeDomain'][0]
    assert domain['apiVersion'] == 'resource.nvidia.com/v1beta1'
    assert domain['spec']['channel']['resourceClaimTemplate']['name'] == nl.IMEX_TEMPLATE
    assert [(w['kind'], w['name'], w['api_version']) for w in plan['wait_for']] == [
        ('ResourceClaimTemplate', nl.IMEX_TEMPLATE, 'resource.k8s.io/v1')]
    template = worker_pod(plan)
    assert template['spec']['resourceClaims'] == [{'name': 'imex-channel', 'resourceClaimTemplateName': nl.IMEX_TEMPLATE}]
    container = template['spec']['containers'][0]
    assert container['resources']['claims'] == [{'name': 'imex-channel'}]
    assert container['resources']['limits'] == {'nvidia.com/gpu': 4}
    assert 'annotations' not in template['metadata']
    script = kinds['ConfigMap'][0]['data']['launch.sh']
    assert '-x NCCL_NVLS_ENABLE=1' in script and 'NCCL_NVLS_ENABLE=0' not in script


def test_net_without_rails_requests_no_vf():
    template = worker_pod(nccl_run_plan(spec(rails=[])))
    assert template['spec']['containers'][0]['resources']['limits'] == {'nvidia.com/gpu': 4}
    assert 'annotations' not in template['metadata']


@pytest.mark.parametrize('variant', ['nvls', 'net'])
def test_trainjob_runs_the_same_workers_through_a_training_runtime(variant):
    plan = nccl_run_plan(workload_spec('trainjob', variant=variant))
    kinds = by_kind(plan)
    assert [o['kind'] for o in plan['workload']] == ['TrainingRuntime', 'TrainJob']
    assert 'Secret' not in kinds and 'Service' not in kinds and 'hostfile' not in kinds['ConfigMap'][0]['data']
    runtime = kinds['TrainingRuntime'][0]['spec']
    assert runtime['mlPolicy'] == {'numNodes': 2, 'mpi': {'mpiImplementation': 'OpenMPI', 'numProcPerNode': 4,
                                                          'runLauncherAsNode': False, 'sshAuthMountPath': '/tmp/mpi-keys'}}
    jobs = runtime['template']['spec']['replicatedJobs']
    assert [j['name'] for j in jobs] == ['node', 'launcher']
    assert jobs[1]['dependsOn'] == [{'name': 'node', 'status': 'Ready'}]
    trainjob = kinds['TrainJob'][0]['spec']
    assert trainjob['runtimeRef'] == {'apiGroup': 'trainer.kubeflow.org', 'kind': 'TrainingRuntime',
                                      'name': kinds['TrainingRuntime'][0]['metadata']['name']}
    assert trainjob['trainer'] == {'numNodes': 2}
    template = worker_pod(plan)
    if variant == 'net':
        assert template['metadata']['annotations'] == NVKE_NET_SHAPE['annotations']
        assert template['spec']['containers'][0]['resources']['limits'] == NVKE_NET_SHAPE['limits']
    else:
        assert template['spec']['resourceClaims'][0]['resourceClaimTemplateName'] == nl.IMEX_TEMPLATE
    launcher_env = env_of(jobs[1]['template']['spec']['template']['spec']['containers'][0])
    assert launcher_env['HOSTFILE'] == '/etc/mpi/hostfile' and launcher_env['SSH_KEYS'] == '/tmp/mpi-keys'
    assert plan['launcher']['kind'] == 'TrainJob'


# Every selector a run plan writes, matched against the objects it is meant to select - the pods of the same plan -
# with Kubernetes' own rules (a matchLabels / Service selector selects a pod whose labels include every pair; a
# label selector string "a=b,c=d" the same), and against the pods of a second run beside it.
def _selects(selector, labels):
    return bool(selector) and all(labels.get(key) == value for key, value in selector.items())


def _parse(selectors):
    return dict(item.split('=', 1) for item in selectors)


def _pod_labels(plan):
    return dict((role, [t['metadata']['labels'] for t in templates]) for role, templates in _templates(plan).items())


@pytest.mark.parametrize('variant, workload', SELECTOR_PLANS)
def test_every_selector_of_a_run_selects_its_own_pods_and_only_those(variant, workload):
    plan = nccl_run_plan(workload_spec(workload, variant=variant))
    other = nccl_run_plan(workload_spec(workload, variant=variant, run_id='20261204111500-zz9zz'))
    pods, others = _pod_labels(plan), _pod_labels(other)
    assert len(pods['worker']) == 1 and len(pods['launcher']) == 1
    worker, launcher = pods['worker'][0], pods['launcher'][0]
    # one worker per tray: the anti-affinity term selects every worker pod of the run, per node
    pod_spec = worker_pod(plan)['spec']
    terms = pod_spec['affinity']['podAntiAffinity']['requiredDuringSchedulingIgnoredDuringExecution']
    assert len(terms) == 1 and terms[0]['topologyKey'] == 'kubernetes.io/hostname'
    anti = terms[0]['labelSelector']['matchLabels']
    assert _selects(anti, worker), 'two workers of the run could land on one tray (and measure NVLink inside it)'
    assert not _selects(anti, launcher), 'the launcher would keep a worker off its tray'
    assert not _selects(anti, others['worker'][0]), 'the term reaches the workers of another run'
    # what the role lists to find the workers and the launcher
    for key, mine, not_mine, theirs in (('workers', worker, launcher, others['worker'][0]),
                                        ('launcher', launcher, worker, others['launcher'][0])):
        selector = _parse(plan[key]['label_selectors'])
        assert _selects(selector, mine) and not _selects(selector, not_mine) and not _selects(selector, theirs), key
    if workload == 'job':
        # the headless Service gives the workers the host names the launcher's hostfile names
        service = by_kind(plan)['Service'][0]
        assert _selects(service['spec']['selector'], worker) and not _selects(service['spec']['selector'], launcher)
        assert pod_spec['subdomain'] == service['metadata']['name']


@pytest.mark.parametrize('workload', ['job', 'trainjob'])
def test_net_workers_take_one_vf_and_the_attachment_of_every_rail_and_nvls_workers_none(workload):
    # NVKE GB200 guide: a NET worker takes one SR-IOV VF per rail and its attachment; NVLS stays in the NVLink domain
    rails = [{'resource': 'nvidia.com/sriov_resource_rail_%d' % i, 'network': 'default/sriov-network-rail-%d' % i}
             for i in (3, 0, 2, 1)]                              # the role's order, whatever it is, is kept
    for variant in ('nvls', 'net'):
        plan = nccl_run_plan(workload_spec(workload, variant=variant, rails=rails))
        template = worker_pod(plan)
        resources = template['spec']['containers'][0]['resources']
        attached = (template['metadata'].get('annotations') or {}).get('k8s.v1.cni.cncf.io/networks', '')
        taken = sorted(key for key in resources['limits'] if key != 'nvidia.com/gpu')
        if variant == 'nvls':
            assert taken == [] and attached == ''
            continue
        assert taken == sorted(rail['resource'] for rail in rails)
        assert all(resources['limits'][rail['resource']] == 1 == resources['requests'][rail['resource']]
                   for rail in rails)
        assert attached.split(',') == [rail['network'] for rail in rails]
    # the launcher (mpirun over SSH) takes neither a GPU nor a rail
    for job in by_kind(plan).get('Job', []):
        if job['metadata']['name'] == nl.LAUNCHER:
            limits = job['spec']['template']['spec']['containers'][0]['resources']['limits']
            assert not any(key.startswith('nvidia.com/') for key in limits)


@pytest.mark.parametrize('over, message', [
    ({'variant': 'default'}, 'variant must be one of nvls, net'),
    ({'workload': 'mpijob'}, 'workload must be one of job, trainjob'),
    ({'trays': 1}, 'option trays must be at least 2, got 1 (a fabric test needs two trays)'),
    ({'trays': 'two'}, 'option trays must be an integer'),
    ({'gpus_per_tray': 0}, 'option gpus_per_tray must be at least 1, got 0$'),
    ({'timeout': 10}, 'option timeout must be at least 30'),
    ({'timeout': 29}, 'option timeout must be at least 30, got 29$'),
    ({'step_factor': 1}, 'option step_factor must be at least 2, got 1$'),
    ({'image': ''}, 'option image is required'),
    ({'max_bytes': '16GB'}, 'option max_bytes must be a size'),
    ({'min_bytes': '1G', 'max_bytes': '1M'}, 'option min_bytes (1G) is above max_bytes (1M)'),
    ({'min_bytes': '1025', 'max_bytes': '1K'}, 'above max_bytes'),
    ({'run_id': 'Run_1'}, 'not a DNS label'),
    ({'run_id': 'x' * 50}, 'not a DNS label'),
    ({'rails': [{'resource': 'nvidia.com/sriov_resource_rail_0'}]}, 'each rail needs resource and network'),
    ({'rails': ['rail0']}, 'each rail needs resource and network'),
    ({'rails': [{'network': 'default/sriov-network-rail-0'}]}, 'each rail needs resource and network'),
    ({'rails': [{'resource': 'nvidia.com/sriov_resource_rail_0', 'network': ''}]}, 'each rail needs resource'),
    ({'ssh_public_key': ''}, 'workload job needs ssh_private_key and ssh_public_key'),
    ({'extra_env': {'NCCL IB': '1'}}, 'is not an environment variable name'),
])
def test_each_refusal_of_a_plan_names_its_rule_and_the_filter_passes_it_on(over, message):
    pattern = message.replace('(', r'\(').replace(')', r'\)')
    with pytest.raises(nl.PlanError, match=pattern):
        nl.run_plan(spec(**over))
    with pytest.raises(AnsibleFilterError, match='nccl_run_plan: .*' + pattern):
        nccl_run_plan(spec(**over))


def test_one_message_size_is_a_valid_sweep_and_sizes_are_binary_like_all_reduce_perf():
    plan = nccl_run_plan(spec(min_bytes='1G', max_bytes='1G'))
    assert plan['summary']['sizes'] == '-b 1G -e 1G -f 2'
    assert nl.size_bytes('1K') == 1024 and nl.size_bytes('16G') == 17179869184 and nl.size_bytes('8') == 8
    assert nl.size_bytes('256M') == 256 * 1024 * 1024 and nl.size_bytes('3K') == 3072


@pytest.mark.skipif(not shutil.which('sh'), reason='needs a POSIX sh')
@pytest.mark.parametrize('variant, workload', [('net', 'job'), ('nvls', 'trainjob')])
def test_every_script_is_valid_sh(tmp_path, variant, workload):
    data = scripts(nccl_run_plan(spec(variant=variant, workload=workload)))
    for name in ('rank.sh', 'worker.sh', 'launch.sh'):
        path = tmp_path / name
        path.write_text(data[name])
        res = subprocess.run(['sh', '-n', str(path)], capture_output=True, text=True, check=False)
        assert res.returncode == 0, (name, res.stderr)


def _netdev(sysfs, name, rdma=None):
    base = sysfs / 'class' / 'net' / name / 'device' / 'infiniband'
    base.mkdir(parents=True)
    if rdma:
        (base / rdma).mkdir()


def test_rank_sh_sets_nccl_ib_hca_to_the_attached_vfs_only(tmp_path):
    sysfs = tmp_path / 'sys'
    _netdev(sysfs, 'eth0', 'mlx5_2')          # the primary network on a BlueField VF: never a rail
    for index, dev in enumerate(['mlx5_7', 'mlx5_23', 'mlx5_40', 'mlx5_61'], start=1):
        _netdev(sysfs, 'net%d' % index, dev)
    script = tmp_path / 'rank.sh'
    script.write_text(nl.rank_script())
    env = dict(os.environ, GPU_TRAY_SYSFS=str(sysfs))
    env.pop('NCCL_IB_HCA', None)
    res = subprocess.run(['sh', str(script), 'sh', '-c', 'printf %s "$NCCL_IB_HCA"'], capture_output=True, text=True,
                         env=env, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout == '=mlx5_7,mlx5_23,mlx5_40,mlx5_61'
    # a pod without attachments (nvls) keeps NCCL's own choice
    bare = tmp_path / 'bare'
    _netdev(bare, 'eth0', 'mlx5_2')
    res = subprocess.run(['sh', str(script), 'sh', '-c', 'printf %s "${NCCL_IB_HCA-unset}"'], capture_output=True,
                         text=True, env=dict(env, GPU_TRAY_SYSFS=str(bare)), check=False)
    assert res.stdout == 'unset'


BACKOFF = {'type': 'Failed', 'status': 'True', 'reason': 'BackoffLimitExceeded',
           'message': 'Job has reached the specified backoff limit'}


def unschedulable(message):
    return {'type': 'PodScheduled', 'status': 'False', 'reason': 'Unschedulable', 'message': message}


def pod(name, role, phase, node=None, **status):
    return {'metadata': {'name': name, 'labels': {nl.LABEL_ROLE: role}}, 'spec': {'nodeName': node} if node else {},
            'status': dict(status, phase=phase)}


def test_workload_state_reads_jobs_and_trainjobs():
    assert nl.workload_state(None)['state'] == 'missing'
    assert nl.workload_state({'kind': 'Job', 'status': {'active': 1}})['state'] == 'running'
    assert nl.workload_state({'kind': 'Job', 'status': {'succeeded': 1}})['state'] == 'succeeded'
    failed = nl.workload_state({'kind': 'Job', 'status': {'failed': 1, 'conditions': [BACKOFF]}})
    assert failed == {'state': 'failed', 'reason': 'BackoffLimitExceeded: Job has reached the specified backoff limit'}
    assert nl.workload_state({'kind': 'TrainJob', 'status': {'conditions': [
        {'type': 'Complete', 'status': 'True', 'reason': 'JobSetCompleted'}]}})['state'] == 'succeeded'
    assert nl.workload_state({'kind': 'TrainJob', 'status': {'conditions': [
        {'type': 'Complete', 'status': 'False'}]}})['state'] == 'running'
    assert nl.workload_state({'kind': 'Job', 'status': {'failed': 2, 'conditions': [
        {'type': 'Failed', 'status': 'True', 'reason': 'DeadlineExceeded',
         'message': 'Job was active longer than specified deadline'}]}})['state'] == 'timeout'


def test_pod_findings_name_the_scheduler_reason():
    lines = nl.pod_findings([
        pod('nccl-workers-1-abcde', 'worker', 'Pending', conditions=[
            unschedulable('0/3 nodes are available: 3 Insufficient nvidia.com/sriov_resource_rail_2.')]),
        pod('nccl-launcher-x', 'launcher', 'Failed', 'tray01',
            containerStatuses=[{'name': 'node', 'state': {'terminated': {'exitCode': 1}}}])])
    assert lines == ['launcher nccl-launcher-x: Failed on tray01 - node exited 1',
                     'worker nccl-workers-1-abcde: Pending on (not scheduled) - Unschedulable: 0/3 nodes are available: '
                     '3 Insufficient nvidia.com/sriov_resource_rail_2.']


def test_pod_findings_name_a_stuck_container_but_not_one_still_being_created():
    stuck = pod('nccl-workers-0-abc', 'worker', 'Pending', 'tray01',
                containerStatuses=[{'name': 'node', 'state': {'waiting': {'reason': 'ImagePullBackOff'}}}])
    assert nl.pod_findings([stuck]) == ['worker nccl-workers-0-abc: Pending on tray01 - node ImagePullBackOff']
    for reason in ('ContainerCreating', 'PodInitializing'):
        stuck['status']['containerStatuses'][0]['state']['waiting']['reason'] = reason
        assert nl.pod_findings([stuck]) == ['worker nccl-workers-0-abc: Pending on tray01']
    stuck['status']['initContainerStatuses'] = [{'name': 'init', 'state': {'waiting': {'reason': 'CrashLoopBackOff'}}}]
    assert nl.pod_findings([stuck]) == ['worker nccl-workers-0-abc: Pending on tray01 - init CrashLoopBackOff']


def test_pod_findings_report_an_unscheduled_pod_only():
    # only PodScheduled=False is the scheduler's refusal: a scheduled pod whose Ready is False is not unschedulable
    running = pod('nccl-workers-0-a', 'worker', 'Running', 't1', conditions=[
        {'type': 'PodScheduled', 'status': 'True'},
        {'type': 'Ready', 'status': 'False', 'reason': 'ContainersNotReady', 'message': 'not ready'}])
    assert nl.pod_findings([running]) == ['worker nccl-workers-0-a: Running on t1']


# ------------------------------------------------------------------------------------------------- the lock

def lease(holder, renew, duration=600, version='42'):
    return {'metadata': {'name': nl.LOCK_NAME, 'namespace': 'default', 'resourceVersion': version},
            'spec': {'holderIdentity': holder, 'leaseDurationSeconds': duration,
                     'acquireTime': renew, 'renewTime': renew}}


def test_a_free_lock_is_created_with_holder_and_expiry():
    out = nccl_lease(None, 'r1@ctl', 3900, NOW, 'default')
    assert out['state'] == 'free' and out['body']['spec'] == {
        'holderIdentity': 'r1@ctl', 'leaseDurationSeconds': 3900,
        'acquireTime': '2026-12-04T10:00:00.000000Z', 'renewTime': '2026-12-04T10:00:00.000000Z'}
    assert 'resourceVersion' not in out['body']['metadata']


@pytest.mark.parametrize('decide, current, duration, state', [
    (nccl_lease, {}, 3900, 'free'),
    # released by hand (no holder): free, taken with server-side apply and no force - 'expired' would force it
    (nccl_lease, lease(None, '2026-12-04T09:59:00Z'), 60, 'free'),
    (nccl_lease, lease('', '2026-12-04T09:59:00Z'), 60, 'free'),
    (nccl_lease, lease('r0@other', '2026-12-04T11:04:00+01:00'), 1, 'held'),      # an offset is the same instant
    (nccl_lease, lease('r0@other', 'yesterday'), 1, 'expired'),                   # unreadable: never blocks forever
    (nl.lease_decision, lease('r0@other', '2026-12-04T09:59:59.500000Z', duration=None), 60, 'expired'),
    (nl.lease_decision, lease('r0@other', '2026-12-04T09:50:00Z', duration=600), 60, 'expired'),   # ends now
], ids=['empty', 'no-holder', 'empty-holder', 'offset', 'unreadable', 'no-duration', 'ends-now'])
def test_the_lock_state_of_a_lease(decide, current, duration, state):
    assert decide(current, 'r1@ctl', duration, NOW, 'default')['state'] == state


def test_a_held_lock_is_refused_until_it_expires():
    held = nccl_lease(lease('r0@other', '2026-12-04T09:55:00.123456Z'), 'r1@ctl', 3900, NOW, 'default')
    assert held['state'] == 'held' and held['body'] is None
    assert held['expires'] == '2026-12-04T10:05:00.123456Z'
    assert 'another NCCL run (r0@other) holds Lease default/gpu-tray-nccl-run-lock until 2026-12-04T10:05:00' in held['message']
    expired = nccl_lease(lease('r0@other', '2026-12-04T09:49:59Z'), 'r1@ctl', 3900, NOW, 'default')
    assert expired['state'] == 'expired' and expired['holder'] == 'r0@other'
    assert expired['body']['metadata']['resourceVersion'] == '42'     # a concurrent taker gets a conflict
    assert expired['body']['spec']['holderIdentity'] == 'r1@ctl'


def test_a_lease_expires_by_its_renew_or_acquire_time_and_its_own_duration():
    only_acquired = {'metadata': {'resourceVersion': '7'},
                     'spec': {'holderIdentity': 'r0@other', 'leaseDurationSeconds': 600,
                              'acquireTime': '2026-12-04T09:58:00Z'}}
    held = nl.lease_decision(only_acquired, 'r1@ctl', 60, NOW, 'default')
    assert held['state'] == 'held' and held['expires'] == '2026-12-04T10:08:00.000000Z'
    unreadable = nl.lease_decision(lease('r0@other', 'soon'), 'r1@ctl', 60, NOW, 'default')
    assert unreadable['state'] == 'expired' and 'expired at an unknown time' in unreadable['message']


def test_our_own_lock_is_renewed_and_keeps_its_acquire_time():
    out = nccl_lease(lease('r1@ctl', '2026-12-04T09:59:00Z'), 'r1@ctl', 3900, NOW, 'default')
    assert out['state'] == 'ours'
    assert out['body']['spec']['acquireTime'] == '2026-12-04T09:59:00Z'
    assert out['body']['spec']['renewTime'] == '2026-12-04T10:00:00.000000Z'
    with pytest.raises(AnsibleFilterError, match='positive number of seconds'):
        nccl_lease(None, 'r1@ctl', 0, NOW, 'default')
    with pytest.raises(AnsibleFilterError, match='the Lease'):
        nccl_lease('lease', 'r1@ctl', 10, NOW, 'default')


def test_lease_times_in_any_zone_are_the_same_instant():
    assert nl.parse_time('2026-12-04T12:00:00.5+02:00') == nl.parse_time('2026-12-04T10:00:00.5Z')
    assert nl.parse_time('2026-12-04T08:30:00-01:30') == nl.parse_time('2026-12-04T10:00:00Z')


def test_a_held_lock_records_each_variant_it_keeps_from_running():
    held = nccl_lease(lease('r0@other', '2026-12-04T09:55:00.123456Z'), 'r1@ctl', 3900, NOW, 'default', None,
                      ['nvls', 'net'])
    assert [(c['name'], c['status'], c['object']) for c in held['held']] == [
        ('nccl-all-reduce-bw-nvls', 'failed', 'default/gpu-tray-nccl-run-lock'),
        ('nccl-all-reduce-bw-net', 'failed', 'default/gpu-tray-nccl-run-lock')]
    assert held['held'][0]['message'] == 'Not run: %s.' % held['message']
    assert held['held'][0]['fix'].endswith('it expires on its own at 2026-12-04T10:05:00.123456Z.')
    assert nccl_lease(None, 'r1@ctl', 3900, NOW, 'default', None, ['nvls'])['held'] == []
    assert 'held' not in nccl_lease(None, 'r1@ctl', 3900, NOW, 'default')


# ------------------------------------------------------------------------------------------------- NET preflight

def read(directory, name):
    with open(fixture_path(directory, name)) as fh:
        return fh.read()


@pytest.mark.parametrize('params, version, status, text', [
    ('params-r580-override', 'version-r580', 'passed', 'driver 580.173.02 runs with GrdmaPciTopoCheckOverride: 1'),
    ('params-r580-default', 'version-r580', 'failed', 'GrdmaPciTopoCheckOverride: 0, the NET run needs 1'),
    ('params-r595', 'version-r580', 'failed', 'has no GrdmaPciTopoCheckOverride line'),
    ('params-r595', 'version-r595', 'skipped', 'driver 595.91.07 (R595): NVreg_GrdmaPciTopoCheckOverride is gone'),
    (None, None, 'failed', 'no NVIDIA driver is loaded'),
])
def test_grdma_rule_on_the_driver_proc_files(params, version, status, text):
    verdict = nl.grdma_topo_override(read('nvidia', params) if params else None,
                                     read('nvidia', version) if version else None)
    assert verdict['status'] == status and text in verdict['message']
    if version:
        assert verdict['driver'] == ('580.173.02' if version == 'version-r580' else '595.91.07')


def test_the_grdma_rule_reads_that_parameter_only_and_checks_up_to_its_last_branch():
    # a parameter whose name merely ends in it is another one
    verdict = nl.grdma_topo_override('RmGrdmaPciTopoCheckOverride: 1\nGrdmaPciTopoCheckOverride: 0\n',
                                     'NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.173.02  Release\n')
    assert (verdict['status'], verdict['value']) == ('failed', '0')
    last = 'NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  %d.10  Release\n' % nl.GRDMA_LAST_BRANCH
    assert nl.grdma_topo_override('GrdmaPciTopoCheckOverride: 0\n', last)['status'] == 'failed'
    after = last.replace(str(nl.GRDMA_LAST_BRANCH), str(nl.GRDMA_LAST_BRANCH + 1))
    assert nl.grdma_topo_override('GrdmaPciTopoCheckOverride: 0\n', after)['status'] == 'skipped'
    unknown = nl.grdma_topo_override('EnableGpuFirmware: 18\n', None)
    assert unknown['status'] == 'failed' and unknown['message'].startswith('driver (version unknown) has no ')


def tray_read(tmp_path, name, params, version='version-r580'):
    """A tray's tray_state ``files`` (module_utils.tray.read_files, what the module returns) of a proc tree."""
    proc = tmp_path / name / 'proc'
    (proc / 'driver' / 'nvidia').mkdir(parents=True)
    if params:
        shutil.copy(fixture_path('nvidia', params), str(proc / 'driver' / 'nvidia' / 'params'))
        shutil.copy(fixture_path('nvidia', version), str(proc / 'driver' / 'nvidia' / 'version'))
    paths = [str(proc / 'driver' / 'nvidia' / f) for f in ('params', 'version')]
    return {'state': {'changed': False, 'files': read_files(paths)}, 'proc_root': str(proc)}


def test_net_preflight_names_each_tray_that_cannot_run_it(tmp_path):
    trays = {'tray01': tray_read(tmp_path, 'tray01', 'params-r580-override'),
             'tray02': tray_read(tmp_path, 'tray02', 'params-r580-default'),
             'tray03': tray_read(tmp_path, 'tray03', None),
             'tray04': {'state': {'unreachable': True, 'msg': 'ssh: connect to host tray04 port 22: No route to host'},
                        'proc_root': '/proc'}}
    check = nl.net_preflight(trays)
    assert check['name'] == 'nccl-net-preflight' and check['status'] == 'failed'
    assert check['object'] == 'tray02, tray03, tray04'
    assert check['message'].startswith('3 of 4 trays cannot run the NET benchmark: tray02: driver 580.173.02 runs '
                                       'with GrdmaPciTopoCheckOverride: 0')
    assert check['details'][0] == 'tray01: driver 580.173.02 runs with GrdmaPciTopoCheckOverride: 1'
    assert 'tray04: not read (ssh: connect to host tray04 port 22: No route to host)' in check['details']
    assert 'kernel-module-params' in check['fix']


def test_net_preflight_passes_and_warns_without_trays(tmp_path):
    ok = nl.net_preflight({'tray01': tray_read(tmp_path, 'tray01', 'params-r580-override'),
                           'tray02': tray_read(tmp_path, 'tray02', 'params-r595', 'version-r595')})
    assert ok['status'] == 'passed' and ok['object'] == ''
    assert nl.net_preflight({})['status'] == 'warning'
    assert nl.net_preflight({'tray01': {'state': None}})['status'] == 'failed'


def test_net_preflight_goes_on_after_a_tray_it_could_not_read(tmp_path):
    check = nl.net_preflight({'tray01': {'state': None},
                              'tray02': tray_read(tmp_path, 'tray02', 'params-r580-override')})
    assert check['object'] == 'tray01'
    assert check['details'] == ['tray01: not read (the tray was not read in this run)',
                                'tray02: driver 580.173.02 runs with GrdmaPciTopoCheckOverride: 1']


@pytest.mark.parametrize('state, why', [
    (None, 'the tray was not read in this run'),
    ({'unreachable': True, 'msg': 'ssh: timeout', 'files': {}}, 'ssh: timeout'),
    ({'failed': True, 'msg': 'tray_state: boom', 'files': {}}, 'tray_state: boom'),
    ({'changed': False}, 'the tray was not read in this run'),
    ({'changed': False, 'files': ['/proc/driver/nvidia/params']}, 'the tray was not read in this run'),
])
def test_a_tray_whose_read_failed_is_not_read(state, why):
    assert nl.tray_driver_files(state) == (None, None, why)


@pytest.mark.parametrize('args, root', [
    ((), '/proc'), ((None,), '/proc'), (('/proc',), '/proc'), (('/proc/',), '/proc/'), (('/',), '/'),
    (('/host/proc/',), '/host/proc/'), (('/srv/tray/proc',), '/srv/tray/proc'), (('/srv//tray/proc',), '/srv//tray/proc'),
], ids=['default', 'none', 'proc', 'proc-slash', 'root', 'host-proc', 'srv', 'double-slash'])
def test_the_preflight_finds_the_driver_files_the_role_asked_for_whatever_proc_roots_spelling(args, root):
    """roles/validate/tasks/tray_read.yml asks tray_state for ``validate_proc_root ~ '/driver/nvidia/params'``
    (and version): the files are keyed by exactly those strings, slashes and all; no proc_root reads /proc."""
    task = yaml.safe_load(_doc('roles', 'validate', 'tasks', 'tray_read.yml'))[0]
    asked = [template.split(' ~ ')[1].strip("'") for template in
             re.findall(r"validate_proc_root ~ '[^']+'", task['gpu_tray.cluster.tray_state']['files'])]
    assert asked == ['/driver/nvidia/params', '/driver/nvidia/version']
    files = {root + asked[0]: {'exists': True, 'content': 'GrdmaPciTopoCheckOverride: 1\n'},
             root + asked[1]: {'exists': True, 'content': 'NVRM version: 580.173.02\n'}}
    assert nl.tray_driver_files({'files': files}, *args) == (
        'GrdmaPciTopoCheckOverride: 1\n', 'NVRM version: 580.173.02\n', None)


# ------------------------------------------------------------------------------------------------- capacity, checks

def node(name, gpus='4', rails=4, ready='True', labels=None, unschedulable=False):
    alloc = {'cpu': '143500m', 'nvidia.com/gpu': gpus}
    for rail in range(rails):
        alloc['nvidia.com/sriov_resource_rail_%d' % rail] = '16'
    return {'metadata': {'name': name, 'labels': labels or {'nvidia.com/gpu.present': 'true'}},
            'spec': {'unschedulable': unschedulable},
            'status': {'allocatable': alloc, 'conditions': [{'type': 'Ready', 'status': ready}]}}


def test_capacity_counts_the_nodes_a_worker_fits_on():
    nodes = [node('tray01'), node('tray02', rails=3), node('tray03', ready='False'), node('tray04', unschedulable=True),
             node('cp01', gpus=None, rails=0), node('tray05', gpus='2')]
    net = nccl_run_plan(spec(nodes=nodes))['capacity']
    assert net['eligible'] == ['tray01'] and not net['enough']
    assert net['message'].startswith('1 node(s) can take a net worker (4 nvidia.com/gpu, 1 nvidia.com/sriov_resource_rail_0')
    assert 'tray02 (nvidia.com/sriov_resource_rail_3)' in net['message']
    assert 'tray05 (nvidia.com/gpu' in net['message'] and 'cp01' not in net['message'].split(':', 1)[1]
    nvls = nccl_run_plan(spec(variant='nvls', nodes=nodes))['capacity']
    assert nvls['eligible'] == ['tray01', 'tray02'] and nvls['enough']
    selected = nccl_run_plan(spec(variant='nvls', nodes=nodes, node_selector={'nvidia.com/gpu.clique': 'a.1'}))
    assert selected['capacity']['eligible'] == [] and "labels {'nvidia.com/gpu.clique': 'a.1'}" in selected['capacity']['message']
    assert nccl_run_plan(spec())['capacity'] is None


def test_capacity_judges_every_node_and_lists_the_eligible_in_order():
    nodes = [node('tray09'), node('tray03', labels={'other': 'x'}), {'metadata': {'name': 'bare'}, 'status': {
        'allocatable': {'nvidia.com/gpu': '4'}, 'conditions': [{'type': 'Ready', 'status': 'True'}]}},
        node('tray01', labels={'nvidia.com/gpu.clique': 'a.1'}), node('tray02', gpus='1'),
        node('tray05', labels={'nvidia.com/gpu.clique': 'a.1'})]
    selected = nl.eligible_nodes(nodes, 'nvls', {'gpus_per_tray': 4, 'node_selector': {'nvidia.com/gpu.clique': 'a.1'}})
    assert selected['eligible'] == ['tray01', 'tray05']
    every = nl.eligible_nodes(nodes, 'nvls', {'gpus_per_tray': 4})
    assert every['eligible'] == ['bare', 'tray01', 'tray03', 'tray05', 'tray09']
    # a GPU node with one GPU is short of GPUs (not a node without GPUs)
    assert every['message'].endswith('; GPU nodes short of a resource: tray02 (nvidia.com/gpu)')
    none = nl.eligible_nodes(nodes, 'nvls', {'gpus_per_tray': 8})
    assert none['eligible'] == [] and none['message'].startswith('0 node(s) can take a nvls worker (8 nvidia.com/gpu): none;')


def _run(**over):
    plan = nccl_run_plan(spec())
    out = {'variant': 'net', 'summary': plan['summary'], 'namespace': plan['namespace'], 'timeout': 1800,
           'error': None, 'launcher': {'kind': 'Job', 'status': {'succeeded': 1}}, 'pods': [],
           'log': read('nccl', 'vr200_nvls_ib_mpirun.log'),
           'nccl': {'busbw': 744.71, 'passed': True, 'msg': 'localhost: content: all_reduce_perf net OK', 'problems': [],
                    'largest_size': 17179869184, 'threshold': 36.0, 'transport': 'IB', 'nvls': True, 'hosts': ['t1', 't2']},
           'cleanup': {'changed': True}}
    out.update(over)
    return out


def test_run_check_passes_with_the_judged_log_and_says_where_it_ran():
    check = nl.run_check(_run())
    assert (check['name'], check['status'], check['message'], check['fix']) == (
        'nccl-all-reduce-bw-net', 'passed', 'localhost: content: all_reduce_perf net OK', '')
    assert check['object'] == NS
    assert check['details'][0].startswith('net run in namespace %s: job, 2 trays x 4 GPUs' % NS)
    assert 'worker annotations: k8s.v1.cni.cncf.io/networks=default/sriov-network-rail-0' in check['details'][1]
    assert 'busbw 744.71 GB/s at 17179869184 bytes (threshold 36.0 GB/s), transport IB' in ' '.join(check['details'])
    assert check['details'][-1] == 'namespace %s removed' % NS


NOT_FINISHED = 'The NCCL net run did not finish in 1800 s (namespace %s): ' % NS
NO_ROWS = 'the log has no all_reduce_perf result rows'
NO_LOG = {'nccl': None, 'log': None}


@pytest.mark.parametrize('over, message, fix', [
    ({'nccl': {'busbw': 5.0, 'passed': False, 'msg': 'all_reduce_perf net check failed: Socket',
               'problems': ['NCCL used the Socket transport']}},
     'all_reduce_perf net check failed: Socket', nl.FIX_FAILED),
    ({'nccl': {'busbw': 5.0, 'passed': False, 'msg': 'slow'}}, 'slow', nl.FIX_FAILED),
    # a measurement is trusted only from a launcher that succeeded
    (dict(launcher={'kind': 'Job', 'status': {'failed': 1, 'conditions': [BACKOFF]}},
          nccl={'busbw': None, 'passed': False, 'problems': [NO_ROWS]}),
     'The NCCL net launcher failed (BackoffLimitExceeded: Job has reached the specified backoff limit): ' + NO_ROWS,
     None),
    (dict(NO_LOG, launcher={'kind': 'Job', 'status': {'failed': 1}}),
     'The NCCL net launcher failed (1 launcher pod(s) failed) without a log', None),
    ({'launcher': {'kind': 'Job', 'status': {'failed': 1}}}, 'The NCCL net launcher failed (1 launcher pod(s) failed)',
     None),
    ({'nccl': {'busbw': None, 'passed': False, 'msg': 'all_reduce_perf net check failed', 'problems': [NO_ROWS]}},
     'The NCCL net launcher ended: ' + NO_ROWS, None),
    ({'nccl': None}, 'The NCCL net launcher ended', None),
    (dict(NO_LOG, launcher={'kind': 'Job', 'status': {'active': 1}}, pods=[pod(
        'nccl-workers-1-x', 'worker', 'Pending', conditions=[
            unschedulable('0/3 nodes are available: 3 Insufficient nvidia.com/gpu.')])]),
     NOT_FINISHED + 'worker nccl-workers-1-x: Pending on (not scheduled) - Unschedulable: 0/3 nodes are available: '
     '3 Insufficient nvidia.com/gpu.', nl.FIX_TIMEOUT),
    # a launcher that is missing or past its deadline did not finish
    (dict(NO_LOG, launcher=None), NOT_FINISHED + 'the launcher never ended', None),
    (dict(NO_LOG, launcher={'kind': 'Job', 'status': {'conditions': [
        {'type': 'Failed', 'status': 'True', 'reason': 'DeadlineExceeded', 'message': 'Job was active longer'}]}}),
     NOT_FINISHED + 'the launcher never ended', None),
    (dict(NO_LOG, error='create: no matches for kind "ComputeDomain"', launcher=None),
     'The NCCL net run could not start in %s: create: no matches for kind "ComputeDomain"' % NS, nl.FIX_START),
], ids=['socket', 'slow', 'backoff-no-rows', 'failed-no-log', 'failed', 'ended-no-rows', 'not-judged', 'timeout',
        'no-launcher', 'deadline', 'error'])
def test_a_run_that_did_not_pass_fails_and_says_why(over, message, fix):
    check = nl.run_check(_run(**over))
    assert (check['status'], check['message']) == ('failed', message)
    if fix:
        assert check['fix'] == fix


def test_run_check_shows_the_documented_tail_of_a_failed_launchers_log_only():
    """docs/validation.md: the details hold "the last N lines of the launcher's log of a failed run"."""
    lines = int(re.search(r"the last (\d+) lines of the launcher's log of a failed run",
                          ' '.join(_doc('docs', 'validation.md').split())).group(1))
    log = ''.join('line %d\n' % index for index in range(40))
    failed = nl.run_check(_run(log=log, nccl={'busbw': 5.0, 'passed': False, 'msg': 'slow'}))
    assert [d for d in failed['details'] if d.startswith('launcher log: ')] == [
        'launcher log: line %d' % index for index in range(40 - lines, 40)]
    passed = nl.run_check(_run(log=log))
    assert passed['status'] == 'passed' and not [d for d in passed['details'] if d.startswith('launcher log: ')]
    bad = nl.run_check(_run(nccl={'busbw': 5.0, 'passed': False, 'msg': 'all_reduce_perf net check failed: Socket',
                                  'problems': ['NCCL used the Socket transport']}))
    assert any(line.startswith('launcher log: ') for line in bad['details'])


def test_a_passed_run_nccl_result_could_not_verify_is_a_warning():
    nccl = dict(_run()['nccl'], warnings=['localhost: content: no "NCCL INFO Using network" line: the transport cannot '
                                          'be verified (run with NCCL_DEBUG=INFO)'])
    check = nl.run_check(_run(nccl=nccl))
    assert check['status'] == 'warning' and check['message'].endswith(
        '(not verified: localhost: content: no "NCCL INFO Using network" line: the transport cannot be verified '
        '(run with NCCL_DEBUG=INFO))')


def test_a_passed_run_whose_namespace_stayed_is_a_warning():
    check = nl.run_check(_run(cleanup={'failed': True, 'msg': 'Resource deletion timed out'}))
    assert check['status'] == 'warning' and check['message'].endswith('(namespace %s was not removed)' % NS)
    assert check['details'][-1].startswith('clean-up failed: namespace %s was not removed (Resource deletion timed '
                                           'out); delete it: kubectl delete namespace' % NS)


@pytest.mark.parametrize('run', [None, 'net', ['net'], {}, {'variant': ''}])
def test_the_run_check_filter_judges_a_run_and_refuses_anything_else(run):
    judged = nccl_run_check(_run(variant='nvls'))
    assert judged == nl.run_check(_run(variant='nvls')) and judged['name'] == 'nccl-all-reduce-bw-nvls'
    with pytest.raises(AnsibleFilterError, match="the input must be a dict with the run's variant"):
        nccl_run_check(run)


def test_run_check_details_name_the_workers_resources_and_nccl_settings():
    check = nl.run_check(_run())
    assert 'worker resources: nvidia.com/gpu=4, nvidia.com/sriov_resource_rail_0=1, nvidia.com/sriov_resource_rail_1=1, ' \
           'nvidia.com/sriov_resource_rail_2=1, nvidia.com/sriov_resource_rail_3=1' in check['details']
    assert 'NCCL: NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=eth0 NCCL_IGNORE_DISABLED_P2P=1 NCCL_NVLS_ENABLE=0 ' \
           'NCCL_MNNVL_ENABLE=0 NCCL_NET_PLUGIN=none NCCL_IB_DISABLE=0' in check['details']
    # a summary without them (a run that could not be planned) still makes a check
    for summary in ({}, {'worker_resources': {}}, {'worker_resources': {'requests': {}}, 'nccl_env': None}):
        bare = nl.run_check(_run(summary=summary, error='no plan', launcher=None, nccl=None, log=None))
        assert 'worker resources: ' in bare['details'] and 'NCCL: ' in bare['details']


def test_run_check_names_the_namespace_of_the_run_or_of_its_plan():
    assert nl.run_check(_run(namespace=None))['object'] == NS
    summary = dict(_run()['summary'], namespace=None)
    assert nl.run_check(_run(summary=summary, namespace='gpu-tray-nccl-net-r2'))['object'] == 'gpu-tray-nccl-net-r2'
    assert nl.run_check(_run(summary={}, namespace=None, error='x', launcher=None))['object'] == ''


def test_ssh_keypair_lookup_makes_a_fresh_openssh_ed25519_pair(tmp_path, collections_root):
    """Through Ansible itself (the lookup's documented option is loaded the way a play loads it)."""
    env = checkout_env(collections=collections_root, config=False, home=str(tmp_path / 'home'),
                       local_temp=str(tmp_path / 'tmp'), callback='ansible.builtin.json', ANSIBLE_LOAD_CALLBACK_PLUGINS='1')
    expr = ("{{ [lookup('gpu_tray.cluster.ssh_keypair', comment='gpu-tray-nccl-r1'), "
            "lookup('gpu_tray.cluster.ssh_keypair')] }}")
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible'), 'localhost', '-i', 'localhost,',
                           '-c', 'local', '-e', 'ansible_python_interpreter=%s' % sys.executable,
                           '-m', 'ansible.builtin.debug', '-a', json.dumps({'msg': expr})],
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    first, second = json.loads(proc.stdout)['plays'][0]['tasks'][0]['hosts']['localhost']['msg']
    assert first['private'].startswith('-----BEGIN OPENSSH PRIVATE KEY-----\n')
    assert first['public'].startswith('ssh-ed25519 AAAA') and first['public'].endswith(' gpu-tray-nccl-r1')
    assert second['public'].endswith(' gpu-tray-cluster') and second['private'] != first['private']
    if shutil.which('ssh-keygen'):
        # OpenSSH reads the private key and derives the same public key from it
        key = tmp_path / 'id'
        key.write_text(first['private'])
        key.chmod(0o600)
        res = subprocess.run(['ssh-keygen', '-y', '-f', str(key)], capture_output=True, text=True, check=False)
        assert res.returncode == 0, res.stderr
        assert res.stdout.split()[:2] == first['public'].split()[:2]


# What the API server refuses by name alone (Kubernetes' validation: apimachinery/pkg/util/validation): DNS-1123
# names, label keys (an optional lower-case DNS prefix, a name part of [A-Za-z0-9._-] starting and ending with an
# alphanumeric, at most 63), label values (the same, may be empty), container, volume and port names.
_DNS_LABEL = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')
_DNS_SUBDOMAIN = re.compile(r'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')
_QUALIFIED = re.compile(r'^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')
_PORT_NAME = re.compile(r'^[a-z0-9]([a-z0-9-]*[a-z0-9])?$')
_CONFIG_KEY = re.compile(r'^[-._a-zA-Z0-9]+$')


def _label_key(key):
    prefix, _slash, name = key.rpartition('/')
    return (not prefix or (len(prefix) <= 253 and _DNS_SUBDOMAIN.match(prefix))) and len(name) <= 63 \
        and bool(_QUALIFIED.match(name))


def _meta_problems(meta, where):
    out = []
    for key, value in (meta.get('labels') or {}).items():
        if not _label_key(key) or not (value == '' or (len(value) <= 63 and _QUALIFIED.match(value))):
            out.append('%s: label %s=%s' % (where, key, value))
    out += ['%s: annotation %s' % (where, key) for key in meta.get('annotations') or {} if not _label_key(key)]
    return out


def _pod_problems(pod, where):
    out = _meta_problems(pod.get('metadata') or {}, where)
    spec = pod['spec']
    out += ['%s: volume %s' % (where, v['name']) for v in spec.get('volumes') or [] if not _DNS_LABEL.match(v['name'])]
    for container in spec['containers']:
        if not _DNS_LABEL.match(container['name']):
            out.append('%s: container %s' % (where, container['name']))
        out += ['%s: port %s' % (where, p['name']) for p in container.get('ports') or []
                if len(p['name']) > 15 or not _PORT_NAME.match(p['name'])]
        out += ['%s: env %s' % (where, e['name']) for e in container.get('env') or []
                if not re.match(r'^[-._a-zA-Z][-._a-zA-Z0-9]*$', e['name'])]
    return out


@pytest.mark.parametrize('variant, workload', SELECTOR_PLANS)
def test_every_object_of_a_run_has_names_and_labels_the_api_server_accepts(variant, workload):
    plan = nccl_run_plan(workload_spec(workload, variant=variant))
    problems = []
    for obj in plan['prepare'] + plan['workload']:
        meta, where = obj['metadata'], '%s %s' % (obj['kind'], obj['metadata'].get('name'))
        name_rule = _DNS_LABEL if obj['kind'] in ('Namespace', 'Service') else _DNS_SUBDOMAIN
        if not name_rule.match(meta['name']) or len(meta['name']) > 63:
            problems.append('%s: name' % where)
        if obj['kind'] != 'Namespace' and meta.get('namespace') != plan['namespace']:
            problems.append('%s: namespace %s' % (where, meta.get('namespace')))
        problems += _meta_problems(meta, where)
        if obj['kind'] == 'ConfigMap':
            problems += ['%s: key %s' % (where, key) for key in obj['data'] if not _CONFIG_KEY.match(key)]
        if obj['kind'] == 'Service':
            problems += ['%s: port %s' % (where, p['name']) for p in obj['spec']['ports']
                         if not _PORT_NAME.match(p['name'])]
    for label, templates in _templates(plan).items():
        problems += [found for template in templates for found in _pod_problems(template, '%s pod' % label)]
    lease_meta = _lease_body()['metadata']
    problems += _meta_problems(lease_meta, 'Lease') + ([] if _DNS_SUBDOMAIN.match(lease_meta['name']) else ['Lease: name'])
    assert problems == []


@pytest.mark.parametrize('variant, workload', SELECTOR_PLANS)
def test_every_file_and_variable_the_pods_scripts_use_is_in_the_pod(variant, workload):
    """The scripts run from the ConfigMap mounted where the command looks for them; each variable a script reads is
    in the container's environment; the key directory and the hostfile the launcher reads are mounted or made by the
    workload (the job's Secret and ConfigMap, Kubeflow Trainer's keys and hostfile for a TrainJob)."""
    plan = nccl_run_plan(workload_spec(workload, variant=variant))
    config = by_kind(plan)['ConfigMap'][0]
    secret = (by_kind(plan).get('Secret') or [{'stringData': {}}])[0]['stringData']
    for role, templates in _templates(plan).items():
        pod_spec = templates[0]['spec']
        container = pod_spec['containers'][0]
        volumes = dict((v['name'], v) for v in pod_spec['volumes'])
        mounts = dict((m['mountPath'], volumes[m['name']]) for m in container['volumeMounts'])
        env = env_of(container)
        shell, script_path = container['command']
        directory, _slash, script = script_path.rpartition('/')
        assert shell == '/bin/sh' and mounts[directory].get('configMap', {}).get('name') == config['metadata']['name']
        text = config['data'][script]
        for name in set(re.findall(r'\$\{?([A-Z][A-Z0-9_]*)', text)) - {'NCCL_IB_HCA'}:
            assert name in env, '%s reads $%s, the %s container does not set it' % (script, name, role)
        if workload == 'job':
            assert mounts[env['SSH_KEYS']]['secret']['secretName'] == by_kind(plan)['Secret'][0]['metadata']['name']
            assert ('authorized_keys' if role == 'worker' else 'id_ed25519') in secret
        else:
            assert env['SSH_KEYS'] == by_kind(plan)['TrainingRuntime'][0]['spec']['mlPolicy']['mpi']['sshAuthMountPath']
        if role == 'launcher':
            hostfile = env['HOSTFILE']
            if workload == 'job':
                assert hostfile.rpartition('/')[0] in mounts and hostfile.rpartition('/')[2] in config['data']
            else:
                assert hostfile == '/etc/mpi/hostfile'          # where Kubeflow Trainer's MPI plugin writes it
            line = exec_line(text)
            rank = [arg for arg in line.split() if arg.endswith('/rank.sh')][0]
            assert rank.rpartition('/')[0] in mounts and 'rank.sh' in config['data']
            for name in re.findall(r"-x ([A-Za-z_][A-Za-z0-9_]*)(?=[ ']|$)", line):
                assert name in env, 'mpirun exports %s, the launcher does not set it' % name


def test_the_roles_stale_namespace_cleanup_selects_the_namespaces_runs_create():
    """roles/validate/tasks/nccl.yml removes, under the lock, the namespaces of earlier runs that ended without
    removing them: its label selector must select a run's Namespace (and only those), and its lock is the Lease the
    filters write."""
    selectors = re.findall(r'kind: Namespace\n\s+label_selectors: \[([^\]]+)\]',
                           _doc('roles', 'validate', 'tasks', 'nccl.yml'))
    assert len(selectors) == 1
    labels = by_kind(nccl_run_plan(spec()))['Namespace'][0]['metadata']['labels']
    for item in selectors[0].split(','):
        key, _eq, value = item.strip().partition('=')
        assert key in labels and (not value or labels[key] == value)
    # and not a namespace of anything else: a key the API server puts on every namespace would remove them all
    assert not set(item.strip().partition('=')[0] for item in selectors[0].split(',')) & {'kubernetes.io/metadata.name'}
    # the role reads and releases the Lease by the name the phase's plan carries (nccl_launch.LOCK_NAME, one definition)
    assert yaml.safe_load(_doc('roles', 'validate', 'vars', 'main.yml'))['__validate_nccl_lock_name'] == \
        '{{ __validate_nccl_phase.lock_name }}'
    assert nl.phase_plan(spec(), [], [])['lock_name'] == nl.LOCK_NAME == 'gpu-tray-nccl-run-lock'


# Every field of the core objects a run creates is one the API knows (the kubernetes client's models of the API,
# field by field): a misspelt field is pruned or refused by the server. The full 1.34 schema check, enums and all,
# is tests/cluster/test_nccl_offline.py's.
def _unknown_fields(value, model, where):
    import kubernetes.client as k8s
    if model in ('object', 'str', 'int', 'bool', 'float', 'datetime', 'bytes') or value is None:
        return []
    if model.lower().startswith('list['):
        return [p for i, item in enumerate(value) for p in _unknown_fields(item, model[5:-1], '%s[%d]' % (where, i))]
    if model.lower().startswith(('dict(', 'dict[')):
        inner = model[5:-1].split(', ', 1)[1]
        return [p for key, item in value.items() for p in _unknown_fields(item, inner, '%s.%s' % (where, key))]
    cls = getattr(k8s, model)
    by_json = dict((json_name, attr) for attr, json_name in cls.attribute_map.items())
    out = []
    for key, item in value.items():
        if key not in by_json:
            out.append('%s.%s' % (where, key))
        else:
            out += _unknown_fields(item, cls.openapi_types[by_json[key]], '%s.%s' % (where, key))
    return out


CORE_MODELS = {('v1', 'Namespace'): 'V1Namespace', ('v1', 'ConfigMap'): 'V1ConfigMap', ('v1', 'Secret'): 'V1Secret',
               ('v1', 'Service'): 'V1Service', ('batch/v1', 'Job'): 'V1Job',
               ('coordination.k8s.io/v1', 'Lease'): 'V1Lease'}


@pytest.mark.parametrize('variant, workload', SELECTOR_PLANS)
def test_every_field_of_the_core_objects_of_a_run_is_one_the_api_knows(variant, workload):
    plan = nccl_run_plan(workload_spec(workload, variant=variant))
    problems, core = [], 0
    for obj in plan['prepare'] + plan['workload'] + [_lease_body()]:
        model = CORE_MODELS.get((obj['apiVersion'], obj['kind']))
        if model:
            core += 1
            problems += _unknown_fields(obj, model, obj['kind'])
        group = obj['apiVersion'].rpartition('/')[0]
        assert not group or _DNS_SUBDOMAIN.match(group), obj['apiVersion']
    for runtime in by_kind(plan).get('TrainingRuntime', []):
        # the JobSet's Jobs are batch/v1 Job templates, their pods core pods
        for job in runtime['spec']['template']['spec']['replicatedJobs']:
            problems += _unknown_fields(job['template'], 'V1JobTemplateSpec', 'replicatedJobs.%s' % job['name'])
        trainjob = by_kind(plan)['TrainJob'][0]
        assert trainjob['spec']['runtimeRef']['apiGroup'] == nl.TRAINER_API.partition('/')[0]
        assert trainjob['spec']['runtimeRef']['name'] == runtime['metadata']['name']
    assert core >= 3 and problems == []
    # what the pods name: the IMEX claim template the ComputeDomain makes, the ConfigMap and the Secret
    for template in _templates(plan)['worker']:
        for claim in template['spec'].get('resourceClaims') or []:
            domain = by_kind(plan)['ComputeDomain'][0]
            assert claim['resourceClaimTemplateName'] == domain['spec']['channel']['resourceClaimTemplate']['name']
            assert _DNS_SUBDOMAIN.match(claim['resourceClaimTemplateName']) and _DNS_LABEL.match(claim['name'])


@pytest.mark.parametrize('workload', ['job', 'trainjob'])
def test_the_workers_get_memory_backed_shared_memory(workload):
    # NCCL's shared-memory transport between a tray's ranks uses /dev/shm; the container runtime's default is 64 MiB
    pod_spec = worker_pod(nccl_run_plan(workload_spec(workload)))['spec']
    volumes = dict((v['name'], v) for v in pod_spec['volumes'])
    shm = [m for m in pod_spec['containers'][0]['volumeMounts'] if m['mountPath'] == '/dev/shm']
    assert len(shm) == 1 and volumes[shm[0]['name']]['emptyDir'] == {'medium': 'Memory'}


@pytest.mark.parametrize('variant', ['nvls', 'net'])
def test_every_nccl_setting_is_a_variable_nccl_reads(variant):
    """NCCL reads upper-case NCCL_* variables only: a setting under another name does nothing, silently."""
    names = [name for name, _value in nl.nccl_env(variant)]
    assert all(re.match(r'^NCCL_[A-Z0-9_]+$', name) for name in names) and len(set(names)) == len(names)
    assert ('NCCL_IB_DISABLE', '0') in nl.nccl_env('net') and ('NCCL_IGNORE_DISABLED_P2P', '1') in nl.nccl_env(variant)


@pytest.mark.parametrize('run_id', ['R1', 'Run1', '1-A', 'ab_c', '-ab', 'ab-'])
def test_a_run_id_that_makes_no_dns_label_is_refused(run_id):
    with pytest.raises(nl.PlanError, match='not a DNS label'):
        nl.run_namespace('net', run_id)


def test_a_namespace_of_63_characters_is_a_dns_label_and_one_of_64_is_not():
    fits = 'a' * (63 - len('%s-nvls-' % nl.PREFIX))
    assert len(nl.run_namespace('nvls', fits)) == 63
    with pytest.raises(nl.PlanError, match='not a DNS label'):
        nl.run_namespace('nvls', fits + 'b')


# ------------------------------------------------------------------------------------------------- consequences
# What the string and constant mutants of nccl_launch.py showed unpinned (issue 38): each test asserts what a value
# does - against the objects it must match, the program that reads it, or the contract on the other side (the
# collection's name in galaxy.yml, OpenSSH's default port, the API's own field descriptions, the role's argument
# spec and docs/validation.md).

def test_every_object_a_run_writes_names_the_collection_as_its_manager():
    """app.kubernetes.io/managed-by (Kubernetes' recommended label) names the tool that manages an object: this
    collection, as galaxy.yml names it (<namespace>.<name>) - on every object of every run and on the Lease."""
    galaxy = yaml.safe_load(_doc('galaxy.yml'))
    ours = '%s.%s' % (galaxy['namespace'], galaxy['name'])
    objects = [_lease_body()] + [obj for _v, _w, plan in _plans() for obj in plan['prepare'] + plan['workload']]
    assert len(objects) > 20
    assert [obj['kind'] for obj in objects if obj['metadata']['labels'].get('app.kubernetes.io/managed-by') != ours] == []


@pytest.mark.parametrize('workload', ['job', 'trainjob'])
def test_the_documented_net_worker_pod_is_the_one_a_run_writes(workload):
    """docs/validation.md shows the NET worker pod of the NVKE guide ("The NVKE GB200 NET runtime") - what a reader
    compares a stuck run with: every field it shows is the plan's (labels with a <placeholder> value by key only).
    The job workload mounts the run's key where the docs say; Kubeflow Trainer mounts its own keys."""
    doc = yaml.safe_load(re.search(r'### The NVKE GB200 NET runtime\n.*?```yaml\n(.*?)```',
                                   _doc('docs', 'validation.md'), re.S).group(1))
    pod_template = worker_pod(nccl_run_plan(workload_spec(workload)))
    assert pod_template['metadata']['annotations'] == doc['metadata']['annotations']
    assert sorted(pod_template['metadata']['labels']) == sorted(doc['metadata']['labels'])
    assert all(pod_template['metadata']['labels'][key] == value for key, value in doc['metadata']['labels'].items()
               if not value.startswith('<'))
    pod_spec, doc_spec = pod_template['spec'], doc['spec']
    assert pod_spec['restartPolicy'] == doc_spec['restartPolicy']
    if workload == 'job':
        assert pod_spec['subdomain'] == doc_spec['subdomain']
    term = pod_spec['affinity']['podAntiAffinity']['requiredDuringSchedulingIgnoredDuringExecution']
    doc_term = doc_spec['affinity']['podAntiAffinity']['requiredDuringSchedulingIgnoredDuringExecution']
    assert [t['topologyKey'] for t in term] == [t['topologyKey'] for t in doc_term]
    assert sorted(term[0]['labelSelector']['matchLabels']) == sorted(doc_term[0]['labelSelector']['matchLabels'])
    container, doc_container = pod_spec['containers'][0], doc_spec['containers'][0]
    for field in ('name', 'command', 'securityContext', 'readinessProbe'):
        assert container[field] == doc_container[field], field
    assert container['resources']['limits'] == doc_container['resources']['limits'] == container['resources']['requests']
    documented = [re.search(r'(/[^ )]+)', mount).group(1) for mount in doc_container['volumeMounts']]
    mounted = sorted(mount['mountPath'] for mount in container['volumeMounts'])
    assert mounted == sorted(path for path in documented if workload == 'job' or not path.endswith('/ssh'))


@pytest.mark.skipif(not shutil.which('sh'), reason='needs a POSIX sh')
def test_the_launcher_gives_each_workers_sshd_the_documented_time_and_says_so(tmp_path):
    """launch.sh (as the ConfigMap holds it) against a worker whose sshd never answers, with ssh and sleep stubbed:
    the time it waits (ssh attempts x the sleep between them) is what its message says and what docs/validation.md
    promises ("up to 10 minutes for each"), and shorter than the role's default wait (validate_nccl_timeout), so
    the launcher's log names the worker before the role gives up on the run."""
    stubs, keys = tmp_path / 'bin', tmp_path / 'keys'
    stubs.mkdir()
    keys.mkdir()
    (stubs / 'ssh').write_text('#!/bin/sh\necho "$*" >> "%s"\nexit 255\n' % (tmp_path / 'ssh.calls'))
    (stubs / 'sleep').write_text('#!/bin/sh\necho "$1" >> "%s"\n' % (tmp_path / 'slept'))
    for stub in ('ssh', 'sleep'):
        (stubs / stub).chmod(0o755)
    (keys / 'id_ed25519').write_text('key\n')
    (keys / 'id_ed25519.pub').write_text('ssh-ed25519 AAAA\n')
    hostfile = tmp_path / 'hostfile'
    hostfile.write_text(nl.hostfile(dict(trays=1, gpus_per_tray=4)))
    script = tmp_path / 'launch.sh'
    script.write_text(scripts(nccl_run_plan(spec()))['launch.sh'].replace('/root/', str(tmp_path / 'root') + '/'))
    env = dict(os.environ, PATH='%s:%s' % (stubs, os.environ['PATH']), SSH_KEYS=str(keys), HOSTFILE=str(hostfile))
    res = subprocess.run(['sh', str(script)], capture_output=True, text=True, env=env, check=False, timeout=60)
    assert res.returncode == 1, res.stderr
    assert (tmp_path / 'root' / '.ssh' / 'id_ed25519').is_file()
    assert not (tmp_path / 'root' / '.ssh' / 'id_ed25519.pub').exists()
    attempts = (tmp_path / 'ssh.calls').read_text().splitlines()
    assert set(line.split()[-2] for line in attempts) == {'nccl-workers-0.nccl-workers'}
    pauses = set((tmp_path / 'slept').read_text().split())
    assert len(pauses) == 1
    said = re.search(r'^worker nccl-workers-0\.nccl-workers: sshd did not answer in (\d+) s$', res.stderr, re.M)
    assert said, res.stderr
    assert int(said.group(1)) == len(attempts) * int(pauses.pop())
    minutes = re.search(r'up to (\d+) minutes for each', ' '.join(_doc('docs', 'validation.md').split())).group(1)
    assert int(said.group(1)) == int(minutes) * 60
    assert int(said.group(1)) < _role_options()['validate_nccl_timeout']['default']


def _protocols(model):
    """The protocols the API supports for a port, from the kubernetes client's own description of the field."""
    import kubernetes.client as k8s
    cls = getattr(k8s, model)
    fields = getattr(cls, 'model_fields', None)
    text = fields['protocol'].description if fields else getattr(cls, 'protocol').__doc__
    return set(re.findall(r'"([A-Z]+)"', text or ''))


@pytest.mark.parametrize('variant, workload', SELECTOR_PLANS)
def test_every_port_that_reaches_sshd_is_the_port_sshd_listens_on(variant, workload):
    """worker.sh starts sshd with no -p, and the launcher's ssh and mpirun's ssh name no port: both use OpenSSH's
    default, 22. The readiness probe (the worker is Ready once sshd listens), the container's ssh port and the
    headless Service's port (the DNS SRV record of the workers) must be that one, with a protocol the API supports
    (the kubernetes client's V1ContainerPort / V1ServicePort: TCP, UDP, SCTP) - sshd's, TCP."""
    openssh_default = 22
    plan = nccl_run_plan(workload_spec(workload, variant=variant))
    data = scripts(plan)
    sshd = [line for line in data['worker.sh'].splitlines() if line.startswith('exec /usr/sbin/sshd')]
    assert len(sshd) == 1 and not re.search(r' -p|Port', sshd[0])
    assert not re.search(r'ssh [^|]*(-p |Port=)', data['launch.sh'])
    container = worker_pod(plan)['spec']['containers'][0]
    ports = dict((port['name'], port) for port in container['ports'])
    assert ports['ssh']['containerPort'] == openssh_default
    assert ports['ssh']['protocol'] == 'TCP' and 'TCP' in _protocols('V1ContainerPort')
    assert container['readinessProbe']['tcpSocket']['port'] in (openssh_default, 'ssh')
    for service in by_kind(plan).get('Service', []):
        port = service['spec']['ports'][0]
        assert (port['port'], port['targetPort']) == (openssh_default, openssh_default)
        assert port['protocol'] == 'TCP' and 'TCP' in _protocols('V1ServicePort')


def test_the_scripts_are_readable_and_executable_by_any_user_and_the_key_by_its_owner_only():
    """The scripts ConfigMap: every class (an image whose user is not root too) reads and executes them, nobody
    writes them (0o555). The SSH key Secret: OpenSSH refuses a private key that group or others can read or write
    ("UNPROTECTED PRIVATE KEY FILE"); its owner reads it (0o400)."""
    seen = set()
    for _variant, workload, plan in _plans():
        for role, pod_spec in _pod_specs(plan):
            for volume in pod_spec['volumes']:
                if 'configMap' in volume:
                    mode = volume['configMap']['defaultMode']
                    assert mode & 0o555 == 0o555 and not mode & ~0o555, (workload, role, oct(mode))
                    seen.add('scripts')
                if 'secret' in volume:
                    mode = volume['secret']['defaultMode']
                    assert mode & 0o400 and not mode & ~0o600, (role, oct(mode))
                    seen.add('key')
    assert seen == {'scripts', 'key'}


def test_no_pod_of_a_run_gets_an_api_token():
    """The role makes every API call; a pod that runs sshd with the run's key and mounted the service account's
    token would hand the namespace's API access to anyone with the key: no pod mounts a token, none names an account."""
    for _variant, _workload, plan in _plans():
        for role, pod_spec in _pod_specs(plan):
            assert pod_spec.get('automountServiceAccountToken') is False, role
            assert 'serviceAccountName' not in pod_spec and 'serviceAccount' not in pod_spec


def test_the_launcher_runs_the_programs_the_image_contract_names_and_the_ranks_find_cuda():
    """What the image must hold is a contract stated to the user (validate_nccl_image's argument spec and
    docs/validation.md): the launcher runs exactly those paths, and the fix of a failed run names them. mpirun -x
    LD_LIBRARY_PATH hands the launcher's value to every rank, replacing the image's: it keeps the library directories
    of NVIDIA's CUDA images - the driver's (/usr/local/nvidia/lib64, in the nvidia/cuda images' own LD_LIBRARY_PATH)
    and CUDA's (/usr/local/cuda/lib64)."""
    named = re.findall(r'C\((/[^)]+)\)', ' '.join(_role_options()['validate_nccl_image']['description']))
    mpirun = [path for path in named if path.endswith('/mpirun')]
    binary = [path for path in named if path.endswith('/all_reduce_perf_mpi')]
    assert len(mpirun) == 1 and len(binary) == 1
    docs = _doc('docs', 'validation.md')
    for _variant, _workload, plan in _plans():
        argv = exec_line(scripts(plan)['launch.sh']).split()
        assert argv[1] == mpirun[0] and binary[0] in argv and '`%s`' % mpirun[0] in docs
        assert argv[argv.index('LD_LIBRARY_PATH') - 1] == '-x'
        path = env_of(_templates(plan)['launcher'][0]['spec']['containers'][0])['LD_LIBRARY_PATH'].split(':')
        assert {'/usr/local/nvidia/lib64', '/usr/local/cuda/lib64'} <= set(path)
    assert mpirun[0] in nl.FIX_FAILED and binary[0] in nl.FIX_FAILED


def test_the_filters_defaults_are_the_roles():
    """A plan without sizes or step factor runs what the role's argument spec documents as the defaults (AICR's
    -b 1K -e 16G -f 2), also with the step factor given as null."""
    options = _role_options()
    wanted = '-b %s -e %s -f %s' % tuple(options['validate_nccl_%s' % key]['default']
                                         for key in ('min_bytes', 'max_bytes', 'step_factor'))
    base = dict((key, value) for key, value in spec().items() if key not in ('min_bytes', 'max_bytes', 'step_factor'))
    for extra in ({}, {'step_factor': None}, {'min_bytes': '', 'max_bytes': None}):
        plan = nccl_run_plan(dict(base, **extra))
        assert plan['summary']['sizes'] == wanted
        assert scripts(plan)['launch.sh'].rstrip().endswith(wanted + ' -g 1')


@pytest.mark.parametrize('trays', [2, 3])
def test_the_compute_domain_never_waits_for_a_node_count_other_than_the_runs(trays):
    """numNodes 0: the ComputeDomain's IMEX daemons follow the pods that claim its channel (what AICR pins); any
    other count than the run's trays would hold the channel until that many nodes joined, or release it early."""
    domain = by_kind(nccl_run_plan(spec(variant='nvls', rails=[], trays=trays)))['ComputeDomain'][0]
    assert domain['spec']['numNodes'] in (0, trays)


def test_no_job_of_a_run_retries_a_pod_the_launcher_runs_once_and_each_job_carries_its_pods_role():
    """Both workloads: no Job retries a pod (a retried launcher measures again and the first failure's log is lost,
    a retried worker comes back with no rank); each Job carries its pods' role label, so the role's selector that
    finds the pods finds their Job too. The TrainingRuntime's JobSet: one launcher (replicas 1 - 0 never runs
    mpirun, 2 would run it twice on the same workers); the runtime's framework label (how the Trainer SDK lists
    runtimes) names its ML policy; the pods get the DNS host names the Trainer's hostfile names."""
    for variant, workload, plan in _plans():
        if workload == 'job':
            jobs = [(job['metadata']['labels'], job['spec'], job['spec']['template']) for job in by_kind(plan)['Job']]
        else:
            runtime = by_kind(plan)['TrainingRuntime'][0]
            replicated = runtime['spec']['template']['spec']['replicatedJobs']
            jobs = [(job['template']['metadata']['labels'], job['template']['spec'], job['template']['spec']['template'])
                    for job in replicated]
            launchers = [job for job in replicated if job['template']['spec']['template']['metadata']['labels'][
                nl.LABEL_ROLE] == 'launcher']
            assert [job.get('replicas', 1) for job in launchers] == [1]
            assert runtime['metadata']['labels']['trainer.kubeflow.org/framework'] in runtime['spec']['mlPolicy']
            assert runtime['spec']['template']['spec']['network']['enableDNSHostnames'] is True
        assert len(jobs) == 2
        for labels, job_spec, template in jobs:
            assert job_spec['backoffLimit'] == 0, (variant, workload)
            assert labels[nl.LABEL_ROLE] == template['metadata']['labels'][nl.LABEL_ROLE]
            role = labels[nl.LABEL_ROLE]
            selectors = plan['workers' if role == 'worker' else 'launcher']['label_selectors']
            assert _selects(_parse(selectors), labels), (workload, role)


# ------------------------------------------------------------------------------------ the phase before the lock

def phase_spec():
    base = spec()
    for key in ('variant', 'ssh_private_key', 'ssh_public_key'):
        del base[key]
    return base


def test_the_phase_plans_every_variant_and_starts_only_those_that_can(tmp_path):
    ok = tray_read(tmp_path, 'tray01', 'params-r580-override')
    nodes = [node('tray01'), node('tray02')]
    phase = nccl_phase(phase_spec(), ['nvls', 'net'], nodes, ['tray01', 'tray02'],
                       [ok['state'], tray_read(tmp_path, 'tray02', 'params-r580-override')['state']],
                       [ok['proc_root'], str(tmp_path / 'tray02' / 'proc')])
    assert phase['to_run'] == ['nvls', 'net'] and sorted(phase['plans']) == ['net', 'nvls']
    assert phase['lock_name'] == 'gpu-tray-nccl-run-lock'       # the role reads and releases the Lease by it
    assert phase['preflight']['status'] == 'passed' and phase['checks'] == [phase['preflight']]
    assert phase['plans']['net']['capacity']['enough'] is True
    # the same plan as one run's, but with placeholder keys
    assert phase['plans']['nvls']['namespace'] == nccl_run_plan(spec(variant='nvls', nodes=nodes))['namespace']


def test_a_failed_net_preflight_skips_net_and_too_few_nodes_fail_the_variant(tmp_path):
    bad = tray_read(tmp_path, 'tray01', 'params-r580-default')
    phase = nccl_phase(phase_spec(), ['nvls', 'net'], [node('tray01')], ['tray01'], [bad['state']], [bad['proc_root']])
    assert phase['to_run'] == []
    preflight, nvls, net = phase['checks']
    assert preflight['name'] == 'nccl-net-preflight' and preflight['status'] == 'failed'
    assert net == {'variant': 'net', 'name': 'nccl-all-reduce-bw-net', 'status': 'skipped',
                   'message': 'Not run: the NET preflight failed (nccl-net-preflight).'}
    assert nvls['name'] == 'nccl-all-reduce-bw-nvls' and nvls['status'] == 'failed' and nvls['object'] == 'tray01'
    assert nvls['message'].startswith('Not run: the run needs 2 trays and 1 node(s) can take a nvls worker')
    assert nvls['fix'] == nl.CAPACITY_FIX
    # without net, no preflight; a tray not read is none
    only = nccl_phase(phase_spec(), ['nvls'], [node('tray01'), node('tray02')], ['tray01'], [None], [None])
    assert only['preflight'] is None and only['checks'] == [] and only['to_run'] == ['nvls']


def test_the_phase_refuses_mismatched_tray_lists():
    with pytest.raises(AnsibleFilterError, match='one entry per tray'):
        nccl_phase(phase_spec(), ['nvls'], [], ['tray01', 'tray02'], [None], ['/proc'])
    with pytest.raises(AnsibleFilterError, match='the run spec'):
        nccl_phase(['nvls'], ['nvls'], [])
