//! Placeholder replaced by the corpus tests.
fn check(_path: &std::path::Path) -> datatest_stable::Result<()> {
    Ok(())
}
datatest_stable::harness! { { test = check, root = "../fixtures/messages", pattern = r"\.json$" }, }
