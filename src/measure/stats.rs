//! Per-revision wake statistics: the recent window behind `expected_cold_start_seconds`,
//! hourly HDR histograms per series (kept compressed), counts by outcome, recent wakes.
//!
//! All of it is a function of the recorded wakes, and is never stored: the wakes table is
//! the one source of truth, and a restart rebuilds these from its rows, so a histogram can
//! never disagree with the wakes it counts (README, "Architecture").
//!
//! Everything a read needs is computed here when a wake is recorded, and kept: the
//! expected start and the revision's cold-start report. Histograms stay packed in memory
//! ([`PackedHistogram`]): encoded, with the latest values appended until they are folded
//! in, so recording a wake decodes nothing and an idle revision costs little.

use std::collections::{BTreeMap, VecDeque};

use chrono::{DateTime, Duration, Utc};

use super::histogram::{LatencyHistogram, PackedHistogram};
use scaling_facts_api::{Outcome, WakeKind, WakeRecord};
use scaling_facts_api::{OutcomeCounts, PhaseBreakdown, RevisionColdStarts};

/// Width of a histogram time bucket.
pub const BUCKET_SECONDS: i64 = 3_600;
/// The histogram series: whole served wakes, then each phase.
pub const SERIES: [&str; 4] = ["served", "provisioning", "pulling_image", "starting"];
const RECENT: usize = 10;

/// How `expected_cold_start_seconds` is computed (ADR 0041 open question 2).
#[derive(Debug, Clone, Copy)]
pub struct WindowSettings {
    /// Percentile P, 0 to 100.
    pub percentile: f64,
    /// The last N served wakes...
    pub wakes: usize,
    /// ...no older than this.
    pub max_age: Duration,
    /// Fewer served wakes than this in the window: not measured yet.
    pub min_samples: usize,
}

impl Default for WindowSettings {
    fn default() -> Self {
        Self {
            percentile: 95.0,
            wakes: 100,
            max_age: Duration::days(7),
            min_samples: 1,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct RevisionStats {
    /// (requested second, ms) of the newest served wakes, oldest first.
    window: VecDeque<(i64, u32)>,
    expected_ms: Option<u64>,
    counts: OutcomeCounts,
    /// Histograms by (series index, bucket start second), packed.
    histograms: BTreeMap<(u8, i64), PackedHistogram>,
    /// The newest wakes, newest first.
    recent: VecDeque<WakeRecord>,
}

fn bucket_of(t: DateTime<Utc>) -> i64 {
    t.timestamp().div_euclid(BUCKET_SECONDS) * BUCKET_SECONDS
}

/// The values a served wake adds to each series, by series index.
fn series_values(w: &WakeRecord) -> Option<[Option<u64>; 4]> {
    (w.kind == WakeKind::Wake && w.outcome == Outcome::Served).then_some([
        Some(w.duration_ms),
        w.phases.provisioning_ms,
        w.phases.pulling_image_ms,
        w.phases.starting_ms,
    ])
}

impl RevisionStats {
    /// Adds a recorded wake, in whatever order wakes arrive: a wake measured now and
    /// one loaded from the store later land where their request times put them.
    pub fn record(&mut self, w: &WakeRecord, settings: &WindowSettings, now: DateTime<Utc>) {
        self.add(w);
        if let Some(values) = series_values(w) {
            let bucket = bucket_of(w.requested_at);
            for (i, v) in values.into_iter().enumerate() {
                let Some(v) = v else { continue };
                let packed = self.histograms.entry((i as u8, bucket)).or_default();
                if packed.record(v).is_err() {
                    // Unreadable (it never is: this process packed it), so start again
                    // rather than lose this wake.
                    let mut h = LatencyHistogram::new();
                    h.record(v);
                    self.put_histogram(i as u8, bucket, &h);
                }
            }
        }
        self.refresh(settings, now);
    }

    /// Adds many wakes at once (a history loaded from the store): each touched histogram
    /// is decoded and compressed once, not once per wake.
    pub fn record_all<'a>(
        &mut self,
        wakes: impl IntoIterator<Item = &'a WakeRecord>,
        settings: &WindowSettings,
        now: DateTime<Utc>,
    ) {
        let mut touched: BTreeMap<(u8, i64), LatencyHistogram> = BTreeMap::new();
        for w in wakes {
            self.add(w);
            let Some(values) = series_values(w) else {
                continue;
            };
            let bucket = bucket_of(w.requested_at);
            for (i, v) in values.into_iter().enumerate() {
                let Some(v) = v else { continue };
                touched
                    .entry((i as u8, bucket))
                    .or_insert_with(|| self.histogram(i as u8, bucket))
                    .record(v);
            }
        }
        for ((series, bucket), h) in touched {
            self.put_histogram(series, bucket, &h);
        }
        self.refresh(settings, now);
    }

    /// Counts, the recent list and the window; not the histograms.
    fn add(&mut self, w: &WakeRecord) {
        match (w.kind, w.outcome) {
            (WakeKind::Initial, _) => self.counts.initial += 1,
            (_, Outcome::Served) => self.counts.served += 1,
            (_, Outcome::Aborted) => self.counts.aborted += 1,
            (_, Outcome::Failed) => self.counts.failed += 1,
        }
        let at = self
            .recent
            .partition_point(|r| r.requested_at > w.requested_at);
        if at < RECENT {
            self.recent.insert(at, w.clone());
            self.recent.truncate(RECENT);
        }
        if series_values(w).is_some() {
            let entry = (
                w.requested_at.timestamp(),
                w.duration_ms.min(u64::from(u32::MAX)) as u32,
            );
            let at = self.window.partition_point(|(t, _)| *t <= entry.0);
            self.window.insert(at, entry);
        }
    }

    fn histogram(&self, series: u8, bucket: i64) -> LatencyHistogram {
        self.histograms
            .get(&(series, bucket))
            .and_then(|p| p.unpack().ok())
            .unwrap_or_default()
    }

    fn put_histogram(&mut self, series: u8, bucket: i64, h: &LatencyHistogram) {
        if let Ok(packed) = PackedHistogram::pack(h) {
            self.histograms.insert((series, bucket), packed);
        }
    }

    /// Drops what fell out of the window and recomputes the expected start.
    pub fn refresh(&mut self, settings: &WindowSettings, now: DateTime<Utc>) {
        let oldest = (now - settings.max_age).timestamp();
        while self.window.len() > settings.wakes
            || self.window.front().is_some_and(|(t, _)| *t < oldest)
        {
            self.window.pop_front();
        }
        self.expected_ms = if self.window.len() >= settings.min_samples.max(1) {
            let values: Vec<u64> = self.window.iter().map(|(_, ms)| u64::from(*ms)).collect();
            LatencyHistogram::percentile_of(values, settings.percentile)
        } else {
            None
        };
    }

    /// The configured percentile of the window, in milliseconds; None until measured.
    pub fn expected_ms(&self) -> Option<u64> {
        self.expected_ms
    }

    pub fn counts(&self) -> &OutcomeCounts {
        &self.counts
    }

    /// One series over every bucket: the first bucket decoded is the sum the others are
    /// added to, so that a revision with one bucket decodes one histogram and adds none.
    fn merged(&self, series: u8) -> LatencyHistogram {
        let mut all: Option<LatencyHistogram> = None;
        for ((s, _), packed) in self
            .histograms
            .range((series, i64::MIN)..=(series, i64::MAX))
        {
            debug_assert_eq!(*s, series);
            let Ok(h) = packed.unpack() else {
                continue;
            };
            match all.as_mut() {
                Some(all) => all.add(&h),
                None => all = Some(h),
            }
        }
        all.unwrap_or_default()
    }

    /// The report of this revision; called when a wake is recorded, not per read.
    pub fn report(&self, revision: &str, revision_uid: &str, active: bool) -> RevisionColdStarts {
        let served = self.merged(0);
        RevisionColdStarts {
            revision: revision.to_owned(),
            revision_uid: revision_uid.to_owned(),
            active,
            counts: self.counts.clone(),
            served: served.percentiles(),
            phases: PhaseBreakdown {
                provisioning: self.merged(1).percentiles(),
                pulling_image: self.merged(2).percentiles(),
                starting: self.merged(3).percentiles(),
            },
            buckets: served.buckets(),
            recent: self.recent.iter().cloned().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scaling_facts_api::{PhaseDurations, Precision};

    fn wake(at: i64, ms: u64, outcome: Outcome) -> WakeRecord {
        let requested_at = DateTime::from_timestamp(1_800_000_000 + at, 0).unwrap();
        WakeRecord {
            release: "r".into(),
            revision: "r-00001".into(),
            revision_uid: "u".into(),
            kind: WakeKind::Wake,
            outcome,
            requested_at,
            start_second: requested_at.timestamp(),
            serving_at: None,
            duration_ms: ms,
            phases: PhaseDurations {
                provisioning_ms: Some(ms / 4),
                pulling_image_ms: None,
                starting_ms: None,
            },
            precision: Precision::Ms,
            failure_reason: None,
            failure_message: None,
            caused_by: None,
        }
    }

    #[test]
    fn window_keeps_the_last_n_and_only_served_wakes() {
        let settings = WindowSettings {
            wakes: 10,
            ..Default::default()
        };
        let now = DateTime::from_timestamp(1_800_100_000, 0).unwrap();
        let mut s = RevisionStats::default();
        for i in 0..20 {
            s.record(
                &wake(i, 1_000 * (i as u64 + 1), Outcome::Served),
                &settings,
                now,
            );
        }
        s.record(&wake(30, 999_999, Outcome::Failed), &settings, now);
        s.record(&wake(31, 999_999, Outcome::Aborted), &settings, now);
        // Last 10 served: 11 s .. 20 s; p95 is 20 s within 1%.
        let p95 = s.expected_ms().unwrap();
        assert!((19_800..=20_200).contains(&p95), "{p95}");
        assert_eq!(
            (s.counts().served, s.counts().failed, s.counts().aborted),
            (20, 1, 1)
        );
        let report = s.report("r-00001", "u", true);
        assert_eq!(report.served.as_ref().unwrap().count, 20);
        assert!(
            report.served.as_ref().unwrap().max_ms < 25_000,
            "failed wakes stay out"
        );
        assert_eq!(report.recent.len(), 10);
        assert!(report.phases.provisioning.is_some());
    }

    #[test]
    fn old_wakes_leave_the_window() {
        let settings = WindowSettings::default();
        let mut s = RevisionStats::default();
        let then = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        s.record(&wake(0, 5_000, Outcome::Served), &settings, then);
        assert!(s.expected_ms().is_some());
        s.refresh(&settings, then + Duration::days(8));
        assert_eq!(s.expected_ms(), None);
    }
}
