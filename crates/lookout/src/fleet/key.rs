//! Key tokens for the fleet bucket (see docs/fleet.md): a machine id or a pane id turned into one NATS
//! subject token (`[A-Za-z0-9_-]`, never empty), and back. Pure.
//!
//! Every other byte is written `=XX` (two upper-case hex digits), so `tmux:ab12:%3` becomes
//! `tmux=3Aab12=3A=253`; `=` itself is escaped, so the mapping is one-to-one and reversible. The
//! empty id is the lone token `=`. A key is `<machine token>.<pane token>`.

/// `id` as one key token.
pub fn escape(id: &str) -> String {
    if id.is_empty() {
        return "=".into();
    }
    let mut out = String::with_capacity(id.len());
    for byte in id.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("={byte:02X}"));
        }
    }
    out
}

/// The id a token stands for; `None` for a token `escape` never makes.
pub fn unescape(token: &str) -> Option<String> {
    if token == "=" {
        return Some(String::new());
    }
    let bytes = token.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' {
            let hex = token.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The bucket key of `pane` on `machine`.
pub fn pane_key(machine: &str, pane: &str) -> String {
    format!("{}.{}", escape(machine), escape(pane))
}

/// `(machine, pane)` from a bucket key; `None` for a key lookout does not write.
pub fn split_key(key: &str) -> Option<(String, String)> {
    let (machine, pane) = key.split_once('.')?;
    Some((unescape(machine)?, unescape(pane)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_round_trips_through_a_valid_token() {
        for id in [
            "",
            "p1",
            "tmux:ab12:%3",
            "a.b",
            "=",
            "x y/z",
            "é",
            "run-1_2",
            "=3A",
        ] {
            let token = escape(id);
            assert!(!token.is_empty());
            assert!(
                token
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-=".contains(&b)),
                "{token}"
            );
            assert_eq!(unescape(&token).as_deref(), Some(id), "{id} → {token}");
        }
        assert_eq!(escape("tmux:ab12:%3"), "tmux=3Aab12=3A=253");
    }

    #[test]
    fn keys_split_back_into_machine_and_pane() {
        let key = pane_key("dev.box", "tmux:a:%1");
        assert_eq!(key.matches('.').count(), 1, "{key}");
        assert_eq!(
            split_key(&key),
            Some(("dev.box".to_owned(), "tmux:a:%1".to_owned()))
        );
        assert_eq!(split_key("nodot"), None);
        assert_eq!(split_key("m.=Z"), None);
        assert_eq!(split_key("m.=4"), None);
    }
}
