//! A small ISO 8601 validator for `updated` (SPEC §2): a calendar date `YYYY-MM-DD`, or a
//! date-time `YYYY-MM-DDTHH:MM[:SS[.fraction]][Z|±HH[:MM]|±HHMM]`. Extended format only.

/// Whether `text` is an ISO 8601 date or date-time.
pub fn is_iso8601(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 10 || !date(&b[..10]) {
        return false;
    }
    match b.get(10) {
        None => true,
        Some(b'T') => time(&b[11..]),
        Some(_) => false,
    }
}

fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0')))
}

fn date(b: &[u8]) -> bool {
    if b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&b[..4]), digits(&b[5..7]), digits(&b[8..10])) else {
        return false;
    };
    // The calendar is jiff's: a date that does not exist (month 13, February 30th) is no date.
    let (Ok(y), Ok(m), Ok(d)) = (i16::try_from(y), i8::try_from(m), i8::try_from(d)) else {
        return false;
    };
    jiff::civil::Date::new(y, m, d).is_ok()
}

/// `HH:MM[:SS[.f+]]` then an optional zone.
fn time(b: &[u8]) -> bool {
    if b.len() < 5 || b[2] != b':' {
        return false;
    }
    let (Some(h), Some(min)) = (digits(&b[..2]), digits(&b[3..5])) else {
        return false;
    };
    if h > 23 || min > 59 {
        return false;
    }
    let mut rest = &b[5..];
    if rest.first() == Some(&b':') {
        match rest.get(1..3).and_then(digits) {
            Some(s) if s <= 60 => rest = &rest[3..],
            _ => return false,
        }
        if rest.first() == Some(&b'.') {
            let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return false;
            }
            rest = &rest[1 + n..];
        }
    }
    zone(rest)
}

/// Empty (local time), `Z`, `±HH`, `±HH:MM` or `±HHMM`.
fn zone(b: &[u8]) -> bool {
    match b.first() {
        None => true,
        Some(b'Z') => b.len() == 1,
        Some(b'+' | b'-') => {
            let (hh, mm) = match b.len() {
                3 => (&b[1..3], &b"00"[..]),
                5 => (&b[1..3], &b[3..5]),
                6 if b[3] == b':' => (&b[1..3], &b[4..6]),
                _ => return false,
            };
            matches!((digits(hh), digits(mm)), (Some(h), Some(m)) if h <= 23 && m <= 59)
        }
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::is_iso8601;

    #[test]
    fn accepts_dates_and_date_times() {
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
            assert!(is_iso8601(ok), "{ok}");
        }
    }

    #[test]
    fn refuses_everything_else() {
        for bad in [
            "",
            "yesterday",
            "2026-9-2",
            "2026-13-01",
            "2023-02-29",
            "2026-04-31",
            "2026-09-02 14:05",
            "2026-09-02T24:00",
            "2026-09-02T14:5",
            "2026-09-02T14:05:09.",
            "2026-09-02T14:05Zjunk",
            "2026-09-02T14:05+2:00",
            "2026/09/02",
            "２０２６-09-02",
        ] {
            assert!(!is_iso8601(bad), "{bad}");
        }
    }
}
