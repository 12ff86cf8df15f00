"""Each migration step's shared part, in order (:mod:`litecrawl.store.schema` says how a
backend renders them): DDL as data, with the type words in braces each backend spells its own
way. A new step goes at the end of :data:`STEPS` (its place is its version number), with a
line in ``tests/test_lost_claims.py``'s ``_UNDO``.
"""

from __future__ import annotations

from litecrawl.store.ddl_core import (
    CRAWL_STATE,
    DOCUMENT_CANONICAL,
    FRONTIER_COLUMNS,
    INDEX,
    LINK_GRAPH,
    SEED_SCHEMA,
    SITE_CRAWLS,
    SITES,
    STRATEGY,
    VECTORS,
    WORKERS,
)

__all__ = ["STEPS"]

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

# The model whose vectors search reads (``litecrawl index --model``): one row, or none for the
# default model (store/vectors.py). The crawl leaves another model's vectors alone.
_VECTOR_MODEL = """
CREATE TABLE vector_model (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  name TEXT NOT NULL
);
"""

# The interval the schedule gave a page at its last visit, in seconds (docs/freshness.md): a page
# visited late is due one interval after it was due, so its due time less its visit is no
# measure of what it spends. NULL for rows from before, until their next visit.
_RECRAWL_INTERVAL = """
ALTER TABLE pages ADD COLUMN recrawl_interval {BIGINT} NULL;
"""

# (name, shared part): steps with an empty shared part are one backend's alone (full text).
STEPS: list[tuple[str, str]] = [
    ("seed_pages", SEED_SCHEMA),
    ("frontier_columns", FRONTIER_COLUMNS),
    ("crawl_state", CRAWL_STATE),
    ("index", INDEX),
    ("fts_tuning", ""),
    ("workers", WORKERS),
    ("document_canonical", DOCUMENT_CANONICAL),
    ("strategy", STRATEGY),
    ("resource_vectors", VECTORS),
    ("link_graph", LINK_GRAPH),
    ("sites", SITES),
    ("site_crawls", SITE_CRAWLS),
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
    ("vector_model", _VECTOR_MODEL),
    ("fts_insert_written", ""),  # SQLite's full text of a new resource written beside it
    ("recrawl_interval", _RECRAWL_INTERVAL),
    ("section_vectors_rowid", ""),  # SQLite's section_vectors rebuilt with a rowid
]
