//! TLS to PostgreSQL (issue 10, finding 9): the local server is given a certificate from
//! a CA made here, and `sslmode=require` and `verify-full` connect encrypted, through the
//! store and through the release binary; a server certificate from another CA is refused.
//!
//! The setup changes the local server's TLS files (`ALTER SYSTEM`, then a reload), which
//! every other test tolerates: they connect with the default `prefer`. The files live in
//! the server's data directory, so that a server restarted before the test puts its
//! settings back still finds them; at the end the settings are reset.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use sqlx::{Connection, Row};

use scaling_facts::store::Store;

/// Where the server's files go, inside its data directory: the server reads them again on
/// every reload and restart.
const DIR: &str = "scaling-facts-test-tls";

/// The settings the test changes, reset to the server's own configuration.
const RESET: [&str; 4] = [
    "ALTER SYSTEM RESET ssl_cert_file",
    "ALTER SYSTEM RESET ssl_key_file",
    "ALTER SYSTEM RESET ssl",
    "SELECT pg_reload_conf()",
];

struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn new_ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// Gives the local server a certificate for `localhost` and `127.0.0.1` signed by a new
/// CA, switches TLS on, and returns the CA's file.
async fn enable_tls(admin: &mut sqlx::PgConnection) -> PathBuf {
    let data_dir: String = sqlx::query("SHOW data_directory")
        .fetch_one(&mut *admin)
        .await
        .unwrap()
        .get(0);
    let owner = std::fs::metadata(&data_dir).expect("data directory on this machine");
    let ca = new_ca("scaling-facts test CA");
    let params =
        CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    let dir = Path::new(&data_dir).join(DIR);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(owner.uid()), Some(owner.gid())).unwrap();
    let crt = dir.join("server.crt");
    let keyfile = dir.join("server.key");
    std::fs::write(&crt, cert.pem()).unwrap();
    std::fs::write(&keyfile, key.serialize_pem()).unwrap();
    std::fs::set_permissions(&keyfile, std::fs::Permissions::from_mode(0o600)).unwrap();
    // The server refuses a key it does not own, or that others can read.
    for f in [&crt, &keyfile] {
        std::os::unix::fs::chown(f, Some(owner.uid()), Some(owner.gid())).unwrap();
    }
    let ca_file = dir.join("ca.crt");
    std::fs::write(&ca_file, &ca.pem).unwrap();
    for setting in [
        format!("ALTER SYSTEM SET ssl_cert_file = '{}'", crt.display()),
        format!("ALTER SYSTEM SET ssl_key_file = '{}'", keyfile.display()),
        "ALTER SYSTEM SET ssl = 'on'".to_owned(),
        "SELECT pg_reload_conf()".to_owned(),
    ] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(setting))
            .execute(&mut *admin)
            .await
            .unwrap();
    }
    // The reload is asynchronous: wait until new connections get the new certificate.
    let url = with_params(
        &common::postgres_admin_url(),
        &tls_params("verify-full", &ca_file),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sqlx::PgConnection::connect(&url).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "TLS never came up");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    ca_file
}

fn tls_params(mode: &str, ca: &Path) -> String {
    format!("sslmode={mode}&sslrootcert={}", ca.display())
}

/// `url` with `params` added, and `localhost` for the host (the certificate's name).
fn with_params(url: &str, params: &str) -> String {
    let url = url.replace("127.0.0.1", "localhost");
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}{params}")
}

async fn encrypted(url: &str) -> bool {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let row = sqlx::query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    row.get(0)
}

#[tokio::test]
async fn require_and_verify_full_connect_encrypted_and_a_foreign_ca_is_refused() {
    let admin_url = common::postgres_admin_url();
    let mut admin = sqlx::PgConnection::connect(&admin_url)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL must be reachable at {admin_url}: {e}"));
    let ca = enable_tls(&mut admin).await;

    let require = with_params(&admin_url, "sslmode=require");
    let verify = with_params(&admin_url, &tls_params("verify-full", &ca));
    let plain = with_params(&admin_url, "sslmode=disable");
    assert!(encrypted(&require).await, "require");
    assert!(encrypted(&verify).await, "verify-full");
    assert!(
        !encrypted(&plain).await,
        "disable is plaintext: the check tells them apart"
    );

    // The store itself, as the service opens it.
    for url in [&require, &verify] {
        let store = Store::connect(&common::db_config(url)).await.unwrap();
        store.ping().await.unwrap();
        store.close().await;
    }

    // A server certificate from another CA fails verify-full, and says why.
    let other = new_ca("someone else");
    let other_file = std::env::temp_dir().join(format!("other-ca-{}.crt", uuid::Uuid::new_v4()));
    std::fs::write(&other_file, &other.pem).unwrap();
    let wrong = with_params(&admin_url, &tls_params("verify-full", &other_file));
    let err = sqlx::PgConnection::connect(&wrong)
        .await
        .expect_err("refused");
    assert!(
        format!("{err:?}").contains("UnknownIssuer"),
        "refused for its issuer, not for another reason: {err:?}"
    );
    std::fs::remove_file(&other_file).ok();

    // The release binary migrates a fresh database over verify-full.
    let name = format!("sf_tls_{}", uuid::Uuid::new_v4().simple());
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .unwrap();
    let base = admin_url.rsplit_once('/').unwrap().0;
    let db_url = with_params(&format!("{base}/{name}"), &tls_params("verify-full", &ca));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_scaling-facts"))
        .arg("migrate")
        .env("SCALING_FACTS_DATABASE_URL", &db_url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "migrate over verify-full: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE {name} WITH (FORCE)"
    )))
    .execute(&mut admin)
    .await
    .unwrap();
    for setting in RESET {
        sqlx::raw_sql(setting).execute(&mut admin).await.unwrap();
    }
}
