-- scaling-facts schema, PostgreSQL dialect. Times are milliseconds since the Unix epoch (UTC).

CREATE TABLE releases (
    release_key  TEXT PRIMARY KEY NOT NULL,
    namespace    TEXT NOT NULL,
    service      TEXT NOT NULL,
    service_uid  TEXT NOT NULL,
    first_seen_ms BIGINT NOT NULL,
    last_seen_ms  BIGINT NOT NULL
);

CREATE TABLE revisions (
    revision_uid TEXT PRIMARY KEY NOT NULL,
    release_key  TEXT NOT NULL,
    namespace    TEXT NOT NULL,
    name         TEXT NOT NULL,
    created_ms   BIGINT NOT NULL
);
CREATE INDEX revisions_by_release ON revisions (release_key);

-- The editor's desired values per release.
CREATE TABLE release_config (
    release_key          TEXT PRIMARY KEY NOT NULL,
    min_instances        BIGINT NOT NULL,
    idle_timeout_seconds BIGINT NOT NULL,
    updated_by           TEXT NOT NULL,
    updated_ms           BIGINT NOT NULL
);

-- Every change of the desired values: who, when, old and new.
CREATE TABLE release_config_audit (
    id                       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    release_key              TEXT NOT NULL,
    actor                    TEXT NOT NULL,
    request_id               TEXT NOT NULL,
    changed_ms               BIGINT NOT NULL,
    old_min_instances        BIGINT,
    old_idle_timeout_seconds BIGINT,
    new_min_instances        BIGINT NOT NULL,
    new_idle_timeout_seconds BIGINT NOT NULL
);
CREATE INDEX release_config_audit_by_release ON release_config_audit (release_key, id);

-- One row per wake; (revision_uid, start_second) is the wake's identity.
CREATE TABLE wakes (
    id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    release_key      TEXT NOT NULL,
    revision         TEXT NOT NULL,
    revision_uid     TEXT NOT NULL,
    start_second     BIGINT NOT NULL,
    kind             TEXT NOT NULL CHECK (kind IN ('initial', 'wake')),
    outcome          TEXT NOT NULL CHECK (outcome IN ('served', 'aborted', 'failed')),
    requested_ms     BIGINT NOT NULL,
    serving_ms       BIGINT,
    duration_ms      BIGINT NOT NULL,
    provisioning_ms  BIGINT,
    pulling_image_ms BIGINT,
    starting_ms      BIGINT,
    precision        TEXT NOT NULL CHECK (precision IN ('ms', 's')),
    failure_reason   TEXT,
    failure_message  TEXT,
    recorded_ms      BIGINT NOT NULL,
    UNIQUE (revision_uid, start_second)
);
CREATE INDEX wakes_by_revision ON wakes (revision_uid, requested_ms);

-- HdrHistogram V2+deflate blobs per revision, series and time bucket.
CREATE TABLE histograms (
    revision_uid    TEXT NOT NULL,
    series          TEXT NOT NULL,
    bucket_start_ms BIGINT NOT NULL,
    sample_count    BIGINT NOT NULL,
    blob            BYTEA NOT NULL,
    updated_ms      BIGINT NOT NULL,
    PRIMARY KEY (revision_uid, series, bucket_start_ms)
);
CREATE INDEX histograms_by_bucket ON histograms (bucket_start_ms);
