"""The dashboard's aiohttp application: every page in HTML and, under /api/, as JSON."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web

from litecrawl.errors import ConfigError, LitecrawlError
from litecrawl.serve import security
from litecrawl.serve.annotate import SiteAnnotator
from litecrawl.serve.render import make_environment, query_string
from litecrawl.serve.seeds import SeedAdder
from litecrawl.serve.views import HOST_SORTS, PAGE_LIMIT, SEARCH_MODES, WINDOWS, Dashboard
from litecrawl.sites.model import ANNOTATION_KINDS, LISTINGS, STATUSES
from litecrawl.store.dashboard import PageFilter
from litecrawl.store.states import STATES

__all__ = ["ServeSettings", "make_app"]

_STATIC = Path(__file__).parent / "static"
_MAX_SEARCH = 100
_MAX_PAGES = 500


@dataclass(frozen=True, slots=True)
class ServeSettings:
    dashboard: Dashboard
    seeds: SeedAdder
    annotator: SiteAnnotator
    token: str
    read_only: bool
    loopback_only: bool  # bound to 127.0.0.1/::1: refuse other Host headers


_SETTINGS = web.AppKey("settings", ServeSettings)
_ENV = web.AppKey("env", jinja2.Environment)


def make_app(settings: ServeSettings) -> web.Application:
    app = web.Application(middlewares=[security.security_middleware(settings.loopback_only)])
    app[_SETTINGS] = settings
    app[_ENV] = make_environment()
    r = app.router
    r.add_get("/", _overview)
    r.add_get("/api/overview", _overview)
    r.add_get("/hosts", _hosts)
    r.add_get("/api/hosts", _hosts)
    r.add_get("/pages", _pages)
    r.add_get("/api/pages", _pages)
    r.add_get("/page", _page)
    r.add_get("/api/page", _page)
    r.add_get("/search", _search)
    r.add_get("/api/search", _search)
    r.add_get("/seeds", _seeds_form)
    r.add_post("/seeds", _seeds_post)
    r.add_post("/api/seeds", _seeds_api)
    r.add_get("/sites", _sites)
    r.add_get("/api/sites", _sites)
    r.add_get("/site", _site)
    r.add_get("/api/site", _site)
    r.add_post("/site", _annotate_post)
    r.add_post("/api/site/annotate", _annotate_api)
    r.add_static("/static/", _STATIC)
    return app


def _api(request: web.Request) -> bool:
    return request.path.startswith("/api/")


async def _read(request: web.Request, fn: Callable[[], Any]) -> Any:
    """Run a blocking read in a thread; a database that cannot be read is a 500 with why."""
    try:
        return await asyncio.to_thread(fn)
    except LitecrawlError as exc:
        raise _fail(request, 500, str(exc)) from exc


def _fail(request: web.Request, status: int, message: str) -> web.HTTPException:
    if _api(request):
        body, ctype = json.dumps({"error": message}), "application/json"
    else:
        body = _render(request, "error.html", status=status, message=message)
        ctype = "text/html"
    return _http(status, body, ctype)


def _http(status: int, body: str, ctype: str) -> web.HTTPException:
    cls: type[web.HTTPException] = {
        400: web.HTTPBadRequest,
        403: web.HTTPForbidden,
        404: web.HTTPNotFound,
    }.get(status, web.HTTPInternalServerError)
    return cls(text=body, content_type=ctype)


def _render(request: web.Request, template: str, **context: Any) -> str:
    settings = request.app[_SETTINGS]
    page = request.app[_ENV].get_template(template)
    return page.render(db=settings.dashboard.db, read_only=settings.read_only, **context)


def _answer(request: web.Request, data: Any, template: str, **context: Any) -> web.Response:
    if _api(request):
        return web.json_response(data, dumps=lambda d: json.dumps(d, ensure_ascii=False))
    return web.Response(
        text=_render(request, template, data=data, **context), content_type="text/html"
    )


def _int(request: web.Request, name: str, default: int, top: int) -> int:
    raw = request.query.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise _fail(request, 400, f"{name} must be a whole number, got {raw!r}") from None
    if not 0 <= value <= top:
        raise _fail(request, 400, f"{name} must be between 0 and {top}, got {value}")
    return value


async def _overview(request: web.Request) -> web.Response:
    window = request.query.get("window", "1h")
    if window not in WINDOWS:
        raise _fail(request, 400, f"window must be one of {', '.join(WINDOWS)}, got {window!r}")
    dashboard = request.app[_SETTINGS].dashboard
    view, chart = await _read(request, lambda: dashboard.overview(window))
    return _answer(request, view, "overview.html", chart=chart, refresh=5, windows=list(WINDOWS))


async def _hosts(request: web.Request) -> web.Response:
    sort = request.query.get("sort", "pages")
    order = request.query.get("order", "asc" if sort == "host" else "desc")
    if sort not in HOST_SORTS or order not in ("asc", "desc"):
        raise _fail(
            request, 400, f"sort must be one of {', '.join(HOST_SORTS)} and order asc or desc"
        )
    dashboard = request.app[_SETTINGS].dashboard
    view = await _read(request, lambda: dashboard.hosts(sort, order == "desc"))
    return _answer(request, view, "hosts.html", sorts=HOST_SORTS)


async def _pages(request: web.Request) -> web.Response:
    q = request.query
    state = q.get("state", "")
    if state and state not in STATES:
        raise _fail(request, 400, f"state must be one of {', '.join(STATES)}, got {state!r}")
    where = PageFilter(
        host=q.get("host", "").strip(),
        state=state,
        error=q.get("error", "").strip(),
        content_type=q.get("content_type", "").strip(),
        text=q.get("text", "").strip(),
    )
    offset = _int(request, "offset", 0, 10**9)
    limit = _int(request, "limit", PAGE_LIMIT, _MAX_PAGES)
    dashboard = request.app[_SETTINGS].dashboard
    view = await _read(request, lambda: dashboard.pages(where, offset, limit))
    if _api(request):
        return _answer(request, view, "")
    facets = await _read(request, dashboard.queries.facets)
    return _answer(request, view, "pages.html", facets=facets, states=list(STATES))


async def _page(request: web.Request) -> web.Response:
    url = request.query.get("url", "")
    if not url:
        raise _fail(request, 400, "url is missing (/page?url=...)")
    dashboard = request.app[_SETTINGS].dashboard
    in_offset = _int(request, "in_offset", 0, 10**9)
    out_offset = _int(request, "out_offset", 0, 10**9)
    view = await _read(request, lambda: dashboard.page(url, in_offset, out_offset))
    if view is None:
        raise _fail(request, 404, f"not in the frontier: {url}")
    return _answer(request, view, "page.html")


async def _search(request: web.Request) -> web.Response:
    query = request.query.get("q", "")
    limit = _int(request, "limit", 10, _MAX_SEARCH)
    offset = _int(request, "offset", 0, 10**9)
    # the API marks matches like `litecrawl search --json`; HTML uses private markers
    marks = ("[", "]") if _api(request) else ("\x02", "\x03")
    mode = request.query.get("mode") or None  # None: hybrid when there are vectors (as the CLI)
    if mode not in (None, *SEARCH_MODES):
        raise _fail(request, 400, f"mode must be one of {', '.join(SEARCH_MODES)}, got {mode!r}")
    dashboard = request.app[_SETTINGS].dashboard
    hits, ran, note = await _read(
        request, lambda: dashboard.search(query, mode, limit, offset, marks)
    )
    return _answer(
        request,
        hits,
        "search.html",
        query=query,
        offset=offset,
        limit=limit,
        mode=mode or "",
        ran=ran,
        note=note,
        modes=SEARCH_MODES,
    )


async def _seeds_form(request: web.Request) -> web.Response:
    return _seeds_page(request, None, 200)


def _seeds_page(
    request: web.Request, outcome: Any, status: int, refused: str = "", typed: str = ""
) -> web.Response:
    return _form_page(request, "seeds.html", status, outcome=outcome, refused=refused, typed=typed)


def _form_page(request: web.Request, template: str, status: int, **context: Any) -> web.Response:
    """A page with a write form: its CSRF token, set as a cookie when new."""
    csrf, new = security.csrf_token(request)
    response = web.Response(
        text=_render(request, template, csrf=csrf, **context),
        content_type="text/html",
        status=status,
    )
    if new:
        security.set_csrf(response, csrf)
    return response


async def _write_form(request: web.Request) -> tuple[dict[str, str], str | None]:
    """A write form's fields and why it is refused (None: go ahead)."""
    settings = request.app[_SETTINGS]
    if settings.read_only:
        raise _fail(request, 403, "this dashboard is read-only (litecrawl serve --read-only)")
    form = {k: v for k, v in (await request.post()).items() if isinstance(v, str)}
    return form, security.check_form(request, form, settings.token)


def _check_api_write(request: web.Request) -> None:
    """A JSON write goes ahead only with the token (and not when read-only)."""
    settings = request.app[_SETTINGS]
    if settings.read_only:
        raise _fail(request, 403, "this dashboard is read-only (litecrawl serve --read-only)")
    refused = security.check_header(request, settings.token)
    if refused:
        raise _fail(request, 403, refused)


async def _seeds_post(request: web.Request) -> web.Response:
    form, refused = await _write_form(request)
    if refused:  # the form again, with why and what was typed, to try again
        return _seeds_page(request, None, 403, refused, form.get("urls", ""))
    lines = form.get("urls", "").splitlines()
    outcome = await _add(request, lines, form.get("due_now") == "on")
    return _seeds_page(request, outcome, 200)


async def _seeds_api(request: web.Request) -> web.Response:
    _check_api_write(request)
    try:
        body = await request.json()
    except ValueError:
        raise _fail(request, 400, 'the body must be JSON: {"urls": [...]}') from None
    urls = body.get("urls") if isinstance(body, dict) else None
    if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
        raise _fail(request, 400, 'the body must be {"urls": ["https://...", ...]}')
    due_now = bool(body.get("due_now", False))
    return web.json_response(await _add(request, urls, due_now))


async def _add(request: web.Request, lines: list[str], due_now: bool) -> dict[str, Any]:
    adder = request.app[_SETTINGS].seeds
    try:
        return await adder.add(lines, due_now, int(time.time()))
    except LitecrawlError as exc:
        raise _fail(request, 500, str(exc)) from exc


async def _sites(request: web.Request) -> web.Response:
    status = request.query.get("status") or None
    if status is not None and status not in STATUSES + LISTINGS:
        known = ", ".join(STATUSES + LISTINGS)
        raise _fail(request, 400, f"status must be one of {known}, got {status!r}")
    dashboard = request.app[_SETTINGS].dashboard
    view = await _read(request, lambda: dashboard.sites(status))
    if view is None:
        raise _fail(request, 404, "no site queue in this database (litecrawl sites add ...)")
    return _answer(request, view, "sites.html", statuses=STATUSES + LISTINGS)


async def _site(request: web.Request) -> web.Response:
    return await _site_page(request, request.query.get("url", ""), 200)


async def _site_page(
    request: web.Request, url: str, status: int, refused: str = ""
) -> web.Response:
    if not url:
        raise _fail(request, 400, "url is missing (/site?url=...)")
    dashboard = request.app[_SETTINGS].dashboard
    view = await _read(request, lambda: dashboard.site(url))
    if view is None:
        raise _fail(request, 404, f"no such site: {url}")
    if _api(request):
        return _answer(request, view, "")
    return _form_page(
        request, "site.html", status, data=view, kinds=ANNOTATION_KINDS, refused=refused
    )


async def _annotate_post(request: web.Request) -> web.Response:
    form, refused = await _write_form(request)
    url = form.get("url", "")
    if refused:
        return await _site_page(request, url, 403, refused)
    action = form.get("action", "")
    kind = action.removeprefix("remove-")
    await _annotation(request, url, kind, form.get("text", ""), action.startswith("remove-"))
    raise web.HTTPSeeOther("/site" + query_string(url=url))


async def _annotate_api(request: web.Request) -> web.Response:
    _check_api_write(request)
    try:
        body = await request.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or not all(
        isinstance(body.get(k, ""), str) for k in ("url", "kind", "text")
    ):
        raise _fail(request, 400, 'the body must be {"url": ..., "kind": ..., "text": ...}')
    return web.json_response(
        await _annotation(
            request,
            body.get("url", ""),
            body.get("kind", ""),
            body.get("text", ""),
            bool(body.get("remove", False)),
        )
    )


async def _annotation(
    request: web.Request, url: str, kind: str, text: str, remove: bool
) -> dict[str, Any]:
    try:
        return await request.app[_SETTINGS].annotator.apply(url, kind, text, remove)
    except ConfigError as exc:
        raise _fail(request, 400, str(exc)) from exc
    except LitecrawlError as exc:
        raise _fail(request, 500, str(exc)) from exc
