"""The schema's first twelve migration steps' shared parts (pages, the frontier, the index,
workers, strategies, vectors, the link graph, sites), in the form :mod:`litecrawl.store.ddl`
lists them: DDL as data, with the type words in braces each backend spells its own way. Never
edited once released (a step's place is its version number): later steps are in ddl.py.
"""

from __future__ import annotations

__all__ = [
    "CRAWL_STATE",
    "DOCUMENT_CANONICAL",
    "FRONTIER_COLUMNS",
    "INDEX",
    "LINK_GRAPH",
    "SEED_SCHEMA",
    "SITES",
    "SITE_CRAWLS",
    "STRATEGY",
    "VECTORS",
    "WORKERS",
]

# litecrawl()'s first table (docs/architecture.md, "Storage"), with the typo (trailing comma)
# mended and a default for content_hash so that new pages can be inserted "using default values".
SEED_SCHEMA = """
CREATE TABLE{IF_NEW} pages (
  norm_url         TEXT PRIMARY KEY,
  last_crawl_time  {BIGINT} NULL,
  next_crawl_time  {BIGINT} NULL,
  processing_time  {BIGINT} NULL,
  content_hash     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX{IF_NEW} idx_pages_next_crawl ON pages(next_crawl_time);
CREATE INDEX{IF_NEW} idx_pages_processing ON pages(processing_time);
"""

# Frontier columns beyond the first table's (added with ALTER so an old database upgrades in place).
# state follows Frontera's link states: 0 NOT_CRAWLED, 1 QUEUED, 2 CRAWLED, 3 ERROR.
# The claim scans idx_pages_claim in order and stops after LIMIT rows: O(claims), not
# O(frontier); it takes pages never scheduled (NULL) first.
FRONTIER_COLUMNS = """
ALTER TABLE pages ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE pages ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN source TEXT NOT NULL DEFAULT 'link';
ALTER TABLE pages ADD COLUMN score {REAL} NOT NULL DEFAULT 0.5;
ALTER TABLE pages ADD COLUMN state INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN status INTEGER NULL;
ALTER TABLE pages ADD COLUMN error TEXT NULL;
ALTER TABLE pages ADD COLUMN content_type TEXT NULL;
ALTER TABLE pages ADD COLUMN etag TEXT NULL;
ALTER TABLE pages ADD COLUMN last_modified TEXT NULL;
ALTER TABLE pages ADD COLUMN fetch_count INTEGER NOT NULL DEFAULT 0;
CREATE INDEX idx_pages_claim ON pages(next_crawl_time{NULLS_FIRST}, depth, score DESC)
  WHERE processing_time IS NULL;
CREATE INDEX idx_pages_host ON pages(host);
"""

# What the CLI crawl needs: kinds of resources in the frontier (pages, sitemaps, feeds), sitemap
# lastmod, per-host politeness state shared by all workers, robots.txt cache, run records.
CRAWL_STATE = """
ALTER TABLE pages ADD COLUMN kind TEXT NOT NULL DEFAULT 'page';
ALTER TABLE pages ADD COLUMN lastmod {BIGINT} NULL;
CREATE TABLE hosts (
  host          TEXT PRIMARY KEY,
  slowed_until  {REAL} NOT NULL DEFAULT 0,
  crawl_delay   {REAL} NULL,
  metadata      TEXT NOT NULL DEFAULT '{{}}'
);
CREATE TABLE robots (
  origin      TEXT PRIMARY KEY,
  record      TEXT NOT NULL,
  expires_at  {REAL} NOT NULL
);
CREATE TABLE runs (
  id           {SERIAL},
  started_at   {BIGINT} NOT NULL,
  finished_at  {BIGINT} NULL,
  command      TEXT NOT NULL DEFAULT '',
  stats        TEXT NOT NULL DEFAULT '{{}}'
);
CREATE INDEX idx_pages_error ON pages(error) WHERE error IS NOT NULL;
"""

# The index and near-duplicates (docs/architecture.md, "Storage"): every URL has a document row;
# documents whose text is the same or nearly the same share one resource, and only resources are
# full-text indexed (each backend adds its full text).
# simhash bands: two 64-bit simhashes within Hamming distance 3 agree on at least one 16-bit band.
INDEX = """
CREATE TABLE resources (
  id            {ID},
  text_hash     TEXT NOT NULL UNIQUE,
  simhash       {BIGINT} NOT NULL,
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
  id               {ID},
  url              TEXT NOT NULL UNIQUE,
  resource_id      {BIGINT} NULL REFERENCES resources(id),
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
  crawled_at       TEXT NOT NULL DEFAULT {NOW},
  updated_at       TEXT NOT NULL DEFAULT {NOW}
);
CREATE INDEX idx_documents_resource ON documents(resource_id);
CREATE INDEX idx_documents_crawled ON documents(crawled_at);
CREATE INDEX idx_documents_updated ON documents(updated_at);
"""

# Leases (issue 10): every running worker has a row, renewed by heartbeats; a claim names its
# worker, so a dead worker's claims are recovered at once on its machine (process gone) and after
# ``lease_timeout`` from anywhere (heartbeat too old). ``pid_scope`` (kernel boot + pid namespace)
# says where ``pid`` means something; ``proc_start`` tells a live process from a new one that
# reused the pid. SERIAL: a worker id is never handed out twice.
WORKERS = """
CREATE TABLE workers (
  id            {SERIAL},
  hostname      TEXT NOT NULL,
  pid           INTEGER NOT NULL,
  pid_scope     TEXT NOT NULL DEFAULT '',
  proc_start    TEXT NOT NULL DEFAULT '',
  command       TEXT NOT NULL DEFAULT '',
  started_at    {REAL} NOT NULL,
  heartbeat_at  {REAL} NOT NULL
);
ALTER TABLE pages ADD COLUMN worker_id {BIGINT} NULL;
CREATE INDEX idx_pages_worker ON pages(worker_id) WHERE worker_id IS NOT NULL;
ALTER TABLE runs ADD COLUMN worker_id {BIGINT} NULL;
"""

# The page's <link rel=canonical> (normalized): search shows a resource under it when it is one
# of the resource's URLs.
DOCUMENT_CANONICAL = """
ALTER TABLE documents ADD COLUMN canonical TEXT NULL;
"""

# Strategies (docs/strategies.md): a crawling strategy's meta per URL (JSON) and its per-domain
# metadata.
STRATEGY = """
ALTER TABLE pages ADD COLUMN meta TEXT;
CREATE TABLE domain_metadata (
  domain TEXT PRIMARY KEY,
  data TEXT NOT NULL
);
"""

# Semantic search (docs/search.md): one embedding per resource (float32 bytes, index/embed.py's
# model), dropped when its resource goes or its text changes (each backend's triggers), so a
# stale vector never outlives its text.
VECTORS = """
CREATE TABLE resource_vectors (
  resource_id {BIGINT} PRIMARY KEY{ON_RESOURCE},
  model       TEXT NOT NULL,
  vector      {BLOB} NOT NULL
);
"""

# The link graph (who links to whom, for the dashboard's links in and out) and each fetch's
# response time. URLs, not rowids (SQLite's pages has no INTEGER PRIMARY KEY, so VACUUM may
# renumber it); links in are found by a 32-bit key of the target (store/sql.py's link_key): an
# index of long URLs in random order cost twice as much to keep up in the crawl's write
# (bench/README).
LINK_GRAPH = """
CREATE TABLE page_links (
  src     TEXT NOT NULL,
  dst     TEXT NOT NULL,
  dst_key {BIGINT} NOT NULL
);
CREATE INDEX idx_page_links_src ON page_links(src);
CREATE INDEX idx_page_links_dst ON page_links(dst_key);
ALTER TABLE pages ADD COLUMN response_ms INTEGER NULL;
"""

# The site queue (docs/sites.md): a site is queued until its start page is checked, then relevant or
# irrelevant (with why); annotations are kept by base URL (a site may not exist yet) and tied to
# the site when it does.
SITES = """
CREATE TABLE sites (
  id          {ID},
  base_url    TEXT NOT NULL UNIQUE,
  host        TEXT NOT NULL,
  status      TEXT NOT NULL DEFAULT 'queued',
  reason      TEXT NULL,
  source      TEXT NOT NULL DEFAULT 'seed',
  added_at    {REAL} NOT NULL,
  checked_at  {REAL} NULL,
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
  id          {ID},
  base_url    TEXT NOT NULL,
  site_id     {BIGINT} NULL REFERENCES sites(id),
  kind        TEXT NOT NULL,
  text        TEXT NULL,
  created_at  {REAL} NOT NULL
);
CREATE INDEX idx_site_annotations_base_url ON site_annotations(base_url);
"""

# Site crawls (docs/sites.md): a site is checked out under a lock that expires (a killed worker
# loses it), its next full and feed crawls are scheduled at checkin, each crawl is recorded, and the
# links its pages make to other sites are counted per pair of sites. A site's feeds (advertised by
# its start page or found while crawling it) are kept per site; their validators are those of their
# frontier rows.
SITE_CRAWLS = """
ALTER TABLE sites ADD COLUMN next_crawl {REAL} NULL;
ALTER TABLE sites ADD COLUMN next_feed_crawl {REAL} NULL;
ALTER TABLE sites ADD COLUMN locked_by TEXT NULL;
ALTER TABLE sites ADD COLUMN locked_until {REAL} NULL;
DROP INDEX idx_sites_status;
CREATE INDEX idx_sites_status ON sites(status, next_crawl);
CREATE INDEX idx_sites_feed ON sites(status, next_feed_crawl);
CREATE TABLE site_crawls (
  id          {ID},
  site_id     {BIGINT} NOT NULL REFERENCES sites(id),
  kind        TEXT NOT NULL,
  worker      TEXT NOT NULL,
  started_at  {REAL} NOT NULL,
  finished_at {REAL} NULL,
  fetched     INTEGER NOT NULL DEFAULT 0,
  new_pages   INTEGER NOT NULL DEFAULT 0,
  errors      INTEGER NOT NULL DEFAULT 0,
  interrupted INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_site_crawls_site ON site_crawls(site_id, started_at);
CREATE TABLE site_links (
  from_site   {BIGINT} NOT NULL REFERENCES sites(id),
  to_site     {BIGINT} NOT NULL REFERENCES sites(id),
  count       INTEGER NOT NULL,
  first_seen  {REAL} NOT NULL,
  last_seen   {REAL} NOT NULL,
  PRIMARY KEY (from_site, to_site)
);
CREATE INDEX idx_site_links_to ON site_links(to_site);
CREATE TABLE site_feeds (
  site_id     {BIGINT} NOT NULL REFERENCES sites(id),
  url         TEXT NOT NULL,
  first_seen  {REAL} NOT NULL,
  PRIMARY KEY (site_id, url)
);
"""
