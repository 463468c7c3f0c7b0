//! Outgoing events (see docs/behaviour.md, Events): numbered, timed, caused facts about a pane.
//! Only `emit_events` makes them.

use crate::components::{Cause, Flag, LifecycleState};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// A gap-free global event number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct EventSeq(pub u64);

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The lifecycle moved (labels ride along).
    Lifecycle {
        /// Before.
        from: LifecycleState,
        /// After.
        to: LifecycleState,
        /// The pane's labels after the change.
        labels: Vec<String>,
    },
    /// An attention flag was raised or withdrawn.
    Attention {
        /// Which flag.
        flag: Flag,
        /// Raised (true) or withdrawn (false).
        raised: bool,
    },
    /// Labels changed without a lifecycle change.
    Labels {
        /// The new labels.
        labels: Vec<String>,
    },
}

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Its number.
    pub seq: EventSeq,
    /// When (the tick's wall time).
    pub time: SystemTime,
    /// Which pane.
    pub pane: Arc<str>,
    /// Why.
    pub cause: Option<Cause>,
    /// What.
    pub change: Change,
}

/// Formats a time as RFC 3339 UTC with milliseconds (`2026-11-30T17:25:37.123Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(i64::try_from(days).unwrap_or(0));
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Reads `YYYY-MM-DDTHH:MM:SS[.fff]Z` (the only shape the wire uses).
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<u64>().ok());
    let (h, min, s) = (t.next()??, t.next()??, t.next()??);
    let millis: u64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm), valid for the proleptic Gregorian calendar.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe - 719_468).ok()?;
    let secs = days * 86_400 + h * 3600 + min * 60 + s;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_utc_millis() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_059_537_123);
        assert_eq!(rfc3339(t), "2026-11-30T17:25:37.123Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }
}
