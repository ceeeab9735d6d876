//! What the tracker's revisions add up to for the read side: each release's facts (the
//! book's entries, recomputed only for releases an observation touched, and handed on
//! only when their fingerprint changed) and its cold-start report.

use chrono::{DateTime, Utc};

use super::across::Across;
use super::{Changes, Rev, Tracker};
use crate::measure::facts::ReleaseFacts;
use crate::measure::observe::ServiceKey;
use crate::measure::stats::RevisionStats;
use scaling_facts_api::{ActiveRevision, ColdStarts, RuntimePresence, Scaling, WakeProgress};

impl Tracker {
    /// Facts of releases that changed since the last call, cold-start reports to replace,
    /// and releases that are gone.
    pub fn changed(&mut self, now: DateTime<Utc>) -> Changes {
        let dirty = std::mem::take(&mut self.dirty);
        // Sized to what may change: a `Vec` of these grown from empty asks for four.
        let mut facts = Vec::with_capacity(dirty.len());
        for key in dirty {
            let Some(f) = self.facts_of(&key, now) else {
                continue;
            };
            let hash = f.fingerprint();
            let changed = match self.last_facts.get_mut(&f.release) {
                Some(last) => std::mem::replace(last, hash) != hash,
                None => {
                    self.last_facts.insert(f.release.clone(), hash);
                    true
                }
            };
            if changed {
                facts.push(f);
            }
        }
        Changes {
            facts,
            reports: std::mem::take(&mut self.dirty_reports)
                .into_iter()
                .collect(),
            removed: std::mem::take(&mut self.removed),
            services_gone: std::mem::take(&mut self.services_gone),
            refused: self.owners.take_changed().then(|| self.owners.refused()),
        }
    }

    /// The releases `release` declares it calls: its owning Service's declaration.
    pub fn declared_dependencies(&self, release: &str) -> &[String] {
        self.owners
            .owner(release)
            .and_then(|k| self.services.get(k))
            .map_or(&[], |s| s.depends_on.as_slice())
    }

    fn revisions_of<'a>(
        &'a self,
        key: &'a ServiceKey,
    ) -> impl Iterator<Item = (&'a str, &'a Rev)> + 'a {
        self.by_service
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|uid| self.revisions.get_key_value(uid).map(|(u, r)| (&**u, &**r)))
    }

    /// The active revisions: traffic targets with percent > 0, else the newest revision.
    fn active_of<'a>(&'a self, key: &'a ServiceKey) -> Vec<(&'a str, u32)> {
        let svc = &self.services[key];
        if !svc.traffic.is_empty() {
            return svc.traffic.iter().map(|(n, p)| (n.as_str(), *p)).collect();
        }
        self.revisions_of(key)
            .max_by_key(|(_, r)| r.machine.created())
            .map(|(_, r)| vec![(&*r.name, 100)])
            .unwrap_or_default()
    }

    fn facts_of(&self, key: &ServiceKey, now: DateTime<Utc>) -> Option<ReleaseFacts> {
        if !self.owners.owns(key) {
            return None;
        }
        let svc = self.services.get(key)?;
        let mut f = ReleaseFacts::idle(&svc.release, &svc.namespace, &svc.name, now);
        // Shared with the snapshot: deriving facts copies no annotation.
        if let Some(t) = &svc.template {
            f.template = t.clone();
        }
        let active = self.active_of(key);
        f.active_revisions = active
            .iter()
            .map(|(name, percent)| ActiveRevision {
                name: (*name).to_owned(),
                percent: *percent,
            })
            .collect();
        // Among the service's own revisions, by name: no key to build per lookup. One pass,
        // with nothing allocated: this runs after nearly every event.
        let mut acc: Option<Across> = None;
        for (name, _) in &active {
            let Some((_, r)) = self.revisions_of(key).find(|(_, r)| *r.name == **name) else {
                continue;
            };
            let (k, s) = (self.knobs(r), r.machine.summary());
            let expected = r.stats.as_ref().and_then(|st| st.expected_ms());
            match acc.as_mut() {
                None => acc = Some(Across::first(k, s, expected)),
                Some(a) => a.add(k, s, expected),
            }
        }
        let Some(a) = acc else {
            return Some(f);
        };
        f.scaling = Scaling {
            min_instances: a.min_instances,
            idle_timeout_seconds: a.idle as f64,
            expected_cold_start_seconds: a.expected_ms.map(|ms| ms as f64 / 1000.0),
            serving_since: a.serving_since,
        };
        f.idle_timeout_upper_bound_seconds = a.upper as f64;
        f.idle_window_parts = a.parts;
        let (desired_replicas, actual_replicas) = (a.desired, a.actual);
        let (state, lead) = a.lead();
        f.state = state;
        f.presence = RuntimePresence {
            phase: lead.phase,
            desired_replicas,
            actual_replicas,
            wake: lead.wake.map(|(requested_at, deadline_at)| WakeProgress {
                requested_at,
                deadline_at,
                elapsed_ms: 0,
            }),
            failure: lead.failure,
        };
        Some(f)
    }

    /// The cold-start report of a Service's release; None when it is gone or does not own
    /// its release key.
    pub fn report(&self, key: &ServiceKey) -> Option<ColdStarts> {
        if !self.owners.owns(key) {
            return None;
        }
        let svc = self.services.get(key)?;
        let active = self.active_of(key);
        let mut revisions: Vec<_> = self
            .revisions_of(key)
            .map(|(uid, r)| {
                let is_active = active.iter().any(|(n, _)| **n == *r.name);
                match &r.stats {
                    Some(stats) => stats.report(&r.name, uid, is_active),
                    None => RevisionStats::default().report(&r.name, uid, is_active),
                }
            })
            .collect();
        revisions.sort_by(|a, b| b.revision.cmp(&a.revision));
        Some(ColdStarts {
            release: svc.release.clone(),
            revisions,
        })
    }
}
