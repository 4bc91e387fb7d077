//! How a terminal table is shaped for where it goes. On a terminal it takes the terminal's
//! width and may colour grades; in a file, a pipe or a CI log it fits `TABLE_WIDTH` columns and
//! has no escape codes, which would be noise there. `NO_COLOR` (no-color.org: set and not
//! empty) turns colours off even on a terminal; `--color always|never` overrides both, except
//! that a file written with `--output` never carries colours.
//!
//! A table never splits a word: `keep_words` gives every column at least its longest word
//! (names, numbers and `(min–max)` ranges are words) and hides the columns a table names as
//! expendable until the rest fits; `wrap` breaks footer lines at spaces only.

use comfy_table::{Cell, Color, ColumnConstraint, ContentArrangement, Table, Width};
use std::cell::Cell as Flag;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

/// Terminal tables fit this many columns when stdout is not a terminal (a terminal gives its
/// own width).
pub const TABLE_WIDTH: u16 = 120;

/// Whether tables may carry colours, as `--color` asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colours {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    Always,
    Never,
}

static COLOURS: AtomicU8 = AtomicU8::new(Colours::Auto as u8);

/// Sets the process's colour choice (`--color`); the CLI calls it once at start.
pub fn set_colours(choice: Colours) {
    COLOURS.store(choice as u8, Ordering::Relaxed);
}

fn choice() -> Colours {
    match COLOURS.load(Ordering::Relaxed) {
        x if x == Colours::Always as u8 => Colours::Always,
        x if x == Colours::Never as u8 => Colours::Never,
        _ => Colours::Auto,
    }
}

thread_local! {
    /// Set while a report is rendered for a file, whatever stdout is.
    static FOR_FILE: Flag<bool> = const { Flag::new(false) };
}

/// Runs `render` for a file: no colours, `TABLE_WIDTH` columns.
pub fn for_file<T>(render: impl FnOnce() -> T) -> T {
    FOR_FILE.with(|f| f.set(true));
    let out = render();
    FOR_FILE.with(|f| f.set(false));
    out
}

fn to_terminal() -> bool {
    !FOR_FILE.with(|f| f.get()) && std::io::stdout().is_terminal()
}

/// Narrower than this, a terminal's reported width is not believed: a serial console reports 0
/// columns, and a table squeezed into a handful of columns is one character per line.
const NARROWEST_TERMINAL: u16 = 40;

/// Wraps `t` to the terminal's width, or to `TABLE_WIDTH` anywhere else and on a terminal that
/// reports no usable width.
pub fn fit(t: &mut Table) {
    t.set_content_arrangement(ContentArrangement::Dynamic);
    let terminal_width = if to_terminal() { t.width() } else { None };
    t.set_width(width_for(terminal_width));
    if colours() {
        // comfy-table styles only a terminal it detects itself; `--color always` means a pipe too.
        t.enforce_styling();
    }
}

/// The width tables and footers are laid out for: the terminal's, or `TABLE_WIDTH`.
pub fn width() -> u16 {
    let terminal_width = if to_terminal() {
        Table::new().width()
    } else {
        None
    };
    width_for(terminal_width)
}

/// Makes `t` (rows added, `fit` called) keep every word whole: each column gets at least its
/// longest word, and the columns in `expendable` are hidden, in that order, until the rest fits
/// `t`'s width.
pub fn keep_words(t: &mut Table, expendable: &[usize]) -> Kept {
    let width = usize::from(t.width().unwrap_or(TABLE_WIDTH));
    let n = t.column_count();
    let longest: Vec<usize> = (0..n)
        .map(|i| {
            t.column_cells_with_header_iter(i)
                .flatten()
                .map(|c| longest_word(&c.content()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut hidden = Vec::new();
    let needed = |hidden: &[usize]| {
        let shown: Vec<usize> = (0..n).filter(|i| !hidden.contains(i)).collect();
        // Each shown column: its words, one space either side and one border.
        shown.iter().map(|&i| longest[i] + 3).sum::<usize>() + 1
    };
    for &i in expendable {
        if needed(&hidden) <= width {
            break;
        }
        hidden.push(i);
    }
    for (i, column) in t.column_iter_mut().enumerate() {
        column.set_constraint(if hidden.contains(&i) {
            ColumnConstraint::Hidden
        } else {
            ColumnConstraint::LowerBoundary(Width::Fixed((longest[i] + 2) as u16))
        });
    }
    Kept {
        fits: needed(&hidden) <= width,
        hidden,
    }
}

/// What `keep_words` did: the columns it hid, and whether the rest fits (when it does not, the
/// table is wider than the terminal and the caller may shorten its words).
pub struct Kept {
    pub fits: bool,
    pub hidden: Vec<usize>,
}

/// Display width of the longest space-separated word of `text`.
fn longest_word(text: &str) -> usize {
    text.split_whitespace()
        .map(textwrap::core::display_width)
        .max()
        .unwrap_or(0)
}

/// `line` broken at spaces to `width()` columns; a word longer than that stays whole on its
/// own line. Continuation lines keep the first line's indent plus two spaces.
pub fn wrap(line: &str) -> String {
    let indent = " ".repeat(line.len() - line.trim_start().len() + 2);
    let options = textwrap::Options::new(usize::from(width()))
        .break_words(false)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .subsequent_indent(&indent);
    textwrap::fill(line, options)
}

/// `text` with every line outside a table wrapped by `wrap`; table lines (they start with a
/// border) were fitted already.
pub fn wrap_prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if line.starts_with(['┌', '│', '╞', '├', '└', '╭', '╰']) || line.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(&wrap(line));
        }
        out.push('\n');
    }
    out
}

fn width_for(terminal: Option<u16>) -> u16 {
    match terminal {
        Some(w) if w >= NARROWEST_TERMINAL => w,
        _ => TABLE_WIDTH,
    }
}

/// Whether the text being rendered may carry colours.
pub fn colours() -> bool {
    let for_file = FOR_FILE.with(|f| f.get());
    !for_file && colours_for(choice(), to_terminal(), std::env::var_os("NO_COLOR"))
}

fn colours_for(choice: Colours, terminal: bool, no_color: Option<OsString>) -> bool {
    match choice {
        Colours::Always => true,
        Colours::Never => false,
        Colours::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// A grade cell: red for broken, yellow for weak, green for ok when colours are allowed.
pub fn grade_cell(grade: &str) -> Cell {
    let cell = Cell::new(grade);
    if !colours() {
        return cell;
    }
    match grade {
        "broken" => cell.fg(Color::Red),
        "weak" => cell.fg(Color::Yellow),
        "ok" => cell.fg(Color::Green),
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_only_on_a_terminal_and_never_with_no_color() {
        assert!(colours_for(Colours::Auto, true, None));
        assert!(colours_for(Colours::Auto, true, Some("".into())));
        assert!(!colours_for(Colours::Auto, true, Some("1".into())));
        assert!(!colours_for(Colours::Auto, false, None));
    }

    #[test]
    fn the_color_flag_overrides_the_terminal_and_no_color() {
        assert!(colours_for(Colours::Always, false, Some("1".into())));
        assert!(!colours_for(Colours::Never, true, None));
    }

    #[test]
    fn a_terminal_without_a_usable_width_gets_the_fixed_width() {
        assert_eq!(width_for(None), crate::report::TABLE_WIDTH);
        assert_eq!(width_for(Some(0)), crate::report::TABLE_WIDTH);
        assert_eq!(width_for(Some(12)), crate::report::TABLE_WIDTH);
        assert_eq!(width_for(Some(80)), 80);
    }

    #[test]
    fn columns_go_before_a_word_splits() {
        let mut t = Table::new();
        t.set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(50)
            .set_header(vec!["name", "cpu", "rate"])
            .add_row(vec![
                "chacha20-poly1305@openssh.com",
                "12/13",
                "362.5 (331–379)",
            ]);
        let kept = keep_words(&mut t, &[1]);
        assert!(kept.fits);
        assert_eq!(kept.hidden, [1]);
        let text = t.to_string();
        assert!(text.contains("chacha20-poly1305@openssh.com"), "{text}");
        assert!(text.contains("(331–379)"), "{text}");
        assert!(!text.contains("12/13"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= 50), "{text}");
    }

    #[test]
    fn prose_wraps_at_spaces_only() {
        let line = format!("warning: {}", "aes128-gcm@openssh.com ".repeat(8));
        let wrapped = for_file(|| wrap(&line));
        assert!(wrapped.lines().count() > 1);
        for l in wrapped.lines() {
            assert!(l.chars().count() <= usize::from(crate::report::TABLE_WIDTH));
            assert!(
                l.trim_end().ends_with("openssh.com") || l.ends_with("warning:"),
                "{l}"
            );
        }
    }

    #[test]
    fn a_file_gets_no_colour_and_the_fixed_width() {
        let (colour, cell) = for_file(|| (colours(), grade_cell("broken")));
        assert!(!colour);
        let mut t = Table::new();
        t.add_row(vec![cell]);
        assert!(!t.to_string().contains('\x1b'));
    }
}
