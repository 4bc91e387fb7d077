//! The three chart shapes the HTML reports need, drawn as inline SVG: grouped horizontal bars
//! (with min–max whiskers, reference lines and a note beside each bar), stacked horizontal bars,
//! and a heat map. They are written here rather than taken from a plotting crate because the
//! page must stay one self-contained file with no script, and these shapes are a few dozen
//! lines of rectangles and text each; a plotting library would bring fonts, a raster backend
//! or JavaScript for what is arithmetic on one linear scale.
//!
//! Every bar carries a `data-*` attribute naming what it shows (`data-row` for a measured
//! result), so a test can count the bars a browser rendered against the rows of the report.

use super::shell::esc;
use std::fmt::Write as _;

const WIDTH: f64 = 960.0;
const NOTE_W: f64 = 190.0;
const BAR_H: f64 = 18.0;
const GAP: f64 = 3.0;
const GROUP_GAP: f64 = 10.0;
const TOP: f64 = 28.0;
const AXIS_H: f64 = 24.0;

/// One bar: a value with its optional spread.
pub struct Bar {
    pub value: f64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// CSS class giving the colour (`ok`, `weak`, `broken`, `ref`, `run0`...).
    pub class: String,
    /// Text beside the bar, right of the value (a verdict, a ratio...).
    pub note: String,
    /// `name="value"` data attribute identifying what the bar is.
    pub data: (String, String),
    /// Hover text.
    pub title: String,
    /// The note in bold (a significant change).
    pub strong: bool,
}

/// Bars that belong together (one cipher's figure and its reference; one row in every run).
pub struct Group {
    pub label: String,
    pub bars: Vec<Bar>,
    /// Shown instead of bars when there is nothing to draw (the row failed).
    pub error: Option<String>,
}

impl Group {
    /// A row's one bar, or its error ("no figure" when it has none) where it has no bar.
    pub fn single(label: String, bar: Option<Bar>, error: Option<&str>) -> Group {
        match bar {
            Some(bar) => Group {
                label,
                bars: vec![bar],
                error: None,
            },
            None => Group {
                label,
                bars: Vec::new(),
                error: Some(error.unwrap_or("no figure").to_string()),
            },
        }
    }
}

/// A vertical line across the chart (the raw-TCP ceiling, a stage ceiling).
pub struct Line {
    pub value: f64,
    pub label: String,
}

fn scale_max(v: f64) -> f64 {
    if v <= 0.0 {
        return 1.0;
    }
    // A round number just above the largest figure: 1, 2, 2.5 or 5 times a power of ten.
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|x| *x >= v)
        .unwrap_or(10.0 * p)
}

/// Room for the longest label at about 7.2 px per character of 12 px text.
fn label_width<'a>(labels: impl Iterator<Item = &'a str>) -> f64 {
    let chars = labels.map(|l| l.chars().count()).max().unwrap_or(0);
    (chars as f64 * 7.2 + 12.0).clamp(120.0, 460.0)
}

fn fmt_num(v: f64) -> String {
    if v >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Where a `<text>` stands against its x.
#[derive(Clone, Copy)]
enum Anchor {
    /// SVG's default: the text starts at x.
    Start,
    Middle,
    End,
}

/// Appends a `<text>` of `class` at (x, y), its content escaped.
fn text(body: &mut String, (x, y): (f64, f64), class: &str, anchor: Anchor, content: &str) {
    let anchor = match anchor {
        Anchor::Start => "",
        Anchor::Middle => r#" text-anchor="middle""#,
        Anchor::End => r#" text-anchor="end""#,
    };
    let _ = write!(
        body,
        r#"<text x="{x:.1}" y="{y:.1}" class="{class}"{anchor}>{}</text>"#,
        esc(content)
    );
}

/// Grouped horizontal bars on one linear scale starting at zero.
pub fn bars(title: &str, unit: &str, groups: &[Group], lines: &[Line]) -> String {
    let top = groups
        .iter()
        .flat_map(|g| g.bars.iter().map(|b| b.max.unwrap_or(b.value).max(b.value)))
        .chain(lines.iter().map(|l| l.value))
        .fold(0.0, f64::max);
    let max = scale_max(top);
    let lw = label_width(groups.iter().map(|g| g.label.as_str()));
    let plot_w = WIDTH - lw - NOTE_W;
    let x = |v: f64| lw + (v.max(0.0) / max * plot_w).min(plot_w);
    // Each reference line gets its own label row above the bars, so close lines stay legible.
    let top_y = TOP + 13.0 * lines.len().saturating_sub(1) as f64;
    let mut body = String::new();
    let mut y = top_y;
    for g in groups {
        let rows = g.bars.len().max(1) as f64;
        let h = rows * BAR_H + (rows - 1.0) * GAP;
        let label_y = y + h / 2.0 + 4.0;
        text(
            &mut body,
            (lw - 6.0, label_y),
            "label",
            Anchor::End,
            &g.label,
        );
        if let Some(e) = &g.error {
            let at = (lw + 4.0, y + BAR_H / 2.0 + 4.0);
            text(
                &mut body,
                at,
                "error",
                Anchor::Start,
                &format!("error: {e}"),
            );
        }
        for (i, b) in g.bars.iter().enumerate() {
            let by = y + i as f64 * (BAR_H + GAP);
            let w = x(b.value) - lw;
            let _ = write!(
                body,
                r#"<rect x="{lw:.1}" y="{by:.1}" width="{w:.1}" height="{BAR_H:.1}" class="bar {}" {}="{}"><title>{}</title></rect>"#,
                b.class,
                b.data.0,
                esc(&b.data.1),
                esc(&b.title)
            );
            if let (Some(lo), Some(hi)) = (b.min, b.max) {
                let (x0, x1, ym) = (x(lo), x(hi), by + BAR_H / 2.0);
                let _ = write!(
                    body,
                    r#"<path d="M{x0:.1} {ym:.1}H{x1:.1}M{x0:.1} {:.1}V{:.1}M{x1:.1} {:.1}V{:.1}" class="whisker"/>"#,
                    by + 4.0,
                    by + BAR_H - 4.0,
                    by + 4.0,
                    by + BAR_H - 4.0
                );
            }
            let tx = x(b.max.unwrap_or(b.value).max(b.value)) + 5.0;
            let ty = by + BAR_H / 2.0 + 4.0;
            text(
                &mut body,
                (tx, ty),
                "value",
                Anchor::Start,
                &fmt_num(b.value),
            );
            if !b.note.is_empty() {
                let class = if b.strong { "note sig" } else { "note" };
                text(
                    &mut body,
                    (WIDTH - NOTE_W + 40.0, ty),
                    class,
                    Anchor::Start,
                    &b.note,
                );
            }
        }
        y += h + GROUP_GAP;
    }
    let bottom = y;
    for (i, l) in lines.iter().enumerate() {
        let lx = x(l.value);
        let ly = top_y - 8.0 - 13.0 * i as f64;
        let _ = write!(
            body,
            r#"<path d="M{lx:.1} {:.1}V{bottom:.1}" class="ceiling" data-line="{}"/><text x="{lx:.1}" y="{:.1}" class="ceiling-label" text-anchor="middle">{}</text>"#,
            ly + 4.0,
            esc(&l.label),
            ly,
            esc(&format!("{} {}", l.label, fmt_num(l.value)))
        );
    }
    axis(&mut body, bottom, max, unit, lw, plot_w);
    svg(title, bottom + AXIS_H + 6.0, &body)
}

fn axis(body: &mut String, y: f64, max: f64, unit: &str, lw: f64, plot_w: f64) {
    let _ = write!(
        body,
        r#"<path d="M{lw:.1} {y:.1}H{:.1}" class="axis"/>"#,
        lw + plot_w
    );
    for i in 0..=5 {
        let v = max * i as f64 / 5.0;
        let tx = lw + plot_w * i as f64 / 5.0;
        let _ = write!(
            body,
            r#"<path d="M{tx:.1} {y:.1}v4" class="axis"/><text x="{tx:.1}" y="{:.1}" class="tick" text-anchor="middle">{}</text>"#,
            y + 15.0,
            fmt_num(v)
        );
    }
    text(
        body,
        (lw + plot_w + 22.0, y + 15.0),
        "tick",
        Anchor::Start,
        unit,
    );
}

fn svg(title: &str, height: f64, body: &str) -> String {
    format!(
        r#"<figure><figcaption>{}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0}" width="{WIDTH}" height="{height:.0}" role="img" aria-label="{}">{body}</svg></figure>
"#,
        esc(title),
        esc(title)
    )
}

/// One stacked bar: its segments in a fixed order, each `(name, value)`.
pub struct Stack {
    pub label: String,
    pub segments: Vec<(String, f64)>,
    pub data: (String, String),
}

/// Horizontal stacked bars; segment colours follow `names` (the legend order).
pub fn stacked(title: &str, unit: &str, names: &[&str], stacks: &[Stack]) -> String {
    let top = stacks
        .iter()
        .map(|s| s.segments.iter().map(|(_, v)| v.max(0.0)).sum::<f64>())
        .fold(0.0, f64::max);
    let max = scale_max(top);
    let lw = label_width(stacks.iter().map(|s| s.label.as_str()));
    let plot_w = WIDTH - lw - NOTE_W;
    let mut body = String::new();
    let mut y = TOP;
    for s in stacks {
        let _ = write!(
            body,
            r#"<text x="{:.1}" y="{:.1}" class="label" text-anchor="end">{}</text><g {}="{}">"#,
            lw - 6.0,
            y + BAR_H / 2.0 + 4.0,
            esc(&s.label),
            s.data.0,
            esc(&s.data.1)
        );
        let mut x = lw;
        for (name, v) in &s.segments {
            let w = v.max(0.0) / max * plot_w;
            let i = names.iter().position(|n| n == name).unwrap_or(0);
            let _ = write!(
                body,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{BAR_H:.1}" class="seg s{i}"><title>{}: {v:.0}</title></rect>"#,
                esc(name)
            );
            x += w;
        }
        let total: f64 = s.segments.iter().map(|(_, v)| v.max(0.0)).sum();
        body.push_str("</g>");
        let at = (x + 5.0, y + BAR_H / 2.0 + 4.0);
        text(&mut body, at, "value", Anchor::Start, &fmt_num(total));
        y += BAR_H + GROUP_GAP;
    }
    let bottom = y;
    axis(&mut body, bottom, max, unit, lw, plot_w);
    // The legend below the axis.
    let ly = bottom + AXIS_H + 8.0;
    let mut lx = lw;
    for (i, n) in names.iter().enumerate() {
        let _ = write!(
            body,
            r#"<rect x="{lx:.1}" y="{ly:.1}" width="12" height="12" class="seg s{i}"/><text x="{:.1}" y="{:.1}" class="tick">{}</text>"#,
            lx + 16.0,
            ly + 10.0,
            esc(n)
        );
        lx += 20.0 + 7.0 * n.chars().count() as f64 + 14.0;
    }
    svg(title, ly + 20.0, &body)
}

/// One heat-map row: its label and, per column, the percentage that colours the cell and the
/// text shown in it (none: nothing measured).
pub type HeatRow = (String, Vec<Option<(f64, String)>>);

/// A heat map: rows × columns of percentages (100 = the baseline), each cell coloured from
/// red (well below) through white (equal) and showing its text.
pub fn heatmap(title: &str, columns: &[String], rows: &[HeatRow]) -> String {
    let lw = label_width(rows.iter().map(|r| r.0.as_str()));
    let cell_w = ((WIDTH - lw) / columns.len().max(1) as f64).min(130.0);
    let cell_h = 26.0;
    let mut body = String::new();
    for (j, c) in columns.iter().enumerate() {
        let at = (lw + cell_w * (j as f64 + 0.5), TOP - 8.0);
        text(&mut body, at, "tick", Anchor::Middle, c);
    }
    for (i, (label, cells)) in rows.iter().enumerate() {
        let y = TOP + i as f64 * cell_h;
        text(
            &mut body,
            (lw - 6.0, y + cell_h / 2.0 + 4.0),
            "label",
            Anchor::End,
            label,
        );
        for (j, cell) in cells.iter().enumerate() {
            let x = lw + j as f64 * cell_w;
            let (fill, text) = match cell {
                Some((pct, text)) => (heat(*pct), text.as_str()),
                None => ("#eeeeee".to_string(), "-"),
            };
            let _ = write!(
                body,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" class="cell" data-row="{}"/><text x="{:.1}" y="{:.1}" class="value" text-anchor="middle">{}</text>"#,
                cell_w - 2.0,
                cell_h - 2.0,
                esc(&format!("{label} {}", columns.get(j).map_or("", |c| c))),
                x + cell_w / 2.0,
                y + cell_h / 2.0 + 4.0,
                esc(text)
            );
        }
    }
    svg(title, TOP + rows.len() as f64 * cell_h + 8.0, &body)
}

/// White at 100 % of the baseline, deepening red towards 0 %, green above 100 %.
fn heat(pct: f64) -> String {
    if pct >= 100.0 {
        let t = ((pct - 100.0) / 50.0).min(1.0);
        let c = |w: f64, full: f64| (w + (full - w) * t).round() as u8;
        format!(
            "#{:02x}{:02x}{:02x}",
            c(255.0, 165.0),
            c(255.0, 214.0),
            c(255.0, 167.0)
        )
    } else {
        let t = ((100.0 - pct) / 100.0).clamp(0.0, 1.0);
        let c = |w: f64, full: f64| (w + (full - w) * t).round() as u8;
        format!(
            "#{:02x}{:02x}{:02x}",
            c(255.0, 229.0),
            c(255.0, 115.0),
            c(255.0, 115.0)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_ends_on_a_round_number_above_the_largest_figure() {
        assert_eq!(scale_max(327.0), 500.0);
        assert_eq!(scale_max(190.0), 200.0);
        assert_eq!(scale_max(2.1), 2.5);
        assert_eq!(scale_max(0.0), 1.0);
    }

    #[test]
    fn one_bar_element_per_bar_and_labels_escaped() {
        let bar = |v: f64| Bar {
            value: v,
            min: Some(v - 1.0),
            max: Some(v + 1.0),
            class: "ok".into(),
            note: "network".into(),
            data: ("data-row".into(), "a<b".into()),
            title: String::new(),
            strong: false,
        };
        let s = bars(
            "t",
            "MiB/s",
            &[Group {
                label: "x & y".into(),
                bars: vec![bar(10.0), bar(20.0)],
                error: None,
            }],
            &[Line {
                value: 25.0,
                label: "ceiling".into(),
            }],
        );
        assert_eq!(s.matches("data-row=").count(), 2);
        assert!(s.contains("x &amp; y") && s.contains("a&lt;b"), "{s}");
        assert!(s.contains("data-line=\"ceiling\""));
    }
}
