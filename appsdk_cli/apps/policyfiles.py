"""config.toml and requirements.toml read into the policy's layers (the rules themselves are in policy.py).

The user's config.toml files (APPSDK_HOME, then the project's) merge; requirements.toml is the managed
layer. appsdk never writes either. A value the rules refuse is an error naming the file and line.
"""

from __future__ import annotations

from pathlib import Path

from appsdk_cli.apps import policy as policy_rules
from appsdk_cli.apps.files import Paths
from appsdk_cli.apps.tomlfile import file_error, read_toml


def _read_policy_layer(path: Path) -> policy_rules.PolicyLayer:
    loaded = read_toml(path)
    if loaded is None:
        return policy_rules.PolicyLayer()
    document, text = loaded
    try:
        return policy_rules.parse_layer(document)
    except policy_rules.PolicyValueError as problem:
        raise file_error(path, text, problem.path, str(problem)) from None


def load_policy(paths: Paths) -> policy_rules.Policy:
    user = policy_rules.merge(_read_policy_layer(path) for path in paths.config_files())
    return policy_rules.Policy(user=user, managed=_read_policy_layer(paths.requirements_file))
