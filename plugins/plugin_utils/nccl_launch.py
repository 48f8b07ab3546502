# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL benchmark runs of the validate role's performance phase: the Kubernetes objects, the run lock and the
preflight rules, as pure functions (filters nccl_run_plan, nccl_lease, nccl_net_preflight; the role does the API
calls with kubernetes.core).

One run is one variant of ``all_reduce_perf`` (nccl-tests, MPI build) in a namespace of its own,
``gpu-tray-nccl-<variant>-<run id>``, removed with everything in it when the run ends (AICR runs each variant as a
TrainJob in ``aicr-nccl-perf-<variant>-<run id>``):

* ``nvls`` - inside one NVLink domain: the workers get an IMEX channel through the NVIDIA DRA driver (a
  ComputeDomain whose ``channel.resourceClaimTemplate`` the driver creates in the namespace, and a pod
  ``resourceClaims`` entry naming it) and NCCL runs with NVLink SHARP on (``NCCL_NVLS_ENABLE=1``);
* ``net`` - across NVLink domains over the InfiniBand rails: NVLS and multi-node NVLink off
  (``NCCL_NVLS_ENABLE=0``, ``NCCL_MNNVL_ENABLE=0``), NCCL's built-in IB transport (``NCCL_NET_PLUGIN=none``). On
  NVKE GB200 every worker takes one SR-IOV VF per rail (``nvidia.com/sriov_resource_rail_<n>: 1``) and the
  rail's network attachment (``k8s.v1.cni.cncf.io/networks: default/sriov-network-rail-<n>,...``), the pod shape
  of the NVKE guide; each rank's ``NCCL_IB_HCA`` names exactly the RDMA devices of the VFs Multus attached to its
  pod (``rank.sh``), because VF device names (``mlx5_5`` ... ``mlx5_68``) differ per pod and per tray.

Two workload APIs:

* ``trainjob`` (recipes that install Kubeflow Trainer): a TrainingRuntime with the MPI policy (the trainer
  generates the SSH keys and the hostfile) and a TrainJob naming it;
* ``job`` (every other recipe; no operator to install or remove): an Indexed Job of workers running sshd (one
  pod per tray, stable host names through a headless Service) and a launcher Job running ``mpirun`` over SSH
  with a per-run key pair in a Secret - the shape the MPI Operator creates, with built-in objects.

The launcher waits until every worker's sshd answers, then runs the test; its log is what nccl_result judges.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import re

from shlex import quote as _shell_quote

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.evidence import name_ranges, nccl_data

_UTC = datetime.timezone.utc
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
PREFIX = 'gpu-tray-nccl'
LOCK_NAME = 'gpu-tray-nccl-run-lock'
LABEL_RUN = 'gpu-tray.cluster/nccl-run'
LABEL_VARIANT = 'gpu-tray.cluster/nccl-variant'
LABEL_ROLE = 'gpu-tray.cluster/nccl-role'
MANAGED_BY = ('app.kubernetes.io/managed-by', 'gpu_tray.cluster')
VARIANTS = ('nvls', 'net')
WORKLOADS = ('job', 'trainjob')

# names inside a run's namespace (fixed: the namespace is per run)
COMPUTE_DOMAIN = 'nccl-all-reduce-cd'
IMEX_TEMPLATE = 'nccl-all-reduce-imex'   # created by the DRA driver from the ComputeDomain's channel
IMEX_CLAIM = 'imex-channel'
SCRIPTS = 'nccl-scripts'
SSH_SECRET = 'nccl-ssh'
WORKERS = 'nccl-workers'                 # Indexed Job and headless Service (host names nccl-workers-<i>.nccl-workers)
LAUNCHER = 'nccl-launcher'
RUNTIME = 'nccl-all-reduce-runtime'
TRAINJOB = 'nccl-all-reduce-tj'
CONTAINER = 'node'                       # the Kubeflow Trainer MPI plugin mounts its SSH keys into containers named node
SCRIPT_DIR = '/etc/gpu-tray-nccl/bin'
KEY_DIR = '/etc/gpu-tray-nccl/ssh'
TRAINER_KEY_DIR = '/tmp/mpi-keys'
TRAINER_HOSTFILE = '/etc/mpi/hostfile'
TRAINER_API = 'trainer.kubeflow.org/v1alpha1'
COMPUTE_DOMAIN_API = 'resource.nvidia.com/v1beta1'
# what the image must provide (the NGC PyTorch image does: Open MPI under /usr/local/mpi, nccl-tests MPI builds
# as /usr/local/bin/<test>_mpi); sshd is installed at start when the image has none (needs a package mirror)
MPIRUN = '/usr/local/mpi/bin/mpirun'
TEST_BINARY = '/usr/local/bin/all_reduce_perf_mpi'
SSH_WAIT_TRIES = 120                     # x 5 s: the launcher gives the workers' sshd 10 minutes
DEADLINE_MARGIN = 120                    # s the Jobs / TrainJob may outlive the role's own timeout
_SIZE = re.compile(r'^[1-9][0-9]*[KMG]?$')
_RUN_ID = re.compile(r'^[a-z0-9]([a-z0-9-]*[a-z0-9])?$')
_ENV_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


class PlanError(ValueError):
    """Bad input for a run plan: the message names the option."""


# ------------------------------------------------------------------------------------------------- NCCL settings

def nccl_env(variant):
    """The NCCL environment of a variant, as (name, value) pairs in the order mpirun exports them.

    ``NCCL_DEBUG=INFO`` is what lets nccl_result see the transport (``Using network IB``) and NVLS. Bootstrap and
    MPI's own traffic stay on the pod network (``eth0``). The IB devices of a ``net`` rank are set by rank.sh.
    """
    env = [('NCCL_DEBUG', 'INFO'), ('NCCL_SOCKET_IFNAME', 'eth0'), ('NCCL_IGNORE_DISABLED_P2P', '1')]
    if variant == 'nvls':
        env += [('NCCL_NVLS_ENABLE', '1')]
    elif variant == 'net':
        env += [('NCCL_NVLS_ENABLE', '0'), ('NCCL_MNNVL_ENABLE', '0'), ('NCCL_NET_PLUGIN', 'none'),
                ('NCCL_IB_DISABLE', '0')]
    else:
        raise PlanError('variant must be one of %s, got %r' % (', '.join(VARIANTS), variant))
    return env


def rank_script():
    """rank.sh: run one rank with NCCL_IB_HCA set to the RDMA devices of the pod's secondary interfaces.

    Multus names the attachments net1, net2, ... in annotation order; each is the IPoIB netdev of one VF, and
    ``/sys/class/net/<if>/device/infiniband/`` names that VF's RDMA device. The ``=`` prefix makes NCCL match the
    names exactly (``mlx5_1`` would otherwise also select ``mlx5_10`` ...). ``eth0`` (the primary network, a
    BlueField VF on some NVKE builds) is never one of them. A pod without attachments (nvls) keeps NCCL's default.
    """
    return '\n'.join([
        '#!/bin/sh',
        '# gpu_tray.cluster: one NCCL rank; NCCL_IB_HCA = the RDMA devices of the rails attached to this pod',
        'hcas=""',
        'for dev in "${GPU_TRAY_SYSFS:-/sys}"/class/net/net[0-9]*/device/infiniband/*; do',
        '  [ -e "$dev" ] || continue',
        '  hcas="${hcas:+$hcas,}$(basename "$dev")"',
        'done',
        'if [ -n "$hcas" ]; then',
        '  export NCCL_IB_HCA="=$hcas"',
        '  echo "$(hostname): NCCL_IB_HCA=$NCCL_IB_HCA" >&2',
        'fi',
        'exec "$@"',
        '',
    ])


def worker_script():
    """worker.sh: sshd in the foreground, accepting the run's key (the launcher's mpirun starts the ranks)."""
    return '\n'.join([
        '#!/bin/sh',
        '# gpu_tray.cluster: an NCCL worker - sshd for the launcher\'s mpirun',
        'set -eu',
        'if [ ! -x /usr/sbin/sshd ]; then',
        '  echo "the image has no /usr/sbin/sshd: installing openssh-server (an air-gapped image must ship it)" >&2',
        '  apt-get update && apt-get install -y --no-install-recommends openssh-server',
        'fi',
        'mkdir -p /run/sshd /root/.ssh',
        'chmod 0755 /run/sshd',
        'chmod 0700 /root/.ssh',
        'cp "$SSH_KEYS/authorized_keys" /root/.ssh/authorized_keys',
        'chmod 0600 /root/.ssh/authorized_keys',
        'exec /usr/sbin/sshd -De',
        '',
    ])


def mpirun_argv(variant, spec):
    """The launcher's mpirun command line (a list) for ``spec`` (see run_plan)."""
    ranks = spec['trays'] * spec['gpus_per_tray']
    argv = [MPIRUN, '--allow-run-as-root', '-np', str(ranks), '--hostfile', '$HOSTFILE',
            '--mca', 'plm_rsh_args', '-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null '
                                     '-o ConnectionAttempts=10',
            '--mca', 'btl', '^openib', '--mca', 'btl_tcp_if_include', 'eth0', '--mca', 'oob_tcp_if_include', 'eth0',
            '--bind-to', 'none', '-x', 'LD_LIBRARY_PATH']
    for name, value in nccl_env(variant) + sorted((spec.get('extra_env') or {}).items()):
        argv += ['-x', '%s=%s' % (name, value)]
    argv += ['/bin/sh', SCRIPT_DIR + '/rank.sh', TEST_BINARY, '-b', spec['min_bytes'], '-e', spec['max_bytes'],
             '-f', str(spec['step_factor']), '-g', '1']
    return argv


def launcher_script(variant, spec):
    """launch.sh: wait until every worker's sshd answers (the hostfile's hosts), then run mpirun once."""
    argv = mpirun_argv(variant, spec)
    command = ' '.join('"$HOSTFILE"' if arg == '$HOSTFILE' else _shell_quote(arg) for arg in argv)
    return '\n'.join([
        '#!/bin/sh',
        '# gpu_tray.cluster: the NCCL launcher - wait for the workers\' sshd, then run all_reduce_perf once',
        'set -eu',
        'mkdir -p /root/.ssh',
        'chmod 0700 /root/.ssh',
        'for key in "$SSH_KEYS"/id_*; do',
        '  case "$key" in *.pub) continue ;; esac',
        '  cp "$key" /root/.ssh/ && chmod 0600 "/root/.ssh/$(basename "$key")"',
        'done',
        'for host in $(awk \'{print $1}\' "$HOSTFILE"); do',
        '  tries=0',
        '  until ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes '
        '-o ConnectTimeout=5 "$host" true 2>/dev/null; do',
        '    tries=$((tries + 1))',
        '    if [ "$tries" -ge %d ]; then echo "worker $host: sshd did not answer in %d s" >&2; exit 1; fi'
        % (SSH_WAIT_TRIES, SSH_WAIT_TRIES * 5),
        '    sleep 5',
        '  done',
        'done',
        'echo "workers ready: $(awk \'{print $1}\' "$HOSTFILE" | paste -sd, -)"',
        'exec ' + command,
        '',
    ])


# ------------------------------------------------------------------------------------------------- objects

def run_namespace(variant, run_id):
    """``gpu-tray-nccl-<variant>-<run id>``; PlanError when it is no DNS label."""
    name = '%s-%s-%s' % (PREFIX, variant, run_id)
    if not _RUN_ID.match(run_id or '') or len(name) > 63:
        raise PlanError('run_id %r makes namespace %r, which is not a DNS label (lower-case letters, digits and '
                        '"-", at most 63 characters)' % (run_id, name))
    return name


def _labels(spec, variant, role=None):
    labels = {MANAGED_BY[0]: MANAGED_BY[1], LABEL_RUN: spec['run_id'], LABEL_VARIANT: variant}
    if role:
        labels[LABEL_ROLE] = role
    return labels


def _meta(name, namespace, labels):
    return {'name': name, 'namespace': namespace, 'labels': dict(labels)}


def net_attachments(rails):
    """The ``k8s.v1.cni.cncf.io/networks`` value for the rails, in rail order."""
    return ','.join(rail['network'] for rail in rails)


def _worker_resources(variant, spec):
    limits = {'nvidia.com/gpu': spec['gpus_per_tray']}
    if variant == 'net':
        for rail in spec['rails']:
            limits[rail['resource']] = 1
    resources = {'limits': dict(limits), 'requests': dict(limits)}
    if variant == 'nvls':
        resources['claims'] = [{'name': IMEX_CLAIM}]
    return resources


def _container(spec, name, script, env, resources, probe=False):
    container = {
        'name': name,
        'image': spec['image'],
        'imagePullPolicy': 'IfNotPresent',
        'command': ['/bin/sh', SCRIPT_DIR + '/' + script],
        'env': [{'name': key, 'value': value} for key, value in env],
        'resources': resources,
        'volumeMounts': [{'name': 'scripts', 'mountPath': SCRIPT_DIR, 'readOnly': True}],
    }
    if probe:
        container['ports'] = [{'name': 'ssh', 'containerPort': 22, 'protocol': 'TCP'}]
        # ready once sshd listens (sshd may be installed first)
        container['readinessProbe'] = {'tcpSocket': {'port': 22}, 'periodSeconds': 5, 'failureThreshold': 120}
        container['securityContext'] = {'capabilities': {'add': ['IPC_LOCK']}}   # RDMA memory registration
        container['volumeMounts'].append({'name': 'dshm', 'mountPath': '/dev/shm'})
    return container


def _worker_pod_spec(variant, spec, key_dir, extra_volumes=()):
    pod = {
        'restartPolicy': 'Never',
        'automountServiceAccountToken': False,
        # one worker per tray: the NCCL ranks of a tray share its NVLink and its rails
        'affinity': {'podAntiAffinity': {'requiredDuringSchedulingIgnoredDuringExecution': [{
            'topologyKey': 'kubernetes.io/hostname',
            'labelSelector': {'matchLabels': {LABEL_RUN: spec['run_id'], LABEL_ROLE: 'worker'}}}]}},
        'containers': [_container(spec, CONTAINER, 'worker.sh', [('SSH_KEYS', key_dir)],
                                  _worker_resources(variant, spec), probe=True)],
        'volumes': [{'name': 'scripts', 'configMap': {'name': SCRIPTS, 'defaultMode': 0o555}},
                    {'name': 'dshm', 'emptyDir': {'medium': 'Memory'}}] + list(extra_volumes),
    }
    if spec.get('node_selector'):
        pod['nodeSelector'] = dict(spec['node_selector'])
    if spec.get('tolerations'):
        pod['tolerations'] = list(spec['tolerations'])
    if variant == 'nvls':
        pod['resourceClaims'] = [{'name': IMEX_CLAIM, 'resourceClaimTemplateName': IMEX_TEMPLATE}]
    return pod


def _pod_annotations(variant, spec):
    if variant == 'net' and spec['rails']:
        return {'k8s.v1.cni.cncf.io/networks': net_attachments(spec['rails'])}
    return {}


def _launcher_pod_spec(spec, key_dir, hostfile, extra_volumes=()):
    env = [('SSH_KEYS', key_dir), ('HOSTFILE', hostfile),
           ('LD_LIBRARY_PATH', '/usr/local/nvidia/lib64:/usr/local/cuda/lib64')]
    pod = {
        'restartPolicy': 'Never',
        'automountServiceAccountToken': False,
        'containers': [_container(spec, CONTAINER, 'launch.sh', env, {'requests': {'cpu': '500m', 'memory': '256Mi'},
                                                                      'limits': {'cpu': '2', 'memory': '1Gi'}})],
        'volumes': [{'name': 'scripts', 'configMap': {'name': SCRIPTS, 'defaultMode': 0o555}}] + list(extra_volumes),
    }
    if spec.get('tolerations'):
        pod['tolerations'] = list(spec['tolerations'])
    return pod


def deadline(spec):
    """The workload's own ``activeDeadlineSeconds``: a safety net for a run whose role died. The role's wait
    (``timeout``) ends first, so it still sees the pods as they were stuck, then removes the namespace."""
    return spec['timeout'] + DEADLINE_MARGIN


def hostfile(spec):
    """The Open MPI hostfile of the job workload: the Indexed Job's stable host names, one slot per GPU."""
    return ''.join('%s-%d.%s slots=%d\n' % (WORKERS, index, WORKERS, spec['gpus_per_tray'])
                   for index in range(spec['trays']))


def _check_spec(spec):
    out = dict(spec)
    for key in ('run_id', 'variant', 'workload', 'image', 'trays', 'gpus_per_tray', 'timeout'):
        if out.get(key) in (None, ''):
            raise PlanError('option %s is required' % key)
    if out['variant'] not in VARIANTS:
        raise PlanError('variant must be one of %s, got %r' % (', '.join(VARIANTS), out['variant']))
    if out['workload'] not in WORKLOADS:
        raise PlanError('workload must be one of %s, got %r' % (', '.join(WORKLOADS), out['workload']))
    out['step_factor'] = out.get('step_factor') or 2
    for key, low in (('trays', 2), ('gpus_per_tray', 1), ('timeout', 30), ('step_factor', 2)):
        try:
            out[key] = int(out[key])
        except (TypeError, ValueError):
            raise PlanError('option %s must be an integer, got %r' % (key, out[key]))
        if out[key] < low:
            raise PlanError('option %s must be at least %d, got %d%s' % (
                key, low, out[key], ' (a fabric test needs two trays)' if key == 'trays' else ''))
    for key, default in (('min_bytes', '1K'), ('max_bytes', '16G')):
        out[key] = str(out.get(key) or default)
        if not _SIZE.match(out[key]):
            raise PlanError('option %s must be a size all_reduce_perf takes (8, 1K, 256M, 16G), got %r'
                            % (key, out[key]))
    if size_bytes(out['min_bytes']) > size_bytes(out['max_bytes']):
        raise PlanError('option min_bytes (%s) is above max_bytes (%s)' % (out['min_bytes'], out['max_bytes']))
    rails = out.get('rails') or []
    for rail in rails:
        if not isinstance(rail, dict) or not rail.get('resource') or not rail.get('network'):
            raise PlanError('each rail needs resource and network (nvidia.com/sriov_resource_rail_0, '
                            'default/sriov-network-rail-0), got %r' % (rail,))
    out['rails'] = list(rails)
    for name in out.get('extra_env') or {}:
        if not _ENV_NAME.match(str(name)):
            raise PlanError('extra_env: %r is not an environment variable name' % (name,))
    return out


def size_bytes(text):
    """``1K`` -> 1024, ``16G`` -> 17179869184 (all_reduce_perf's -b/-e suffixes are binary)."""
    text = str(text)
    scale = {'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}.get(text[-1:], 1)
    return int(text[:-1] if scale > 1 else text) * scale


def run_plan(spec):
    """Everything one run creates, in order, and what the role waits for.

    ``spec``: ``run_id``, ``variant`` (nvls/net), ``workload`` (job/trainjob), ``image``, ``trays``,
    ``gpus_per_tray``, ``timeout`` (s), ``min_bytes``/``max_bytes``/``step_factor`` (-b/-e/-f), ``rails`` (net:
    ``[{resource, network}]``, none on a recipe without SR-IOV rails), ``node_selector``, ``tolerations``,
    ``extra_env``, and for ``job`` ``ssh_private_key``/``ssh_public_key``.

    Returns ``namespace``; ``prepare`` (objects created first: the Namespace, the ComputeDomain of nvls, the
    scripts, the job's Secret and Service); ``wait_for`` (objects that must exist before the workload: the IMEX
    ResourceClaimTemplate the DRA driver makes from the ComputeDomain); ``workload`` (the Jobs, or the
    TrainingRuntime and TrainJob); ``capacity`` (with ``nodes``, the Node objects: ``eligible`` names, ``enough``
    and ``message``, see eligible_nodes; else None); ``launcher`` (how to find the launcher pod and tell its end); ``workers``
    (the worker pods' label selector) and ``summary`` (shape facts for the evidence).
    """
    spec = _check_spec(spec)
    variant, workload = spec['variant'], spec['workload']
    namespace = run_namespace(variant, spec['run_id'])
    if workload == 'job' and not (spec.get('ssh_private_key') and spec.get('ssh_public_key')):
        raise PlanError('workload job needs ssh_private_key and ssh_public_key (the run\'s key pair)')
    ns_labels = _labels(spec, variant)
    # the workers need IPC_LOCK (RDMA memory registration), which the baseline Pod Security level refuses
    ns_labels['pod-security.kubernetes.io/enforce'] = 'privileged'
    prepare = [{'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': namespace, 'labels': ns_labels}}]
    wait_for = []
    if variant == 'nvls':
        prepare.append({
            'apiVersion': COMPUTE_DOMAIN_API, 'kind': 'ComputeDomain',
            'metadata': _meta(COMPUTE_DOMAIN, namespace, _labels(spec, variant)),
            'spec': {'numNodes': 0, 'channel': {'resourceClaimTemplate': {'name': IMEX_TEMPLATE}}},
        })
        wait_for.append({'api_version': 'resource.k8s.io/v1', 'kind': 'ResourceClaimTemplate', 'name': IMEX_TEMPLATE,
                         'namespace': namespace,
                         'why': 'the NVIDIA DRA driver creates it from ComputeDomain %s' % COMPUTE_DOMAIN})
    scripts = {'rank.sh': rank_script(), 'worker.sh': worker_script(), 'launch.sh': launcher_script(variant, spec)}
    if workload == 'job':
        scripts['hostfile'] = hostfile(spec)
    prepare.append({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': _meta(SCRIPTS, namespace, _labels(spec, variant)),
                    'data': scripts})
    annotations = _pod_annotations(variant, spec)
    if workload == 'job':
        objects, launcher = _job_workload(spec, variant, namespace, annotations, prepare)
    else:
        objects, launcher = _trainjob_workload(spec, variant, namespace, annotations)
    capacity = None
    if spec.get('nodes') is not None:
        capacity = eligible_nodes(spec['nodes'], variant, spec)
        capacity['enough'] = len(capacity['eligible']) >= spec['trays']
    return {
        'namespace': namespace,
        'capacity': capacity,
        'prepare': prepare,
        'wait_for': wait_for,
        'workload': objects,
        'launcher': launcher,
        'workers': {'label_selectors': ['%s=%s' % (LABEL_RUN, spec['run_id']), '%s=worker' % LABEL_ROLE]},
        'summary': {
            'variant': variant, 'workload': workload, 'namespace': namespace, 'image': spec['image'],
            'trays': spec['trays'], 'gpus_per_tray': spec['gpus_per_tray'], 'ranks': spec['trays'] * spec['gpus_per_tray'],
            'sizes': '-b %s -e %s -f %d' % (spec['min_bytes'], spec['max_bytes'], spec['step_factor']),
            'worker_resources': _worker_resources(variant, spec),
            'worker_annotations': annotations,
            'nccl_env': ['%s=%s' % pair for pair in nccl_env(variant)],
        },
    }


def _job_workload(spec, variant, namespace, annotations, prepare):
    prepare.append({'apiVersion': 'v1', 'kind': 'Secret', 'type': 'Opaque',
                    'metadata': _meta(SSH_SECRET, namespace, _labels(spec, variant)),
                    'stringData': {'id_ed25519': spec['ssh_private_key'].rstrip('\n') + '\n',
                                   'authorized_keys': spec['ssh_public_key'].rstrip('\n') + '\n'}})
    prepare.append({'apiVersion': 'v1', 'kind': 'Service',
                    'metadata': _meta(WORKERS, namespace, _labels(spec, variant)),
                    'spec': {'clusterIP': 'None', 'publishNotReadyAddresses': True,
                             'selector': {LABEL_RUN: spec['run_id'], LABEL_ROLE: 'worker'},
                             'ports': [{'name': 'ssh', 'port': 22, 'targetPort': 22, 'protocol': 'TCP'}]}})
    key_volume = {'name': 'ssh', 'secret': {'secretName': SSH_SECRET, 'defaultMode': 0o400}}
    key_mount = {'name': 'ssh', 'mountPath': KEY_DIR, 'readOnly': True}
    worker_pod = _worker_pod_spec(variant, spec, KEY_DIR, [key_volume])
    worker_pod['subdomain'] = WORKERS
    worker_pod['containers'][0]['volumeMounts'].append(key_mount)
    worker_meta = {'labels': _labels(spec, variant, 'worker')}
    if annotations:
        worker_meta['annotations'] = dict(annotations)
    workers = {
        'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': _meta(WORKERS, namespace, _labels(spec, variant, 'worker')),
        'spec': {'completionMode': 'Indexed', 'completions': spec['trays'], 'parallelism': spec['trays'],
                 'backoffLimit': 0, 'activeDeadlineSeconds': deadline(spec),
                 'template': {'metadata': worker_meta, 'spec': worker_pod}},
    }
    launcher_pod = _launcher_pod_spec(spec, KEY_DIR, SCRIPT_DIR + '/hostfile', [key_volume])
    launcher_pod['containers'][0]['volumeMounts'].append(key_mount)
    launcher = {
        'apiVersion': 'batch/v1', 'kind': 'Job', 'metadata': _meta(LAUNCHER, namespace, _labels(spec, variant, 'launcher')),
        'spec': {'backoffLimit': 0, 'activeDeadlineSeconds': deadline(spec),
                 'template': {'metadata': {'labels': _labels(spec, variant, 'launcher')}, 'spec': launcher_pod}},
    }
    return [workers, launcher], {
        'api_version': 'batch/v1', 'kind': 'Job', 'name': LAUNCHER, 'namespace': namespace,
        'label_selectors': ['%s=%s' % (LABEL_RUN, spec['run_id']), '%s=launcher' % LABEL_ROLE],
        'container': CONTAINER,
    }


def _trainjob_workload(spec, variant, namespace, annotations):
    worker_pod = _worker_pod_spec(variant, spec, TRAINER_KEY_DIR)
    worker_meta = {'labels': _labels(spec, variant, 'worker')}
    if annotations:
        worker_meta['annotations'] = dict(annotations)
    launcher_pod = _launcher_pod_spec(spec, TRAINER_KEY_DIR, TRAINER_HOSTFILE)
    runtime = {
        'apiVersion': TRAINER_API, 'kind': 'TrainingRuntime',
        'metadata': _meta(RUNTIME, namespace, dict(_labels(spec, variant), **{'trainer.kubeflow.org/framework': 'mpi'})),
        'spec': {
            'mlPolicy': {'numNodes': spec['trays'],
                         'mpi': {'mpiImplementation': 'OpenMPI', 'numProcPerNode': spec['gpus_per_tray'],
                                 'runLauncherAsNode': False, 'sshAuthMountPath': TRAINER_KEY_DIR}},
            'template': {'spec': {
                'network': {'enableDNSHostnames': True, 'publishNotReadyAddresses': True},
                # JobSet: a dependsOn target precedes the job that depends on it; the launcher also waits for sshd
                'replicatedJobs': [
                    {'name': 'node', 'template': {
                        'metadata': {'labels': _labels(spec, variant, 'worker')},
                        'spec': {'backoffLimit': 0, 'template': {'metadata': worker_meta, 'spec': worker_pod}}}},
                    {'name': 'launcher', 'replicas': 1, 'dependsOn': [{'name': 'node', 'status': 'Ready'}],
                     'template': {
                         'metadata': {'labels': _labels(spec, variant, 'launcher')},
                         'spec': {'backoffLimit': 0, 'template': {
                             'metadata': {'labels': _labels(spec, variant, 'launcher')}, 'spec': launcher_pod}}}},
                ],
                'successPolicy': {'operator': 'All', 'targetReplicatedJobs': ['launcher']},
            }},
        },
    }
    trainjob = {
        'apiVersion': TRAINER_API, 'kind': 'TrainJob', 'metadata': _meta(TRAINJOB, namespace, _labels(spec, variant)),
        'spec': {'runtimeRef': {'apiGroup': 'trainer.kubeflow.org', 'kind': 'TrainingRuntime', 'name': RUNTIME},
                 'trainer': {'numNodes': spec['trays']},
                 'activeDeadlineSeconds': deadline(spec)},
    }
    return [runtime, trainjob], {
        'api_version': TRAINER_API, 'kind': 'TrainJob', 'name': TRAINJOB, 'namespace': namespace,
        'label_selectors': ['%s=%s' % (LABEL_RUN, spec['run_id']), '%s=launcher' % LABEL_ROLE],
        'container': CONTAINER,
    }


def workload_state(obj):
    """``succeeded``, ``failed``, ``timeout`` (its own deadline passed) or ``running`` for the launcher Job or the
    TrainJob (its conditions), with the reason when it ended badly (``BackoffLimitExceeded``, the TrainJob's
    message)."""
    if not obj:
        return {'state': 'missing', 'reason': 'the object does not exist'}
    status = obj.get('status') or {}
    conditions = dict((c.get('type'), c) for c in status.get('conditions') or [] if c.get('status') == 'True')
    for kind in ('Failed', 'Complete'):
        if kind in conditions:
            cond = conditions[kind]
            if kind == 'Failed' and cond.get('reason') == 'DeadlineExceeded':
                return {'state': 'timeout', 'reason': ': '.join(p for p in (cond.get('reason'), cond.get('message')) if p)}
            return {'state': 'failed' if kind == 'Failed' else 'succeeded',
                    'reason': ': '.join(part for part in (cond.get('reason'), cond.get('message')) if part)}
    if obj.get('kind') == 'Job':
        if status.get('failed'):
            return {'state': 'failed', 'reason': '%d launcher pod(s) failed' % status['failed']}
        if status.get('succeeded'):
            return {'state': 'succeeded', 'reason': ''}
    return {'state': 'running', 'reason': ''}


def pod_findings(pods):
    """One line per pod of a run: where it runs and, when it is stuck, why (the scheduler's or kubelet's words)."""
    lines = []
    for pod in sorted(pods or [], key=lambda p: p.get('metadata', {}).get('name', '')):
        meta, status = pod.get('metadata') or {}, pod.get('status') or {}
        role = (meta.get('labels') or {}).get(LABEL_ROLE, 'pod')
        node = (pod.get('spec') or {}).get('nodeName')
        line = '%s %s: %s on %s' % (role, meta.get('name'), status.get('phase') or 'Pending', node or '(not scheduled)')
        for cond in status.get('conditions') or []:
            if cond.get('type') == 'PodScheduled' and cond.get('status') == 'False':
                line += ' - %s: %s' % (cond.get('reason'), cond.get('message'))
        for cstat in (status.get('initContainerStatuses') or []) + (status.get('containerStatuses') or []):
            state = cstat.get('state') or {}
            if 'waiting' in state and state['waiting'].get('reason') not in (None, 'ContainerCreating', 'PodInitializing'):
                line += ' - %s %s' % (cstat.get('name'), state['waiting'].get('reason'))
            if 'terminated' in state and state['terminated'].get('exitCode'):
                line += ' - %s exited %s' % (cstat.get('name'), state['terminated'].get('exitCode'))
        lines.append(line)
    return lines


# ------------------------------------------------------------------------------------------------- the run lock

def micro_time(epoch):
    """A Lease's MicroTime (RFC 3339 with microseconds, UTC)."""
    return datetime.datetime.fromtimestamp(float(epoch), _UTC).strftime('%Y-%m-%dT%H:%M:%S.%fZ')


def parse_time(text):
    """RFC 3339 (with or without fraction) -> epoch seconds; None when empty or unreadable."""
    if not text:
        return None
    match = re.match(r'^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$', str(text))
    if not match:
        return None
    base = datetime.datetime.strptime(match.group(1), '%Y-%m-%dT%H:%M:%S').replace(tzinfo=_UTC)
    epoch = (base - _EPOCH).total_seconds()
    if match.group(2):
        epoch += float('0.' + match.group(2))
    zone = match.group(3)
    if zone != 'Z':
        sign = 1 if zone[0] == '+' else -1
        epoch -= sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    return epoch


def lease_decision(lease, holder, duration, now, namespace, name=LOCK_NAME):
    """Whether this run may take the lock, and the Lease to write.

    ``lease``: the Lease as read (None or {} when there is none). A lease held by someone else is ``held`` until
    ``renewTime`` (else ``acquireTime``) + ``leaseDurationSeconds`` has passed, then ``expired`` (a run that died
    without cleaning up: it may be taken over). Returns ``state`` (free, ours, expired, held), ``holder``,
    ``expires`` (RFC 3339), ``message`` and ``body`` (the Lease this run writes - with the read
    ``resourceVersion`` when it replaces one, so a concurrent taker makes the write fail with a conflict).
    """
    duration = int(duration)
    if duration < 1:
        raise PlanError('the lock duration must be a positive number of seconds, got %r' % duration)
    spec = (lease or {}).get('spec') or {}
    current = spec.get('holderIdentity')
    body = {'apiVersion': 'coordination.k8s.io/v1', 'kind': 'Lease',
            'metadata': {'name': name, 'namespace': namespace,
                         'labels': {MANAGED_BY[0]: MANAGED_BY[1]}},
            'spec': {'holderIdentity': holder, 'leaseDurationSeconds': duration,
                     'acquireTime': micro_time(now), 'renewTime': micro_time(now)}}
    if not lease or not current:
        return dict(state='free', holder=None, expires=None, body=body,
                    message='no NCCL run holds Lease %s/%s' % (namespace, name))
    version = (lease.get('metadata') or {}).get('resourceVersion')
    if version:
        body['metadata']['resourceVersion'] = version
    start = parse_time(spec.get('renewTime')) or parse_time(spec.get('acquireTime'))
    held_for = int(spec.get('leaseDurationSeconds') or 0)
    expires = (start + held_for) if start is not None else None
    expires_text = micro_time(expires) if expires is not None else None
    if current == holder:
        body['spec']['acquireTime'] = spec.get('acquireTime') or body['spec']['acquireTime']
        return dict(state='ours', holder=current, expires=expires_text, body=body,
                    message='this run holds Lease %s/%s' % (namespace, name))
    if expires is None or expires <= float(now):
        return dict(state='expired', holder=current, expires=expires_text, body=body,
                    message='Lease %s/%s of %s expired at %s: taken over (that run ended without releasing it)'
                    % (namespace, name, current, expires_text or 'an unknown time'))
    return dict(state='held', holder=current, expires=expires_text, body=None,
                message='another NCCL run (%s) holds Lease %s/%s until %s: two runs would share the trays and '
                        'measure each other' % (current, namespace, name, expires_text))


# ------------------------------------------------------------------------------------------------- preflight

_PARAM_LINE = re.compile(r'^\s*(?:NVreg_)?GrdmaPciTopoCheckOverride\s*:\s*(\S+)', re.M)
_DRIVER_VERSION = re.compile(r'(?:Kernel Module|NVRM version:)[^\n]*?\s(\d{3,})\.(\d+)(?:\.(\d+))?\b')
GRDMA_LAST_BRANCH = 594       # the parameter exists up to R580 (580.173.02 pinned); R595 has it no more


def grdma_topo_override(params_text, version_text):
    """The NET run's preflight rule on one tray: GPUDirect RDMA over dma-buf with the PCIe NICs of a Grace tray
    needs ``NVreg_GrdmaPciTopoCheckOverride=1`` on the R580 driver (NVKE guide; AICR's GB200 -net preflight reads
    ``GrdmaPciTopoCheckOverride: 1`` in ``/proc/driver/nvidia/params``). The stack sets it through the
    kernel-module-params ConfigMap (``nvidia.conf``) the GPU Operator's driver container reads.

    ``params_text``: ``/proc/driver/nvidia/params`` (None when absent), ``version_text``:
    ``/proc/driver/nvidia/version`` (None when absent). Returns ``status`` (passed, failed, skipped),
    ``message``, ``driver`` (the version, or None) and ``value`` (the parameter, or None).
    """
    driver = None
    match = _DRIVER_VERSION.search(version_text or '')
    if match:
        driver = '.'.join(part for part in match.groups() if part is not None)
    if params_text is None:
        return dict(status='failed', driver=driver, value=None,
                    message='no NVIDIA driver is loaded (/proc/driver/nvidia/params is absent): the NET run needs '
                            'the GPU driver with NVreg_GrdmaPciTopoCheckOverride=1')
    found = _PARAM_LINE.search(params_text)
    value = found.group(1) if found else None
    if match and int(match.group(1)) > GRDMA_LAST_BRANCH:
        return dict(status='skipped', driver=driver, value=value,
                    message='driver %s (R%s): NVreg_GrdmaPciTopoCheckOverride is gone after R580, nothing to check'
                            % (driver, match.group(1)))
    if value == '1':
        return dict(status='passed', driver=driver, value=value,
                    message='driver %s runs with GrdmaPciTopoCheckOverride: 1' % (driver or '(version unknown)'))
    if value is None:
        return dict(status='failed', driver=driver, value=None,
                    message='driver %s has no GrdmaPciTopoCheckOverride line in /proc/driver/nvidia/params'
                            % (driver or '(version unknown)'))
    return dict(status='failed', driver=driver, value=value,
                message='driver %s runs with GrdmaPciTopoCheckOverride: %s, the NET run needs 1 (GPUDirect RDMA '
                        'over dma-buf to the PCIe NICs is refused otherwise)' % (driver or '(version unknown)', value))


def tray_driver_files(state, proc_root='/proc'):
    """(params text, version text, error) of one tray from its tray_state read (its ``files``)."""
    if not state or state.get('unreachable') or state.get('failed') or not isinstance(state.get('files'), dict):
        why = (state or {}).get('msg') or 'the tray was not read in this run'
        return None, None, why
    # the files are keyed by the paths the role asked tray_state for, spelt as the role spells them
    # (tasks/tray_read.yml: validate_proc_root ~ '/driver/nvidia/params'): '/host/proc//driver/nvidia/params' for a
    # proc_root of '/host/proc/', so the same expression finds them, whatever the spelling of proc_root
    root = proc_root or '/proc'

    def content(name):
        entry = state['files'].get('%s/driver/nvidia/%s' % (root, name)) or {}
        return entry.get('content') if entry.get('exists') else None
    return content('params'), content('version'), None


def net_preflight(trays):
    """The NET run's preflight over the GPU trays: one check (``nccl-net-preflight``) with a line per tray.

    ``trays``: tray name -> ``{'state': tray_state result, 'proc_root': ...}``. Failed when a tray fails the rule
    or was not read; warning when there is no tray to look at (the inventory names none: nothing verified)."""
    details, failed = [], []
    for tray in sorted(trays or {}):
        entry = trays[tray] or {}
        params, version, error = tray_driver_files(entry.get('state'), entry.get('proc_root'))
        if error:
            failed.append(tray)
            details.append('%s: not read (%s)' % (tray, error))
            continue
        verdict = grdma_topo_override(params, version)
        if verdict['status'] == 'failed':
            failed.append(tray)
        details.append('%s: %s' % (tray, verdict['message']))
    check = {'name': 'nccl-net-preflight', 'object': ', '.join(failed), 'details': details,
             'fix': ('Set NVreg_GrdmaPciTopoCheckOverride=1 for the R580 driver: the stack\'s kernel-module-params '
                     'ConfigMap (nvidia.conf, gpu-operator driver.kernelModuleConfig.name) does it on NVKE; the '
                     'ClusterPolicy reloads the driver only when its spec changes, so restart the '
                     'nvidia-driver-daemonset pod of each listed tray, then check grep GrdmaPciTopoCheckOverride '
                     '/proc/driver/nvidia/params.')}
    if not trays:
        check.update(status='warning', fix='',
                     message='No GPU trays in inventory group gpu_trays: NVreg_GrdmaPciTopoCheckOverride was not '
                             'verified before the NET run.')
    elif failed:
        check.update(status='failed',
                     message='%d of %d trays cannot run the NET benchmark: %s' % (
                         len(failed), len(trays), '; '.join(line for line in details if line.split(':')[0] in failed)))
    else:
        check.update(status='passed', message='Every GPU tray (%d) is ready for GPUDirect RDMA over dma-buf (%s).'
                     % (len(trays), '; '.join(details)))
    return check


def eligible_nodes(nodes, variant, spec):
    """The nodes a worker of ``variant`` fits on: Ready, schedulable, matching ``node_selector``, with ``gpus_per_tray``
    allocatable GPUs and (net) one VF of every rail. Returns ``{'eligible': [names], 'message': ...}``."""
    need = {'nvidia.com/gpu': int(spec['gpus_per_tray'])}
    if variant == 'net':
        for rail in spec.get('rails') or []:
            need[rail['resource']] = 1
    selector = spec.get('node_selector') or {}
    eligible, short = [], {}
    for node in nodes or []:
        meta, status = node.get('metadata') or {}, node.get('status') or {}
        labels = meta.get('labels') or {}
        ready = any(c.get('type') == 'Ready' and c.get('status') == 'True' for c in status.get('conditions') or [])
        if not ready or (node.get('spec') or {}).get('unschedulable'):
            continue
        if any(labels.get(key) != str(value) for key, value in selector.items()):
            continue
        allocatable = status.get('allocatable') or {}
        missing = [res for res, count in sorted(need.items()) if _count(allocatable.get(res)) < count]
        if missing:
            if _count(allocatable.get('nvidia.com/gpu')) > 0:
                short[meta.get('name')] = missing
            continue
        eligible.append(meta.get('name'))
    eligible.sort()
    what = ', '.join('%s %s' % (count, res) for res, count in sorted(need.items()))
    message = '%d node(s) can take a %s worker (%s%s): %s' % (
        len(eligible), variant, what, ', labels %s' % selector if selector else '', ', '.join(eligible) or 'none')
    if short:
        message += '; GPU nodes short of a resource: %s' % '; '.join(
            '%s (%s)' % (name, ', '.join(res)) for name, res in sorted(short.items()))
    return {'eligible': eligible, 'message': message}


def _count(value):
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


FIX_TIMEOUT = ('The pods listed did not finish in time. Pending with Insufficient <resource>: a tray does not '
               'advertise it (the GPU Operator device plugin, the SR-IOV device plugin per rail) or other pods hold it. '
               'A worker that is Running but never Ready: sshd did not start (the image needs /usr/sbin/sshd or a '
               'package mirror). Raise validate_nccl_timeout only when the run was still measuring.')
FIX_START = ('The run could not be created. A kind the server does not serve: the recipe\'s component is missing '
             '(Kubeflow Trainer for TrainJob; the NVIDIA DRA driver for ComputeDomain, and Kubernetes >= 1.34 for '
             'resource.k8s.io/v1). An IMEX ResourceClaimTemplate that never appears: the DRA driver\'s '
             'compute-domain controller is not running (kubectl -n nvidia-dra-driver logs).')
FIX_FAILED = ('The launcher\'s log (in the details) says why mpirun or all_reduce_perf stopped: a worker\'s sshd '
              'not answering, an NCCL WARN (IB devices, P_Key membership of the VFs, IMEX channel), or the image '
              'lacking /usr/local/mpi/bin/mpirun or /usr/local/bin/all_reduce_perf_mpi.')


def run_check(run):
    """The evidence check of one launched run (``nccl-all-reduce-bw-<variant>``).

    ``run``: ``variant``, ``summary`` (the plan's), ``namespace``, ``timeout``, ``error`` (why it could not start,
    or None), ``launcher`` (the launcher Job / TrainJob as last read, or None), ``pods`` (the run's pods as last
    read), ``log`` (the launcher's log, or None), ``nccl`` (the registered nccl_result of the log, or None),
    ``cleanup`` (the registered namespace deletion, or None). The verdict on the bandwidth is nccl_result's; this
    adds how the run went, where it ran and whether it was cleaned up.
    """
    variant = run.get('variant')
    name = 'nccl-all-reduce-bw-%s' % variant
    summary = run.get('summary') or {}
    namespace = run.get('namespace') or summary.get('namespace') or ''
    details = ['%s run in namespace %s: %s, %s trays x %s GPUs, %s, image %s' % (
        variant, namespace, summary.get('workload'), summary.get('trays'), summary.get('gpus_per_tray'),
        summary.get('sizes'), summary.get('image'))]
    if summary.get('worker_annotations'):
        details.append('worker annotations: %s' % ', '.join(
            '%s=%s' % item for item in sorted(summary['worker_annotations'].items())))
    details.append('worker resources: %s' % ', '.join(
        '%s=%s' % item for item in sorted(((summary.get('worker_resources') or {}).get('limits') or {}).items())))
    details.append('NCCL: %s' % ' '.join(summary.get('nccl_env') or []))
    details += pod_findings(run.get('pods'))
    nccl = run.get('nccl') or None
    state = workload_state(run.get('launcher'))
    if run.get('error'):
        status, fix = 'failed', FIX_START
        message = 'The NCCL %s run could not start in %s: %s' % (variant, namespace, run['error'])
    elif state['state'] in ('running', 'missing', 'timeout'):
        status, fix = 'failed', FIX_TIMEOUT
        message = 'The NCCL %s run did not finish in %s s (namespace %s): %s' % (
            variant, run.get('timeout'), namespace,
            '; '.join(line for line in pod_findings(run.get('pods')) if ' - ' in line) or 'the launcher never ended')
    elif nccl and nccl.get('busbw') is not None and state['state'] == 'succeeded':
        status = 'passed' if nccl.get('passed') else 'failed'
        fix = '' if status == 'passed' else FIX_FAILED
        message = nccl.get('msg') or ''
        warnings = [str(w.get('msg', w) if isinstance(w, dict) else w) for w in nccl.get('warnings') or []]
        if status == 'passed' and warnings:
            # what nccl_result could not verify (no "Using network" line although the run sets NCCL_DEBUG=INFO)
            status = 'warning'
            message += ' (not verified: %s)' % '; '.join(warnings)
    else:
        status, fix = 'failed', FIX_FAILED
        message = 'The NCCL %s launcher %s%s' % (
            variant, 'failed' if state['state'] == 'failed' else 'ended',
            (' (%s)' % state['reason']) if state['reason'] else '')
        if nccl and nccl.get('problems'):
            message += ': %s' % '; '.join(nccl['problems'])
        elif not run.get('log'):
            message += ' without a log'
    if nccl and nccl.get('busbw') is not None:
        details.append('busbw %s GB/s at %s bytes (threshold %s GB/s), transport %s, nvls %s, hosts %s' % (
            nccl.get('busbw'), nccl.get('largest_size'), nccl.get('threshold'), nccl.get('transport'),
            nccl.get('nvls'), name_ranges([str(host) for host in nccl.get('hosts') or []])))
    log = run.get('log') or ''
    if log and status == 'failed':
        details += ['launcher log: %s' % line for line in log.rstrip('\n').splitlines()[-15:]]
    cleanup = run.get('cleanup') or {}
    if cleanup.get('failed'):
        details.append('clean-up failed: namespace %s was not removed (%s); delete it: kubectl delete namespace %s'
                       % (namespace, cleanup.get('msg') or 'no reason given', namespace))
        if status == 'passed':
            status = 'warning'
            message += ' (namespace %s was not removed)' % namespace
    else:
        details.append('namespace %s removed' % namespace)
    return {'name': name, 'status': status, 'message': message, 'fix': fix, 'object': namespace, 'details': details,
            'data': nccl_data(nccl, dict(summary, variant=variant))}


# --- the performance phase before the lock ----------------------------------------------------------------------

CAPACITY_FIX = ('A worker needs a Ready, schedulable node with the GPUs (and on NET one VF of each rail) free: check '
                'the nodes\' allocatable resources (GPU Operator device plugin, SR-IOV device plugin), '
                'validate_nccl_node_selector, or run on fewer trays (validate_nccl_trays).')


def check_name(variant):
    return 'nccl-all-reduce-bw-%s' % variant


def phase_plan(spec, variants, nodes, trays=None):
    """What the performance phase decides before it takes the run lock, from the run's spec (``run_plan``'s, without
    variant and keys), the variants asked for, the cluster's Node objects and the trays' reads (``trays``: tray ->
    ``{state, proc_root}``, for the NET preflight).

    Returns ``plans`` (each variant's ``run_plan``, counted with placeholder keys: the key pair is made per run),
    ``preflight`` (the NET preflight check when net is asked, else None), ``checks`` (the preflight and a record per
    variant that cannot start: skipped when the NET preflight failed, failed when the cluster has too few nodes for
    it), ``to_run`` (the variants that can start, in order) and ``lock_name`` (the run lock's Lease, LOCK_NAME: the
    role reads and releases it by this name)."""
    plans = dict((variant, run_plan(dict(spec, variant=variant, nodes=nodes, ssh_private_key='planned',
                                         ssh_public_key='planned'))) for variant in variants)
    preflight = net_preflight(trays or {}) if 'net' in variants else None
    refused = []
    for variant in variants:
        capacity = plans[variant]['capacity']
        if variant == 'net' and preflight['status'] == 'failed':
            refused.append({'variant': variant, 'name': check_name(variant), 'status': 'skipped',
                            'message': 'Not run: the NET preflight failed (nccl-net-preflight).'})
        elif not capacity['enough']:
            refused.append({'variant': variant, 'name': check_name(variant), 'status': 'failed',
                            'object': ', '.join(capacity['eligible']),
                            'message': 'Not run: the run needs %s trays and %s.' % (
                                spec.get('trays'), capacity['message']),
                            'fix': CAPACITY_FIX})
    skipped = set(item['variant'] for item in refused)
    return {'plans': plans, 'preflight': preflight, 'checks': ([preflight] if preflight else []) + refused,
            'to_run': [variant for variant in variants if variant not in skipped], 'lock_name': LOCK_NAME}


def held_checks(variants, decision, namespace, name=LOCK_NAME):
    """A failed record per variant that cannot run because another run holds the lock (``decision``:
    ``lease_decision``'s), naming the Lease, its holder and when it expires."""
    return [{'name': check_name(variant), 'status': 'failed', 'object': '%s/%s' % (namespace, name),
             'message': 'Not run: %s.' % decision['message'],
             'fix': 'Wait for that run to end (its namespaces are labelled gpu-tray.cluster/nccl-run), or delete the '
                    'Lease when that run is known to be dead: it expires on its own at %s.' % decision['expires']}
            for variant in variants]
