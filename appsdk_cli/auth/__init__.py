"""Sign-in, both sides: appsdk's own client flow (client.py, over discovery.py, registration.py and
callback.py) and its token cache (tokens.py); and the development authorization server that `appsdk dev`
hosts (server/), with the clients it accepts (clients.py)."""
