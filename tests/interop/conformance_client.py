"""appsdk as the client under test of the MCP conformance suite (`conformance client --command ...`).

The suite appends the scenario server's URL and names the scenario in $MCP_CONFORMANCE_SCENARIO (and
its extra data, e.g. a pre-registered client, in $MCP_CONFORMANCE_CONTEXT). This runs what a user would:
`appsdk call test-tool --url URL`, signing in when the server asks, with scripted_browser.py as the
browser and a fresh APPSDK_HOME. What each scenario gives appsdk is what a user would pass:
- auth/basic-cimd: `--client-id` the scenario's client metadata document URL;
- auth/pre-registration: `--client-id` the client's id, its secret in $APPSDK_CLIENT_SECRET.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CIMD_URL = "https://conformance-test.local/client-metadata.json"  # what auth/basic-cimd expects a client to use

url = sys.argv[-1]
scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
here = Path(__file__).resolve().parent
command = [sys.executable, "-m", "appsdk_cli", "call", "test-tool", "--url", url, "--timeout", "20"]
with tempfile.TemporaryDirectory(prefix="appsdk-conformance-") as home:
    env = {
        **os.environ,
        "APPSDK_HOME": home,
        "APPSDK_URL": "",
        "BROWSER": f"{sys.executable} {here / 'scripted_browser.py'} %s",
    }
    if scenario == "auth/basic-cimd":
        command += ["--client-id", CIMD_URL]
    elif context.get("client_id"):
        command += ["--client-id", str(context["client_id"])]
        if context.get("client_secret"):
            env["APPSDK_CLIENT_SECRET"] = str(context["client_secret"])
    sys.exit(subprocess.run(command, env=env, check=False).returncode)
