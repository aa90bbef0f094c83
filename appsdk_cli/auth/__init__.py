"""Sign-in, both sides: the client flow and its token cache (client.py), and the development
authorization server that `appsdk dev` hosts (server/)."""
