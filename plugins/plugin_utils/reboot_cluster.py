# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What else acts on the rolling reboot's nodes, read from what the role registered: pure functions (no I/O).

* :func:`use_maintenance_operator` - whether busy nodes are drained through the Maintenance Operator, and
  :func:`maintenance_operator_missing` - the refusal when it was insisted on and the cluster does not run it.
* :func:`unread_controllers`, :func:`foreign_controllers` - other controllers that reboot nodes (NodeWright, Skyhook):
  a look that failed is no proof there is none.
* :func:`node_object`, :func:`left` - a tray's node, and how a failed tray's node is left.

The run's steps (plugin_utils/reboot_run.py) call them; the plan is plugin_utils/reboot_plan.py's.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import re


def is_skipped(result):
    """Jinja's ``is skipped`` of a registered result; a result never registered counts as skipped."""
    return not isinstance(result, dict) or bool(result.get('skipped'))


def is_failed(result):
    """Jinja's ``is failed``."""
    return isinstance(result, dict) and bool(result.get('failed'))


def use_maintenance_operator(drain_via, reads):
    """Whether busy nodes are drained through the Maintenance Operator (rolling_reboot_drain_via): always with
    maintenance_operator; with auto only when the cluster serves the NodeMaintenance CRD AND runs the operator (a
    Deployment named ...maintenance-operator...) - CRDs stay behind after the operator is uninstalled, and a
    NodeMaintenance nobody serves never becomes Ready. ``reads``: the registered loop results of the role's look
    (the CRD, then the Deployments)."""
    if drain_via == 'maintenance_operator':
        return True
    reads = list(reads or [])
    if drain_via != 'auto' or len(reads) < 2:
        return False
    crd = (reads[0] or {}).get('resources') or []
    deployments = (reads[1] or {}).get('resources') or []
    names = [str(((item or {}).get('metadata') or {}).get('name') or '') for item in deployments]
    return bool(crd) and any('maintenance-operator' in name for name in names)


def maintenance_operator_missing(via_insisted, reads):
    """The refusal when rolling_reboot_drain_via is maintenance_operator (``via_insisted``) and the cluster, read
    (``reads``: the role's look, the CRD first), serves no NodeMaintenance API; else None."""
    reads = list(reads or [])
    if not via_insisted or not reads or is_skipped(reads[0]) or reads[0].get('resources'):
        return None
    return ('rolling_reboot_drain_via is maintenance_operator but the cluster serves no '
            'nodemaintenances.maintenance.nvidia.com; nothing was rebooted. Install the Maintenance Operator '
            '(network-operator with maintenanceOperator.enabled) or set rolling_reboot_drain_via to drain.')


# what kubernetes.core.k8s_info says when the cluster does not serve the kind at all (its CRD is not installed): no
# such controller. Any other failed read - RBAC's 403, a time-out - leaves it unknown, and the plan refuses.
NOT_SERVED = re.compile(r'Failed to find exact match|could not find the requested resource')


def unread_controllers(reads):
    """[(kind, error)] of the role's NodeWright/Skyhook reads that failed for another reason than the kind not being
    served. The role registers them with failed_when false: a k8s_info result without its ``resources`` list is a read
    that did not answer, whatever ``failed`` says."""
    out = []
    for read in reads or []:
        if not isinstance(read, dict) or is_skipped(read) or isinstance(read.get('resources'), list):
            continue
        error = str(read.get('msg') or read.get('error') or 'no answer').strip().splitlines()[0][:300]
        if not NOT_SERVED.search(str(read.get('msg') or '')):
            out.append((str((read.get('item') or {}).get('kind') or 'the controller objects'), error))
    return out


def foreign_controllers(reads, nodes, trays):
    """The refusal when another controller would reboot ``trays`` (the node names of the trays that reboot): a
    NodeWright or Skyhook object among ``reads`` (the role's looped look, skipped when rolling_reboot_foreign_controllers
    is allow) whose package interrupts with a reboot and whose node selector takes one of them (module_utils/
    reboot_controllers.py, the rules cluster_preflight reports with; ``nodes``: the registered Node read), or a read
    that failed (unread_controllers: such a controller cannot be ruled out); else None.
    Raises ValueError for a selector that cannot be read."""
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import reboot_controllers
    unread = unread_controllers(reads)
    if unread:
        return ('%s could not be read (%s): another controller that reboots these nodes cannot be ruled out; nothing '
                'was rebooted. Let the run\'s account list them (RBAC), or set rolling_reboot_foreign_controllers to '
                'allow.' % (' and '.join('%s objects' % kind for kind, _error in unread),
                            '; '.join('%s: %s' % (kind, error) for kind, error in unread)))
    objects = [obj for read in reads or [] if isinstance(read, dict) and not is_skipped(read)
               for obj in read.get('resources') or []]
    labels = dict((((n or {}).get('metadata') or {}).get('name'), ((n or {}).get('metadata') or {}).get('labels') or {})
                  for n in (nodes or {}).get('resources') or []) if isinstance(nodes, dict) else {}
    found = reboot_controllers.foreign_reboot_controllers(objects, labels, trays) if objects else []
    if not found:
        return None

    def joined(key):
        return ', '.join(dict.fromkeys(item for f in found for item in f[key]))
    return ('%s would also interrupt %s (%s): two controllers that do not know of each other would reboot these nodes '
            'concurrently; nothing was rebooted. Pause or remove them (annotation nodewright.nvidia.com/pause=true, '
            'skyhook.nvidia.com/pause=true on a Skyhook), or set rolling_reboot_foreign_controllers to allow.' % (
                ', '.join('%s %s' % (f['kind'], f['name']) for f in found), joined('trays'), joined('interrupts')))


def node_object(nodes, name):
    """The tray's Node as the nodes read returned it; None when the cluster has no node of that name or was not read."""
    for node in ((nodes or {}).get('resources') or []) if isinstance(nodes, dict) else []:
        if ((node or {}).get('metadata') or {}).get('name') == name:
            return node
    return None


def left(via, maintenance):
    """How a failed tray's node is left (the failure message, the report), by the way the run drains busy nodes:
    ``maintenance`` is the role's NodeMaintenance, namespace/name."""
    if (via or 'drain') == 'drain':
        return 'cordoned (left cordoned)'
    return ('cordoned by NodeMaintenance %s (left in place: delete it to release the node, '
            'docs/runbooks/orphaned-node-maintenance.md)' % maintenance)
