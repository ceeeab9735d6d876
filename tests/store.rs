//! The store on both backends: every test here runs on SQLite and on PostgreSQL.

mod common;

use common::t;
use scaling_facts::store::Store;
use scaling_facts::store::config::DesiredConfig;
use scaling_facts::store::releases::{ReleaseRow, RevisionRow};
use scaling_facts_api::{Outcome, PhaseDurations, Precision, WakeKind, WakeRecord};

fn wake(rev_uid: &str, at: i64, outcome: Outcome) -> WakeRecord {
    let requested_at = t(at) + chrono::Duration::milliseconds(250);
    WakeRecord {
        release: "shop.prod".into(),
        revision: "shop-00001".into(),
        revision_uid: rev_uid.into(),
        kind: WakeKind::Wake,
        outcome,
        requested_at,
        start_second: requested_at.timestamp(),
        serving_at: (outcome == Outcome::Served)
            .then(|| requested_at + chrono::Duration::milliseconds(4_321)),
        duration_ms: 4_321,
        phases: PhaseDurations {
            provisioning_ms: Some(120),
            pulling_image_ms: Some(3_000),
            starting_ms: (outcome == Outcome::Served).then_some(1_201),
        },
        precision: Precision::Ms,
        failure_reason: (outcome == Outcome::Failed).then(|| "ImagePullBackOff".into()),
        failure_message: (outcome == Outcome::Failed).then(|| "Back-off pulling image".into()),
        caused_by: None,
    }
}

on_both_backends!(migrations_are_idempotent, async |store: Store| {
    store.migrate().await.expect("second run changes nothing");
    store.ping().await.unwrap();
});

on_both_backends!(a_wake_is_recorded_once, async |store: Store| {
    let w = wake("uid-1", 10, Outcome::Served);
    assert!(store.record_wake(&w, t(20)).await.unwrap());
    // Same revision, same start second, other details: the first record stands.
    let mut again = w.clone();
    again.requested_at = t(10) + chrono::Duration::milliseconds(900);
    again.start_second = t(10).timestamp();
    again.duration_ms = 9_999;
    again.precision = Precision::S;
    assert!(!store.record_wake(&again, t(21)).await.unwrap());
    // Another second, or another revision, is another wake.
    assert!(
        store
            .record_wake(&wake("uid-1", 11, Outcome::Aborted), t(22))
            .await
            .unwrap()
    );
    assert!(
        store
            .record_wake(&wake("uid-2", 10, Outcome::Failed), t(22))
            .await
            .unwrap()
    );

    assert_eq!(store.count_wakes("uid-1").await.unwrap(), 2);
    let recent = store.recent_wakes("uid-1", 10).await.unwrap();
    assert_eq!(recent.len(), 2);
    assert_eq!(recent[0].outcome, Outcome::Aborted, "newest first");
    assert_eq!(recent[1], w, "every field round-trips");
    let failed = &store.recent_wakes("uid-2", 10).await.unwrap()[0];
    assert_eq!(failed.failure_reason.as_deref(), Some("ImagePullBackOff"));
    assert_eq!(failed.serving_at, None);
    assert_eq!(failed.phases.starting_ms, None);

    let since = store.wakes_since(t(11)).await.unwrap();
    assert_eq!(since.len(), 1);
    assert_eq!(store.wakes_since(t(0)).await.unwrap().len(), 3);
});

on_both_backends!(
    a_wake_another_replica_stored_is_not_stored_again,
    async |store: Store| {
        let w = wake("uid-1", 10, Outcome::Served);
        assert!(store.record_wake_once(&w, t(20)).await.unwrap());
        // The same wake as another replica measured it: its arrivals 3 ms later, across a
        // second's edge, so another start second.
        let mut other = w.clone();
        other.requested_at = t(10) + chrono::Duration::milliseconds(1_003);
        other.start_second = other.requested_at.timestamp();
        other.serving_at = w.serving_at.map(|s| s + chrono::Duration::milliseconds(2));
        assert!(!store.record_wake_once(&other, t(21)).await.unwrap());
        // Found from timestamps, to the second, dated by its first pod a second later:
        // the same wake.
        let mut coarse = w.clone();
        coarse.precision = Precision::S;
        coarse.requested_at = t(11);
        coarse.start_second = t(11).timestamp();
        assert!(!store.record_wake_once(&coarse, t(21)).await.unwrap());
        // The next wake, 5 ms after this one served: another wake, however long a record
        // of this one says it lasted.
        let mut next = w.clone();
        next.requested_at = w.serving_at.unwrap() + chrono::Duration::milliseconds(5);
        next.start_second = next.requested_at.timestamp();
        next.serving_at = Some(next.requested_at + chrono::Duration::seconds(1));
        assert!(store.record_wake_once(&next, t(22)).await.unwrap());
        // A short wake found from timestamps two seconds after the last one's request, as
        // a restarted writer finds it: its end is far from the last one's, another wake.
        let mut quick = w.clone();
        quick.revision_uid = "uid-4".into();
        quick.serving_at = Some(quick.requested_at + chrono::Duration::milliseconds(200));
        quick.duration_ms = 200;
        assert!(store.record_wake_once(&quick, t(22)).await.unwrap());
        let mut found = quick.clone();
        found.precision = Precision::S;
        found.requested_at = t(12);
        found.start_second = t(12).timestamp();
        found.serving_at = Some(t(14));
        found.duration_ms = 2_000;
        assert!(store.record_wake_once(&found, t(22)).await.unwrap());
        // Another kind at the same moment (an initial start is not a wake): its own record.
        let mut initial = wake("uid-3", 10, Outcome::Served);
        assert!(store.record_wake_once(&initial, t(22)).await.unwrap());
        initial.kind = scaling_facts_api::WakeKind::Initial;
        initial.start_second += 1;
        assert!(store.record_wake_once(&initial, t(22)).await.unwrap());
        assert_eq!(store.count_wakes("uid-3").await.unwrap(), 2);
        // Another revision at the same time: another wake.
        assert!(
            store
                .record_wake_once(&wake("uid-2", 10, Outcome::Failed), t(22))
                .await
                .unwrap()
        );
        assert_eq!(store.count_wakes("uid-1").await.unwrap(), 2);
    }
);

on_both_backends!(
    stored_wakes_are_followed_in_order_once,
    async |store: Store| {
        assert_eq!(store.last_wake_id().await.unwrap(), 0);
        for at in [10, 100, 50] {
            store
                .record_wake(&wake("uid-1", at, Outcome::Served), t(at))
                .await
                .unwrap();
        }
        let upto = store.last_wake_id().await.unwrap();
        store
            .record_wake(&wake("uid-1", 5, Outcome::Served), t(200))
            .await
            .unwrap();
        // The history up to a row, then the rows after it: every row once.
        let history = store.wakes_since_upto(t(0), upto).await.unwrap();
        let after = store.wakes_after(upto, 100).await.unwrap();
        assert_eq!(history.len(), 3);
        assert_eq!(after.len(), 1);
        assert_eq!(
            after[0].1.start_second,
            wake("uid-1", 5, Outcome::Served).start_second
        );
        let all = store.wakes_after(0, 100).await.unwrap();
        let order: Vec<i64> = all
            .iter()
            .map(|(_, w)| w.requested_at.timestamp() - t(0).timestamp())
            .collect();
        assert_eq!(
            order,
            [10, 100, 50, 5],
            "in the order stored, not the order requested"
        );
        assert!(all.windows(2).all(|p| p[0].0 < p[1].0));
        assert_eq!(store.wakes_after(0, 2).await.unwrap().len(), 2);
    }
);

on_both_backends!(config_changes_are_audited, async |store: Store| {
    assert!(store.config("shop.prod").await.unwrap().is_none());
    let first = DesiredConfig {
        min_instances: 0,
        idle_timeout_seconds: 300,
    };
    let second = DesiredConfig {
        min_instances: 2,
        idle_timeout_seconds: 120,
    };
    let a1 = store
        .set_config("shop.prod", first, "alice", "req-1", t(1), false)
        .await
        .unwrap();
    assert_eq!(a1.old, None);
    let a2 = store
        .set_config("shop.prod", second, "bob", "req-2", t(2), false)
        .await
        .unwrap();
    assert_eq!(a2.old, Some(first));
    assert_eq!(a2.new, second);
    let stored = store.config("shop.prod").await.unwrap().unwrap();
    assert_eq!(stored.desired, second);
    assert_eq!(stored.updated_by, "bob");
    assert_eq!(stored.updated_at, t(2));
    let trail = store.config_audit("shop.prod", 10).await.unwrap();
    assert_eq!(trail.len(), 2);
    assert_eq!(
        (trail[0].actor.as_str(), trail[0].request_id.as_str()),
        ("bob", "req-2")
    );
    assert_eq!(trail[1].new, first);
    assert_eq!(trail[1].changed_at, t(1));
    assert!(
        store
            .config_audit("cart.prod", 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.config_audit("shop.prod", 1).await.unwrap().len(), 1);
});

on_both_backends!(
    an_apply_is_recorded_against_the_change_it_applies,
    async |store: Store| {
        use scaling_facts::store::apply::ApplyOutcome;
        use scaling_facts_api::ApplyState;
        let (first, second) = (
            DesiredConfig {
                min_instances: 1,
                idle_timeout_seconds: 90,
            },
            DesiredConfig {
                min_instances: 2,
                idle_timeout_seconds: 120,
            },
        );
        let a1 = store
            .set_config("shop.prod", first, "alice", "req-1", t(1), true)
            .await
            .unwrap();
        assert_eq!(a1.apply_state, ApplyState::Pending);
        let due = store.applies_due().await.unwrap();
        assert_eq!(
            (due.len(), due[0].audit_id, due[0].desired),
            (1, a1.id, first)
        );
        // The API server was down: retried, and still due.
        let down = ApplyOutcome::Retrying("connection refused".into());
        assert!(
            store
                .record_apply("shop.prod", a1.id, &down, t(2))
                .await
                .unwrap()
        );
        let due = store.applies_due().await.unwrap();
        assert_eq!((due[0].attempts, due[0].tried_at), (1, Some(t(2))));
        let applied = ApplyOutcome::Applied {
            min_scale: "1".into(),
            retention: "30s".into(),
        };
        assert!(
            store
                .record_apply("shop.prod", a1.id, &applied, t(3))
                .await
                .unwrap()
        );
        assert!(store.applies_due().await.unwrap().is_empty());
        let stored = store.config("shop.prod").await.unwrap().unwrap();
        assert_eq!(stored.apply.state, ApplyState::Applied);
        assert_eq!((stored.apply.attempts, stored.apply.message), (2, None));
        let was = stored.apply.applied.clone().unwrap();
        assert_eq!(
            (was.min_scale.as_str(), was.retention.as_str(), was.at),
            ("1", "30s", t(3))
        );
        // A second change: pending, with what was applied kept until it is applied.
        let a2 = store
            .set_config("shop.prod", second, "bob", "req-2", t(4), true)
            .await
            .unwrap();
        let stored = store.config("shop.prod").await.unwrap().unwrap();
        assert_eq!(
            (stored.apply.state, stored.apply.attempts),
            (ApplyState::Pending, 0)
        );
        assert_eq!(stored.apply.applied, Some(was.clone()));
        // A late outcome of the first change writes nothing now.
        assert!(
            !store
                .record_apply("shop.prod", a1.id, &applied, t(5))
                .await
                .unwrap()
        );
        let conflict = ApplyOutcome::Conflict("conflict with \"kubectl-edit\"".into());
        assert!(
            store
                .record_apply("shop.prod", a2.id, &conflict, t(6))
                .await
                .unwrap()
        );
        assert!(
            store.applies_due().await.unwrap().is_empty(),
            "a conflict waits for a person"
        );
        let trail = store.config_audit("shop.prod", 10).await.unwrap();
        assert_eq!(
            trail
                .iter()
                .map(|a| (a.apply_state, a.apply_message.as_deref()))
                .collect::<Vec<_>>(),
            [
                (ApplyState::Conflict, Some("conflict with \"kubectl-edit\"")),
                (ApplyState::Applied, None)
            ]
        );
        assert_eq!(
            store.applied_all().await.unwrap(),
            [("shop.prod".to_owned(), was)]
        );
        // A change still waiting when the next comes is superseded in the trail.
        let a3 = store
            .set_config("cart.prod", first, "carol", "req-3", t(7), true)
            .await
            .unwrap();
        store
            .set_config("cart.prod", second, "carol", "req-4", t(8), true)
            .await
            .unwrap();
        let trail = store.config_audit("cart.prod", 10).await.unwrap();
        assert_eq!(trail[1].id, a3.id);
        assert_eq!(
            (trail[0].apply_state, trail[1].apply_state),
            (ApplyState::Pending, ApplyState::Superseded)
        );
    }
);

on_both_backends!(
    concurrent_config_writes_chain_their_audit,
    async |store: Store| {
        // Fifty editors at once: every write lands, and the trail reads as one sequence.
        let writes = (0..50u32).map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let new = DesiredConfig {
                    min_instances: i,
                    idle_timeout_seconds: 60 + i,
                };
                store
                    .set_config(
                        "shop.prod",
                        new,
                        &format!("editor-{i}"),
                        &format!("req-{i}"),
                        t(i as i64),
                        i % 2 == 0,
                    )
                    .await
            })
        });
        for w in futures::future::join_all(writes).await {
            w.unwrap().expect("no write fails under contention");
        }
        let mut trail = store.config_audit("shop.prod", 100).await.unwrap();
        trail.reverse(); // oldest first
        assert_eq!(trail.len(), 50);
        assert_eq!(trail[0].old, None);
        for pair in trail.windows(2) {
            assert_eq!(pair[1].old, Some(pair[0].new), "{pair:#?}");
        }
        let last = store.config("shop.prod").await.unwrap().unwrap();
        assert_eq!(last.desired, trail[49].new);
    }
);

on_both_backends!(
    old_history_is_pruned_and_the_window_kept,
    async |store: Store| {
        use scaling_facts::service::retention::{Pruned, prune_once};
        let day = 86_400;
        let old = wake("rev-old", 0, Outcome::Served);
        let recent = wake("rev-new", 9 * day, Outcome::Aborted);
        assert!(store.record_wake(&old, t(1)).await.unwrap());
        assert!(store.record_wake(&recent, t(9 * day + 1)).await.unwrap());
        // Kept for eight days (a week's window and a day's margin), pruned at day ten.
        let keep = chrono::Duration::days(8);
        let pruned = prune_once(&store, t(10 * day), keep).await.unwrap();
        assert_eq!(pruned, Pruned { wakes: 1 });
        assert_eq!(store.count_wakes("rev-old").await.unwrap(), 0);
        assert_eq!(store.count_wakes("rev-new").await.unwrap(), 1);
        // Nothing more to do the second time.
        let again = prune_once(&store, t(10 * day), keep).await.unwrap();
        assert_eq!(again, Pruned::default());
    }
);

on_both_backends!(releases_and_revisions, async |store: Store| {
    let mut r = ReleaseRow {
        release: "shop.prod".into(),
        namespace: "prod".into(),
        service: "shop".into(),
        service_uid: "svc-uid".into(),
        first_seen: t(0),
        last_seen: t(0),
    };
    store.upsert_release(&r).await.unwrap();
    r.first_seen = t(50);
    r.last_seen = t(50);
    store.upsert_release(&r).await.unwrap();
    let rows = store.releases().await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].first_seen, t(0), "first_seen is kept");
    assert_eq!(rows[0].last_seen, t(50));
    for (uid, name, at) in [("u2", "shop-00002", 20), ("u1", "shop-00001", 10)] {
        store
            .upsert_revision(&RevisionRow {
                revision_uid: uid.into(),
                release: "shop.prod".into(),
                namespace: "prod".into(),
                name: name.into(),
                created: t(at),
            })
            .await
            .unwrap();
    }
    let revs = store.revisions_of("shop.prod").await.unwrap();
    assert_eq!(
        revs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["shop-00001", "shop-00002"]
    );
});

#[tokio::test]
async fn an_unreachable_database_is_an_error_not_a_hang() {
    // Port 9 (discard) on loopback: nothing listens there.
    let mut cfg = common::db_config("postgres://root@127.0.0.1:9/none");
    cfg.database_acquire_timeout_ms = 1_000;
    let started = std::time::Instant::now();
    let err = Store::connect(&cfg).await.unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert!(err.to_string().contains("connect"), "{err}");
}

#[tokio::test]
async fn an_unknown_url_scheme_is_refused() {
    let err = Store::connect_lazy(&common::db_config("mysql://x/y")).unwrap_err();
    assert!(err.to_string().contains("mysql"), "{err}");
}

on_both_backends!(
    a_wake_underway_keeps_its_end_and_trouble,
    async |store: Store| {
        use scaling_facts::measure::wake::{OpenChange, OpenWake};
        let mut underway = OpenWake {
            revision_uid: "rev-a".into(),
            kind: WakeKind::Wake,
            start_second: t(40).timestamp(),
            requested_at: t(40) + chrono::Duration::milliseconds(125),
            ended_at: None,
            ended_undated: false,
            trouble: None,
        };
        store
            .apply_open(&OpenChange::Opened(underway.clone()))
            .await
            .unwrap();
        assert_eq!(store.open_wakes().await.unwrap(), vec![underway.clone()]);
        // What the machine learns later replaces the row: the pods' reason, the fall
        // (replayed, so only an upper bound).
        underway.ended_at = Some(t(75) + chrono::Duration::milliseconds(9));
        underway.ended_undated = true;
        underway.trouble = Some(scaling_facts_api::Failure {
            reason: "ErrImagePull".into(),
            message: "pull access denied".into(),
        });
        store
            .apply_open(&OpenChange::Opened(underway.clone()))
            .await
            .unwrap();
        assert_eq!(store.open_wakes().await.unwrap(), vec![underway]);
        store
            .apply_open(&OpenChange::Closed {
                revision_uid: "rev-a".into(),
            })
            .await
            .unwrap();
        assert!(store.open_wakes().await.unwrap().is_empty());
    }
);

on_both_backends!(
    a_revisions_wakes_underway_are_kept_oldest_first_and_replaced_together,
    async |store: Store| {
        use scaling_facts::measure::wake::{OpenChange, OpenWake};
        let wake = |uid: &str, second: i64, ended: Option<i64>| OpenWake {
            revision_uid: uid.into(),
            kind: WakeKind::Wake,
            start_second: t(second).timestamp(),
            requested_at: t(second) + chrono::Duration::milliseconds(310),
            ended_at: ended.map(t),
            ended_undated: false,
            trouble: None,
        };
        // The newer wake began in an older one's second: rows are told apart by their
        // place, not their start.
        let several = vec![wake("rev-b", 30, Some(62)), wake("rev-b", 30, None)];
        store
            .apply_open(&OpenChange::Several {
                revision_uid: "rev-b".into(),
                wakes: several.clone(),
            })
            .await
            .unwrap();
        store
            .apply_open(&OpenChange::Opened(wake("rev-a", 10, None)))
            .await
            .unwrap();
        let mut all = vec![wake("rev-a", 10, None)];
        all.extend(several);
        assert_eq!(store.open_wakes().await.unwrap(), all);
        // The older judged: the revision's rows are replaced by its one left.
        store
            .apply_open(&OpenChange::Opened(wake("rev-b", 67, None)))
            .await
            .unwrap();
        assert_eq!(
            store.open_wakes().await.unwrap(),
            vec![wake("rev-a", 10, None), wake("rev-b", 67, None)]
        );
        // A new writer's own view, several for one revision again.
        let view = vec![
            wake("rev-c", 5, Some(9)),
            wake("rev-c", 12, Some(15)),
            wake("rev-c", 20, None),
        ];
        store.replace_open(&view).await.unwrap();
        assert_eq!(store.open_wakes().await.unwrap(), view);
    }
);

on_both_backends!(
    a_revisions_last_rest_replaces_the_one_before,
    async |store: Store| {
        use scaling_facts::measure::wake::{PaRest, Rest, RestAt};
        let rest = |uid: &str, generation: i64, pa: Option<PaRest>| Rest {
            revision_uid: uid.into(),
            at: RestAt {
                deployment: Some((
                    generation,
                    t(generation) + chrono::Duration::milliseconds(7),
                )),
                autoscaler: pa,
                after_start: Some(t(generation).timestamp() - 1),
            },
        };
        let idle = PaRest {
            timed_out: false,
            initialized: true,
            since: t(61),
            seen: t(61) + chrono::Duration::milliseconds(480),
        };
        let gave_up = PaRest {
            timed_out: true,
            initialized: false,
            ..idle
        };
        store
            .put_rests(&[rest("rev-a", 2, None), rest("rev-b", 4, Some(gave_up))])
            .await
            .unwrap();
        store
            .put_rests(&[rest("rev-a", 6, Some(idle))])
            .await
            .unwrap();
        let only_pa = Rest {
            revision_uid: "rev-c".into(),
            at: RestAt {
                deployment: None,
                autoscaler: Some(idle),
                after_start: None,
            },
        };
        // A revision only seen being created: every part empty, kept as such.
        let born = Rest {
            revision_uid: "rev-d".into(),
            at: RestAt::default(),
        };
        store
            .put_rests(&[only_pa.clone(), born.clone()])
            .await
            .unwrap();
        assert_eq!(
            store.rests().await.unwrap(),
            vec![
                rest("rev-a", 6, Some(idle)),
                rest("rev-b", 4, Some(gave_up)),
                only_pa,
                born
            ]
        );
    }
);

on_both_backends!(the_earliest_watching_since_is_kept, async |store: Store| {
    assert_eq!(store.watching_since().await.unwrap(), None);
    let first = t(100) + chrono::Duration::milliseconds(250);
    store.put_watching_since(first).await.unwrap();
    // A later process's first sync, told after (its history came late), changes
    // nothing; an earlier one told late replaces it.
    store.put_watching_since(t(900)).await.unwrap();
    assert_eq!(store.watching_since().await.unwrap(), Some(first));
    store.put_watching_since(t(50)).await.unwrap();
    assert_eq!(store.watching_since().await.unwrap(), Some(t(50)));
});
