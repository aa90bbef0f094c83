"""`appsdk dev`: serve an app over HTTP and reload it on every save.

session.py composes one `appsdk dev` (the supervisor, the widget half, the workbench, the tunnel) and
reports what happens as events (events.py) to one observer; supervisor.py owns the listening socket and
forks one worker per reload; watch.py says which saves trigger one; worker.py runs in each fork, imports
the user's app and serves it on the inherited socket, wrapped in asgi.py's request-level rules.
"""
