#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: stack_plan
short_description: Plan a recipe's chart stack on the controller - the same objects for every playbook
version_added: 0.1.0
description:
  - "The chart stack in one picture: B(data) (the recipe registry, component catalog and values files of
    C(plugins/plugin_utils/stack_data/)) + B(site inputs) (O(site): the inventory's recipe, overrides, mirrors, rails
    and their PCI addresses) -> B(plan) (C(plugins/plugin_utils/stack_plan.py), pure) -> the role
    C(gpu_tray.cluster.stack) installs it (one in-memory host per component, tiers in order), writes it as a bundle, or
    checks against it (validate, preflight)."
  - The plan depends on its inputs only - never on facts left on the trays - so one inventory gives the same
    components, objects and digest from C(render_bundle), C(deploy_stack) and C(site).
  - Refuses, naming what to set, an unknown recipe, an unpinned version, an unknown or cyclic dependency, a bad
    repository, an unknown override, values carrying C(ofedDriver) or C(driver.rdma), an SR-IOV recipe without the
    rails' PCI addresses (C(gpu_tray_rail_pci_addresses)) and two SriovNetworkNodePolicies with one selector.
  - O(step=bundle) adds what a render changes in O(bundle_dir) (on the controller); O(step=bundle_files), after the
    role pulled, fetched and unpacked, every file of the bundle with C(provenance.yaml) and C(checksums.txt).
  - Changes nothing itself; the role's tasks write with real modules.
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  site:
    description:
      - The site's inputs - C(recipe), C(overrides), C(extra_catalog), C(extra_recipes), C(repositories),
        C(registries), C(use_nodewright), C(serial), C(rails), C(rail_pci), C(num_vfs), C(ippool_base),
        C(ippool_prefix), C(ippool_per_node_block_size), C(helm_timeout) (the role's C(stack_*) variables without the
        prefix; C(vars/main.yml) of the role builds it).
    type: dict
    required: true
  step:
    description: C(plan) the plan; C(bundle) and what a render changes; C(bundle_files) and every file of the bundle.
    type: str
    choices: [plan, bundle, bundle_files]
    default: plan
  vendored:
    description:
      - Install from a vendored bundle - C(dir) (on the API host), C(provenance) (the result of C(ansible.builtin.slurp)
        of its C(provenance.yaml)) and C(archives) (the result of C(ansible.builtin.find) with sha256 checksums of
        its C(charts/)). Every chart must be there as recorded, or the plan is refused.
    type: dict
  bundle_dir:
    description: The bundle directory on the controller (O(step=bundle) and O(step=bundle_files)).
    type: path
  formats:
    description: Bundle formats - C(helmfile), C(argocd), C(flux); a list or a comma-separated string.
    type: raw
    default: [helmfile]
  settings:
    description: The GitOps settings (C(repo_url), C(revision), C(path), C(argocd_namespace), C(argocd_project),
      C(destination_server), C(flux_namespace), C(flux_source), C(retries)).
    type: dict
    default: {}
  vendor_charts:
    description: Vendor every chart into the bundle (C(charts/), C(provenance.yaml)).
    type: bool
    default: false
attributes:
  action:
    support: full
    description: An action plugin - the plan is computed on the controller.
  async:
    support: none
    description: Not as an asynchronous job.
  bypass_host_loop:
    support: none
    description: Runs once per host.
  check_mode:
    support: full
    description: Plans in check mode too; it changes nothing in any mode.
  diff_mode:
    support: none
    description: Changes nothing, so there is nothing to diff; the role's write tasks show their diffs.
  platform:
    support: full
    platforms: posix
    description: Reads files on the controller only.
seealso:
  - module: gpu_tray.cluster.tray_plan
  - plugin: gpu_tray.cluster.recipe
    plugin_type: lookup
'''

EXAMPLES = r'''
- name: Plan the inventory's recipe
  gpu_tray.cluster.stack_plan:
    site:
      recipe: gb200-nvke-ubuntu-training
      rails: [mlx5_0, mlx5_1, mlx5_3, mlx5_4]
      rail_pci: {mlx5_0: "0000:03:00.0", mlx5_1: "0002:03:00.0", mlx5_3: "0010:03:00.0", mlx5_4: "0012:03:00.0"}
  register: stack

- name: Show the components in install order
  ansible.builtin.debug:
    msg: "{{ stack.plan.components | map(attribute='name') | list }}"
'''

RETURN = r'''
plan:
  description:
    - C(recipe) (after an old name's alias), C(requested), C(notes), C(facts) (the registry's, null for a site
      recipe), C(chain), C(tiers), C(digest), C(summary), C(components) in install order - each with C(name),
      C(kind), C(chart), C(repository), C(version), C(namespace), C(tier), C(depends_on), C(values), C(objects)
      ({file - objects}), C(apply) (what is applied, its namespace first), C(custom_kinds), C(manifest_urls),
      C(files), C(manifests_phase), C(readiness), C(wait), C(timeout), and for a chart C(release) (the arguments of
      C(kubernetes.core.helm)).
    - C(expected) (components with their readiness CRDs and CRs), C(sriov_policies), C(sriov_networks) (resource and
      network of each rail) - what validate checks against.
  type: dict
  returned: always
bundle:
  description:
    - C(dir), C(formats), C(digest), C(vendored), C(remove) (paths), C(pull) (charts to pull with their C(pull_argv)),
      C(fetch) (C(url), C(sha256), C(dest)), C(unpack); with O(step=bundle_files) also C(files) (C({path, content}),
      C(checksums.txt) last) and C(bundle_digest).
  type: dict
  returned: when O(step) is not C(plan)
msg:
  description: The plan in one line (recipe, components, tiers, digest), or the refusal.
  type: str
  returned: always
'''
