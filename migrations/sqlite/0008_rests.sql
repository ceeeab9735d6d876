-- What each revision showed when it was last seen at rest: a restarted service compares
-- its lists with it, to see a whole wake that went by while no process watched. A stream
-- not at rest then has its columns null.
CREATE TABLE rests (
    revision_uid     TEXT PRIMARY KEY NOT NULL,
    -- The Deployment's metadata.generation at zero, and when it was seen so.
    generation       INTEGER,
    deployment_ms    INTEGER,
    -- The PA's Active=False condition: its reason, lastTransitionTime, when seen so, and
    -- whether ScaleTargetInitialized was True (1) then.
    pa_reason        TEXT CHECK (pa_reason IN ('NoTraffic', 'TimedOut')),
    pa_since_ms      INTEGER,
    pa_seen_ms       INTEGER,
    pa_initialized   INTEGER CHECK (pa_initialized IN (0, 1)),
    -- The start second of the last wake known to have ended then: a wake stored with a
    -- later one makes this rest stale.
    after_start_second INTEGER
);
