# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which NodeWright / Skyhook objects would reboot or restart the trays of a run.

A second controller that reboots the same nodes without knowing of ours breaks the one-at-a-time promise (the RKE2
VR200 guide's #2572: two rebooting controllers reboot nodes concurrently). NodeWright (formerly Skyhook) objects
interrupt a node when one of their packages has an ``interrupt`` or a ``configInterrupts`` entry of type reboot,
service or restartAllServices (``noop`` does not), on every node their ``spec.nodeSelectors`` label selector matches
- an absent selector matches every node (nodeprep.md 1.2).

Used by the rolling reboot (its plan, reboot_step action, on the controller) and by cluster_preflight (on
the API host), so both judge with the same rules. Standard library only.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

INTERRUPTING = ('reboot', 'service', 'restartAllServices')


class SelectorError(ValueError):
    pass


def _expression_matches(expr, labels):
    key, op, values = expr.get('key'), expr.get('operator'), list(expr.get('values') or [])
    if op == 'In':
        return key in labels and labels[key] in values
    if op == 'NotIn':
        return key not in labels or labels[key] not in values
    if op == 'Exists':
        return key in labels
    if op == 'DoesNotExist':
        return key not in labels
    raise SelectorError('label selector operator %r is not one of In, NotIn, Exists, DoesNotExist' % op)


def selector_matches(selector, labels):
    """Kubernetes LabelSelector semantics: every matchLabels pair and every matchExpressions entry must hold; an
    empty or absent selector matches everything."""
    selector = selector or {}
    labels = labels or {}
    for key, value in (selector.get('matchLabels') or {}).items():
        if labels.get(key) != value:
            return False
    return all(_expression_matches(e, labels) for e in selector.get('matchExpressions') or [])


def interrupts(obj):
    """Sorted 'package: type' strings of the object's interrupting packages (interrupt and configInterrupts)."""
    found = set()
    for name, pkg in sorted(((obj.get('spec') or {}).get('packages') or {}).items()):
        pkg = pkg or {}
        kinds = [(pkg.get('interrupt') or {}).get('type')]
        kinds += [(i or {}).get('type') for i in (pkg.get('configInterrupts') or {}).values()]
        for kind in kinds:
            if kind in INTERRUPTING:
                found.add('%s: %s' % (name, kind))
    return sorted(found)


def foreign_reboot_controllers(objects, nodes, trays):
    """The objects (NodeWright/Skyhook dicts) that would interrupt any of `trays` (node names), given `nodes`
    ({name: labels}). Returns [{'kind', 'name', 'interrupts': [...], 'trays': [...]}] sorted by kind and name."""
    out = []
    for obj in objects or []:
        packages = interrupts(obj)
        if not packages:
            continue
        selector = (obj.get('spec') or {}).get('nodeSelectors')
        hit = sorted(t for t in trays or [] if t in (nodes or {}) and selector_matches(selector, nodes[t]))
        if hit:
            out.append({'kind': obj.get('kind', ''), 'name': (obj.get('metadata') or {}).get('name', ''),
                        'interrupts': packages, 'trays': hit})
    return sorted(out, key=lambda o: (o['kind'], o['name']))
