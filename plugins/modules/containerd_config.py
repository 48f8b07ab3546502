#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: containerd_config
short_description: Check containerd root config and drop-in versions against the GPU Operator toolkit
version_added: 0.1.0
description:
  - Parses the containerd root config (TOML) for its C(version) and C(imports), follows the imports like containerd
    (globs, relative paths relative to the importing file's directory, imports inside imported files too, each
    file once), and reads the C(version) of every imported drop-in and of every C(*.toml) in I(dropin_dir).
  - Fails when an imported drop-in declares a higher C(version) than the root - containerd then refuses to start
    (C(drop-in config version 4 higher than root config version 2), NVIDIA/aicr#1688) and every pod on the node fails.
    A root without C(version) is version 1 to containerd, so any drop-in of version 2 or more fails the check.
  - Fails when a C(version) is not an integer (C(version = "2")) or C(imports) is not a list of strings - containerd
    cannot load such a file.
  - Warns when the root is version 2 or 3 while the GPU Operator toolkit would read its source config with
    C(command) (C(containerd config dump) migrates to version 4, so the toolkit would write a version 4 drop-in).
    The fix is the toolkit env C(RUNTIME_CONFIG_SOURCE=file).
  - Warns about a C(*.toml) in I(dropin_dir) that the root's C(imports) do not match (containerd ignores it).
  - I(config_path), I(dropin_dir) and every absolute C(imports) glob are paths of the host the config belongs to and
    are read under I(root) - so a config read from a mounted image or a test tree checks the drop-ins of that tree,
    never those of the machine the module runs on.
  - Not for RKE2, which renders its own containerd config under C(/var/lib/rancher/rke2/agent/etc/containerd).
author:
  - gpu_tray.cluster contributors (!UNKNOWN)
options:
  config_path:
    description:
      - The containerd root config, read under I(root).
    type: path
    default: /etc/containerd/config.toml
  root:
    description:
      - Where the file system of the host whose containerd config is checked is mounted. I(config_path),
        I(dropin_dir) and the absolute C(imports) globs (C(/etc/containerd/conf.d/*.toml)) are read under it.
      - Set it to check a mounted image or a simulated tray; the default C(/) checks the host itself.
    type: path
    default: /
  dropin_dir:
    description:
      - Directory (under I(root)) whose C(*.toml) drop-ins are checked in addition to the imported files (the NVIDIA toolkit writes
        C(99-nvidia.toml) there). Omit to check only what the root imports.
    type: path
  runtime_config_source:
    description:
      - The value the GPU Operator toolkit will use for C(RUNTIME_CONFIG_SOURCE) (comma list of C(command) and
        C(file[=<path>])). When omitted the toolkit default C(command,file) is assumed.
      - Ignored by the toolkit in NRI mode (C(cdi.nriPluginEnabled=true)).
    type: str
  fail_on_error:
    description:
      - Fail on a version mismatch or an unreadable drop-in. With C(false) the module only reports.
    type: bool
    default: true
extends_documentation_fragment:
  - gpu_tray.cluster.host_paths
  - gpu_tray.cluster.host_paths.sysfs_unused
  - gpu_tray.cluster.host_paths.proc_unused
requirements:
  - Python 3.11 or later on the managed host (C(tomllib)), or the C(tomli) package.
'''

EXAMPLES = r'''
- name: The toolkit's drop-in must not outrank the root config
  gpu_tray.cluster.containerd_config:
    dropin_dir: /etc/containerd/conf.d
    runtime_config_source: file

- name: The config of an image mounted at /mnt/image (its imports resolve under /mnt/image too)
  gpu_tray.cluster.containerd_config:
    root: /mnt/image
    dropin_dir: /etc/containerd/conf.d

- name: Before installing the GPU Operator with its default source
  gpu_tray.cluster.containerd_config:
    dropin_dir: /etc/containerd/conf.d
  register: containerd
'''

RETURN = r'''
config_path:
  description: The root config that was read (under O(root)).
  type: str
  returned: always
  sample: /etc/containerd/config.toml
version:
  description: Root config C(version); null when absent (containerd then assumes 1).
  type: int
  returned: always
  sample: 3
imports:
  description: The root's C(imports) globs.
  type: list
  elements: str
  returned: always
  sample: [/etc/containerd/conf.d/*.toml]
dropins:
  description:
    - Every drop-in found, in containerd's load order, with its version (null when absent), whether containerd
      imports it, the file that imports it (C(imported_by), null for a file of I(dropin_dir) nothing imports) and
      the read/parse error, if any.
  type: list
  elements: dict
  returned: always
  sample: [{path: /etc/containerd/conf.d/99-nvidia.toml, imported: true, imported_by: /etc/containerd/config.toml,
            version: 4, error: null}]
runtime_config_source:
  description: The toolkit config sources assumed, in order.
  type: list
  elements: str
  returned: always
  sample: [command, file]
toolkit_reads_command:
  description: Whether the toolkit's first source is C(command) (containerd config dump).
  type: bool
  returned: always
  sample: true
checks:
  description:
    - The check as one record (module_utils/check_record.py) - C(name), C(status) (C(passed); C(failed); C(warning)
      when it passed but something could not be judged), C(message) (RV(msg)), C(fix), C(details) (RV(problems),
      then what could not be judged), C(data) and C(object) - the shape the preflight, the validation and their
      reports give every check.
  type: list
  elements: dict
  returned: always
problems:
  description: Failure reasons (version mismatches, unreadable drop-ins, a non-integer version, imports that are
    not a list of strings).
  type: list
  elements: str
  returned: always
fix:
  description: What to do about the problems, or null when the check passed.
  type: str
  returned: always
msg:
  description:
    - One sentence naming the drop-ins above the root version and the files containerd cannot load (containerd's
      words in RV(problems), the fix in RV(fix)). The preflight's C(containerd_config) check says the same.
  type: str
  returned: always
  sample: "The containerd drop-in /etc/containerd/conf.d/99-nvidia.toml declares a version above the root config's 2."
'''

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.gpu_tray.cluster.plugins.module_utils.common import (
    check_argument_spec,
    report_verdict,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.containerd import (
    HAS_TOML,
    TOML_IMPORT_ERROR,
    ContainerdConfigError,
    inspect,
)
from ansible_collections.gpu_tray.cluster.plugins.module_utils.judges import judge_containerd


def build_module():
    return AnsibleModule(
        argument_spec=check_argument_spec(
            config_path=dict(type='path', default='/etc/containerd/config.toml'),
            root=dict(type='path', default='/'),
            dropin_dir=dict(type='path'),
            runtime_config_source=dict(type='str'),
        ),
        supports_check_mode=True,
    )


def main():
    module = build_module()
    params = module.params
    if not HAS_TOML:
        module.fail_json(msg=missing_required_lib('tomli (or Python >= 3.11 for tomllib)'),
                         exception=TOML_IMPORT_ERROR)
    try:
        result, errors, warnings = inspect(params['config_path'], params['dropin_dir'],
                                           params['runtime_config_source'], root=params['root'])
    except ContainerdConfigError as exc:
        # a root config containerd cannot load is an error whatever fail_on_error says: nothing was checked
        judged = judge_containerd(error=str(exc))
        module.fail_json(changed=False, msg=judged['message'], problems=judged['details'], fix=judged['fix'],
                         checks=[judged])
    judged = judge_containerd(result, errors, warnings)
    report_verdict(module, judged, **result)


if __name__ == '__main__':
    main()
