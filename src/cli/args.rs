//! The values the command line reads: a note's content (an argument, or
//! stdin), durations ("90s", "15m", "2h", "7d") and times ("since 2h").

use std::io::{IsTerminal, Read};

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::UsageError;

pub(super) fn content_arg(arg: Option<String>) -> anyhow::Result<String> {
    match arg.as_deref() {
        Some("-") | None => {
            if arg.is_none() && std::io::stdin().is_terminal() {
                return Err(UsageError(
                    "no content: give it as an argument (pad note \"…\") or pipe it in".into(),
                )
                .into());
            }
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s)?;
            // `echo … | pad note` adds a newline nobody wrote on purpose.
            Ok(s.trim_end_matches(['\n', '\r']).to_string())
        }
        Some(text) => Ok(text.to_string()),
    }
}

/// One of a protocol enum's words (a kind, a status, a mode…), or a usage
/// error naming the flag and the words it takes.
pub(super) fn word<T: DeserializeOwned>(flag: &str, s: &str) -> anyhow::Result<T> {
    serde_json::from_value(Value::String(s.to_owned()))
        .map_err(|e| UsageError(format!("{flag} '{s}': {e}")).into())
}

/// "90s", "15m", "2h", "7d" or plain seconds.
pub(super) fn duration_secs(s: &str) -> anyhow::Result<i64> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = num
        .parse()
        .map_err(|_| UsageError(format!("'{s}' is not a duration; write 90s, 15m, 2h or 7d")))?;
    let mult = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        _ => {
            return Err(
                UsageError(format!("'{s}': unknown unit '{unit}'; use s, m, h or d")).into(),
            )
        }
    };
    Ok(n * mult)
}

pub(super) fn since_arg(s: &str) -> anyhow::Result<String> {
    if s.contains('T') {
        return Ok(s.to_string());
    }
    let secs = duration_secs(s)?;
    Ok(crate::model::fmt_time(
        crate::clock::system_now_ms() - secs * 1000,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(duration_secs("90").unwrap(), 90);
        assert_eq!(duration_secs("15m").unwrap(), 900);
        assert_eq!(duration_secs("2h").unwrap(), 7200);
        assert_eq!(duration_secs("7d").unwrap(), 604800);
        assert!(duration_secs("soon").is_err());
        assert!(duration_secs("3w").is_err());
    }
}
