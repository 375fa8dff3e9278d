//! `Usage` (since 1.3, capability and feature `usage`): what a run slice used, and the sums the
//! state keeps of it.
//!
//! Spec: `spec/usage.md`, reducer rules `STATE-056`, `STATE-057`, refusals `STATE-059`,
//! `STATE-063`. A run slice reports its usage on its `chat.run_complete`; the state sums it for the
//! whole session (`total`, never lowered) and per invocation the effective state holds
//! (`invocations`). Integers add exactly within ±(2^53 − 1); amounts add as decimals.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Id;

/// The shape of [`Cost::amount`]: a non-negative decimal without sign or exponent.
pub const AMOUNT_PATTERN: &str = "^(0|[1-9][0-9]{0,30})(\\.[0-9]{1,18})?$";

/// The shape of [`Cost::currency`]: an ISO 4217 code.
pub const CURRENCY_PATTERN: &str = "^[A-Z]{3}$";

/// What a run slice used (or a sum of such).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.3"))]
pub struct Usage {
    /// Tokens the model read.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub input_tokens: u64,
    /// Tokens the model wrote.
    #[serde(deserialize_with = "crate::serde_util::integer")]
    pub output_tokens: u64,
    /// Of the tokens written, those spent reasoning, when the model reports them.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub reasoning_tokens: Option<u64>,
    /// Of the tokens read, those served from a cache, when the model reports them.
    #[serde(
        default,
        deserialize_with = "crate::serde_util::optional_integer",
        skip_serializing_if = "Option::is_none"
    )]
    pub cached_input_tokens: Option<u64>,
    /// What it cost, when the server knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// A price: a decimal amount in one currency.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// A non-negative decimal string without sign or exponent, e.g. `"0.0123"`.
    #[schemars(regex(pattern = AMOUNT_PATTERN))]
    #[serde(deserialize_with = "amount")]
    pub amount: String,
    /// The ISO 4217 code of the currency, e.g. `"USD"`; one per session (`USAGE-002`).
    #[schemars(regex(pattern = CURRENCY_PATTERN))]
    #[serde(deserialize_with = "currency")]
    pub currency: String,
}

/// What the state holds of usage (since 1.3, `state.usage`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("x-chatwire-since" = "1.3"))]
pub struct UsageState {
    /// Every run slice of the session ever completed with usage, summed; never lowered.
    pub total: Usage,
    /// Per invocation the state holds, its run slices' usage summed.
    pub invocations: BTreeMap<Id, Usage>,
}

/// Why usage cannot be added.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    /// The cost names another currency than the sum's (`STATE-059`).
    #[error("cost in {found} added to a sum in {expected}")]
    CurrencyMismatch {
        /// The sum's currency.
        expected: String,
        /// The added cost's.
        found: String,
    },
    /// A sum would leave ±(2^53 − 1) (`STATE-063`).
    #[error("a usage sum exceeds 2^53 - 1")]
    Overflow,
}

impl Usage {
    /// `self + other`, member by member; a member present in either term is present in the sum.
    pub fn plus(&self, other: &Usage) -> Result<Usage, UsageError> {
        let cost = match (&self.cost, &other.cost) {
            (Some(a), Some(b)) => Some(a.plus(b)?),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Ok(Usage {
            input_tokens: add(self.input_tokens, other.input_tokens)?,
            output_tokens: add(self.output_tokens, other.output_tokens)?,
            reasoning_tokens: add_optional(self.reasoning_tokens, other.reasoning_tokens)?,
            cached_input_tokens: add_optional(self.cached_input_tokens, other.cached_input_tokens)?,
            cost,
        })
    }
}

impl Cost {
    /// `self + other` in one currency, the amount keeping the most fractional digits of its terms.
    pub fn plus(&self, other: &Cost) -> Result<Cost, UsageError> {
        if self.currency != other.currency {
            return Err(UsageError::CurrencyMismatch {
                expected: self.currency.clone(),
                found: other.currency.clone(),
            });
        }
        Ok(Cost { amount: add_decimals(&self.amount, &other.amount), currency: self.currency.clone() })
    }
}

impl UsageState {
    /// Adds one run slice's usage of `invocation` (`STATE-056`); on error nothing changes.
    pub fn add(&mut self, invocation: &Id, usage: &Usage) -> Result<(), UsageError> {
        let total = self.total.plus(usage)?;
        let entry = match self.invocations.get(invocation) {
            Some(sum) => sum.plus(usage)?,
            None => usage.clone(),
        };
        self.total = total;
        self.invocations.insert(invocation.clone(), entry);
        Ok(())
    }

    /// The sums after `usage` of `invocation` is added to `state` (absent: the first usage).
    pub fn added(state: Option<&UsageState>, invocation: &Id, usage: &Usage) -> Result<UsageState, UsageError> {
        match state {
            Some(state) => {
                let mut next = state.clone();
                next.add(invocation, usage)?;
                Ok(next)
            }
            None => {
                // The first usage is a sum of one term: checked like every sum.
                let total = Usage::default().plus(usage)?;
                Ok(UsageState { total, invocations: BTreeMap::from([(invocation.clone(), usage.clone())]) })
            }
        }
    }
}

fn add(a: u64, b: u64) -> Result<u64, UsageError> {
    a.checked_add(b).filter(|sum| *sum <= crate::MAX_SAFE_INTEGER as u64).ok_or(UsageError::Overflow)
}

fn add_optional(a: Option<u64>, b: Option<u64>) -> Result<Option<u64>, UsageError> {
    match (a, b) {
        (Some(a), Some(b)) => add(a, b).map(Some),
        (a, b) => Ok(a.or(b)),
    }
}

/// The sum of two amounts of [`AMOUNT_PATTERN`], exactly, with the most fractional digits of the
/// two (`"0.01"` + `"0.0123"` = `"0.0223"`, `"1"` + `"2"` = `"3"`).
pub fn add_decimals(a: &str, b: &str) -> String {
    let (a_int, a_frac) = a.split_once('.').unwrap_or((a, ""));
    let (b_int, b_frac) = b.split_once('.').unwrap_or((b, ""));
    let scale = a_frac.len().max(b_frac.len());
    // Both as one digit string each, scaled to the same number of fractional digits.
    let digits = |int: &str, frac: &str| format!("{int}{frac}{}", "0".repeat(scale - frac.len()));
    let (x, y) = (digits(a_int, a_frac), digits(b_int, b_frac));
    let width = x.len().max(y.len());
    let (x, y) = (format!("{x:0>width$}"), format!("{y:0>width$}"));
    let mut out = Vec::with_capacity(width + 1);
    let mut carry = 0;
    for (dx, dy) in x.bytes().rev().zip(y.bytes().rev()) {
        let sum = (dx - b'0') + (dy - b'0') + carry;
        out.push(b'0' + sum % 10);
        carry = sum / 10;
    }
    if carry > 0 {
        out.push(b'0' + carry);
    }
    out.reverse();
    let all = String::from_utf8(out).unwrap_or_default();
    let (int, frac) = all.split_at(all.len() - scale);
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    if scale == 0 {
        int.to_owned()
    } else {
        format!("{int}.{frac}")
    }
}

fn matches_amount(s: &str) -> bool {
    let (int, frac) = match s.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (s, None),
    };
    let int_ok = !int.is_empty()
        && int.len() <= 31
        && int.bytes().all(|b| b.is_ascii_digit())
        && (int == "0" || !int.starts_with('0'));
    let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.len() <= 18 && f.bytes().all(|b| b.is_ascii_digit()));
    int_ok && frac_ok
}

fn amount<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if !matches_amount(&s) {
        return Err(serde::de::Error::custom(format!("amount {s:?} is not a non-negative decimal without exponent")));
    }
    Ok(s)
}

fn currency<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.len() != 3 || !s.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(serde::de::Error::custom(format!("currency {s:?} is not an ISO 4217 code")));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cost: Option<(&str, &str)>) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cost: cost.map(|(amount, currency)| Cost { amount: amount.into(), currency: currency.into() }),
            ..Usage::default()
        }
    }

    #[test]
    fn amounts_add_exactly_as_decimals() {
        for (a, b, sum) in [
            ("0.01", "0.0123", "0.0223"),
            ("1", "2", "3"),
            ("0.5", "0.5", "1.0"),
            ("9.99", "0.01", "10.00"),
            ("0", "0", "0"),
            ("12", "0.001", "12.001"),
            ("999999999999999999", "1", "1000000000000000000"),
        ] {
            assert_eq!(add_decimals(a, b), sum, "{a} + {b}");
            assert_eq!(add_decimals(b, a), sum, "{b} + {a}");
            assert!(matches_amount(sum));
        }
        for bad in ["", "-1", "1e3", "01", ".5", "5.", "1.2.3", "+1", " 1"] {
            assert!(!matches_amount(bad), "{bad}");
        }
    }

    #[test]
    fn sums_keep_every_member_and_refuse_a_second_currency_or_an_overflow() {
        let mut state =
            UsageState::added(None, &Id::parse("inv-1").unwrap(), &usage(10, 2, Some(("0.01", "USD")))).unwrap();
        let both = Usage { reasoning_tokens: Some(5), ..usage(1, 1, None) };
        state.add(&Id::parse("inv-2").unwrap(), &both).unwrap();
        assert_eq!(state.total.input_tokens, 11);
        assert_eq!(state.total.reasoning_tokens, Some(5));
        assert_eq!(state.total.cost.as_ref().map(|c| c.amount.as_str()), Some("0.01"));
        assert_eq!(state.invocations.len(), 2);
        let before = state.clone();
        let euros = usage(1, 1, Some(("0.01", "EUR")));
        assert!(matches!(state.add(&Id::parse("inv-2").unwrap(), &euros), Err(UsageError::CurrencyMismatch { .. })));
        let huge = usage(crate::MAX_SAFE_INTEGER as u64, 0, None);
        assert_eq!(state.add(&Id::parse("inv-2").unwrap(), &huge), Err(UsageError::Overflow));
        assert_eq!(state, before, "a refused addition changes nothing");
    }

    #[test]
    fn malformed_amounts_and_currencies_do_not_parse() {
        let ok = r#"{"input_tokens": 1, "output_tokens": 2, "cost": {"amount": "0.0123", "currency": "USD"}}"#;
        assert!(serde_json::from_str::<Usage>(ok).is_ok());
        for bad in [
            r#"{"input_tokens": 1, "output_tokens": 2, "cost": {"amount": "1e-3", "currency": "USD"}}"#,
            r#"{"input_tokens": 1, "output_tokens": 2, "cost": {"amount": "1", "currency": "usd"}}"#,
            r#"{"input_tokens": -1, "output_tokens": 2}"#,
            r#"{"input_tokens": 9007199254740992, "output_tokens": 2}"#,
            r#"{"input_tokens": 1}"#,
        ] {
            assert!(serde_json::from_str::<Usage>(bad).is_err(), "{bad}");
        }
    }
}
