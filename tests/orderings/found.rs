//! The shrunk cases the property test found while the machine was written, each a cause
//! since fixed. They stay as they were found: a change to the generator that draws its
//! randomness differently would make them other histories, so new knobs default to the
//! behaviour these were found with.

use super::world::Episode::{self, *};
use super::{Case, Fault, FirstStart};

fn case(seed: u64, episodes: Vec<Episode>, lag: [i64; 5], faults: Vec<Fault>) -> Case {
    Case {
        seed,
        first_start: None,
        born_at_zero: false,
        initial_scale: 1,
        deployment_first: None,
        quick: false,
        fails_before_relist: false,
        episodes,
        lag,
        faults,
    }
}

pub fn cases() -> Vec<Case> {
    vec![
        // A restart during an aborted wake, the Deployment's and PA's streams lagging.
        case(
            474467284536890035,
            vec![Aborted],
            [0, 0, 160, 389, 0],
            vec![Fault::Restart {
                at: 14683,
                down: 222,
            }],
        ),
        // A restart right after a wake began, its history late, then another restart
        // whose history comes while the lists do.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                18439770007666568774,
                vec![Served, Aborted, Served],
                [0; 5],
                vec![
                    Fault::LateHistory {
                        at: 19271,
                        down: 200,
                        after: 0,
                    },
                    Fault::MidListHistory {
                        at: 24899,
                        down: 200,
                        listed: 1,
                    },
                ],
            )
        },
        // The first start during a replacement, the pods' list late.
        Case {
            first_start: Some(FirstStart {
                at: 21504,
                lists: [0, 0, 0, 0, 658],
            }),
            ..case(
                12230679601267587274,
                vec![Replace],
                [0, 0, 0, 34, 0],
                vec![],
            )
        },
        // An outage across the end of the second of two aborted wakes.
        case(
            8391599604276535224,
            vec![ScaleUp, Served, Aborted, Aborted],
            [0; 5],
            vec![Fault::Outage {
                at: 51064,
                gap: 2613,
            }],
        ),
        // Two aborted wakes of a revision born at zero, its first start listed while the
        // pods' list lags.
        Case {
            first_start: Some(FirstStart {
                at: 15268,
                lists: [0, 0, 490, 0, 0],
            }),
            born_at_zero: true,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                1671894869755918915,
                vec![Aborted, Aborted, Served],
                [0, 0, 0, 0, 20],
                vec![],
            )
        },
        // A relist of the pods during a scale-up of a serving revision whose pod was never
        // seen ready: the new pods are more of that serving period, not a wake.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                3969044488417174032,
                vec![ScaleUp, FailedPull, FailedTimedOut, Served, ScaleUp],
                [0; 5],
                vec![Fault::Relist {
                    kind: 4,
                    at: 123411,
                    gap: 711,
                }],
            )
        },
        // The history arrives the moment a wake serves, while the pods' stream lags.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                13727041845107703593,
                vec![Served, Served],
                [0, 0, 1551, 44, 0],
                vec![Fault::LateHistory {
                    at: 16243,
                    down: 200,
                    after: 12565,
                }],
            )
        },
        // The history arrives the moment the lists are in, at a restart during a wake.
        case(
            7303182727816802050,
            vec![Served, FailedPull, ScaleUp],
            [0; 5],
            vec![Fault::LateHistory {
                at: 3726,
                down: 200,
                after: 0,
            }],
        ),
        Case {
            initial_scale: 3,
            ..case(
                171301821078783847,
                vec![FailedTimedOut, Served],
                [0; 5],
                vec![Fault::LateHistory {
                    at: 44740,
                    down: 200,
                    after: 5455,
                }],
            )
        },
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                18413825238513823002,
                vec![Replace, Served, Served],
                [0; 5],
                vec![
                    Fault::Restart {
                        at: 48873,
                        down: 200,
                    },
                    Fault::LateHistory {
                        at: 39593,
                        down: 200,
                        after: 9280,
                    },
                ],
            )
        },
        // The store answers only after the lists: a wake underway at the restart, with
        // the history merged the moment the lists are in.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                6175660407012079582,
                vec![Replace, Served],
                [0; 5],
                vec![Fault::LateHistory {
                    at: 31827,
                    down: 200,
                    after: 0,
                }],
            )
        },
        // A restart as the first wake of a revision born at zero serves.
        Case {
            born_at_zero: true,
            quick: true,
            fails_before_relist: false,
            ..case(
                4393938943754841671,
                vec![Served, Served, Aborted, Served, FailedPull, Served],
                [0, 0, 153, 210, 197],
                vec![Fault::Restart {
                    at: 4013,
                    down: 758,
                }],
            )
        },
        // A restart as a wake begins: the Deployment's rise is in the list, its fall ends
        // the wake.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                8868376595502998526,
                vec![Aborted, Served],
                [0; 5],
                vec![
                    Fault::Restart {
                        at: 3111,
                        down: 200,
                    },
                    Fault::Relist {
                        kind: 0,
                        at: 0,
                        gap: 100,
                    },
                ],
            )
        },
        // A restart during the initial start, before the PA first queued.
        case(
            4543863841814627559,
            vec![Served],
            [0; 5],
            vec![Fault::Restart {
                at: 1202,
                down: 1072,
            }],
        ),
        // A restart after Knative gave up, the PA's stream behind: `TimedOut`, not aborted.
        Case {
            deployment_first: Some(true),
            ..case(
                6844129568367534501,
                vec![FailedTimedOut],
                [0, 0, 1538, 0, 0],
                vec![Fault::Restart {
                    at: 44480,
                    down: 657,
                }],
            )
        },
        // A restart between an abort and the next wake; the restored wake underway.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                5862969549935920678,
                vec![Served, Aborted, Served],
                [0; 5],
                vec![Fault::Restart {
                    at: 28981,
                    down: 200,
                }],
            )
        },
        // A restart just before a wake, the Deployment's stream far behind the PA's.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                15445243588368786477,
                vec![Served, FailedTimedOut, Served, FailedTimedOut],
                [0, 0, 60, 1829, 0],
                vec![Fault::Restart {
                    at: 77341,
                    down: 200,
                }],
            )
        },
        // The CI failure's shape: the next wake's pod arrives while the PA still wants
        // pods for the last wake; its fall and rise after must not split the wake.
        Case {
            born_at_zero: true,
            quick: true,
            fails_before_relist: false,
            ..case(
                7878453355401305071,
                vec![Served, Served],
                [0, 0, 1581, 52, 0],
                vec![],
            )
        },
        // A resumed PA stream shows an abort's fall after the next wake began.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                11790189542046282633,
                vec![FailedPull, Served, Aborted, Served],
                [0; 5],
                vec![Fault::Resume {
                    kind: 2,
                    at: 54101,
                    gap: 100,
                }],
            )
        },
        // The same with the PA's stream behind.
        Case {
            initial_scale: 3,
            quick: true,
            fails_before_relist: false,
            ..case(
                9465594194226440678,
                vec![Aborted, FailedPull, Served, Served],
                [0, 0, 1591, 0, 0],
                vec![],
            )
        },
        // A late Deployment stream shows a served wake's rise after it served.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                18187372388932737292,
                vec![Aborted, Served, Served, Aborted, FailedPull],
                [0, 0, 0, 1265, 0],
                vec![],
            )
        },
        // An abort, and the next wake right after it: no watch lags.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(1184560784964641557, vec![Aborted, Served], [0; 5], vec![])
        },
        // A restart whose downtime holds the end of a wake the last process saw begin.
        Case {
            deployment_first: Some(true),
            ..case(
                7596645354436989752,
                vec![Aborted, Aborted],
                [0, 0, 20, 498, 0],
                vec![Fault::Restart {
                    at: 13501,
                    down: 461,
                }],
            )
        },
        case(
            3922976305056689701,
            vec![Aborted],
            [0; 5],
            vec![Fault::Restart {
                at: 16643,
                down: 200,
            }],
        ),
        // Knative gave up while down; the next wake's rise must not join the restored one.
        Case {
            deployment_first: Some(true),
            ..case(
                9379828316880388835,
                vec![FailedTimedOut, Served],
                [0; 5],
                vec![Fault::Restart {
                    at: 43703,
                    down: 200,
                }],
            )
        },
        // A relist of the Deployment hides the first write of the KPA's reconcile.
        case(
            395087131442544959,
            vec![Served, FailedPull, Served],
            [0; 5],
            vec![Fault::Relist {
                kind: 3,
                at: 67382,
                gap: 100,
            }],
        ),
        // Scale-up pods of a serving period are not a wake, before or after a restart.
        case(585512542846698831, vec![ScaleUp], [0; 5], vec![]),
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            ..case(
                903678497230762452,
                vec![ScaleUp],
                [0; 5],
                vec![Fault::Restart {
                    at: 21099,
                    down: 200,
                }],
            )
        },
        // An initial start whose Revision arrives late, ended by a relisted PA.
        case(
            17734353986928210490,
            vec![Served],
            [0, 414, 0, 0, 89],
            vec![Fault::Relist {
                kind: 2,
                at: 3929,
                gap: 100,
            }],
        ),
        // A relist hides the PA's fall that aborts a wake: its end is the Deployment's
        // scale to zero, the KPA's second write, up to the gap between them later.
        Case {
            initial_scale: 3,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            ..case(
                1748352712125475670,
                vec![Served, FailedTimedOut, Served, Served, Aborted, Served],
                [0, 0, 0, 20, 0],
                vec![Fault::Relist {
                    kind: 2,
                    at: 90502,
                    gap: 100,
                }],
            )
        },
        // A wake begun and served while the API server was down, found by the relists.
        Case {
            deployment_first: Some(true),
            ..case(
                530714739036723391,
                vec![Served, Served, FailedTimedOut, Served, Served],
                [0; 5],
                vec![Fault::Outage {
                    at: 85794,
                    gap: 1300,
                }],
            )
        },
        // A revision born at zero whose first wake began and served in an outage.
        Case {
            born_at_zero: true,
            ..case(
                4459768693979764599,
                vec![Served],
                [0; 5],
                vec![Fault::Outage {
                    at: 4918,
                    gap: 2049,
                }],
            )
        },
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            ..case(
                14918139476087402568,
                vec![FailedPull, ScaleUp, Served, Served, Served, ScaleUp],
                [0; 5],
                vec![Fault::Outage {
                    at: 52057,
                    gap: 1095,
                }],
            )
        },
        // An aborted wake whose end fell in an outage, with the next wake under way.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                16913568210678144296,
                vec![FailedTimedOut, FailedPull, Aborted, Served, Served],
                [0; 5],
                vec![Fault::Outage {
                    at: 95802,
                    gap: 1812,
                }],
            )
        },
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            ..case(
                10061238684626933184,
                vec![FailedPull, Aborted, FailedTimedOut, Served, ScaleUp],
                [0; 5],
                vec![Fault::Outage {
                    at: 116005,
                    gap: 1457,
                }],
            )
        },
        // An aborted wake whose pods fell inside an outage on a revision born at zero.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            ..case(
                11527150396914012288,
                vec![Aborted, Served, Aborted],
                [0; 5],
                vec![Fault::Outage {
                    at: 4626,
                    gap: 1664,
                }],
            )
        },
        // An initial start whose every write fell in an outage, with one stream lagging.
        case(
            11489617819831503570,
            vec![Served],
            [0, 0, 0, 1432, 0],
            vec![
                Fault::Outage {
                    at: 2769,
                    gap: 2944,
                },
                Fault::Outage { at: 2921, gap: 100 },
            ],
        ),
        // An abort whose end fell in a restart, on a revision born at zero.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                8636917321649652389,
                vec![FailedPull, Aborted, Served],
                [0; 5],
                vec![
                    Fault::Outage {
                        at: 41009,
                        gap: 100,
                    },
                    Fault::Restart {
                        at: 45872,
                        down: 200,
                    },
                ],
            )
        },
        // A timed-out wake whose TimedOut was replaced by the next wake inside an outage.
        case(
            14554380091401125656,
            vec![ScaleUp, FailedTimedOut, ScaleUp],
            [0; 5],
            vec![Fault::Outage {
                at: 60521,
                gap: 2107,
            }],
        ),
        // The store's history arriving while the lists come in: the wake underway it held
        // was closed in the store though the tracker continued it at the sync.
        case(
            0,
            vec![FailedTimedOut],
            [0; 5],
            vec![
                Fault::LateHistory {
                    at: 13583,
                    down: 200,
                    after: 0,
                },
                Fault::MidListHistory {
                    at: 14477,
                    down: 200,
                    listed: 1,
                },
            ],
        ),
        // A served wake inside an outage, one stream lagging, after an abort.
        Case {
            deployment_first: Some(true),
            ..case(
                10129420246302259353,
                vec![Aborted, ScaleUp, Served],
                [0, 0, 0, 514, 0],
                vec![
                    Fault::Outage { at: 0, gap: 100 },
                    Fault::Outage {
                        at: 39715,
                        gap: 2794,
                    },
                ],
            )
        },
        // A quick served wake inside an outage on a revision born at zero, one stream lagging.
        Case {
            born_at_zero: true,
            quick: true,
            fails_before_relist: false,
            ..case(
                7356590757314174934,
                vec![ScaleUp, Served, FailedTimedOut],
                [0, 0, 0, 945, 0],
                vec![Fault::Outage {
                    at: 23837,
                    gap: 2768,
                }],
            )
        },
        // An outage begins 9 ms after an abort's fall; the next wake starts inside it.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                8321709389080426945,
                vec![Aborted, Served],
                [0; 5],
                vec![Fault::Outage {
                    at: 16115,
                    gap: 1607,
                }],
            )
        },
        // An abort, then an outage in which the next wake starts and serves.
        Case {
            initial_scale: 3,
            quick: true,
            fails_before_relist: false,
            ..case(
                12928600683107152030,
                vec![Aborted, Served],
                [0; 5],
                vec![Fault::Outage {
                    at: 14659,
                    gap: 1948,
                }],
            )
        },
        // The service's first start half a minute into a wake whose pod cannot be
        // scheduled: the pod's condition says since when, so the wake fails as
        // unschedulable at once rather than later as timed out.
        Case {
            first_start: Some(FirstStart {
                at: 36296,
                lists: [0, 0, 0, 0, 705],
            }),
            ..case(
                344161940,
                vec![FailedUnschedulable],
                [0, 0, 32, 20, 0],
                vec![],
            )
        },
        // The service's first start while a wake is aborting.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            first_start: Some(FirstStart {
                at: 14358,
                lists: [0, 0, 754, 0, 0],
            }),
            ..case(2682586326689652410, vec![Aborted, Served], [0; 5], vec![])
        },
        // The service's first start while an image pull keeps failing, Knative's timeout
        // nearer than the pull threshold.
        Case {
            deployment_first: Some(true),
            first_start: Some(FirstStart {
                at: 38761,
                lists: [0, 0, 0, 0, 240],
            }),
            ..case(
                15831194540667225,
                vec![FailedPull, Served, Served],
                [0, 0, 0, 20, 0],
                vec![Fault::Outage { at: 0, gap: 100 }],
            )
        },
        // The service's first start just after an abort, the next wake under way.
        Case {
            quick: true,
            fails_before_relist: false,
            first_start: Some(FirstStart {
                at: 29227,
                lists: [0, 0, 0, 0, 771],
            }),
            ..case(
                5509825418550772541,
                vec![Served, Aborted, Served],
                [0; 5],
                vec![],
            )
        },
        // An outage hides a whole abort after a served wake.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                561213582584992786,
                vec![Replace, FailedTimedOut, Aborted, Served, Aborted],
                [0; 5],
                vec![Fault::Outage {
                    at: 83667,
                    gap: 2160,
                }],
            )
        },
        // The service's first start; later a wake whose Deployment stream lags.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            first_start: Some(FirstStart {
                at: 16343,
                lists: [0, 0, 0, 762, 0],
            }),
            ..case(
                4198521889237655151,
                vec![Served, Served, Served, FailedPull],
                [0, 0, 0, 1688, 20],
                vec![],
            )
        },
        // The service's first start after the initial start, its Deployment listed last.
        Case {
            initial_scale: 3,
            first_start: Some(FirstStart {
                at: 8949,
                lists: [0, 0, 0, 736, 0],
            }),
            ..case(14404665971491765264, vec![Served], [0; 5], vec![])
        },
        // The service's first start while an image pull keeps failing, the PA's stream
        // lagging.
        Case {
            first_start: Some(FirstStart {
                at: 38472,
                lists: [0, 0, 0, 0, 241],
            }),
            ..case(
                8460109472786722618,
                vec![FailedPull],
                [0, 0, 741, 0, 0],
                vec![],
            )
        },
        // The service's first start while a container crash-loops, the PA's stream lagging
        // behind the pods' removal.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            first_start: Some(FirstStart {
                at: 33387,
                lists: [0, 0, 0, 0, 749],
            }),
            ..case(
                361909924060310682,
                vec![FailedCrash],
                [0, 0, 564, 0, 0],
                vec![],
            )
        },
        // An abort wholly inside an outage, its pods gone before the relist: only the PA's
        // newer `NoTraffic` tells it happened.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            ..case(
                7524918351215834609,
                vec![FailedCrash, Aborted, Aborted],
                [0; 5],
                vec![Fault::Outage {
                    at: 53642,
                    gap: 2636,
                }],
            )
        },
        // The service's first start after a revision was replaced twice.
        Case {
            deployment_first: Some(true),
            first_start: Some(FirstStart {
                at: 36912,
                lists: [598, 0, 0, 0, 0],
            }),
            ..case(1699184288639088889, vec![Replace, Replace], [0; 5], vec![])
        },
        // An abort whose whole life fell inside an API outage, the watches resuming from
        // their versions with the backlog: the PA's a millisecond after the others.
        case(
            0,
            vec![Aborted],
            [0; 5],
            vec![Fault::Held {
                wake: 0,
                before: 0,
                after: 1943,
                delays: [0, 0, 1, 0, 0],
            }],
        ),
        // The Revision's watch back last, after a whole initial start and a live wake.
        case(
            0,
            vec![Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 9050112702288779000,
                before: 1,
                after: 0,
                delays: [0, 7525, 0, 0, 0],
            }],
        ),
        // A live wake whose Deployment fall came back 2.5 s before the pods that served it.
        case(
            0,
            vec![Served, Served, Served, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 5004170411657192841,
                before: 0,
                after: 0,
                delays: [0, 0, 2675, 0, 2500],
            }],
        ),
        // A failure wholly inside an outage: the PA's `TimedOut` back before the pods that
        // say why, and the Deployment's rise for it back after both.
        case(
            115885994595807187,
            vec![FailedUnschedulable, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 9194318175064550011,
                before: 0,
                after: 0,
                delays: [0, 0, 0, 0, 0],
            }],
        ),
        // An initial start inside an outage, ended by the next wake's live rise before the
        // PA and the pods that show it served came back.
        case(
            0,
            vec![FailedTimedOut],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 0,
                before: 1,
                after: 0,
                delays: [0, 0, 1944, 0, 1972],
            }],
        ),
        // A live wake while the Deployment's backlog, an older wake's rise and fall and
        // this one's rise, was still to come.
        Case {
            born_at_zero: true,
            quick: true,
            fails_before_relist: false,
            ..case(
                10356236416756070092,
                vec![Aborted, Served, Served],
                [0, 0, 0, 0, 0],
                vec![Fault::Held {
                    wake: 2022136538716311111,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 0, 3284, 0],
                }],
            )
        },
        // The PA's backlog, an earlier wake's serving and fall, after the Deployment's rise
        // of the next wake had opened it.
        case(
            0,
            vec![Aborted, Served, Served, Served, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 13008921225796018890,
                before: 0,
                after: 0,
                delays: [0, 0, 1972, 1943, 0],
            }],
        ),
        // A failed pull inside an outage, closed by the next wake's live rise before the
        // pods that say why came back.
        case(
            0,
            vec![FailedPull, Served, Served],
            [0; 5],
            vec![Fault::Held {
                wake: 10239936277872502941,
                before: 0,
                after: 0,
                delays: [0, 0, 0, 0, 3141],
            }],
        ),
        // A PA back last, its backlog an older wake's Queued and TimedOut and the served
        // wake's own Queued, the Deployment's fall of the failed wake long before.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            ..case(
                11793100231430967522,
                vec![FailedPull, FailedTimedOut, Served, Served],
                [0, 0, 0, 23, 0],
                vec![Fault::Held {
                    wake: 3607185101282856641,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 9275, 0, 0],
                }],
            )
        },
        // An abort whose end the Deployment's replayed fall dated by its arrival, before
        // the PA's `NoTraffic` came back to date it better.
        case(
            346707593517075837,
            vec![Aborted, Served],
            [0; 5],
            vec![Fault::Held {
                wake: 12757442555486069007,
                before: 0,
                after: 0,
                delays: [0, 0, 9145, 6001, 0],
            }],
        ),
        // An abort ended by the next wake's live rise while the PA was down, its
        // `NoTraffic` dating the end better than the Deployment's replayed fall.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            ..case(
                8281194556224229026,
                vec![Aborted, Served],
                [0; 5],
                vec![Fault::Held {
                    wake: 233419225245781940,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 4221, 0, 0],
                }],
            )
        },
        // An abort waiting for the Deployment's backlog when the service restarted.
        Case {
            born_at_zero: true,
            ..case(
                2333562476662188752,
                vec![Aborted, Served, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 13136676082583585757,
                        before: 0,
                        after: 0,
                        delays: [0, 0, 0, 7379, 0],
                    },
                    Fault::MidListHistory {
                        at: 12417,
                        down: 200,
                        listed: 1,
                    },
                ],
            )
        },
        // The Deployment's backlog first: its undated fall bounds the next wake's
        // start from above only.
        Case {
            initial_scale: 3,
            ..case(
                54159724868884795,
                vec![Served],
                [0, 0, 0, 0, 0],
                vec![Fault::Held {
                    wake: 9525902607307501722,
                    before: 0,
                    after: 1958,
                    delays: [0, 0, 2751, 2750, 2750],
                }],
            )
        },
        // A served wake whose every serving write a restart's relist replaced: an abort.
        Case {
            deployment_first: Some(true),
            ..case(
                10921859594703799724,
                vec![FailedPull, ScaleUp, FailedUnschedulable],
                [0, 0, 0, 0, 0],
                vec![
                    Fault::Held {
                        wake: 6670740052815357274,
                        before: 0,
                        after: 1422,
                        delays: [0, 0, 0, 0, 0],
                    },
                    Fault::Restart {
                        at: 63269,
                        down: 200,
                    },
                ],
            )
        },
        // A failure past its deadline while the pods' backlog was out: the reason
        // their backlog showed, not the timeout's.
        Case {
            deployment_first: Some(true),
            ..case(
                9770129724946144950,
                vec![Served, Served, FailedPull, FailedPull, Served],
                [0, 0, 0, 0, 0],
                vec![Fault::Held {
                    wake: 14537013467970167158,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 0, 0, 1152],
                }],
            )
        },
        // A quick next wake begun inside the outage: the Deployment's replayed rise
        // of the wake before is that wake's, not the one the pods' backlog opened.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                6852287968676787506,
                vec![Served, Served, Served, Served],
                [0, 0, 0, 0, 0],
                vec![Fault::Held {
                    wake: 4854043060070652431,
                    before: 0,
                    after: 1973,
                    delays: [0, 0, 207, 206, 0],
                }],
            )
        },
        // The Revision's backlog last: what waited for it is judged as if a watch
        // were down until the last is in.
        case(
            1176859446745217910,
            vec![Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 13196591503524224720,
                before: 1,
                after: 0,
                delays: [0, 8732, 835, 0, 856],
            }],
        ),
        // The Deployment's backlog after the next wake served live: its replayed
        // fall ends the initial start's want, its rise is that wake's.
        case(
            0,
            vec![ScaleUp, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 12013240405465074240,
                before: 0,
                after: 0,
                delays: [0, 0, 0, 4952, 0],
            }],
        ),
        // The Deployment's backlog of a whole wake first, then a live wake, then the
        // PA's: the judged wake takes the replayed Queued as its start.
        case(
            0,
            vec![Served, Served, Served, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 16564291942534965431,
                before: 1,
                after: 0,
                delays: [0, 0, 4074, 0, 4074],
            }],
        ),
        // A failure wholly inside two outages: Knative's deadline counts from the
        // start its replayed Queued gave.
        Case {
            born_at_zero: true,
            ..case(
                0,
                vec![FailedPull, Served],
                [0, 0, 0, 0, 0],
                vec![
                    Fault::Held {
                        wake: 371288776171672422,
                        before: 0,
                        after: 0,
                        delays: [0, 0, 2882, 0, 0],
                    },
                    Fault::Held {
                        wake: 652984720690843556,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 0, 0, 2882],
                    },
                ],
            )
        },
        // The Deployment's backlog after the next wake served live, with the PA's
        // and pods' in before: its replayed rise is the outage's wake's, the oldest
        // it had not shown.
        case(
            9124458834443294310,
            vec![Served, Served, Served, ScaleUp, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 2809627068392653869,
                before: 1,
                after: 0,
                delays: [0, 0, 0, 6990, 0],
            }],
        ),
        // The pods' backlog of a failed wake in before the PA's that opens it: the
        // reason of the pod gone.
        Case {
            born_at_zero: true,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                8954185869719048457,
                vec![Served, FailedPull, Served, Served, Served],
                [0, 0, 0, 0, 0],
                vec![Fault::Held {
                    wake: 2669025786640117606,
                    before: 896,
                    after: 0,
                    delays: [0, 0, 1, 1, 0],
                }],
            )
        },
        // A live rise in the second a replayed wake's undated start arrived in: the
        // next wake, not a catch-up.
        case(
            2777962,
            vec![Served, Served, Served, FailedTimedOut, Served, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 13281890921857109549,
                before: 1,
                after: 2730,
                delays: [0, 0, 6419, 2312, 2922],
            }],
        ),
        // Two whole-wake outages back to back: one outage for the watches, so the
        // failure's pods are awaited.
        Case {
            deployment_first: Some(true),
            ..case(
                8243469423735722378,
                vec![FailedPull, Served],
                [0, 0, 0, 0, 0],
                vec![
                    Fault::Held {
                        wake: 11269816329552632854,
                        before: 949,
                        after: 0,
                        delays: [0, 0, 0, 0, 0],
                    },
                    Fault::Held {
                        wake: 0,
                        before: 0,
                        after: 821,
                        delays: [0, 0, 0, 0, 0],
                    },
                ],
            )
        },
        // A failure judged after the next wake began: the next wake's unschedulable
        // pod is not its reason.
        Case {
            deployment_first: Some(true),
            ..case(
                6647167857415105855,
                vec![FailedPull, FailedUnschedulable, Served, Served, Served],
                [0, 0, 0, 0, 0],
                vec![Fault::Held {
                    wake: 215746362760491139,
                    before: 0,
                    after: 1285,
                    delays: [0, 0, 2543, 1837, 0],
                }],
            )
        },
        // A wake Knative gave up on, the pods' backlog 4 s after the others' (open
        // on 2026-12-03).
        case(
            0,
            vec![FailedTimedOut],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 342208050069512521,
                before: 1,
                after: 0,
                delays: [0, 0, 1, 0, 4087],
            }],
        ),
        // Two whole wakes in one backlog, the second a failure: the first's start
        // and floor, not its replay's arrival, bound the second.
        Case {
            deployment_first: Some(true),
            ..case(
                5140190219862304727,
                vec![ScaleUp, Served, Served, Served, FailedPull],
                [0, 0, 0, 0, 0],
                vec![
                    Fault::Held {
                        wake: 15822712744870069186,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 0, 0, 0],
                    },
                    Fault::Held {
                        wake: 3179024117609819297,
                        before: 2144,
                        after: 0,
                        delays: [0, 0, 1, 0, 0],
                    },
                ],
            )
        },
        // A lagging live Deployment rise opens a wake after the end a relist showed: the
        // wake's first pod dates its start, not the NoTraffic seconds before it.
        Case {
            deployment_first: Some(true),
            ..case(
                3911791390610707251,
                vec![FailedTimedOut, Served, Served],
                [0, 0, 0, 697, 0],
                vec![Fault::Outage {
                    at: 52655,
                    gap: 661,
                }],
            )
        },
        // A restart during an outage over the initial start: its lists show the pod ready
        // and the PA already idle, and nothing was recorded of the revision, so that pod
        // tells the start.
        case(
            0,
            vec![Served],
            [0, 0, 0, 0, 0],
            vec![
                Fault::LateHistory {
                    at: 11083,
                    down: 200,
                    after: 0,
                },
                Fault::Held {
                    wake: 5555663009555369304,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 0, 0, 0],
                },
            ],
        ),
        // A whole initial start in an outage, its PA's backlog last: the Queued it replays is dated
        // before a next wake could follow the one the pods recorded, so it is that one's.
        case(
            387646972480626554,
            vec![Aborted, Served, Served, Served, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 2227418605017818310,
                before: 0,
                after: 1832,
                delays: [0, 0, 1, 0, 0],
            }],
        ),
        // An abort in an outage whose PA backlog comes 8.6 s after the Deployment's: the PA
        // still wanting pods is stale, so the replayed Deployment fall ends the open wake.
        case(
            33290363067238,
            vec![Served, Served, Aborted, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 5677623764273931363,
                before: 0,
                after: 0,
                delays: [0, 0, 8590, 0, 0],
            }],
        ),
        // A failed pull, two outages over it, the pods' backlog last each time: the reason
        // they show is still to come when the deadline passes.
        case(
            0,
            vec![FailedPull],
            [0, 0, 0, 0, 0],
            vec![
                Fault::Held {
                    wake: 170743279498926937,
                    before: 0,
                    after: 0,
                    delays: [0, 2407, 0, 0, 0],
                },
                Fault::Held {
                    wake: 9126786839353971080,
                    before: 1,
                    after: 0,
                    delays: [0, 1943, 0, 0, 0],
                },
            ],
        ),
        // An initial start in an outage over the whole of it, then a restart whose history
        // comes at once.
        Case {
            deployment_first: Some(true),
            ..case(
                7481380764774387511,
                vec![Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 1199449600576033542,
                        before: 0,
                        after: 0,
                        delays: [0; 5],
                    },
                    Fault::LateHistory {
                        at: 12525,
                        down: 200,
                        after: 0,
                    },
                ],
            )
        },
        // A first start after an initial start to three pods, its list meeting their
        // scale-down: the PA's `Active` waited for all three, no bound on the first.
        Case {
            first_start: Some(FirstStart {
                at: 9500,
                lists: [0, 0, 0, 0, 568],
            }),
            initial_scale: 3,
            ..case(9078951867113090401, vec![Served], [0; 5], vec![])
        },
        // An abort wholly in an outage, the Deployment's backlog first and the PA's last:
        // its pod came and went before the replayed `Queued`, which alone says it was a wake.
        case(
            0,
            vec![Served, Served, Aborted, Served, Served],
            [0; 5],
            vec![Fault::Held {
                wake: 16541499915815675829,
                before: 1,
                after: 0,
                delays: [0, 0, 2788, 0, 2787],
            }],
        ),
        // A revision created at scale, its PA's rise seen before its Deployment: the
        // Deployment's replayed fall and rise are the initial start's end and the next wake.
        case(
            3498468122567221040,
            vec![Served, Served],
            [0, 0, 0, 92, 0],
            vec![Fault::Held {
                wake: 6258758746084549297,
                before: 2451,
                after: 0,
                delays: [0, 0, 3949, 0, 3948],
            }],
        ),
        // Two outages, the second over a scale-up: the pods the scale-up made while the
        // wake's pod served are that period's, not a wake of their own.
        Case {
            deployment_first: Some(true),
            ..case(
                6561813267431099923,
                vec![ScaleUp, Served, Served, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 1302175836572534976,
                        before: 0,
                        after: 2216,
                        delays: [0; 5],
                    },
                    Fault::Held {
                        wake: 14186094654216107756,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 2217, 0, 0],
                    },
                ],
            )
        },
        // A revision whose whole life fell in an outage: its deletion came back before its
        // objects' backlog, which must still be measured.
        case(
            8120987479412862913,
            vec![Replace],
            [0; 5],
            vec![Fault::Held {
                wake: 1110931007743347752,
                before: 0,
                after: 2606,
                delays: [0, 0, 7919, 0, 7919],
            }],
        ),
        // An initial start wholly in an outage, its Deployment's backlog first, then two live
        // wakes before the pods' and the PA's backlogs: each waits for its verdict in turn.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                13186229799998493826,
                vec![Aborted, Aborted, Served, Served, Served],
                [0; 5],
                vec![Fault::Held {
                    wake: 3577067390562485874,
                    before: 0,
                    after: 572,
                    delays: [0, 0, 8477, 0, 8476],
                }],
            )
        },
        // A first start in mid-history, the Deployment's stream 1.3 s behind and listed
        // wanting pods: that want is the wake opened at the sync, so its late fall is not
        // the next wake's end (a 92 ms abort).
        Case {
            first_start: Some(FirstStart {
                at: 2388,
                lists: [0, 0, 0, 752, 0],
            }),
            born_at_zero: true,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                12613085553105328807,
                vec![Aborted, Aborted, Served, Served],
                [0, 0, 0, 1332, 0],
                vec![],
            )
        },
        // An initial start over a whole outage, its Deployment backlog rising, falling and rising again at once: the first pod of the backlog is the initial start's, not the dating of the next wake (a phantom wake at second 1).
        case(
            4545729338541980690,
            vec![Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 4303351250876816214,
                before: 0,
                after: 939,
                delays: [0, 0, 384, 383, 383],
            }],
        ),
        // A served wake over a whole outage whose pods' backlog came first (taken for more pods of the last period, the PA held at its old state), then the Deployment's, joined to the next wake: only the PA's replay, last, dates it.
        case(
            0,
            vec![Served, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 10124047737281874163,
                before: 2501,
                after: 0,
                delays: [0, 0, 7568, 4251, 0],
            }],
        ),
        // The same at initial scale 3, its pods made across a second boundary: all of them are the initial start's.
        Case {
            initial_scale: 3,
            ..case(
                4250194646322113801,
                vec![Served],
                [0, 0, 0, 0, 0],
                vec![Fault::Held {
                    wake: 1471367070517891286,
                    before: 0,
                    after: 1762,
                    delays: [0, 0, 193, 0, 0],
                }],
            )
        },
        // An abort seen rising, then an outage: its one pod gone in the backlog, the next wake's pod live, the Deployment's fall undated. The next pod is not its serving: the PA's `NoTraffic`, on its way, bounds its end before it.
        case(
            425728305431589702,
            vec![Aborted, Served, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 14500702474057721365,
                before: 0,
                after: 820,
                delays: [0, 0, 5327, 3719, 0],
            }],
        ),
        // A revision born at scale inside an outage, its PA listed before its Revision and first evaluated once already `ScaleTargetInitialized` by this very start: its first pod, made with it, says initial start, not wake.
        Case {
            deployment_first: Some(true),
            ..case(
                11502684434451080156,
                vec![Replace],
                [0, 0, 0, 0, 10],
                vec![Fault::Outage {
                    at: 13856,
                    gap: 1629,
                }],
            )
        },
        // A wake opened by its first pod while the other watches were silently gone (an outage the pods' watch met later): their last word, at zero, predates it, so it is not aborted after the grace; it waits for them.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                13439100901221790555,
                vec![Served, ScaleUp, Served, FailedPull, Served],
                [0, 0, 0, 0, 0],
                vec![
                    Fault::Outage { at: 0, gap: 100 },
                    Fault::Outage {
                        at: 32923,
                        gap: 2852,
                    },
                ],
            )
        },
        // A pull-failing wake found underway at the first start, its pods gone and Knative's give-up written while the process restarted: the wake underway keeps its pods' last reason in the store, so the failure still names the pull error.
        Case {
            first_start: Some(FirstStart {
                at: 28435,
                lists: [0, 0, 0, 0, 689],
            }),
            born_at_zero: true,
            ..case(
                2725965808574490665,
                vec![FailedPull],
                [0, 0, 1435, 0, 0],
                vec![Fault::Restart {
                    at: 35200,
                    down: 200,
                }],
            )
        },
        // Two outages: the pods' watch back first, the next wake found underway from its pod while the Deployment's watch, down since the initial start, still showed that start's want: that want is stale, its backlog of falls and rises is the earlier wakes', not this one's end.
        case(
            0,
            vec![Served, FailedPull],
            [0, 0, 0, 38, 0],
            vec![
                Fault::Held {
                    wake: 1088427347031796618,
                    before: 2438,
                    after: 0,
                    delays: [0, 0, 0, 5943, 0],
                },
                Fault::Held {
                    wake: 12020148023621009983,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 5944, 0, 0],
                },
            ],
        ),
        // A pull failure, its pod gone after the wake was recorded failed and before it closed, then a wake Knative timed out: the gone pod's pull error was the first wake's reason, not the second's.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            ..case(
                8922178876021658342,
                vec![Served, FailedPull, FailedTimedOut, Aborted],
                [0, 0, 123, 74, 0],
                vec![Fault::Outage {
                    at: 61328,
                    gap: 100,
                }],
            )
        },
        // An initial start over a whole outage, told first by the PA's backlog: its Deployment, created at scale, then fell for it, so its next rise, seen live seconds later, is the next wake and not an echo of the start.
        Case {
            deployment_first: Some(true),
            ..case(
                3481524162178910208,
                vec![Aborted, FailedPull],
                [0, 0, 0, 0, 0],
                vec![
                    Fault::Held {
                        wake: 2129948580530065197,
                        before: 0,
                        after: 0,
                        delays: [0, 0, 0, 0, 0],
                    },
                    Fault::Held {
                        wake: 8044226878640123245,
                        before: 0,
                        after: 77,
                        delays: [0, 0, 9227, 0, 0],
                    },
                ],
            )
        },
        // An abort wholly inside an outage after a wake Knative gave up on, its pods gone before the relist: the PA's `TimedOut` replaced by `NoTraffic` tells nothing alone (Knative replaces the reason anyway), but the Deployment at zero two generations on rose and fell unseen.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            ..case(
                10385207288740747648,
                vec![
                    FailedPull,
                    Served,
                    FailedTimedOut,
                    ScaleUp,
                    FailedTimedOut,
                    Aborted,
                ],
                [0, 0, 0, 0, 0],
                vec![Fault::Outage {
                    at: 154157,
                    gap: 2548,
                }],
            )
        },
        // An abort over an outage whose one pod was gone in the backlog, the next wake's pod seen live: that pod, made long after the abort's start, is not the abort's own (it dates the next wake).
        case(
            0,
            vec![Aborted, Served],
            [0, 0, 0, 0, 0],
            vec![Fault::Held {
                wake: 16822605165491543077,
                before: 0,
                after: 0,
                delays: [0, 0, 9688, 9121, 0],
            }],
        ),
        // An abort seen live, its end shown only by relists after a short outage: the PA's fall, whose want began in the second of its `Queued` (before the live arrival's), is this wake's end, not an older one's.
        Case {
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            ..case(
                5697723049905102980,
                vec![
                    Aborted,
                    FailedPull,
                    FailedTimedOut,
                    Aborted,
                    Aborted,
                    FailedTimedOut,
                ],
                [0, 0, 45, 16, 0],
                vec![Fault::Outage {
                    at: 107285,
                    gap: 160,
                }],
            )
        },
        // Every watch down over an abort; the pods' backlog comes first and shows its pod
        // gone unready, then the next wake's pod is made live while the PA's and the
        // Deployment's backlogs are still 5.7 s away: that pod is the next wake's, and the
        // abort ended when its pod went.
        case(
            206,
            vec![Aborted, Aborted, Served],
            [0; 5],
            vec![Fault::Held {
                wake: 9672679925035021962,
                before: 0,
                after: 0,
                delays: [0, 0, 5747, 5747, 0],
            }],
        ),
        // The API held away over the first start: its lists wait for the API, and each
        // list complete is its kind's watch back (as in the engine), so the abort after
        // it is judged.
        Case {
            first_start: Some(FirstStart {
                at: 371,
                lists: [0, 0, 59, 0, 0],
            }),
            ..case(
                0,
                vec![Served, Aborted],
                [0; 5],
                vec![Fault::Held {
                    wake: 202072681740402393,
                    before: 0,
                    after: 0,
                    delays: [0; 5],
                }],
            )
        },
        // The pods' backlog shows the open abort's pod removed unready while the PA's and
        // the Deployment's are held; the next wake's pod is made in the second that
        // backlog arrived. The removal's request (its `deletionTimestamp` less the grace
        // period) dates the abort's end, so that pod is the next wake's.
        Case {
            deployment_first: Some(true),
            ..case(
                2484268393771771893,
                vec![Aborted, FailedPull],
                [0; 5],
                vec![Fault::Held {
                    wake: 6428046906140872387,
                    before: 0,
                    after: 2043,
                    delays: [0, 0, 6784, 6784, 68],
                }],
            )
        },
        // A pull-failing wake wholly inside an outage over the first start: its pods came
        // and went before any list, so Knative's `TimedOut` is the only reason to give.
        Case {
            first_start: Some(FirstStart {
                at: 1481,
                lists: [0, 0, 0, 0, 740],
            }),
            born_at_zero: true,
            ..case(
                0,
                vec![FailedPull],
                [0; 5],
                vec![Fault::Held {
                    wake: 0,
                    before: 912,
                    after: 0,
                    delays: [0; 5],
                }],
            )
        },
        // The Deployment's backlog, 8.3 s behind the others, replays the rise and fall of
        // a wake the PA's backlog recorded and then the rise of the next, served live since:
        // that last rise is the served wake's (the stream was at zero before both), not a
        // new wake.
        Case {
            born_at_zero: true,
            ..case(
                10478280881527065,
                vec![Served, ScaleUp, Served, Served, Served],
                [0; 5],
                vec![Fault::Held {
                    wake: 3288860521700612220,
                    before: 1,
                    after: 0,
                    delays: [0, 0, 0, 8300, 0],
                }],
            )
        },
        // A restart at the very start of an outage over a pull-failing wake: the watches
        // that follow its lists fail at once, so the PA's `TimedOut`, first in the burst
        // when they are back, waits for the pods' backlog to say why.
        case(
            7196089077945861097,
            vec![FailedPull, Served, Served],
            [0; 5],
            vec![
                Fault::Held {
                    wake: 16030588566019634497,
                    before: 0,
                    after: 0,
                    delays: [0; 5],
                },
                Fault::LateHistory {
                    at: 13782,
                    down: 200,
                    after: 0,
                },
            ],
        ),
        // A pull-failing wake inside an outage, known only from the Deployment's backlog
        // (dated by its arrival, 31 s late) when the process restarts; the relist shows
        // the PA's `TimedOut`, newer than the last wake: Knative gave up on this wake, one
        // activation timeout after it began.
        case(
            2766063048016337294,
            vec![FailedPull],
            [0; 5],
            vec![
                Fault::Restart {
                    at: 47289,
                    down: 200,
                },
                Fault::Held {
                    wake: 4858355033728755973,
                    before: 1,
                    after: 0,
                    delays: [0, 0, 3545, 0, 3545],
                },
            ],
        ),
        // A restart while a pull-failing wake, already recorded failed, waits for Knative
        // to give up; the next wake's pod comes first. That `TimedOut` is the recorded
        // wake's (one activation timeout after its start), not the next one's.
        Case {
            deployment_first: Some(true),
            ..case(
                7339626530340206548,
                vec![FailedPull, Served, Served, Served, Aborted],
                [0, 0, 57, 99, 0],
                vec![
                    Fault::LateHistory {
                        at: 21001,
                        down: 200,
                        after: 0,
                    },
                    Fault::Outage { at: 0, gap: 100 },
                ],
            )
        },
        // An activation Knative timed out, its pod running but never ready, lived in an
        // outage; the pods' backlog (every state of it, streamed) comes first, then the
        // next wake's pod is made live while the PA's and the Deployment's are 9.3 s
        // away. A pod only ever streamed that never turned ready did not serve: its
        // removal ends the wake, and the new pod is the next wake's.
        case(
            51731433406635,
            vec![Served, Served, Served, FailedTimedOut, Served, Served],
            [0; 5],
            vec![Fault::Held {
                wake: 11596252645936713969,
                before: 0,
                after: 0,
                delays: [0, 0, 9300, 9300, 0],
            }],
        ),
        // The API away over a whole served wake, the process restarted inside the outage:
        // its lists show the PA's `NoTraffic` newer than the one at the last rest and the
        // Deployment risen again from it; the rest comes from the store (nothing else of
        // the old process's memory survives), the pod of the wake is still listed.
        case(
            270634075759375111,
            vec![Served],
            [0; 5],
            vec![
                Fault::Held {
                    wake: 6866774096996754757,
                    before: 1,
                    after: 1330,
                    delays: [0; 5],
                },
                Fault::LateHistory {
                    at: 22152,
                    down: 200,
                    after: 0,
                },
            ],
        ),
        // As above, after a failed wake: the restart lists a pod of the unseen wake that
        // ran and is going; it is gone before the abort's grace is over, and still dates
        // the wake's start (its creation second) better than the rest it began after.
        Case {
            deployment_first: Some(true),
            ..case(
                11308639748842503712,
                vec![FailedPull, Served, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 8480770249586112994,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 681, 0, 681],
                    },
                    Fault::LateHistory {
                        at: 65856,
                        down: 200,
                        after: 0,
                    },
                ],
            )
        },
        // Two whole-wake outages with a restart between, whose store answers while the
        // lists come in: the rest is restored before the kinds still to list.
        case(
            0,
            vec![Served, Served, FailedPull, Served],
            [0; 5],
            vec![
                Fault::Held {
                    wake: 10950885433218056678,
                    before: 0,
                    after: 0,
                    delays: [0; 5],
                },
                Fault::MidListHistory {
                    at: 34893,
                    down: 200,
                    listed: 1,
                },
                Fault::Held {
                    wake: 17395025793686675952,
                    before: 1,
                    after: 0,
                    delays: [0, 0, 0, 0, 3796],
                },
            ],
        ),
        // A restart while a wake serves, the Deployment's stream 1.3 s behind: the rest
        // stored after the wake before was seen after this wake's request, and is still
        // older than it (the wake is recorded); it is not restored.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                5525146865525854045,
                vec![Aborted, ScaleUp],
                [0, 0, 411, 1298, 0],
                vec![Fault::Restart {
                    at: 18662,
                    down: 200,
                }],
            )
        },
        // The initial start's whole life replayed after an outage, the Deployment's
        // backlog (created at scale, down, up) after a pod of the next wake opened it: the
        // Deployment's first state is the initial start's rise, so its rise after the fall
        // is the open wake's, and its live fall ends that wake (aborted), not the one after.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                13670117293119019835,
                vec![Aborted, FailedUnschedulable, Served],
                [0, 0, 497, 0, 0],
                vec![
                    Fault::Held {
                        wake: 11000112238659052782,
                        before: 1150,
                        after: 0,
                        delays: [0, 0, 194, 0, 0],
                    },
                    Fault::Held {
                        wake: 3964597184634545680,
                        before: 0,
                        after: 2192,
                        delays: [0, 0, 0, 43, 0],
                    },
                ],
            )
        },
        // A crash-looping wake lived in an outage; the pods' backlog comes first, then the
        // Deployment's, which opens the next wake (served, live), and the PA's last. The
        // gone pod's reason is the older wake's, recorded from the PA's replay: the served
        // wake, whose start is long after that pod was made, does not take it away.
        case(
            738268635334164494,
            vec![FailedCrash, Served, Served, Served],
            [0; 5],
            vec![Fault::Held {
                wake: 1175457665280233546,
                before: 2501,
                after: 0,
                delays: [0, 0, 7820, 5212, 0],
            }],
        ),
        // A served wake (with a scale-up) lived in an outage, recorded from the backlogs;
        // the Deployment's (undated) return to zero does not renew the stored rest, whose
        // Deployment part is then older than that wake: it is left out, or the restart's
        // lists would show that wake again as one unseen.
        case(
            2679036532865065592,
            vec![Served, ScaleUp, ScaleUp, Served, Served, Served],
            [0; 5],
            vec![
                Fault::Held {
                    wake: 11592833989634560463,
                    before: 1,
                    after: 0,
                    delays: [0; 5],
                },
                Fault::MidListHistory {
                    at: 58681,
                    down: 200,
                    listed: 1,
                },
            ],
        ),
        // A pull-failing wake lived in an outage; the Deployment's backlog comes back and
        // opens it (undated), then the process restarts with the PA's and the pods'
        // watches still held: the lists show Knative's `TimedOut`, which the give-up,
        // waiting for the pods' word, keeps when the PA's backlog replaces it with
        // `NoTraffic`, so the wake is recorded failed, begun one activation timeout before.
        Case {
            initial_scale: 3,
            ..case(
                1426956376834866923,
                vec![ScaleUp, FailedPull, FailedPull, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 7370664698899439108,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 2848, 0, 2848],
                    },
                    Fault::Restart {
                        at: 95528,
                        down: 200,
                    },
                ],
            )
        },
        // A served wake (then a scale-up) lived in an outage; the process is down when the
        // watches come back, so the backlog is lost, and its restart lists after the pods
        // are gone: recorded from the stored rest (aborted, nothing showed it serving).
        case(
            2234833976719450709,
            vec![ScaleUp, ScaleUp],
            [0; 5],
            vec![
                Fault::Held {
                    wake: 5985091360851494561,
                    before: 1,
                    after: 1238,
                    delays: [0, 0, 318, 0, 318],
                },
                Fault::Restart {
                    at: 40288,
                    down: 200,
                },
            ],
        ),
        // A restart inside an outage over a served wake lists its pod still ready, the
        // PA already at `NoTraffic`, the Deployment not yet down. With the stored rest, the
        // Deployment's want is that wake's (not a new rise), and the pod, made after both
        // streams last rested, served a period of its own: recorded served, not taken for
        // a pod of the last wake's serving being removed.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                6593205730626204275,
                vec![Replace, Served, Served],
                [0; 5],
                vec![
                    Fault::LateHistory {
                        at: 35289,
                        down: 200,
                        after: 0,
                    },
                    Fault::Held {
                        wake: 6523654671460430382,
                        before: 1,
                        after: 0,
                        delays: [0; 5],
                    },
                ],
            )
        },
        // A first start after a pull-failing wake's pods and Knative's give-up: the next
        // wake's first pod opens a wake the `TimedOut` moves back to the failed one's
        // start; its reason is the gone pod's, looked up from the floor moved back.
        Case {
            first_start: Some(FirstStart {
                at: 43694,
                lists: [0, 0, 703, 0, 0],
            }),
            ..case(
                1552851333915159612,
                vec![FailedPull, Aborted, Served, Served, Served],
                [0, 0, 119, 56, 0],
                vec![],
            )
        },
        // The Deployment's backlog rises twice, the first wake's pod gone before it came:
        // the first rise takes the second wake's pod, and the second begins after it, until
        // the PA's backlog dates the first wake long before that pod. Then the second wake's
        // bounds are told again, and its `Queued` joins it rather than passing for an older
        // wake's.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                7554872001269578891,
                vec![Served, FailedPull],
                [0; 5],
                vec![Fault::Held {
                    wake: 11812484284482670555,
                    before: 2501,
                    after: 0,
                    delays: [0, 0, 6935, 4146, 0],
                }],
            )
        },
        // The initial start served and was scaling to zero, all while the API was away;
        // a restart's lists find the PA at `NoTraffic` and the pod leaving, no longer
        // ready: the PA's `ScaleTargetInitialized` dates its serving.
        case(
            0,
            vec![Served],
            [0; 5],
            vec![
                Fault::MidListHistory {
                    at: 11103,
                    down: 200,
                    listed: 1,
                },
                Fault::Held {
                    wake: 7148455718302291704,
                    before: 0,
                    after: 0,
                    delays: [0; 5],
                },
            ],
        ),
        // The same with the history late after the restart.
        case(
            493404327437475314,
            vec![Served],
            [0; 5],
            vec![
                Fault::Held {
                    wake: 4326922367002060598,
                    before: 0,
                    after: 0,
                    delays: [0; 5],
                },
                Fault::LateHistory {
                    at: 13065,
                    down: 200,
                    after: 0,
                },
            ],
        ),
        // A restart's lists find a wake served wholly in the outage still serving, its
        // PA `Active` since it served, and its Deployment already at zero again: the PA's
        // rise is dated by that condition, not by the list, so the Deployment's rest seen
        // in the same list is no bound on its start, and its pod dates it.
        Case {
            deployment_first: Some(true),
            ..case(
                14004340163026257138,
                vec![Served, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 10933836318571042072,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 0, 0, 2726],
                    },
                    Fault::Restart {
                        at: 24291,
                        down: 200,
                    },
                ],
            )
        },
        // An aborted wake seen live by a lagging Deployment watch, ended while the PA's
        // watch was down: its verdict waits for the PA's backlog, whose `Queued` dates its
        // start before the Deployment's late arrival.
        Case {
            initial_scale: 3,
            deployment_first: Some(true),
            ..case(
                4108282702471143483,
                vec![Served, Aborted, Served],
                [0, 0, 0, 1317, 0],
                vec![Fault::Held {
                    wake: 15300574908683570485,
                    before: 0,
                    after: 236,
                    delays: [0, 0, 9744, 0, 3244],
                }],
            )
        },
        // A pull-failing wake wholly in an outage, Knative's `TimedOut` replaced by
        // `NoTraffic` before a restart listed: nothing received says it failed, so it is
        // recorded aborted, begun after the last rest.
        Case {
            deployment_first: Some(true),
            ..case(
                10752954944305531287,
                vec![FailedPull, FailedPull, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 5568833336264071561,
                        before: 1,
                        after: 1878,
                        delays: [0; 5],
                    },
                    Fault::MidListHistory {
                        at: 45531,
                        down: 200,
                        listed: 1,
                    },
                    Fault::Relist {
                        kind: 0,
                        at: 0,
                        gap: 100,
                    },
                ],
            )
        },
        // A wake served and over while the pods' first list was still coming: its PA was
        // seen turn `Active` live, but by the time the lists were in it was at
        // `NoTraffic` and the pod no longer ready. The PA's last `Active` inside the wake
        // says it served.
        Case {
            first_start: Some(FirstStart {
                at: 0,
                lists: [0; 5],
            }),
            deployment_first: Some(true),
            ..case(
                12086091252505867943,
                vec![Served, Served, Served],
                [0; 5],
                vec![Fault::Held {
                    wake: 3189550362093593960,
                    before: 101,
                    after: 0,
                    delays: [0, 0, 0, 0, 10531],
                }],
            )
        },
        // The Deployment's backlog rises twice while the PA's is still held; the pods'
        // backlog then brings the first wake's whole pod. A start known only from above
        // owns the first pod made since its floor, so the second wake begins after it and
        // the pod is not counted for both (once from the pod, once from the PA's replay).
        case(
            3638897467534148520,
            vec![Served, Served],
            [0; 5],
            vec![Fault::Held {
                wake: 10050753508530967090,
                before: 2500,
                after: 0,
                delays: [0, 0, 7354, 4465, 4465],
            }],
        ),
        // The API server goes down as an abort begins: of the whole wake only its pod's
        // creation comes through, and the lists after show it over. Its end is dated when
        // the Deployment and the PA speak (the PA's `NoTraffic`), not when the wake, still
        // silent on both, was first looked at.
        Case {
            deployment_first: Some(true),
            ..case(
                49054048164440817,
                vec![Aborted, Aborted],
                [0; 5],
                vec![Fault::Outage {
                    at: 14059,
                    gap: 2753,
                }],
            )
        },
        // The API is away over a failed wake and back just as the next one begins: the
        // Deployment's backlog (up, down, up) opens two wakes, and the PA's backlog then
        // rises with the first wake's `Queued`. In order, as the Deployment's, the PA's
        // first rise is the first wake's, so its `TimedOut` ends that wake, not the open
        // one, which its own `Queued` joins.
        Case {
            deployment_first: Some(true),
            ..case(
                7763556349782629936,
                vec![FailedPull, FailedUnschedulable, Served, Served, Served],
                [0; 5],
                vec![Fault::Held {
                    wake: 7558136634225157189,
                    before: 1,
                    after: 1811,
                    delays: [0, 0, 54, 0, 0],
                }],
            )
        },
        // The Deployment's watch comes back last, after two wakes the PA and the pods
        // showed: its backlog, replayed from the revision's creation, rises at generation 1
        // for the initial start and then once for each wake after, so its last rise is the
        // wake just recorded, not a new one.
        case(
            9719295865385413,
            vec![Aborted, ScaleUp],
            [0; 5],
            vec![Fault::Held {
                wake: 6967676272248709473,
                before: 0,
                after: 0,
                delays: [0, 0, 0, 7895, 0],
            }],
        ),
        // The API is away over a failed pull and the served wake after it. The pods'
        // backlog brings the failed wake's pod, gone, and then the served wake's: the gone
        // pod was the first wake's first, so the second pod serves the next wake, and the
        // first keeps its reason when the PA's backlog says Knative gave up.
        Case {
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            ..case(
                4421780234669621336,
                vec![FailedPull, Served, Served, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 204843691692707537,
                        before: 1420,
                        after: 0,
                        delays: [0, 0, 464, 0, 0],
                    },
                    Fault::Held {
                        wake: 10770893692091446106,
                        before: 1,
                        after: 1682,
                        delays: [0; 5],
                    },
                ],
            )
        },
        // An abort seen begin live, then the API away: the Deployment's backlog brings its
        // fall, dated only by its arrival, and the PA's its `NoTraffic`, seconds earlier.
        // The wake ended at the earlier, so the pod of the next wake (made before the
        // backlog's arrival, and crashing) is not taken for this one's.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                17019866131839519237,
                vec![
                    Replace,
                    Aborted,
                    FailedTimedOut,
                    Aborted,
                    FailedCrash,
                    Served,
                ],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 18070460366433783362,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 307, 307, 0],
                    },
                    Fault::Held {
                        wake: 13875944095179764861,
                        before: 0,
                        after: 636,
                        delays: [0, 0, 1, 0, 646],
                    },
                ],
            )
        },
        // An abort lived while the API was away, and the service restarted as it came
        // back, its store answering after the lists. The rest the store held follows the
        // revision's initial start, whose record is named by its `Queued` second, a
        // second after the revision's creation: the rest is that start's, newer than its
        // record, and the lists compared with it show the abort.
        Case {
            initial_scale: 3,
            ..case(
                11432664473130237427,
                vec![
                    FailedTimedOut,
                    FailedTimedOut,
                    FailedTimedOut,
                    Replace,
                    Aborted,
                ],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 14891609578086918029,
                        before: 1,
                        after: 220,
                        delays: [0; 5],
                    },
                    Fault::LateHistory {
                        at: 144843,
                        down: 200,
                        after: 0,
                    },
                ],
            )
        },
        // The API goes away just as a revision is created, and the service restarts inside
        // the outage: its whole initial start goes by unseen, its pod gone before the
        // lists. The first process saw the revision created and the store kept that
        // sight, so the next records the start from the PA's `ScaleTargetInitialized`.
        case(
            2166242483705298327,
            vec![Served, Served, Served],
            [0; 5],
            vec![
                Fault::Restart {
                    at: 10813,
                    down: 200,
                },
                Fault::Held {
                    wake: 2623006424700565736,
                    before: 0,
                    after: 0,
                    delays: [0; 5],
                },
            ],
        ),
        // The same for a revision that replaces one at zero, its Service born at zero.
        Case {
            born_at_zero: true,
            ..case(
                0,
                vec![ScaleUp, Replace],
                [0; 5],
                vec![
                    Fault::Restart {
                        at: 31735,
                        down: 200,
                    },
                    Fault::Held {
                        wake: 12703002153389682673,
                        before: 0,
                        after: 0,
                        delays: [0; 5],
                    },
                ],
            )
        },
        // And with the store answering while the lists come in.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                2185517885802135,
                vec![FailedPull],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 2530185873250507849,
                        before: 316,
                        after: 0,
                        delays: [0; 5],
                    },
                    Fault::Held {
                        wake: 7959044448767626964,
                        before: 0,
                        after: 598,
                        delays: [0; 5],
                    },
                    Fault::MidListHistory {
                        at: 13765,
                        down: 200,
                        listed: 1,
                    },
                ],
            )
        },
        // A wake Knative gives up on while the PA's watch is down, the Deployment's showing
        // its rise and fall a few milliseconds inside the deadline as the service counts
        // it. The PA's backlog brings its `TimedOut`, replaced at once by the next wake's
        // `Queued`, while the pods' watch is still down: the wake waits for its verdict
        // with that give-up, and fails.
        Case {
            initial_scale: 3,
            deployment_first: Some(false),
            ..case(
                4114308939634608375,
                vec![FailedTimedOut, Served, Served, Served, Served, Served],
                [0; 5],
                vec![
                    Fault::Held {
                        wake: 9627052590263769340,
                        before: 1,
                        after: 0,
                        delays: [0, 0, 0, 0, 3775],
                    },
                    Fault::Relist {
                        kind: 3,
                        at: 13113,
                        gap: 100,
                    },
                ],
            )
        },
        // An abort seen begin live, its end lost to an outage; the relists after show its
        // pod leaving and the PA already queued for the next wake. The pod's deletion dates
        // the scale to zero that ended it, to its second, not the next wake's `Queued`.
        Case {
            quick: true,
            fails_before_relist: false,
            ..case(
                8650283624512127412,
                vec![Aborted, Served, Served, Served],
                [0; 5],
                vec![Fault::Outage {
                    at: 14879,
                    gap: 1716,
                }],
            )
        },
        // A service started after a revision born at zero, its watches down over the first
        // wake: the pods' backlog brings the wake's whole pod, ready and gone, before any
        // stream opens it; the Deployment's backlog then opens and ends it. The pod gone
        // still says the wake served, and when; the PA's list just before, at zero, is no
        // bound on a rise the Deployment replays.
        Case {
            first_start: Some(FirstStart {
                at: 1333,
                lists: [0, 0, 483, 0, 0],
            }),
            born_at_zero: true,
            ..case(
                2113677411722193352,
                vec![Served],
                [0; 5],
                vec![
                    Fault::Restart {
                        at: 24360,
                        down: 200,
                    },
                    Fault::Held {
                        wake: 0,
                        before: 1290,
                        after: 0,
                        delays: [0, 0, 348, 349, 0],
                    },
                ],
            )
        },
        // A relist of the PAs' watch as a restart meets the API away over the initial start: the
        // restarted process finds that watch down too only if the stream is held, which the relist
        // undid; the harness now takes both from the stream, and the abort after is recorded.
        Case {
            seed: 0,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![Aborted],
            lag: [0, 0, 0, 0, 0],
            faults: vec![
                Fault::Relist {
                    kind: 2,
                    at: 0,
                    gap: 100,
                },
                Fault::Held {
                    wake: 2716535973500255634,
                    before: 101,
                    after: 0,
                    delays: [0, 0, 0, 0, 0],
                },
                Fault::Restart { at: 0, down: 200 },
            ],
        },
        // The API away from before a served wake until after its pod was gone, the PA's and the
        // Deployment's watches back only after the next wake began: the pod's backlog shows a
        // pod made after the last one was deleted serving, while the PA, its watch still down,
        // says Active since the initial start. That stale word is no continuity: the pod served
        // a wake of its own.
        Case {
            seed: 1870925348897994537,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![Served, FailedCrash, Served],
            lag: [0, 0, 0, 0, 0],
            faults: vec![
                Fault::Held {
                    wake: 17252072970766463229,
                    before: 2501,
                    after: 0,
                    delays: [0, 0, 0, 0, 0],
                },
                Fault::Held {
                    wake: 7018793680588948881,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 3452, 2940, 0],
                },
            ],
        },
        // The API away over a failed wake, the Deployment's backlog replayed after the pods' had
        // recorded it: a replay stores no rest, so the restarted process compares its list with
        // the Deployment's rest before that wake. The wake recorded since is that rise and fall;
        // the PA, unmoved since it ended, tells of no other.
        Case {
            seed: 225921350015407383,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![
                FailedTimedOut,
                Served,
                FailedPull,
                ScaleUp,
                Served,
                FailedCrash,
            ],
            lag: [0, 0, 0, 0, 0],
            faults: vec![
                Fault::Held {
                    wake: 155086616741582574,
                    before: 1,
                    after: 0,
                    delays: [0, 0, 1, 1, 0],
                },
                Fault::LateHistory {
                    at: 165126,
                    down: 200,
                    after: 0,
                },
            ],
        },
        // The API away over the initial start from the revision's creation, the service restarted
        // as it comes back: no process saw the revision created, but it was created after the
        // service first synced, which the store keeps, so its initial start is the service's.
        Case {
            seed: 22279708116865716,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![Served],
            lag: [0, 0, 0, 0, 0],
            faults: vec![
                Fault::Restart {
                    at: 11970,
                    down: 200,
                },
                Fault::Held {
                    wake: 13763513758084498472,
                    before: 1,
                    after: 0,
                    delays: [0, 0, 0, 0, 0],
                },
            ],
        },
        // As the last, the restart's lists finding the next wake already underway (the Deployment
        // risen a third time, the PA queued after the start served): the initial start is recorded
        // from the PA's initialization first, then the wake found underway.
        Case {
            seed: 2230359452053961266,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served],
            lag: [188, 20, 20, 0, 20],
            faults: vec![
                Fault::Restart {
                    at: 14292,
                    down: 752,
                },
                Fault::Held {
                    wake: 5359850185722534682,
                    before: 2715,
                    after: 2148,
                    delays: [0, 0, 386, 0, 11750],
                },
                Fault::Held {
                    wake: 5892990621581579417,
                    before: 2568,
                    after: 1198,
                    delays: [347, 3625, 486, 5572, 6128],
                },
            ],
        },
        // A failed wake the PA's backlog shows whole while the pods' watch is still down: Knative
        // gave up, but why is the pods' to say. It waits for its verdict with the wakes that
        // ended so, and the pods' backlog gives its reason, CrashLoopBackOff, not TimedOut.
        Case {
            seed: 16832571284602470945,
            first_start: None,
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![
                FailedCrash,
                FailedTimedOut,
                FailedTimedOut,
                FailedUnschedulable,
                FailedTimedOut,
                FailedCrash,
            ],
            lag: [20, 138, 20, 298, 704],
            faults: vec![
                Fault::Resume {
                    kind: 0,
                    at: 80191,
                    gap: 781,
                },
                Fault::Held {
                    wake: 13657335414257809253,
                    before: 113,
                    after: 811,
                    delays: [135, 297, 374, 0, 0],
                },
                Fault::Held {
                    wake: 12744038225569511448,
                    before: 2992,
                    after: 1318,
                    delays: [5848, 8545, 91, 0, 238],
                },
            ],
        },
        // The API away from the revision's creation until the next wake served, the service
        // restarted then, its history arriving while the lists come in: a process saw the revision
        // created, and the lists show the next wake serving. The initial start, over before it, is
        // recorded first from the PA's initialization.
        Case {
            seed: 0,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![Served],
            lag: [0, 0, 0, 0, 0],
            faults: vec![
                Fault::Held {
                    wake: 12856642718064707336,
                    before: 0,
                    after: 0,
                    delays: [0, 0, 0, 0, 0],
                },
                Fault::Held {
                    wake: 10216402941803675357,
                    before: 1943,
                    after: 0,
                    delays: [0, 0, 0, 0, 0],
                },
                Fault::MidListHistory {
                    at: 16591,
                    down: 200,
                    listed: 1,
                },
            ],
        },
        // Two whole wakes in the Deployment's backlog, one failed and one served, judged as the
        // PA's backlog comes: its TimedOut says Knative gave up on the first, so the Active after
        // the next Queued is the second's, not serving evidence of the first.
        Case {
            seed: 481581991962667554,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, FailedUnschedulable, Served, FailedPull],
            lag: [38, 0, 1734, 20, 101],
            faults: vec![
                Fault::Relist {
                    kind: 1,
                    at: 135849,
                    gap: 1117,
                },
                Fault::Held {
                    wake: 12486644514322214368,
                    before: 774,
                    after: 1433,
                    delays: [480, 0, 3157, 111, 9674],
                },
                Fault::Held {
                    wake: 17923348087421914072,
                    before: 1355,
                    after: 2749,
                    delays: [0, 0, 0, 0, 9487],
                },
            ],
        },
        // The Revision's watch held until after the restart, so the first process measured none of
        // the initial start; the restart's lists show the next wake already serving, the PA
        // Active again since a second after its initialization. The initial start is recorded.
        Case {
            seed: 53452353402636546,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![ScaleUp],
            lag: [0, 0, 0, 0, 0],
            faults: vec![
                Fault::LateHistory {
                    at: 17529,
                    down: 200,
                    after: 0,
                },
                Fault::Held {
                    wake: 12732833885008406376,
                    before: 1,
                    after: 0,
                    delays: [0, 3522, 0, 0, 0],
                },
            ],
        },
        // A process died while every watch was held over a whole wake; its successor listed the
        // Deployment at generation 4 wanting pods, three changes after the rest stored at generation 1,
        // and the PA queued for the next wake. The whole wake before it is recorded (an abort, nothing
        // showing it served), ending by that request.
        Case {
            seed: 1042714073049763862,
            first_start: None,
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, FailedUnschedulable, FailedCrash, Served],
            lag: [193, 0, 20, 1896, 1584],
            faults: vec![
                Fault::Held {
                    wake: 15433063361450571012,
                    before: 320,
                    after: 702,
                    delays: [11293, 8855, 5873, 350, 7063],
                },
                Fault::Restart {
                    at: 16816,
                    down: 619,
                },
            ],
        },
        // Two held windows overlapping: the watches never came back before the restart. The wake the
        // first window covered is unseen; recorded as the one the Deployment's generation tells.
        Case {
            seed: 16498513867452482532,
            first_start: None,
            born_at_zero: true,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, FailedCrash, Served, Served],
            lag: [0, 232, 20, 0, 1017],
            faults: vec![
                Fault::Held {
                    wake: 7291342703557466612,
                    before: 1924,
                    after: 654,
                    delays: [5238, 79, 2398, 2147, 5416],
                },
                Fault::Restart {
                    at: 38365,
                    down: 458,
                },
                Fault::Held {
                    wake: 14227257856957744113,
                    before: 1586,
                    after: 2468,
                    delays: [5933, 416, 108, 0, 5900],
                },
            ],
        },
        // The unseen wake began after the PA's NoTraffic the dead process stored, later than its
        // Deployment's rest: it is bounded by the later of the two.
        Case {
            seed: 7461467971760809897,
            first_start: None,
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: false,
            fails_before_relist: false,
            episodes: vec![
                FailedUnschedulable,
                Served,
                Served,
                Served,
                FailedTimedOut,
                FailedCrash,
            ],
            lag: [1490, 0, 1421, 39, 1428],
            faults: vec![
                Fault::MidListHistory {
                    at: 59652,
                    down: 863,
                    listed: 1,
                },
                Fault::Held {
                    wake: 9888975642777563953,
                    before: 1679,
                    after: 2630,
                    delays: [158, 0, 493, 9112, 2308],
                },
            ],
        },
        // A wake waiting for its verdict (the PA's and the pods' watches still held) when the next
        // began, and the process killed: the store's one row for the revision is the older wake's,
        // so the restart records it; the lists find the newer one underway.
        Case {
            seed: 8939469899992663061,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedTimedOut, FailedTimedOut, FailedUnschedulable],
            lag: [161, 20, 20, 20, 141],
            faults: vec![
                Fault::MidListHistory {
                    at: 54922,
                    down: 910,
                    listed: 3,
                },
                Fault::Outage {
                    at: 182597,
                    gap: 2353,
                },
                Fault::Held {
                    wake: 292773476809312757,
                    before: 1986,
                    after: 1047,
                    delays: [0, 372, 0, 45, 10866],
                },
            ],
        },
        // The Deployment's backlog came back with a whole wake's rise and fall (undated), the PA's and
        // the pods' were still held when the process died: the restart records the wake from the rest
        // it followed.
        Case {
            seed: 16569620441782544540,
            first_start: None,
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedPull, FailedPull, FailedUnschedulable, Replace, Served],
            lag: [770, 383, 269, 115, 0],
            faults: vec![
                Fault::Held {
                    wake: 2549668857828991030,
                    before: 1129,
                    after: 554,
                    delays: [5794, 0, 8302, 0, 5884],
                },
                Fault::Restart {
                    at: 41128,
                    down: 423,
                },
                Fault::Resume {
                    kind: 1,
                    at: 1626,
                    gap: 1026,
                },
            ],
        },
        // The Deployment's backlog brought a whole wake's rise and fall in one burst (the PA's and
        // the pods' still held), and the process was killed in the grace: the store kept the burst's
        // arrival as its start. It keeps the rest the wake followed, as its record would.
        Case {
            seed: 2421525327194884152,
            first_start: Some(FirstStart {
                at: 1937,
                lists: [331, 360, 643, 778, 128],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, Served, Replace, Aborted, Replace, Served],
            lag: [20, 0, 911, 0, 24],
            faults: vec![
                Fault::Restart {
                    at: 91576,
                    down: 577,
                },
                Fault::Held {
                    wake: 759819855800648915,
                    before: 354,
                    after: 435,
                    delays: [93, 10578, 8928, 410, 10992],
                },
                Fault::Held {
                    wake: 13254590169884460604,
                    before: 922,
                    after: 49,
                    delays: [0, 20, 63, 0, 0],
                },
            ],
        },
        // A wake waited for its verdict (the PA's watch still held) while the next was recorded
        // served from the pods' backlog; the process was killed. The restart continues the older
        // wake from the store: it ended before the recorded one began, whose pod does not serve it.
        Case {
            seed: 15628669457955627846,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, Served, Served, FailedPull],
            lag: [0, 0, 1930, 0, 0],
            faults: vec![
                Fault::Held {
                    wake: 6750758848637815486,
                    before: 1528,
                    after: 2280,
                    delays: [185, 0, 9385, 151, 0],
                },
                Fault::LateHistory {
                    at: 82380,
                    down: 903,
                    after: 3211,
                },
                Fault::LateHistory {
                    at: 31586,
                    down: 1118,
                    after: 14839,
                },
            ],
        },
        // No restart: the held backlogs replayed in order; the Deployment's replayed rise, nothing
        // known before it, was stamped with the PA burst's arrival, so the PA's Queued of the same
        // wake, seconds before, was taken for an older wake. A replayed rise with no rest and no
        // wake before it has no floor; the Queued dates it.
        Case {
            seed: 11610674697956669666,
            first_start: None,
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, Served],
            lag: [341, 151, 1471, 1778, 20],
            faults: vec![
                Fault::Held {
                    wake: 7132415926502964466,
                    before: 2182,
                    after: 2619,
                    delays: [0, 270, 2800, 1618, 110],
                },
                Fault::Restart {
                    at: 50774,
                    down: 673,
                },
            ],
        },
        // A failed wake lived wholly while the watches were held, the process restarted inside it:
        // the successor lists the PA's TimedOut, and the Deployment two generations past the rest
        // stored. Recorded as failed for the pod's reason, not aborted (census 42543).
        Case {
            seed: 2286981077960866502,
            first_start: None,
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedPull],
            lag: [85, 0, 0, 0, 20],
            faults: vec![
                Fault::LateHistory {
                    at: 34382,
                    down: 1116,
                    after: 8204,
                },
                Fault::Held {
                    wake: 12055345289557286407,
                    before: 2758,
                    after: 1262,
                    delays: [0, 0, 0, 0, 990],
                },
            ],
        },
        // A revision born at zero whose first wake Knative gave up on while the watches were held:
        // the lists show the PA's TimedOut with no wake recorded before it. Newer than the revision
        // first seen at rest, it is a failed wake, not an abort (census 8607).
        Case {
            seed: 11659677309949742016,
            first_start: Some(FirstStart {
                at: 1218,
                lists: [55, 15, 773, 105, 585],
            }),
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedTimedOut],
            lag: [1553, 84, 62, 1023, 20],
            faults: vec![
                Fault::Held {
                    wake: 2014501816213734350,
                    before: 1584,
                    after: 1139,
                    delays: [0, 0, 0, 11703, 0],
                },
                Fault::LateHistory {
                    at: 96593,
                    down: 772,
                    after: 9293,
                },
                Fault::Relist {
                    kind: 2,
                    at: 131019,
                    gap: 1216,
                },
            ],
        },
        // A process that died with every watch held from before the revision was created: its successor's
        // lists are the first sight of it, the Deployment at zero four generations on. The initial start
        // the PA's ScaleTargetInitialized dates is recorded, and the wake after it, aborted (census 24720).
        Case {
            seed: 18276681045381423683,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedTimedOut],
            lag: [20, 3, 1272, 0, 279],
            faults: vec![
                Fault::Restart {
                    at: 55142,
                    down: 958,
                },
                Fault::Held {
                    wake: 4942626126900385724,
                    before: 455,
                    after: 643,
                    delays: [3668, 81, 23, 228, 0],
                },
                Fault::Held {
                    wake: 14722036621620370161,
                    before: 2231,
                    after: 1878,
                    delays: [5010, 8619, 9177, 0, 10504],
                },
            ],
        },
        // The pods' backlog reached a process that never had the revision (its Revision's was still held),
        // and died with it; the successor's lists show the initial start and a wake after it only by the
        // Deployment's generation, and a pod of the next wake opens that one: the unseen wake is recorded
        // first, aborted, as nothing that reached a process knowing the revision showed it fail (census 1894).
        Case {
            seed: 13896431114550358882,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedPull, Served],
            lag: [180, 20, 167, 20, 20],
            faults: vec![
                Fault::MidListHistory {
                    at: 51232,
                    down: 1128,
                    listed: 4,
                },
                Fault::Held {
                    wake: 5980358015500641645,
                    before: 2501,
                    after: 1273,
                    delays: [0, 332, 10812, 221, 3993],
                },
                Fault::Held {
                    wake: 9609631056717666118,
                    before: 2240,
                    after: 1441,
                    delays: [10264, 9671, 5072, 266, 1432],
                },
            ],
        },
        // The same, the unseen wake aborted in truth, recorded from the initial start's serving to the PA's
        // rest (census 4596).
        Case {
            seed: 4093131205623910005,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted],
            lag: [232, 1897, 20, 57, 99],
            faults: vec![
                Fault::MidListHistory {
                    at: 18264,
                    down: 895,
                    listed: 1,
                },
                Fault::Held {
                    wake: 15022039480114908035,
                    before: 1039,
                    after: 2385,
                    delays: [457, 0, 446, 0, 82],
                },
                Fault::Held {
                    wake: 15322244782409328486,
                    before: 2481,
                    after: 2752,
                    delays: [281, 3708, 5541, 0, 0],
                },
            ],
        },
        // A revision replaced and deleted while every watch was held, its last wake aborted inside the outage:
        // the Revisions' backlog brings the deletion first, and the wake that ended waits for the pods' and
        // the Deployments' backlogs; it is judged, aborted, before the revision goes (census 64507).
        Case {
            seed: 11780556900166479013,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![
                Aborted,
                Replace,
                Served,
                Served,
                FailedUnschedulable,
                Served,
            ],
            lag: [20, 0, 652, 20, 20],
            faults: vec![
                Fault::Held {
                    wake: 8271751769454387915,
                    before: 2606,
                    after: 145,
                    delays: [157, 0, 0, 0, 0],
                },
                Fault::Held {
                    wake: 17677107811190867986,
                    before: 1239,
                    after: 1967,
                    delays: [484, 0, 266, 4879, 948],
                },
            ],
        },
        // The same, the deletion judged only once the Deployments' watch, the last, is back (census 88776).
        Case {
            seed: 194223605814802168,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedCrash, Aborted, Replace, FailedPull, Served, Served],
            lag: [609, 13, 982, 0, 0],
            faults: vec![Fault::Held {
                wake: 17069736527310573907,
                before: 2641,
                after: 2112,
                delays: [0, 0, 0, 395, 74],
            }],
        },
        // History after the lists: the restart found a served period underway, the Deployment three generations
        // past the stored rest, the wake between (failed, every write of it held) known only so. It is recorded
        // before the period's rise, aborted, over before the period's first pod; that serving pod is not its own (census 19637).
        Case {
            seed: 6069918707340578429,
            first_start: Some(FirstStart {
                at: 2143,
                lists: [408, 155, 255, 343, 675],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedUnschedulable, Served, Served],
            lag: [0, 728, 475, 26, 150],
            faults: vec![
                Fault::LateHistory {
                    at: 51227,
                    down: 833,
                    after: 5752,
                },
                Fault::Held {
                    wake: 17444721244010580017,
                    before: 1029,
                    after: 2050,
                    delays: [6618, 11219, 9013, 0, 2838],
                },
                Fault::Held {
                    wake: 7032618848272402882,
                    before: 2904,
                    after: 889,
                    delays: [9411, 0, 0, 4531, 10017],
                },
            ],
        },
        // The counter-case: the Deployment at zero two generations past the stored rest, with a pod of the
        // period those two changes were still serving: that period is the wake they count, and no other is recorded (census 78624).
        Case {
            seed: 15641884640555081235,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![Replace, Served],
            lag: [20, 20, 20, 0, 0],
            faults: vec![
                Fault::Relist {
                    kind: 3,
                    at: 192302,
                    gap: 431,
                },
                Fault::MidListHistory {
                    at: 35809,
                    down: 1101,
                    listed: 1,
                },
                Fault::Held {
                    wake: 11710101278043584897,
                    before: 599,
                    after: 1219,
                    delays: [5861, 0, 2617, 0, 162],
                },
            ],
        },
        // The process died with every watch held before its initial start's fall: the store has that start
        // recorded and no rest. The successor's lists show the Deployment at zero four generations on: born at
        // scale, it fell at generation 2 after that start, and a wake went by unseen after it (census 6047).
        Case {
            seed: 17340899595331933730,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, Served, FailedPull],
            lag: [1765, 0, 298, 0, 1466],
            faults: vec![
                Fault::Relist {
                    kind: 2,
                    at: 101145,
                    gap: 848,
                },
                Fault::MidListHistory {
                    at: 21279,
                    down: 531,
                    listed: 2,
                },
                Fault::Held {
                    wake: 7033689152214664129,
                    before: 2624,
                    after: 942,
                    delays: [354, 0, 342, 0, 0],
                },
            ],
        },
        // History after the lists, the next request already underway in them: the Deployment three
        // generations past the stored rest tells a wake before the rise it shows, recorded before the wake
        // the list opens, which its pods otherwise took for the same (census 4719).
        Case {
            seed: 17862495627391838478,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedUnschedulable, Aborted, Served, Served, Served],
            lag: [20, 908, 963, 0, 767],
            faults: vec![
                Fault::Held {
                    wake: 13815339522593071271,
                    before: 1808,
                    after: 2407,
                    delays: [145, 399, 11838, 224, 107],
                },
                Fault::LateHistory {
                    at: 82713,
                    down: 739,
                    after: 7683,
                },
                Fault::Held {
                    wake: 7783983970473835132,
                    before: 999,
                    after: 2551,
                    delays: [840, 0, 10420, 0, 5677],
                },
            ],
        },
        // A first sync inside the outage: the pods' backlog brings a served period whole, its first pod
        // and two of a scale-up removed together at its end, the last removed a scale-up's. The period
        // began with its first pod, not the last removed (census 4178).
        Case {
            seed: 9233671544633080105,
            first_start: Some(FirstStart {
                at: 2598,
                lists: [275, 186, 172, 78, 13],
            }),
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedPull, ScaleUp, FailedPull, Replace, Served, Replace],
            lag: [1666, 0, 130, 0, 20],
            faults: vec![
                Fault::Outage {
                    at: 94961,
                    gap: 2166,
                },
                Fault::Held {
                    wake: 17077994337365612803,
                    before: 986,
                    after: 1924,
                    delays: [9168, 5841, 109, 105, 0],
                },
                Fault::Held {
                    wake: 9612732936064990386,
                    before: 1253,
                    after: 2192,
                    delays: [0, 457, 4478, 0, 404],
                },
            ],
        },
        // A first sync inside the outage: a revision born at scale, its initial start served and its
        // Deployment back at zero before its Revision came; the period the lists found, its pods leaving,
        // began before that sight of zero, so it is the initial start, not a wake (census 55925).
        Case {
            seed: 13504695242210732749,
            first_start: Some(FirstStart {
                at: 1531,
                lists: [174, 615, 224, 760, 588],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![Replace],
            lag: [133, 20, 118, 20, 20],
            faults: vec![
                Fault::MidListHistory {
                    at: 174510,
                    down: 876,
                    listed: 4,
                },
                Fault::Held {
                    wake: 13528145381402400064,
                    before: 2875,
                    after: 2852,
                    delays: [0, 7468, 326, 0, 6544],
                },
                Fault::Held {
                    wake: 1814149213066479372,
                    before: 1594,
                    after: 2060,
                    delays: [0, 117, 11586, 106, 5],
                },
            ],
        },
        // census 22379 (held): an abort whose Deployment backlog came first, rise and fall undated,
        // its one pod's removal after, stamped in the second it was asked to go: that stamp
        // bounds the end, not the backlog's arrival 2 s after it
        Case {
            seed: 17759921263772689824,
            first_start: None,
            born_at_zero: true,
            initial_scale: 3,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, FailedCrash, Aborted, Served, Served],
            lag: [170, 247, 0, 249, 233],
            faults: vec![
                Fault::Held {
                    wake: 1571853103787671497,
                    before: 2454,
                    after: 306,
                    delays: [192, 0, 8043, 0, 0],
                },
                Fault::LateHistory {
                    at: 65714,
                    down: 917,
                    after: 13013,
                },
                Fault::Relist {
                    kind: 3,
                    at: 33753,
                    gap: 465,
                },
            ],
        },
        // census 32175 (held): a served wake ended by the Deployment's undated backlog, its start
        // bounded from below by the rest before it; the PA's backlog then brought its `Queued`,
        // which dates it (its record began 2 s early, at that rest)
        Case {
            seed: 226631404795987831,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, ScaleUp, FailedTimedOut],
            lag: [20, 20, 273, 20, 231],
            faults: vec![
                Fault::Held {
                    wake: 3823430987757418645,
                    before: 998,
                    after: 575,
                    delays: [6289, 24, 4789, 2495, 9878],
                },
                Fault::Outage {
                    at: 68986,
                    gap: 2020,
                },
                Fault::Restart {
                    at: 38146,
                    down: 755,
                },
            ],
        },
        // census 58184 (held): an abort and the next wake's request in one second, every watch but
        // the Deployment's held across both; the replay took the next wake's pod, made in that
        // second and never scheduled, before the PA's rest, and failed the abort for its reason
        Case {
            seed: 6793806221631714145,
            first_start: None,
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, Aborted, FailedUnschedulable, FailedUnschedulable],
            lag: [20, 1588, 282, 0, 1816],
            faults: vec![Fault::Held {
                wake: 1968885867707946374,
                before: 2336,
                after: 2915,
                delays: [486, 9638, 3432, 0, 0],
            }],
        },
        // census 75491 (held): a first sync that took 50 s, a whole abort streamed before it;
        // its edges waited for the sync's evaluation, and the Deployment's rise read the PA as
        // it stood at the end (given up on a later wake) and opened a second wake: a 6 ms abort
        Case {
            seed: 29929816477734662,
            first_start: Some(FirstStart {
                at: 555,
                lists: [337, 163, 609, 640, 488],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: false,
            fails_before_relist: false,
            episodes: vec![Aborted, FailedPull, Served, Served],
            lag: [20, 20, 0, 0, 1001],
            faults: vec![
                Fault::Outage {
                    at: 77630,
                    gap: 2139,
                },
                Fault::Held {
                    wake: 18071803315844976150,
                    before: 2239,
                    after: 165,
                    delays: [266, 188, 176, 37, 8282],
                },
                Fault::Held {
                    wake: 18163142856991302052,
                    before: 2384,
                    after: 371,
                    delays: [0, 11672, 0, 0, 18],
                },
            ],
        },
        // census 55313 (held): the same, a first sync inside the outage: edges read the PA as it
        // stood when they came, not at the evaluation
        Case {
            seed: 16289721398335999771,
            first_start: Some(FirstStart {
                at: 497,
                lists: [460, 622, 720, 756, 156],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedTimedOut, FailedTimedOut, Served, FailedPull],
            lag: [0, 0, 7, 20, 252],
            faults: vec![
                Fault::Held {
                    wake: 16327901956386464815,
                    before: 863,
                    after: 803,
                    delays: [5313, 6370, 0, 314, 0],
                },
                Fault::Outage {
                    at: 12623,
                    gap: 1183,
                },
                Fault::Held {
                    wake: 5379248611429175001,
                    before: 532,
                    after: 143,
                    delays: [48, 295, 396, 0, 244],
                },
            ],
        },
        // census 5149: a first sight of a revision, its Deployment risen again and scaled up
        // (generation 4): the initial start it had is recorded
        Case {
            seed: 16735924784558724296,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: false,
            fails_before_relist: false,
            episodes: vec![ScaleUp],
            lag: [0, 11, 20, 1163, 20],
            faults: vec![
                Fault::MidListHistory {
                    at: 22503,
                    down: 894,
                    listed: 4,
                },
                Fault::Held {
                    wake: 7684335617794619202,
                    before: 1173,
                    after: 2811,
                    delays: [0, 7547, 0, 414, 103],
                },
                Fault::Relist {
                    kind: 3,
                    at: 140232,
                    gap: 724,
                },
            ],
        },
        // census 20881: a wake only an undated Deployment backlog told starts at the rest's
        // condition second, the check's window from that second too
        Case {
            seed: 4620275425285451995,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedUnschedulable],
            lag: [20, 111, 0, 0, 0],
            faults: vec![
                Fault::Held {
                    wake: 7895456250299285129,
                    before: 1641,
                    after: 1691,
                    delays: [462, 0, 2309, 0, 309],
                },
                Fault::Restart {
                    at: 45668,
                    down: 354,
                },
            ],
        },
        // census 7417: the PA's NoTraffic was still in flight when its watch broke: the
        // unseen wake after the initial start runs from that start's serving
        Case {
            seed: 10565934244871311882,
            first_start: Some(FirstStart {
                at: 1364,
                lists: [515, 290, 99, 749, 720],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![ScaleUp],
            lag: [0, 133, 1117, 1882, 20],
            faults: vec![
                Fault::Held {
                    wake: 3398712446230774245,
                    before: 1678,
                    after: 2865,
                    delays: [0, 0, 7019, 4915, 3481],
                },
                Fault::LateHistory {
                    at: 27778,
                    down: 384,
                    after: 17461,
                },
            ],
        },
        // census 23996: a Deployment's undated rise after a rest seen in the second the last
        // wake ended follows that rest
        Case {
            seed: 12874782866288965519,
            first_start: None,
            born_at_zero: true,
            initial_scale: 3,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![Aborted, FailedCrash, FailedUnschedulable],
            lag: [20, 0, 149, 202, 0],
            faults: vec![
                Fault::Restart {
                    at: 67586,
                    down: 477,
                },
                Fault::Held {
                    wake: 1356764371002254951,
                    before: 2775,
                    after: 2651,
                    delays: [4989, 37, 399, 195, 7508],
                },
                Fault::Held {
                    wake: 6854227561039010989,
                    before: 1300,
                    after: 1115,
                    delays: [75, 135, 10726, 0, 5780],
                },
            ],
        },
        // census 75208: an undated rise follows the PA's rest seen as it happened, newer than
        // the Deployment's own zero
        Case {
            seed: 3934419711962496524,
            first_start: Some(FirstStart {
                at: 330,
                lists: [388, 267, 138, 151, 306],
            }),
            born_at_zero: true,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, FailedCrash, Served, Served, Served, ScaleUp],
            lag: [0, 0, 621, 1638, 20],
            faults: vec![
                Fault::MidListHistory {
                    at: 3101,
                    down: 326,
                    listed: 1,
                },
                Fault::Held {
                    wake: 18098293345216878758,
                    before: 2263,
                    after: 846,
                    delays: [0, 350, 5402, 0, 2190],
                },
                Fault::Restart {
                    at: 75586,
                    down: 1128,
                },
            ],
        },
        // census 68862: two undated rises in one backlog: the first, taken back to its rest,
        // owns the pods made by its arrival and is dated by the first of them
        Case {
            seed: 2820653625714074533,
            first_start: None,
            born_at_zero: true,
            initial_scale: 3,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedCrash, Served, FailedCrash],
            lag: [109, 55, 1154, 1231, 20],
            faults: vec![
                Fault::Resume {
                    kind: 2,
                    at: 134744,
                    gap: 1214,
                },
                Fault::Restart {
                    at: 66411,
                    down: 467,
                },
                Fault::Held {
                    wake: 18362688094662817240,
                    before: 209,
                    after: 2803,
                    delays: [378, 0, 11054, 188, 4549],
                },
            ],
        },
        // census 4548: a scale-up's pods of a period judged served from the pods' backlog are
        // that period's, not the next wake's (they dated a phantom)
        Case {
            seed: 18029892060721268346,
            first_start: Some(FirstStart {
                at: 2764,
                lists: [445, 371, 89, 2, 140],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![Served, Replace, ScaleUp, FailedUnschedulable],
            lag: [1663, 0, 233, 20, 0],
            faults: vec![
                Fault::MidListHistory {
                    at: 70864,
                    down: 423,
                    listed: 1,
                },
                Fault::Resume {
                    kind: 4,
                    at: 29850,
                    gap: 783,
                },
                Fault::Held {
                    wake: 4640261471200970858,
                    before: 2557,
                    after: 2961,
                    delays: [474, 0, 9848, 0, 0],
                },
            ],
        },
        // census 38840: a pod a relist brings is not a scale-up of the period the relist
        // ended (its removals come after it): it is the next wake's, and tells its reason
        Case {
            seed: 16738539902734107414,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, Replace, FailedPull, Served, Served, FailedCrash],
            lag: [20, 880, 0, 1513, 1670],
            faults: vec![
                Fault::Outage {
                    at: 99909,
                    gap: 2031,
                },
                Fault::Outage {
                    at: 166043,
                    gap: 2616,
                },
                Fault::Held {
                    wake: 8769090344668776427,
                    before: 172,
                    after: 2638,
                    delays: [66, 372, 4716, 0, 167],
                },
            ],
        },
        // census 73927: a list finds the Deployment risen and the PA at rest since a TimedOut: the
        // rise is the wake that NoTraffic ended, its pod leaving dates it
        Case {
            seed: 16644196717151501996,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedUnschedulable, Served],
            lag: [225, 0, 0, 246, 81],
            faults: vec![
                Fault::Held {
                    wake: 8707912296283002794,
                    before: 2164,
                    after: 1134,
                    delays: [0, 250, 3122, 216, 0],
                },
                Fault::Restart {
                    at: 61370,
                    down: 670,
                },
            ],
        },
        // census 32105: the Deployment's generation, four changes past the rest compared, tells a
        // whole wake after the one the store kept underway
        Case {
            seed: 1689999769567697242,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedPull, Served],
            lag: [0, 1165, 1746, 150, 261],
            faults: vec![
                Fault::Held {
                    wake: 2145919129240715777,
                    before: 1367,
                    after: 533,
                    delays: [0, 404, 2493, 0, 392],
                },
                Fault::Held {
                    wake: 14428891867397222056,
                    before: 1617,
                    after: 671,
                    delays: [131, 432, 465, 186, 1555],
                },
                Fault::Restart {
                    at: 62137,
                    down: 556,
                },
            ],
        },
        // CI 2026-12-07: a resumed watch's replays stand after what was sent before its cut, so a
        // live Ready is not held back to their arrival
        Case {
            seed: 2465874771144894089,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![FailedPull, FailedTimedOut, ScaleUp],
            lag: [0, 0, 0, 0, 0],
            faults: vec![
                Fault::Resume {
                    kind: 2,
                    at: 87920,
                    gap: 100,
                },
                Fault::Resume {
                    kind: 4,
                    at: 87794,
                    gap: 100,
                },
            ],
        },
        // census 33854: a wake judged at the first sync, its first pod already leaving: that pod's readiness
        // before the wake's fall served it, not a scale-up pod's later one
        Case {
            seed: 18313599570746530916,
            first_start: Some(FirstStart {
                at: 1895,
                lists: [748, 399, 304, 694, 52],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![
                ScaleUp,
                FailedCrash,
                FailedTimedOut,
                Replace,
                FailedCrash,
                FailedTimedOut,
            ],
            lag: [20, 164, 922, 0, 20],
            faults: vec![
                Fault::Held {
                    wake: 6720621620756195698,
                    before: 2731,
                    after: 1007,
                    delays: [191, 5714, 10496, 127, 0],
                },
                Fault::Held {
                    wake: 16530791052764358668,
                    before: 1704,
                    after: 1552,
                    delays: [499, 0, 23, 135, 456],
                },
                Fault::Held {
                    wake: 3596261102983488047,
                    before: 710,
                    after: 788,
                    delays: [0, 9401, 8301, 6442, 4953],
                },
            ],
        },
        // census 70179: a backlog of pods brought a wake's pod, never ready, gone before the Deployment's
        // undated rise and fall: the pod dates the start and its removal the end, and a restart
        // before the PA's backlog records it failed
        Case {
            seed: 8400501511150574430,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, FailedTimedOut, Served],
            lag: [4, 0, 6, 0, 573],
            faults: vec![
                Fault::Held {
                    wake: 7428733644623414210,
                    before: 2675,
                    after: 1850,
                    delays: [183, 342, 9031, 31, 0],
                },
                Fault::MidListHistory {
                    at: 69238,
                    down: 967,
                    listed: 3,
                },
            ],
        },
        // census 72473: the Deployment's backlog, last in, would have held every later arrival back to
        // it, live ones too: each replayed change happens by its PA turn (or its stream's next)
        Case {
            seed: 874567144268403434,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, FailedUnschedulable],
            lag: [206, 0, 63, 589, 225],
            faults: vec![
                Fault::Held {
                    wake: 1653768639876864450,
                    before: 1416,
                    after: 2811,
                    delays: [0, 163, 0, 7075, 39],
                },
                Fault::MidListHistory {
                    at: 91798,
                    down: 986,
                    listed: 2,
                },
            ],
        },
        // census 60639: a revision deleted while the PA's watch is down is judged at once, provisionally,
        // so that a restart before the backlog finds its verdict, not a wake underway no list shows
        Case {
            seed: 14600455847217325654,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![Aborted, Replace],
            lag: [0, 155, 277, 20, 20],
            faults: vec![
                Fault::LateHistory {
                    at: 31153,
                    down: 905,
                    after: 18697,
                },
                Fault::Held {
                    wake: 1001210368992330184,
                    before: 1121,
                    after: 1718,
                    delays: [4774, 0, 11747, 403, 254],
                },
                Fault::Held {
                    wake: 10547351002599643840,
                    before: 2185,
                    after: 2259,
                    delays: [8822, 7194, 0, 0, 130],
                },
            ],
        },
        // census 27471: the same, a failed wake's revision replaced in the outage
        Case {
            seed: 8765147692760901827,
            first_start: Some(FirstStart {
                at: 243,
                lists: [660, 175, 789, 157, 759],
            }),
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedTimedOut, FailedCrash, FailedPull, Replace],
            lag: [268, 90, 0, 518, 299],
            faults: vec![
                Fault::MidListHistory {
                    at: 129122,
                    down: 460,
                    listed: 4,
                },
                Fault::Outage {
                    at: 15271,
                    gap: 611,
                },
                Fault::Held {
                    wake: 10477920814415574833,
                    before: 1033,
                    after: 2690,
                    delays: [413, 306, 10767, 5633, 90],
                },
            ],
        },
        // census 51695: two wakes waiting for their verdicts behind the pods' watch; a restart
        // continues both (a row per wake underway), not only the older
        Case {
            seed: 9318062294925906993,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: false,
            fails_before_relist: false,
            episodes: vec![Served, FailedCrash, Aborted],
            lag: [135, 20, 20, 1147, 0],
            faults: vec![
                Fault::LateHistory {
                    at: 71493,
                    down: 511,
                    after: 16712,
                },
                Fault::Held {
                    wake: 7932053411385576926,
                    before: 2434,
                    after: 1173,
                    delays: [0, 0, 0, 493, 11906],
                },
            ],
        },
        // census 90829: the next wake's rise seen live while an initial start waits for its
        // verdict; a restart continues both
        Case {
            seed: 13187472335631642251,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![Aborted, FailedTimedOut, ScaleUp, FailedPull, Served, Served],
            lag: [20, 20, 0, 0, 186],
            faults: vec![
                Fault::LateHistory {
                    at: 17520,
                    down: 852,
                    after: 17333,
                },
                Fault::Held {
                    wake: 10938254686840656742,
                    before: 425,
                    after: 626,
                    delays: [1153, 430, 10349, 0, 11991],
                },
            ],
        },
        // census 51231: a Deployment's undated rise and fall that were a served wake's period,
        // kept waiting beside it, must not come back from the store as an aborted wake
        Case {
            seed: 5316310291598700975,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedUnschedulable, Aborted, Served, FailedTimedOut],
            lag: [0, 20, 20, 256, 977],
            faults: vec![
                Fault::LateHistory {
                    at: 68303,
                    down: 698,
                    after: 7108,
                },
                Fault::Held {
                    wake: 2716874217042003258,
                    before: 2986,
                    after: 1058,
                    delays: [166, 7501, 8119, 0, 0],
                },
                Fault::MidListHistory {
                    at: 46986,
                    down: 708,
                    listed: 3,
                },
            ],
        },
        // Census 61932 (held): a late history replayed a backlog that re-dated a wake under
        // its own key and retracted the provisional record; the merge wrote the retraction but
        // not the record, the same as this process's, so the wake was lost from the store.
        Case {
            seed: 13917647458073217059,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: false,
            episodes: vec![Served, FailedUnschedulable, Served, Aborted, Served],
            lag: [263, 0, 0, 20, 20],
            faults: vec![
                Fault::Held {
                    wake: 16261544647292710705,
                    before: 56,
                    after: 1128,
                    delays: [0, 440, 0, 0, 0],
                },
                Fault::LateHistory {
                    at: 13348,
                    down: 561,
                    after: 16117,
                },
            ],
        },
        // The PodAutoscalers' watch down for nine seconds while a whole wake is streamed
        // live, then every watch relisted: the Revision's list, taken first in the
        // replay, held the clock of everything after it to its arrival, so the wake
        // timed live was written again known only to the second (in the simulator's
        // watch-fault test, under another second too: a wake recorded twice).
        Case {
            seed: 2918678284566029491,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: true,
            episodes: vec![Served, Served, Served, Served, Served],
            lag: [0, 20, 20, 20, 20],
            faults: vec![
                Fault::Relist {
                    kind: 2,
                    at: 36400,
                    gap: 9400,
                },
                Fault::Outage {
                    at: 36000,
                    gap: 200,
                },
            ],
        },
        // A failing wake judged by a tick while the PodAutoscalers' watch relisted: the
        // replay had no ticks, so it judged the failure at the list's arrival and wrote it
        // again known only to the second.
        Case {
            born_at_zero: true,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: true,
            fails_before_relist: true,
            ..case(
                15310635691452658185,
                vec![Served, FailedPull, Aborted],
                [0, 10, 33, 20, 0],
                vec![
                    Fault::Relist {
                        kind: 2,
                        at: 24008,
                        gap: 1314,
                    },
                    Fault::LateHistory {
                        at: 41430,
                        down: 680,
                        after: 17165,
                    },
                ],
            )
        },
        // A whole wake while every watch was held, and the process restarted before any came
        // back: the store's last rest was older than the served wake recorded after it, so it
        // was not restored, and the list at zero four generations on was compared with nothing.
        Case {
            seed: 3064584367966954627,
            first_start: None,
            born_at_zero: false,
            initial_scale: 3,
            deployment_first: None,
            quick: true,
            fails_before_relist: true,
            episodes: vec![
                FailedTimedOut,
                FailedCrash,
                Served,
                ScaleUp,
                Served,
                Replace,
            ],
            lag: [203, 149, 437, 0, 151],
            faults: vec![
                Fault::MidListHistory {
                    at: 109250,
                    down: 379,
                    listed: 1,
                },
                Fault::Held {
                    wake: 18030984020540535993,
                    before: 2627,
                    after: 2870,
                    delays: [1246, 0, 10750, 54, 140],
                },
                Fault::Held {
                    wake: 17271448143165618718,
                    before: 1243,
                    after: 2461,
                    delays: [0, 4670, 0, 0, 4741],
                },
            ],
        },
        // A Deployment's backlog replayed a whole wake's rise and fall after its fall for the
        // wake before, whose rest the PodAutoscalers' backlog had dated: the wake stored
        // underway was dated by that arrival, fourteen seconds after it began, not by the rest.
        Case {
            seed: 3756543323962815565,
            first_start: None,
            born_at_zero: true,
            initial_scale: 3,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![FailedPull, ScaleUp, ScaleUp],
            lag: [240, 20, 41, 0, 1349],
            faults: vec![
                Fault::Held {
                    wake: 2936919679589183617,
                    before: 2588,
                    after: 1498,
                    delays: [33, 485, 117, 0, 3543],
                },
                Fault::Restart {
                    at: 78260,
                    down: 1006,
                },
                Fault::Held {
                    wake: 14638798035546373724,
                    before: 598,
                    after: 1085,
                    delays: [46, 3711, 6609, 0, 9228],
                },
            ],
        },
        // A wake that scaled up after it served, lived while every watch was held, and the
        // process restarted before any came back: the list showed only the scale-up's pod,
        // leaving, and the wake was dated by it, five seconds after it began, not by the rest.
        Case {
            seed: 1582396592127187954,
            first_start: None,
            born_at_zero: true,
            initial_scale: 3,
            deployment_first: Some(false),
            quick: false,
            fails_before_relist: true,
            episodes: vec![ScaleUp],
            lag: [1079, 0, 20, 0, 40],
            faults: vec![
                Fault::MidListHistory {
                    at: 14734,
                    down: 1021,
                    listed: 1,
                },
                Fault::Held {
                    wake: 15333913242890858092,
                    before: 2115,
                    after: 1208,
                    delays: [3338, 164, 5286, 275, 293],
                },
            ],
        },
        // A relist's pods, after an outage across an initial start's serving: the replay
        // of what the outage held took them one by one, and the sibling listed first,
        // ready two seconds later, ended the start before the one that served it.
        Case {
            seed: 291026329209271743,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: true,
            fails_before_relist: true,
            episodes: vec![Served, Replace],
            lag: [0, 0, 0, 0, 0],
            faults: vec![Fault::Outage {
                at: 33340,
                gap: 1567,
            }],
        },
        // A whole served wake inside a restart's outage, known by the PA's newer `NoTraffic`:
        // the next wake's first pod, streamed before its PA's `Queued`, was taken as a pod
        // left of it, and the unseen wake was dropped.
        Case {
            seed: 9483361126168176243,
            first_start: None,
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: None,
            quick: true,
            fails_before_relist: false,
            episodes: vec![Served, FailedUnschedulable],
            lag: [0, 20, 1272, 1925, 268],
            faults: vec![
                Fault::Held {
                    wake: 12498240044305691743,
                    before: 702,
                    after: 2011,
                    delays: [385, 157, 345, 0, 130],
                },
                Fault::Restart {
                    at: 30995,
                    down: 670,
                },
            ],
        },
        // A wake the outage hid but for its undated rise and fall, its first pod (made four seconds
        // after the rest) come in the pods' backlog and gone; the process restarted with it
        // underway, dated by the rest, 3.5 s before it began. The restored wake, closed at the
        // restart, also stood as the last wake in place of the newer one recorded since, and the
        // scale-up serving then was taken for a wake.
        Case {
            seed: 15579907013436796521,
            first_start: Some(FirstStart {
                at: 263,
                lists: [482, 239, 171, 518, 746],
            }),
            born_at_zero: false,
            initial_scale: 1,
            deployment_first: Some(true),
            quick: false,
            fails_before_relist: true,
            episodes: vec![FailedCrash, Served, Served, FailedTimedOut, ScaleUp],
            lag: [20, 253, 949, 20, 272],
            faults: vec![
                Fault::Resume {
                    kind: 4,
                    at: 88617,
                    gap: 929,
                },
                Fault::Restart {
                    at: 119883,
                    down: 238,
                },
                Fault::Held {
                    wake: 4115855869463154592,
                    before: 1646,
                    after: 2689,
                    delays: [0, 614, 5525, 328, 4705],
                },
            ],
        },
        // An aborted wake whose scale to zero a silent relist hid: its pod, listed leaving
        // and then gone, and the PA's `Queued` of the next wake were all that told its end.
        // The end was taken at the PA's arrival, 2.4 s past the pod's removal.
        Case {
            quick: true,
            ..case(
                1285420308362300287,
                vec![FailedTimedOut, FailedPull, Served, Aborted, Served],
                [0; 5],
                vec![Fault::Outage {
                    at: 114060,
                    gap: 1779,
                }],
            )
        },
    ]
}
