//! Who writes. One replica alone, or, with a Lease ([`crate::watch::lease`]), whichever
//! replica holds it: the writer stores wakes and replays its spool, the applier applies
//! configs, dependencies are woken and old wakes pruned only while [`Leadership::leading`].
//! Every replica measures and serves either way.
//!
//! Leading is judged on this replica's monotonic clock at each use, not only when the
//! elector reports: a holder that can no longer renew stops at its renew deadline even
//! while its elector is still waiting on the API server.

use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::watch::lease::Standing;
use scaling_facts_api::ReplicaRole;

/// Whether this replica may write now; cheap to clone and to ask.
#[derive(Debug, Clone)]
pub struct Leadership {
    /// None: a single replica, always leading.
    standing: Option<watch::Receiver<Standing>>,
}

impl Leadership {
    pub fn single() -> Self {
        Self { standing: None }
    }

    pub fn by_lease(standing: watch::Receiver<Standing>) -> Self {
        Self {
            standing: Some(standing),
        }
    }

    /// More than one replica may run: statistics come from the store.
    pub fn replicated(&self) -> bool {
        self.standing.is_some()
    }

    pub fn leading(&self) -> bool {
        self.standing
            .as_ref()
            .is_none_or(|s| s.borrow().leading(Instant::now()))
    }

    /// The role `/health` and the metrics show.
    pub fn role(&self) -> ReplicaRole {
        match &self.standing {
            None => ReplicaRole::Single,
            Some(_) if self.leading() => ReplicaRole::Leader,
            Some(_) => ReplicaRole::Follower,
        }
    }

    /// How long ago the last renewal that succeeded was sent, while this replica leads.
    pub fn renewed_age(&self) -> Option<Duration> {
        match *self.standing.as_ref()?.borrow() {
            Standing::Leading { renewed, until } if Instant::now() < until => {
                Some(renewed.elapsed())
            }
            _ => None,
        }
    }

    /// Who holds the Lease, as last seen, when another does.
    pub fn holder(&self) -> Option<String> {
        match &*self.standing.as_ref()?.borrow() {
            Standing::Following { holder, .. } => holder.clone(),
            _ => None,
        }
    }

    /// Returns once this replica leads (at once without a Lease); false on shutdown.
    pub async fn until_leading(&self, shutdown: &CancellationToken) -> bool {
        let Some(standing) = &self.standing else {
            return true;
        };
        let mut standing = standing.clone();
        loop {
            if standing.borrow_and_update().leading(Instant::now()) {
                return true;
            }
            tokio::select! {
                changed = standing.changed() => if changed.is_err() { return false },
                () = shutdown.cancelled() => return false,
            }
        }
    }

    /// Returns when this replica stops leading by the elector's word or its deadline;
    /// never without a Lease.
    pub async fn until_not_leading(&self) {
        let Some(standing) = &self.standing else {
            return std::future::pending().await;
        };
        let mut standing = standing.clone();
        loop {
            let until = match *standing.borrow_and_update() {
                Standing::Leading { until, .. } if Instant::now() < until => until,
                _ => return,
            };
            tokio::select! {
                changed = standing.changed() => if changed.is_err() { return },
                () = tokio::time::sleep_until(until.into()) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_holder_stops_leading_at_its_deadline_without_a_word() {
        let now = Instant::now();
        let (tx, rx) = watch::channel(Standing::Leading {
            renewed: now,
            until: now + Duration::from_millis(50),
        });
        let lead = Leadership::by_lease(rx);
        assert_eq!(lead.role(), ReplicaRole::Leader);
        let stopped = tokio::spawn({
            let lead = lead.clone();
            async move {
                lead.until_not_leading().await;
                Instant::now()
            }
        });
        let stopped = stopped.await.unwrap();
        assert!(stopped >= now + Duration::from_millis(50));
        assert_eq!(lead.role(), ReplicaRole::Follower);
        assert!(Leadership::single().leading());
        drop(tx);
    }
}
