//! Durations as people write them on the command line and in `config.toml`: `500ms`, `30s`,
//! `3m`, `1h`, `2d`, or a bare number of seconds. One grammar for every option and setting.

use std::time::Duration;

/// Parses a duration; the error says what was expected.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = text
        .find(|c: char| !c.is_ascii_digit())
        .map_or((text, "s"), |i| text.split_at(i));
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 30s, 500ms or 3m"))?;
    let secs = |per: u64| {
        n.checked_mul(per)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("`{text}` is too long"))
    };
    match unit.trim() {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => secs(1),
        "m" => secs(60),
        "h" => secs(3600),
        "d" => secs(86_400),
        _ => Err(format!("`{text}`: the unit must be ms, s, m, h or d")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_bare_seconds() {
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(172_800)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("3y").is_err());
        assert!(parse_duration("99999999999999999999d").is_err());
    }
}
