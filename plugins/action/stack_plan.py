# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin gpu_tray.cluster.stack_plan: plan a recipe's chart stack on the controller.

    read (site values files and templates, a vendored bundle's record, an earlier bundle)
      ->  plan (plugins/plugin_utils/stack_plan.py, pure)  ->  the stack role's install loop or the bundle's writes

``step: plan`` returns the plan (components in install order with values, objects, release arguments, tiers,
digest). ``step: bundle`` adds what a render changes in ``bundle_dir`` (on the controller, where render_bundle.yml
runs): the paths to remove, the charts to pull, the manifests to fetch, the charts to unpack. ``step: bundle_files``
runs after those writes and returns every text file of the bundle, provenance.yaml, the air-gap kit (mirror/,
plugin_utils/airgap.py) and checksums.txt included.
The action changes nothing itself; the role writes with real modules (check mode and --diff honest there).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import hashlib
import os

import yaml

from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native, to_text
from ansible.plugins.action import ActionBase

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import airgap, bundle, bundle_files, registry, stack_plan
from ansible_collections.gpu_tray.cluster.plugins.plugin_utils.stack import StackError

ARGUMENT_SPEC = dict(
    site=dict(type='dict', required=True),
    step=dict(type='str', default='plan', choices=['plan', 'bundle', 'bundle_files']),
    vendored=dict(type='dict'),
    bundle_dir=dict(type='path'),
    formats=dict(type='raw', default=['helmfile']),
    settings=dict(type='dict', default={}),
    vendor_charts=dict(type='bool', default=False),
)


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, 'rb') as handle:
        for block in iter(lambda: handle.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def _same(path, text):
    try:
        with open(path, 'rb') as handle:
            return handle.read() == text.encode('utf-8')
    except (IOError, OSError):
        return False


def listing(root):
    """Every file and folder under ``root``, relative, hidden top-level entries (a .git) left out."""
    out = []
    if not os.path.isdir(root):
        return out
    for base, dirs, names in os.walk(root):
        rel = os.path.relpath(base, root)
        if rel == '.':
            dirs[:] = [d for d in dirs if not d.startswith('.')]
            names = [n for n in names if not n.startswith('.')]
        for name in dirs + names:
            out.append(name if rel == '.' else '%s/%s' % (rel.replace(os.sep, '/'), name))
    return sorted(out)


def vendored_input(raw):
    """The role's reads of a vendored bundle (slurp of provenance.yaml, find of its archives) as the planner's input."""
    root = raw['dir']
    try:
        doc = yaml.safe_load(base64.b64decode((raw.get('provenance') or {}).get('content') or '')) or {}
    except (ValueError, TypeError, yaml.YAMLError) as exc:
        raise StackError('%s/provenance.yaml is not YAML: %s' % (root, exc))
    digests = {}
    for item in (raw.get('archives') or {}).get('files') or []:
        digests[os.path.relpath(item['path'], root).replace(os.sep, '/')] = item.get('checksum')
    return {'dir': root, 'provenance': doc if isinstance(doc, dict) else {}, 'digests': digests}


def _missing(path, sha256):
    """True when ``path`` is not there or its sha256 is not the pinned one (it must be fetched)."""
    return not os.path.isfile(path) or _sha256(path) != sha256


def _only_crds(path, url):
    """A fetched manifest goes to a local chart's crds/ (kept on uninstall): refuse one that holds other kinds."""
    if not os.path.isfile(path):
        return
    with open(path) as handle:
        kinds = sorted(set(str((doc or {}).get('kind')) for doc in yaml.safe_load_all(handle)
                           if isinstance(doc, dict)) - {'CustomResourceDefinition'})
    if kinds:
        raise StackError('the fetched manifest %s holds %s besides CustomResourceDefinitions: fetched manifests are '
                         'installed as CRDs (kept when their release is removed); apply other kinds as a component\'s '
                         'manifests' % (url, ', '.join(kinds)))


class ActionModule(ActionBase):

    TRANSFERS_FILES = False
    _supports_check_mode = True

    def _template(self, path, task_vars, extra=None):
        """A site file rendered as the template lookup renders it (the inventory's variables, plus ``extra``)."""
        lookup = self._shared_loader_obj.lookup_loader.get('ansible.builtin.template', loader=self._loader,
                                                           templar=self._templar)
        return to_text(lookup.run([path], variables=task_vars, template_vars=extra or {})[0])

    def _site_files(self, site, task_vars):
        """The site's own (absolute) values files, templated and parsed."""
        out = {}
        for comp in (site.get('overrides') or {}).values():
            for path in (comp or {}).get('values_files') or []:
                if str(path).startswith('/') and path not in out:
                    out[path] = yaml.safe_load(self._template(path, task_vars))
        for comp in (site.get('extra_catalog') or {}).values():
            for path in (comp or {}).get('values_files') or []:
                if str(path).startswith('/') and path not in out:
                    out[path] = yaml.safe_load(self._template(path, task_vars))
        for recipe in (site.get('extra_recipes') or {}).values():
            for ref in ((recipe or {}).get('components') or {}).values():
                for path in (ref or {}).get('values_files') or []:
                    if str(path).startswith('/') and path not in out:
                        out[path] = yaml.safe_load(self._template(path, task_vars))
        return out

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        task_vars = task_vars or {}
        site = dict(args['site'])

        def render_template(path, variables):
            return list(yaml.safe_load_all(self._template(path, task_vars, variables)))

        try:
            if args['vendored']:
                site['vendored'] = vendored_input(args['vendored'])
            plan = stack_plan.plan(site, self._site_files(site, task_vars), render_template)
            result.update(changed=False, plan=plan, msg=plan['summary'])
            for note in plan['notes']:
                self._display.warning(note)
            if args['step'] != 'plan':
                result['bundle'] = self._bundle(plan, args, site)
        except (StackError, registry.RegistryError) as exc:
            raise AnsibleActionFail(to_native(exc))
        except (IOError, OSError, yaml.YAMLError) as exc:
            raise AnsibleActionFail('stack_plan: cannot read a site file: %s' % to_native(exc))
        return result

    def _bundle(self, plan, args, site):
        root = args['bundle_dir']
        if not root:
            raise StackError('no bundle directory: set gpu_tray_bundle_dir')
        formats = bundle.formats(args['formats'])
        cfg = bundle.settings(args['settings'])
        if 'argocd' in formats and not cfg['repo_url']:
            raise StackError('the argocd format needs the Git repository the bundle is committed to (Argo CD reads the '
                             'bundle from it): set gpu_tray_bundle_repo_url, and stack_bundle_repo_path when the '
                             'bundle is not at the repository\'s root')
        vendored = bundle.vendor_paths(plan['components']) if args['vendor_charts'] else {}
        digests = dict((v['archive'], _sha256(os.path.join(root, v['archive']))) for v in vendored.values()
                       if os.path.isfile(os.path.join(root, v['archive'])))
        previous = {}
        if os.path.isfile(os.path.join(root, 'provenance.yaml')):
            with open(os.path.join(root, 'provenance.yaml')) as handle:
                previous = yaml.safe_load(handle) or {}
        pull = bundle.stale_archives(vendored, previous, digests)
        # provenance.yaml records the archives once they are all there (after the pulls; a check-mode run that would
        # pull writes none)
        provenance = None
        if vendored and all(v['archive'] in digests for v in vendored.values()):
            provenance = bundle.provenance(plan['recipe'], plan['digest'], vendored, digests)
        repositories = stack_plan.site_inputs(site)['repositories']
        # the air-gap kit (mirror/): every chart, image and upstream file of this bundle, upstream and at the mirror
        kit = airgap.kit(plan, registry.sources(), provenance)
        text = bundle_files.files(plan, formats, cfg, vendored, provenance, repositories, kit) + airgap.files(kit)
        fetch = bundle_files.fetches(plan, formats)
        written = [f['path'] for f in text] + [f['dest'] for f in fetch] + ['checksums.txt']
        keep, unpacked = bundle_files.layout(written + (['provenance.yaml'] if vendored else []), vendored, formats)
        existing = listing(root)
        out = {'dir': root, 'formats': formats, 'digest': plan['digest'], 'vendored': len(vendored),
               'kit': airgap.summary(kit),
               'remove': [os.path.join(root, p) for p in bundle_files.stale(existing, keep, unpacked)],
               'pull': [dict(vendored[n], component=n, pull_argv=(
                   ['package', vendored[n]['pull']['ref']] if vendored[n]['pull'].get('package')
                   else ['pull', vendored[n]['pull']['ref']] + vendored[n]['pull']['args'])) for n in pull],
               'fetch': [dict(f, dest=os.path.join(root, f['dest']), file=f['url'].rsplit('/', 1)[1],
                              needed=_missing(os.path.join(root, f['dest']), f['sha256'])) for f in fetch],
               'unpack': [dict(v, component=n) for n, v in vendored.items()] if 'argocd' in formats else []}
        # the manifests to fetch once each (into a scratch directory, before anything is written): those a
        # destination lacks or holds with another sha256
        sources = []
        mirror = str(repositories.get('github_raw') or '').rstrip('/')
        mirror_url = 'file://' + mirror if mirror.startswith('/') else mirror
        for entry in out['fetch']:
            if entry['needed'] and entry['url'] not in [s['url'] for s in sources]:
                source = dict((k, entry[k]) for k in ('url', 'sha256', 'file'))
                # where the file sits below the mirror (what a site's mirror must hold), the URL where it is not below it
                below = bool(mirror_url) and entry['url'].startswith(mirror_url + '/')
                source['path'] = entry['url'][len(mirror_url) + 1:] if below else entry['url']
                sources.append(source)
        out['fetch_sources'] = sources
        out['github_raw'] = mirror
        if args['step'] == 'bundle_files':
            for entry in fetch:
                _only_crds(os.path.join(root, entry['dest']), entry['url'])
            sums = dict((f['path'], bundle_files.sha256_text(f['content'])) for f in text)
            sums.update((f['dest'], f['sha256']) for f in fetch)
            removed = set(os.path.relpath(p, root) for p in out['remove'])
            for path in existing:
                full = os.path.join(root, path)
                if path in sums or path in removed or path == 'checksums.txt' or not os.path.isfile(full):
                    continue
                sums[path] = _sha256(full)
            checksums = bundle.checksums(sums)
            out['files'] = text + [{'path': 'checksums.txt', 'content': checksums}]
            out['bundle_digest'] = bundle.bundle_digest(checksums)
            # what the write would change (check mode reports it instead of writing)
            out['changes'] = [f['path'] for f in out['files'] if not _same(os.path.join(root, f['path']), f['content'])]
        return out
