"""The local apps registry and the Codex app-server `app/*` methods served over it.

files.py       where the files are (APPSDK_HOME, a project's .appsdk/), atomic writes, the lock
tomlfile.py    reading TOML, each error naming the file and line
registry.py    apps.toml: the registered apps, parsed, rendered, added and removed
policy.py      the config.toml rules (Codex's keys), pure functions over parsed layers
policyfiles.py config.toml and requirements.toml read into those layers
listing.py     listing app servers' tools, every app at once
installed.py   the runtime snapshot behind app/installed
cache.py       the time-limited caches of the app/* methods
service.py     app/installed, app/list and app/read as result objects: one implementation for the CLI
               commands and the stdio server
server.py      `appsdk app-server`: the JSONL wire, validation, concurrency, notifications
"""
