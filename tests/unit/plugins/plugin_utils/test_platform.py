# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Platform profiles (plugins/plugin_utils/platform.py and platforms/*.yml): every platform fact in one file per
platform, checked when loaded. The lookup over it runs in a real ansible-playbook: tests/unit/plugins/action."""

import os
import shutil

import pytest
import yaml

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import platform


def test_a_recipe_finds_its_platform_and_another_platforms_recipe_is_refused():
    """The platforms' facts against the guides, every recipe's intent included: test_platform_guides.py."""
    gb200 = platform.load('nvke-gb200')
    assert gb200['rdma'] == {'netns_mode': 'unmanaged', 'modules': ['rdma_ucm', 'ib_umad', 'ib_ipoib']}
    assert platform.for_recipe('gb200-nvke-ubuntu-training-kubeflow')['name'] == 'nvke-gb200'
    with pytest.raises(platform.ProfileError, match='no platform profile has recipe'):
        platform.for_recipe('rke2-vr200-common')
    with pytest.raises(platform.ProfileError, match="is not one of platform nvke-gb200's"):
        platform.recipe_intent(gb200, 'vr200-rke2-ubuntu-training')


def test_tuning_joins_the_tuned_profile_with_the_platforms_pools():
    # each intent's arguments, sysctls (in include order) and pools: test_platform_guides.py
    vr200 = platform.load('rke2-vr200')
    assert platform.tuning(vr200, '') == {'cmdline': [], 'hugepages': [], 'default_hugepagesz': '', 'sysctls': {}}
    with pytest.raises(platform.ProfileError, match='intent bogus has no nvidia-tuned profile'):
        platform.tuning(vr200, 'bogus')
    # no 1G pool on a 64k kernel in any default (NVIDIA/nodewright-packages#135)
    for name in platform.names():
        for entry in platform.load(name)['tuning']['intents'].values():
            assert '1G' not in [pool['size'] for pool in entry['hugepages']]


def test_the_bmc_is_required_where_preparing_the_trays_reboots_them():
    """bmc.required (the default of gpu_tray_bmc_required) follows what host preparation does on the platform: kernel
    arguments of a recipe's nvidia-tuned intent, or an ib_core netns_mode to set, take a reboot per tray."""
    for name in platform.names():
        profile = platform.load(name)
        reboots = profile['rdma']['netns_mode'] != 'unmanaged' or any(
            platform.tuning(profile, platform.recipe_intent(profile, recipe))['cmdline'] for recipe in profile['recipes'])
        assert profile['bmc'] == {'required': reboots}, name
    assert platform.load('rke2-vr200')['bmc']['required'] and not platform.load('nvke-gb200')['bmc']['required']


def test_a_loaded_profile_is_a_copy():
    first = platform.load('rke2-vr200')
    first['rails'].append('mlx5_9')
    assert platform.load('rke2-vr200')['rails'] == []


@pytest.fixture
def profiles(tmp_path):
    directory = tmp_path / 'platforms'
    shutil.copytree(platform.PLATFORM_DIR, str(directory))
    return directory


def broken(profiles, change, name='rke2-vr200'):
    """The error of loading the profile with one change (each from the shipped file)."""
    path = profiles / ('%s.yml' % name)
    data = yaml.safe_load(open(os.path.join(platform.PLATFORM_DIR, '%s.yml' % name)).read())
    change(data)
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(platform.ProfileError) as caught:
        platform.load(name, str(profiles))
    return str(caught.value)


def test_a_new_platform_is_one_file_and_its_recipes_are_the_registrys(profiles):
    data = yaml.safe_load((profiles / 'rke2-vr200.yml').read_text())
    data.update(name='rke2-vr300', default_recipe='vr300-rke2-ubuntu-training')
    (profiles / 'rke2-vr300.yml').write_text(yaml.safe_dump(data))
    assert platform.names(str(profiles)) == ['nvke-gb200', 'rke2-vr200', 'rke2-vr300']
    table = {'vr300-rke2-ubuntu-training': {'platform': 'rke2-vr300', 'tuned_intent': 'performance'},
             'vr200-rke2-ubuntu-training': {'platform': 'rke2-vr200', 'tuned_intent': 'multiNodeTraining'}}
    assert platform.load('rke2-vr300', str(profiles), table)['recipes'] == {
        'vr300-rke2-ubuntu-training': {'tuned_intent': 'performance'}}
    # the shipped registry has no recipe of that platform: its default recipe is refused
    with pytest.raises(platform.ProfileError, match='default_recipe: vr300-rke2-ubuntu-training is not one of its '
                                                    r'recipes \(\)'):
        platform.load('rke2-vr300', str(profiles))


def test_a_malformed_profile_names_the_file_and_key(profiles):
    assert broken(profiles, lambda d: d.update(recipes={'vr200-rke2-ubuntu-training': {'tuned_intent': ''}})) == (
        'rke2-vr200.yml: key recipes is not a platform fact - a recipe names its platform in the registry '
        '(plugins/plugin_utils/stack_data/recipes.yml)')              # a profile does not list recipes
    assert broken(profiles, lambda d: d.pop('rails')) == 'rke2-vr200.yml: key rails is missing'
    assert broken(profiles, lambda d: d['os'].pop('kernel_pattern')) == 'rke2-vr200.yml.os: key kernel_pattern is missing'
    assert broken(profiles, lambda d: d['sriov'].update(num_vfs=True)).startswith('rke2-vr200.yml.sriov.num_vfs: expected int')
    assert broken(profiles, lambda d: d['sriov'].update(num_vfs='16')).startswith('rke2-vr200.yml.sriov.num_vfs')
    assert 'imex.host_service: off is not one of' in broken(profiles, lambda d: d['imex'].update(host_service='off'))
    assert 'rdma.netns_mode: on is not one of' in broken(profiles, lambda d: d['rdma'].update(netns_mode='on'))
    assert 'default_recipe: x is not one of its recipes' in broken(profiles, lambda d: d.update(default_recipe='x'))
    assert 'has no nvidia-tuned profile turbo' in broken(
        profiles, lambda d: d['tuning']['intents'].update(turbo=d['tuning']['intents']['inference']))
    assert 'tuning.intents.inference: key hugepages is missing' in broken(
        profiles, lambda d: d['tuning']['intents']['inference'].pop('hugepages'))
    assert 'name is x, expected the file name rke2-vr200' in broken(profiles, lambda d: d.update(name='x'))
    assert broken(profiles, lambda d: d.update(os=[])) == 'rke2-vr200.yml.os: expected a mapping, got list'
    with pytest.raises(platform.ProfileError, match="no platform profile 'nope' .known: nvke-gb200, rke2-vr200"):
        platform.load('nope', str(profiles))
    shutil.copy(os.path.join(platform.PLATFORM_DIR, 'rke2-vr200.yml'), str(profiles / 'rke2-vr200.yml'))
    table = {'vr200-rke2-ubuntu-training': {'platform': 'rke2-vr200', 'tuned_intent': 'bogus'}}
    with pytest.raises(platform.ProfileError, match='rke2-vr200.yml.recipes.vr200-rke2-ubuntu-training.tuned_intent: '
                                                    '\'bogus\' is not "" or one of the tuning intents'):
        platform.load('rke2-vr200', str(profiles), table)


def test_an_intent_needs_both_the_tuned_arguments_and_the_sysctl_profile(profiles):
    """The profile of an intent is its [bootloader] arguments AND its [sysctl] sections: one without the other is
    refused, whichever is missing."""
    tuned_path = profiles / '_nvidia-tuned.yml'
    shipped = yaml.safe_load(tuned_path.read_text())
    for part in ('cmdline', 'sysctl_profiles'):
        tuned = yaml.safe_load(yaml.safe_dump(shipped))
        tuned[part].pop('inference')
        tuned_path.write_text(yaml.safe_dump(tuned))
        with pytest.raises(platform.ProfileError, match='tuning.intents.inference: .* has no nvidia-tuned profile '
                                                        'inference'):
            platform.load('rke2-vr200', str(profiles))
    tuned_path.write_text(yaml.safe_dump(shipped))
    assert platform.load('rke2-vr200', str(profiles))['name'] == 'rke2-vr200'


def test_every_stack_recipe_has_one_platform_and_the_cluster_rules_agree():
    """The registry's recipes, the cluster rules the API-host modules ship with (module_utils/recipes.py, generated:
    they cannot read the controller's data) and the profiles name the same recipes for the same platforms."""
    from ansible_collections.gpu_tray.cluster.plugins.module_utils import cluster_rules
    from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import registry

    deployable = registry.deployable()
    in_profiles = sorted(r for name in platform.names() for r in platform.load(name)['recipes'])
    assert deployable == in_profiles == sorted(cluster_rules.RECIPES)
    for name in platform.names():
        profile = platform.load(name)
        for recipe in profile['recipes']:
            assert cluster_rules.RECIPES[recipe]['platform'] == profile['accelerator']
            assert cluster_rules.RECIPES[recipe]['service'] == profile['service']
