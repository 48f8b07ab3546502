# Copyright: (c) 2026, gpu_tray.cluster contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every kubernetes.core module imports stays light in the toolchain's venv.

kubernetes.core's modules import kubernetes.dynamic, which imports kubernetes_validate and so jsonschema. With
jsonschema's format extras installed (cyclonedx-python-lib[json-validation] pulled them in), jsonschema imports
rfc3987_syntax, which builds a Lark grammar at import: 2.4 s added to every k8s, k8s_info, k8s_drain and helm task
of every run and test (the CI time of 6 Dec doubled with it). The stack, validate and the rolling reboot run hundreds
of such tasks; requirements-dev.txt keeps the extras out."""

import subprocess
import sys

# imported at module level by packages that build parsers when imported
HEAVY = ('rfc3987_syntax', 'lark')


def test_the_kubernetes_modules_import_no_grammar_building_package():
    code = ('import sys, kubernetes.dynamic, kubernetes.config; '
            'print(" ".join(sorted(name for name in %r if name in sys.modules)))' % (HEAVY,))
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == '', (
        'importing kubernetes.dynamic (every kubernetes.core module does) loads %s: remove the package that pulls it '
        'in (jsonschema[format-nongpl], cyclonedx-python-lib[json-validation]) from requirements-dev.txt'
        % proc.stdout.strip())
