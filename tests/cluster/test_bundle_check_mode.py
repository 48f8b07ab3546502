# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""render_bundle.yml --check into a folder that does not exist, and the render's temp dir (issue 54 item 3).

The inference recipes fetch the pinned Gateway API / InferencePool CRDs (agentgateway-crds) into a scratch directory
before anything is written. ``--check`` into a new folder failed ("Destination directory .../components/agentgateway-
crds-pre does not exist": the copy ran in check mode after the folders it needs were only reported), and every such
run left its 1.2 MB gpu-tray-fetch-* folder in the temp dir (its removal was skipped in check mode). The CRDs are the
REAL v1.6.1 / v1.5.0 files (a mirror of the upstream data as stack_repositories.github_raw: their sha256 pins hold).
"""

import json
import os

from stackhelpers import recap, run_playbook, stack_inventory
from upstreamdata import MISSING, ROOT, crd_mirror, unavailable

RECIPE = "vr200-rke2-ubuntu-inference"


def _render(tmp_path, bundle, *more):
    """render_bundle.yml of the inference recipe with the mirror, TMPDIR a folder of its own (the temp dir the
    scratch directories are made in); returns (rc, output, what is left in that temp dir)."""
    if MISSING:
        unavailable(MISSING)
    mirror = tmp_path / "github-raw"
    if not mirror.exists():
        crd_mirror(mirror, ROOT)
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    inventory = stack_inventory(tmp_path, RECIPE, {"gpu_tray_stack_overrides": {}})
    rc, out = run_playbook("gpu_tray.cluster.render_bundle", "-e", "gpu_tray_bundle_dir=%s" % bundle,
                           "-e", "gpu_tray_bundle_format=helmfile,flux",
                           "-e", json.dumps({"stack_repositories": {"github_raw": str(mirror)}}), *more,
                           inventory=inventory, TMPDIR=str(temp))
    return rc, out, sorted(name for name in os.listdir(str(temp)) if name.startswith("gpu-tray-"))


def test_check_mode_into_a_new_folder_says_what_it_would_write_and_leaves_nothing(tmp_path):
    bundle = tmp_path / "new" / "bundle"
    rc, out, left = _render(tmp_path, bundle, "--check")
    assert rc == 0, out[-4000:]
    assert "would put %s/components/agentgateway-crds-pre/" % bundle in out, out[-4000:]
    assert "would write " in out and "plan.yaml" in out, out[-4000:]
    # the air-gap kit is a file of the bundle like the others: check mode says it would write it
    assert "mirror/kit.yaml, mirror/images.txt" in out.split("would write ", 1)[1], out[-4000:]
    assert not bundle.exists() and not (tmp_path / "new").exists()
    assert left == [], left
    # the real render into the same folder then writes what check mode said, and leaves nothing behind either
    rc, out, left = _render(tmp_path, bundle)
    assert rc == 0 and recap(out)["failed"] == 0, out[-4000:]
    crds = sorted(os.listdir(str(bundle / "components" / "agentgateway-crds-pre")))
    assert len([name for name in crds if name.endswith(".yaml") and "networking" in name]) == 12, crds
    assert left == [], left
    # and a second check finds nothing to do
    rc, out, left = _render(tmp_path, bundle, "--check")
    assert rc == 0 and recap(out)["changed"] == 0 and left == [], out[-3000:]
