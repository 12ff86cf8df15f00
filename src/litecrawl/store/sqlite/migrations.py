"""Named, ordered schema migrations for the SQLite store, tracked in ``PRAGMA user_version``.

Each migration runs inside one ``BEGIN IMMEDIATE`` transaction together with the version bump, so
two processes starting on a fresh file at once apply each step exactly once.
"""

from __future__ import annotations

import sqlite3

__all__ = ["MIGRATIONS", "migrate"]

# litecrawl()'s first table (docs/architecture.md, "Storage"), with the typo (trailing comma)
# mended and a default for content_hash so that new pages can be inserted "using default values".
_SEED_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
  norm_url         TEXT PRIMARY KEY,
  last_crawl_time  INTEGER NULL,
  next_crawl_time  INTEGER NULL,
  processing_time  INTEGER NULL,
  content_hash     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS idx_pages_next_crawl ON pages(next_crawl_time);
CREATE INDEX IF NOT EXISTS idx_pages_processing ON pages(processing_time);
"""

# Frontier columns beyond the first table's (added with ALTER so an old database upgrades in place).
# state follows Frontera's link states: 0 NOT_CRAWLED, 1 QUEUED, 2 CRAWLED, 3 ERROR.
_FRONTIER_COLUMNS = """
ALTER TABLE pages ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN source TEXT NOT NULL DEFAULT 'link';
ALTER TABLE pages ADD COLUMN score REAL NOT NULL DEFAULT 0.5;
ALTER TABLE pages ADD COLUMN state INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN status INTEGER NULL;
ALTER TABLE pages ADD COLUMN error TEXT NULL;
ALTER TABLE pages ADD COLUMN content_type TEXT NULL;
ALTER TABLE pages ADD COLUMN etag TEXT NULL;
ALTER TABLE pages ADD COLUMN last_modified TEXT NULL;
ALTER TABLE pages ADD COLUMN fetch_count INTEGER NOT NULL DEFAULT 0;
-- The claim scans this index in order and stops after LIMIT rows: O(claims), not O(frontier).
-- SQLite sorts NULL first, so "next_crawl_time IS NULL DESC, next_crawl_time ASC" is this order.
CREATE INDEX idx_pages_claim ON pages(next_crawl_time, depth, score DESC)
  WHERE processing_time IS NULL;
CREATE INDEX idx_pages_host ON pages(host);
"""

# What the CLI crawl needs: kinds of resources in the frontier (pages, sitemaps, feeds), sitemap
# lastmod, per-host politeness state shared by all workers, robots.txt cache, run records.
_CRAWL_STATE = """
ALTER TABLE pages ADD COLUMN kind TEXT NOT NULL DEFAULT 'page';
ALTER TABLE pages ADD COLUMN lastmod INTEGER NULL;
CREATE TABLE hosts (
  host          TEXT PRIMARY KEY,
  slowed_until  REAL NOT NULL DEFAULT 0,
  crawl_delay   REAL NULL,
  metadata      TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE robots (
  origin      TEXT PRIMARY KEY,
  record      TEXT NOT NULL,
  expires_at  REAL NOT NULL
);
CREATE TABLE runs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at   INTEGER NOT NULL,
  finished_at  INTEGER NULL,
  command      TEXT NOT NULL DEFAULT '',
  stats        TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX idx_pages_error ON pages(error) WHERE error IS NOT NULL;
"""

# The index and near-duplicates (docs/architecture.md, "Storage"): every URL has a document row;
# documents whose text is the same or nearly the same share one resource, and only resources are
# full-text indexed.
# simhash bands: two 64-bit simhashes within Hamming distance 3 agree on at least one 16-bit band.
_INDEX = """
CREATE TABLE resources (
  id            INTEGER PRIMARY KEY,
  text_hash     TEXT NOT NULL UNIQUE,
  simhash       INTEGER NOT NULL,
  band0         INTEGER NOT NULL,
  band1         INTEGER NOT NULL,
  band2         INTEGER NOT NULL,
  band3         INTEGER NOT NULL,
  title         TEXT NOT NULL DEFAULT '',
  text          TEXT NOT NULL DEFAULT '',
  language      TEXT NULL
);
CREATE INDEX idx_resources_band0 ON resources(band0);
CREATE INDEX idx_resources_band1 ON resources(band1);
CREATE INDEX idx_resources_band2 ON resources(band2);
CREATE INDEX idx_resources_band3 ON resources(band3);
CREATE TABLE documents (
  id               INTEGER PRIMARY KEY,
  url              TEXT NOT NULL UNIQUE,
  resource_id      INTEGER NULL REFERENCES resources(id),
  title            TEXT NOT NULL DEFAULT '',
  keywords         TEXT NOT NULL DEFAULT '[]',
  text_preview     TEXT NOT NULL DEFAULT '',
  language         TEXT NULL,
  author           TEXT NULL,
  published        TEXT NULL,
  content_type     TEXT NULL,
  status           INTEGER NULL,
  depth            INTEGER NOT NULL DEFAULT 0,
  source           TEXT NOT NULL DEFAULT 'link',
  extraction_mode  TEXT NOT NULL DEFAULT 'fullpage',
  markdown_path    TEXT NULL,
  crawled_at       TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
  updated_at       TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX idx_documents_resource ON documents(resource_id);
CREATE INDEX idx_documents_crawled ON documents(crawled_at);
CREATE INDEX idx_documents_updated ON documents(updated_at);
CREATE VIRTUAL TABLE resources_fts USING fts5(
  title, text, content='resources', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER resources_ai AFTER INSERT ON resources BEGIN
  INSERT INTO resources_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE TRIGGER resources_ad AFTER DELETE ON resources BEGIN
  INSERT INTO resources_fts(resources_fts, rowid, title, text)
  VALUES ('delete', old.id, old.title, old.text);
END;
CREATE TRIGGER resources_au AFTER UPDATE OF title, text ON resources BEGIN
  INSERT INTO resources_fts(resources_fts, rowid, title, text)
  VALUES ('delete', old.id, old.title, old.text);
  INSERT INTO resources_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
"""

# FTS5 merges its index segments as they pile up; merging only when 16 of a level exist (not 4)
# costs ~25% less per indexed page during a crawl, and queries stay fast (measured in bench/).
_FTS_TUNING = """
INSERT INTO resources_fts(resources_fts, rank) VALUES ('automerge', 16);
"""

# Leases (issue 10): every running worker has a row, renewed by heartbeats; a claim names its
# worker, so a dead worker's claims are recovered at once on its machine (process gone) and after
# ``lease_timeout`` from anywhere (heartbeat too old). ``pid_scope`` (kernel boot + pid namespace)
# says where ``pid`` means something; ``proc_start`` tells a live process from a new one that
# reused the pid. AUTOINCREMENT: a worker id is never handed out twice.
_WORKERS = """
CREATE TABLE workers (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  hostname      TEXT NOT NULL,
  pid           INTEGER NOT NULL,
  pid_scope     TEXT NOT NULL DEFAULT '',
  proc_start    TEXT NOT NULL DEFAULT '',
  command       TEXT NOT NULL DEFAULT '',
  started_at    REAL NOT NULL,
  heartbeat_at  REAL NOT NULL
);
ALTER TABLE pages ADD COLUMN worker_id INTEGER NULL;
CREATE INDEX idx_pages_worker ON pages(worker_id) WHERE worker_id IS NOT NULL;
ALTER TABLE runs ADD COLUMN worker_id INTEGER NULL;
"""

# The page's <link rel=canonical> (normalized): search shows a resource under it when it is one
# of the resource's URLs.
_DOCUMENT_CANONICAL = """
ALTER TABLE documents ADD COLUMN canonical TEXT NULL;
"""

# Strategies (docs/strategies.md): a crawling strategy's meta per URL (JSON) and its per-domain
# metadata.
_STRATEGY = """
ALTER TABLE pages ADD COLUMN meta TEXT;
CREATE TABLE domain_metadata (
  domain TEXT PRIMARY KEY,
  data TEXT NOT NULL
);
"""

# Semantic search (docs/search.md): one embedding per resource (float32 BLOB, index/embed.py's
# model), dropped by the triggers when its resource goes or its text changes, so a stale vector
# never outlives its text.
_VECTORS = """
CREATE TABLE resource_vectors (
  resource_id INTEGER PRIMARY KEY,
  model       TEXT NOT NULL,
  vector      BLOB NOT NULL
);
CREATE TRIGGER resource_vectors_gone AFTER DELETE ON resources BEGIN
  DELETE FROM resource_vectors WHERE resource_id = old.id;
END;
CREATE TRIGGER resource_vectors_stale AFTER UPDATE OF text ON resources
WHEN old.text IS NOT new.text BEGIN
  DELETE FROM resource_vectors WHERE resource_id = old.id;
END;
"""

# The link graph (who links to whom, for the dashboard's links in and out) and each fetch's
# response time. URLs, not rowids (pages has no INTEGER PRIMARY KEY, so VACUUM may renumber it);
# links in are found by a 32-bit key of the target (store/sqlite/links.py): an index of long
# URLs in random order cost twice as much to keep up in the crawl's write (bench/README).
_LINK_GRAPH = """
CREATE TABLE page_links (
  src     TEXT NOT NULL,
  dst     TEXT NOT NULL,
  dst_key INTEGER NOT NULL
);
CREATE INDEX idx_page_links_src ON page_links(src);
CREATE INDEX idx_page_links_dst ON page_links(dst_key);
ALTER TABLE pages ADD COLUMN response_ms INTEGER NULL;
"""

# The site queue (docs/sites.md): a site is queued until its start page is checked, then relevant or
# irrelevant (with why); annotations are kept by base URL (a site may not exist yet) and tied to
# the site when it does. Portable SQL: the PostgreSQL backend carries the same tables.
_SITES = """
CREATE TABLE sites (
  id          INTEGER PRIMARY KEY,
  base_url    TEXT NOT NULL UNIQUE,
  host        TEXT NOT NULL,
  status      TEXT NOT NULL DEFAULT 'queued',
  reason      TEXT NULL,
  source      TEXT NOT NULL DEFAULT 'seed',
  added_at    REAL NOT NULL,
  checked_at  REAL NULL,
  recheck     INTEGER NOT NULL DEFAULT 0,
  final_url   TEXT NULL,
  title       TEXT NULL,
  language    TEXT NULL,
  feeds       TEXT NOT NULL DEFAULT '[]',
  sitemaps    TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX idx_sites_check ON sites(checked_at);
CREATE INDEX idx_sites_status ON sites(status);
CREATE TABLE site_annotations (
  id          INTEGER PRIMARY KEY,
  base_url    TEXT NOT NULL,
  site_id     INTEGER NULL REFERENCES sites(id),
  kind        TEXT NOT NULL,
  text        TEXT NULL,
  created_at  REAL NOT NULL
);
CREATE INDEX idx_site_annotations_base_url ON site_annotations(base_url);
"""

# Site crawls (docs/sites.md): a site is checked out under a lock that expires (a killed worker
# loses it), its next full and feed crawls are scheduled at checkin, each crawl is recorded, and the
# links its pages make to other sites are counted per pair of sites. A site's feeds (advertised by
# its start page or found while crawling it) are kept per site; their validators are those of their
# frontier rows.
_SITE_CRAWLS = """
ALTER TABLE sites ADD COLUMN next_crawl REAL NULL;
ALTER TABLE sites ADD COLUMN next_feed_crawl REAL NULL;
ALTER TABLE sites ADD COLUMN locked_by TEXT NULL;
ALTER TABLE sites ADD COLUMN locked_until REAL NULL;
DROP INDEX idx_sites_status;
CREATE INDEX idx_sites_status ON sites(status, next_crawl);
CREATE INDEX idx_sites_feed ON sites(status, next_feed_crawl);
CREATE TABLE site_crawls (
  id          INTEGER PRIMARY KEY,
  site_id     INTEGER NOT NULL REFERENCES sites(id),
  kind        TEXT NOT NULL,
  worker      TEXT NOT NULL,
  started_at  REAL NOT NULL,
  finished_at REAL NULL,
  fetched     INTEGER NOT NULL DEFAULT 0,
  new_pages   INTEGER NOT NULL DEFAULT 0,
  errors      INTEGER NOT NULL DEFAULT 0,
  interrupted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_site_crawls_site ON site_crawls(site_id, started_at);
CREATE TABLE site_links (
  from_site   INTEGER NOT NULL REFERENCES sites(id),
  to_site     INTEGER NOT NULL REFERENCES sites(id),
  count       INTEGER NOT NULL,
  first_seen  REAL NOT NULL,
  last_seen   REAL NOT NULL,
  PRIMARY KEY (from_site, to_site)
);
CREATE INDEX idx_site_links_to ON site_links(to_site);
CREATE TABLE site_feeds (
  site_id     INTEGER NOT NULL REFERENCES sites(id),
  url         TEXT NOT NULL,
  first_seen  REAL NOT NULL,
  PRIMARY KEY (site_id, url)
);
"""

# Politeness held by the database: the time the next request to a host may start, reserved by
# each worker before it fetches (Frontier.reserve_start), so N workers together keep the delay.
_HOST_PACING = """
ALTER TABLE hosts ADD COLUMN next_start REAL NOT NULL DEFAULT 0;
"""

# PostgreSQL's full text learns to split words as FTS5's unicode61 tokenizer does; nothing to
# change here, the step is kept so both backends count the same versions.
_FTS_WORDS = """
SELECT 1;
"""

# Claims that know hosts: each worker's lease on a share of a host's slots (held while it has
# pages of the host in flight), and the pacing state claims look at to pass a host over.
_HOST_LEASES = """
CREATE TABLE host_leases (
  host       TEXT NOT NULL,
  worker_id  INTEGER NOT NULL,
  slots      INTEGER NOT NULL,
  PRIMARY KEY (host, worker_id)
);
CREATE INDEX idx_hosts_next_start ON hosts(next_start);
CREATE INDEX idx_hosts_slowed_until ON hosts(slowed_until);
ALTER TABLE workers ADD COLUMN pages INTEGER NOT NULL DEFAULT 0;
"""

# --partition K/N on both backends: each page's partition hash stored (the crc32 of its
# partition key, computed by the writer: litecrawl.strategy.domain.partition_hash), so claims
# select a partition with part % N = K instead of computing the key for every row they scan
# (rows from before are filled in by _fill_partition_hashes: the key needs the suffix list).
_PARTITION_HASH = """
ALTER TABLE pages ADD COLUMN part INTEGER NULL;
"""

# PostgreSQL's tsvector is bounded (1 MB); FTS5 has no such limit
_FTS_BOUNDED = """
SELECT 1;
"""

# Registered domains now use the suffix list's private section (alice.github.io is a site of
# its own) and a host without a known suffix stands for itself: the partition hashes of those
# hosts' pages are computed again (_rehash_private_suffixes). Domain metadata stays under the
# name it was written with (README, "Crawling strategies").
_PRIVATE_SUFFIXES = """
SELECT 1;
"""

# Claims lost with their worker (kill -9): ``lost`` counts a page's consecutive lost claims,
# ``lost_alone`` those where it was all its worker held; pages parked by the old rule (a second
# lost claim parked a never-crawled page for a day) are made due again.
_LOST_CLAIMS = """
ALTER TABLE pages ADD COLUMN lost INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN lost_alone INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_pages_lost ON pages(lost_alone, lost) WHERE lost > 0;
UPDATE pages SET last_crawl_time = NULL, next_crawl_time = NULL, state = 0, error = NULL
WHERE error = 'claim_timeout' AND processing_time IS NULL AND status IS NULL;
"""

# A vector per section of a page (extract/sections.py), beside the resource's own: same model
# tag, same triggers (a section's vector goes with its resource's text).
_SECTION_VECTORS = """
CREATE TABLE section_vectors (
  resource_id INTEGER NOT NULL,
  ord         INTEGER NOT NULL,
  heading     TEXT NOT NULL,
  anchor      TEXT NULL,
  model       TEXT NOT NULL,
  vector      BLOB NOT NULL,
  PRIMARY KEY (resource_id, ord)
) WITHOUT ROWID;
CREATE TRIGGER section_vectors_gone AFTER DELETE ON resources BEGIN
  DELETE FROM section_vectors WHERE resource_id = old.id;
END;
CREATE TRIGGER section_vectors_stale AFTER UPDATE OF text ON resources
WHEN old.text IS NOT new.text BEGIN
  DELETE FROM section_vectors WHERE resource_id = old.id;
END;
"""

# Each page's change statistics (docs/freshness.md): re-fetches compared, changes found, the
# estimated change rate (per second) and the estimator's record (JSON), written with each fetch.
_CHANGE_RATE = """
ALTER TABLE pages ADD COLUMN checks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN changes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN change_rate REAL;
ALTER TABLE pages ADD COLUMN change_history TEXT;
"""

MIGRATIONS: list[tuple[str, str]] = [
    ("seed_pages", _SEED_SCHEMA),
    ("frontier_columns", _FRONTIER_COLUMNS),
    ("crawl_state", _CRAWL_STATE),
    ("index", _INDEX),
    ("fts_tuning", _FTS_TUNING),
    ("workers", _WORKERS),
    ("document_canonical", _DOCUMENT_CANONICAL),
    ("strategy", _STRATEGY),
    ("resource_vectors", _VECTORS),
    ("link_graph", _LINK_GRAPH),
    ("sites", _SITES),
    ("site_crawls", _SITE_CRAWLS),
    ("host_pacing", _HOST_PACING),
    ("fts_words", _FTS_WORDS),
    ("host_leases", _HOST_LEASES),
    ("partition_hash", _PARTITION_HASH),
    ("fts_bounded", _FTS_BOUNDED),
    ("private_suffixes", _PRIVATE_SUFFIXES),
    ("lost_claims", _LOST_CLAIMS),
    ("section_vectors", _SECTION_VECTORS),
    ("change_rate", _CHANGE_RATE),
]


def migrate(conn: sqlite3.Connection) -> int:
    """Apply pending migrations; returns the schema version now in force."""
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version >= len(MIGRATIONS):
                conn.execute("COMMIT")
                return int(version)
            _name, script = MIGRATIONS[version]
            for statement in _statements(script):
                conn.execute(statement)
            if _name == "partition_hash":
                _fill_partition_hashes(conn)
            if _name == "private_suffixes":
                _rehash_private_suffixes(conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _statements(script: str) -> list[str]:
    # executescript() would COMMIT our transaction; split into complete statements instead
    # (sqlite3.complete_statement understands trigger bodies with inner semicolons).
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def _fill_partition_hashes(conn: sqlite3.Connection) -> None:
    from litecrawl.strategy.domain import partition_hash

    last = 0
    while batch := conn.execute(  # in rowid ranges: no read open while the rows change
        "SELECT rowid, norm_url, meta FROM pages WHERE rowid > ? ORDER BY rowid LIMIT 10000",
        (last,),
    ).fetchall():
        conn.executemany(
            "UPDATE pages SET part = ? WHERE rowid = ?",
            [(partition_hash(url, meta), rowid) for rowid, url, meta in batch],
        )
        last = batch[-1][0]


def _rehash_private_suffixes(conn: sqlite3.Connection) -> None:
    from litecrawl.strategy.domain import partition_hash, rehashed_hosts

    hosts = [h for (h,) in conn.execute("SELECT DISTINCT host FROM pages").fetchall()]
    for host in rehashed_hosts(hosts):
        rows = conn.execute(
            "SELECT rowid, norm_url, meta FROM pages WHERE host = ?", (host,)
        ).fetchall()
        conn.executemany(
            "UPDATE pages SET part = ? WHERE rowid = ?",
            [(partition_hash(url, meta, host), rowid) for rowid, url, meta in rows],
        )
