# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every filter plugin registers, under its file's name, the function that file defines - what Ansible's plugin
loader calls for ``gpu_tray.cluster.<name>``. A plugin whose FilterModule registered nothing, another name or
another function would fail every playbook that uses it; the other unit tests call the functions directly."""

import ast
import glob
import importlib
import os

import pytest

FILTERS = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..', '..', 'plugins', 'filter'))
NAMES = sorted(os.path.basename(path)[:-3] for path in glob.glob(os.path.join(FILTERS, '*.py'))
               if not os.path.basename(path).startswith('_'))


def test_the_filter_directory_was_found():
    assert len(NAMES) >= 10 and 'role_result' in NAMES


@pytest.mark.parametrize('name', NAMES)
def test_the_plugin_registers_its_own_function_under_its_file_name(name):
    module = importlib.import_module('ansible_collections.gpu_tray.cluster.plugins.filter.' + name)
    registered = module.FilterModule().filters()
    assert registered == {name: getattr(module, name)}
    assert callable(registered[name])


@pytest.mark.parametrize('name', NAMES)
def test_the_plugin_imports_the_collections_code_only_inside_its_functions(name):
    """ansible-core loads every filter file of the collection, in every worker, to resolve any one filter, and
    compiles collection code without a bytecode cache: what a filter file imports at its top, every task using any
    of our filters pays for, per host (docs/performance.md "Filter plugins and the workers")."""
    with open(os.path.join(FILTERS, name + '.py')) as handle:
        tree = ast.parse(handle.read())
    top = [node.module for node in tree.body if isinstance(node, ast.ImportFrom)]
    top += [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
    assert [module for module in top if module.startswith('ansible_collections.')] == []
