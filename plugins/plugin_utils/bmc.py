# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the tray's BMC says, decided on the controller: pure functions over community.general.redfish_info results.

The roles talk to the BMC with community.general's ``redfish_info`` (category Systems, GetSystemInventory; category
Manager, GetLogs) and ``redfish_command`` (PowerForceRestart / PowerOn); everything they decide from the answers is
here, unit-tested:

* :func:`access` - before the first reboot: does the BMC answer with the inventory's credentials, which of its
  ComputerSystems is this tray (by the tray's SMBIOS serial, or the inventory's system id), is it powered on and
  not Critical. :func:`preflight_check` turns that into a preflight check record.
* :func:`state` - when a tray does not come back: PowerState, BootProgress and the latest log (SEL) entries, for the
  failure message and the rolling-reboot report, and whether the one power cycle of the run is due.

Settings (the roles' ``<role>_bmc_*`` options): ``address`` (Redfish base URI, ``https://bmc-tray01``), ``username``,
``password`` (never returned; True/False for "set" is enough), ``system_id`` (optional), ``required``.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.gpu_tray.cluster.plugins.module_utils import check_record

CHECK = 'bmc'
RECOVER_CHOICES = ('none', 'power_cycle')
# Status.Health values (Redfish Resource.Health) that block a reboot
BLOCKING_HEALTH = ('Critical',)
DEFAULT_LOG_ENTRIES = 10

FIX_SETTINGS = ('set gpu_tray_bmc_address (the BMC\'s Redfish address, https://<bmc>), gpu_tray_bmc_username and '
                'gpu_tray_bmc_password for the tray (in AWX: a credential of the type "gpu_tray.cluster BMC", '
                'docs/awx.md), or gpu_tray_bmc_required: false to prepare it without BMC access (a tray that hangs '
                'in POST then needs a person at its console)')
FIX = {
    'unreachable': 'check that the BMC answers at {address} from the controller (management network, firewall, the '
                   'BMC\'s own state: a cold BMC reset) and that gpu_tray_bmc_address is its Redfish address',
    'auth': 'check gpu_tray_bmc_username / gpu_tray_bmc_password (the BMC refused them: HTTP 401) - a locked or '
            'expired BMC account, a password changed on the BMC and not in the inventory or the AWX credential',
    'tls': 'give the CA that signed the BMC\'s certificate in gpu_tray_bmc_ca_path, or set '
           'gpu_tray_bmc_validate_certs: false for BMCs with self-signed certificates',
    'no_system': 'check that gpu_tray_bmc_address is this tray\'s BMC (not a neighbour\'s), or name the tray\'s '
                 'ComputerSystem with gpu_tray_bmc_system_id',
    'power': 'the tray must be powered on before it is prepared: power it on (BMC web UI, ipmitool, '
             'redfish_command PowerOn), check why it was off, then re-run',
    'health': 'the BMC reports the system Critical: read its event log (SEL) and fix the hardware fault before a '
              'reboot turns it into a tray that does not come back',
    'error': 'the BMC\'s Redfish service answered with an error: read the message, check the BMC firmware and the '
             'address',
}


def _text(value):
    return '' if value is None else str(value).strip()


def _given(value):
    """A setting that is set: a non-blank text, or True (the roles pass the password as whether it is set)."""
    if isinstance(value, bool):
        return value
    return bool(_text(value))


def configured(settings):
    """Whether the inventory names a BMC for the tray at all."""
    return bool(_text((settings or {}).get('address')))


def settings_problem(settings):
    """What is missing to talk to the BMC (a text), or None."""
    settings = settings or {}
    missing = [name for name, key in (('gpu_tray_bmc_address', 'address'), ('gpu_tray_bmc_username', 'username'),
                                      ('gpu_tray_bmc_password', 'password')) if not _given(settings.get(key))]
    if not missing:
        return None
    return 'no BMC access configured for the tray (%s not set)' % ', '.join(missing)


def classify_error(msg):
    """The kind of a failed redfish_info call from its message: auth, tls, unreachable or error."""
    text = _text(msg)
    lower = text.lower()
    if 'http error 401' in lower or 'http error 403' in lower or 'unauthorized' in lower:
        return 'auth'
    if 'certificate' in lower or 'ssl' in lower or 'tls' in lower:
        return 'tls'
    for marker in ('connection refused', 'timed out', 'timeout', 'no route to host', 'name or service not known',
                   'temporary failure in name resolution', 'network is unreachable', 'connection reset',
                   'remote end closed', 'url error'):
        if marker in lower:
            return 'unreachable'
    return 'error'


def answer_failed(result):
    """Whether a registered redfish_info result is a failure. The roles register it with ``failed_when: false`` (a
    BMC that does not answer is a finding, not a task error), which leaves ``failed`` false: a result without
    ``redfish_facts`` failed, and so does one whose part says ``ret: false``."""
    if not isinstance(result, dict):
        return True
    if result.get('failed') or not isinstance(result.get('redfish_facts'), dict):
        return True
    return any(isinstance(part, dict) and part.get('ret') is False for part in result['redfish_facts'].values())


def answer_msg(result):
    """The error text of a failed redfish_info result (the module's msg, else the failed part's)."""
    if not isinstance(result, dict):
        return ''
    facts = result.get('redfish_facts')
    for part in (facts.values() if isinstance(facts, dict) else []):
        if isinstance(part, dict) and part.get('ret') is False:
            return _text(part.get('msg'))
    return _text(result.get('msg'))


def systems(result):
    """The ComputerSystems of a redfish_info GetSystemInventory result: a list of their properties, each with
    ``_uri`` added (the aggregate's system_uri)."""
    facts = ((result or {}).get('redfish_facts') or {}).get('system') or {}
    out = []
    for entry in facts.get('entries') or []:
        if isinstance(entry, (list, tuple)) and len(entry) == 2 and isinstance(entry[1], dict):
            where, props = entry
            out.append(dict(props, _uri=(where or {}).get('system_uri')))
        elif isinstance(entry, dict):
            out.append(dict(entry, _uri=entry.get('@odata.id')))
    return out


def _system_id(system):
    if _text(system.get('Id')):
        return _text(system.get('Id'))
    return _text(system.get('_uri')).rstrip('/').rsplit('/', 1)[-1]


def _describe(found):
    return ', '.join('%s (serial %s)' % (_system_id(system), _text(system.get('SerialNumber')) or 'none')
                     for system in found) or 'none'


def find_system(found, serial=None, system_id=None):
    """(system, None) or (None, why): the tray's ComputerSystem among ``found``.

    With ``system_id`` the system of that Id (or URI tail). Else by the tray's serial: exactly one system with it.
    Without a serial (the tray's SMBIOS serial could not be read) only a BMC with exactly one system is this tray's.
    A single system whose serial differs is refused: the address is probably another tray's BMC, and a power cycle
    through it would hit the wrong tray."""
    system_id, serial = _text(system_id), _text(serial)
    if not found:
        return None, 'the BMC lists no ComputerSystem'
    if system_id:
        match = [system for system in found if _system_id(system) == system_id]
        if len(match) == 1:
            return match[0], None
        return None, 'the BMC has no ComputerSystem %s (gpu_tray_bmc_system_id); it has %s' % (
            system_id, _describe(found))
    if serial:
        match = [system for system in found if _text(system.get('SerialNumber')).lower() == serial.lower()]
        if len(match) == 1:
            return match[0], None
        if len(match) > 1:
            return None, 'the BMC has %d ComputerSystems with the tray\'s serial %s (%s): name one with ' \
                         'gpu_tray_bmc_system_id' % (len(match), serial, _describe(match))
        return None, 'no ComputerSystem of the BMC has the tray\'s serial %s (it has %s)' % (serial, _describe(found))
    if len(found) == 1:
        return found[0], None
    return None, 'the tray\'s serial could not be read and the BMC has %d ComputerSystems (%s): name the tray\'s ' \
                 'with gpu_tray_bmc_system_id' % (len(found), _describe(found))


def boot_progress(system):
    """BootProgress.LastState (with OemLastState when it is OEM), or None when the BMC does not report it."""
    progress = system.get('BootProgress') if isinstance(system, dict) else None
    if not isinstance(progress, dict):
        return None
    last = _text(progress.get('LastState')) or None
    if last == 'OEM' and _text(progress.get('OemLastState')):
        return 'OEM (%s)' % _text(progress.get('OemLastState'))
    return last


def health(system):
    status = system.get('Status') if isinstance(system, dict) else None
    if not isinstance(status, dict):
        return None
    return _text(status.get('Health')) or None


def _summary(system):
    return {
        'system_id': _system_id(system),
        'serial': _text(system.get('SerialNumber')) or None,
        'power_state': _text(system.get('PowerState')) or None,
        'health': health(system),
        'boot_progress': boot_progress(system),
    }


def access(settings, result, serial=None):
    """The BMC check of one tray.

    ``result``: the registered redfish_info GetSystemInventory result (None when it did not run).
    Returns ``{ok, kind, msg, fix, address, system_id, serial, power_state, health, boot_progress}``; ``kind`` is
    ok, settings, unreachable, auth, tls, error, no_system, power or health."""
    settings = settings or {}
    address = _text(settings.get('address'))
    out = {'ok': False, 'kind': None, 'msg': None, 'fix': None, 'address': address or None,
           'system_id': None, 'serial': _text(serial) or None, 'power_state': None, 'health': None,
           'boot_progress': None}

    def problem(kind, msg, fix):
        out.update(kind=kind, msg=msg, fix=fix)
        return out

    missing = settings_problem(settings)
    if missing:
        return problem('settings', missing[0].upper() + missing[1:] + '.', FIX_SETTINGS)
    if not isinstance(result, dict) or result.get('skipped'):
        return problem('error', 'The BMC at %s was not asked (no Redfish answer recorded).' % address, FIX['error'])
    if answer_failed(result):
        msg = answer_msg(result)
        kind = classify_error(msg)
        what = {'auth': 'refused the credentials', 'tls': 'could not be verified (TLS)',
                'unreachable': 'does not answer', 'error': 'answered with an error'}[kind]
        first_line = msg.splitlines()[0] if msg else 'no message'
        return problem(kind, 'The BMC at %s %s: %s.' % (address, what, first_line[:300]),
                       FIX[kind].format(address=address))
    system, why = find_system(systems(result), serial=serial, system_id=settings.get('system_id'))
    if system is None:
        return problem('no_system', 'The tray\'s ComputerSystem was not found at %s: %s.' % (address, why),
                       FIX['no_system'])
    out.update(_summary(system))
    if out['power_state'] != 'On':
        return problem('power', 'The BMC reports the tray\'s system %s PowerState %s, not On.' % (
            out['system_id'], out['power_state'] or 'unknown'), FIX['power'])
    if out['health'] in BLOCKING_HEALTH:
        return problem('health', 'The BMC reports the tray\'s system %s health %s.' % (
            out['system_id'], out['health']), FIX['health'])
    out.update(ok=True, kind='ok', msg='The BMC at %s answers; system %s (serial %s) is On, health %s.' % (
        address, out['system_id'], out['serial'] or 'not reported', out['health'] or 'not reported'))
    return out


def preflight_check(settings, result, serial=None):
    """The preflight's record of the BMC check (module_utils/check_record.py).

    Not configured and not required: skipped. Configured but not required: a problem is a warning (in the message,
    the fix and the evidence), which does not fail the tray. Required (the default): any problem fails the tray."""
    settings = settings or {}
    required = bool(settings.get('required', True))
    if not required and not configured(settings):
        return check_record.record(CHECK, 'skipped',
                                   'Not checked: no BMC configured and gpu_tray_bmc_required is false.')
    found = access(settings, result, serial)
    data = dict((key, value) for key, value in found.items() if key not in ('msg', 'fix'))
    data['required'] = required
    details = ['BMC %s, tray serial %s' % (found['address'] or 'not set', found['serial'] or 'unknown')]
    if found['ok']:
        return check_record.record(CHECK, 'passed', found['msg'], data=data)
    if not required:
        return check_record.record(CHECK, 'warning', '%s Not required (gpu_tray_bmc_required is false): a tray that '
                                   'does not come back from its reboot will need a person at its console.'
                                   % found['msg'], found['fix'], details, data)
    return check_record.record(CHECK, 'failed', found['msg'], found['fix'], details, data)


def log_entries(result, count=DEFAULT_LOG_ENTRIES):
    """The latest ``count`` entries of a redfish_info GetLogs result (every log service of the manager), oldest
    first: ``{created, severity, message, log}``."""
    facts = ((result or {}).get('redfish_facts') or {}).get('log') or {}
    out = []
    for service in facts.get('entries') or []:
        if not isinstance(service, dict):
            continue
        for name, entries in service.items():
            if not isinstance(entries, list):
                continue
            for entry in entries:
                if isinstance(entry, dict):
                    out.append({'created': _text(entry.get('Created')) or None,
                                'severity': _text(entry.get('Severity')) or None,
                                'message': _text(entry.get('Message')) or _text(entry.get('MessageId')) or None,
                                'log': name})
    # ISO 8601 times of one BMC sort as text; entries without one keep their place before the dated ones
    out = sorted(enumerate(out), key=lambda item: (item[1]['created'] or '', item[0]))
    count = max(0, int(count))
    return [entry for _index, entry in out][-count:] if count else []


def state(settings, answer, logs=None, serial=None, count=DEFAULT_LOG_ENTRIES, recover='none', attempted=False):
    """What the BMC says about a tray that did not come back (the report's BMC section).

    ``answer`` / ``logs``: registered redfish_info results (GetSystemInventory, GetLogs); ``recover``
    the role's rolling_reboot_bmc_recover; ``attempted`` whether this tray was already power-cycled in this run.
    Returns ``{read, error, address, system_id, power_state, boot_progress, health, log, log_error, summary,
    recovery}``; ``recovery`` is ``{power_cycle, command, why}``."""
    if recover not in RECOVER_CHOICES:
        raise ValueError('recover must be one of %s, got %r' % (', '.join(RECOVER_CHOICES), recover))
    settings = settings or {}
    out = {'read': False, 'error': None, 'address': _text(settings.get('address')) or None, 'system_id': None,
           'power_state': None, 'boot_progress': None, 'health': None, 'log': [], 'log_error': None,
           'summary': None, 'recovery': {'power_cycle': False, 'command': None, 'why': None}}
    missing = settings_problem(settings)
    if missing:
        out['error'] = missing
    elif not isinstance(answer, dict) or answer.get('skipped'):
        out['error'] = 'the BMC was not read'
    elif answer_failed(answer):
        msg = answer_msg(answer)
        out['error'] = 'the BMC at %s could not be read (%s): %s' % (
            out['address'], classify_error(msg), (msg.splitlines() or ['no message'])[0][:300])
    else:
        system, why = find_system(systems(answer), serial=serial, system_id=settings.get('system_id'))
        if system is None:
            out['error'] = why
        else:
            out.update(_summary(system))
            out.pop('serial')
            out['read'] = True
    if out['read'] and isinstance(logs, dict) and not logs.get('skipped'):
        if answer_failed(logs):
            out['log_error'] = (answer_msg(logs).splitlines() or ['no message'])[0][:300]
        else:
            out['log'] = log_entries(logs, count)
    if out['read']:
        text = 'BMC: PowerState %s, BootProgress %s, health %s' % (
            out['power_state'] or 'not reported', out['boot_progress'] or 'not reported', out['health'] or 'not reported')
        if out['log']:
            last = out['log'][-1]
            severity = ('[%s] ' % last['severity']) if last['severity'] else ''
            text += '; latest log entry: %s%s' % (severity, last['message'] or '')
        out['summary'] = text
    else:
        out['summary'] = 'BMC not read: %s' % out['error']
    recovery = out['recovery']
    if recover != 'power_cycle':
        recovery['why'] = 'no recovery: gpu_tray_bmc_recover is none'
    elif attempted:
        recovery['why'] = 'no second recovery: the tray was already power-cycled once in this run'
    elif not out['read']:
        recovery['why'] = 'no recovery: %s' % out['error']
    else:
        recovery['power_cycle'] = True
        # a tray hanging in POST is On: a forced restart; one that is off is powered on
        recovery['command'] = 'PowerOn' if out['power_state'] == 'Off' else 'PowerForceRestart'
        recovery['why'] = 'power cycle through the BMC (%s), once' % recovery['command']
    return out
