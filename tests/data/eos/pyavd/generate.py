"""Regenerate pyavd-qos.cfg from qos-structured-config.yml with Arista's pyavd (6.4):
validate the structured config, render it with eos_cli_config_gen. Run with an interpreter that
has pyavd installed (it is not a test dependency: pip install 'pyavd==6.4.*' in a scratch venv):

    python tests/data/eos/pyavd/generate.py
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pyavd import get_device_config, validate_structured_config

HERE = Path(__file__).parent
structured = yaml.safe_load((HERE / "qos-structured-config.yml").read_text())
result = validate_structured_config(structured)
if result.validation_result.violations:
    raise SystemExit("; ".join(f"{'.'.join(v.path)}: {v.message}" for v in result.validation_result.violations))
(HERE / "pyavd-qos.cfg").write_text(get_device_config(result.validated_data))
