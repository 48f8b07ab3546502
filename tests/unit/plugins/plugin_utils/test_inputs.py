# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The run's inputs (plugins/plugin_utils/inputs.py, the logic of the action gpu_tray.cluster.check_inputs): one
test per refusal rule - a removed variable, one unknown variable, several, a misspelt role variable, a bad value, a
survey answer - and per safety switch, that a value outside its choices (case variants, yes/no, empty, null) is
refused naming the variable, against the generated spec the action reads (roles/preflight/vars/inventory_spec.yml).
The safety switches and their values are written here, not read from the spec: a spec that lost a switch's choices
fails these tests. tests/unit/plugins/action/test_check_inputs.py runs the action and the playbooks' tasks."""

import pytest

from ansible_collections.gpu_tray.cluster.plugins.plugin_utils import inputs

TABLES = inputs.tables()
SPEC, KNOWN, REMOVED = TABLES['spec'], TABLES['known'], TABLES['removed']


def findings(values, names=None, allowed=(), extra=None):
    """Every clause for one host that sets ``values`` (and the further names ``names``)."""
    names = list(values) + list(names or [])
    return inputs.host_findings(names, dict((n, v) for n, v in values.items() if n in SPEC), KNOWN, REMOVED, SPEC,
                                allowed, extra)


# ------------------------------------------------------------------------------------------------ names

def test_a_good_inventory_has_no_finding():
    assert findings({'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_recipe': 'vr200-rke2-ubuntu-inference',
                     'gpu_tray_tuned_intent': 'inference', 'gpu_tray_pkey': 0x8001, 'gpu_tray_reboot_batch': '25%',
                     'gpu_tray_bmc_required': 'yes', 'gpu_tray_bundle_format': 'helmfile,flux'},
                    names=['gpu_tray_read', 'gpu_tray_rdma']) == []


@pytest.mark.parametrize('names, clauses', [
    (['gpu_tray_pkeys'], ['gpu_tray_pkeys is not a variable of gpu_tray.cluster (did you mean gpu_tray_pkey?)']),
    # the example of issue 34: two typos on render_bundle, which ended failed=0 with the overrides ignored
    (['gpu_tray_stack_overides', 'gpu_tray_bundle_formats', 'gpu_tray_wholly_unrelated'], [
        'gpu_tray_bundle_formats is not a variable of gpu_tray.cluster (did you mean gpu_tray_bundle_format?)',
        'gpu_tray_stack_overides is not a variable of gpu_tray.cluster (did you mean gpu_tray_stack_overrides?)',
        'gpu_tray_wholly_unrelated is not a variable of gpu_tray.cluster']),
], ids=['one', 'several-sorted'])
def test_unknown_variables_are_named_with_the_closest_known_one(names, clauses):
    assert findings({}, names=names) == clauses


def test_site_variables_and_other_prefixes_pass():
    assert findings({}, names=['gpu_tray_rack_label', 'ansible_host', 'gpu_trays', 'preflight_pkey'],
                    allowed=['gpu_tray_rack_label']) == []
    assert inputs.unknown_variables(['site_x', 'site_y'], ['site_y'], prefix='site_') == [
        {'name': 'site_x', 'suggestion': None}]


def test_a_removed_variable_is_named_with_what_replaced_it_and_not_also_as_unknown():
    assert findings({}, names=['gpu_tray_state_request']) == [
        'gpu_tray_state_request was removed from gpu_tray.cluster (%s)' % REMOVED['gpu_tray_state_request']]
    assert 'preflight_prefetch' in REMOVED['gpu_tray_state_request']


@pytest.mark.parametrize('name, role, suggestion', [
    ('rolling_reboot_bach', 'rolling_reboot', 'rolling_reboot_batch'),
    ('validate_fail_fats', 'validate', 'validate_fail_fast'),
    ('rdma_netns_mod', 'rdma_netns', 'rdma_netns_mode'),           # rdma_netns, not a role "rdma"
    ('stack_bundle_formatt', 'stack', 'stack_bundle_format'),
])
def test_a_misspelt_role_variable_is_refused_with_the_option_meant(name, role, suggestion):
    clauses, answers = inputs.run_findings({name: 'x'})
    assert clauses == ['%s is not a variable of role %s (did you mean %s?)' % (name, role, suggestion)]
    assert answers == {}


def test_every_name_is_judged_whatever_comes_before_it():
    """A name of no role (awx_x) and an option (preflight_fail) sort before the misspelt one."""
    assert inputs.run_findings(dict.fromkeys(['awx_x', 'preflight_fail', 'rolling_reboot_bach']))[0] == [
        'rolling_reboot_bach is not a variable of role rolling_reboot (did you mean rolling_reboot_batch?)']


def test_role_variables_that_are_options_or_far_from_any_pass():
    """A role's options of any entry point (stack_recover_nodes: recover), a site variable sharing a role's prefix
    (validate_certs, stack_name), the run's own settings and a name listed in gpu_tray_site_variables."""
    names = dict.fromkeys(['stack_recover_nodes', 'validate_certs', 'stack_name', 'stack_test_dir', 'preflight_fail',
                           'rolling_reboot_requests', 'awx_configure_state', '__stack_run', 'rolling_reboot_bach'])
    assert inputs.run_findings(names, allowed=['rolling_reboot_bach']) == ([], {})


# ------------------------------------------------------------------------------------------------ values

@pytest.mark.parametrize('values, clause', [
    ({'gpu_tray_ib_core_netns_mode': 'exlusive'},
     "gpu_tray_ib_core_netns_mode must be one of: exclusive, shared, unmanaged, got 'exlusive'"),
    # the empty choice is named as such (it printed as "one of: , performance, ...")
    ({'gpu_tray_tuned_intent': 'trainig'},
     "gpu_tray_tuned_intent must be one of: '' (empty), performance, multiNodeTraining, inference, got 'trainig'"),
    ({'gpu_tray_num_vfs': 'sixteen'}, "gpu_tray_num_vfs must be an integer, got 'sixteen'"),
    ({'gpu_tray_bundle_format': ['helmfile', 'argocdd']},
     "gpu_tray_bundle_format must be a list of: helmfile, argocd, flux, got 'argocdd'"),
    ({'gpu_tray_stack_overrides': 'gpu-operator'}, "gpu_tray_stack_overrides must be a mapping, got 'gpu-operator'"),
    ({'gpu_tray_report_dir': ['a']}, 'gpu_tray_report_dir must be a path, got a list'),
    ({'gpu_tray_recipe': 'gb200-nvke-ubuntu-trainig'}, 'gpu_tray_recipe must be one of: '),
    ({'gpu_tray_pkey': 70000}, 'gpu_tray_pkey is not a partition key: 70000 is not a partition key'),
    ({'gpu_tray_pkey': '0x8000'}, 'gpu_tray_pkey is not a partition key: 0x8000 is not a usable partition key'),
    ({'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_recipe': 'vr200-rke2-ubuntu-training'},
     'gpu_tray_recipe vr200-rke2-ubuntu-training is a recipe of platform rke2-vr200, not of gpu_tray_platform '
     'nvke-gb200'),
    ({'gpu_tray_platform': 'rke2-vr300'}, "gpu_tray_platform must be one of: nvke-gb200, rke2-vr200, got 'rke2-vr300'"),
    ({'gpu_tray_bmc_password': ['s3cret']}, 'gpu_tray_bmc_password must be a string, got a list'),
    ({'gpu_tray_multus_token_warn_days': 'soon'},
     "gpu_tray_multus_token_warn_days must be an integer, got 'soon'"),
])
def test_a_bad_value_gets_one_clause_naming_the_inventory_variable(values, clause):
    found = findings(values)
    assert len(found) == 1 and found[0].startswith(clause), found


def test_a_secret_is_never_repeated_and_long_values_are_cut():
    assert inputs.shown('gpu_tray_bmc_password', 'hunter2') == '(hidden)'
    assert inputs.shown('survey_rolling_reboot_bmc_password', 'x') == '(hidden)'
    assert inputs.shown('preflight_bmc_password', 'x') == '(hidden)'
    assert inputs.shown('gpu_tray_x', 'x', {'no_log': True}) == '(hidden)'
    # by the argument spec, not a word in the name: a token's warning days are a number like any other
    assert inputs.shown('gpu_tray_multus_token_warn_days', 'soon') == "'soon'"
    assert inputs.shown('survey_api_token', 'x') == "'x'"
    assert inputs.shown('gpu_tray_x', 'a' * 100) == "'" + 'a' * 56 + '...'
    assert inputs.shown('gpu_tray_x', 'a' * 58) == "'" + 'a' * 58 + "'"          # 60 characters: whole
    assert inputs.shown('gpu_tray_x', 'a' * 59) == "'" + 'a' * 56 + '...'        # 61: cut
    assert inputs.shown('gpu_tray_x', None) == 'null' and inputs.shown('gpu_tray_x', 5) == '5'


@pytest.mark.parametrize('spec, words', [
    ({'type': 'list'}, 'a list'), ({'type': 'list', 'elements': 'dict'}, 'a list of mappings'),
    ({'type': 'list', 'elements': 'bool'}, 'a list of true/false values'), ({'type': 'raw'}, 'a value'),
    ({'type': 'str', 'choices': ['', 'a']}, "one of: '' (empty), a"), ({}, 'a string'),
])
def test_what_a_value_must_be_in_words(spec, words):
    assert inputs.expected(spec) == words


@pytest.mark.parametrize('values, found', [
    # an element of the wrong kind is named like a wrong type
    ({'gpu_tray_nccl_logs': ['/var/tmp/nccl.log']}, ["gpu_tray_nccl_logs must be a list of mappings, got "
                                                     "['/var/tmp/nccl.log']"]),
    # a bad platform is reported once (not again for its recipe and intent)
    ({'gpu_tray_platform': 'gb300', 'gpu_tray_recipe': 'vr200-rke2-ubuntu-training',
      'gpu_tray_tuned_intent': 'inference'}, ["gpu_tray_platform must be one of: nvke-gb200, rke2-vr200, got 'gb300'"]),
    # null is refused with the default it would have had: default() keeps a null, so gpu_tray_bmc_required: (empty in
    # YAML) would turn the BMC requirement off
    ({'gpu_tray_bmc_required': None}, ['gpu_tray_bmc_required is empty (null): set true or false, or remove it']),
    ({'gpu_tray_rails': None}, ['gpu_tray_rails is empty (null): set a list of strings, or remove it']),
], ids=['element-kind', 'platform-once', 'null-bool', 'null-list'])
def test_the_findings_of_a_bad_value_exactly(values, found):
    assert findings(values) == found


def test_every_value_is_judged_whatever_comes_before_it():
    """Names the spec does not know (checked as names) before a bad value; extra choices for a spec without
    choices (the platform profiles judge the recipe then)."""
    assert inputs.value_problems({'gpu_tray_aaa': 1, 'gpu_tray_num_vfs': 'x'}, SPEC) == [
        "gpu_tray_num_vfs must be an integer, got 'x'"]
    bare = {'gpu_tray_recipe': {'type': 'str'}}
    assert inputs.value_problems({'gpu_tray_recipe': 'mine'}, bare, {'gpu_tray_recipe': ['mine']}) == []


def test_a_site_recipe_is_a_recipe():
    """stack_extra_recipes adds recipes (the stack role's argument spec); the test cluster's stacktest is one."""
    assert findings({'gpu_tray_recipe': 'stacktest'}, extra={'gpu_tray_recipe': ['stacktest']}) == []
    assert findings({'gpu_tray_recipe': 'stacktest'}, extra={'gpu_tray_recipe': ['other']})[0].startswith(
        'gpu_tray_recipe must be one of: ')


def test_the_platform_rules_where_the_spec_has_no_choices():
    """Every intent of the generated choices is one of both platforms today; a platform without one, or a spec
    without choices, still gets the profile's list."""
    assert inputs.platform_problems({'gpu_tray_platform': 'nvke-gb200', 'gpu_tray_tuned_intent': 'turbo'}) == [
        'gpu_tray_tuned_intent turbo is not an nvidia-tuned intent of platform nvke-gb200 (it has: inference, '
        'multiNodeTraining, performance)']
    assert inputs.platform_problems({'gpu_tray_recipe': 'x'}) == [
        "gpu_tray_recipe must be one of: gb200-nvke-ubuntu-training, gb200-nvke-ubuntu-training-kubeflow, "
        "vr200-rke2-ubuntu-inference, vr200-rke2-ubuntu-inference-dynamo, vr200-rke2-ubuntu-training, got 'x'"]
    assert inputs.platform_problems({'gpu_tray_recipe': 'x'}, extra_recipes=['x']) == []
    assert inputs.platform_problems({'gpu_tray_platform': 'rke2-vr200', 'gpu_tray_tuned_intent': ''}) == []


# ------------------------------------------------------------------------------------------------ safety switches

BOOL_BAD = ['', None, 'maybe', 'ture', [], {}, 2]
# name -> (values that pass, values refused); a bool switch takes what the argument spec and `| bool` both take
SAFETY = {
    'gpu_tray_reboot_foreign_controllers': (['refuse', 'allow'],
                                            ['Refuse', 'ALLOW', 'yes', 'no', True, False, '', None, 'refuse ']),
    'gpu_tray_bmc_recover': (['none', 'power_cycle'], ['None', None, 'Power_Cycle', 'power-cycle', 'yes', '', True]),
    'gpu_tray_reboot_drain_via': (['auto', 'maintenance_operator', 'drain'], ['Drain', 'none', 'yes', 'no', '', None]),
    'gpu_tray_imex_host_service': (['masked', 'enabled', 'unmanaged'], ['Masked', 'mask', 'yes', 'no', '', None]),
    'gpu_tray_ib_core_netns_mode': (['exclusive', 'shared', 'unmanaged'], ['Exclusive', '0', 'yes', 'no', '', None]),
    'gpu_tray_bmc_required': ([True, False, 'true', 'False', 'yes', 'no'], BOOL_BAD),
    'gpu_tray_bmc_validate_certs': ([True, False, 'true', 'no'], BOOL_BAD),
    **dict.fromkeys(['gpu_tray_sysctl_apply', 'gpu_tray_rdma_modules_enabled', 'gpu_tray_skip_preflight',
                     'gpu_tray_stack_deploy', 'gpu_tray_validate', 'gpu_tray_validate_fail_fast',
                     'gpu_tray_bundle_vendor_charts'], ([True, False], BOOL_BAD)),
    'gpu_tray_pkey': (['0xffff', '0x8123', 0x7fff, 'ffff'], ['0x8000', '0x0000', '', None, 'ffffff', True, 0]),
    'gpu_tray_reboot_batch': ([1, '2', '25%', '100%'], [0, '0', '', None, '150%', '0%', 'all', True, -1]),
    'gpu_tray_validate_phases': ([['trays'], 'trays,performance'], [['Trays'], ['nccl'], None]),
    'gpu_tray_nccl_variants': ([['nvls', 'net'], []], [['NVLS'], ['ring'], None]),
}


@pytest.mark.parametrize('name', sorted(SAFETY))
def test_a_safety_switch_takes_its_values_and_refuses_the_rest_by_name(name):
    good, bad = SAFETY[name]
    assert name in SPEC, 'the generated spec lost %s' % name
    for value in good:
        assert findings({name: value}) == [], (name, value)
    for value in bad:
        found = findings({name: value})
        assert len(found) == 1 and found[0].startswith(name + ' '), (name, value, found)


# ------------------------------------------------------------------------------------------------ survey answers

@pytest.mark.parametrize('blank', [None, '', '  '])
def test_a_blank_survey_answer_keeps_the_inventory_value_on_every_awx_version(blank):
    """AWX 24 sends null for a question left blank (awx#16205), AWX 17 "" (awx#9525): either is left out, so the
    role's default - gpu_tray_reboot_batch of the inventory - applies."""
    assert inputs.run_findings({'survey_rolling_reboot_batch': blank, 'survey_rolling_reboot_drain': blank}) == ([], {})


def test_survey_answers_are_converted_as_the_roles_argument_spec_does():
    clauses, answers = inputs.run_findings({'survey_rolling_reboot_batch': '25%', 'survey_preflight_fail': 'true',
                                            'survey_rolling_reboot_timeout': '900', 'survey_stack_helm_timeout': '10m',
                                            'survey_rolling_reboot_group_by': ''})
    assert clauses == [] and answers == {'rolling_reboot_batch': '25%', 'preflight_fail': True,
                                         'rolling_reboot_timeout': 900, 'stack_helm_timeout': '10m'}


def test_every_survey_answer_is_judged_whatever_comes_before_it():
    answers, clauses = inputs.survey_answers({'survey_preflight_bad': 'x', 'survey_rolling_reboot_batch': 'abc',
                                              'survey_rolling_reboot_timeout': '5'})
    assert [clause.split(' ')[:3] for clause in clauses] == [
        ['survey_preflight_bad', 'answers', 'no'], ['survey', 'answer', 'rolling_reboot_batch']]
    assert answers == {'rolling_reboot_timeout': 5}


# the AWX surveys' safety switches (playbooks/files/awx_surveys): answers that pass and answers refused
SURVEY_SWITCHES = {
    'rolling_reboot_drain': (['auto', 'always', 'never'], ['Never', 'AUTO', 'yes', 'no', 'off', True]),
    'rolling_reboot_bmc_recover': (['none', 'power_cycle'], ['None', 'Power_Cycle', 'yes', 'no', False]),
    'preflight_fail': (['true', 'false'], ['maybe', 'ture', 2]),
    'preflight_check_firmware': (['true', 'false'], ['maybe', 'ture', 2]),
    'validate_fail_fast': (['true', 'false'], ['maybe', 'ture', 2]),
}


@pytest.mark.parametrize('option', sorted(SURVEY_SWITCHES))
def test_a_survey_switch_takes_its_answers_and_refuses_the_rest_naming_the_question(option):
    good, bad = SURVEY_SWITCHES[option]
    for value in good:
        clauses, answers = inputs.run_findings({'survey_' + option: value})
        assert clauses == [] and option in answers, (option, value, clauses)
    for value in bad:
        clauses, answers = inputs.run_findings({'survey_' + option: value})
        assert len(clauses) == 1 and clauses[0].startswith('survey answer %s must be ' % option), (option, value)
        assert answers == {}


@pytest.mark.parametrize('values, clause', [
    ({'survey_rolling_reboot_batch': 'abc'}, 'survey answer rolling_reboot_batch must be a positive integer or a '
                                             "percentage above 0 and at most 100% (such as 25%), got 'abc'"),
    ({'survey_rolling_reboot_drain': 'Never'}, "survey answer rolling_reboot_drain must be one of: auto, always, "
                                               "never, got 'Never'"),
    ({'survey_rolling_reboot_timeout': 'soon'}, "survey answer rolling_reboot_timeout must be an integer, got 'soon'"),
    ({'survey_rolling_reboot_bach': '2'}, 'survey_rolling_reboot_bach answers no survey question of gpu_tray.cluster '
                                          '(did you mean survey_rolling_reboot_batch?)'),
])
def test_a_bad_survey_answer_is_refused_naming_the_question(values, clause):
    assert inputs.run_findings(values) == ([clause], {})


# ------------------------------------------------------------------------------------------------ the sentence

def test_the_refusal_is_one_sentence_naming_the_hosts_only_where_not_all():
    text = inputs.refusal({'gpu_tray_pkeys is not a variable of gpu_tray.cluster (did you mean gpu_tray_pkey?)':
                           ['tray01', 'tray02'],
                           "gpu_tray_num_vfs must be an integer, got 'x'": ['tray05', 'tray02', 'tray03', 'tray04']},
                          2)
    assert text == ("The run's inputs are refused, nothing was read, written or installed: gpu_tray_pkeys is not a "
                    "variable of gpu_tray.cluster (did you mean gpu_tray_pkey?); gpu_tray_num_vfs must be an integer, "
                    "got 'x' (on tray02, tray03, tray04 and 1 more); a gpu_tray_* variable of the site itself goes in "
                    "gpu_tray_site_variables.")
    assert inputs.refusal({"gpu_tray_num_vfs must be an integer, got 'x'": ['t1']}, 3) == (
        "The run's inputs are refused, nothing was read, written or installed: gpu_tray_num_vfs must be an integer, "
        "got 'x' (on t1).")
    assert inputs.refusal({"gpu_tray_num_vfs must be an integer, got 'x'": ['t3', 't1', 't2']}, 4) == (
        "The run's inputs are refused, nothing was read, written or installed: gpu_tray_num_vfs must be an integer, "
        "got 'x' (on t1, t2, t3).")
    assert inputs.refusal({}, 3) is None


def test_a_broken_installation_is_named(tmp_path):
    (tmp_path / 'spec.yml').write_text('other: 1\n')
    with pytest.raises(inputs.InputsError, match='lacks the generated tables'):
        inputs.tables(str(tmp_path / 'spec.yml'))
    with pytest.raises(inputs.InputsError, match='cannot read'):
        inputs.tables(str(tmp_path / 'missing.yml'))


def test_a_misspelt_recipe_gets_a_did_you_mean_and_the_old_names_are_accepted_but_not_offered():
    known = ('gb200-nvke-ubuntu-training, gb200-nvke-ubuntu-training-kubeflow, vr200-rke2-ubuntu-inference, '
             'vr200-rke2-ubuntu-inference-dynamo, vr200-rke2-ubuntu-training')
    assert findings({'gpu_tray_recipe': 'gb200-nvke-ubuntu-trainig'}) == [
        "gpu_tray_recipe must be one of: %s, got 'gb200-nvke-ubuntu-trainig' (did you mean gb200-nvke-ubuntu-training?)"
        % known]
    assert findings({'gpu_tray_recipe': 'gb200-nvke-ubuntu-kubeflow'}) == []
    # a role option whose choices hold the alias (validate_recipe): the alias is accepted, never offered
    spec = inputs.role_options('validate')['validate_recipe']
    assert 'gb200-nvke-ubuntu-kubeflow' in spec['choices']
    assert inputs.one_value('validate_recipe', 'validate_recipe', 'gb200-nvke-ubuntu-kubeflow', spec) is None
    assert inputs.one_value('validate_recipe', 'validate_recipe', 'vr200-rke2-ubuntu-trainin', spec) == (
        "validate_recipe must be one of: %s, got 'vr200-rke2-ubuntu-trainin' (did you mean vr200-rke2-ubuntu-training?)"
        % known)
    assert inputs.one_value('validate_recipe', 'validate_recipe', 'zzz', spec) == (
        "validate_recipe must be one of: %s, got 'zzz'" % known)
    # the platform profiles' check (a spec without choices) says the same
    assert inputs.platform_problems({'gpu_tray_recipe': 'vr200-rke2-ubuntu-trainign'}) == [
        "gpu_tray_recipe must be one of: %s, got 'vr200-rke2-ubuntu-trainign' (did you mean vr200-rke2-ubuntu-training?)"
        % known]


# ------------------------------------------------------------------------------------------------ a playbook's options

@pytest.mark.parametrize('value', [
    '', 'DTSTART:20260101T030000Z RRULE:FREQ=DAILY;INTERVAL=1',
    'DTSTART:20260101T000000Z RRULE:FREQ=HOURLY;INTERVAL=6',
    'DTSTART;TZID=Europe/Berlin:20260101T030000 RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=MO,TH',
    'DTSTART:20260101T030000Z RRULE:FREQ=MONTHLY;INTERVAL=1;BYMONTHDAY=1;COUNT=12',
])
def test_schedules_awx_takes_pass(value):
    assert inputs.rrule_problem(value) is None


# AWX's own refusals (awx/api/serializers.py validate_rrule and its tests), each named
@pytest.mark.parametrize('value, reason', [
    ('daily', 'no DTSTART (it starts DTSTART:YYYYMMDDTHHMMSSZ); no RRULE'),
    ('DTSTART:20300308T050000 RRULE:FREQ=DAILY;INTERVAL=1', 'DTSTART has no time zone (end it with Z, or give ;TZID=)'),
    ('DTSTART:20300308T050000Z DTSTART:20310308T050000Z RRULE:FREQ=DAILY;INTERVAL=1', 'more than one DTSTART'),
    ('DTSTART:20300308T050000Z', 'no RRULE'),
    ('DTSTART:20300308T050000Z RRULE:FREQ=DAILY', 'RRULE:FREQ=DAILY has no INTERVAL'),
    ('DTSTART:20300308T050000Z RRULE:INTERVAL=1', 'RRULE:INTERVAL=1 has no FREQ'),
    ('DTSTART:20300308T050000Z RRULE:FREQ=SECONDLY;INTERVAL=5;COUNT=6',
     'RRULE:FREQ=SECONDLY;INTERVAL=5;COUNT=6: SECONDLY is not supported'),
    ('DTSTART:20300308T050000Z RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=5MO',
     'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=5MO: BYDAY with a numeric prefix is not supported'),
    ('DTSTART:20030925T104941Z RRULE:FREQ=DAILY;INTERVAL=10;COUNT=500;UNTIL=20040925T104941Z',
     'RRULE:FREQ=DAILY;INTERVAL=10;COUNT=500;UNTIL=20040925T104941Z has both COUNT and UNTIL'),
    ('DTSTART:20300308T050000Z RRULE:FREQ=DAILY;INTERVAL=1;COUNT=2000',
     'RRULE:FREQ=DAILY;INTERVAL=1;COUNT=2000: COUNT above 999 is not supported'),
    ('DTSTART:20300308T050000Z RRULE:FREQ=MONTHLY;INTERVAL=1 EXDATE:20300401T050000Z',
     'EXDATE and RDATE are not allowed'),
    ('DTSTART:20300308T050000Z RRULE:FREQ=DAILI;INTERVAL=1', "it does not parse: invalid 'FREQ': DAILI"),
])
def test_schedules_awx_refuses_are_refused_naming_why(value, reason):
    assert inputs.rrule_problem(value) == (
        "is not a schedule AWX accepts (%s): give an iCal DTSTART and RRULE such as 'DTSTART:20260101T030000Z "
        "RRULE:FREQ=DAILY;INTERVAL=1', or '' for no schedule, got %s" % (reason, inputs.shown('', value)))


AWX_SPEC = inputs.playbook_spec('awx_configure')


def test_the_options_checked_are_the_options_used():
    """Issue 53: a comma string is the list, a bool word the bool, every option not given has its default."""
    clauses, checked = inputs.option_findings(
        {'awx_configure_rack_groups': 'rack1,rack2', 'awx_configure_validate_certs': 'no'}, AWX_SPEC, 'awx_configure_',
        'awx_configure')
    assert clauses == []
    assert checked['rack_groups'] == ['rack1', 'rack2'] and checked['validate_certs'] is False
    assert checked['state'] == 'present' and checked['validate_schedule'] == AWX_SPEC[
        'awx_configure_validate_schedule']['default']
    assert sorted(checked) == sorted(name[len('awx_configure_'):] for name in AWX_SPEC)


def test_every_bad_option_is_one_clause_naming_it():
    clauses, checked = inputs.option_findings(
        {'awx_configure_rack_group': 'rack1', 'awx_configure_state': 'presnt', 'awx_configure_inventory': None,
         'awx_configure_validate_schedule': 'daily', 'awx_configure_zzz': 1}, AWX_SPEC, 'awx_configure_', 'awx_configure')
    assert clauses[:3] == [
        'awx_configure_rack_group is not a variable of playbook awx_configure (did you mean awx_configure_rack_groups?)',
        'awx_configure_zzz is not a variable of playbook awx_configure',
        "awx_configure_inventory is empty (null): set a string, or remove it for the default ('')"]
    assert clauses[3] == "awx_configure_state must be one of: present, absent, got 'presnt'"
    assert clauses[4].startswith('awx_configure_validate_schedule is not a schedule AWX accepts (no DTSTART')
    assert len(clauses) == 5 and 'state' not in checked and 'inventory' not in checked


def test_the_spec_of_awx_configure_is_read_whole():
    groups = AWX_SPEC['awx_configure_rack_groups']
    assert groups == dict(groups, type='list', elements='str', default=[])
    with pytest.raises(inputs.InputsError):
        inputs.playbook_spec('no_such_playbook')
