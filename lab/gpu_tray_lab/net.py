# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Per-tray network namespace + veth pair.

Tray N lives in netns ``gtl-trayNN``; its ``eth0`` has 198.18.N.2/30 and the host end ``gtlNN-h`` has
198.18.N.1/30 (RFC 2544 benchmark range: the addresses exist only between this machine and the
namespaces the lab created; nothing is routed anywhere else).
"""

import os

from gpu_tray_lab import util


def netns_exists(ns):
    return os.path.exists("/run/netns/%s" % ns)


def link_exists(name, ns=None):
    argv = ["ip"] + (["-n", ns] if ns else []) + ["link", "show", "dev", name]
    return util.run(argv, check=False, capture=True).returncode == 0


def create(index):
    ns, veth = util.netns_name(index), util.host_veth(index)
    if not netns_exists(ns):
        util.run(["ip", "netns", "add", ns])
    if not link_exists("eth0", ns):
        if link_exists(veth):          # stale host end whose peer is gone
            util.run(["ip", "link", "del", "dev", veth])
        util.run(["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns])
    util.run(["ip", "addr", "replace", "%s/30" % util.host_addr(index), "dev", veth])
    util.run(["ip", "link", "set", veth, "up"])
    util.run(["ip", "-n", ns, "addr", "replace", "%s/30" % util.tray_addr(index), "dev", "eth0"])
    util.run(["ip", "-n", ns, "link", "set", "eth0", "up"])
    util.run(["ip", "-n", ns, "link", "set", "lo", "up"])


def delete(index):
    ns, veth = util.netns_name(index), util.host_veth(index)
    # host end first: deleting it deletes the peer synchronously (a netns deletion frees its devices
    # asynchronously, so the host end may linger for a moment after `ip netns del`)
    if link_exists(veth):
        proc = util.run(["ip", "link", "del", "dev", veth], check=False, capture=True)
        if proc.returncode != 0 and link_exists(veth):
            raise util.LabError("cannot delete %s: %s" % (veth, proc.stderr.strip()))
    if netns_exists(ns):
        util.run(["ip", "netns", "del", ns])


def list_ours():
    proc = util.run(["ip", "netns", "list"], check=False, capture=True)
    return sorted(line.split()[0] for line in proc.stdout.splitlines()
                  if line.startswith(util.NETNS_PREFIX))
