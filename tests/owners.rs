//! A release key claimed twice: a Knative Service in another namespace carrying a
//! release-UID label that is already taken must not speak for that release, nor remove it.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use scaling_facts::measure::observe::{Observation, RevisionSnap, ServiceSnap, Stamp, Via};
use scaling_facts::measure::tracker::{Tracker, TrackerSettings};

fn t(s: i64) -> chrono::DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + s, 0).unwrap()
}

fn service(t: &mut Tracker, ns: &str, name: &str, created: i64) {
    t.apply(
        Observation::Service(ServiceSnap {
            namespace: ns.into(),
            name: name.into(),
            uid: format!("{ns}-{name}"),
            release: "rel-1".into(),
            created: Some(self::t(created)),
            traffic: vec![(format!("{name}-00001"), 100)],
            depends_on: Vec::new(),
            template: Default::default(),
        }),
        Stamp::now(Via::Watched),
    );
    let annotations = BTreeMap::from([(
        "autoscaling.knative.dev/min-scale".to_owned(),
        if ns == "prod" { "0" } else { "3" }.to_owned(),
    )]);
    t.apply(
        Observation::Revision(RevisionSnap {
            uid: format!("{ns}-{name}-00001"),
            name: format!("{name}-00001"),
            namespace: ns.into(),
            service: name.into(),
            created: self::t(created),
            annotations,
            reachable: true,
        }),
        Stamp::now(Via::Watched),
    );
}

fn gone(t: &mut Tracker, ns: &str, name: &str) {
    t.apply(
        Observation::ServiceGone {
            namespace: ns.into(),
            name: name.into(),
        },
        Stamp::now(Via::Watched),
    );
}

#[test]
fn a_second_claim_on_a_release_key_is_refused_and_cannot_remove_it() {
    let mut tr = Tracker::new(TrackerSettings::default());
    service(&mut tr, "prod", "shop", 0);
    tr.mark_synced(Stamp::now(Via::Listed));
    let first = tr.changed(Utc::now());
    assert_eq!(first.facts.len(), 1);
    assert_eq!(first.facts[0].scaling.min_instances, 0);

    // Another namespace's Service, created later, claims the same key with min-scale 3.
    service(&mut tr, "sandbox", "shop-copy", 60);
    let second = tr.changed(Utc::now());
    assert!(
        second.facts.iter().all(|f| f.scaling.min_instances == 0),
        "the claimant's facts were served for the release: {:?}",
        second.facts
    );
    let refused = second.refused.expect("the refused claims changed");
    assert_eq!(refused.len(), 1);
    assert_eq!(&*refused[0].claimant.namespace, "sandbox");
    assert_eq!(&*refused[0].owner.namespace, "prod");

    // Deleting the claimant leaves the release alone.
    gone(&mut tr, "sandbox", "shop-copy");
    let third = tr.changed(Utc::now());
    assert!(third.removed.is_empty(), "{:?}", third.removed);
    assert_eq!(third.refused.map(|r| r.len()), Some(0));

    // Back again; when the owner goes, the claimant takes the key, and only then.
    service(&mut tr, "sandbox", "shop-copy", 60);
    tr.changed(Utc::now());
    gone(&mut tr, "prod", "shop");
    let fourth = tr.changed(Utc::now());
    assert!(fourth.removed.is_empty());
    assert_eq!(fourth.facts.len(), 1);
    assert_eq!(fourth.facts[0].scaling.min_instances, 3);
    assert_eq!(fourth.facts[0].namespace, "sandbox");
    gone(&mut tr, "sandbox", "shop-copy");
    assert_eq!(tr.changed(Utc::now()).removed, vec!["rel-1".to_owned()]);
}
