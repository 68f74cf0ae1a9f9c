"""A real OpenID Connect provider on 127.0.0.1 for the single sign-on tests.

It speaks the authorization-code flow as a provider does, over HTTP on an ephemeral
port: discovery (/.well-known/openid-configuration), /authorize, /token, /userinfo
and /jwks. Sign-in and consent are automatic: /authorize sends the browser straight
back with a code for the person the test set with `sign_in_as`. ID and access tokens
are RS256 JWTs signed with a key made when the provider starts.

    with OidcProvider(redirect_uris={"http://testserver/oidc/callback/"}) as op:
        op.sign_in_as(OidcPerson("u-1", "ada@example.org", groups=["assay-experts"]))
        # settings: OIDC_OP_DISCOVERY_URL=op.discovery_url, client id/secret op's

It refuses what a provider refuses: an unknown client or wrong secret, a redirect URI
not registered, a code used twice, used late, used by another client or redirect URI,
or without its PKCE verifier, and an unknown or expired access token. To test the
relying party's checks it can sign ID tokens for another audience
(`id_token_audience`) or with a key it does not publish (`sign_with_unpublished_key`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import RSAKey

CODE_LIFETIME_SECONDS = 60
TOKEN_LIFETIME_SECONDS = 300


@dataclass
class OidcPerson:
    sub: str
    email: str
    groups: list[str] = field(default_factory=list)
    preferred_username: str = ""
    email_verified: bool = True


@dataclass
class Grant:
    """What an authorization code stands for."""

    client_id: str
    redirect_uri: str
    nonce: str | None
    code_challenge: str | None
    person: OidcPerson
    expires_at: float


class OidcProvider:
    def __init__(
        self,
        *,
        client_id: str = "assay-tests",
        client_secret: str = "assay-tests-secret",
        redirect_uris: set[str] | None = None,
    ):
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uris = set(redirect_uris or ())
        self.key = _new_key("assay-test-key")
        self.person: OidcPerson | None = None
        self.id_token_audience: str | None = None
        self.sign_with_unpublished_key = False
        self.refusals: list[str] = []
        self._codes: dict[str, Grant] = {}
        self._access_tokens: dict[str, OidcPerson] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> OidcProvider:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.provider = self
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OidcProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def issuer(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def discovery_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def sign_in_as(self, person: OidcPerson | None) -> None:
        """Who /authorize signs in from now on (None: the person declines)."""
        self.person = person

    def reset(self) -> None:
        """Back to honest tokens and no one signed in, for the next test."""
        self.person = None
        self.id_token_audience = None
        self.sign_with_unpublished_key = False
        self.refusals.clear()

    # --- endpoints ---------------------------------------------------------------

    def discovery(self) -> dict:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "jwks_uri": f"{self.issuer}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_post",
                "client_secret_basic",
            ],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "email", "profile"],
        }

    def authorize(self, query: dict[str, str]) -> tuple[int, dict[str, str], str]:
        """(status, headers, body) for GET /authorize."""
        redirect_uri = query.get("redirect_uri", "")
        if query.get("client_id") != self.client_id:
            return self._refuse(400, "unknown client_id")
        # An unregistered redirect URI gets an error page, never a redirect: that
        # would hand a code to whoever named the URI.
        if redirect_uri not in self.redirect_uris:
            return self._refuse(400, f"redirect_uri not registered: {redirect_uri}")
        state = query.get("state", "")
        if query.get("response_type") != "code":
            return _back(redirect_uri, error="unsupported_response_type", state=state)
        if "openid" not in query.get("scope", "").split():
            return _back(redirect_uri, error="invalid_scope", state=state)
        if query.get("code_challenge") and query.get("code_challenge_method") != "S256":
            return _back(redirect_uri, error="invalid_request", state=state)
        if self.person is None:
            return _back(redirect_uri, error="access_denied", state=state)
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = Grant(
                client_id=self.client_id,
                redirect_uri=redirect_uri,
                nonce=query.get("nonce"),
                code_challenge=query.get("code_challenge"),
                person=OidcPerson(**vars(self.person)),
                expires_at=time.time() + CODE_LIFETIME_SECONDS,
            )
        return _back(redirect_uri, code=code, state=state)

    def token(
        self, form: dict[str, str], authorization: str
    ) -> tuple[int, dict[str, str], str]:
        client_id, client_secret = _client_credentials(form, authorization)
        if client_id != self.client_id or not secrets.compare_digest(
            client_secret or "", self.client_secret
        ):
            return self._refuse(401, "invalid_client", json_error=True)
        if form.get("grant_type") != "authorization_code":
            return self._refuse(400, "unsupported_grant_type", json_error=True)
        with self._lock:
            # Popped whatever follows: a code is good for one try.
            grant = self._codes.pop(form.get("code", ""), None)
        if grant is None:
            return self._refuse(400, "invalid_grant: unknown or used code", True)
        if grant.expires_at < time.time():
            return self._refuse(400, "invalid_grant: code expired", True)
        if grant.client_id != client_id or grant.redirect_uri != form.get(
            "redirect_uri"
        ):
            return self._refuse(400, "invalid_grant: client or redirect_uri", True)
        if grant.code_challenge and grant.code_challenge != _s256(
            form.get("code_verifier", "")
        ):
            return self._refuse(400, "invalid_grant: PKCE verifier", True)
        now = int(time.time())
        access_token = self._sign(
            {
                "iss": self.issuer,
                "sub": grant.person.sub,
                "aud": f"{self.issuer}/userinfo",
                "client_id": client_id,
                "iat": now,
                "exp": now + TOKEN_LIFETIME_SECONDS,
                "jti": secrets.token_urlsafe(12),
            },
            self.key,
            typ="at+jwt",
        )
        id_claims = {
            "iss": self.issuer,
            "sub": grant.person.sub,
            "aud": self.id_token_audience or client_id,
            "azp": client_id,
            "iat": now,
            "exp": now + TOKEN_LIFETIME_SECONDS,
            "auth_time": now,
        }
        if grant.nonce is not None:
            id_claims["nonce"] = grant.nonce
        id_key = self.key
        if self.sign_with_unpublished_key:
            id_key = _new_key(self.key.kid)
        with self._lock:
            self._access_tokens[access_token] = grant.person
        body = {
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": TOKEN_LIFETIME_SECONDS,
            "id_token": self._sign(id_claims, id_key),
        }
        return 200, _JSON_NO_STORE, json.dumps(body)

    def userinfo(self, authorization: str) -> tuple[int, dict[str, str], str]:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return self._refuse(401, "invalid_token: no bearer token", True)
        try:
            claims = jwt.decode(token, self.key, algorithms=["RS256"]).claims
        except (JoseError, ValueError):
            return self._refuse(401, "invalid_token: bad signature", True)
        with self._lock:
            person = self._access_tokens.get(token)
        if person is None or claims.get("exp", 0) < time.time():
            return self._refuse(401, "invalid_token: unknown or expired", True)
        body = {
            "sub": person.sub,
            "email": person.email,
            "email_verified": person.email_verified,
            "groups": person.groups,
        }
        if person.preferred_username:
            body["preferred_username"] = person.preferred_username
        return 200, _JSON_NO_STORE, json.dumps(body)

    def jwks(self) -> dict:
        return {"keys": [self.key.as_dict(private=False)]}

    # --- helpers -----------------------------------------------------------------

    def _sign(self, claims: dict, key: RSAKey, typ: str = "JWT") -> str:
        return jwt.encode({"alg": "RS256", "kid": key.kid, "typ": typ}, claims, key)

    def _refuse(self, status: int, reason: str, json_error: bool = False):
        self.refusals.append(reason)
        if json_error:
            error, _, description = reason.partition(": ")
            body = {"error": error, "error_description": description}
            return status, {"Content-Type": "application/json"}, json.dumps(body)
        return status, {"Content-Type": "text/plain"}, reason


_JSON_NO_STORE = {"Content-Type": "application/json", "Cache-Control": "no-store"}


def _new_key(kid: str) -> RSAKey:
    return RSAKey.generate_key(
        2048, parameters={"kid": kid, "use": "sig", "alg": "RS256"}
    )


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _back(redirect_uri: str, **params: str) -> tuple[int, dict[str, str], str]:
    separator = "&" if urlsplit(redirect_uri).query else "?"
    location = f"{redirect_uri}{separator}{urlencode(params)}"
    return 302, {"Location": location}, ""


def _client_credentials(form: dict[str, str], authorization: str):
    """client_secret_basic or client_secret_post, as the client chose."""
    scheme, _, encoded = authorization.partition(" ")
    if scheme.lower() == "basic":
        decoded = base64.b64decode(encoded).decode("utf-8")
        client_id, _, client_secret = decoded.partition(":")
        return client_id, client_secret
    return form.get("client_id"), form.get("client_secret")


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        provider: OidcProvider = self.server.provider
        url = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(url.query).items()}
        if url.path == "/.well-known/openid-configuration":
            self._answer(
                200, {"Content-Type": "application/json"}, provider.discovery()
            )
        elif url.path == "/jwks":
            self._answer(200, {"Content-Type": "application/json"}, provider.jwks())
        elif url.path == "/authorize":
            self._answer(*provider.authorize(query))
        elif url.path == "/userinfo":
            self._answer(*provider.userinfo(self.headers.get("Authorization", "")))
        else:
            self._answer(404, {"Content-Type": "text/plain"}, "not found")

    def do_POST(self):
        provider: OidcProvider = self.server.provider
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8")
        form = {key: values[0] for key, values in parse_qs(raw).items()}
        if urlsplit(self.path).path == "/token":
            self._answer(*provider.token(form, self.headers.get("Authorization", "")))
        elif urlsplit(self.path).path == "/userinfo":
            self._answer(*provider.userinfo(self.headers.get("Authorization", "")))
        else:
            self._answer(404, {"Content-Type": "text/plain"}, "not found")

    def _answer(self, status: int, headers: dict[str, str], body) -> None:
        if not isinstance(body, str):
            body = json.dumps(body)
        data = body.encode("utf-8")
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        # Quiet: pytest would show every request of every sign-in.
        pass
