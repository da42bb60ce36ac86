//! The one ISO 8601 grammar closegate reads and writes, with jiff's calendar: the status document's
//! `updated` (SPEC §2), the ISO-style dates git takes in `GIT_AUTHOR_DATE`/`GIT_COMMITTER_DATE`,
//! and `closegate log --since`.
//!
//! ```text
//! date-time = date [ sep time ]
//! date      = YYYY "-" MM "-" DD                    a day that exists (jiff: no 2023-02-29)
//! time      = HH ":" MM [ ":" SS [ "." digit+ ] ] [ spaces ] [ zone ]
//!                                                   HH 00–23, MM 00–59, SS 00–60
//! zone      = "Z" | sign HH [ [ ":" ] MM ]          HH 00–23, MM 00–59
//! ```
//!
//! Time stamps are written ([`rfc3339`]) in the strict form: `2026-11-29T20:41:36Z`.
//!
//! Extended format only (no `20260902`). Two forms of it: [`Form::Strict`] (ISO 8601 itself, the
//! status document's): `sep` is `T`, no spaces before the zone, `Z` upper case. [`Form::Lenient`]
//! (what git and a person on the command line write): `sep` is also `t` or a space, spaces may
//! stand before the zone, and `z` is `Z`. No zone is UTC. A fraction of a second is read and
//! dropped: every instant here is in whole seconds.
//!
//! And the one way a length of time is written for people ([`duration`]): jiff's friendly
//! format (`850ms`, `12.3s`, `2d`), at the grain the reader needs.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jiff::fmt::friendly::{FractionalUnit, SpanPrinter};
use jiff::{RoundMode, Span, SpanRound, Unit};

/// Which form of the grammar to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// ISO 8601's extended format: `2026-09-02`, `2026-09-02T14:05:09+02:00`.
    Strict,
    /// Also `2026-09-02 14:05:09 +0200` and `2026-09-02t14:05z`.
    Lenient,
}

/// A date or date-time read: the instant in seconds since the epoch (UTC), and the offset it was
/// written in (minutes east of UTC; 0 when it named none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instant {
    pub seconds: i64,
    pub offset_minutes: i32,
}

/// Whether `text` is a date or date-time in the strict form (the status document's `updated`).
pub fn is_iso8601(text: &str) -> bool {
    parse(text, Form::Strict).is_some()
}

/// Read `text` as the grammar of the module doc in `form`; `None` for anything else.
pub fn parse(text: &str, form: Form) -> Option<Instant> {
    let b = text.as_bytes();
    let days = date(b.get(..10)?)?;
    let Some(&sep) = b.get(10) else {
        return Some(Instant {
            seconds: days * 86_400,
            offset_minutes: 0,
        });
    };
    let separates = match form {
        Form::Strict => sep == b'T',
        Form::Lenient => matches!(sep, b'T' | b't' | b' '),
    };
    if !separates {
        return None;
    }
    let (clock, rest) = time(&b[11..])?;
    let rest = match form {
        Form::Strict => rest,
        Form::Lenient => rest.trim_ascii_start(),
    };
    let offset_minutes = zone(rest, form)?;
    Some(Instant {
        seconds: days * 86_400 + clock - i64::from(offset_minutes) * 60,
        offset_minutes,
    })
}

/// Days since 1970-01-01 of a proleptic Gregorian date, through jiff's calendar; `None` for a
/// date that does not exist (month 13, February 30th) or lies past jiff's years ±9999.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> Option<i64> {
    let date = jiff::civil::Date::new(
        i16::try_from(year).ok()?,
        i8::try_from(month).ok()?,
        i8::try_from(day).ok()?,
    )
    .ok()?;
    let since = date.duration_since(jiff::civil::date(1970, 1, 1));
    Some(since.as_secs().div_euclid(86_400))
}

/// The current time as RFC 3339 UTC with second precision, e.g. `2026-11-29T20:41:36Z`.
pub fn now_rfc3339() -> String {
    let secs = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX),
    };
    rfc3339(secs)
}

/// Seconds since the Unix epoch as RFC 3339 UTC, e.g. `951782400` → `2000-02-29T00:00:00Z`
/// (through jiff's calendar; an instant past jiff's years ±9999 is shown as that limit).
pub fn rfc3339(unix_secs: i64) -> String {
    let at = jiff::Timestamp::from_second(unix_secs).unwrap_or(if unix_secs < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    });
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// How finely [`duration`] writes a length of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grain {
    /// Milliseconds below a second, else seconds to the tenth (half a tenth rounds up): `850ms`,
    /// `12.3s`, `75.0s`. How long a check ran.
    Tenths,
    /// The largest unit that is not zero, up to days, the rest cut off: `42s`, `5m`, `3h`, `2d`.
    /// How long something has been idle, how long ago.
    Largest,
}

/// The longest span jiff holds, in seconds (about 20,000 years): anything longer is shown as it.
const MOST_SECONDS: u64 = 631_107_417_600;

/// `d` for people, in jiff's friendly format (compact designators) at `grain`.
pub fn duration(d: Duration, grain: Grain) -> String {
    let secs = d.as_secs().min(MOST_SECONDS);
    match grain {
        Grain::Tenths if secs == 0 => {
            static MILLIS: SpanPrinter = SpanPrinter::new().zero_unit(Unit::Millisecond);
            MILLIS.span_to_string(&Span::new().milliseconds(d.subsec_millis()))
        }
        Grain::Tenths => {
            static TENTHS: SpanPrinter = SpanPrinter::new()
                .fractional(Some(FractionalUnit::Second))
                .precision(Some(1));
            let ms = (secs * 1000 + u64::from(d.subsec_millis())).min(MOST_SECONDS * 1000);
            let span = Span::new().milliseconds(ms as i64);
            let tenths = SpanRound::new().smallest(Unit::Millisecond).increment(100);
            TENTHS.span_to_string(&span.round(tenths).unwrap_or(span))
        }
        Grain::Largest => {
            let span = Span::new().seconds(secs as i64);
            let cut = |unit| {
                let round = SpanRound::new().largest(unit).smallest(unit);
                span.round(round.mode(RoundMode::Trunc).days_are_24_hours())
                    .ok()
            };
            let largest = [Unit::Day, Unit::Hour, Unit::Minute]
                .into_iter()
                .filter_map(cut)
                .find(|cut| !cut.is_zero());
            SpanPrinter::new().span_to_string(&largest.unwrap_or(span))
        }
    }
}

/// The number written in ASCII digits `b` (at least one).
fn digits(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 9 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, d| n * 10 + i64::from(d - b'0')))
}

/// `YYYY-MM-DD`, as days since the epoch.
fn date(b: &[u8]) -> Option<i64> {
    if b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    days_from_civil(digits(&b[..4])?, digits(&b[5..7])?, digits(&b[8..10])?)
}

/// `HH:MM[:SS[.digits]]`: the seconds into the day, and what follows.
fn time(b: &[u8]) -> Option<(i64, &[u8])> {
    let (hh, mm) = (digits(b.get(..2)?)?, digits(b.get(3..5)?)?);
    if b[2] != b':' || hh > 23 || mm > 59 {
        return None;
    }
    let mut clock = hh * 3600 + mm * 60;
    let mut rest = &b[5..];
    if rest.first() == Some(&b':') {
        let ss = digits(rest.get(1..3)?).filter(|s| *s <= 60)?;
        clock += ss;
        rest = &rest[3..];
        if rest.first() == Some(&b'.') {
            let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return None;
            }
            rest = &rest[1 + n..];
        }
    }
    Some((clock, rest))
}

/// Nothing (UTC), `Z`, `±HH`, `±HH:MM` or `±HHMM`: minutes east of UTC.
fn zone(b: &[u8], form: Form) -> Option<i32> {
    let sign = match b.first() {
        None => return Some(0),
        Some(b'Z') if b.len() == 1 => return Some(0),
        Some(b'z') if b.len() == 1 && form == Form::Lenient => return Some(0),
        Some(b'+') => 1,
        Some(b'-') => -1,
        Some(_) => return None,
    };
    let (hh, mm) = match b.len() {
        3 => (&b[1..3], &b"00"[..]),
        5 => (&b[1..3], &b[3..5]),
        6 if b[3] == b':' => (&b[1..3], &b[4..6]),
        _ => return None,
    };
    let (hh, mm) = (digits(hh)?, digits(mm)?);
    if hh > 23 || mm > 59 {
        return None;
    }
    i32::try_from(hh * 60 + mm).ok().map(|m| sign * m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_s_duration_is_milliseconds_below_a_second_else_tenths_of_seconds() {
        let ms = |n| duration(Duration::from_millis(n), Grain::Tenths);
        assert_eq!(ms(0), "0ms");
        assert_eq!(ms(850), "850ms");
        assert_eq!(ms(999), "999ms");
        assert_eq!(ms(1000), "1.0s");
        assert_eq!(ms(1234), "1.2s");
        assert_eq!(ms(1249), "1.2s");
        assert_eq!(ms(1250), "1.3s");
        assert_eq!(ms(9960), "10.0s");
        assert_eq!(ms(75_000), "75.0s", "seconds stay the largest unit");
        assert_eq!(ms(3_700_040), "3700.0s");
        let most = duration(Duration::MAX, Grain::Tenths);
        assert_eq!(most, format!("{MOST_SECONDS}.0s"));
    }

    #[test]
    fn an_idle_time_is_its_largest_unit_cut_down() {
        let secs = |n| duration(Duration::from_secs(n), Grain::Largest);
        assert_eq!(secs(0), "0s");
        assert_eq!(secs(59), "59s");
        assert_eq!(secs(60), "1m");
        assert_eq!(secs(3599), "59m");
        assert_eq!(secs(3600), "1h");
        assert_eq!(secs(7300), "2h");
        assert_eq!(secs(86_399), "23h");
        assert_eq!(secs(86_400), "1d");
        assert_eq!(secs(3 * 86_400 + 5000), "3d");
        assert_eq!(secs(40 * 86_400), "40d", "days are the largest unit");
        let sub = duration(Duration::from_millis(59_999), Grain::Largest);
        assert_eq!(sub, "59s", "a fraction of a second is cut off");
        let most = duration(Duration::MAX, Grain::Largest);
        assert_eq!(most, format!("{}d", MOST_SECONDS / 86_400));
    }

    fn strict(text: &str) -> bool {
        parse(text, Form::Strict).is_some()
    }

    fn secs(text: &str) -> Option<i64> {
        parse(text, Form::Lenient).map(|i| i.seconds)
    }

    #[test]
    fn the_strict_form_takes_iso_8601_dates_and_date_times() {
        for ok in [
            "2026-09-02",
            "2024-02-29",
            "2026-09-02T14:05",
            "2026-09-02T14:05:09",
            "2026-09-02T14:05:09.123Z",
            "2026-09-02T14:05:09+02:00",
            "2026-09-02T14:05-0530",
            "2026-09-02T14:05:60Z",
            "2026-09-02T23:59+01",
        ] {
            assert!(strict(ok), "{ok}");
        }
    }

    #[test]
    fn the_strict_form_refuses_everything_else() {
        for bad in [
            "",
            "yesterday",
            "2026-9-2",
            "2026-13-01",
            "2023-02-29",
            "2026-04-31",
            "2026-09-02 14:05",
            "2026-09-02t14:05",
            "2026-09-02T14:05z",
            "2026-09-02T14:05 Z",
            "2026-09-02T24:00",
            "2026-09-02T14:5",
            "2026-09-02T14",
            "2026-09-02T14:05:09.",
            "2026-09-02T14:05Zjunk",
            "2026-09-02T14:05+2:00",
            "2026-09-02T14:05+24:00",
            "2026/09/02",
            "20260902",
            "２０２６-09-02",
            "2026-09-02T１4:05",
        ] {
            assert!(!strict(bad), "{bad}");
        }
    }

    #[test]
    fn the_lenient_form_reads_what_git_and_people_write() {
        assert_eq!(secs("1970-01-02"), Some(86_400));
        let want = Some(1_764_752_804);
        for same in [
            "2025-12-03T09:06:44Z",
            "2025-12-03 09:06:44 +0000",
            "2025-12-03t10:06:44+01:00",
            "2025-12-03 10:06:44.999 +0100",
            "2025-12-03T04:06:44-05",
            "2025-12-03T09:06:44.5z",
        ] {
            assert_eq!(secs(same), want, "{same}");
        }
        assert_eq!(
            secs("2026-11-29T14:05"),
            Some(secs("2026-11-29").unwrap() + 50_700)
        );
        let offset = parse("2025-12-03T10:06:44+01:00", Form::Lenient).unwrap();
        assert_eq!(offset.offset_minutes, 60);
        let west = parse("2025-12-03 03:36:44 -05:30", Form::Lenient).unwrap();
        assert_eq!((west.seconds, west.offset_minutes), (1_764_752_804, -330));
        for bad in [
            "2026-02-30",
            "2026-11-29T24:00",
            "2026-11-29T14",
            "29-11-2026",
            "x",
            "2026-11-29_14:05",
        ] {
            assert_eq!(secs(bad), None, "{bad}");
        }
    }

    #[test]
    fn days_are_jiffs_calendar() {
        assert_eq!(days_from_civil(1970, 1, 1), Some(0));
        assert_eq!(days_from_civil(1969, 12, 31), Some(-1));
        assert_eq!(days_from_civil(2000, 3, 1), Some(11_017));
        assert_eq!(days_from_civil(2023, 2, 29), None);
        assert_eq!(days_from_civil(10_000, 1, 1), None);
    }

    #[test]
    fn civil_conversion_at_known_instants() {
        let cases = [
            (0, "1970-01-01T00:00:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (68_169_600, "1972-02-29T00:00:00Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (951_868_800, "2000-03-01T00:00:00Z"),
            (978_307_199, "2000-12-31T23:59:59Z"),
            (1_700_000_000, "2023-11-14T22:13:20Z"),
            (1_709_164_800, "2024-02-29T00:00:00Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"),
            (1_956_343_296, "2031-12-29T20:41:36Z"),
        ];
        for (secs, want) in cases {
            assert_eq!(rfc3339(secs), want, "at {secs}");
        }
    }

    #[test]
    fn year_2100_is_not_a_leap_year() {
        // 2100-02-28T00:00:00Z plus one day is March 1st.
        assert_eq!(rfc3339(4_107_456_000), "2100-02-28T00:00:00Z");
        assert_eq!(rfc3339(4_107_456_000 + 86_400), "2100-03-01T00:00:00Z");
    }
}
