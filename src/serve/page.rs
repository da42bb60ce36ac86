//! The page (SPEC §25): the board as HTML, each row with what its last check found, and the
//! charts. Every value on it comes from agents (slugs, branches, paths, messages, check output,
//! diffs) and goes through [`esc`] (`markup`) exactly once, here, where it is written into markup.

use std::fmt::Write;
use std::time::Duration;

use super::chart;
use super::markup::esc;
use super::view::{LastCheck, Moment, View, Worktree};
use crate::date::{self, Grain};

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em;color:#1a202c}\
h1{font-size:1.3em;margin:.6em 0 .2em}h2{font-size:1.1em;margin:1.2em 0 .4em}\
table.board{border-collapse:collapse;width:100%}\
table.board th,table.board td{text-align:left;padding:.25em .6em;border-bottom:1px solid #e2e8f0;vertical-align:top}\
.stage{font-weight:600;padding:.1em .5em;border-radius:3px;background:#edf2f7}\
.s-COMPLETED .stage,.s-MERGED .stage{background:#c6f6d5}.s-FAILED .stage,.s-REJECTED .stage,.s-CONFLICT .stage{background:#fed7d7}\
.s-REVIEW .stage,.s-UNVERIFIED .stage,.s-VERIFYING .stage{background:#feebc8}.s-RUNNING .stage,.s-BLOCKED .stage{background:#bee3f8}\
pre{background:#f7fafc;padding:.5em;overflow-x:auto;max-height:24em;font-size:12px}\
.muted{color:#718096}.warn{color:#c53030}.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:1em}\
details>summary{cursor:pointer}";

/// The whole page: head, header and the live part ([`live`]) the script replaces.
pub fn page(view: &View, repo: &str, token: &str, generation: u64) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>closegate board</title><style>{STYLE}</style></head>\
         <body data-token=\"{}\" data-generation=\"{generation}\">\
         <header><h1>closegate board</h1><p class=\"muted\">{} · read-only · \
         <span id=\"live-state\">as loaded</span></p></header>\
         <main id=\"live\">{}</main>\
         <script src=\"/app.js?token={}\"></script></body></html>\n",
        esc(token),
        esc(repo),
        live(view, generation),
        esc(token)
    )
}

/// A page saying the repository cannot be read (it went away, or is no repository now).
pub fn gone(repo: &str, why: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>closegate board</title>\
         <style>{STYLE}</style></head><body><h1>closegate board</h1>\
         <p class=\"warn\" id=\"gone\">the repository {} cannot be read: {}</p></body></html>\n",
        esc(repo),
        esc(why)
    )
}

/// The part of the page that changes: the board, the conflict radar, the charts.
pub fn live(view: &View, generation: u64) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<p class=\"muted\" id=\"as-of\" data-generation=\"{generation}\">{} worktrees</p>",
        view.worktrees.len()
    );
    if view.forged > 0 {
        let _ = write!(
            html,
            "<p class=\"warn\">{} audit lines do not carry a valid mac and are ignored \
             (see <code>closegate log --verify</code>)</p>",
            view.forged
        );
    }
    if view.skipped > 0 {
        let _ = write!(
            html,
            "<p class=\"warn\">{} audit lines are no record (cut short or damaged) and are skipped</p>",
            view.skipped
        );
    }
    board(&mut html, view);
    if let Some(radar) = conflict_radar(view) {
        html.push_str(&radar);
    }
    charts(&mut html, view);
    html
}

/// The conflict radar (SPEC §22), what `board --conflicts` lists: each pair of live agent
/// branches that conflict with each other, with the paths (agent text, escaped). A CONFLICT
/// row (no longer merging into the base) shows its stage in the board above.
fn conflict_radar(view: &View) -> Option<String> {
    let mut html = String::from("<section class=\"radar\"><h2>Conflict radar</h2>");
    if view.conflicts.is_empty() {
        html.push_str("<p>no two live agent branches conflict</p>");
    } else {
        html.push_str("<ul>");
        for pair in &view.conflicts {
            let _ = write!(
                html,
                "<li class=\"conflict\"><code>{}</code> &harr; <code>{}</code>: {}</li>",
                esc(&pair.one),
                esc(&pair.two),
                esc(&pair.paths.join(", "))
            );
        }
        html.push_str("</ul>");
    }
    html.push_str("</section>");
    Some(html)
}

fn board(html: &mut String, view: &View) {
    html.push_str(
        "<table class=\"board\"><thead><tr><th>stage</th><th>verdict</th><th>slug</th>\
         <th>branch</th><th>age</th><th>worktree</th></tr></thead><tbody>",
    );
    for wt in &view.worktrees {
        row(html, wt, view.now);
    }
    html.push_str("</tbody></table>");
}

/// One worktree's row; `now` is when the view was read, the instant every age is measured from.
fn row(html: &mut String, wt: &Worktree, now: i64) {
    let r = &wt.row;
    let stage = r.stage.as_str();
    let slug = r.slug.as_deref().unwrap_or("");
    let verdict = r.verdict.map_or("-", |v| v.as_str());
    let _ = write!(
        html,
        "<tr class=\"row s-{stage}\" data-slug=\"{}\" data-stage=\"{stage}\" data-main=\"{}\">\
         <td><span class=\"stage\">{stage}</span></td><td class=\"verdict\">{verdict}</td>\
         <td class=\"slug\">{}</td><td>{}</td><td>{}</td><td class=\"path\">{}{}</td></tr>",
        esc(slug),
        r.main,
        esc(if slug.is_empty() { "-" } else { slug }),
        esc(r.branch.as_deref().unwrap_or("(detached)")),
        wt.committed_at.map_or("-".to_string(), |t| age(now - t)),
        esc(&r.path),
        if r.dir.is_none() {
            " <span class=\"warn\">(directory gone)</span>"
        } else {
            ""
        }
    );
    let _ = write!(
        html,
        "<tr class=\"detail\" data-slug=\"{}\"><td colspan=\"6\">{}<details data-key=\"{}\">\
         <summary>last check, timeline</summary>",
        esc(slug),
        wt.abstract_text
            .as_deref()
            .map_or(String::new(), |a| format!(
                "<div class=\"abstract\">{}</div>",
                esc(a)
            )),
        esc(&r.path)
    );
    match &wt.last_check {
        Some(check) => last_check(html, check),
        None => html.push_str("<p class=\"muted\">no check recorded</p>"),
    }
    timeline(html, &wt.timeline, wt.earlier);
    html.push_str("</details></td></tr>");
}

/// `42s`, `5m`, `3h`, `2d` (a time in the future reads as `0s`).
fn age(secs: i64) -> String {
    let since = Duration::from_secs(u64::try_from(secs).unwrap_or(0));
    date::duration(since, Grain::Largest)
}

fn last_check(html: &mut String, c: &LastCheck) {
    let _ = write!(
        html,
        "<h3>last check: {} at {} on {}</h3>",
        esc(c.verdict.as_deref().unwrap_or("no verdict")),
        esc(&c.ts),
        esc(c
            .commit
            .as_deref()
            .map_or("no commit", |s| s.get(..12).unwrap_or(s)))
    );
    if c.findings.is_empty() {
        html.push_str("<p class=\"muted\">no findings</p>");
    } else {
        html.push_str("<ul class=\"findings\">");
        for f in &c.findings {
            let at = match (&f.path, f.line) {
                (Some(p), Some(l)) => format!("{}:{l}: ", esc(p)),
                (Some(p), None) => format!("{}: ", esc(p)),
                (None, Some(l)) => format!("line {l}: "),
                (None, None) => String::new(),
            };
            let _ = write!(
                html,
                "<li class=\"finding\"><code>{}</code> ({}) {at}<span class=\"message\">{}</span></li>",
                esc(&f.code),
                esc(&f.severity),
                esc(&f.message)
            );
        }
        html.push_str("</ul>");
    }
    protected(html, c);
    checks(html, c);
    if let Some(integrity) = &c.integrity {
        let pretty = serde_json::to_string_pretty(integrity).unwrap_or_default();
        let _ = write!(
            html,
            "<h4>integrity</h4><pre class=\"integrity\">{}</pre>",
            esc(&pretty)
        );
    }
}

fn protected(html: &mut String, c: &LastCheck) {
    if c.protected.is_empty() {
        return;
    }
    html.push_str("<h4>protected changes</h4>");
    for (p, diff) in &c.protected {
        let _ = write!(
            html,
            "<details class=\"protected\"><summary><code>{}</code> {} ({})</summary>",
            esc(&p.path),
            esc(&p.change),
            esc(&p.surface)
        );
        match diff {
            Some(d) => {
                let _ = write!(html, "<pre class=\"diff\">{}</pre>", esc(d));
            }
            None => html.push_str("<p class=\"muted\">the diff is no longer in the repository</p>"),
        }
        html.push_str("</details>");
    }
}

fn checks(html: &mut String, c: &LastCheck) {
    if c.checks.is_empty() {
        return;
    }
    html.push_str("<h4>checks</h4><ul class=\"checks\">");
    for k in &c.checks {
        let result = match (&k.finding, k.exit_code) {
            (None, _) => "passed".to_string(),
            (Some(code), Some(exit)) => format!("{code} (exit {exit})"),
            (Some(code), None) => code.clone(),
        };
        let reused = if k.reused.is_some() { ", reused" } else { "" };
        let _ = write!(
            html,
            "<li class=\"check\"><code>{}</code> {} in {} ms{reused}",
            esc(&k.name),
            esc(&result),
            k.duration_ms
        );
        if !k.output.is_empty() {
            let tail = k.output.join("\n");
            let _ = write!(html, "<pre class=\"output\">{}</pre>", esc(&tail));
        }
        html.push_str("</li>");
    }
    html.push_str("</ul>");
}

fn timeline(html: &mut String, moments: &[Moment], earlier: usize) {
    html.push_str("<h4>timeline</h4>");
    if moments.is_empty() {
        html.push_str("<p class=\"muted\">no records</p>");
        return;
    }
    if earlier > 0 {
        let _ = write!(html, "<p class=\"muted\">{earlier} earlier records</p>");
    }
    html.push_str("<ol class=\"timeline\">");
    for m in moments {
        let _ = write!(
            html,
            "<li><time>{}</time> {} {} <span class=\"muted\">{}</span></li>",
            esc(&m.ts),
            esc(&m.event),
            esc(m.verdict.as_deref().unwrap_or("-")),
            esc(&m.codes.join(", "))
        );
    }
    html.push_str("</ol>");
}

fn charts(html: &mut String, view: &View) {
    html.push_str("<h2>false-green rate and check durations</h2><div class=\"charts\">");
    let days = chart::per_day(&view.returns);
    let prefixes = chart::per_prefix(&view.returns);
    html.push_str(&chart::rate_bars("false-green rate per day", &days));
    html.push_str(&chart::rate_bars(
        "false-green rate per slug prefix",
        &prefixes,
    ));
    html.push_str(&chart::durations(&view.durations));
    html.push_str("</div>");
}

/// The script: one event stream; on each change, the live part is fetched again and swapped
/// in, keeping open what the reader opened. Without it the page is complete as served.
pub const SCRIPT: &str = include_str!("app.js");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_and_controls_become_text() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(esc("a\u{1b}[31mb\u{202e}"), "a\\u{1b}[31mb\\u{202e}");
    }

    #[test]
    fn ages() {
        assert_eq!(age(5), "5s");
        assert_eq!(age(300), "5m");
        assert_eq!(age(7200), "2h");
        assert_eq!(age(3 * 86400), "3d");
        assert_eq!(age(-4), "0s");
    }
}
