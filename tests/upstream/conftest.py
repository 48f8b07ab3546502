# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/upstream: the five recipes' bundles held against the REAL upstream charts and CRDs at the pinned
versions (../shared/upstream, or GPU_TRAY_UPSTREAM): values key paths, custom resources, readiness gates and the
settings the platform guides insist on.

The data is beside the project in CI and absent from a user's clone: without it the whole folder is skipped
with one line; with GPU_TRAY_UPSTREAM_REQUIRE=1 (.ci/run sets it) it fails instead.
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "cluster"))   # offline_schema, stackhelpers

# the data: GPU_TRAY_UPSTREAM, else ../shared/upstream beside the checkout (tests/cluster/upstreamdata.py, where every
# test takes fetched data from). The helpers (upstream.py, jsonschema, the bundle renders) are imported only by the
# fixtures and tests that use them: without the data nothing is needed.
from upstreamdata import MISSING, ROOT  # noqa: E402  (tests/cluster on sys.path above)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # a skip raised here (not in a fixture) is reported at this line for every test: one summary line
    if not MISSING or os.path.dirname(str(item.fspath)) != HERE:
        return
    if os.environ.get("GPU_TRAY_UPSTREAM_REQUIRE") == "1":
        pytest.fail("%s (GPU_TRAY_UPSTREAM_REQUIRE=1: failing instead of skipping)" % MISSING, pytrace=False)
    pytest.skip("tests/upstream: %s" % MISSING)


@pytest.fixture(scope="session")
def upstream_root():
    return ROOT


@pytest.fixture(scope="session")
def crd_index():
    import upstream
    # network-operator's own copies first: 26.4.1 ships the Mellanox fork of the SR-IOV CRDs and the IPPool CRD
    # its operator applies (the standalone sriov-network-operator v1.6.0 data is older)
    return upstream.CrdIndex(os.path.join(ROOT, "charts"), preferred=["network-operator/"])


@pytest.fixture(scope="session")
def bundles(tmp_path_factory):
    """Each recipe rendered by playbooks/render_bundle.yml (the user's command), with NodeWright on so every
    manifest is built, the inference recipes' CRDs fetched from a mirror of the real files; in parallel.
    {recipe: bundle dir}."""
    import json
    from stackhelpers import render_bundles
    from upstream import RECIPES
    from upstreamdata import crd_mirror
    mirror = crd_mirror(tmp_path_factory.mktemp("github-raw"), ROOT)
    # only the key that moves: stack_repositories merges over the catalog's defaults
    extra = json.dumps({"stack_repositories": {"github_raw": mirror}})
    return render_bundles(tmp_path_factory.mktemp("upstream-bundles"), RECIPES, "-e", extra,
                          gpu_tray_stack_overrides={})
