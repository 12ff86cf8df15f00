"""Language of pages whose markup names none, by two trees, against what the pages are written in.

    uv run python bench/language.py --site /usr/share/doc/debian-handbook/html \
        --tree before=/path/to/old/src --tree after=src

For a site laid out as one directory per translation (``en-US/``, ``pt-BR/``...: Debian's
`debian-handbook` package, 26 languages, its pages without ``<html lang>``), each tree's
``extract_page`` runs in its own interpreter over every ``*.html`` (no crawl: the files as they
are) and its language is compared with the page's truth: the directory's language, unless most
of the page's text (by UTF-8 bytes, so a CJK character weighs three Latin letters) is lines
found word for word in the English edition's page of the same name: then ``en`` (translations
in progress leave whole chapters in English); ``mixed`` when neither holds 60%. For a site in one
language, ``--language en`` is every page's truth. The language compared is what
``detect_language`` says of the page's text, whether or not the page names one. Prints right,
wrong and none (no language) by truth, and the CPU of ``detect_language`` a page.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

DUMP = """
import json, sys, time
from pathlib import Path
from litecrawl.extract import detect_language, extract_page
site, out = Path(sys.argv[1]), sys.argv[2]
res, spent = {}, 0.0
for f in sorted(site.rglob("*.html")):
    name = str(f.relative_to(site))
    p = extract_page(f.read_bytes(), "http://127.0.0.1:8000/" + name, "text/html")
    t0 = time.process_time()
    language = detect_language(p.text)  # what the text says, whatever the markup names
    spent += time.process_time() - t0
    res[name] = [language, p.text]
json.dump({"pages": res, "cpu": spent}, open(out, "w"))
"""


def dump(src: str, site: Path, out: Path) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": src, "OPENBLAS_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", DUMP, str(site), str(out)], env=env, check=True)
    data: dict[str, object] = json.loads(out.read_text())
    return data


def truth(pages: dict[str, list[str]], english: str) -> dict[str, str]:
    """Each page's language: its directory's, or ``en`` when most of it is the English text."""
    reference = {
        name.split("/", 1)[1]: set(text.splitlines())
        for name, (_, text) in pages.items()
        if name.startswith(english + "/")
    }
    out = {}
    for name, (_, text) in pages.items():
        folder, _, rest = name.partition("/")
        language = folder.split("-")[0].lower()
        lines = text.splitlines()
        total = sum(len(line.encode()) for line in lines) or 1
        same = sum(len(line.encode()) for line in lines if line in reference.get(rest, ()))
        share = same / total
        out[name] = "en" if share > 0.6 else (language if share < 0.4 else "mixed")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, required=True)
    parser.add_argument("--tree", action="append", required=True, help="NAME=SRC (repeatable)")
    parser.add_argument("--english", default="en-US", help="the English edition's directory")
    parser.add_argument("--language", help="every page's truth (a site in one language)")
    args = parser.parse_args()
    trees = [t.split("=", 1) for t in args.tree]
    with tempfile.TemporaryDirectory() as tmp:
        runs = {name: dump(src, args.site, Path(tmp) / f"{name}.json") for name, src in trees}
    first = runs[trees[0][0]]["pages"]
    assert isinstance(first, dict)
    truths = {k: args.language for k in first} if args.language else truth(first, args.english)
    print(f"{len(truths)} pages; truth: {dict(Counter(truths.values()).most_common())}")
    for name, run in runs.items():
        pages = run["pages"]
        assert isinstance(pages, dict) and isinstance(run["cpu"], float)
        by: dict[str, Counter[str]] = defaultdict(Counter)
        for page, (language, _) in pages.items():
            want = truths[page]
            if want != "mixed":
                verdict = "right" if language == want else "none" if language is None else "wrong"
                by[want][verdict] += 1
        total: Counter[str] = sum(by.values(), Counter())
        ms = 1000 * run["cpu"] / len(pages)
        print(f"{name}: {dict(total)} ({ms:.3f} ms of detect_language a page)")
        cells = (f"{k}:{c['right']}/{c['wrong']}/{c['none']}" for k, c in sorted(by.items()))
        print("  right/wrong/none by truth: " + " ".join(cells))


if __name__ == "__main__":
    main()
