# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reads of the action gpu_tray.cluster.stack_plan that decide a render: which fetched manifests are missing,
and the refusal of a fetched manifest that is not CRDs only (it goes to a local chart's crds/, kept on uninstall)."""

import hashlib

import pytest

from ansible_collections.gpu_tray.cluster.plugins.action import stack_plan
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.stack import StackError

CRD = 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.x}\n'


def test_a_fetched_manifest_of_crds_only_passes_and_another_kind_is_refused(tmp_path):
    good = tmp_path / 'good.yaml'
    good.write_text(CRD + '---\n' + CRD.replace('a.x', 'b.x'))
    stack_plan._only_crds(str(good), 'https://m/good.yaml')
    stack_plan._only_crds(str(tmp_path / 'not-fetched-yet.yaml'), 'https://m/x.yaml')
    bad = tmp_path / 'bad.yaml'
    bad.write_text(CRD + '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n')
    with pytest.raises(StackError, match=r'^the fetched manifest https://m/bad\.yaml holds ConfigMap besides '
                                         r'CustomResourceDefinitions: '):
        stack_plan._only_crds(str(bad), 'https://m/bad.yaml')


def test_a_manifest_is_fetched_when_missing_or_not_the_pinned_bytes(tmp_path):
    path = tmp_path / 'a.yaml'
    assert stack_plan._missing(str(path), 'a' * 64)
    path.write_text(CRD)
    pinned = hashlib.sha256(CRD.encode()).hexdigest()
    assert not stack_plan._missing(str(path), pinned)
    assert stack_plan._missing(str(path), 'b' * 64)
