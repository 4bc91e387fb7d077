//! How a terminal table is shaped for where it goes. On a terminal it takes the terminal's
//! width and may colour grades; in a file, a pipe or a CI log it fits `TABLE_WIDTH` columns and
//! has no escape codes, which would be noise there. `NO_COLOR` (no-color.org: set and not
//! empty) turns colours off even on a terminal; `--color always|never` overrides both, except
//! that a file written with `--output` never carries colours.

use comfy_table::{Cell, Color, ContentArrangement, Table};
use std::cell::Cell as Flag;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU8, Ordering};

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

fn width_for(terminal: Option<u16>) -> u16 {
    match terminal {
        Some(w) if w >= NARROWEST_TERMINAL => w,
        _ => super::TABLE_WIDTH,
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
    fn a_file_gets_no_colour_and_the_fixed_width() {
        let (colour, cell) = for_file(|| (colours(), grade_cell("broken")));
        assert!(!colour);
        let mut t = Table::new();
        t.add_row(vec![cell]);
        assert!(!t.to_string().contains('\x1b'));
    }
}
