# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter inventory_problems: gpu_tray_* values against the roles' argument specs, the P_Key rule and the platform
profiles - one message per problem, naming the inventory variable."""

import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpu_tray.cluster.plugins.filter.inventory_problems import inventory_problems
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
SPEC = yaml.safe_load(open(os.path.join(REPO, 'roles', 'preflight', 'vars', 'inventory_spec.yml')))[
    '__preflight_inventory_spec']


def test_good_values_have_no_problem():
    assert inventory_problems({'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_recipe': 'vr200-rke2-ubuntu-inference',
                               'gpu_tray_tuned_intent': 'inference', 'gpu_tray_pkey': 0x8001}, SPEC) == []
    assert inventory_problems({'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_tuned_intent': ''}, SPEC) == []


@pytest.mark.parametrize('values, problem', [
    ({'gpu_tray_platform': 'rke2-vr300'},
     'value of gpu_tray_platform must be one of: nvke-gb200, rke2-vr200, got: rke2-vr300'),
    ({'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_recipe': 'vr200-rke2-ubuntu-training'},
     'gpu_tray_recipe vr200-rke2-ubuntu-training is a recipe of platform rke2-vr200, not of gpu_tray_platform '
     'nvke-gb200'),
    ({'gpu_tray_pkey': '0x8000'}, 'gpu_tray_pkey: '),
])
def test_each_problem_names_the_inventory_variable(values, problem):
    found = inventory_problems(values, SPEC)
    assert len(found) == 1 and found[0].startswith(problem), found


def test_a_value_the_spec_refuses_is_reported_once():
    found = inventory_problems({'gpu_tray_recipe': 'rke2-vr200-common'}, SPEC)
    assert len(found) == 1 and 'gpu_tray_recipe' in found[0], found
    found = inventory_problems({'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_tuned_intent': 'turbo'}, SPEC)
    assert len(found) == 1 and 'gpu_tray_tuned_intent' in found[0], found
    # without choices in the spec, the profiles' check names the known recipes
    bare = dict(SPEC, gpu_tray_recipe={'type': 'str'})
    assert inventory_problems({'gpu_tray_recipe': 'x'}, bare) == [
        'value of gpu_tray_recipe must be one of: gb200-nvke-ubuntu-training, gb200-nvke-ubuntu-training-kubeflow, '
        'vr200-rke2-ubuntu-inference, vr200-rke2-ubuntu-inference-dynamo, vr200-rke2-ubuntu-training, got: x']
    assert inventory_problems({'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_tuned_intent': 'x'},
                              dict(SPEC, gpu_tray_tuned_intent={'type': 'str'})) == [
        'value of gpu_tray_tuned_intent must be one of: inference, multiNodeTraining, performance, got: x']


@pytest.mark.parametrize('values, spec', [(['gpu_tray_recipe'], SPEC), ({'gpu_tray_recipe': 'x'}, None), (None, None)])
def test_anything_but_two_mappings_is_refused_with_a_filter_error(values, spec):
    with pytest.raises(AnsibleFilterError, match='the input and spec must be mappings'):
        inventory_problems(values, spec)
