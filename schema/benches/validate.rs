//! Placeholder replaced by the validation benchmark.
fn main() {}
