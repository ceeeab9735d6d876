//! Behaviour of the facts book: precomputed reads, change broadcast, clock-dependent fields.

use super::*;
use crate::measure::facts::*;
use chrono::TimeZone;
use scaling_facts_api::{Phase, RuntimeState, Scaling, WakeProgress};

fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
}

fn waking(expected: Option<f64>) -> ReleaseFacts {
    let mut f = ReleaseFacts::idle("shop.prod", "prod", "shop", t(0));
    f.state = RuntimeState::Waking;
    f.scaling.expected_cold_start_seconds = expected;
    f.presence.phase = Phase::PullingImage;
    f.presence.desired_replicas = 1;
    f.presence.wake = Some(WakeProgress {
        requested_at: t(10),
        deadline_at: t(640),
        elapsed_ms: 0,
    });
    f
}

fn live(at: DateTime<Utc>) -> WatchView {
    WatchView {
        connected: true,
        last_heard: Some(at),
        stale_after: Duration::from_secs(90),
    }
}

#[test]
fn scaling_bytes_are_the_serialized_object() {
    let book = FactsBook::new(Duration::from_secs(90));
    book.upsert(waking(Some(4.5)));
    let bytes = book.scaling_json("shop.prod").unwrap();
    let back: Scaling = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(back.expected_cold_start_seconds, Some(4.5));
    assert!(book.scaling_json("other.prod").is_none());
}

#[test]
fn retry_after_is_remaining_expected_start_never_below_100() {
    let f = waking(Some(4.0));
    let r = f.runtime_at(t(11), live(t(11)));
    assert_eq!(r.runtime_presence.wake.as_ref().unwrap().elapsed_ms, 1_000);
    assert_eq!(r.retry_after_ms, Some(3_000));
    let late = f.runtime_at(t(30), live(t(30)));
    assert_eq!(late.retry_after_ms, Some(MIN_RETRY_AFTER_MS));
    let unmeasured = waking(None).runtime_at(t(11), live(t(11)));
    assert_eq!(unmeasured.retry_after_ms, Some(UNMEASURED_RETRY_AFTER_MS));
}

#[test]
fn no_retry_hint_unless_waking() {
    let mut f = waking(Some(4.0));
    f.state = RuntimeState::Ready;
    assert_eq!(f.runtime_at(t(11), live(t(11))).retry_after_ms, None);
}

#[test]
fn stale_when_disconnected_or_silent() {
    let f = waking(Some(4.0));
    let mut w = live(t(0));
    assert!(!f.runtime_at(t(60), w).stale);
    assert!(f.runtime_at(t(200), w).stale);
    w.connected = false;
    assert!(f.runtime_at(t(1), w).stale);
    let never = WatchView {
        connected: false,
        last_heard: None,
        stale_after: Duration::from_secs(90),
    };
    assert!(f.runtime_at(t(1), never).stale);
}

#[tokio::test]
async fn every_change_is_broadcast_in_order() {
    let book = FactsBook::new(Duration::from_secs(90));
    let mut rx = book.subscribe();
    book.upsert(waking(Some(4.0)));
    let mut ready = waking(Some(4.0));
    ready.state = RuntimeState::Ready;
    book.upsert(ready);
    book.remove("shop.prod");
    let a = rx.recv().await.unwrap();
    let b = rx.recv().await.unwrap();
    let c = rx.recv().await.unwrap();
    assert_eq!((a.seq, b.seq, c.seq), (1, 2, 3));
    assert_eq!(b.facts.as_ref().unwrap().state, RuntimeState::Ready);
    assert!(c.facts.is_none());
    assert!(rx.try_recv().is_err());
}

#[test]
fn cold_starts_survive_fact_updates() {
    let book = FactsBook::new(Duration::from_secs(90));
    assert!(!book.set_cold_starts(&ColdStarts {
        release: "shop.prod".into(),
        revisions: vec![],
    }));
    book.upsert(waking(None));
    let read = |book: &FactsBook| -> ColdStarts {
        serde_json::from_slice(&book.get("shop.prod").unwrap().cold_starts_json).unwrap()
    };
    assert_eq!(
        read(&book).revisions,
        vec![],
        "a new release's report is empty"
    );
    let report = ColdStarts {
        release: "shop.prod".into(),
        revisions: vec![crate::measure::stats::RevisionStats::default().report(
            "shop-00001",
            "u1",
            true,
        )],
    };
    assert!(book.set_cold_starts(&report));
    book.upsert(waking(Some(2.0)));
    assert_eq!(read(&book), report);
}

#[test]
fn watch_view_tracks_latest_heard() {
    let book = FactsBook::new(Duration::from_secs(90));
    assert!(!book.watch().connected);
    book.watch_heard(t(5));
    book.watch_heard(t(3));
    assert_eq!(book.watch().last_heard, Some(t(5)));
    book.watch_lost();
    assert!(!book.watch().connected);
}

#[test]
fn a_release_channel_carries_its_changes_only_and_is_dropped_when_unheld() {
    let book = FactsBook::new(Duration::from_secs(90));
    let mut shop = book.subscribe_release("shop.prod");
    let mut fleet = book.subscribe();
    book.upsert(ReleaseFacts::idle("cart.prod", "prod", "cart", t(0)));
    book.upsert(waking(None));
    let change = shop.try_recv().expect("its own change");
    assert_eq!(change.release, "shop.prod");
    assert!(shop.try_recv().is_err(), "nothing of another release");
    assert_eq!(fleet.try_recv().unwrap().release, "cart.prod");
    assert!(
        Arc::ptr_eq(&fleet.try_recv().unwrap(), &change),
        "one change, shared by both channels"
    );

    // The last subscriber left: the next change drops the channel.
    drop(shop);
    assert_eq!(book.release_channels(), 1);
    book.upsert(ReleaseFacts::idle("shop.prod", "prod", "shop", t(1)));
    assert_eq!(book.release_channels(), 0);

    // A subscription not kept (an unknown release) leaves nothing behind.
    let nope = book.subscribe_release("nope.prod");
    drop(nope);
    book.unsubscribe_release("nope.prod");
    assert_eq!(book.release_channels(), 0);

    // A removal reaches the subscribers, then their channel closes.
    let mut shop = book.subscribe_release("shop.prod");
    book.remove("shop.prod");
    assert!(shop.try_recv().unwrap().facts.is_none());
    assert!(matches!(
        shop.try_recv(),
        Err(broadcast::error::TryRecvError::Closed)
    ));
}
