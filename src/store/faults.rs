//! Store faults for the soak (`scaling-facts soak`): the SQL it needs to stage outages
//! and to read the result, kept here with the rest of the SQL. Not used by `serve`.

use sqlx::{Connection, Row};

use super::{Store, StoreError};

/// SQLite made unwritable for as long as this lives: another connection holds the
/// database's exclusive lock, so every write of the service waits its busy timeout and
/// fails with `database is locked`.
pub struct SqliteLock {
    conn: sqlx::SqliteConnection,
}

impl SqliteLock {
    pub async fn take(path: &std::path::Path) -> Result<Self, StoreError> {
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .map_err(StoreError::Connect)?;
        sqlx::raw_sql("BEGIN EXCLUSIVE").execute(&mut conn).await?;
        Ok(Self { conn })
    }

    pub async fn release(mut self) -> Result<(), StoreError> {
        sqlx::raw_sql("ROLLBACK").execute(&mut self.conn).await?;
        self.conn.close().await?;
        Ok(())
    }
}

/// Creates a database (name checked to be a plain identifier) on a PostgreSQL server.
pub async fn create_postgres_database(admin_url: &str, name: &str) -> Result<(), StoreError> {
    admin(admin_url, &format!("CREATE DATABASE {}", ident(name)?)).await
}

/// Drops it again, closing whatever is still connected.
pub async fn drop_postgres_database(admin_url: &str, name: &str) -> Result<(), StoreError> {
    admin(
        admin_url,
        &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", ident(name)?),
    )
    .await
}

fn ident(name: &str) -> Result<&str, StoreError> {
    if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Ok(name)
    } else {
        Err(StoreError::corrupt(
            "database name",
            std::io::Error::other(format!("{name:?} is not a plain identifier")),
        ))
    }
}

async fn admin(url: &str, sql: &str) -> Result<(), StoreError> {
    let mut conn = sqlx::PgConnection::connect(url)
        .await
        .map_err(StoreError::Connect)?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(&mut conn)
        .await?;
    conn.close().await?;
    Ok(())
}

impl Store {
    /// The longest time between a wake's end and its row reaching the store, in ms.
    pub async fn longest_write_delay_ms(&self) -> Result<Option<i64>, StoreError> {
        let row = sqlx::query(
            "SELECT MAX(recorded_ms - COALESCE(serving_ms, requested_ms + duration_ms)) FROM wakes",
        )
        .fetch_one(self.pool())
        .await?;
        Ok(row.try_get::<Option<i64>, _>(0)?)
    }
}
