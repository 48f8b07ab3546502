"""Every internal variable (``__<role>_*``, ``__gpu_tray_*``: a name that starts with two underscores) a role, a
playbook or a plugin reads is defined somewhere: a role's vars/ or defaults/, a ``set_fact``, a ``register``, a
``vars:`` (play, block, task, include/import), a ``loop_var``/``index_var``, ``include_vars``' ``name``, an
``add_host``'s variables, a ``vars_prompt``, a Jinja ``{% set %}``/``{% for %}``/macro argument, or the facts an
action plugin hands the play (its string constants).
A read of a name defined nowhere fails only when the task runs, and often only on the path nobody tested: commit
63144cd removed ``__validate_all_phases`` as "read nowhere" while the validate role's rescue still read it, so every
stopped validation ended in "'__validate_all_phases' is undefined" and wrote no evidence (issue 44).

The scan reads the parsed YAML (keys and values, never comments), the Jinja templates without their comments, and the
Python plugins' whole-string constants (``task_vars['__x']``, not docstrings); a handler's ``notify``/``listen``
topic is no variable. ``set_stats`` is not a definition: its
data goes to the job's artifacts, never to the play's variables."""
import ast
import re

import pytest
import yaml

from qualitykit import ROOT

NAME = re.compile(r"(?<!\w)__[a-z][a-z0-9_]*[a-z0-9](?!\w)")   # __x_y, never a Python __dunder__
WHOLE = re.compile(r"^__[a-z][a-z0-9_]*[a-z0-9]$")
SET_FACT = ("set_fact", "ansible.builtin.set_fact", "ansible.legacy.set_fact")
INCLUDE_VARS = ("include_vars", "ansible.builtin.include_vars", "ansible.legacy.include_vars")
ADD_HOST = ("add_host", "ansible.builtin.add_host", "ansible.legacy.add_host")
ADD_HOST_ARGS = {"name", "hostname", "host", "groups", "group", "groupname"}
TOPICS = ("notify", "listen")   # handler topics, not variables
JINJA_COMMENT = re.compile(r"\{#.*?#\}", re.S)
JINJA_SET = re.compile(r"\{%-?\s*set\s+([\w\s,]+?)\s*(?:=|-?%\})")
JINJA_FOR = re.compile(r"\{%-?\s*for\s+([\w\s,]+?)\s+in\s")
JINJA_MACRO = re.compile(r"\{%-?\s*macro\s+\w+\s*\(([^)]*)\)")


class _Loader(yaml.SafeLoader):
    """Ansible's YAML: !unsafe and !vault values read as plain strings."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node)
                              if isinstance(node, yaml.ScalarNode) else None)


def _names(text):
    return set(NAME.findall(text))


def _jinja_locals(text):
    """The names a Jinja expression or template defines for itself (set, for, macro arguments)."""
    out = set()
    for pattern in (JINJA_SET, JINJA_FOR, JINJA_MACRO):
        for group in pattern.findall(text):
            out.update(part.split("=")[0].strip() for part in group.split(","))
    return out


def _strings(node):
    """Every string of a parsed YAML document, keys included (not a handler's topic)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in TOPICS:
                continue
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
    elif isinstance(node, str):
        yield node


def _keys(value):
    return set(value) if isinstance(value, dict) else set()


def _defined_in(node):
    """The variables a parsed play, task list or block defines (see the module docstring)."""
    out = set()
    if isinstance(node, list):
        for item in node:
            out |= _defined_in(item)
        return out
    if not isinstance(node, dict):
        return out
    for key, value in node.items():
        if key == "vars":
            out |= _keys(value)
        elif key == "register" and isinstance(value, str):
            out.add(value)
        elif key in SET_FACT:
            out |= _keys(value) - {"cacheable"}
        elif key in ADD_HOST:
            out |= _keys(value) - ADD_HOST_ARGS   # the new host's variables
        elif key == "loop_control" and isinstance(value, dict):
            out.update(value[k] for k in ("loop_var", "index_var") if isinstance(value.get(k), str))
        elif key in INCLUDE_VARS and isinstance(value, dict) and isinstance(value.get("name"), str):
            out.add(value["name"])
        elif key == "vars_prompt" and isinstance(value, list):
            out.update(item["name"] for item in value if isinstance(item, dict) and "name" in item)
        out |= _defined_in(value)
    return out


def _python_constants(path):
    return set(node.value for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.Constant) and isinstance(node.value, str) and WHOLE.match(node.value))


def scan(root):
    """(defined, read): the internal names a collection tree at ``root`` defines, and {name: [files that read it]}."""
    defined, read = set(), {}

    def reads(names, path):
        for name in names:
            read.setdefault(name, []).append(str(path.relative_to(root)))

    for top in ("roles", "playbooks"):
        for path in sorted((root / top).rglob("*")):
            if not path.is_file():
                continue
            if path.suffix in (".yml", ".yaml"):
                documents = list(yaml.load_all(path.read_text(), Loader=_Loader))
                texts = [text for document in documents for text in _strings(document)]
                reads(set().union(*map(_names, texts)) if texts else set(), path)
                for text in texts:
                    defined |= _jinja_locals(text)
                for document in documents:
                    if path.parent.name in ("vars", "defaults") or path.parent.parent.name in ("vars", "defaults"):
                        defined |= _keys(document)   # a role's vars/defaults, a playbook's vars_files
                    defined |= _defined_in(document)
            elif path.suffix == ".j2":
                text = JINJA_COMMENT.sub("", path.read_text())
                reads(_names(text), path)
                defined |= _jinja_locals(text)
    for path in sorted((root / "plugins").rglob("*.py")):
        constants = _python_constants(path)
        if path.parent.name == "action":
            defined |= constants     # an action plugin's facts, set by the play's next task
        else:
            reads(constants, path)
    return defined, read


def undefined(root):
    defined, read = scan(root)
    return {name: files for name, files in sorted(read.items()) if name not in defined}


def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


DEFINING = {
    "roles/r/defaults/main.yml": "__r_default: 1\n",
    "roles/r/vars/main.yml": "__r_var: 1\n",
    "roles/r/tasks/main.yml": """
- name: Set
  ansible.builtin.set_fact:
    __r_fact: "{{ __r_default + __r_var }}"
    cacheable: false
- name: Block
  vars: {__r_block: 1}
  block:
    - name: Register
      ansible.builtin.command: [true]
      register: __r_registered
      notify: __r_topic
      loop: [1]
      loop_control: {loop_var: __r_item, index_var: __r_index}
  rescue:
    - name: Add a host
      ansible.builtin.add_host: {name: h, groups: [g], __r_host_var: 1}
    - name: Include
      ansible.builtin.include_vars: {file: x.yml, name: __r_included}
- name: Read them all
  ansible.builtin.debug:
    msg: >-
      {% set __r_local = 1 %}{% for __r_a, __r_b in [] %}{% endfor %}
      {{ __r_fact, __r_block, __r_registered, __r_item, __r_index, __r_included, __r_local, __r_a, __r_b,
         hostvars.x.__r_fact, hostvars.h.__r_host_var, __r_handed, __class__ }}
""",
    "roles/r/templates/t.j2": "{# __r_in_a_comment #}{% macro m(__r_arg) %}{{ __r_arg }}{% endmacro %}{{ __r_var }}\n",
    "playbooks/p.yml": """
# __r_in_a_yaml_comment
- name: Play
  hosts: all
  vars: {__p_play: 1}
  vars_prompt: [{name: __p_prompt, prompt: x}]
  tasks:
    - name: Read
      ansible.builtin.debug: {msg: "{{ __p_play ~ __p_prompt }}"}
""",
    "plugins/action/a.py": "KEY = '__r_handed'\n",
    "plugins/plugin_utils/u.py": '"""Mentions __r_in_a_docstring."""\nX = 1\n',
}


def test_the_scan_finds_every_way_to_define_a_variable(tmp_path):
    _write(tmp_path, DEFINING)
    defined, read = scan(tmp_path)
    assert undefined(tmp_path) == {}
    assert {"__r_fact", "__r_registered", "__r_item", "__r_index", "__r_included", "__r_local", "__r_arg",
            "__p_prompt", "__r_handed", "__r_host_var"} <= defined
    assert "__r_topic" not in read
    assert "__r_in_a_comment" not in read and "__r_in_a_yaml_comment" not in read
    assert "__r_in_a_docstring" not in read and "__class__" not in read


@pytest.mark.parametrize("rel, text", [
    ("roles/r/tasks/main.yml", "- name: Rescue\n  ansible.builtin.debug: {msg: \"{{ __r_all_phases | first }}\"}\n"),
    ("roles/r/tasks/main.yml", "- name: Report\n  ansible.builtin.set_stats: {data: {__r_all_phases: 1}}\n"
                               "- name: Read\n  ansible.builtin.debug: {var: __r_all_phases}\n"),
    ("roles/r/templates/t.j2", "{{ hostvars[h].__r_all_phases }}\n"),
    ("playbooks/p.yml", "- name: Play\n  hosts: all\n  tasks:\n    - name: When\n      ansible.builtin.debug: {}\n"
                        "      when: __r_all_phases | default(false)\n"),
    ("plugins/plugin_utils/u.py", "def f(task_vars):\n    return task_vars['__r_all_phases']\n"),
], ids=["task", "set_stats-is-no-definition", "template", "playbook-when", "plugin"])
def test_a_read_of_a_name_defined_nowhere_fails(tmp_path, rel, text):
    _write(tmp_path, {rel: text})
    assert list(undefined(tmp_path)) == ["__r_all_phases"]


def test_every_internal_variable_read_is_defined():
    defined, read = scan(ROOT)
    assert len(read) > 200 and "__validate_results" in defined   # the scan reads the collection
    missing = undefined(ROOT)
    assert missing == {}, "read but defined nowhere (vars/defaults, set_fact, register, vars:, loop_var ...): %s" % (
        "; ".join("%s in %s" % (name, ", ".join(files)) for name, files in missing.items()))
