# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rolling reboot's plan, decided on the controller: pure functions, unit-tested (no I/O, no Ansible).

The role (roles/rolling_reboot) reads - the Kubernetes nodes and each tray's pods (kubernetes.core.k8s_info), the
Maintenance Operator, the trays' BMCs - and then dispatches, waits and registers what it did; what to do with what it
read, and what its results mean, is decided on the controller, through the action ``gpu_tray.cluster.reboot_step``. Three modules, one concern each:
this one plans (the waves, idle or busy, the plan and its lines); plugin_utils/reboot_run.py keeps the run (its steps
:func:`begin`, :func:`start_wave`, :func:`not_back`, :func:`record_wave`, :func:`report` and each tray's report row);
plugin_utils/reboot_cluster.py reads what else acts on the nodes (the Maintenance Operator, other rebooting
controllers). None of them knows a name the role registers (the action maps them):

* :func:`tray_state` - idle or busy: a tray is idle when it is not a node of the cluster, or its node runs no pod
  but DaemonSet-owned and static (mirror) pods (the pods a drain leaves alone) and nobody cordoned it before the run.
* :func:`plan` - the waves of the run, re-planned before every wave from what is done and what was just read:
  ``rolling`` (batch trays of a group at a time, groups in parallel: :func:`plan_waves`), ``canary`` (canary trays
  first, then every other tray together), ``auto`` (canary for the idle trays, rolling for the busy ones, in the
  same run); per tray whether and how it is drained; the plan line, the progress line with an estimate, and why
  the run stops.

Ansible's own knobs do not express "at most one batch per rack at a time, racks in parallel": ``serial`` and
``throttle`` limit the whole play, so 8 racks x 18 trays would take 144 reboot slots instead of 18; nor "one
canary, then everything that carries no work".
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime
import math

STRATEGIES = ('auto', 'canary', 'rolling')
DRAINS = ('auto', 'always', 'never')
VIAS = ('drain', 'maintenance_operator')
PER_GROUP = 'per_group'
MIRROR_ANNOTATION = 'kubernetes.io/config.mirror'
# a tray's result status: done in this run (rebooted and verified), or failed
DONE = 'rebooted'
FAILED = 'FAILED'
SHOWN = 6          # names listed in a plan or progress line before "and N more"


class PlanError(ValueError):
    """An input the plan cannot be made from; the message names the variable the user sets."""


# ------------------------------------------------------------------------------------------------ batches and waves

def parse_batch(batch):
    """Return (count, percent): exactly one is not None. Raises PlanError naming what is wrong."""
    if isinstance(batch, bool):
        raise PlanError('expected a positive integer or a percentage such as "25%%", got %r' % (batch,))
    if isinstance(batch, int):
        if batch < 1:
            raise PlanError('expected a positive integer or a percentage such as "25%%", got %d' % batch)
        return batch, None
    if isinstance(batch, str):
        text = batch.strip()
        try:
            if text.endswith('%'):
                percent = float(text[:-1])
                if not 0 < percent <= 100:
                    raise ValueError('out of range')
                return None, percent
            count = int(text)
        except ValueError:
            count = 0
        if count >= 1:
            return count, None
    raise PlanError('expected a positive integer or a percentage such as "25%%" (above 0, at most 100%%), got %r'
                    % (batch,))


def batch_size(batch, group_size):
    """Trays of a group of group_size that may reboot together (at least 1)."""
    count, percent = parse_batch(batch)
    if count is not None:
        return count
    return max(1, int(math.floor(group_size * percent / 100.0 + 1e-9)))


def _groups(hosts, group_of, group_by_name):
    """(order, members): the group keys in order of their first host, and every host of each group."""
    members = {}
    order = []
    for host in hosts:
        key = group_of.get(host) if group_of else None
        try:
            hash(key)
        except TypeError:
            raise PlanError('%s of %s is %r; expected a name or a number' % (group_by_name, host, key))
        if key not in members:
            members[key] = []
            order.append(key)
        members[key].append(host)
    return order, members


def plan_waves(hosts, pending, batch=1, group_of=None, group_by_name='group'):
    """The waves (lists of hosts) of a rolling reboot: at most one batch per group in a wave, groups in parallel;
    hosts in the order of ``hosts`` (the inventory's); a percentage batch is of the group's size in ``hosts``."""
    hosts = [str(h) for h in hosts]
    pending_set = set(str(h) for h in pending)
    unknown = sorted(pending_set - set(hosts))
    if unknown:
        raise PlanError('hosts to reboot that are not in the play: %s' % ', '.join(unknown))
    parse_batch(batch)
    group_of = dict((str(k), v) for k, v in (group_of or {}).items())
    if group_of:
        missing = [h for h in hosts if h in pending_set and group_of.get(h) in (None, '')]
        if missing:
            raise PlanError('%s is not set for %s: without it the tray could share a %s with any other, so its '
                            'reboot cannot be placed safely; set it in the inventory or do not group by it'
                            % (group_by_name, ', '.join(missing), group_by_name))
    order, members = _groups(hosts, group_of, group_by_name)
    chunks = []      # per group: its pending hosts cut into batches
    for key in order:
        todo = [h for h in members[key] if h in pending_set]
        if not todo:
            continue
        size = batch_size(batch, len(members[key]))
        chunks.append([todo[i:i + size] for i in range(0, len(todo), size)])
    position = dict((h, i) for i, h in enumerate(hosts))
    waves = []
    for index in range(max([len(c) for c in chunks] or [0])):
        wave = [h for c in chunks if index < len(c) for h in c[index]]
        waves.append(sorted(wave, key=position.get))
    return waves


def parse_canaries(value):
    """('count', N) or ('per_group', None) from gpu_tray_reboot_canaries (an integer >= 1, or per_group)."""
    if isinstance(value, str) and value.strip() == PER_GROUP:
        return PER_GROUP, None
    if not isinstance(value, bool):
        try:
            count = int(str(value).strip())
        except (TypeError, ValueError):
            count = 0
        if count >= 1:
            return 'count', count
    raise PlanError('gpu_tray_reboot_canaries (rolling_reboot_canaries) must be a positive integer or per_group, '
                    'got %r' % (value,))


def pick_canaries(candidates, group_of, canaries):
    """The canary trays among ``candidates`` (inventory order): one per group in turn, groups in order of their
    first candidate, until ``canaries`` are picked (per_group: one of every group)."""
    kind, count = parse_canaries(canaries)
    order, members = _groups(candidates, group_of, 'group')
    if kind == PER_GROUP:
        count = len(order)
    picked = []
    depth = 0
    while len(picked) < min(count, len(candidates)):
        for key in order:
            if depth < len(members[key]) and len(picked) < count:
                picked.append(members[key][depth])
        depth += 1
    position = dict((h, i) for i, h in enumerate(candidates))
    return sorted(picked, key=position.get)


# ------------------------------------------------------------------------------------------------ idle or busy

def workload_pods(pods):
    """The pods that make a node busy, as namespace/name: every pod a drain would evict - not owned by a DaemonSet,
    not a static pod's mirror, not finished (Succeeded / Failed)."""
    out = []
    for pod in pods or []:
        meta = pod.get('metadata') or {}
        if (pod.get('status') or {}).get('phase') in ('Succeeded', 'Failed'):
            continue
        if MIRROR_ANNOTATION in (meta.get('annotations') or {}):
            continue
        owners = meta.get('ownerReferences') or []
        if any(owner.get('kind') == 'DaemonSet' for owner in owners):
            continue
        out.append('%s/%s' % (meta.get('namespace') or 'default', meta.get('name')))
    return out


def _names(items, shown=SHOWN):
    items = list(items)
    if len(items) <= shown:
        return ', '.join(items)
    return '%s and %d more' % (', '.join(items[:shown]), len(items) - shown)


def tray_state(node, pods=None, ours=False):
    """Idle or busy, from the tray's Node (None: not a node of the cluster) and the registered k8s_info read of the
    pods on it (field selector spec.nodeName: the read kubernetes.core.k8s_drain makes).

    Returns ``{node, idle, why, workloads, cordoned}``. A node somebody cordoned before the run is busy (an SR-IOV
    drain, a person at work on it: it goes the rolling way, through the Maintenance Operator where there is one) -
    unless the cordon is ours (``ours``: a run of ours that was cut short holds it, plugin_utils/journal.py): then its
    pods decide; a node whose pods could not be read is busy (nobody can tell it carries nothing)."""
    out = {'node': node is not None, 'idle': True, 'why': 'not a node of the cluster', 'workloads': [],
           'cordoned': False}
    if node is None:
        return out
    out['cordoned'] = bool((node.get('spec') or {}).get('unschedulable'))
    if out['cordoned'] and not ours:
        out.update(idle=False, why='cordoned before the run (someone may be working on the node)')
        return out
    if pods is None:
        out.update(idle=False, why='its pods were not read')
        return out
    if not isinstance(pods, dict) or pods.get('skipped') or pods.get('failed') or \
            not isinstance(pods.get('resources'), list):
        error = (str(pods.get('msg') or '').strip() if isinstance(pods, dict) else '') or 'no answer'
        out.update(idle=False, why='its pods could not be read (%s)' % error.splitlines()[0][:200])
        return out
    out['workloads'] = workload_pods(pods['resources'])
    if out['workloads']:
        out.update(idle=False, why='runs %d workload pod(s): %s' % (len(out['workloads']), _names(out['workloads'], 3)))
    else:
        out['why'] = 'runs only DaemonSet and static pods' if pods['resources'] else 'runs no pod'
    if out['cordoned']:
        out['why'] += '; cordoned by a run of ours that was cut short'
    return out


# ------------------------------------------------------------------------------------------------ the plan

def _text_time(epoch):
    if epoch is None:
        return '-'
    return datetime.datetime.fromtimestamp(float(epoch), tz=datetime.timezone.utc).strftime('%Y-%m-%d %H:%M:%S UTC')


def _seconds(value):
    return '%d s' % int(round(float(value)))


def _drain(tray, state, inputs, role):
    """(via, note): how the tray's node is taken out before its reboot - 'drain' (kubernetes.core.k8s_drain),
    'maintenance_operator' (a NodeMaintenance within the operator's budget) or None with the reason it is not."""
    if inputs['drain'] == 'never':
        return None, 'not drained: rolling_reboot_drain is never'
    if unreadable(inputs['cluster']):
        return None, 'not drained: the cluster cannot be read'
    if not inputs['cluster']['read']:
        return None, 'not drained: no cluster'
    if not state.get('node'):
        return None, 'not drained: the cluster has no node %s' % tray['node']
    # an idle node is drained directly (it has nothing to evict: the drain cordons it and proves it); the
    # Maintenance Operator's budget is for the nodes that carry work, and canary waves take them down together
    if state.get('idle') or role != 'rolling':
        return 'drain', 'drain'
    return inputs['via'], inputs['via']


def unreadable(cluster):
    """The sentence for a cluster that is configured (``sources``: where kubernetes.core takes it from - one is
    enough) but was not read, or None. Such a cluster never makes a tray idle: the run stops."""
    if cluster.get('read') or not cluster.get('sources'):
        return None
    error = str(cluster.get('error') or 'no answer').split('\n', 1)[0]
    return ('The Kubernetes cluster configured by %s cannot be read (%s); nothing was rebooted. Fix the kubeconfig '
            'or credential, or set rolling_reboot_drain to never to reboot without draining.' % (
                ', '.join(cluster['sources']), error[:200] + ('...' if len(error) > 200 else '')))


def _state(inputs, host):
    """The tray's idle/busy state as the plan uses it (``why`` says where it comes from)."""
    cluster = inputs['cluster']
    if inputs['drain'] == 'never':
        return {'node': False, 'idle': False, 'why': 'not read: rolling_reboot_drain is never (counted as busy)'}
    if unreadable(cluster):
        return {'node': False, 'idle': False, 'why': 'not read: the cluster configured by %s cannot be read'
                % ', '.join(cluster['sources'])}
    if not cluster['read']:
        return {'node': False, 'idle': True, 'why': cluster['why'] or 'no cluster configured'}
    state = inputs['trays'][host].get('state')
    if not isinstance(state, dict):
        return {'node': True, 'idle': False, 'why': 'its node was not read'}
    return state


def _check_inputs(inputs):
    for key, choices in (('strategy', STRATEGIES), ('drain', DRAINS), ('via', VIAS)):
        if inputs.get(key) not in choices:
            raise PlanError('%s must be one of %s, got %r' % (key, ', '.join(choices), inputs.get(key)))
    parse_canaries(inputs.get('canaries', 1))
    try:
        parse_batch(inputs.get('batch', 1))
    except PlanError as exc:
        raise PlanError('gpu_tray_reboot_batch (rolling_reboot_batch): %s' % exc)


def _waves(inputs, pending, states, group_of):
    """[(trays, canary, together, rolling)] of the remaining run."""
    hosts = inputs['hosts']
    strategy = inputs['strategy']
    batch, group_by = inputs.get('batch', 1), inputs.get('group_by') or 'group'
    fresh = not any(str(inputs['trays'][h].get('status') or '').startswith(DONE) for h in hosts)
    if strategy == 'rolling':
        return [(w, [], [], w) for w in plan_waves(hosts, pending, batch, group_of, group_by)]
    if group_of:
        plan_waves(hosts, pending, batch, group_of, group_by)        # every pending tray needs its group
    if strategy == 'canary':
        together, rolling = list(pending), []
        candidates = [h for h in pending if states[h]['idle']] or list(pending)
    else:
        together = [h for h in pending if states[h]['idle']]
        rolling = [h for h in pending if not states[h]['idle']]
        candidates = together
    canaries = pick_canaries(candidates, group_of, inputs.get('canaries', 1)) if fresh and candidates else []
    together = [h for h in together if h not in canaries]
    rolled = plan_waves(hosts, rolling, batch, group_of, group_by)
    waves = [(canaries, canaries, [], [])] if canaries else []
    for index in range(max(len(rolled), 1 if together else 0)):
        first = together if index == 0 else []
        part = rolled[index] if index < len(rolled) else []
        position = dict((h, i) for i, h in enumerate(hosts))
        waves.append((sorted(first + part, key=position.get), [], first, part))
    return waves


def _label(canary, together, rolling):
    parts = []
    if canary:
        parts.append('canary')
    if together:
        parts.append('%d together' % len(together))
    if rolling:
        parts.append('%d rolling' % len(rolling))
    return ' + '.join(parts)


def _stop(inputs):
    """Why the run stops (a tray of this run FAILED), or None."""
    hosts = inputs['hosts']
    failed = [h for h in hosts if inputs['trays'][h].get('status') == FAILED]
    if not failed:
        return None
    rows = dict((h, inputs['trays'][h].get('row') or {}) for h in hosts)
    canary = [h for h in failed if rows[h].get('role') == 'canary']
    rebooted = [h for h in hosts if str(inputs['trays'][h].get('status') or '').startswith(DONE)]
    first = failed[0]
    wave = rows[first].get('wave')
    what = '; '.join('%s: %s' % (h, rows[h].get('failed_step') or 'failed') for h in failed)
    if canary:
        bmc = ['%s %s' % (h, ((rows[h].get('bmc') or {}).get('after') or rows[h].get('bmc') or {}).get('summary'))
               for h in canary if rows[h].get('bmc')]
        msg = ('The canary %s failed (%s%s), so no other tray was rebooted: the change this run applies may keep every '
               'tray from coming back. ' % (', '.join(canary), what, ('; ' + '; '.join(bmc)) if bmc else ''))
    else:
        msg = 'Stopped because %s failed in wave %s (%s); no further tray is touched. ' % (
            ', '.join(failed), wave if wave is not None else '?', what)
    msg += '%d tray(s) were rebooted and verified in this run; a re-run resumes with the trays still pending.' % (
        len(rebooted))
    return {'msg': msg, 'failed': failed, 'canary': canary}


def plan(inputs):
    """The plan of the remaining run (see the module docstring). ``inputs``:

    hosts        every tray of the play, inventory order
    reasons      per tray: the roles that asked for its reboot (empty: none)
    groups       per tray: its group (the value of the group_by variable)
    nodes        per tray: its node name
    states       per tray: :func:`tray_state`, or None when not read
    rows         per tray: its report row - status ('rebooted...' once done in this run, 'FAILED'), role, wave,
                 failed_step, bmc
    strategy     auto | canary | rolling;   canaries: N | per_group;   batch;   group_by (the variable's name)
    drain        auto | always | never;     via: drain | maintenance_operator (the cluster's choice for busy nodes)
    via_insisted rolling_reboot_drain_via is maintenance_operator (not auto)
    cluster      {read: whether the cluster was read, why: the reason when not, sources: where kubernetes.core
                 takes a cluster from (empty: none configured), error: the read's error} - a configured cluster
                 that was not read refuses the run (:func:`unreadable`), never counts its trays idle
    check_mode   nothing is rebooted
    waves_done   the waves run so far: {wave, label, trays, started, ended, seconds, reboots: {tray: seconds}}
    only         restrict the next wave to these trays (those read just before it)
    refuse       a refusal decided before the plan (:func:`begin`: another controller, no Maintenance Operator)
    now          epoch seconds (the progress line)

    Returns ``{refuse, stop, strategy, idle, busy, pending, canaries, waves, periods, trays, lines, summary, next,
    progress, last}``; ``refuse`` (a sentence) means nothing may be rebooted, ``stop`` that a tray of this run
    failed. Raises PlanError for inputs no plan can be made from (the message names the variable)."""
    _check_inputs(inputs)
    hosts = [str(h) for h in inputs['hosts']]
    trays = {}
    for host in hosts:
        row = (inputs.get('rows') or {}).get(host) or {}
        trays[host] = {'reasons': list((inputs.get('reasons') or {}).get(host) or []),
                       'group': (inputs.get('groups') or {}).get(host), 'node': (inputs.get('nodes') or {}).get(host, host),
                       'state': (inputs.get('states') or {}).get(host), 'status': row.get('status'), 'row': row}
    inputs = dict(inputs, hosts=hosts, trays=trays)
    group_by = inputs.get('group_by') or ''
    group_of = dict((h, trays[h].get('group')) for h in hosts) if group_by else {}
    done = [h for h in hosts if str(trays[h].get('status') or '').startswith(DONE)]
    pending = [h for h in hosts if trays[h].get('reasons') and h not in done and trays[h].get('status') != FAILED]
    states = dict((h, _state(inputs, h)) for h in hosts)
    out = {'refuse': None, 'stop': None, 'strategy': inputs['strategy'], 'pending': pending,
           'idle': [h for h in pending if states[h]['idle']], 'busy': [h for h in pending if not states[h]['idle']],
           'canaries': [], 'waves': [], 'trays': {}, 'lines': [], 'summary': '', 'next': None,
           'progress': '', 'last': ''}
    try:
        waves = _waves(inputs, pending, states, group_of)
        unplaced = None
    except PlanError as exc:
        waves, unplaced = [], '%s; nothing was rebooted.' % exc
    roles = {}
    offset = len(inputs.get('waves_done') or [])          # waves are numbered from the run's first
    for index, (members, canary, together, rolling) in enumerate(waves, offset + 1):
        for host in members:
            roles[host] = ('canary' if host in canary else 'together' if host in together else 'rolling', index)
    for host in hosts:
        role, wave = roles.get(host, (None, None))
        via, note = _drain(trays[host], states[host], inputs, role) if host in pending else (None, '-')
        out['trays'][host] = {'idle': states[host]['idle'], 'why': states[host]['why'], 'node': states[host]['node'],
                              'role': role, 'wave': wave, 'via': via, 'drain': note, 'pending': host in pending}
    out['canaries'] = [h for h in pending if out['trays'][h]['role'] == 'canary']
    out['waves'] = [{'trays': m, 'canary': c, 'together': t, 'rolling': r, 'label': _label(c, t, r)}
                    for m, c, t, r in waves]
    out['periods'] = len(waves)
    out['stop'] = _stop(inputs)
    out['refuse'] = inputs.get('refuse') or unplaced or _refusal(inputs, out)
    _lines(inputs, out, done)
    if unplaced:
        out['summary'], out['lines'] = unplaced, [unplaced]
    if inputs.get('waves_done'):
        out['last'] = wave_line(inputs['waves_done'][-1], len(inputs['waves_done']) + out['periods'])
    if out['waves'] and not out['stop'] and not out['refuse']:
        nxt = dict(out['waves'][0])
        if inputs.get('only') is not None:
            keep = set(inputs['only'])
            for key in ('trays', 'canary', 'together', 'rolling'):
                nxt[key] = [h for h in nxt[key] if h in keep]
            nxt['label'] = _label(nxt['canary'], nxt['together'], nxt['rolling'])
        out['next'] = nxt
        out['progress'] = _progress(inputs, out, nxt)
    return out


def _refusal(inputs, out):
    """Why nothing may be rebooted, or None: rolling_reboot_drain always with trays it would not drain; the
    Maintenance Operator insisted on while strategy canary takes busy trays down together."""
    pending = out['pending']
    if pending and inputs['drain'] != 'never' and unreadable(inputs['cluster']):
        return unreadable(inputs['cluster'])
    if inputs['drain'] == 'always':
        undrained = [h for h in pending if out['trays'][h]['via'] is None]
        if undrained:
            return 'rolling_reboot_drain is always, but %s would reboot %s; nothing was rebooted.' % (
                _names(undrained), out['trays'][undrained[0]]['drain'])
    if inputs.get('via_insisted') and inputs['strategy'] == 'canary':
        busy_nodes = [h for h in out['busy'] if out['trays'][h]['via']]
        if busy_nodes:
            return ('rolling_reboot_drain_via is maintenance_operator, but strategy canary takes the busy trays %s '
                    'down together, which the operator\'s budget (maxParallelOperations) would hold back; nothing '
                    'was rebooted. Use strategy auto (busy trays roll through the operator) or rolling, or '
                    'rolling_reboot_drain_via drain.' % _names(busy_nodes))
    return None


def _lines(inputs, out, done):
    """The plan line and one line per wave."""
    pending, hosts, strategy = out['pending'], inputs['hosts'], inputs['strategy']
    idle, busy, canaries = out['idle'], out['busy'], out['canaries']
    would = ' (would reboot)' if inputs.get('check_mode') else ''
    shape = 'batch %s%s' % (inputs.get('batch', 1), (', one batch per %s at a time' % inputs['group_by'])
                            if inputs.get('group_by') else '')
    head = '%d of %d tray(s) need a reboot, in %d reboot period(s) (strategy %s' % (
        len(pending), len(hosts), out['periods'], strategy)
    if strategy == 'rolling':
        head += ', %s)' % shape
    else:
        head += ')'
        if unreadable(inputs['cluster']) and inputs['drain'] != 'never':
            head += ': %d idle, %d busy - the cluster configured by %s cannot be read: every tray counts as busy' % (
                len(idle), len(busy), ', '.join(inputs['cluster']['sources']))
        elif not inputs['cluster']['read'] or inputs['drain'] == 'never':
            head += ': %d idle, %d busy - %s: every tray counts as %s' % (
                len(idle), len(busy), inputs['cluster']['why'] or 'no cluster configured',
                'busy' if inputs['drain'] == 'never' else 'idle')
        else:
            head += ': %d idle%s, %d busy%s' % (
                len(idle), (' (%s)' % _names(idle)) if idle else '', len(busy), (' (%s)' % _names(busy)) if busy else '')
        rest = len(pending) - len(canaries)
        if canaries:
            if not rest:
                tail = 'nothing else'
            elif strategy == 'canary' or not busy:
                tail = 'the other %d together' % rest
            else:
                tail = 'the other %d idle together, the %d busy rolling (%s)' % (rest - len(busy), len(busy), shape)
            head += '; canary %s, then %s' % (', '.join(canaries), tail)
        elif busy and strategy == 'auto':
            head += '; %sbusy trays rolling (%s)' % ('idle trays together, ' if idle else '', shape)
        elif pending:
            head += '; all together'
    if done:
        head += '; %d already rebooted and verified in this run' % len(done)
    out['summary'] = head + '.'
    lines = [out['summary'] + (' Check mode: nothing is rebooted.' if inputs.get('check_mode') else '')]
    offset = len(inputs.get('waves_done') or [])
    for index, wave in enumerate(out['waves'], offset + 1):
        lines.append('wave %d/%d (%s): %s%s' % (
            index, offset + out['periods'], wave['label'], ', '.join(wave['trays']), would))
    for host in busy:
        lines.append('busy: %s - %s' % (host, out['trays'][host]['why']))
    if out['refuse']:
        lines.append(out['refuse'])
    out['lines'] = lines


def _median(values):
    values = sorted(values)
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2.0


def _progress(inputs, out, nxt):
    """The line printed when a wave starts: when, how many trays go down, the last reboot, an estimate."""
    done_waves = inputs.get('waves_done') or []
    number = len(done_waves) + 1
    total = number - 1 + out['periods']
    text = 'wave %d/%d (%s) started %s: %d tray(s) going down' % (
        number, total, nxt['label'], _text_time(inputs.get('now')), len(nxt['trays']))
    reboots = [(t, float(s)) for w in done_waves for t, s in sorted((w.get('reboots') or {}).items())
               if s is not None]
    if not done_waves or not reboots:
        return text + '; no reboot measured yet in this run, so no estimate.'
    # the latest wave with a reboot measured; its slowest reboot
    last = [w for w in done_waves if any(s is not None for s in (w.get('reboots') or {}).values())][-1]
    slowest = max((float(s), t) for t, s in last['reboots'].items() if s is not None)
    text += '; the last reboot took %s (%s, wave %s)' % (_seconds(slowest[0]), slowest[1], last.get('wave'))
    per_wave = _median([float(w['seconds']) for w in done_waves if w.get('seconds') is not None] or [0.0])
    text += '; %d period(s) left with this one, about %s (the median wave so far took %s)' % (
        out['periods'], _seconds(per_wave * out['periods']), _seconds(per_wave))
    return text + '.'


def wave_line(record, total):
    """The line printed when a wave ends (``record``: one entry of waves_done)."""
    reboots = sorted(((float(s), t) for t, s in (record.get('reboots') or {}).items() if s is not None))
    text = 'wave %s/%s (%s) done in %s' % (record.get('wave'), total, record.get('label') or '-',
                                           _seconds(record.get('seconds') or 0))
    if len(reboots) == 1:
        text += ': 1 tray(s) back, reboots took %s' % _seconds(reboots[0][0])
    elif reboots:
        text += ': %d tray(s) back, reboots took %s-%s (slowest %s)' % (
            len(reboots), _seconds(reboots[0][0]), _seconds(reboots[-1][0]), reboots[-1][1])
    failed = record.get('failed') or []
    if failed:
        text += '; FAILED: %s' % ', '.join(failed)
    return text + '.'
