# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kernel command line tokeniser and checks.

``tokenize`` follows the kernel's ``next_arg()`` (lib/cmdline.c) as used by
``parse_args()`` (kernel/params.c):

* arguments are separated by whitespace outside double quotes;
* a leading ``"`` quotes the whole argument, a ``"`` after ``=`` quotes the
  value, and the quotes are not part of the value;
* ``--`` ends the kernel's arguments (the rest goes to init).

Parameter names compare with ``-`` and ``_`` equivalent (kernel ``parameq``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

_SPACE = ' \t\n\r\f\v'

# Parameters whose meaning depends on an earlier one: ``hugepages=N`` sizes the pool of the
# ``hugepagesz=`` before it (the default size when there is none; mm/hugetlb.c).
PAIRED = {'hugepages': 'hugepagesz'}


def _next_arg(args):
    """Port of the kernel's next_arg(): returns (param, value|None, rest)."""
    i = 0
    equals = 0
    in_quote = False
    quoted = False
    if args.startswith('"'):
        args = args[1:]
        in_quote = True
        quoted = True
    n = len(args)
    while i < n:
        char = args[i]
        if char in _SPACE and not in_quote:
            break
        if equals == 0 and char == '=':
            equals = i
        if char == '"':
            in_quote = not in_quote
        i += 1
    token = args[:i]
    rest = args[i + 1:] if i < n else ''
    # Kernel order: strip the value's opening quote, then a closing quote at
    # the end of the token (once), then the quoted-arg closing quote.
    end = len(token)
    if equals == 0:
        param, value = token, None
        if quoted and end > 0 and token[end - 1] == '"':
            param = token[:end - 1]
    else:
        param = token[:equals]
        value = token[equals + 1:]
        stripped_end = False
        if value.startswith('"'):
            value = value[1:]
            if token.endswith('"'):
                value = value[:-1] if value.endswith('"') else value
                stripped_end = True
        if quoted and not stripped_end and value.endswith('"'):
            value = value[:-1]
    return param, value, rest.lstrip(_SPACE)


def tokenize(cmdline):
    """Split a command line into ``[(param, value_or_None), ...]``.

    Stops at a bare ``--`` like the kernel.
    """
    args = (cmdline or '').lstrip(_SPACE)
    out = []
    while args:
        param, value, args = _next_arg(args)
        if param == '--' and value is None:
            break
        out.append((param, value))
    return out


def norm_name(name):
    """Parameter name as the kernel compares it (``-`` equals ``_``)."""
    return name.replace('-', '_')


def format_arg(param, value):
    if value is None:
        return param
    if any(char in _SPACE for char in value):
        return '%s="%s"' % (param, value)
    return '%s=%s' % (param, value)


def parse_spec(text):
    """``"hugepages=2"`` -> ('hugepages', '2'); ``"earlycon"`` -> ('earlycon', None)."""
    tokens = tokenize(text)
    if len(tokens) != 1:
        raise ValueError('%r is not a single kernel argument' % (text,))
    return tokens[0]


def _matches(token, spec):
    (t_param, t_value), (s_param, s_value) = token, spec
    if norm_name(t_param) != norm_name(s_param):
        return False
    return s_value is None or t_value == s_value


def check_cmdline(cmdline, required=None, forbidden=None):
    """Compare a command line with required/forbidden argument lists.

    * a required ``key=value`` needs that exact token; a required bare
      ``flag`` is satisfied by ``flag`` or by any ``flag=...``;
    * a forbidden ``key=value`` matches that exact token, a forbidden bare
      ``key`` matches the key with any value;
    * duplicates are identical tokens appearing more than once (a
      grub.d drop-in plus tuned's ``$tuned_params`` produce exactly that).
      Repeated keys with different values (``console=``, ``hugepagesz=``)
      are normal and are not duplicates. A ``hugepages=`` counts together
      with the ``hugepagesz=`` before it (:data:`PAIRED`), so
      ``hugepagesz=2M hugepages=512 hugepagesz=1G hugepages=512`` has none;
      such a duplicate's ``context`` names that ``hugepagesz=`` (else None).
    """
    tokens = tokenize(cmdline)
    present = []
    missing = []
    for spec_text in required or []:
        spec = parse_spec(spec_text)
        if any(_matches(token, spec) for token in tokens):
            present.append(format_arg(*spec))
        else:
            missing.append(format_arg(*spec))
    found_forbidden = []
    for spec_text in forbidden or []:
        spec = parse_spec(spec_text)
        hits = [format_arg(*token) for token in tokens if _matches(token, spec)]
        for hit in hits:
            if hit not in found_forbidden:
                found_forbidden.append(hit)
    counts = {}
    order = []
    last = {}
    for param, value in tokens:
        name = norm_name(param)
        context = None
        if name in PAIRED and PAIRED[name] in last:
            context = format_arg(PAIRED[name], last[PAIRED[name]])
        key = (name, value, context)
        if key not in counts:
            order.append((param, value, context))
            counts[key] = 0
        counts[key] += 1
        last[name] = value
    duplicates = [{'arg': format_arg(param, value), 'context': context,
                   'count': counts[(norm_name(param), value, context)]}
                  for param, value, context in order if counts[(norm_name(param), value, context)] > 1]
    return {
        'tokens': [format_arg(param, value) for param, value in tokens],
        'present': present,
        'missing': missing,
        'forbidden_present': found_forbidden,
        'duplicates': duplicates,
    }
