//! The page's charts as SVG drawn here (SPEC §25): readable without JavaScript and sharp at any
//! size (a `viewBox`, no pixels). Every label is agent text (slug prefixes, check names) and is
//! escaped like the rest of the page.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::markup::esc;
use crate::stats::{self, Return};

const W: f64 = 640.0;
const H: f64 = 220.0;
const LEFT: f64 = 44.0;
const BOTTOM: f64 = 40.0;
const TOP: f64 = 12.0;
/// Colours of the duration chart's series, in order of first appearance.
const PALETTE: [&str; 6] = [
    "#2b6cb0", "#c05621", "#2f855a", "#6b46c1", "#b83280", "#4a5568",
];

/// `(label, false greens, returns)` per day of the first record of each return.
pub fn per_day(returns: &[Return]) -> Vec<(String, u64, u64)> {
    group(returns, |r| r.ts.get(..10).unwrap_or("?").to_string())
}

/// `(label, false greens, returns)` per slug prefix (the slug up to its first `-`).
pub fn per_prefix(returns: &[Return]) -> Vec<(String, u64, u64)> {
    group(returns, |r| stats::prefix(&r.slug).to_string())
}

fn group(returns: &[Return], key: impl Fn(&Return) -> String) -> Vec<(String, u64, u64)> {
    let mut groups: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for r in returns {
        let g = groups.entry(key(r)).or_default();
        g.0 += u64::from(r.is_false_green());
        g.1 += 1;
    }
    groups.into_iter().map(|(k, (f, n))| (k, f, n)).collect()
}

/// A bar per group: the false-green rate (false greens over returns), 0–100 %.
pub fn rate_bars(title: &str, groups: &[(String, u64, u64)]) -> String {
    let mut svg = open(title);
    axis(&mut svg, "100%", "0%");
    if groups.is_empty() {
        empty(&mut svg, "no returns recorded yet");
    }
    let slot = (W - LEFT - 8.0) / groups.len().max(1) as f64;
    let plot = H - TOP - BOTTOM;
    for (i, (label, false_green, returns)) in groups.iter().enumerate() {
        let rate = *false_green as f64 / (*returns).max(1) as f64;
        let (x, h) = (LEFT + 4.0 + i as f64 * slot, rate * plot);
        let tip = format!(
            "{}: {false_green} of {returns} returns false green ({:.0}%)",
            label,
            rate * 100.0
        );
        let _ = write!(
            svg,
            r##"<g class="bar"><title>{}</title><rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="#c53030"/>"##,
            esc(&tip),
            H - BOTTOM - h,
            (slot * 0.7).max(1.0)
        );
        let _ = write!(
            svg,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text></g>"##,
            x + slot * 0.35,
            H - BOTTOM + 14.0,
            esc(&shorten(label, (slot / 6.0) as usize))
        );
    }
    close(svg)
}

/// Each check that ran as a dot: its time across, its duration up (scaled to the longest).
pub fn durations(points: &[(i64, String, u64)]) -> String {
    let title = "check durations over time";
    let mut svg = open(title);
    let max = points.iter().map(|p| p.2).max().unwrap_or(0).max(1);
    axis(&mut svg, &format!("{max} ms"), "0");
    if points.is_empty() {
        empty(&mut svg, "no check has run yet");
        return close(svg);
    }
    let (t0, t1) = (points[0].0, points.iter().map(|p| p.0).max().unwrap_or(0));
    let span = (t1 - t0).max(1) as f64;
    let mut names: Vec<&str> = Vec::new();
    for (ts, name, ms) in points {
        let series = match names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                names.push(name);
                names.len() - 1
            }
        };
        let x = LEFT + 6.0 + (ts - t0) as f64 / span * (W - LEFT - 16.0);
        let y = H - BOTTOM - *ms as f64 / max as f64 * (H - TOP - BOTTOM);
        let _ = write!(
            svg,
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{}"><title>{}: {ms} ms</title></circle>"#,
            PALETTE[series % PALETTE.len()],
            esc(name)
        );
    }
    for (i, name) in names.iter().enumerate().take(8) {
        let x = LEFT + i as f64 * 74.0;
        let _ = write!(
            svg,
            r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{}"/><text x="{:.1}" y="{:.1}" font-size="10">{}</text>"#,
            x + 4.0,
            H - 10.0,
            PALETTE[i % PALETTE.len()],
            x + 11.0,
            H - 6.0,
            esc(&shorten(name, 10))
        );
    }
    close(svg)
}

fn open(title: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="100%" role="img" aria-label="{t}" class="chart"><title>{t}</title>"#,
        t = esc(title)
    )
}

fn close(mut svg: String) -> String {
    svg.push_str("</svg>");
    svg
}

fn axis(svg: &mut String, top: &str, bottom: &str) {
    let _ = write!(
        svg,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{y}" stroke="#718096"/><line x1="{LEFT}" y1="{y}" x2="{W}" y2="{y}" stroke="#718096"/><text x="{x}" y="{ty}" font-size="10" text-anchor="end">{}</text><text x="{x}" y="{y}" font-size="10" text-anchor="end">{}</text>"##,
        esc(top),
        esc(bottom),
        y = H - BOTTOM,
        x = LEFT - 4.0,
        ty = TOP + 8.0,
    );
}

fn empty(svg: &mut String, text: &str) {
    let _ = write!(
        svg,
        r##"<text x="{}" y="{}" font-size="12" text-anchor="middle" fill="#718096">{}</text>"##,
        W / 2.0,
        H / 2.0,
        esc(text)
    );
}

/// At most `max` characters (at least 3), with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    let max = max.max(3);
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Verdict;

    fn ret(slug: &str, ts: &str, verdict: Verdict) -> Return {
        Return {
            slug: slug.into(),
            ts: ts.into(),
            verdict: Some(verdict),
        }
    }

    #[test]
    fn rates_per_day_and_prefix() {
        let returns = [
            ret("ui-a", "2026-11-01T10:00:00Z", Verdict::Fail),
            ret("ui-b", "2026-11-01T11:00:00Z", Verdict::Verified),
            ret("db-a", "2026-11-02T10:00:00Z", Verdict::Unverified),
            ret("db-b", "2026-11-02T10:00:00Z", Verdict::PendingReview),
        ];
        assert_eq!(
            per_day(&returns),
            [
                ("2026-11-01".to_string(), 1, 2),
                ("2026-11-02".to_string(), 1, 2)
            ]
        );
        assert_eq!(
            per_prefix(&returns),
            [("db".to_string(), 1, 2), ("ui".to_string(), 1, 2)]
        );
    }

    #[test]
    fn labels_are_escaped() {
        let svg = rate_bars("t", &[("<script>".into(), 1, 1)]);
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        let svg = durations(&[(1, "<b>x</b>".into(), 5)]);
        assert!(!svg.contains("<b>"), "{svg}");
    }
}
