# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each recipe validates - its NCCL benchmarks and its conformance checks - against a table written from the
guides (the NVKE GB200 and RKE2 VR200 setup guides, AICR's validation blocks: aicr.md 1.2.2, 1.3), not from the code.

The benchmarks are what the validate role runs by default: its defaults' expression (validate_nccl_variants) and
the list the tasks iterate (__validate_nccl_variants), rendered by ansible-core's Templar (tests/unit/roletemplar.py). A
recipe added to the stack without a row here fails: someone has to say what the guides want it to run.
"""

import pytest

from roletemplar import render
from ansible_collections.gpu_tray.cluster.plugins.module_utils import conformance as cf
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry

VR200_TRAINING = {'platform-health', 'gpu-operator-health', 'accelerator-metrics', 'ai-service-metrics', 'dra-support',
                  'gang-scheduling', 'pod-autoscaling', 'secure-accelerator-access'}
VR200_INFERENCE = {'platform-health', 'gpu-operator-health', 'accelerator-metrics', 'ai-service-metrics', 'dra-support',
                   'inference-gateway', 'pod-autoscaling', 'secure-accelerator-access'}
# recipe: (benchmarks, conformance checks the guides name - None where the guide does not publish the list)
GUIDES = {
    # NVKE GB200 guide: nccl-all-reduce-bw-nvls passes on the reference tenant; nccl-all-reduce-bw-net waits for a
    # runtime with the per-rail VFs and attachments (the collection's NET run is that runtime). The NVKE conformance
    # list is not public (aicr.md 1.3 "Not found in public sources").
    'gb200-nvke-ubuntu-training': ({'nccl-all-reduce-bw-nvls', 'nccl-all-reduce-bw-net'}, None),
    # the same leaf plus Kubeflow Trainer (platform-kubeflow mixin)
    'gb200-nvke-ubuntu-training-kubeflow': ({'nccl-all-reduce-bw-nvls', 'nccl-all-reduce-bw-net'}, None),
    # RKE2 VR200 validation blocks (aicr.md 1.2.2): performance nccl-all-reduce-bw-nvls for training only,
    # inference-perf deferred for the inference leaves
    'vr200-rke2-ubuntu-training': ({'nccl-all-reduce-bw-nvls'}, VR200_TRAINING),
    'vr200-rke2-ubuntu-inference': (set(), VR200_INFERENCE),
    'vr200-rke2-ubuntu-inference-dynamo': (set(), VR200_INFERENCE | {'gang-scheduling', 'robust-controller'}),
}


def _recipes():
    return registry.deployable()


def _benchmarks(recipe):
    """nccl-all-reduce-bw-<variant> for every variant the performance phase runs for the recipe by default: the
    role's own variables (the recipe lookup of its defaults, then the list its tasks iterate) rendered by ansible's
    Templar."""
    variants = render('validate', '__validate_nccl_variants', validate_recipe=recipe)
    return set('nccl-all-reduce-bw-%s' % variant for variant in variants)


def test_every_recipe_of_the_stack_has_a_row_of_the_guides():
    assert _recipes() == sorted(GUIDES)


@pytest.mark.parametrize('recipe', sorted(GUIDES))
def test_each_recipe_runs_the_benchmarks_its_guide_names(recipe):
    assert _benchmarks(recipe) == GUIDES[recipe][0]


@pytest.mark.parametrize('recipe', sorted(GUIDES))
def test_each_recipe_runs_every_conformance_check_its_guide_names_that_the_collection_has(recipe):
    runs = set(cf.RECIPE_CHECKS[recipe])
    named = GUIDES[recipe][1]
    assert runs <= set(cf.CHECKS) and len(runs) == len(cf.RECIPE_CHECKS[recipe])
    if named is None:
        # not public: the NVKE leaves run the VR200 training list (the same AICR checks a training leaf declares)
        assert runs == VR200_TRAINING & set(cf.CHECKS)
    else:
        assert runs == named & set(cf.CHECKS)
