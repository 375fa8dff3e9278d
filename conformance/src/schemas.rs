//! The JSON Schemas this crate publishes in `schema/json/`: the scenario meta-schema, the JSON
//! report, the baseline and the wire log record read by `check-log`. The schema tool (`chatwire-schema export/check`) writes and checks them with the rest.

use chatwire_schema::schema_gen::{SchemaDoc, SCHEMA_ID_BASE};
use serde_json::{Map, Value};

use crate::baseline::BaselineEntry;
use crate::report::RunReport;
use crate::scenario::Scenario;
use crate::wirelog::WireRecord;

/// File name of the scenario meta-schema.
pub const SCENARIO_FILE: &str = "scenario.json";
/// File name of the JSON report schema.
pub const REPORT_FILE: &str = "conformance-report.json";
/// File name of the baseline schema.
pub const BASELINE_FILE: &str = "conformance-baseline.json";
/// File name of the schema of one wire log line (`check-log`, `run --wire-log`).
pub const WIRE_LOG_FILE: &str = "wire-log-record.json";

/// Every schema this crate publishes, in a stable order.
pub fn all() -> Vec<SchemaDoc> {
    vec![
        doc(SCENARIO_FILE, "Scenario", schemars::schema_for!(Scenario).to_value()),
        doc(REPORT_FILE, "RunReport", schemars::schema_for!(RunReport).to_value()),
        doc(BASELINE_FILE, "Baseline", schemars::schema_for!(Vec<BaselineEntry>).to_value()),
        doc(WIRE_LOG_FILE, "WireLogRecord", schemars::schema_for!(WireRecord).to_value()),
    ]
}

/// Lays a generated schema out like the other published files: `$schema`, `$id`, `title`,
/// `description`, the body, `$defs` last.
fn doc(file: &str, title: &str, schema: Value) -> SchemaDoc {
    let Value::Object(mut body) = schema else {
        return SchemaDoc { file: file.to_owned(), schema, message: None };
    };
    let mut out = Map::new();
    out.insert(
        "$schema".into(),
        body.remove("$schema").unwrap_or_else(|| "https://json-schema.org/draft/2020-12/schema".into()),
    );
    out.insert("$id".into(), Value::String(format!("{SCHEMA_ID_BASE}{file}")));
    body.remove("title");
    out.insert("title".into(), Value::String(title.to_owned()));
    if let Some(d) = body.remove("description") {
        out.insert("description".into(), d);
    }
    let defs = body.remove("$defs");
    out.extend(body);
    if let Some(defs) = defs {
        out.insert("$defs".into(), defs);
    }
    SchemaDoc { file: file.to_owned(), schema: Value::Object(out), message: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_schemas_compile_and_accept_real_documents() {
        for d in all() {
            assert!(jsonschema::draft202012::new(&d.schema).is_ok(), "{} does not compile", d.file);
            assert_eq!(d.schema["$id"], format!("{SCHEMA_ID_BASE}{}", d.file));
        }
        let baseline = all().into_iter().find(|d| d.file == BASELINE_FILE).unwrap();
        let v = jsonschema::draft202012::new(&baseline.schema).unwrap();
        assert!(v.is_valid(&serde_json::json!([{"scenario": "s", "check": "c", "reason": "r"}])));
        assert!(!v.is_valid(&serde_json::json!([{"scenario": "s"}])));
        let wire = all().into_iter().find(|d| d.file == WIRE_LOG_FILE).unwrap();
        let v = jsonschema::draft202012::new(&wire.schema).unwrap();
        assert!(v.is_valid(&serde_json::json!({"conn": 0, "from": "server", "frame": {"type": "error"}})));
        assert!(v.is_valid(&serde_json::json!({"conn": 0, "from": "client", "event": "close", "code": 1000})));
        assert!(!v.is_valid(&serde_json::json!({"conn": 0, "from": "browser", "frame": {}})));
    }
}
