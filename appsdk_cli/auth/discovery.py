"""Discovery: from the server connected to, to its authorization server's metadata, checked on the way.

- Protected Resource Metadata (RFC 9728): the challenge's URL, else the path-based, else the root
  well-known URL; its `resource` must be the server connected to (§3.3), which `resource_problem` says,
  and before a cached grant goes anywhere, the one it was made under (`grant_problem`).
- Authorization server metadata (RFC 8414) at the well-known URLs for an issuer; a document that names
  another issuer is refused (§3.3).
- MCP 2025-03-26's legacy rule for a server with no resource metadata: its origin is its authorization
  server, with that spec's default endpoints when it publishes no metadata.

Apart from the flow because more than the flow reads these documents: `check` and `snapshot` record what
a server's challenge leads to (snapshot/live.py) without signing in, and who appsdk is to the
authorization server (registration.py) reads a client metadata document with `get_json`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from appsdk_cli.auth.signin_errors import SignInError


def resource_problem(resource: Any, server_url: str) -> str | None:
    """Why a PRM's `resource` is not the server at `server_url` (RFC 9728 §3.3), or None when it is.

    Same scheme, host and port; the resource's path is the server's or a parent of it on a segment
    boundary (a root-level PRM names the origin, as MCP allows)."""
    if not isinstance(resource, str) or not resource:
        return "it names no resource"
    left, right = urlsplit(resource), urlsplit(server_url)
    same_origin = (
        left.scheme.lower() == right.scheme.lower()
        and (left.hostname or "").lower() == (right.hostname or "").lower()
        and (left.port or _default_port(left.scheme)) == (right.port or _default_port(right.scheme))
    )
    own, asked = left.path.rstrip("/"), right.path.rstrip("/")
    if same_origin and not left.query and (own == asked or asked.startswith(own + "/")):
        return None
    return f"it says it is {resource}"


def grant_problem(prm: dict[str, Any], server_url: str, resource: str, issuer: str) -> str | None:
    """Why the server at `server_url`, showing this resource metadata, is not the one a grant for
    `resource` from `issuer` was made with; None when it shows the same resource and names that issuer."""
    from appsdk_cli.auth.tokens import server_key

    said = prm.get("resource")
    problem = resource_problem(said, server_url)
    if problem:
        return f"its resource metadata {problem}"
    listed = prm.get("authorization_servers")
    issuers = [s for s in listed if isinstance(s, str)] if isinstance(listed, list) else []
    # Issuers compare exactly (RFC 8414), but for the trailing slash URL libraries add to a path-less one.
    if server_key(str(said)) == server_key(resource) and issuer.rstrip("/") in [s.rstrip("/") for s in issuers]:
        return None
    named = ", ".join(issuers) if issuers else "no authorization server"
    return f"it names {named}; you signed in at {issuer}"


def _default_port(scheme: str) -> int | None:
    return {"http": 80, "https": 443}.get(scheme.lower())


def challenge_url_problem(server_url: str, challenge_url: str) -> str | None:
    """Why appsdk will not fetch the `resource_metadata` a 401 from `server_url` names, or None.

    A server's challenge is the one place it chooses a URL our client then fetches, before any sign-in: a
    hostile one named loopback services, private ranges and cloud metadata (169.254.169.254). RFC 9728 puts
    a resource's metadata under its own origin, at the well-known path or wherever it says there, so the
    origin (scheme, host, port) must be the server's; a loopback server is then answered only by
    loopback, a public one never by this machine or its network."""
    from appsdk_cli.httpguard import origin

    asked = origin(challenge_url)
    if asked[0] not in ("http", "https") or not asked[1]:
        return f"it is not an http(s) URL; appsdk reads a server's resource metadata only from {origin_of(server_url)}"
    if asked != origin(server_url):
        return f"it is not on the server's own origin ({origin_of(server_url)}), the only place appsdk reads it from"
    return None


def inward_problem(server_url: str, url: str, what: str) -> str | None:
    """Why a public server's document may not send appsdk to `url` (this machine or a private network),
    or None. A server on this machine or a private network may name such places: it is in them already."""
    from appsdk_cli.netloc import is_inward_host

    server_host, host = urlsplit(server_url).hostname or "", urlsplit(url).hostname or ""
    if is_inward_host(host) and not is_inward_host(server_host):
        return (
            f"refusing to read the {what} at {url}: {server_url} is a public server and {host} is this machine "
            "or a private network, which appsdk does not reach on a public server's word"
        )
    return None


def protected_resource_metadata(http: Any, server_url: str, challenge_url: str | None) -> tuple[dict[str, Any], str]:
    """The PRM and where it was read: the challenge's URL (on the server's origin only), else path-based,
    else root well-known."""
    if challenge_url:
        problem = challenge_url_problem(server_url, challenge_url)
        if problem:
            raise SignInError(
                f"refusing the resource metadata {server_url}'s challenge names at {challenge_url}: {problem}"
            )
        return get_json(http, challenge_url, "protected resource metadata"), challenge_url
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    candidates = [f"{origin}/.well-known/oauth-protected-resource{parts.path.rstrip('/')}"]
    if parts.path.rstrip("/"):
        candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    last: SignInError | None = None
    for url in candidates:
        try:
            return get_json(http, url, "protected resource metadata"), url
        except SignInError as problem:
            last = problem
    assert last is not None
    raise last


def authorization_server_metadata(
    http: Any, issuer: str, *, server_url: str, verify_issuer: bool = True
) -> dict[str, Any]:
    """RFC 8414 metadata for `issuer`, named by `server_url`; refuses a document that names another issuer
    (§3.3), and, for a public server, an issuer or endpoint on this machine or a private network."""
    inward = inward_problem(server_url, issuer, "authorization server metadata")
    if inward:
        raise SignInError(inward)
    metadata = _issuer_metadata(http, issuer, verify_issuer)
    inward = endpoints_inward_problem(server_url, metadata)
    if inward:
        raise SignInError(inward)
    return metadata


def endpoints_inward_problem(server_url: str, metadata: dict[str, Any]) -> str | None:
    """inward_problem for each endpoint an authorization server's metadata names: appsdk then posts to them
    (registration, token, revocation), so the public server's word reaches them as much as the issuer."""
    for key, url in metadata.items():
        if isinstance(url, str) and (key.endswith("_endpoint") or key == "jwks_uri"):
            inward = inward_problem(server_url, url, key.replace("_", " "))
            if inward:
                return inward
    return None


def _issuer_metadata(http: Any, issuer: str, verify_issuer: bool) -> dict[str, Any]:
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    origin = f"{parts.scheme}://{parts.netloc}"
    # RFC 8414 section 3.1 inserts the well-known segment before the issuer's path; OIDC appends it.
    candidates = [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]
    for url in dict.fromkeys(candidates):
        try:
            metadata = get_json(http, url, "authorization server metadata")
        except SignInError:
            continue
        said = metadata.get("issuer")
        # Exact, as RFC 8414 says, but for the trailing slash URL libraries add to a path-less issuer.
        if verify_issuer and (not isinstance(said, str) or said.rstrip("/") != issuer.rstrip("/")):
            raise SignInError(
                f"refusing to sign in: the authorization server metadata at {url} says issuer {said!r}, "
                f"not {issuer} (RFC 8414 §3.3: it may be impersonating another server)"
            )
        return metadata
    raise SignInError(f"no authorization server metadata found for {issuer}")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def legacy_metadata(http: Any, origin: str) -> dict[str, Any]:
    """MCP 2025-03-26, for a server with no resource metadata: its origin is its authorization server, and
    without metadata there the default endpoints apply (that spec's §2.3.3; PKCE was mandatory in it)."""
    url = f"{origin}/.well-known/oauth-authorization-server"
    try:
        metadata = get_json(http, url, "authorization server metadata")
    except SignInError:
        metadata = None
    if metadata is not None:
        said = metadata.get("issuer")
        # That spec put the metadata at the origin whatever the issuer's path; another origin is refused.
        if not isinstance(said, str) or origin_of(said) != origin:
            raise SignInError(
                f"refusing to sign in: the authorization server metadata at {url} says issuer {said!r}, "
                f"which is not on {origin} (RFC 8414 §3.3)"
            )
        return metadata
    return {
        "issuer": origin,
        "authorization_endpoint": origin + "/authorize",
        "token_endpoint": origin + "/token",
        "registration_endpoint": origin + "/register",
        "code_challenge_methods_supported": ["S256"],
    }


def get_json(http: Any, url: str, what: str) -> dict[str, Any]:
    import httpx

    try:
        response = http.get(url, headers={"Accept": "application/json"})
    except httpx.HTTPError as problem:
        raise SignInError(f"cannot read the {what} at {url}: {problem}") from None
    if response.status_code != 200:
        raise SignInError(f"the {what} at {url} answered HTTP {response.status_code}")
    try:
        value = response.json()
    except ValueError:
        raise SignInError(f"the {what} at {url} is not JSON") from None
    if not isinstance(value, dict):
        raise SignInError(f"the {what} at {url} is not a JSON object")
    return value
