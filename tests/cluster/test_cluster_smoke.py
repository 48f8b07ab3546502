# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The smoke test of issue 4: kubernetes.core against the real API server (tests/cluster/smoke.yml)."""

import json
import os
import subprocess
import sys
import time

import yaml
from kubernetes import client

from ansible_env import checkout_env

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NAMESPACE, RELEASE, CRD = "gpu-tray-smoke", "smoke-app", "traychecks.smoke.gpu-tray.test"


def _leave_leftovers(kcluster, k8s_api):
    """What a smoke run that failed half-way leaves on a reused cluster: the CRD and a deployed release."""
    with open(os.path.join(HERE, "files", "traycheck-crd.yaml")) as fh:
        crd = yaml.safe_load(fh)
    ext = client.ApiextensionsV1Api(k8s_api)
    if CRD not in [c.metadata.name for c in ext.list_custom_resource_definition().items]:
        ext.create_custom_resource_definition(crd)
    subprocess.run([kcluster.helm, "upgrade", "--install", RELEASE, os.path.join(HERE, "charts", "smoke-app"),
                    "--namespace", NAMESPACE, "--create-namespace", "--kubeconfig", kcluster.kubeconfig],
                   check=True, capture_output=True, text=True)


def test_smoke_playbook(kcluster, k8s_api, tmp_path):
    _leave_leftovers(kcluster, k8s_api)
    result_file = tmp_path / "smoke.json"
    env = checkout_env(REPO, keep=True, nocolor=False)
    playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    t0 = time.time()
    res = subprocess.run([playbook, os.path.join(HERE, "smoke.yml"),
                          "-e", "kcluster_kubeconfig=%s" % kcluster.kubeconfig,
                          "-e", "kcluster_helm=%s" % kcluster.helm,
                          "-e", "smoke_result_file=%s" % result_file],
                         cwd=REPO, env=env, capture_output=True, text=True, check=False)
    elapsed = time.time() - t0
    print("smoke playbook: rc %d in %.1f s" % (res.returncode, elapsed))
    assert result_file.exists(), "smoke.yml wrote no results (rc %d):\n%s\n%s" % (res.returncode, res.stdout[-5000:], res.stderr[-3000:])
    r = json.loads(result_file.read_text())
    assert res.returncode == 0, "smoke.yml failed: %s\n%s" % (r.get("assert_msg"), res.stdout[-5000:])

    # CRD created and Established (k8s_info wait_condition)
    assert r["crd_create_changed"] is True
    established = [c for c in r["crd_conditions"] if c["type"] == "Established"]
    assert established and established[0]["status"] == "True"
    # a valid CR is created once, then left alone
    assert r["cr_good_changed"] is True and r["cr_good_again_changed"] is False
    # the server validated the CR against the CRD schema and rejected it: 422 Invalid, naming both fields
    assert r["cr_bad_rejected"] is True
    assert '"code":422' in r["cr_bad_message"] and '"reason":"Invalid"' in r["cr_bad_message"]
    assert "spec.enabled in body must be of type boolean" in r["cr_bad_message"]
    assert "spec.minBandwidthGbps in body should be less than or equal to 800" in r["cr_bad_message"]
    # helm install -> deployed and ready, re-run -> changed=false
    assert r["helm_install_changed"] is True and r["helm_install_status"] == "deployed"
    assert int(r["deploy_installed_ready"]) == 2
    assert r["helm_again_changed"] is False
    # atomic upgrade to :broken failed and rolled back to revision 1's image
    assert r["helm_broken_failed"] is True
    assert "has been rolled back due to atomic being set" in r["helm_broken_stderr"]
    history = [(h["revision"], h["status"], h["description"]) for h in r["helm_history"]]
    assert [h[1] for h in history] == ["superseded", "failed", "deployed"], history
    assert history[-1][2] == "Rollback to 1"
    assert r["helm_after_status"] == "deployed" and str(r["helm_after_revision"]) == "3"
    assert r["deploy_after_image"].endswith(":1.0")
    assert int(r["deploy_after_available"]) == 2

    # cleaned up after itself (the `always:` section), waiting until the objects are really gone
    assert NAMESPACE not in [n.metadata.name for n in client.CoreV1Api(k8s_api).list_namespace().items]
    assert CRD not in [c.metadata.name for c in client.ApiextensionsV1Api(k8s_api).list_custom_resource_definition().items]
