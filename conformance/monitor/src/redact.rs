//! Ids out of messages: a finding's message names ids by the same placeholders (`[tool_call:1]`)
//! as the redacted frame beside it, never by their raw text.

use chatwire_schema::UiState;
use serde_json::Value;

use crate::normalize::Normalizer;

/// How `got` differs from `expected`, ids redacted; `None` when they are equal.
pub fn divergence(expected: &UiState, got: &UiState, redactor: &mut Normalizer) -> Option<String> {
    // One deep comparison per state; JSON only when they differ.
    if expected == got {
        return None;
    }
    let want = serde_json::to_value(expected).unwrap_or(Value::Null);
    let have = serde_json::to_value(got).unwrap_or(Value::Null);
    let lines: Vec<String> = crate::text::json_diff(&want, &have, 12);
    let text = lines.join("\n");
    Some(message(redactor, &text, &[&want, &have]))
}

/// `text` with every id found in `values` replaced by its placeholder. The values are normalized
/// first, so their ids get the names the frame excerpts use.
pub fn message(redactor: &mut Normalizer, text: &str, values: &[&Value]) -> String {
    let mut ids = Vec::new();
    for v in values {
        let _ = redactor.normalize(v);
        collect_ids(v, &mut ids);
    }
    ids.sort_by_key(|s| std::cmp::Reverse(s.len()));
    ids.dedup();
    let mut out = text.to_owned();
    for id in ids {
        let name = redactor.id("item", &id);
        out = replace_whole(&out, &id, &name);
    }
    out
}

/// Whether `c` can be part of an identifier (ID-001's alphabet).
fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-')
}

/// Replaces `needle` where it stands as a whole identifier, not inside a longer one.
fn replace_whole(text: &str, needle: &str, with: &str) -> String {
    if needle.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(needle) {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at + needle.len()..];
        // A full stop that ends a sentence is not part of the id.
        let sentence_end = tail.starts_with('.') && tail[1..].chars().next().is_none_or(char::is_whitespace);
        let after = tail.chars().next().filter(|_| !sentence_end);
        out.push_str(&rest[..at]);
        if before.is_some_and(id_char) || after.is_some_and(id_char) {
            out.push_str(needle);
        } else {
            out.push_str(with);
        }
        rest = &rest[at + needle.len()..];
    }
    out.push_str(rest);
    out
}

/// Every identifier value in `v`: members named `id`, `*_id`, `*_ids`, `corr` or `in_reply_to`.
fn collect_ids(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                let id_key =
                    k == "id" || k.ends_with("_id") || k.ends_with("_ids") || k == "corr" || k == "in_reply_to";
                match val {
                    Value::String(s) if id_key && k != "session_id" => out.push(s.clone()),
                    Value::Array(items) if id_key => {
                        out.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
                    }
                    _ => collect_ids(val, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_ids(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_in_a_message_get_the_placeholders_of_the_frame() {
        let mut r = Normalizer::default();
        let frame = serde_json::json!({"type": "chat.tool_call", "tool_call_id": "tc-1", "corr": "tc-10"});
        let text = message(&mut r, "corr tc-10 differs from tool_call_id tc-1", &[&frame]);
        assert!(!text.contains("tc-1 ") && !text.contains("tc-10"), "{text}");
        assert!(text.contains("[tool_call:"), "{text}");
        assert_eq!(replace_whole("a tc-1x tc-1.5 tc-1.", "tc-1", "X"), "a tc-1x tc-1.5 X.");
        assert_eq!(replace_whole("a tc-1, (tc-1)", "tc-1", "X"), "a X, (X)");
    }
}
