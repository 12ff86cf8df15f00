"""Each migration step's shared part, in order (:mod:`litecrawl.store.schema` says how a
backend renders them): DDL as data, with the type words in braces each backend spells its own
way. A new step goes at the end of :data:`STEPS` (its place is its version number), with a
line in ``tests/test_lost_claims.py``'s ``_UNDO``.
"""

from __future__ import annotations

__all__ = ["STEPS"]

# litecrawl()'s first table (docs/architecture.md, "Storage"), with the typo (trailing comma)
# mended and a default for content_hash so that new pages can be inserted "using default values".
_SEED_SCHEMA = """
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
_FRONTIER_COLUMNS = """
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
_CRAWL_STATE = """
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
_INDEX = """
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
_WORKERS = """
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

# Semantic search (docs/search.md): one embedding per resource (float32 bytes, index/embed.py's
# model), dropped when its resource goes or its text changes (each backend's triggers), so a
# stale vector never outlives its text.
_VECTORS = """
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
_LINK_GRAPH = """
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
_SITES = """
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
_SITE_CRAWLS = """
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

# Politeness held by the database: the time the next request to a host may start, reserved by
# each worker before it fetches (HostState.reserve_start), so N workers together keep the delay.
_HOST_PACING = """
ALTER TABLE hosts ADD COLUMN next_start {REAL} NOT NULL DEFAULT 0;
"""

# Claims that know hosts: each worker's lease on a share of a host's slots (held while it has
# pages of the host in flight), and the pacing state claims look at to pass a host over.
_HOST_LEASES = """
CREATE TABLE host_leases (
  host       TEXT NOT NULL,
  worker_id  {BIGINT} NOT NULL,
  slots      INTEGER NOT NULL,
  PRIMARY KEY (host, worker_id)
);
CREATE INDEX idx_hosts_next_start ON hosts(next_start);
CREATE INDEX idx_hosts_slowed_until ON hosts(slowed_until);
ALTER TABLE workers ADD COLUMN pages {BIGINT} NOT NULL DEFAULT 0;
"""

# --partition K/N on both backends: each page's partition hash stored (the crc32 of its
# partition key, computed by the writer: litecrawl.strategy.domain.partition_hash), so claims
# select a partition with part % N = K instead of computing the key for every row they scan
# (rows from before are filled in by each backend's migrate: the key needs the suffix list).
_PARTITION_HASH = """
ALTER TABLE pages ADD COLUMN part {BIGINT} NULL;
"""

# Registered domains now use the suffix list's private section (alice.github.io is a site of
# its own) and a host without a known suffix stands for itself: each backend's migrate computes
# the partition hashes of those hosts' pages again. Domain metadata stays under the name it was
# written with (docs/strategies.md).
_PRIVATE_SUFFIXES = ""

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
# tag, dropped as the resource's own is (each backend's triggers).
_SECTION_VECTORS = """
CREATE TABLE section_vectors (
  resource_id {BIGINT} NOT NULL{ON_RESOURCE},
  ord         INTEGER NOT NULL,
  heading     TEXT NOT NULL,
  anchor      TEXT NULL,
  model       TEXT NOT NULL,
  vector      {BLOB} NOT NULL,
  PRIMARY KEY (resource_id, ord)
){WITHOUT_ROWID};
"""

# Each page's change statistics (docs/freshness.md): re-fetches compared, changes found, the
# estimated change rate (per second) and the estimator's record (JSON), written with each fetch.
_CHANGE_RATE = """
ALTER TABLE pages ADD COLUMN checks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN changes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pages ADD COLUMN change_rate {REAL};
ALTER TABLE pages ADD COLUMN change_history TEXT;
"""

# When a request to a host really started (HostState.take_start): a send woken late, or queued
# behind another worker's reservation, keeps the delay from the actual start.
_HOST_LAST_START = """
ALTER TABLE hosts ADD COLUMN last_start {REAL} NOT NULL DEFAULT 0;
"""

# A page's change rate is stored once a re-fetch has been compared (checks > 0); before, the rows
# held the estimator's prior, which is no measurement.
_CHANGE_RATE_MEASURED = """
UPDATE pages SET change_rate = NULL WHERE checks = 0;
"""

# The near-duplicate look-up (store/sql.py near_resources) checks the distance in each band's
# index: the simhash beside the band answers it there, without reading any resource's row.
_NEAR_BANDS = "".join(
    f"DROP INDEX idx_resources_band{n};\n"
    f"CREATE INDEX idx_resources_near{n} ON resources(band{n}, simhash);\n"
    for n in range(4)
)

# Every heading a section holds (several when short sections were merged to fit the bound), as
# JSON [[at, heading, anchor], ...] with where each heading's line starts in the resource's text:
# a hit names the heading whose part matched (docs/search.md); NULL for rows from before.
_SECTION_PLACES = """
ALTER TABLE section_vectors ADD COLUMN places TEXT NULL;
"""

# Links in found by a compact index fed in key order (store/link_graph.py): page_links' rows
# get ids (never handed out twice: an entry left behind can never name another link); the
# target index becomes page_links_in (target key, link id), merged from page_links_in_new (the
# links written since) every so often, instead of an index of page_links written at a random
# place for every link.
_LINKS_IN = """
CREATE TABLE page_links_ids (
  id      {SERIAL},
  src     TEXT NOT NULL,
  dst     TEXT NOT NULL,
  dst_key {BIGINT} NOT NULL
);
INSERT INTO page_links_ids (src, dst, dst_key) SELECT src, dst, dst_key FROM page_links
  ORDER BY src, dst;
DROP TABLE page_links;
ALTER TABLE page_links_ids RENAME TO page_links;
CREATE INDEX idx_page_links_src ON page_links(src);
CREATE TABLE page_links_in (
  dst_key {BIGINT} NOT NULL,
  link_id {BIGINT} NOT NULL,
  PRIMARY KEY (dst_key, link_id)
){WITHOUT_ROWID};
INSERT INTO page_links_in (dst_key, link_id) SELECT dst_key, id FROM page_links
  ORDER BY dst_key, id;
CREATE TABLE page_links_in_new (
  link_id {ID},
  dst_key {BIGINT} NOT NULL
);
"""

# Where a section's heading starts in the resource's text, apart from the JSON (which is now
# written only for a section that holds several headings): read for 100 pages a question
# without parsing any JSON. NULL for rows from before (the heading is then found as a line).
_SECTION_AT = """
ALTER TABLE section_vectors ADD COLUMN heading_at INTEGER NULL;
"""

# (name, shared part): steps with an empty shared part are one backend's alone (full text).
STEPS: list[tuple[str, str]] = [
    ("seed_pages", _SEED_SCHEMA),
    ("frontier_columns", _FRONTIER_COLUMNS),
    ("crawl_state", _CRAWL_STATE),
    ("index", _INDEX),
    ("fts_tuning", ""),
    ("workers", _WORKERS),
    ("document_canonical", _DOCUMENT_CANONICAL),
    ("strategy", _STRATEGY),
    ("resource_vectors", _VECTORS),
    ("link_graph", _LINK_GRAPH),
    ("sites", _SITES),
    ("site_crawls", _SITE_CRAWLS),
    ("host_pacing", _HOST_PACING),
    ("fts_words", ""),
    ("host_leases", _HOST_LEASES),
    ("partition_hash", _PARTITION_HASH),
    ("fts_bounded", ""),
    ("private_suffixes", _PRIVATE_SUFFIXES),
    ("lost_claims", _LOST_CLAIMS),
    ("section_vectors", _SECTION_VECTORS),
    ("change_rate", _CHANGE_RATE),
    ("tsv_written", ""),  # PostgreSQL's tsvector written with its resource
    ("text_lz4", ""),  # PostgreSQL's compression of long texts
    ("host_last_start", _HOST_LAST_START),
    ("change_rate_measured", _CHANGE_RATE_MEASURED),
    ("near_bands", _NEAR_BANDS),
    ("section_places", _SECTION_PLACES),
    ("links_in", _LINKS_IN),
    ("section_at", _SECTION_AT),
]
