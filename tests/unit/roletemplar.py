# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A role's variables as its tasks see them, rendered in this process with ansible-core's own Templar: the role's
defaults/main.yml and vars/main.yml, the inventory's values given as keyword arguments (they win over the defaults,
as inventory variables do), the collection's lookups and filters. A fast stand-in for a localhost play when a test
wants the consequence of a default, a literal or a vars expression (what a preflight, planner or filter receives).

    value = render('rdma_modules', '__rdma_modules_inputs', gpu_tray_platform='nvke-gb200', group_names=['gpu_trays'])
"""

import os
import sys

import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible.utils.collection_loader import AnsibleCollectionConfig
from ansible.utils.collection_loader._collection_finder import _AnsibleCollectionFinder
from ansible.utils.collection_loader._collection_meta import _meta_yml_to_dict

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _collections():
    """The entry of sys.path above ansible_collections/gpu_tray/cluster that is this checkout (the unit conftest puts
    it there)."""
    for entry in sys.path:
        link = os.path.join(entry or '.', 'ansible_collections', 'gpu_tray', 'cluster')
        if os.path.isdir(link) and os.path.samefile(link, REPO):
            return entry
    raise RuntimeError('ansible_collections.gpu_tray.cluster is not importable from sys.path')


def _finder():
    """The collection loader the lookups and filters are found through (installed once per process). The unit tests
    import ansible_collections.gpu_tray.cluster through sys.path before it: the package then lacks the metadata the
    finder reads from meta/runtime.yml when it imports it itself, so it is read here the same way."""
    if AnsibleCollectionConfig.collection_finder is None:
        # packages of the collection imported through sys.path (a test that imports a lookup plugin's module) are
        # namespace packages without the paths the plugin loader reads: the finder imports them again
        for name in [n for n in sys.modules if n.startswith('ansible_collections.gpu_tray.cluster.')]:
            if getattr(sys.modules[name], '__file__', None) is None:
                del sys.modules[name]
        _AnsibleCollectionFinder(paths=[_collections()])._install()
    package = sys.modules.get('ansible_collections.gpu_tray.cluster')
    if package is not None and getattr(package, '_collection_meta', None) is None:
        with open(os.path.join(REPO, 'meta', 'runtime.yml'), 'rb') as handle:
            package._collection_meta = _meta_yml_to_dict(handle.read(), ('gpu_tray.cluster', 'runtime.yml')) or {}


def _trusted(value):
    """Role files are templates ansible trusts (plain YAML strings are not templated by ansible-core 2.19+)."""
    if isinstance(value, str):
        return trust_as_template(value)
    if isinstance(value, dict):
        return dict((key, _trusted(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_trusted(item) for item in value]
    return value


_READ = {}


def _read(path):
    """A role file's data, read once per content (mtime and size)."""
    stat = os.stat(path)
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        with open(path) as handle:
            _READ[key] = _trusted(yaml.safe_load(handle) or {})
    return _READ[key]


def role_variables(role, **inventory):
    """The role's defaults, then its vars (higher precedence), with the inventory's values over the defaults."""
    out = {}
    for part in ('defaults', 'inventory', 'vars'):
        path = os.path.join(REPO, 'roles', role, part, 'main.yml')
        if part == 'inventory':
            out.update(inventory)
        elif os.path.isfile(path):
            out.update(_read(path))
    out.setdefault('inventory_hostname', 'tray01')
    out.setdefault('group_names', ['gpu_trays'])
    out.setdefault('groups', {'all': [out['inventory_hostname']], 'gpu_trays': [out['inventory_hostname']]})
    return out


def _plain(value):
    """Python's own types (templated strings come back tagged)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, dict):
        return dict((_plain(key), _plain(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def render(role, name, **inventory):
    """The value of the role's variable ``name`` for a host with ``inventory``."""
    _finder()
    variables = role_variables(role, **inventory)
    return _plain(Templar(loader=DataLoader(), variables=variables).template(variables[name]))


def expression(role, text, **inventory):
    """A Jinja expression of the role (a task's argument, a when: condition written as {{ ... }}) for that host."""
    _finder()
    variables = role_variables(role, **inventory)
    return _plain(Templar(loader=DataLoader(), variables=variables).template(trust_as_template(text)))
