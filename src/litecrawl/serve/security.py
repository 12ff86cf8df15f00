"""The dashboard's defences: security headers, loopback Host check, write token, CSRF.

Crawled pages are hostile input: templates escape everything (autoescape), and the
Content-Security-Policy allows no script at all, so even a missed escape cannot run code.
A write needs the start-up token: in the ``X-Litecrawl-Token`` header (API; a browser cannot send
that header cross-site without CORS, which is never granted), or in a form together with the
CSRF token of a SameSite=Strict cookie (double submit).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web

__all__ = [
    "CSP",
    "CSRF_COOKIE",
    "TOKEN_HEADER",
    "check_form",
    "check_header",
    "csrf_token",
    "security_middleware",
    "set_csrf",
]

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
CSRF_COOKIE = "litecrawl_csrf"
TOKEN_HEADER = "X-Litecrawl-Token"
_LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def security_middleware(loopback_only: bool) -> Callable[..., Awaitable[web.StreamResponse]]:
    """Headers on every answer; with ``loopback_only`` a request must name a loopback Host
    (a web page elsewhere cannot reach us through DNS rebinding)."""

    @web.middleware
    async def secure(request: web.Request, handler: Handler) -> web.StreamResponse:
        if loopback_only and _host_name(request.host) not in _LOOPBACK_NAMES:
            response: web.StreamResponse = web.Response(
                status=421, text=f"unexpected Host header: {request.host}"
            )
        else:
            try:
                response = await handler(request)
            except web.HTTPException as exc:
                response = exc
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["X-Frame-Options"] = "DENY"
        if not request.path.startswith("/static/"):
            response.headers["Cache-Control"] = "no-store"
        return response

    return secure


def _host_name(host: str) -> str:
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def csrf_token(request: web.Request) -> tuple[str, bool]:
    """The browser's CSRF token, and whether it is new (then set it with :func:`set_csrf`)."""
    found = request.cookies.get(CSRF_COOKIE, "")
    if len(found) >= 32:
        return found, False
    return secrets.token_urlsafe(32), True


def set_csrf(response: web.StreamResponse, token: str) -> None:
    response.set_cookie(CSRF_COOKIE, token, httponly=True, samesite="Strict", path="/")


def check_header(request: web.Request, token: str) -> str | None:
    """Why an API write is refused, or None."""
    if not _same(request.headers.get(TOKEN_HEADER, ""), token):
        return f"missing or wrong {TOKEN_HEADER} header (the token printed by litecrawl serve)"
    return None


def check_form(request: web.Request, form: dict[str, str], token: str) -> str | None:
    """Why a form write is refused, or None."""
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not _same(form.get("csrf", ""), cookie):
        return "the form's CSRF token does not match (reload the page and try again)"
    if not _same(form.get("token", ""), token):
        return "missing or wrong token (the one printed by litecrawl serve)"
    return None


def _same(given: str, expected: str) -> bool:
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())
