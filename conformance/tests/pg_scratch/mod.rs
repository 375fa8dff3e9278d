//! The scratch databases the runner creates on a PostgreSQL server, for the tests that check it
//! drops every one of them.

/// The databases the runner created on the server at `url` and has not dropped.
pub async fn scratch_databases(url: &str) -> Vec<String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connects");
    let task = tokio::spawn(connection);
    let rows = client
        .query("SELECT datname FROM pg_database WHERE datname LIKE 'chatwire_conformance_%'", &[])
        .await
        .expect("lists databases");
    drop(client);
    let _ = task.await;
    rows.iter().map(|r| r.get::<_, String>(0)).collect()
}
