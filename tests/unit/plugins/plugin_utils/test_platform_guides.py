# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What each platform asks of a tray - as the preflight, kernel_tuning, imex, rdma_netns and rdma_modules read it
from the platform profile (plugin_utils/platform.py) - against tables written from the guides: the NVKE GB200 and
RKE2 VR200 setup guides and the nvidia-tuned profile contents (reference nodeprep.md 1.5), not from the profiles."""

import re

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform

# nodeprep.md 1.5: nvidia-base [bootloader] init_on_alloc=0 + <accelerator>-performance [bootloader], identical for
# gb200 and vr200 and for every intent (the hugepage arguments are the platform's, below)
TUNED_CMDLINE = ['init_on_alloc=0', 'iommu.passthrough=1', 'console=tty0', 'console=ttyS0,115200n8',
                 'numa_balancing=disable', 'earlycon']
# [sysctl]: nvidia-base, then <accelerator>-performance, then the intent's own
BASE = {'net.ipv4.conf.all.arp_announce': '2', 'net.ipv4.conf.default.arp_announce': '2',
        'net.ipv4.conf.all.arp_ignore': '1', 'net.ipv4.conf.default.arp_ignore': '1'}
PERFORMANCE = dict(BASE, **{'fs.inotify.max_user_instances': '65535', 'fs.inotify.max_user_watches': '524288',
                            'kernel.threads-max': '16512444', 'vm.min_free_kbytes': '65536',
                            'vm.overcommit_memory': '1'})
TRAINING = dict(PERFORMANCE, **{
    'net.core.rmem_max': '536870912', 'net.core.wmem_max': '536870912', 'net.core.rmem_default': '134217728',
    'net.core.wmem_default': '134217728', 'net.ipv4.tcp_rmem': '4096 87380 268435456',
    'net.ipv4.tcp_wmem': '4096 65536 268435456', 'net.core.netdev_max_backlog': '10000',
    'net.ipv4.tcp_max_syn_backlog': '8192', 'net.ipv4.tcp_congestion_control': 'bbr',
    'net.core.default_qdisc': 'fq'})
INFERENCE = dict(PERFORMANCE, **{'vm.swappiness': '1'})
# the pools: upstream's "hugepagesz=2M hugepages=5128 hugepagesz=1G hugepages=2" without the 1G pair a 64k-page
# kernel cannot hold (nodewright-packages#135); inference "hugepagesz=2M hugepages=8192 default_hugepagesz=2M"
TUNING = {
    'performance': (PERFORMANCE, [{'size': '2M', 'count': 5128}], ''),
    'multiNodeTraining': (TRAINING, [{'size': '2M', 'count': 5128}], ''),
    'inference': (INFERENCE, [{'size': '2M', 'count': 8192}], '2M'),
}
# what upstream's profiles ask for, which each platform file keeps beside its own pools for reference (the kernel_tuning
# README points at it)
UPSTREAM_POOLS = {
    'performance': [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}],
    'multiNodeTraining': [{'size': '2M', 'count': 5128}, {'size': '1G', 'count': 2}],
    'inference': [{'size': '2M', 'count': 8192}],
}

# The guides' platform facts. GB200: Ubuntu 24.04 with the -nvidia-64k kernel; four ConnectX-7 rails (mlx5_2 is the
# BlueField-3 representor); firmware SR-IOV with NUM_OF_VFS 16, VFs are pod ports whose P_Keys matter; the toolkit
# reads RUNTIME_CONFIG_SOURCE=file; rdma_ucm, ib_umad, ib_ipoib loaded by the recipe; the GPU Operator brings the driver
# (no host IMEX to mask); nvidia-tuned's bootloader step runs for service rke2 only (no intent on NVKE).
# VR200: Ubuntu 26.04 with 7.0.0-*-nvidia-bos-64k; the host nvidia-imex service masked; ib_core netns_mode exclusive
# (rdma-netns-exclusive); the NICs are dranet's (no SR-IOV rails, no VFs, no firmware policy); the toolkit keeps its
# own containerd source (CDI + NRI: it never rewrites RKE2's config.toml.tmpl); training multiNodeTraining, inference
# inference.
GUIDES = {
    'nvke-gb200': {
        'os': ('ubuntu', '24.04'), 'kernels': (['6.8.0-1021-nvidia-64k'],
                                               ['6.8.0-1021-nvidia', '6.8.0-1021-generic', '6.8.0-1021-nvidia-64k-x']),
        'rails': ['mlx5_0', 'mlx5_1', 'mlx5_3', 'mlx5_4'], 'sriov': {'vfs': True, 'num_vfs': 16},
        'firmware': True, 'runtime_config_source': 'file', 'imex': 'unmanaged', 'netns': 'unmanaged',
        'modules': ['rdma_ucm', 'ib_umad', 'ib_ipoib'], 'accelerator': 'gb200',
        'recipes': {'gb200-nvke-ubuntu-training': '', 'gb200-nvke-ubuntu-training-kubeflow': ''},
        'default_recipe': 'gb200-nvke-ubuntu-training'},
    'rke2-vr200': {
        'os': ('ubuntu', '26.04'), 'kernels': (['7.0.0-1003-nvidia-bos-64k'],
                                               ['7.0.0-1003-nvidia-bos', '6.8.0-1021-nvidia-64k', '7.0.0-1003-generic']),
        'rails': [], 'sriov': {'vfs': False, 'num_vfs': 0}, 'firmware': False, 'runtime_config_source': None,
        'imex': 'masked', 'netns': 'exclusive', 'modules': [], 'accelerator': 'vr200',
        'recipes': {'vr200-rke2-ubuntu-training': 'multiNodeTraining', 'vr200-rke2-ubuntu-inference': 'inference',
                    'vr200-rke2-ubuntu-inference-dynamo': 'inference'},
        'default_recipe': 'vr200-rke2-ubuntu-training'}}


def test_the_platforms_are_the_guides():
    assert platform.names() == sorted(GUIDES)


@pytest.mark.parametrize('name', sorted(GUIDES))
def test_each_platform_asks_of_a_tray_what_its_guide_says(name):
    want, profile = GUIDES[name], platform.load(name)
    assert (profile['os']['os_id'], profile['os']['os_version_id']) == want['os']
    accepted, refused = want['kernels']
    for kernel in accepted:
        assert re.search(profile['os']['kernel_pattern'], kernel), kernel
    for kernel in refused:
        assert not re.search(profile['os']['kernel_pattern'], kernel), kernel
    assert profile['rails'] == want['rails'] and 'mlx5_2' not in profile['rails']
    assert profile['sriov'] == want['sriov']
    assert profile['firmware']['check'] is want['firmware']
    assert profile['containerd']['runtime_config_source'] == want['runtime_config_source']
    assert profile['imex']['host_service'] == want['imex']
    assert profile['rdma']['netns_mode'] == want['netns']
    assert profile['rdma']['modules'] == want['modules']
    assert profile['accelerator'] == want['accelerator']
    assert dict((r, platform.recipe_intent(profile, r)) for r in profile['recipes']) == want['recipes']
    assert profile['default_recipe'] == want['default_recipe']


@pytest.mark.parametrize('name', sorted(GUIDES))
@pytest.mark.parametrize('intent', sorted(TUNING))
def test_each_intent_writes_the_nvidia_tuned_profile_of_the_reference(name, intent):
    sysctls, pools, default_size = TUNING[intent]
    got = platform.tuning(platform.load(name), intent)
    assert got['cmdline'] == TUNED_CMDLINE
    assert got['sysctls'] == sysctls
    assert list(got['sysctls'])[:4] == list(BASE)                    # nvidia-base first: the includes' order
    assert got['hugepages'] == pools and got['default_hugepagesz'] == default_size
    assert platform.load(name)['tuning']['intents'][intent]['upstream_hugepages'] == UPSTREAM_POOLS[intent]


def test_a_recipe_without_an_intent_tunes_nothing():
    gb200 = platform.load('nvke-gb200')
    for recipe in gb200['recipes']:
        assert platform.tuning(gb200, platform.recipe_intent(gb200, recipe)) == {
            'cmdline': [], 'hugepages': [], 'default_hugepagesz': '', 'sysctls': {}}
