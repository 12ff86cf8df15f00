"""Start-up: a process loads what its command uses, not every feature's libraries.

A ``litecrawl()`` batch under cron and each CLI command start a fresh interpreter; a library
imported for nothing is CPU paid on every start (docs/architecture.md#start-up;
``bench/startup.py`` measures it)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from aiohttp import web
from conftest import LocalServer, html_page, site_app

Serve = Callable[[web.Application], LocalServer]

# libraries that only some features use: the dashboard, exports, feeds, the freshness policy,
# rendering, the analysis workers' models, the public suffix list (a host name's registered
# domain: not for an IP address, nor for a command that only reads a database)
OPTIONAL = [
    "tldextract",
    "requests",
    "numpy",
    "jinja2",
    "aiohttp.web",
    "warcio",
    "pyarrow",
    "feedparser",
    "playwright",
    "model2vec",
]

PROBE = """
import json, sys
{code}
print(json.dumps(sorted(m for m in {optional!r} if m in sys.modules)))
"""


def _loaded(code: str, cwd: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(code=code, optional=OPTIONAL)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_a_litecrawl_batch_over_http_loads_no_optional_library(
    serve: Serve, tmp_path: Path
) -> None:
    site = serve(site_app({"/": html_page('<a href="/a">a</a>', "Home"), "/a": html_page("A")}))
    code = (
        "from litecrawl import litecrawl\n"
        f"litecrawl({str(tmp_path / 'b.db')!r}, [{site.url('/')!r}], fetcher='http')\n"
        f"litecrawl({str(tmp_path / 'b.db')!r}, [{site.url('/')!r}], fetcher='http')\n"
    )
    assert _loaded(code, tmp_path) == []
    assert site.count("/") == 1 and site.count("/a") == 1  # both batches really crawled


def test_the_cli_loads_a_commands_libraries_when_it_runs(tmp_path: Path) -> None:
    """Typer needs every command's signature; the modules behind them load in the command."""
    assert _loaded("import litecrawl.cli", tmp_path) == []
    code = (
        "from typer.testing import CliRunner\n"
        "from litecrawl.cli import app\n"
        "result = CliRunner().invoke(app, ['crawl', '--help'])\n"
        "assert result.exit_code == 0, result.output\n"
    )
    assert _loaded(code, tmp_path) == []


def test_an_analysis_worker_does_not_read_the_package_metadata(tmp_path: Path) -> None:
    """A worker imports the package for its submodules only: the version (importlib.metadata,
    email, zipfile) loads when asked for."""
    code = (
        "import sys\n"
        "import litecrawl.index.work\n"
        "assert 'importlib.metadata' not in sys.modules, 'metadata read at import'\n"
        "import litecrawl\n"
        "from litecrawl.version import VERSION\n"
        "assert litecrawl.__version__ == VERSION and VERSION, VERSION\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
