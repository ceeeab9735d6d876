-- scaling-facts schema, SQLite dialect. Times are milliseconds since the Unix epoch (UTC).

CREATE TABLE releases (
    release_key  TEXT PRIMARY KEY NOT NULL,
    namespace    TEXT NOT NULL,
    service      TEXT NOT NULL,
    service_uid  TEXT NOT NULL,
    first_seen_ms INTEGER NOT NULL,
    last_seen_ms  INTEGER NOT NULL
);

CREATE TABLE revisions (
    revision_uid TEXT PRIMARY KEY NOT NULL,
    release_key  TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    name         TEXT NOT NULL,
    created_ms   INTEGER NOT NULL
);
CREATE INDEX revisions_by_release ON revisions (release_key);

-- The editor's desired values per release.
CREATE TABLE release_config (
    release_key          TEXT PRIMARY KEY NOT NULL,
    min_instances        INTEGER NOT NULL,
    idle_timeout_seconds INTEGER NOT NULL,
    updated_by           TEXT NOT NULL,
    updated_ms           INTEGER NOT NULL
);

-- Every change of the desired values: who, when, old and new.
CREATE TABLE release_config_audit (
    id                       INTEGER PRIMARY KEY AUTOINCREMENT,
    release_key              TEXT NOT NULL,
    actor                    TEXT NOT NULL,
    request_id               TEXT NOT NULL,
    changed_ms               INTEGER NOT NULL,
    old_min_instances        INTEGER,
    old_idle_timeout_seconds INTEGER,
    new_min_instances        INTEGER NOT NULL,
    new_idle_timeout_seconds INTEGER NOT NULL
);
CREATE INDEX release_config_audit_by_release ON release_config_audit (release_key, id);

-- One row per wake; (revision_uid, start_second) is the wake's identity.
CREATE TABLE wakes (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    release_key      TEXT NOT NULL,
    revision         TEXT NOT NULL,
    revision_uid     TEXT NOT NULL,
    start_second     INTEGER NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('initial', 'wake')),
    outcome          TEXT NOT NULL CHECK (outcome IN ('served', 'aborted', 'failed')),
    requested_ms     INTEGER NOT NULL,
    serving_ms       INTEGER,
    duration_ms      INTEGER NOT NULL,
    provisioning_ms  INTEGER,
    pulling_image_ms INTEGER,
    starting_ms      INTEGER,
    precision        TEXT NOT NULL CHECK (precision IN ('ms', 's')),
    failure_reason   TEXT,
    failure_message  TEXT,
    recorded_ms      INTEGER NOT NULL,
    UNIQUE (revision_uid, start_second)
);
CREATE INDEX wakes_by_revision ON wakes (revision_uid, requested_ms);

-- HdrHistogram V2+deflate blobs per revision, series and time bucket.
CREATE TABLE histograms (
    revision_uid    TEXT NOT NULL,
    series          TEXT NOT NULL,
    bucket_start_ms INTEGER NOT NULL,
    sample_count    INTEGER NOT NULL,
    blob            BLOB NOT NULL,
    updated_ms      INTEGER NOT NULL,
    PRIMARY KEY (revision_uid, series, bucket_start_ms)
);
CREATE INDEX histograms_by_bucket ON histograms (bucket_start_ms);
