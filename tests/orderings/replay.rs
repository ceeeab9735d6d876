//! The case rendered as the service receives it: one ordered stream per kind with lag,
//! relists, resumed watches and restarts, interleaved and fed to a tracker that stores
//! what it records the way the service does.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use scaling_facts::measure::machine::Thresholds;
use scaling_facts::measure::observe::{CondStatus, Container, Observation, Stamp, Via};
use scaling_facts::measure::stats::WindowSettings;
use scaling_facts::measure::tracker::{Stored, Tracker, TrackerSettings};
use scaling_facts::measure::wake::{OpenWake, Rest};
use scaling_facts_api::{Precision, WakeRecord};

use super::world::{self, KINDS, Kind, World};
use super::{Case, Fault};

/// One thing the service receives, at its arrival time.
#[derive(Debug, Clone)]
enum What {
    Obs(Box<Observation>, Via),
    /// A (re)list of one stream, as of then: its objects, and gone for those it dropped.
    List(Kind),
    /// The service restarts; its history arrives before the lists, while they come in
    /// (after the first `mid` kinds), or only at the `History` event (`late`).
    Restart {
        late: bool,
        mid: Option<usize>,
    },
    History,
    Tick,
    /// The service's first start (with nothing stored), before any kind has listed.
    Start,
    /// Every kind of the first start has listed.
    Synced,
    /// The stream's watch failed (the API server went away).
    Down(Kind),
    /// The stream's watch is back, its backlog delivered.
    Back(Kind),
}

/// The watched kind as the watch layer names it.
fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Service => "services",
        Kind::Revision => "revisions",
        Kind::Autoscaler => "podautoscalers",
        Kind::Deployment => "deployments",
        Kind::Pod => "pods",
    }
}

/// One stream's deliveries, in stream order: (arrival, write time, what). `restarts` are
/// the process's restarts that count ([`restarts`]). While it is built, each item also
/// carries where it stands in the stream: its write time, but for a replay, which the API
/// server sends only once the watch resumed, after all it had sent before the cut.
fn stream(
    world: &World,
    kind: Kind,
    case: &Case,
    restarts: &[Restarted],
    rng: &mut u64,
) -> Vec<(i64, i64, What)> {
    let k = kind as usize;
    let mut out: Vec<(i64, i64, What, i64)> = Vec::new();
    let writes: Vec<&world::Write> = world.writes.iter().filter(|w| w.kind == kind).collect();
    for w in &writes {
        let what = match (&w.obs, &w.gone) {
            (Some(o), _) => What::Obs(Box::new(o.clone()), Via::Watched),
            (None, Some(g)) => What::Obs(Box::new(g.clone()), Via::Watched),
            (None, None) => continue,
        };
        out.push((w.t + next(rng, case.lag[k] + 1), w.t, what, w.t));
    }
    for f in &case.faults {
        let relist = match *f {
            Fault::Relist { kind: fk, at, gap } if fk == k => Some((at, gap)),
            // Each stream notices the restarted API server and relists on its own.
            Fault::Outage { at, gap } => Some((at + next(rng, 300), gap)),
            _ => None,
        };
        if let Some((at, gap)) = relist {
            out.retain(|(arrival, t, _, _)| *t > at || *t <= at - gap && *arrival <= at);
            if case.fails_before_relist {
                out.push((at - gap + 1, at - gap, What::Down(kind), at - gap));
            }
            out.push((at, at, What::List(kind), at));
        }
        match *f {
            Fault::Resume { kind: fk, at, gap } if fk == k => {
                let mut repeats = Vec::new();
                for item in out.iter_mut() {
                    if item.1 > at - gap && item.1 <= at {
                        item.0 = item.0.max(at);
                        if let What::Obs(_, via) = &mut item.2 {
                            *via = Via::Resumed;
                        }
                    } else if item.1 <= at - gap
                        && item.1 > at - gap - 3_000
                        && let What::Obs(o, _) = &item.2
                    {
                        let replay = What::Obs(o.clone(), Via::Resumed);
                        repeats.push((at, item.1, replay, at - gap));
                    }
                }
                out.extend(repeats.into_iter().rev().take(2));
            }
            _ => {}
        }
    }
    // Down from `from` until its own watch is back: whatever this stream had not
    // delivered by then arrives at once, late, and as a replay. Outages that overlap, for
    // this stream, are one: its watch cannot come back while the API server is away.
    for (from, back) in held_spans(case, world, k) {
        // A stream that relists in the window (another fault's) comes back by a list,
        // which forgets what the backlog would tell: that is the `Outage` fault's shape,
        // checked with it. This one is of watches that resume.
        if out
            .iter()
            .any(|i| matches!(i.2, What::List(_)) && i.0 > from && i.1 <= back)
        {
            continue;
        }
        // A process that dies while its watch is held takes the watch with it: its
        // successor lists once the API answers and watches from there, fresh. What was
        // written until then is in that list (or lost while no process ran).
        if let Some(r) = restarts.iter().find(|r| from < r.at && r.died < back) {
            out.retain(|item| !(item.0 > from && item.1 <= r.at));
            out.push((from + 1, from, What::Down(kind), from));
            continue;
        }
        // What was in flight at the cut, and everything its stream sent after it.
        let first = out
            .iter()
            .filter(|i| i.0 > from && i.1 <= back)
            .map(|i| i.1)
            .min()
            .unwrap_or(i64::MAX);
        for item in out.iter_mut() {
            if (item.0 > from || item.1 >= first) && item.1 <= back {
                item.0 = item.0.max(back);
                if let What::Obs(_, via) = &mut item.2 {
                    *via = Via::Resumed;
                }
            }
        }
        // The watch layer reports the failure, and the watch back once its burst is in.
        out.push((from + 1, from, What::Down(kind), from));
        out.push((back, back, What::Back(kind), back));
    }
    // A stream is in order: sort by when it was sent, then nothing overtakes. (Stable:
    // a replay follows what was sent before the cut at its own instant.)
    out.sort_by_key(|item| item.3);
    let mut last = i64::MIN;
    for item in &mut out {
        item.0 = item.0.max(last);
        last = item.0;
    }
    out.into_iter()
        .map(|(a, t, what, _)| (a, t, what))
        .collect()
}

/// The case's [`Fault::Held`] windows (see [`held_window`]), each with its kinds' delays.
fn held_windows(case: &Case, world: &World) -> Vec<(i64, i64, [i64; 5])> {
    case.faults
        .iter()
        .filter_map(|f| match *f {
            Fault::Held {
                wake,
                before,
                after,
                delays,
            } => held_window(world, wake, before, after).map(|(from, to)| (from, to, delays)),
            _ => None,
        })
        .collect()
}

/// When stream `k` is held by the case's [`Fault::Held`] windows: from each window's start
/// until the stream's watch is back. Outages that overlap, for one stream, are one: its
/// watch cannot come back while the API server is away.
pub fn held_spans(case: &Case, world: &World, k: usize) -> Vec<(i64, i64)> {
    let mut windows: Vec<(i64, i64)> = held_windows(case, world)
        .into_iter()
        .map(|(from, to, delays)| (from, to + delays[k]))
        .collect();
    windows.sort();
    let mut merged: Vec<(i64, i64)> = Vec::new();
    for (from, back) in windows {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(back),
            _ => merged.push((from, back)),
        }
    }
    merged
}

/// When the API server is down for a [`Fault::Held`]: from `before` ms before the true
/// wake's request to `after` ms after its last pod was deleted (after it ended, when no
/// pod of it was deleted before the next wake). None when the world has no wake.
pub fn held_window(world: &World, wake: usize, before: i64, after: i64) -> Option<(i64, i64)> {
    let n = world.truth.len();
    let t = world.truth.get(wake.checked_rem(n)?)?;
    let over = match t.outcome {
        scaling_facts_api::Outcome::Failed => t.start + world::ACTIVATION_TIMEOUT_MS,
        _ => t.end,
    };
    let next = world
        .truth
        .iter()
        .map(|w| w.start)
        .filter(|s| *s > t.start)
        .min()
        .unwrap_or(i64::MAX);
    // Its pods: those of its revision written while it was underway.
    let pods: Vec<&str> = world
        .writes
        .iter()
        .filter(|w| w.kind == Kind::Pod && w.t >= t.start && w.t <= over)
        .filter(|w| matches!(&w.obs, Some(Observation::Pod { revision_uid, .. }) if *revision_uid == t.revision_uid))
        .map(|w| w.key.as_str())
        .collect();
    let deleted = world
        .writes
        .iter()
        .filter(|w| w.kind == Kind::Pod && w.obs.is_none() && w.t < next)
        .filter(|w| pods.contains(&w.key.as_str()))
        .map(|w| w.t)
        .max();
    Some((t.start - before, deleted.unwrap_or(over).max(over) + after))
}

/// When a list of `kind` the process asked for at `t` is answered: at once, or, while its
/// watches are held for a [`Fault::Held`], once the API is back and the kind's retry comes
/// round. A list cannot complete while nothing answers.
fn answered(case: &Case, world: &World, kind: usize, t: i64) -> i64 {
    let away = held_windows(case, world);
    let mut t = t;
    while let Some((_, to, delays)) = away.iter().find(|(from, to, _)| *from < t && t < *to) {
        t = to + delays[kind];
    }
    t
}

/// A restart of the service that counts (one killed before its first sync is as if the
/// service had started later): when the process died, and when its successor lists.
#[derive(Debug, Clone, Copy)]
pub struct Restarted {
    /// When the process went down.
    pub died: i64,
    /// When the new process lists and watches from. Inside a [`Fault::Held`] window, at
    /// once too: that outage is of the old process's own connection (a cut network),
    /// which a process rescheduled elsewhere does not share.
    pub at: i64,
    late: Option<i64>,
    mid: Option<usize>,
}

/// The case's restarts that count, given when the service first synced.
pub fn restarts(case: &Case, started: i64) -> Vec<Restarted> {
    case.faults
        .iter()
        .filter_map(|f| match *f {
            Fault::Restart { at, down } => Some((at, down, None, None)),
            Fault::LateHistory { at, down, after } => Some((at, down, Some(after), None)),
            Fault::MidListHistory { at, down, listed } => Some((at, down, None, Some(listed))),
            _ => None,
        })
        .filter(|(at, down, ..)| at - down > started)
        .map(|(at, down, late, mid)| Restarted {
            died: at - down,
            at,
            late,
            mid,
        })
        .collect()
}

/// A small deterministic generator for lags, so that a case reproduces from its seed.
fn next(state: &mut u64, bound: i64) -> i64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state % bound.max(1) as u64) as i64
}

/// The state of every object of `kind` at `at`: the newest write at or before it.
fn snapshot(world: &World, kind: Option<Kind>, at: i64) -> BTreeMap<(Kind, String), Observation> {
    let mut objects = BTreeMap::new();
    for w in world
        .writes
        .iter()
        .filter(|w| w.t <= at && kind.is_none_or(|k| w.kind == k))
    {
        match &w.obs {
            Some(o) => objects.insert((w.kind, w.key.clone()), o.clone()),
            None => objects.remove(&(w.kind, w.key.clone())),
        };
    }
    objects
}

struct Service {
    base: Instant,
    base_ms: i64,
    tracker: Tracker,
    /// What the store keeps: the first record of each (revision, start second), and the
    /// wakes underway.
    stored: BTreeMap<(String, i64), WakeRecord>,
    /// Each revision's wakes underway, oldest first, as the store keeps them.
    open: BTreeMap<String, Vec<OpenWake>>,
    /// Each revision's last rest, as the store keeps it.
    rests: BTreeMap<String, Rest>,
    /// Since when the service has watched, as the store keeps it (the earliest told).
    watching: Option<DateTime<Utc>>,
    /// What each stream has delivered since the service started, for "gone" on relist.
    known: BTreeMap<(Kind, String), Observation>,
    expected: Option<f64>,
    /// When (the write's time, or the list's) a delivered object showed a revision serving.
    serving: Vec<(String, i64)>,
    /// See [`Ran::troubles`].
    troubles: Vec<(String, i64, String)>,
    /// See [`Ran::rests`].
    rests_seen: Vec<(String, DateTime<Utc>)>,
    /// See [`Ran::blurred`].
    blurred: Vec<(WakeRecord, WakeRecord)>,
    /// Whether what is taken is a history's merge.
    merging: bool,
    /// When each stored record was written.
    stored_at: BTreeMap<(String, i64), i64>,
    /// When the last observation replayed late (a resumed watch's backlog) arrived.
    resumed_at: i64,
    /// What objects of a revision this process does not know yet showed: the tracker
    /// holds them for their Revision, so they count as received only once it comes, and
    /// not at all if the process dies first.
    waiting: Vec<(String, i64, Mark)>,
}

/// What a received object showed of its revision.
enum Mark {
    Serving,
    /// Why it was not serving.
    Trouble(String),
    /// At rest since then (the PA's `NoTraffic`).
    Rest(DateTime<Utc>),
}

/// The cluster's `config-autoscaler`: it allows revisions born at zero (docs/knative.md, "Settings").
fn cluster_settings() -> Observation {
    Observation::ConfigMap {
        name: "config-autoscaler".into(),
        data: [("allow-zero-initial-scale".into(), "true".into())].into(),
    }
}

fn settings() -> TrackerSettings {
    TrackerSettings {
        window: WindowSettings::default(),
        thresholds: Thresholds {
            image_pull_failure_after: Duration::from_secs(5),
            unschedulable_failure_after: Duration::from_secs(5),
            late_event_tolerance: Duration::from_secs(2),
        },
        stats_from_store: false,
    }
}

impl Service {
    fn stamp(&self, at: i64, via: Via) -> Stamp {
        Stamp {
            mono: self.base + Duration::from_millis((at + 10_000) as u64),
            wall: DateTime::<Utc>::from_timestamp_millis(self.base_ms + at).unwrap(),
            via,
        }
    }

    /// Takes what a history's merge wrote: across two processes' lives, a wake one timed
    /// live may be bounded anew from both (the first's request, the second's end).
    fn take_merged(&mut self, out: scaling_facts::measure::tracker::Output, at: i64) {
        self.merging = true;
        self.take(out, at);
        self.merging = false;
    }

    fn take(&mut self, out: scaling_facts::measure::tracker::Output, at: i64) {
        // As the service writes them: retractions first.
        let mut retracted = Vec::new();
        for key in out.retracted {
            let when = self.stored_at.remove(&key).unwrap_or(i64::MIN);
            // Timed on what came as it happened: nothing replayed late since could date
            // it better.
            let live = !self.merging && self.resumed_at < when;
            retracted.extend(self.stored.remove(&key).filter(|_| live));
        }
        for w in out.wakes.into_iter().map(|r| r.wake) {
            if let Some(was) = retracted.iter().find(|r| {
                (&r.revision_uid, r.start_second) == (&w.revision_uid, w.start_second)
                    && r.precision == Precision::Ms
                    && w.precision == Precision::S
            }) {
                self.blurred.push((was.clone(), w.clone()));
            }
            trace(
                at,
                &format!(
                    "  stored {:?} {:?} {:?} {} {} ms",
                    w.kind, w.outcome, w.precision, w.requested_at, w.duration_ms
                ),
            );
            let key = (w.revision_uid.clone(), w.start_second);
            self.stored_at.entry(key.clone()).or_insert(at);
            self.stored.entry(key).or_insert(w);
        }
        for r in out.rests {
            trace(at, &format!("  rest {:?}", r.at));
            self.rests.insert(r.revision_uid.clone(), r);
        }
        if let Some(since) = out.watching_since {
            self.watching = Some(self.watching.map_or(since, |w| w.min(since)));
        }
        for o in out.open {
            trace(at, &format!("  open {o:?}"));
            let uid = o.revision_uid().to_owned();
            match o.wakes() {
                [] => self.open.remove(&uid),
                wakes => self.open.insert(uid, wakes.to_vec()),
            };
        }
        let now = DateTime::<Utc>::from_timestamp_millis(self.base_ms + at).unwrap();
        for f in self.tracker.changed(now).facts {
            self.expected = f.scaling.expected_cold_start_seconds;
        }
    }

    /// What a process killed now would continue from: once everything it was given is
    /// written, the stored wakes underway are the ones it has underway.
    fn check_open(&self, at: i64) {
        let stored: Vec<&OpenWake> = self.open.values().flatten().collect();
        let memory = self.tracker.open_wakes();
        assert!(
            stored.len() == memory.len() && stored.iter().zip(&memory).all(|(s, m)| *s == m),
            "at {at}: the store's wakes underway {stored:?} are not the tracker's {memory:?}"
        );
    }

    /// Keeps what an object the service received says of its revision serving: a ready
    /// pod that is not terminating, or the PA's `Active=True`.
    fn note_serving(&mut self, obs: &Observation, t: i64) {
        let serving = match obs {
            Observation::Pod { revision_uid, pod } => (!pod.terminating()
                && pod.ready.as_ref().is_some_and(|c| c.is(CondStatus::True)))
            .then_some(revision_uid),
            Observation::Autoscaler { revision_uid, pa } => pa
                .active
                .as_ref()
                .is_some_and(|c| c.is(CondStatus::True))
                .then_some(revision_uid),
            _ => None,
        };
        let mut marks: Vec<(String, Mark)> = Vec::new();
        if let Some(uid) = serving {
            marks.push((uid.clone(), Mark::Serving));
        }
        // The PA at rest, or Knative giving up.
        if let Observation::Autoscaler { revision_uid, pa } = obs
            && let Some(c) = pa.active.as_ref()
        {
            let mark = match c.reason.as_deref() {
                Some("NoTraffic") => c.since.map(Mark::Rest),
                Some("TimedOut") if c.is(CondStatus::False) => {
                    Some(Mark::Trouble("TimedOut".to_owned()))
                }
                _ => None,
            };
            marks.extend(mark.map(|m| (revision_uid.clone(), m)));
        }
        if let Observation::Pod { revision_uid, pod } = obs {
            let waiting = match &pod.container {
                Container::Waiting { reason, .. } => Some(reason.to_string()),
                _ => None,
            };
            let unscheduled = (pod.scheduled.as_ref())
                .filter(|c| c.is(CondStatus::False))
                .and_then(|c| c.reason.as_deref().map(str::to_owned));
            for reason in waiting.into_iter().chain(unscheduled) {
                marks.push((revision_uid.clone(), Mark::Trouble(reason)));
            }
        }
        for (uid, mark) in marks {
            if self.known.contains_key(&(Kind::Revision, uid.clone())) {
                self.mark(uid, t, mark);
            } else {
                self.waiting.push((uid, t, mark));
            }
        }
    }

    fn mark(&mut self, uid: String, t: i64, mark: Mark) {
        match mark {
            Mark::Serving => self.serving.push((uid, t)),
            Mark::Trouble(reason) => self.troubles.push((uid, t, reason)),
            Mark::Rest(since) => self.rests_seen.push((uid, since)),
        }
    }

    /// A Revision delivered: what its objects showed while it was unknown is received.
    fn revision_known(&mut self, obs: &Observation) {
        let Observation::Revision(r) = obs else {
            return;
        };
        let (now, still): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(uid, ..)| *uid == r.uid);
        self.waiting = still;
        for (uid, t, mark) in now {
            self.mark(uid, t, mark);
        }
    }

    fn list(&mut self, world: &World, kind: Option<Kind>, at: i64) {
        let now = snapshot(world, kind, at);
        let stamp = self.stamp(at, Via::Listed);
        self.tracker.list_begins("list");
        let mut outs = Vec::new();
        for (key, obs) in &now {
            trace(at, &format!("Listed {}", short(obs)));
            self.note_serving(obs, at);
            outs.push(self.tracker.apply(obs.clone(), stamp));
            self.known.insert(key.clone(), obs.clone());
            self.revision_known(obs);
        }
        let dropped: Vec<(Kind, String)> = self
            .known
            .keys()
            .filter(|k| kind.is_none_or(|kk| k.0 == kk) && !now.contains_key(*k))
            .cloned()
            .collect();
        for key in dropped {
            self.known.remove(&key);
            if let Some(g) = world
                .writes
                .iter()
                .find(|w| (w.kind, w.key.clone()) == key)
                .and_then(|w| w.gone.clone())
            {
                outs.push(self.tracker.apply(g, stamp));
            }
        }
        outs.push(self.tracker.list_ends("list", stamp));
        // As the engine does: a list complete is its kind's watch back.
        for k in KINDS.iter().filter(|k| kind.is_none_or(|kk| **k == kk)) {
            outs.push(
                self.tracker
                    .watch_back(kind_name(*k), self.stamp(at, Via::Watched)),
            );
        }
        for o in outs {
            self.take(o, at);
        }
    }
}

/// What a case's run left.
pub struct Ran {
    pub world: World,
    /// The stored wakes, by start.
    pub stored: Vec<WakeRecord>,
    /// The last `expected_cold_start_seconds`.
    pub expected: Option<f64>,
    /// When the pods' stream relisted.
    pub pod_relists: Vec<i64>,
    /// When an object the service received showed a revision serving, by revision uid.
    pub serving: Vec<(String, i64)>,
    /// What a pod the service received showed of why it was not serving, or a PA of
    /// Knative giving up (`TimedOut`): revision uid, when, the reason.
    pub troubles: Vec<(String, i64, String)>,
    /// Each `NoTraffic` a PA the service received showed (its revision known to the
    /// process): revision uid, the condition's second.
    pub rests: Vec<(String, DateTime<Utc>)>,
    /// When the service first had every kind listed (`i64::MIN`: before the first write).
    pub synced: i64,
    /// Records timed to the millisecond that a later step of the same process replaced,
    /// under their own key, by one known only to the second, with nothing replayed late
    /// in between: what was measured on evidence that came as it happened must stay so (a
    /// resumed watch's backlog may date a wake better, and a history's merge, joining two
    /// lives, may bound it anew).
    pub blurred: Vec<(WakeRecord, WakeRecord)>,
}

/// Runs the case: the stored wakes, the final expected start, and when pods relisted.
pub fn run(case: &Case) -> Ran {
    let world = World::history(
        case.seed,
        case.born_at_zero,
        case.initial_scale,
        &case.episodes,
        case.deployment_first,
        case.quick,
    );
    if std::env::var("ORDERINGS_TRACE").is_ok_and(|v| v == "world") {
        for t in &world.truth {
            eprintln!("truth {t:?}");
        }
        for w in &world.writes {
            let what = w.obs.as_ref().map_or_else(|| "gone".to_string(), short);
            eprintln!("{:>7} write {:?} {}", w.t, w.kind, what);
        }
    }
    let mut rng = case.seed | 1;
    let end = world.writes.last().map_or(0, |w| w.t) + 15_000;
    let mut all: Vec<(i64, usize, i64, What)> = Vec::new();
    // Before its first start the service sees nothing; each kind's list then holds what
    // was written before it, and its watch what was written after.
    let listed: Vec<Option<i64>> = (0..KINDS.len())
        .map(|k| {
            case.first_start
                .map(|f| answered(case, &world, k, f.at + f.lists[k]))
        })
        .collect();
    let listed_at = |k: usize| listed[k];
    let started = (0..KINDS.len())
        .filter_map(listed_at)
        .max()
        .unwrap_or(i64::MIN);
    let restarts = restarts(case, started);
    for kind in KINDS {
        let k = kind as usize;
        for (arrival, t, what) in stream(&world, kind, case, &restarts, &mut rng) {
            // A watch fails when its connection breaks, whatever it had in flight.
            // Before the first start's list, no process had a watch to fail.
            if listed_at(k).is_some_and(|l| t <= l) {
                continue;
            }
            // (Sent just after its last delivery: a restart at that instant lists before
            // its own watch fails.)
            if let What::Down(_) = what {
                all.push((t + 1, k, t + 1, what));
                continue;
            }
            all.push((arrival, k, t, what));
        }
        if let Some(l) = listed_at(k) {
            all.push((l, k, l, What::List(kind)));
        }
    }
    if let Some(f) = case.first_start {
        // Just before the lists of its first instant.
        all.push((f.at - 1, 8, f.at, What::Start));
        all.push((started, 12, started, What::Synced));
    }
    for r in &restarts {
        let Restarted {
            died,
            at,
            late,
            mid,
        } = *r;
        // Lost while down; what was sent before the restart is in its relist.
        all.retain(|(arrival, _, t, _)| {
            !(*arrival > died && *arrival <= at || *arrival > at && *t <= at)
        });
        all.push((
            at,
            9,
            at,
            What::Restart {
                late: late.is_some(),
                mid,
            },
        ));
        if let Some(after) = late {
            all.push((at + after, 11, at + after, What::History));
        }
    }
    all.extend(
        (0..end / 1_000)
            .map(|s| s * 1_000)
            .filter(|t| case.first_start.is_none_or(|f| *t >= f.at))
            .map(|t| (t, 10, t, What::Tick)),
    );
    all.sort_by_key(|(at, k, _, _)| (*at, *k));
    let pod_relists = all
        .iter()
        .filter(|(_, _, _, what)| matches!(what, What::List(Kind::Pod)))
        .map(|(at, ..)| *at)
        .collect();
    let mut svc = Service {
        base: Instant::now(),
        base_ms: world.base_ms,
        tracker: Tracker::new(settings()),
        stored: BTreeMap::new(),
        open: BTreeMap::new(),
        rests: BTreeMap::new(),
        watching: None,
        known: BTreeMap::new(),
        serving: Vec::new(),
        troubles: Vec::new(),
        rests_seen: Vec::new(),
        blurred: Vec::new(),
        merging: false,
        stored_at: BTreeMap::new(),
        resumed_at: i64::MIN,
        waiting: Vec::new(),
        expected: None,
    };
    if case.first_start.is_none() {
        // A first start before the cluster's first write: the store's history is there,
        // and empty.
        let stamp = svc.stamp(-5, Via::Listed);
        svc.tracker.merge_history(Stored::default(), stamp);
        svc.tracker.apply(cluster_settings(), stamp);
        let out = svc.tracker.mark_synced(stamp);
        svc.take(out, -5);
    }
    let mut down_until = i64::MIN;
    let mut history: Option<Snapshot> = None;
    for (at, _, t, what) in all {
        match what {
            What::Obs(obs, via) => {
                if via == Via::Resumed {
                    svc.resumed_at = at;
                }
                svc.note_serving(&obs, t);
                let key = KINDS
                    .iter()
                    .find(|k| **k as usize == kind_of(&obs))
                    .copied();
                if let Some(k) = key {
                    let name = key_of(&obs);
                    if is_gone(&obs) {
                        svc.known.remove(&(k, name));
                    } else {
                        svc.known.insert((k, name), (*obs).clone());
                        svc.revision_known(&obs);
                    }
                }
                trace(at, &format!("{via:?} {}", short(&obs)));
                let out = svc.tracker.apply(*obs, svc.stamp(at, via));
                for w in out.wakes.iter().map(|r| &r.wake) {
                    trace(
                        at,
                        &format!(
                            "  => {:?} {:?} {} ms {:?} {:?} start {}",
                            w.kind,
                            w.outcome,
                            w.duration_ms,
                            w.precision,
                            w.failure_reason,
                            w.requested_at
                        ),
                    );
                }
                svc.take(out, at);
            }
            What::List(kind) => {
                trace(at, &format!("relist {kind:?}"));
                svc.list(&world, Some(kind), at)
            }
            What::Tick if at >= down_until => {
                let out = svc.tracker.tick(svc.stamp(at, Via::Watched));
                svc.take(out, at);
            }
            What::Tick => {}
            What::Start => {
                trace(at, "first start");
                let stamp = svc.stamp(at, Via::Listed);
                let out = svc.tracker.merge_history(Stored::default(), stamp);
                svc.take_merged(out, at);
                svc.tracker.apply(cluster_settings(), stamp);
            }
            What::Down(kind) => {
                trace(at, &format!("watch of {kind:?} down"));
                svc.tracker
                    .watch_down(kind_name(kind), svc.stamp(at, Via::Watched));
            }
            What::Back(kind) => {
                trace(at, &format!("watch of {kind:?} back"));
                let out = svc
                    .tracker
                    .watch_back(kind_name(kind), svc.stamp(at, Via::Watched));
                svc.take(out, at);
            }
            What::Synced => {
                trace(at, "every kind listed");
                let out = svc.tracker.mark_synced(svc.stamp(at, Via::Listed));
                svc.take(out, at);
            }
            What::History => {
                if let Some(h) = history.take() {
                    trace(at, "history arrives");
                    let out = svc
                        .tracker
                        .merge_history(h.stored(), svc.stamp(at, Via::Listed));
                    trace(
                        at,
                        &format!(
                            "  => merged: {} new, retracted {:?}, open {:?}",
                            out.wakes.len(),
                            out.retracted,
                            out.open
                        ),
                    );
                    svc.take_merged(out, at);
                }
            }
            What::Restart { late, mid } => {
                // The store answers before the service restarts again. Were it down across
                // both lifetimes, the end of a wake underway at the first restart would be
                // known only to the first lifetime's memory (docs/outages.md, "Limits, as measured").
                if let Some(h) = history.take() {
                    trace(at, "history arrives, just before the next restart");
                    let out = svc
                        .tracker
                        .merge_history(h.stored(), svc.stamp(at, Via::Listed));
                    svc.take_merged(out, at);
                }
                trace(at, "restart");
                down_until = at;
                svc.tracker = Tracker::new(settings());
                svc.known.clear();
                svc.waiting.clear();
                let held_then = Snapshot {
                    wakes: svc.stored.values().cloned().collect(),
                    open: svc.open.values().flatten().cloned().collect(),
                    rests: svc.rests.values().cloned().collect(),
                    watching: svc.watching,
                };
                history = None;
                if late {
                    // What the store held at the restart, as it reads it later.
                    history = Some(held_then.clone());
                } else if mid.is_none() {
                    let out = svc
                        .tracker
                        .merge_history(held_then.stored(), svc.stamp(at, Via::Listed));
                    svc.take_merged(out, at);
                }
                svc.tracker
                    .apply(cluster_settings(), svc.stamp(at, Via::Listed));
                match mid {
                    None => svc.list(&world, None, at),
                    // Each kind lists on its own watch; the store answers in between.
                    Some(listed) => {
                        for (i, kind) in KINDS.into_iter().enumerate() {
                            if i == listed {
                                trace(at, "history arrives while the lists come in");
                                let out = svc
                                    .tracker
                                    .merge_history(held_then.stored(), svc.stamp(at, Via::Listed));
                                svc.take_merged(out, at);
                            }
                            svc.list(&world, Some(kind), at);
                        }
                    }
                }
                let out = svc.tracker.mark_synced(svc.stamp(at, Via::Listed));
                svc.take(out, at);
            }
        }
        // While a late history is still to come, the tracker cannot know the rows the
        // store holds; they stay for the next process until the history reconciles them.
        if history.is_none() {
            svc.check_open(at);
        }
    }
    let mut stored: Vec<WakeRecord> = svc.stored.into_values().collect();
    stored.sort_by_key(|w| w.requested_at);
    Ran {
        world,
        stored,
        expected: svc.expected,
        pod_relists,
        serving: svc.serving,
        troubles: svc.troubles,
        rests: svc.rests_seen,
        blurred: svc.blurred,
        synced: started,
    }
}

/// What the store held when a process restarted.
#[derive(Clone)]
struct Snapshot {
    wakes: Vec<WakeRecord>,
    open: Vec<OpenWake>,
    rests: Vec<Rest>,
    watching: Option<DateTime<Utc>>,
}

impl Snapshot {
    /// The store's rows as the tracker takes them.
    fn stored(&self) -> Stored<'_> {
        Stored {
            wakes: &self.wakes,
            open: &self.open,
            rests: &self.rests,
            watching_since: self.watching,
        }
    }
}

fn trace(at: i64, what: &str) {
    if std::env::var_os("ORDERINGS_TRACE").is_some() {
        eprintln!("{at:>7} {what}");
    }
}

fn short(o: &Observation) -> String {
    match o {
        Observation::Deployment { dep, .. } => {
            format!("dep replicas {} gen {}", dep.replicas, dep.generation)
        }
        Observation::Autoscaler { pa, .. } => format!(
            "pa desired {:?} actual {:?} active {:?}",
            pa.desired,
            pa.actual,
            pa.active.as_ref().map(|c| (
                c.status,
                c.reason.clone(),
                c.since.map(|s| s.timestamp() % 1000)
            ))
        ),
        Observation::Pod { pod, .. } => format!(
            "pod {} created {} deleting {:?} sched {:?} {:?} ready {:?}",
            pod.name,
            pod.created.timestamp() % 1000,
            pod.deleting.map(|d| d.timestamp() - 1_800_000_000),
            pod.scheduled.as_ref().map(|c| c.status),
            pod.container,
            pod.ready
                .as_ref()
                .map(|c| (c.status, c.since.map(|s| s.timestamp() % 1000)))
        ),
        other => format!("{other:?}").chars().take(100).collect(),
    }
}

fn kind_of(o: &Observation) -> usize {
    match o {
        Observation::Service(_) | Observation::ServiceGone { .. } => Kind::Service as usize,
        Observation::Revision(_) | Observation::RevisionGone { .. } => Kind::Revision as usize,
        Observation::Autoscaler { .. } => Kind::Autoscaler as usize,
        Observation::Deployment { .. } => Kind::Deployment as usize,
        Observation::Pod { .. } | Observation::PodGone { .. } => Kind::Pod as usize,
        Observation::ConfigMap { .. } => usize::MAX,
    }
}

fn key_of(o: &Observation) -> String {
    match o {
        Observation::Service(s) => s.name.clone(),
        Observation::ServiceGone { name, .. } => name.clone(),
        Observation::Revision(r) => r.uid.clone(),
        Observation::RevisionGone { uid } => uid.clone(),
        Observation::Autoscaler { revision_uid, .. }
        | Observation::Deployment { revision_uid, .. } => revision_uid.clone(),
        Observation::Pod { pod, .. } => pod.name.clone(),
        Observation::PodGone { name, .. } => name.clone(),
        Observation::ConfigMap { name, .. } => name.clone(),
    }
}

fn is_gone(o: &Observation) -> bool {
    matches!(
        o,
        Observation::ServiceGone { .. }
            | Observation::RevisionGone { .. }
            | Observation::PodGone { .. }
    )
}
