"""A deterministic benchmark site: N pages of ~24 KB with ~30 links each, served by nginx.

    uv run python bench/site.py /tmp/lcbench-10000 -n 10000

Shape (comparable to the shared kit's site): pages in sections of 1000 (``/s003/page3017.html``),
every page reachable from ``/index.html`` within a few hops, ~30 hrefs per page mixing
root-relative, absolute, ``page12.html``, ``./`` and ``../`` forms, ``#fragments``, duplicates,
2 off-site links, ``mailto:``/``javascript:`` links, and fake links inside ``<script>`` (a regex
extractor would follow them). robots.txt allows everything and names a sitemap index.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

BASE = "http://127.0.0.1:8181"
SECTION = 1000
WORDS = [
    "crawler",
    "frontier",
    "politeness",
    "schedule",
    "archive",
    "index",
    "search",
    "harvest",
    "robots",
    "sitemap",
    "network",
    "server",
    "client",
    "latency",
    "throughput",
    "storage",
    "document",
    "resource",
    "extract",
    "render",
    "measure",
    "benchmark",
    "queue",
    "claim",
]


def page_path(i: int) -> str:
    return f"/s{i // SECTION:03d}/page{i}.html"


def href_for(rng: random.Random, source: int, target: int) -> str:
    """One of several spellings of a link from page ``source`` to page ``target``."""
    path = page_path(target)
    same_section = source // SECTION == target // SECTION
    style = rng.randrange(5)
    if style == 0:
        href = BASE + path
    elif style == 1 and same_section:
        href = f"page{target}.html"
    elif style == 2 and same_section:
        href = f"./page{target}.html"
    elif style == 3:
        href = f"../s{target // SECTION:03d}/page{target}.html"
    else:
        href = path
    return href + (f"#sec{rng.randrange(9)}" if rng.random() < 0.15 else "")


def paragraph(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def render(i: int, n: int, rng: random.Random) -> str:
    # A spanning tree (i -> 2i+1, 2i+2) guarantees reachability; random links add the rest.
    targets = [t for t in (2 * i + 1, 2 * i + 2) if t < n]
    targets += [rng.randrange(n) for _ in range(18)]
    links = [href_for(rng, i, t) for t in targets]
    links += [href_for(rng, i, targets[0] if targets else 0) for _ in range(4)]  # duplicates
    links += ["http://127.0.0.2:8181/elsewhere.html", "https://example.invalid/x"]
    links += ["mailto:team@example.invalid", "javascript:void(0)"]
    nav = "".join(
        f'<a href="/s{s:03d}/page{s * SECTION}.html">Section {s}</a> '
        for s in range(min(4, (n + SECTION - 1) // SECTION))
    )
    body = "".join(
        f'<p>{paragraph(rng, 40)} <a href="{h}">link {k}</a></p>\n' for k, h in enumerate(links)
    )
    filler = "".join(f"<p>{paragraph(rng, 60)}</p>\n" for _ in range(28))
    script = f"<script>var tpl = '<a href=\"/never{i}.html\">x</a>';</script>"
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>Page {i}</title>"
        f'{script}</head><body><nav><a href="/index.html">Home</a> {nav}</nav>'
        f"<h1>Page {i}</h1>\n{body}{filler}<footer>footer</footer></body></html>"
    )


def generate(out: Path, n: int, seed: int = 20261122) -> dict[str, object]:
    rng = random.Random(seed)
    sizes = []
    for i in range(n):
        path = out / page_path(i).lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        html = render(i, n, rng)
        path.write_text(html, "utf-8")
        sizes.append(len(html))
    (out / "index.html").write_text(
        f"<!doctype html><html><head><title>Page index</title></head><body>"
        f'<a href="{page_path(0)}">start</a></body></html>',
        "utf-8",
    )
    subs = []
    for start in range(0, n, 10_000):
        name = f"sitemap-{start // 10_000}.xml"
        urls = "".join(
            f"<url><loc>{BASE}{page_path(i)}</loc></url>"
            for i in range(start, min(n, start + 10_000))
        )
        (out / name).write_text(
            f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"{urls}</urlset>",
            "utf-8",
        )
        subs.append(f"<sitemap><loc>{BASE}/{name}</loc></sitemap>")
    (out / "sitemap.xml").write_text(
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(subs)
        + "</sitemapindex>",
        "utf-8",
    )
    (out / "robots.txt").write_text(f"User-agent: *\nAllow: /\nSitemap: {BASE}/sitemap.xml\n")
    manifest = {"pages": n, "reachable": n + 1, "avg_bytes": sum(sizes) // n, "base": BASE}
    (out / "manifest.json").write_text(json.dumps(manifest))
    return manifest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("-n", type=int, default=10_000)
    args = parser.parse_args()
    print(json.dumps(generate(args.out, args.n)))


if __name__ == "__main__":
    main()
