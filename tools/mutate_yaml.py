# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The YAML mutants of tools/mutate.py: one small bug at a time in the YAML that decides behaviour.

What is mutated, by file (everything else in a file - prose, Jinja expressions, comments - is left alone):

    roles/<role>/defaults/main.yml   the literal inside every Jinja ``default(...)``, every plain value that is a
                                     switch (a boolean, or a role option with choices in its argument spec: each
                                     OTHER choice, the unsafe value of a safety switch among them), an item dropped
                                     from every list (plain paths, timeouts and names are not mutated: offline,
                                     only a comparison with the argument spec's documented default sees them)
    roles/<role>/vars/*.yml          ``default(...)`` literals; in the data (not Jinja, not prose) every scalar, an
                                     item dropped from every list and an entry from every nested mapping of
                                     collections (a recipe's component, a recipe's NCCL variants)
    roles/<role>/meta/argument_specs.yml
                                     every option's ``default`` (other choices where it has some) and ``choices``
                                     (the whole key dropped, and each choice dropped)
    roles/preflight/vars/inventory_spec.yml
                                     the inventory spec's ``choices`` (whole and each), the known and the removed
                                     variables (each dropped)
    plugins/plugin_utils/platforms/*.yml and any other YAML named
                                     the data: scalars, list items, nested mapping entries as in vars/

Scalars: ``true`` <-> ``false``; an integer n -> n+1 (1 -> 0); a string's first letter in the other case
(``masked`` -> ``Masked``: a case variant a comparison with ``==`` does not accept), a string without letters
emptied, an empty string -> ``x``. Strings with white space (messages, descriptions, patterns) are prose and never
mutated. A mutant that does not parse, or parses to the same data, is not counted.
"""

from __future__ import print_function

import ast
import os
import re

import yaml

# a literal as the first argument of a Jinja default(): quoted strings, integers, booleans, flat lists
_DEFAULT = re.compile(r"\bdefault\(\s*(?P<lit>'[^'\n]*'|\"[^\"\n]*\"|-?\d+(?![\w.])|true\b|false\b|True\b|False\b"
                      r"|\[[^\[\]\n]*\])\s*[,)]")
_SPACE = re.compile(r'\s')
# variables whose data is what a report or failure message says (single words among the prose), not a decision
REPORT_TEXT = ('__rolling_reboot_failure_hints',)


class YamlMutant(object):
    """The fields tools/mutate.py's Mutant has (it is built into one there)."""

    def __init__(self, start, end, replacement, kind, description):
        self.start = start
        self.end = end
        self.replacement = replacement
        self.kind = kind
        self.description = description


def file_class(path):
    """What a YAML file is, for the rules above."""
    parts = path.split('/')
    if len(parts) >= 4 and parts[0] == 'roles':
        if parts[2] == 'defaults':
            return 'defaults'
        if parts[2] == 'meta' and parts[3] == 'argument_specs.yml':
            return 'spec'
        if parts[2] == 'vars':
            return 'inventory_spec' if parts[3] == 'inventory_spec.yml' else 'vars'
    return 'data'


def swap_first(value):
    """A string's first letter in the other case; no letter: emptied; empty: 'x'."""
    if value == '':
        return 'x'
    for index, char in enumerate(value):
        if char.isalpha() and char.swapcase() != char:
            return value[:index] + char.swapcase() + value[index + 1:]
    return ''


def _short(text, width=60):
    text = ' '.join(text.split())
    return text if len(text) <= width else text[:width - 3] + '...'


class YamlFinder(object):
    def __init__(self, path, text, choices=None):
        self.path = path
        self.text = text
        self.cls = file_class(path)
        self.choices = choices or {}          # role option -> its argument spec choices (defaults files)
        self.found = []

    # -- spans
    def line_start(self, index):
        return self.text.rfind('\n', 0, index) + 1

    def content_end(self, node):
        """End of a node's own text (block collections' end marks reach into the next line)."""
        end = node.end_mark.index
        while end > node.start_mark.index and self.text[end - 1] in ' \t\n':
            end -= 1
        return end

    def line_end(self, index):
        end = self.text.find('\n', index)
        return len(self.text) if end < 0 else end + 1

    def add(self, start, end, replacement, kind, description):
        self.found.append(YamlMutant(start, end, replacement, kind, description))

    # -- scalars
    def scalar(self, node, choices=None, where=''):
        start, end = node.start_mark.index, node.end_mark.index
        if node.tag == 'tag:yaml.org,2002:bool':
            value = node.value.lower() in ('true', 'yes', 'on')
            self.add(start, end, 'false' if value else 'true', 'constant', '%s%s -> %s' % (
                where, node.value, 'false' if value else 'true'))
        elif node.tag == 'tag:yaml.org,2002:int':
            try:
                value = int(node.value, 0)
            except ValueError:
                return
            new = 0 if value == 1 else value + 1
            self.add(start, end, str(new), 'constant', '%s%s -> %d' % (where, node.value, new))
        elif node.tag == 'tag:yaml.org,2002:str':
            value = node.value
            if '{{' in value or '{%' in value:
                self.jinja(node, where)
                return
            if _SPACE.search(value) or node.style in ('|', '>'):
                return                                  # prose
            others = [c for c in (choices or ()) if c != value and isinstance(c, str)]
            if choices and value in choices:
                for other in others:
                    self.add(start, end, _quote(other), 'choice', '%s%r -> %r' % (where, value, other))
                return
            new = swap_first(value)
            self.add(start, end, _quote(new), 'string', '%s%r -> %r' % (where, value, new))

    def jinja(self, node, where=''):
        """The literals inside default(...) of a Jinja string."""
        start, end = node.start_mark.index, node.end_mark.index
        segment = self.text[start:end]
        choices = self.choices.get(where.rstrip(': ')) if where else None
        for match in _DEFAULT.finditer(segment):
            lit = match.group('lit')
            lit_start = start + match.start('lit')
            lit_end = start + match.end('lit')
            for replacement, kind in _literal_mutants(lit, choices):
                self.add(lit_start, lit_end, replacement, kind, '%sdefault(%s) -> default(%s)' % (
                    where, _short(lit, 40), _short(replacement, 40)))

    # -- collections
    def drop_item(self, seq, index, where=''):
        item = seq.value[index]
        shown = _short(self.text[item.start_mark.index:self.content_end(item)], 50)
        if seq.flow_style:
            if len(seq.value) == 1:
                start, end = seq.start_mark.index, seq.end_mark.index
                self.add(start, end, '[]', 'data', '%sdrop list item %s' % (where, shown))
                return
            if index + 1 < len(seq.value):
                start, end = item.start_mark.index, seq.value[index + 1].start_mark.index
            else:
                start, end = self.content_end(seq.value[index - 1]), item.end_mark.index
            self.add(start, end, '', 'data', '%sdrop list item %s' % (where, shown))
            return
        start = self.line_start(item.start_mark.index)
        if not re.match(r'^[ \t]*-[ \t]', self.text[start:item.start_mark.index] + ' '):
            return
        if len(seq.value) == 1:
            return      # the last item of a block list: dropping it leaves no list (an explicit [] is another mutant)
        end = self.line_end(self.content_end(item))
        self.add(start, end, '', 'data', '%sdrop list item %s' % (where, shown))

    def drop_entry(self, mapping, index, where='', kind='data'):
        key, value = mapping.value[index]
        if mapping.flow_style:
            return
        start = self.line_start(key.start_mark.index)
        if self.text[start:key.start_mark.index].strip():
            return      # the first key of a list item ("- name: x"): dropping it is not one entry
        if len(mapping.value) == 1:
            return
        end = self.line_end(self.content_end(value))
        self.add(start, end, '', kind, '%sdrop %s' % (where, key.value))

    def data(self, node, depth, where=''):
        """Data (not a role option): every scalar, list item and nested mapping entry of collections."""
        if isinstance(node, yaml.ScalarNode):
            self.scalar(node, where=where)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.drop_item(node, index, where)
                if not isinstance(item, yaml.ScalarNode):
                    self.data(item, depth + 1, where)
        elif isinstance(node, yaml.MappingNode):
            for index, (key, value) in enumerate(node.value):
                if depth >= 1 and isinstance(value, (yaml.MappingNode, yaml.SequenceNode)):
                    self.drop_entry(node, index, where)
                self.data(value, depth + 1, '%s%s.' % (where, key.value) if where else '%s.' % key.value)

    # -- files
    def visit(self):
        root = yaml.compose(self.text, Loader=yaml.SafeLoader)
        if not isinstance(root, yaml.MappingNode):
            return
        if self.cls == 'defaults':
            for key, value in root.value:
                where = '%s: ' % key.value
                if isinstance(value, yaml.ScalarNode):
                    switch = value.tag == 'tag:yaml.org,2002:bool' or key.value in self.choices
                    if switch or '{{' in value.value:
                        self.scalar(value, self.choices.get(key.value), where)
                elif isinstance(value, yaml.SequenceNode):
                    for index in range(len(value.value)):
                        self.drop_item(value, index, where)
                else:
                    self.data(value, 1, key.value + '.')
        elif self.cls == 'spec':
            for _key, entry in root.value:                       # argument_specs
                for _ep, spec in entry.value:                     # main, tray_read, ...
                    self.options(_get(spec, 'options'))
        elif self.cls == 'inventory_spec':
            for key, value in root.value:
                if key.value == '__preflight_inventory_spec':
                    self.options(value)
                elif key.value == '__preflight_known_variables':
                    for index in range(len(value.value)):
                        self.drop_item(value, index, key.value + ': ')
                elif key.value == '__preflight_removed_variables':
                    for index in range(len(value.value)):
                        self.drop_entry(value, index, key.value + ': ')
        else:
            for key, value in root.value:
                if key.value in REPORT_TEXT:
                    continue
                if isinstance(value, yaml.ScalarNode) and self.cls == 'vars':
                    self.scalar(value, where='%s: ' % key.value)
                else:
                    self.data(value, 1, key.value + '.')

    def options(self, options):
        """An argument spec's options: default and choices of each (and of their suboptions)."""
        if not isinstance(options, yaml.MappingNode):
            return
        for name, spec in options.value:
            if not isinstance(spec, yaml.MappingNode):
                continue
            choices_node = _get(spec, 'choices')
            choices = ([item.value for item in choices_node.value]
                       if isinstance(choices_node, yaml.SequenceNode) else None)
            for index, (key, value) in enumerate(spec.value):
                where = '%s.%s: ' % (name.value, key.value)
                if key.value == 'default':
                    if isinstance(value, yaml.ScalarNode):
                        self.scalar(value, choices, where)
                    elif isinstance(value, yaml.SequenceNode):
                        for item in range(len(value.value)):
                            self.drop_item(value, item, where)
                elif key.value == 'choices' and isinstance(value, yaml.SequenceNode):
                    self.drop_entry(spec, index, '%s: ' % name.value, kind='choices')
                    for item in range(len(value.value)):
                        self.drop_item(value, item, where)
                elif key.value == 'options':
                    self.options(value)


def _get(mapping, name):
    if isinstance(mapping, yaml.MappingNode):
        for key, value in mapping.value:
            if key.value == name:
                return value
    return None


def _quote(value):
    return "'%s'" % value.replace("'", "''")


def _literal_mutants(lit, choices):
    """(replacement, kind) for one literal of a Jinja default()."""
    if lit[0] in '\'"':
        value = lit[1:-1]
        others = [c for c in (choices or ()) if isinstance(c, str) and c != value]
        if choices and value in choices and others:
            return [(lit[0] + other + lit[0], 'choice') for other in others]
        return [(lit[0] + swap_first(value) + lit[0], 'default')]
    if lit in ('true', 'false', 'True', 'False'):
        flipped = {'true': 'false', 'false': 'true', 'True': 'False', 'False': 'True'}[lit]
        return [(flipped, 'default')]
    if lit.startswith('['):
        try:
            items = ast.literal_eval(lit)
        except (ValueError, SyntaxError):
            return []
        if not items:
            return []
        quote = '"' if '"' in lit else "'"
        out = []
        for index in range(len(items)):
            rest = items[:index] + items[index + 1:]
            out.append(('[' + ', '.join(_jinja_repr(item, quote) for item in rest) + ']', 'default'))
        return out
    value = int(lit)
    return [(str(0 if value == 1 else value + 1), 'default')]


def _jinja_repr(item, quote):
    if isinstance(item, str):
        return quote + item + quote
    return repr(item)


def role_choices(repo, path):
    """For roles/<role>/defaults/main.yml: {option: choices} of the role's argument spec (every entry point)."""
    parts = path.split('/')
    spec_file = os.path.join(repo, 'roles', parts[1], 'meta', 'argument_specs.yml')
    out = {}
    if not os.path.isfile(spec_file):
        return out
    with open(spec_file) as handle:
        spec = yaml.safe_load(handle) or {}
    for entry in (spec.get('argument_specs') or {}).values():
        for name, option in ((entry or {}).get('options') or {}).items():
            if isinstance(option, dict) and option.get('choices'):
                out[name] = option['choices']
    return out


def find(repo, path):
    """Every YAML mutant of ``path`` (relative to repo) as (start, end, replacement, kind, description), checked: the
    mutated text parses and its data differs."""
    with open(os.path.join(repo, path)) as handle:
        text = handle.read()
    original = yaml.safe_load(text)
    choices = role_choices(repo, path) if file_class(path) == 'defaults' else {}
    finder = YamlFinder(path, text, choices)
    finder.visit()
    out = []
    seen = set()
    for mutant in finder.found:
        mutated = text[:mutant.start] + mutant.replacement + text[mutant.end:]
        if (mutant.start, mutant.end, mutant.replacement) in seen or mutated == text:
            continue
        seen.add((mutant.start, mutant.end, mutant.replacement))
        try:
            data = yaml.safe_load(mutated)
        except yaml.YAMLError:
            continue
        if data == original:
            continue
        out.append(mutant)
    return text, out
