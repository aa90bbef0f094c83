"""The local apps registry and the Codex app-server `app/*` methods served over it.

policy.py   the config.toml rules (Codex's keys), pure functions over parsed layers
registry.py the files (apps.toml, config.toml, requirements.toml), the runtime snapshot, the caches
service.py  app/installed, app/list and app/read as result objects: one implementation for the CLI
            commands and the stdio server
server.py   `appsdk app-server`: the JSONL wire, validation, concurrency, notifications
"""
