//! Frames and values as short text: excerpts cut to a length, and the differences between two
//! JSON values line by line.

use serde_json::Value;

/// A compact one-line rendering of a value, cut to about `max` characters.
pub fn excerpt(value: &Value, max: usize) -> String {
    truncate(&value.to_string(), max)
}

/// Cuts `s` to at most `max` characters, marking the cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}… ({} bytes in all)", s.len())
    }
}

/// Differences between two JSON values as `path: expected X, got Y` lines (at most `max`).
pub fn json_diff(expected: &Value, actual: &Value, max: usize) -> Vec<String> {
    let mut out = Vec::new();
    diff_into(expected, actual, &mut String::new(), &mut out, max);
    out
}

fn diff_into(expected: &Value, actual: &Value, path: &mut String, out: &mut Vec<String>, max: usize) {
    if out.len() >= max || expected == actual {
        return;
    }
    let show = |v: &Value| excerpt(v, 100);
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                let len = path.len();
                path.push('/');
                path.push_str(k);
                match a.get(k) {
                    Some(av) => diff_into(ev, av, path, out, max),
                    None if out.len() < max => out.push(format!("{path}: expected {}, missing", show(ev))),
                    None => {}
                }
                path.truncate(len);
            }
            for (k, av) in a {
                if !e.contains_key(k) && out.len() < max {
                    out.push(format!("{path}/{k}: unexpected {}", show(av)));
                }
            }
        }
        (Value::Array(e), Value::Array(a)) => {
            for (i, (ev, av)) in e.iter().zip(a).enumerate() {
                let len = path.len();
                path.push_str(&format!("/{i}"));
                diff_into(ev, av, path, out, max);
                path.truncate(len);
            }
            if e.len() != a.len() && out.len() < max {
                out.push(format!("{}: expected {} element(s), got {}", display(path), e.len(), a.len()));
            }
        }
        _ => out.push(format!("{}: expected {}, got {}", display(path), show(expected), show(actual))),
    }
}

fn display(path: &str) -> &str {
    if path.is_empty() {
        "/"
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_diff_names_paths() {
        let diff = json_diff(&json!({"a": [1, 2], "b": "x"}), &json!({"a": [1, 3], "c": true}), 10);
        assert!(diff.contains(&"/a/1: expected 2, got 3".to_owned()), "{diff:?}");
        assert!(diff.iter().any(|l| l.starts_with("/b: expected \"x\", missing")), "{diff:?}");
        assert!(diff.iter().any(|l| l.starts_with("/c: unexpected true")), "{diff:?}");
    }
}
