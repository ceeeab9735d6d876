//! More than one replica. On SQLite there can be only one: a second process on the same
//! database file is refused at start, naming the file and PostgreSQL, and may start once
//! the first is gone.

mod common;

use scaling_facts::service::Service;
use tokio_util::sync::CancellationToken;

use common::{db_config, serve_defaults};

fn config(dir: &std::path::Path, spool: &str) -> scaling_facts::config::ServeConfig {
    let mut c = serve_defaults();
    c.listen_addr = "127.0.0.1:0".parse().unwrap();
    c.database = db_config(&format!("sqlite://{}/one.db?mode=rwc", dir.display()));
    c.measure.watch_kubernetes = false;
    // Each its own spool, so that only the database is shared.
    c.spool_path = Some(dir.join(spool));
    c
}

#[tokio::test]
async fn sqlite_refuses_a_second_replica_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let first = Service::build(&config(dir.path(), "a.spool"), CancellationToken::new())
        .await
        .expect("the first replica starts");
    let refused = Service::build(&config(dir.path(), "b.spool"), CancellationToken::new())
        .await
        .err()
        .expect("a second replica on the same SQLite file is refused");
    let message = refused.to_string();
    assert!(
        message.contains("one.db")
            && message.contains("SQLite serves one replica")
            && message.contains("PostgreSQL"),
        "{message}"
    );
    drop(first);
    Service::build(&config(dir.path(), "b.spool"), CancellationToken::new())
        .await
        .expect("it starts once the first is gone");
}
