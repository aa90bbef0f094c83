"""Plugins: the package OpenAI ships every app as (skills + an MCP server + UI), for ChatGPT and Codex.

One module per job, each drivable without the CLI:

    from appsdk_cli.plugin.rules import check_plugin      # the PLUG rules -> a CheckReport
    from appsdk_cli.plugin.init import init_plugin        # write the manifest, .mcp.json and a logo
    from appsdk_cli.plugin.pack import pack_plugin        # a reproducible zip under the archive rules
    from appsdk_cli.plugin.marketplace import install_codex  # a local Codex marketplace entry

manifest.py finds the manifest the way Codex does; images.py reads asset headers and writes the logo;
tree.py walks the folder once, bounded, and reads regular files only (check, pack and install share it).
"""
