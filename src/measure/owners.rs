//! Who owns each release key.
//!
//! A release key is a Service's release-UID label, else `<name>.<namespace>`. Labels are
//! written by people, so two Services can carry the same one; without an owner, whichever
//! was seen last would speak for the release, and deleting either would remove it. The
//! owner is the claimant created first (ties broken by namespace and name), an order every
//! replica and every restart derives alike from the objects. The others are refused: their
//! facts are not served under the key, their wakes are recorded under their own
//! `<name>.<namespace>`, and they are listed so an operator can fix the label. When the
//! owner goes, the next claimant in that order takes the key.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use super::observe::ServiceKey;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Claim {
    // Field order is the ownership order: created first, then namespace, then name. A
    // Service whose creation time is unknown sorts after every known one.
    unknown_created: bool,
    created: Option<DateTime<Utc>>,
    key: ServiceKey,
}

/// A Service refused a release key another Service owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub claimant: ServiceKey,
    pub release: String,
    pub owner: ServiceKey,
}

/// The claims on every release key.
#[derive(Debug, Default)]
pub struct Owners {
    /// Claims per release, in ownership order: the first owns.
    by_release: HashMap<String, Vec<Claim>, foldhash::fast::RandomState>,
    /// The release each Service claims.
    by_service: HashMap<ServiceKey, String, foldhash::fast::RandomState>,
    /// The refused claims changed since [`Owners::take_changed`]: only a release claimed
    /// twice, before or after a change, has any, so only touching one of those sets it.
    changed: bool,
}

impl Owners {
    /// `key` claims `release`, withdrawing whatever it claimed before. Returns the Services
    /// whose standing changed (they own now, or no longer), `key` among them.
    pub fn claim(
        &mut self,
        key: &ServiceKey,
        release: &str,
        created: Option<DateTime<Utc>>,
    ) -> Vec<ServiceKey> {
        let mut changed = self.withdraw(key);
        let claims = self.by_release.entry(release.to_owned()).or_default();
        let before = claims.first().map(|c| c.key.clone());
        let claim = Claim {
            unknown_created: created.is_none(),
            created,
            key: key.clone(),
        };
        let at = claims.binary_search(&claim).unwrap_or_else(|i| i);
        // Almost every release has one claimant: no room for more until a second comes.
        claims.reserve_exact(1);
        claims.insert(at, claim);
        self.changed |= claims.len() > 1;
        let after = claims.first().map(|c| c.key.clone());
        if before != after {
            changed.extend(before);
        }
        changed.push(key.clone());
        self.by_service.insert(key.clone(), release.to_owned());
        changed
    }

    /// `key` is gone. Returns the release it owned, if it owned one, and the Service that
    /// owns that release now, if any.
    pub fn remove(&mut self, key: &ServiceKey) -> Option<(String, Option<ServiceKey>)> {
        let release = self.by_service.get(key)?.clone();
        let owned = self.owns(key);
        self.withdraw(key);
        owned.then(|| {
            let next = self.owner(&release).cloned();
            (release, next)
        })
    }

    /// Withdraws `key`'s claim; returns the Service that took over a key it owned.
    fn withdraw(&mut self, key: &ServiceKey) -> Vec<ServiceKey> {
        let Some(release) = self.by_service.remove(key) else {
            return Vec::new();
        };
        let Some(claims) = self.by_release.get_mut(&release) else {
            return Vec::new();
        };
        let owned = claims.first().is_some_and(|c| &c.key == key);
        self.changed |= claims.len() > 1;
        claims.retain(|c| &c.key != key);
        let next = claims.first().map(|c| c.key.clone());
        if claims.is_empty() {
            self.by_release.remove(&release);
        }
        if owned {
            next.into_iter().collect()
        } else {
            Vec::new()
        }
    }

    /// Whether [`Owners::refused`] changed since the last call.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    pub fn owner(&self, release: &str) -> Option<&ServiceKey> {
        self.by_release.get(release)?.first().map(|c| &c.key)
    }

    /// Whether `key` owns the release it claims (a Service not seen yet owns nothing).
    pub fn owns(&self, key: &ServiceKey) -> bool {
        self.by_service
            .get(key)
            .and_then(|r| self.owner(r))
            .is_some_and(|o| o == key)
    }

    /// Every refused claim, sorted by release and claimant.
    pub fn refused(&self) -> Vec<Refused> {
        let mut out: Vec<Refused> = self
            .by_release
            .iter()
            .flat_map(|(release, claims)| {
                let owner = &claims[0].key;
                claims[1..].iter().map(move |c| Refused {
                    claimant: c.key.clone(),
                    release: release.clone(),
                    owner: owner.clone(),
                })
            })
            .collect();
        out.sort_by(|a, b| (&a.release, &a.claimant).cmp(&(&b.release, &b.claimant)));
        out
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(s: i64) -> Option<DateTime<Utc>> {
        Some(Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap())
    }

    #[test]
    fn the_first_created_keeps_the_key_and_only_its_deletion_frees_it() {
        let mut o = Owners::default();
        let shop = ServiceKey::new("prod", "shop");
        let intruder = ServiceKey::new("other", "shop");
        o.claim(&shop, "rel-1", at(0));
        // Created later, seen later: refused.
        let changed = o.claim(&intruder, "rel-1", at(50));
        assert_eq!(changed, vec![intruder.clone()]);
        assert!(o.owns(&shop) && !o.owns(&intruder));
        assert!(o.take_changed());
        assert_eq!(o.refused().len(), 1);
        // Its deletion changes nothing for the owner.
        assert_eq!(o.remove(&intruder), None);
        assert!(o.owns(&shop));
        assert!(o.take_changed());
        assert!(o.refused().is_empty());
        // A key claimed once changes no refusal: nothing to recompute.
        o.claim(&ServiceKey::new("prod", "cart"), "rel-2", at(0));
        assert!(!o.take_changed());
        // Back again; then the owner goes, and the claimant takes the key.
        o.claim(&intruder, "rel-1", at(50));
        assert_eq!(
            o.remove(&shop),
            Some(("rel-1".to_owned(), Some(intruder.clone())))
        );
        assert!(o.owns(&intruder));
    }

    #[test]
    fn ownership_is_by_creation_whatever_the_order_seen() {
        let (a, b) = (ServiceKey::new("a", "svc"), ServiceKey::new("b", "svc"));
        let mut seen_late = Owners::default();
        seen_late.claim(&b, "rel", at(10));
        let changed = seen_late.claim(&a, "rel", at(5));
        assert!(changed.contains(&b) && changed.contains(&a), "{changed:?}");
        assert!(seen_late.owns(&a));
        // A label edit moves a Service to another key and frees the first.
        let changed = seen_late.claim(&a, "rel-2", at(5));
        assert!(changed.contains(&b));
        assert!(seen_late.owns(&b) && seen_late.owns(&a));
        assert!(seen_late.refused().is_empty());
    }
}
