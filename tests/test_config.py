"""Config loading: TOML files deep-merged in order, then environment, then CLI overrides."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from litecrawl.config import CrawlConfig
from litecrawl.config_load import deep_merge, load_config
from litecrawl.errors import ConfigError


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(name: str, text: str) -> Path:
    path = Path(name)
    path.write_text(text, encoding="utf-8")
    return path


def load(*files: Path, env: dict[str, str] | None = None, **overrides: Any) -> CrawlConfig:
    flat = {k.replace("__", "."): v for k, v in overrides.items()}
    return load_config(files, env or {}, flat)


def error_of(*files: Path, env: dict[str, str] | None = None, **overrides: Any) -> str:
    with pytest.raises(ConfigError) as info:
        load(*files, env=env, **overrides)
    assert isinstance(info.value, ValueError)
    return str(info.value)


# --- defaults -------------------------------------------------------------------------------


def test_defaults_are_003s_values() -> None:
    cfg = load_config([], {}, {})
    assert cfg == CrawlConfig()
    assert cfg.mode == "seed"
    assert cfg.user_agent is None
    assert cfg.obey_robots is True
    assert cfg.same_domain_only is True
    assert cfg.max_depth == 2
    assert cfg.seeds == []
    assert cfg.db == "litecrawl.db"
    assert cfg.limits.max_pages == 0
    assert cfg.concurrency.global_ == 8
    assert cfg.concurrency.per_host == 4
    assert cfg.rate_limit.per_host_delay_ms == 500
    assert cfg.rate_limit.requests_per_second is None
    assert cfg.cache.dir == ".cache/litecrawl"
    assert cfg.cache.respect_conditional is True
    assert cfg.output.dir is None
    assert cfg.sitemap.url is None
    assert cfg.sitemap.use_lastmod is True
    assert cfg.discovery.follow_links is True
    assert cfg.discovery.include_patterns == []
    assert cfg.discovery.exclude_patterns == []
    assert cfg.discovery.domains == []
    assert cfg.filter.dom_remove == ["script", "style", "svg"]
    assert cfg.filter.extra_remove == []
    assert cfg.extract.main_article is False
    assert cfg.fetch.timeout == 10.0
    assert cfg.fetch.max_retries == 3
    assert cfg.fetch.max_bytes == 10 * 1024 * 1024
    assert cfg.fetch.render is False
    assert (cfg.watch, cfg.verbose, cfg.quiet) == (False, False, False)
    assert (cfg.strategy.name, cfg.strategy.args, cfg.partition) == ("bfs", {}, None)


def test_effective_user_agent() -> None:
    ua = CrawlConfig().effective_user_agent()
    assert re.fullmatch(r"litecrawl/\d+\.\d+\S* \(\+https://github\.com/litecrawl/litecrawl\)", ua)
    assert load(user_agent="bot/1").effective_user_agent() == "bot/1"


def test_config_is_frozen() -> None:
    cfg = CrawlConfig()
    with pytest.raises(ValueError):
        setattr(cfg, "max_depth", 5)  # noqa: B010


def test_dump_uses_toml_keys() -> None:
    dumped = CrawlConfig().model_dump(by_alias=True)
    assert dumped["concurrency"] == {"global": 8, "per_host": 4}


# --- merging --------------------------------------------------------------------------------


def test_merge_order_files_env_overrides(cwd: Path) -> None:
    base = write(
        "defaults.toml",
        """
        max_depth = 5
        seeds = ["https://a.example/", "https://b.example/"]
        db = "base.db"
        [concurrency]
        global = 2
        per_host = 1
        [rate_limit]
        per_host_delay_ms = 100
        [discovery]
        include_patterns = ["a", "b"]
        exclude_patterns = ["z"]
        """,
    )
    site = write(
        "site.toml",
        """
        max_depth = 3
        seeds = ["https://c.example/"]
        [concurrency]
        global = 4
        [discovery]
        include_patterns = ["c"]
        """,
    )
    cfg = load(base, site)
    assert cfg.max_depth == 3  # later file wins
    assert cfg.seeds == ["https://c.example/"]  # lists replaced, not appended
    assert cfg.concurrency.global_ == 4
    assert cfg.concurrency.per_host == 1  # sibling key kept by the nested merge
    assert cfg.rate_limit.per_host_delay_ms == 100
    assert cfg.discovery.include_patterns == ["c"]
    assert cfg.discovery.exclude_patterns == ["z"]
    assert cfg.db == "base.db"

    env = {"CRAWLER_CONCURRENCY": "6", "CRAWLER_DB_PATH": "env.db"}
    cfg = load(base, site, env=env)
    assert cfg.concurrency.global_ == 6  # env beats files
    assert cfg.concurrency.per_host == 1
    assert cfg.db == "env.db"

    cfg = load(
        base,
        site,
        env=env,
        concurrency__global=16,
        discovery__include_patterns=["x"],
        db=None,  # flag not given: skipped
        max_depth=None,
    )
    assert cfg.concurrency.global_ == 16  # command line beats env
    assert cfg.discovery.include_patterns == ["x"]
    assert cfg.db == "env.db"
    assert cfg.max_depth == 3


def test_file_order_matters(cwd: Path) -> None:
    a = write("a.toml", "mode = 'sitemap'\n")
    b = write("b.toml", "mode = 'seed'\n")
    assert load(a, b).mode == "seed"
    assert load(b, a).mode == "sitemap"


def test_global_alias_from_toml_and_overrides(cwd: Path) -> None:
    site = write("site.toml", "[concurrency]\nglobal = 12\n")
    assert load(site).concurrency.global_ == 12
    assert load(concurrency__global=3).concurrency.global_ == 3
    dotted = write("dotted.toml", "concurrency.global = 7\n")
    assert load(dotted).concurrency.global_ == 7


def test_python_name_is_not_a_toml_key(cwd: Path) -> None:
    site = write("site.toml", "[concurrency]\nglobal_ = 12\n")
    assert "unknown key 'concurrency.global_'" in error_of(site)


def test_tuple_overrides_become_lists() -> None:
    cfg = load(discovery__domains=("Example.COM", "b.example"), seeds=("https://x.example/",))
    assert cfg.discovery.domains == ["example.com", "b.example"]
    assert cfg.seeds == ["https://x.example/"]


def test_full_003_style_file(cwd: Path) -> None:
    site = write(
        "site.toml",
        """
        mode = "sitemap"
        user_agent = "mybot/1.0 (+https://me.example)"
        obey_robots = false
        same_domain_only = false
        max_depth = 0
        seeds = ["https://example.com"]
        [limits]
        max_pages = 100
        [rate_limit]
        requests_per_second = 2
        [cache]
        dir = "cache"
        respect_conditional = false
        [output]
        dir = "output"
        [sitemap]
        url = "https://example.com/sitemap.xml"
        use_lastmod = false
        [discovery]
        follow_links = false
        [filter]
        extra_remove = ["nav", "footer", ".ads"]
        [extract]
        main_article = true
        [fetch]
        timeout = 2.5
        render = true
        """,
    )
    cfg = load(site, strategy="mypkg.strategies:BreadthFirst", watch=True)
    assert cfg.mode == "sitemap"
    assert cfg.obey_robots is False
    assert cfg.rate_limit.requests_per_second == 2.0
    assert cfg.output.dir == "output"
    assert cfg.filter.extra_remove == ["nav", "footer", ".ads"]
    assert cfg.extract.main_article is True
    assert cfg.fetch.timeout == 2.5
    assert cfg.strategy.name == "mypkg.strategies:BreadthFirst"
    assert cfg.discovery.include_patterns == []


# --- environment ----------------------------------------------------------------------------


def test_env_concurrency() -> None:
    assert load(env={"CRAWLER_CONCURRENCY": " 20 "}).concurrency.global_ == 20


def test_env_rate_limit() -> None:
    assert load(env={"CRAWLER_RATE_LIMIT": "2.5"}).rate_limit.requests_per_second == 2.5
    assert load(env={"CRAWLER_RATE_LIMIT": "5"}).rate_limit.requests_per_second == 5.0


def test_env_db_path_and_alias() -> None:
    assert load(env={"CRAWLER_DB_PATH": "x.db"}).db == "x.db"
    assert load(env={"LITECRAWL_DB": "postgresql://u@h/db"}).db == "postgresql://u@h/db"
    both = {"CRAWLER_DB_PATH": "x.db", "LITECRAWL_DB": "y.db"}
    assert load(env=both).db == "y.db"


def test_env_extract_workers() -> None:
    assert load().extract.workers is None  # one per usable CPU
    assert load(env={"LITECRAWL_EXTRACT_WORKERS": "1"}).extract.workers == 1
    assert load(env={"LITECRAWL_EXTRACT_WORKERS": "0"}).extract.workers == 0
    msg = error_of(env={"LITECRAWL_EXTRACT_WORKERS": "-1"})
    assert msg.startswith("environment variable LITECRAWL_EXTRACT_WORKERS: extract.workers: ")
    assert "(got -1)" in msg


def test_env_empty_or_unrelated_is_ignored() -> None:
    cfg = load(env={"CRAWLER_CONCURRENCY": "", "PATH": "/bin", "CRAWLER_DB_PATH": "  "})
    assert cfg == CrawlConfig()


def test_env_bad_values_name_the_variable() -> None:
    msg = error_of(env={"CRAWLER_CONCURRENCY": "lots"})
    assert msg == (
        "environment variable CRAWLER_CONCURRENCY: concurrency.global: "
        "input should be a valid integer (got 'lots')"
    )
    msg = error_of(env={"CRAWLER_CONCURRENCY": "0"})
    assert msg.startswith("environment variable CRAWLER_CONCURRENCY: concurrency.global: ")
    assert "(got 0)" in msg
    msg = error_of(env={"CRAWLER_RATE_LIMIT": "-1"})
    assert msg.startswith("environment variable CRAWLER_RATE_LIMIT: rate_limit.requests_per_second")
    assert "greater than 0" in msg and "(got -1.0)" in msg
    assert "finite" in error_of(env={"CRAWLER_RATE_LIMIT": "inf"})


# --- errors ---------------------------------------------------------------------------------


def test_bad_value_names_file_key_and_value(cwd: Path) -> None:
    site = write("site.toml", "[concurrency]\nglobal = 0\n")
    assert error_of(site) == (
        "site.toml: concurrency.global: input should be greater than or equal to 1 (got 0)"
    )


def test_bad_value_blames_the_file_that_set_it(cwd: Path) -> None:
    a = write("a.toml", "max_depth = -1\n[fetch]\ntimeout = 5\n")
    b = write("b.toml", "[fetch]\nmax_retries = 2\n")
    msg = error_of(a, b)
    assert msg == "a.toml: max_depth: input should be greater than or equal to 0 (got -1)"
    fixed = write("c.toml", "max_depth = 1\n")
    assert load(a, b, fixed).max_depth == 1


def test_unknown_key(cwd: Path) -> None:
    site = write("site.toml", "[concurency]\nglobal = 8\n")
    msg = error_of(site)
    assert msg.startswith("site.toml: unknown key 'concurency.global'")
    assert "did you mean 'concurrency.global'" in msg
    assert error_of(site_top := write("top.toml", "colour = 1\n")).startswith(
        f"{site_top}: unknown key 'colour'"
    )


def test_unknown_key_from_command_line() -> None:
    assert error_of(fetch__retries=3).startswith("command line: unknown key 'fetch.retries'")


def test_invalid_toml_names_file_and_line(cwd: Path) -> None:
    site = write("site.toml", "mode = 'seed'\nmax_depth = 2\nconcurrency = = 1\nseeds = []\n")
    msg = error_of(site)
    assert msg.startswith("site.toml: invalid TOML: ")
    assert "line 3" in msg


def test_invalid_toml_at_end_still_names_a_line(cwd: Path) -> None:
    site = write("site.toml", "mode = 'seed'\nseeds = [\n")
    assert error_of(site) == "site.toml: invalid TOML: Invalid value (at end of document) (line 2)"


def test_missing_file(cwd: Path) -> None:
    assert error_of(Path("x.toml")) == "no such config file: x.toml"


def test_directory_is_not_a_config_file(cwd: Path) -> None:
    Path("d.toml").mkdir()
    assert error_of(Path("d.toml")).startswith("d.toml: cannot read config file")


def test_wrong_types_are_errors(cwd: Path) -> None:
    site = write("site.toml", 'max_depth = "2"\nobey_robots = "yes"\nconcurrency = 5\n')
    lines = error_of(site).splitlines()
    assert "site.toml: max_depth: input should be a valid integer (got '2')" in lines
    assert "site.toml: obey_robots: input should be a valid boolean (got 'yes')" in lines
    assert "site.toml: concurrency: expected a table (got 5)" in lines
    assert "input should be a valid integer" in error_of(max_depth=True)
    assert "(got 1.5)" in error_of(limits__max_pages=1.5)


def test_command_line_errors_are_attributed() -> None:
    msg = error_of(concurrency__per_host=0)
    assert msg == (
        "command line: concurrency.per_host: input should be greater than or equal to 1 (got 0)"
    )
    assert error_of(mode="crawl").startswith("command line: mode: input should be 'seed' or")


@pytest.mark.parametrize("backend", ["json", "duckdb"])
def test_metadata_backend_is_refused_as_not_read(cwd: Path, backend: str) -> None:
    """Accepted once and never read: a file that sets it is told so, with the key named."""
    site = write("site.toml", f"[output]\ndir = 'out'\nmetadata_backend = '{backend}'\n")
    msg = error_of(site)
    assert msg.startswith("site.toml: output.metadata_backend: not read: metadata goes to")
    assert "litecrawl export" in msg and "Remove the key" in msg


def test_plugin_specs_are_checked_alike() -> None:
    """One pattern for every 'module.path:name' setting: strategies and the sites' filters."""
    assert load(sites__path_filter="pkg.mod:keep").sites.path_filter == "pkg.mod:keep"
    for key in ("sites__filter", "sites__path_filter", "strategy"):
        assert "expected" in error_of(**{key: "pkg..mod:keep"}), key


def test_bad_regex_named(cwd: Path) -> None:
    site = write("site.toml", "[discovery]\ninclude_patterns = ['ok', '(unclosed']\n")
    msg = error_of(site)
    assert msg.startswith("site.toml: discovery.include_patterns[1]: invalid regular expression")
    assert "'(unclosed'" in msg
    msg = error_of(discovery__exclude_patterns=["[a-"])
    assert msg.startswith("command line: discovery.exclude_patterns[0]: invalid regular")
    assert "'[a-'" in msg


def test_every_error_is_reported(cwd: Path) -> None:
    site = write("site.toml", "max_depth = -1\n[fetch]\ntimeout = 0\n")
    lines = error_of(site, env={"CRAWLER_CONCURRENCY": "0"}).splitlines()
    assert len(lines) == 3
    assert any(line.startswith("site.toml: fetch.timeout: ") for line in lines)
    assert any(line.startswith("environment variable CRAWLER_CONCURRENCY: ") for line in lines)


def test_later_table_replacing_a_scalar_is_attributed(cwd: Path) -> None:
    a = write("a.toml", "concurrency = 5\n")
    b = write("b.toml", "[concurrency]\nper_host = 0\n")
    assert error_of(a, b).startswith("b.toml: concurrency.per_host: ")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("concurrency.global", 0),
        ("concurrency.per_host", 0),
        ("limits.max_pages", -1),
        ("rate_limit.per_host_delay_ms", -1),
        ("rate_limit.requests_per_second", 0),
        ("fetch.timeout", 0),
        ("fetch.max_retries", -1),
        ("fetch.max_bytes", 0),
        ("max_depth", -1),
        ("db", ""),
        ("user_agent", ""),
        ("strategy", "not a strategy"),
        ("strategy", "module_only"),
        ("partition", "3/3"),
        ("partition", "1"),
        ("partition", "0/0"),
        ("discovery.domains", ["https://example.com/"]),
    ],
)
def test_bounds(key: str, value: Any) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"command line: {key}")):
        load_config([], {}, {key: value})


def test_strategy_shape_accepted() -> None:
    assert load(strategy="a.b_c:D").strategy.name == "a.b_c:D"
    assert load(strategy="dfs").strategy.name == "dfs"


def test_strategy_table_with_args(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[strategy]\nname = "focused"\n[strategy.args]\nterms = ["apple", "pie"]\n')
    cfg = load_config([path], {}, {})
    assert cfg.strategy.name == "focused"
    assert cfg.strategy.args == {"terms": ["apple", "pie"]}
    assert load_config([path], {}, {"strategy.name": "dfs"}).strategy.args == {
        "terms": ["apple", "pie"]
    }


def test_strategy_args_for_the_engines_own_path_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[strategy]\nname = "bfs"\n[strategy.args]\nterms = ["apple"]\n')
    with pytest.raises(ConfigError, match=r"c\.toml: strategy: strategy 'bfs' takes no arg"):
        load_config([path], {}, {})
    assert load_config([path], {}, {"strategy.name": "focused"}).strategy.args == {
        "terms": ["apple"]
    }


def test_partition_parsed() -> None:
    assert load_config([], {}, {"partition": "1/4"}).partition_k_n() == (1, 4)


def test_partition_on_postgres_is_taken() -> None:
    cfg = load_config([], {}, {"partition": "1/4", "db": "postgresql://u:pw@db.example/crawl"})
    assert cfg.partition_k_n() == (1, 4)


# --- deep_merge -----------------------------------------------------------------------------


def test_deep_merge_examples() -> None:
    a: dict[str, Any] = {"x": 1, "t": {"a": 1, "b": [1, 2]}, "s": {"k": 1}}
    b: dict[str, Any] = {"t": {"b": [3], "c": 3}, "s": 5, "y": {"z": 1}}
    merged = deep_merge(a, b)
    assert merged == {"x": 1, "t": {"a": 1, "b": [3], "c": 3}, "s": 5, "y": {"z": 1}}
    assert a == {"x": 1, "t": {"a": 1, "b": [1, 2]}, "s": {"k": 1}}  # inputs untouched
    merged["t"]["a"] = 99
    assert a["t"]["a"] == 1


keys = st.text(alphabet="abcde", min_size=1, max_size=3)
leaves = st.one_of(st.integers(), st.text(max_size=3), st.booleans(), st.lists(st.integers()))
trees = st.recursive(
    st.dictionaries(keys, leaves, max_size=4),
    lambda inner: st.dictionaries(keys, st.one_of(leaves, inner), max_size=4),
    max_leaves=12,
)


def leaf_paths(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out.update(leaf_paths(value, (*prefix, key)))
        else:
            out[(*prefix, key)] = value
    return out


def get(tree: dict[str, Any], path: tuple[str, ...]) -> Any:
    for part in path:
        tree = tree[part]
    return tree


@given(trees)
def test_deep_merge_empty_is_identity(a: dict[str, Any]) -> None:
    assert deep_merge(a, {}) == a
    assert deep_merge({}, a) == a


def has(tree: dict[str, Any], path: tuple[str, ...]) -> bool:
    try:
        get(tree, path)
    except (KeyError, TypeError):
        return False
    return True


@given(trees, trees)
def test_deep_merge_keeps_every_key_and_b_wins(a: dict[str, Any], b: dict[str, Any]) -> None:
    merged = deep_merge(a, b)
    assert set(merged) == set(a) | set(b)
    for path, value in leaf_paths(b).items():
        if value == {}:
            assert isinstance(get(merged, path), dict)  # an empty table merges, keeps a's keys
        else:
            assert get(merged, path) == value
    for path, value in leaf_paths(a).items():
        # a's leaf survives unless b sets it, or replaces a table on the way with a non-table
        prefixes = [path[:n] for n in range(1, len(path))]
        replaced = any(has(b, p) and not isinstance(get(b, p), dict) for p in prefixes)
        if not has(b, path) and not replaced:
            assert get(merged, path) == value
