//! Who a commit closegate writes is by (SPEC §26.2): author and committer taken as git takes them —
//! `GIT_AUTHOR_*` and `GIT_COMMITTER_*` first, then `author.*` / `committer.*` and `user.*` from
//! the configuration, then the system's account name and `user@host` (git's own default, refused
//! under `user.useConfigOnly`) — never a made-up identity. A CI job that sets its identity in the
//! environment sees it on every `land` commit.
//!
//! Dates: `GIT_AUTHOR_DATE` / `GIT_COMMITTER_DATE` in git's internal form (`@1700000000 +0100` or
//! `1700000000 +0100`), ISO 8601 (`2026-12-03T09:06:44Z`, `2026-12-03 09:06:44 +01:00`) or
//! RFC 2822 (`Thu, 03 Dec 2026 09:06:44 +0000`); anything else is an error naming the variable.

use anyhow::{Result, bail};
use git2::{Signature, Time};

use super::Repo;

/// Which of the two identities of a commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Author,
    Committer,
}

impl Role {
    fn env(self, what: &str) -> String {
        let role = match self {
            Role::Author => "AUTHOR",
            Role::Committer => "COMMITTER",
        };
        format!("GIT_{role}_{what}")
    }

    fn section(self) -> &'static str {
        match self {
            Role::Author => "author",
            Role::Committer => "committer",
        }
    }
}

impl Repo {
    /// The identity git would give `role` on a commit made in this repository now.
    pub fn identity(&self, role: Role) -> Result<Signature<'static>> {
        let config = self.git.config().ok();
        let get = |key: &str| {
            let value = config.as_ref()?.get_string(key).ok()?;
            (!value.is_empty()).then_some(value)
        };
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let name = var(&role.env("NAME"))
            .or_else(|| get(&format!("{}.name", role.section())))
            .or_else(|| get("user.name"));
        let email = var(&role.env("EMAIL"))
            .or_else(|| get(&format!("{}.email", role.section())))
            .or_else(|| get("user.email"))
            .or_else(|| var("EMAIL"));
        let config_only = config
            .as_ref()
            .and_then(|c| c.get_bool("user.useConfigOnly").ok())
            .unwrap_or(false);
        let (name, email) = match (name, email) {
            (Some(name), Some(email)) => (name, email),
            (name, _) if config_only => bail!(
                "no {} identity: user.useConfigOnly is set and {} is not configured; set \
                 user.name and user.email (or {} and {})",
                role.section(),
                if name.is_none() {
                    "user.name"
                } else {
                    "user.email"
                },
                role.env("NAME"),
                role.env("EMAIL")
            ),
            (name, email) => {
                let account = system_account();
                let name = name.unwrap_or_else(|| account.clone());
                let email = email.unwrap_or_else(|| format!("{account}@{}", hostname()));
                (name, email)
            }
        };
        let time = match var(&role.env("DATE")) {
            Some(text) => parse_date(&text).ok_or_else(|| {
                anyhow::anyhow!("{}: cannot read the date {text:?}", role.env("DATE"))
            })?,
            None => now(),
        };
        Signature::new(&name, &email, &time).map_err(|e| {
            anyhow::anyhow!(
                "the {} identity {name:?} <{email}> is not one git accepts: {}",
                role.section(),
                e.message()
            )
        })
    }
}

/// The account name git falls back on: `$USER`, `$LOGNAME`, else the uid's name.
fn system_account() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| format!("uid{}", crate::sys::process::euid()))
}

/// The host name (git's `user@host` default), `localhost` when it cannot be read.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

fn now() -> Time {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    Time::new(secs, 0)
}

/// A date in one of the forms of the module doc.
pub fn parse_date(text: &str) -> Option<Time> {
    let text = text.trim();
    internal(text)
        .or_else(|| iso8601(text))
        .or_else(|| rfc2822(text))
}

/// `@1700000000 +0100`, `1700000000 +0100` or `@1700000000`.
fn internal(text: &str) -> Option<Time> {
    let text = text.strip_prefix('@').unwrap_or(text);
    let mut parts = text.split_whitespace();
    let secs: i64 = parts.next()?.parse().ok()?;
    let offset = match parts.next() {
        Some(zone) => zone_minutes(zone)?,
        None => 0,
    };
    parts.next().is_none().then(|| Time::new(secs, offset))
}

/// The lenient form of the one ISO 8601 grammar ([`crate::date`]): `2025-12-03 09:06:44 +0000`,
/// `2025-12-03T09:06:44Z`; no zone is UTC.
fn iso8601(text: &str) -> Option<Time> {
    let at = crate::date::parse(text, crate::date::Form::Lenient)?;
    Some(Time::new(at.seconds, at.offset_minutes))
}

/// `[Day, ]DD Mon YYYY HH:MM:SS ±HHMM`.
fn rfc2822(text: &str) -> Option<Time> {
    let text = text.split_once(", ").map_or(text, |(_, rest)| rest);
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [day, month, year, time, zone] = parts[..] else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let month = MONTHS.iter().position(|m| month.eq_ignore_ascii_case(m))?;
    let mut t = time.split(':');
    let (hh, mm, ss) = (num(t.next()?)?, num(t.next()?)?, num(t.next()?)?);
    let month = i64::try_from(month).ok()? + 1;
    at(
        num(year)?,
        month,
        num(day)?,
        (hh, mm, ss),
        zone_minutes(zone)?,
    )
}

fn num(text: &str) -> Option<i64> {
    (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// `+0100`, `-05:30`: the offset in minutes east of UTC.
fn zone_minutes(zone: &str) -> Option<i32> {
    let (sign, digits) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    let digits: String = digits.chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..].parse().ok()?;
    (hours < 24 && minutes < 60).then_some(sign * (hours * 60 + minutes))
}

/// The local civil time and its offset as a git time (seconds since the epoch, UTC).
fn at(y: i64, m: i64, d: i64, (hh, mm, ss): (i64, i64, i64), offset: i32) -> Option<Time> {
    let valid = (1..=12).contains(&m) && (1..=31).contains(&d) && hh < 24 && mm < 60 && ss < 61;
    if !valid {
        return None;
    }
    let days = crate::date::days_from_civil(y, m, d)?;
    let local = days * 86_400 + hh * 3600 + mm * 60 + ss;
    Some(Time::new(local - i64::from(offset) * 60, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(t: Time) -> (i64, i32) {
        (t.seconds(), t.offset_minutes())
    }

    #[test]
    fn the_forms_git_reads() {
        let want = (1_764_752_804, 0);
        assert_eq!(pair(parse_date("@1764752804 +0000").unwrap()), want);
        assert_eq!(pair(parse_date("1764752804 +0000").unwrap()), want);
        assert_eq!(pair(parse_date("2025-12-03T09:06:44Z").unwrap()), want);
        assert_eq!(pair(parse_date("2025-12-03 09:06:44 +0000").unwrap()), want);
        assert_eq!(
            pair(parse_date("Wed, 03 Dec 2025 09:06:44 +0000").unwrap()),
            want
        );
        let plus_one = parse_date("2025-12-03T10:06:44+01:00").unwrap();
        assert_eq!(pair(plus_one), (1_764_752_804, 60));
        assert_eq!(pair(parse_date("@1764752804 -0530").unwrap()).1, -330);
    }

    #[test]
    fn other_text_is_no_date() {
        for bad in [
            "",
            "yesterday",
            "2025-13-03T09:06:44Z",
            "@12 +99",
            "1 2 3",
            "@x",
        ] {
            assert!(parse_date(bad).is_none(), "{bad}");
        }
    }
}
