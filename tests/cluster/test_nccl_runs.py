# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The performance phase launching the NCCL benchmarks (playbooks/validate.yml without logs) on the test cluster.

The NVKE GB200 trays of the simulated kubelet advertise four GPUs and 16 VFs on each of four rails; it binds the
run's pods to nodes that fit them, runs them to completion (``:broken`` images fail, ``:hang`` images never end)
and serves what the launcher "printed": a real nccl-tests log from tests/unit/fixtures/nccl, mapped to the image the
run uses (clusterhelpers.container_logs). An observer thread records every object of the run while it exists, so
the tests hold the shape of what was launched (namespace, lock, Jobs, pods and the nodes they ran on) and prove it
is gone afterwards - on success, on failure, on timeout, and when the run cannot start.

ComputeDomain and pod resourceClaims are not served by the 1.20 server (test_nccl_offline.py and
tests/upstream/test_upstream_nccl.py hold them against the real CRDs and the 1.34 schemas); the real Kubeflow Trainer
CRDs are, and the TrainingRuntime and TrainJob the kubeflow recipe launches come back from the server unpruned.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from ansible_env import checkout_env
from clusterhelpers import container_logs
from stackhelpers import RAIL_PCI
from upstreamdata import upstream_crd

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NCCL_LOGS = os.path.join(REPO, 'tests', 'unit', 'fixtures', 'nccl')
NVIDIA = os.path.join(REPO, 'tests', 'unit', 'fixtures', 'nvidia')
NVKE = 'gb200-nvke-ubuntu-training'
LOCK = 'gpu-tray-nccl-run-lock'
RUN_LABEL = 'gpu-tray.cluster/nccl-run'
RAILS = ['nvidia.com/sriov_resource_rail_%d' % i for i in range(4)]
NETWORKS = ','.join('default/sriov-network-rail-%d' % i for i in range(4))
BASE = {'validate_recipe': NVKE, 'validate_phases': ['performance'], 'validate_nccl_poll_interval': 2,
        'validate_nccl_cleanup_timeout': 90, 'validate_nccl_timeout': 120}


@pytest.fixture(scope='module')
def api(kcluster, k8s_api):
    if kcluster.platform != 'nvke-gb200':
        pytest.fail('these tests need the nvke-gb200 test cluster (trays with rails); a %s cluster is up: '
                    'tests/cluster/kcluster down, then run them again' % kcluster.platform, pytrace=False)
    core = client.CoreV1Api(k8s_api)
    node = core.read_node(kcluster.trays[0])
    assert any(a.type == 'InternalDNS' for a in node.status.addresses), (
        'the running test cluster predates the simulated kubelet\'s log endpoint: tests/cluster/kcluster down, '
        'then run again')
    return k8s_api


def _raw(call, *args, **kwargs):
    return json.loads(call(*args, _preload_content=False, **kwargs).data)


class Observer(object):
    """Records every object of every NCCL run (namespaces labelled gpu-tray.cluster/nccl-run) and the run lock."""

    def __init__(self, api_client):
        self.core = client.CoreV1Api(api_client)
        self.batch = client.BatchV1Api(api_client)
        self.coord = client.CoordinationV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.seen = {}          # namespace -> {'namespace': obj, kind: {name: obj}}
        self.leases = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)

    def loop(self):
        while not self.stop.is_set():
            try:
                self.once()
            except ApiException:
                pass
            time.sleep(0.3)

    def once(self):
        for ns in _raw(self.core.list_namespace, label_selector=RUN_LABEL)['items']:
            name = ns['metadata']['name']
            entry = self.seen.setdefault(name, {'namespace': ns})
            for kind, call in (('ConfigMap', self.core.list_namespaced_config_map),
                               ('Secret', self.core.list_namespaced_secret),
                               ('Service', self.core.list_namespaced_service),
                               ('Job', self.batch.list_namespaced_job),
                               ('Pod', self.core.list_namespaced_pod)):
                for obj in _raw(call, name)['items']:
                    entry.setdefault(kind, {})[obj['metadata']['name']] = obj
            for kind, plural in (('TrainingRuntime', 'trainingruntimes'), ('TrainJob', 'trainjobs')):
                try:
                    items = _raw(self.custom.list_namespaced_custom_object, 'trainer.kubeflow.org', 'v1alpha1', name,
                                 plural)['items']
                except ApiException as exc:
                    if exc.status != 404:
                        raise
                    continue
                for obj in items:
                    entry.setdefault(kind, {})[obj['metadata']['name']] = obj
        try:
            lease = _raw(self.coord.read_namespaced_lease, LOCK, 'default')
            holders = [item['spec']['holderIdentity'] for item in self.leases]
            if not holders or holders[-1] != lease['spec']['holderIdentity']:
                self.leases.append(lease)
        except ApiException as exc:
            if exc.status != 404:
                raise

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(5)


def _validate(kubeconfig, home, args, inventory='localhost,'):
    env = checkout_env(REPO, home=home, local_temp=True, K8S_AUTH_KUBECONFIG=kubeconfig)
    argv = [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', inventory, '-c', 'local',
            '-e', 'ansible_python_interpreter=%s' % sys.executable,
            # the NVKE recipes' SR-IOV policies select each rail by its PF address on the tray model
            '-e', json.dumps(dict({'gpu_tray_rail_pci_addresses': RAIL_PCI}, **args)),
            os.path.join(REPO, 'playbooks', 'validate.yml')]
    return subprocess.run(argv, capture_output=True, text=True, env=env, check=False)


def _performance(evidence_dir):
    tests = json.loads((evidence_dir / 'ctrf' / 'performance.json').read_text())['results']['tests']
    return dict((t['name'], t) for t in tests)


def _gone(api_client, namespace):
    try:
        client.CoreV1Api(api_client).read_namespace(namespace)
    except ApiException as exc:
        return exc.status == 404
    return False


def _no_lock(api_client):
    try:
        client.CoordinationV1Api(api_client).read_namespaced_lease(LOCK, 'default')
    except ApiException as exc:
        return exc.status == 404
    return False


def _micro(offset):
    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=offset)).strftime(
        '%Y-%m-%dT%H:%M:%S.%fZ')


def _lease(api_client, holder, renewed_ago, duration):
    body = {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease', 'metadata': {'name': LOCK, 'namespace': 'default'},
            'spec': {'holderIdentity': holder, 'leaseDurationSeconds': duration,
                     'acquireTime': _micro(-renewed_ago), 'renewTime': _micro(-renewed_ago)}}
    client.CoordinationV1Api(api_client).create_namespaced_lease('default', body)


def test_nvke_net_run_launches_the_guides_pod_shape_judges_its_log_and_cleans_up(api, kubeconfig, tmp_path):
    core = client.CoreV1Api(api)
    # a run that died an hour ago: its lock expired, its namespace is still there
    _lease(api, 'old-run@elsewhere', 3600, 600)
    core.create_namespace({'metadata': {'name': 'gpu-tray-nccl-net-old-run', 'labels': {RUN_LABEL: 'old-run'}}})
    image = 'registry.test/nccl-tests:net-ok'
    evidence = tmp_path / 'evidence'
    with container_logs({image: os.path.join(NCCL_LOGS, 'vr200_nvls_ib_mpirun.log')}), Observer(api) as seen:
        res = _validate(kubeconfig, str(tmp_path), dict(BASE, validate_nccl_variants=['net'], validate_nccl_image=image,
                                                        validate_evidence_dir=str(evidence)))
    assert res.returncode == 0, res.stdout[-4000:]
    checks = _performance(evidence)
    net = checks['nccl-all-reduce-bw-net']
    assert net['status'] == 'passed', net
    assert 'all_reduce_perf net OK: busbw 743.89 GB/s at 17179869184 bytes >= 36 GB/s (floor 40' in net['message']
    # -i localhost,: no trays to read, so the NET preflight could verify nothing - it says so
    assert checks['nccl-net-preflight']['status'] == 'passed' and checks['nccl-net-preflight']['extra']['warning']
    runs = [ns for ns in seen.seen if ns != 'gpu-tray-nccl-net-old-run']
    assert len(runs) == 1 and runs[0].startswith('gpu-tray-nccl-net-'), sorted(seen.seen)
    run = seen.seen[runs[0]]
    assert run['namespace']['metadata']['labels']['pod-security.kubernetes.io/enforce'] == 'privileged'
    assert set(run['Job']) == {'nccl-workers', 'nccl-launcher'} and set(run['Service']) == {'nccl-workers'}
    assert set(run['ConfigMap']) >= {'nccl-scripts'} and 'nccl-ssh' in run['Secret']
    assert run['Secret']['nccl-ssh']['data']['authorized_keys']     # the run's own key pair
    workers = [p for p in run['Pod'].values() if p['metadata']['labels'].get('gpu-tray.cluster/nccl-role') == 'worker']
    assert len(workers) == 2
    for pod in workers:
        assert pod['metadata']['annotations']['k8s.v1.cni.cncf.io/networks'] == NETWORKS
        limits = pod['spec']['containers'][0]['resources']['limits']
        assert limits == dict([('nvidia.com/gpu', '4')] + [(rail, '1') for rail in RAILS])
    # bound by the simulated scheduler to the two trays that advertise the rails, one worker each (cp01 has none)
    assert sorted(p['spec']['nodeName'] for p in workers) == ['tray01', 'tray02']
    launcher = [p for p in run['Pod'].values() if p['metadata']['labels'].get('gpu-tray.cluster/nccl-role') == 'launcher']
    assert len(launcher) == 1 and launcher[0]['spec'].get('nodeName')
    assert 'tray01' in ' '.join(net['extra']['details']) and 'namespace %s removed' % runs[0] in net['extra']['details']
    # the lock: the expired one taken over, held by this run while it ran, released afterwards
    assert [lease['spec']['holderIdentity'].split('@')[0] for lease in seen.leases][-1] == runs[0].split('net-', 1)[1]
    assert seen.leases[0]['spec']['holderIdentity'] == 'old-run@elsewhere'
    assert _no_lock(api)
    # everything of this run and of the dead one is gone
    assert _gone(api, runs[0]) and _gone(api, 'gpu-tray-nccl-net-old-run')
    # and the report says what the dead run left and that it was removed (issue 55)
    left = checks['nccl-leftovers']
    assert left['status'] == 'passed' and left['message'] == (
        'An earlier NCCL run ended without cleaning up: its run lock (held by old-run@elsewhere) had expired and was '
        'taken over; removed its namespace(s) gpu-tray-nccl-net-old-run.'), left


def test_a_failed_launcher_and_a_timeout_fail_and_are_cleaned_up(api, kubeconfig, tmp_path):
    # (a launcher that ends well with a log that fails the judgement - the TCP fallback - takes the path of the
    # passing run above up to the judgement, which tests/unit/plugins/module_utils/test_nccl.py and run_check's unit
    # tests hold on the same log: one ansible-playbook run less here)
    cases = {
        # the launcher fails (exit 1); what it printed is still judged
        'registry.test/nccl-tests:broken': ('vr200_truncated.log', 120),
        # the workers and the launcher never end
        'registry.test/nccl-tests:hang': ('vr200_nvls_ib_mpirun.log', 30),
    }
    results = {}
    with container_logs(dict((image, os.path.join(NCCL_LOGS, log)) for image, (log, _t) in cases.items())):
        for image, (_log, timeout) in cases.items():
            evidence = tmp_path / image.rsplit(':', 1)[1]
            with Observer(api) as seen:
                res = _validate(kubeconfig, str(tmp_path), dict(
                    BASE, validate_nccl_variants=['net'], validate_nccl_image=image, validate_nccl_timeout=timeout,
                    validate_evidence_dir=str(evidence)))
            assert res.returncode != 0 and 'Validation of %s failed in performance' % NVKE in res.stdout, res.stdout[-3000:]
            checks = _performance(evidence)
            assert 'nccl-all-reduce-bw-net' in checks, checks
            results[image] = (checks['nccl-all-reduce-bw-net'], seen)
    broken, seen = results['registry.test/nccl-tests:broken']
    assert broken['status'] == 'failed' and broken['message'].startswith('The NCCL net launcher failed (')
    assert 'truncated' in broken['message']
    assert any(line.startswith('launcher log: ') for line in broken['extra']['details'])
    hang, seen = results['registry.test/nccl-tests:hang']
    assert hang['status'] == 'failed' and hang['message'].startswith('The NCCL net run did not finish in 30 s')
    assert any(line.startswith('launcher nccl-launcher-') and 'Running on' in line for line in hang['extra']['details'])
    for _check, seen in results.values():
        assert len(seen.seen) == 1, sorted(seen.seen)
        namespace = list(seen.seen)[0]
        assert seen.seen[namespace].get('Pod'), 'no pod of %s was seen' % namespace
        assert _gone(api, namespace)
    assert _no_lock(api)


def test_a_held_lock_keeps_the_run_from_starting(api, kubeconfig, tmp_path):
    _lease(api, 'other-run@ctl', 0, 3600)
    try:
        with Observer(api) as seen:
            res = _validate(kubeconfig, str(tmp_path), dict(BASE, validate_nccl_variants=['net'],
                                                            validate_evidence_dir=str(tmp_path / 'evidence')))
        net = _performance(tmp_path / 'evidence')['nccl-all-reduce-bw-net']
        assert res.returncode != 0 and net['status'] == 'failed'
        assert net['message'].startswith('Not run: another NCCL run (other-run@ctl) holds Lease default/%s until' % LOCK)
        assert seen.seen == {}                                      # nothing was launched
        lease = client.CoordinationV1Api(api).read_namespaced_lease(LOCK, 'default')
        assert lease.spec.holder_identity == 'other-run@ctl'        # and the other run's lock is untouched
    finally:
        client.CoordinationV1Api(api).delete_namespaced_lease(LOCK, 'default')


def _tray_root(base, name, params):
    """A tray's /proc and /sys as the validate role reads them (only the GPU driver's files)."""
    proc = base / name / 'proc' / 'driver' / 'nvidia'
    proc.mkdir(parents=True)
    shutil.copy(os.path.join(NVIDIA, params), str(proc / 'params'))
    shutil.copy(os.path.join(NVIDIA, 'version-r580'), str(proc / 'version'))
    (base / name / 'sys').mkdir()
    return {'ansible_connection': 'local', 'ansible_python_interpreter': sys.executable,
            'gpu_tray_proc_root': str(base / name / 'proc'), 'gpu_tray_sysfs_root': str(base / name / 'sys')}


def test_net_preflight_on_the_trays_and_an_nvls_run_that_cannot_start(api, kubeconfig, tmp_path):
    trays = {'tray01': _tray_root(tmp_path, 'tray01', 'params-r580-override'),
             'tray02': _tray_root(tmp_path, 'tray02', 'params-r580-default')}
    inventory = tmp_path / 'hosts.yml'
    inventory.write_text(json.dumps({'all': {'children': {'gpu_trays': {'hosts': trays}}}}))
    with Observer(api) as seen:
        res = _validate(kubeconfig, str(tmp_path), dict(BASE, validate_nccl_variants=['nvls', 'net'],
                                                        validate_evidence_dir=str(tmp_path / 'evidence')),
                        inventory=str(inventory))
    assert res.returncode != 0, res.stdout[-3000:]
    checks = _performance(tmp_path / 'evidence')
    preflight = checks['nccl-net-preflight']
    assert preflight['status'] == 'failed' and preflight['message'].startswith(
        '1 of 2 trays cannot run the NET benchmark: tray02: driver 580.173.02 runs with GrdmaPciTopoCheckOverride: 0')
    assert checks['nccl-all-reduce-bw-net']['status'] == 'skipped'
    # ComputeDomain (NVIDIA DRA driver) is not served by the 1.20 server: the nvls run fails to start, is removed
    nvls = checks['nccl-all-reduce-bw-nvls']
    assert nvls['status'] == 'failed' and nvls['message'].startswith('The NCCL nvls run could not start in gpu-tray-nccl-nvls-')
    assert 'ComputeDomain' in nvls['message']
    assert len(seen.seen) == 1 and _gone(api, list(seen.seen)[0])
    assert _no_lock(api)


def _drop_empty_defaults(node):
    """Remove every `default: ""` from a schema in place; returns how many. A list-map key (x-kubernetes-list-map-keys)
    must have a default or be required: one whose default goes becomes required (a merge key is always set)."""
    count = 0
    if isinstance(node, dict):
        items = node.get('items') if isinstance(node.get('items'), dict) else None
        for key in node.get('x-kubernetes-list-map-keys') or []:
            prop = ((items or {}).get('properties') or {}).get(key) or {}
            if prop.get('default') == '':
                del prop['default']
                items.setdefault('required', [])
                if key not in items['required']:
                    items['required'].append(key)
                count += 1
        if node.get('default') == '':
            del node['default']
            count += 1
        for value in node.values():
            count += _drop_empty_defaults(value)
    elif isinstance(node, list):
        for value in node:
            count += _drop_empty_defaults(value)
    return count


@pytest.fixture
def trainer_crds(api):
    """The real Kubeflow Trainer v2.2.0 CRDs (the upstream data, upstreamdata.py) served by the test cluster, removed
    after."""
    ext = client.ApiextensionsV1Api(api)
    names = []
    for name in ('trainjobs', 'trainingruntimes'):
        with open(upstream_crd('kubeflow-trainer', name)) as fh:
            crd = yaml.safe_load(fh)
        # kube-apiserver 1.20 reads an empty-string default (the `name` of secret/configMap references in the
        # embedded pod schema) as null and rejects the CRD; newer servers take it. Only those are dropped (a list-map
        # key among them becomes required, which 1.20 demands of a key without a default).
        assert _drop_empty_defaults(crd) > 0
        try:
            ext.create_custom_resource_definition(crd)
        except ApiException as exc:
            if exc.status != 409:       # left by an interrupted run: served already
                raise
        names.append(crd['metadata']['name'])
    deadline = time.time() + 60
    while time.time() < deadline:
        conditions = [dict((c.type, c.status) for c in ext.read_custom_resource_definition(n).status.conditions or [])
                      for n in names]
        if all(c.get('Established') == 'True' for c in conditions):
            break
        time.sleep(1)
    else:
        pytest.fail('the Kubeflow Trainer CRDs were not Established in 60 s: %s' % conditions)
    yield names
    for name in names:
        ext.delete_custom_resource_definition(name)


def test_kubeflow_recipe_launches_a_trainjob_served_unpruned_and_cleans_up_after_the_timeout(api, kubeconfig, tmp_path,
                                                                                             trainer_crds):
    # no Trainer controller runs here: the TrainJob never makes a launcher, the run times out and is removed
    evidence = tmp_path / 'evidence'
    with Observer(api) as seen:
        res = _validate(kubeconfig, str(tmp_path), dict(BASE, validate_recipe='gb200-nvke-ubuntu-training-kubeflow',
                                                        validate_nccl_variants=['net'], validate_nccl_timeout=30,
                                                        validate_evidence_dir=str(evidence)))
    assert res.returncode != 0, res.stdout[-3000:]
    net = _performance(evidence)['nccl-all-reduce-bw-net']
    assert net['status'] == 'failed' and net['message'].startswith('The NCCL net run did not finish in 30 s')
    assert 'the launcher never ended' in net['message'] and 'trainjob' in net['extra']['details'][0]
    assert len(seen.seen) == 1
    namespace, run = list(seen.seen.items())[0]
    # the trainer makes the SSH keys itself: no Jobs and no key Secret of ours (1.20 adds a service-account token)
    assert set(run) >= {'TrainingRuntime', 'TrainJob'} and 'Job' not in run and 'nccl-ssh' not in run.get('Secret', {})
    trainjob = run['TrainJob']['nccl-all-reduce-tj']['spec']
    assert trainjob['runtimeRef'] == {'apiGroup': 'trainer.kubeflow.org', 'kind': 'TrainingRuntime',
                                      'name': 'nccl-all-reduce-runtime'}
    assert trainjob['trainer']['numNodes'] == 2
    runtime = run['TrainingRuntime']['nccl-all-reduce-runtime']['spec']
    assert runtime['mlPolicy']['mpi']['numProcPerNode'] == 4
    node = [j for j in runtime['template']['spec']['replicatedJobs'] if j['name'] == 'node'][0]
    pod = node['template']['spec']['template']
    # what the real CRD's structural schema keeps: the NVKE pod shape is not pruned by the server
    assert pod['metadata']['annotations']['k8s.v1.cni.cncf.io/networks'] == NETWORKS
    assert pod['spec']['containers'][0]['resources']['limits'] == dict([('nvidia.com/gpu', 4)] + [(r, 1) for r in RAILS])
    assert pod['spec']['affinity']['podAntiAffinity']
    assert _gone(api, namespace) and _no_lock(api)
