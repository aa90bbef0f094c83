"""Test-only stand-in for the ngrok agent; see the docstring of ``ngrok`` here."""

from pathlib import Path

#: Executable to use as ``PyngrokConfig(ngrok_path=...)`` or ``PYNGROK_NGROK_PATH``.
STANDIN_PATH = str(Path(__file__).with_name("ngrok"))
#: Environment variable naming the directory that holds ``ca.pem``.
CERT_DIR_ENV = "NGROK_STANDIN_CERT_DIR"
#: Authtokens starting with this prefix are rejected with ERR_NGROK_4018.
REJECT_PREFIX = "reject"
#: Agent API route that makes the stand-in exit with code 1 at once.
CRASH_ROUTE = "/api/standin/crash"
