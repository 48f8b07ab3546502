# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ComputeDomain of an NCCL nvls run (plugin_utils/nccl_launch.py) against the REAL DRA driver CRD of the pinned
component (../shared/upstream/charts/dra-driver-nvidia-gpu), strictly: a field the structural schema does not name
fails, as the API server would prune it. The rest of the run's objects: tests/cluster/test_nccl_offline.py."""
import copy

import pytest

import offline_schema as osc
from stackhelpers import collection_on_path

collection_on_path()
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import nccl_launch  # noqa: E402


def _domain(workload):
    plan = nccl_launch.run_plan({'run_id': '20261204101500-upst1', 'variant': 'nvls', 'workload': workload,
                                 'image': 'nvcr.io/nvidia/pytorch:25.06-py3', 'trays': 2, 'gpus_per_tray': 4,
                                 'timeout': 1800, 'ssh_private_key': 'PRIVATE', 'ssh_public_key': 'ssh-ed25519 AAAA'})
    domains = [o for o in plan['prepare'] if o['kind'] == 'ComputeDomain']
    assert len(domains) == 1
    return domains[0]


@pytest.mark.parametrize('workload', ['job', 'trainjob'])
def test_the_compute_domain_validates_against_the_real_crd(crd_index, workload):
    domain = _domain(workload)
    crd = crd_index.for_kind(domain['apiVersion'], domain['kind'])
    assert crd is not None, 'no real CRD serves %s %s' % (domain['apiVersion'], domain['kind'])
    assert crd_index.served(crd, domain['apiVersion'].rpartition('/')[2])
    osc.validate_custom_resource(domain, crd)
    # the claim template the driver creates is the one the workers claim
    assert domain['spec']['channel']['resourceClaimTemplate']['name'] == nccl_launch.IMEX_TEMPLATE


def test_a_field_the_compute_domain_crd_does_not_name_fails(crd_index):
    domain = copy.deepcopy(_domain('job'))
    domain['spec']['channel']['resourceClaimTemplateName'] = domain['spec']['channel'].pop('resourceClaimTemplate')
    with pytest.raises(osc.SchemaError, match='resourceClaimTemplate'):
        osc.validate_custom_resource(domain, crd_index.for_kind(domain['apiVersion'], domain['kind']))
