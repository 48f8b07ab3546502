# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who was down when: the trays' power logs read from the host (stdlib only; tests/lab and tools/prep_bench.py).

Each tray's gpu-tray-lab-power.service appends `<epoch> down boot N` when a shutdown begins and `<epoch> up boot N`
once sshd runs to /var/log/gpu-tray-lab/power.log (under the tray's overlay on the host). A reboot is the window from
a `down` to the next `up`; a reboot period is a set of windows that overlap one another in a chain - what a person
watching the racks sees as "trays down" between two moments when every tray was up.
"""

from gpu_tray_lab import util


def windows(tray, state=None):
    """[(down, up)] epoch pairs of every reboot of the tray (up is None when it never came back)."""
    path = (state or util.state_dir()) / "trays" / tray / "merged" / "var" / "log" / "gpu-tray-lab" / "power.log"
    events = [(float(when), what) for when, what, *_rest in (line.split() for line in path.read_text().splitlines())]
    out, down = [], None
    for when, what in events:
        if what == "down":
            down = when
        elif what == "up" and down is not None:
            out.append((down, when))
            down = None
    if down is not None:
        out.append((down, None))
    return out


def overlap(a, b):
    end_a = a[1] if a[1] is not None else float("inf")
    end_b = b[1] if b[1] is not None else float("inf")
    return a[0] < end_b and b[0] < end_a


def periods(by_tray):
    """The reboot periods of {tray: [(down, up)]}: a list of {trays, start, end} in time order, each the trays whose
    windows chain into one stretch of time (end None while a tray is still down)."""
    items = sorted((window, tray) for tray, wins in by_tray.items() for window in wins)
    out = []
    for (down, up), tray in items:
        end = float("inf") if up is None else up
        if out and down < out[-1]["end"]:
            out[-1]["trays"].append(tray)
            out[-1]["end"] = max(out[-1]["end"], end)
        else:
            out.append({"trays": [tray], "start": down, "end": end})
    for period in out:
        if period["end"] == float("inf"):
            period["end"] = None
    return out
