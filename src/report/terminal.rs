//! How a terminal table is shaped for where it goes. On a terminal it takes the terminal's
//! width and may colour grades; in a file, a pipe or a CI log it fits `TABLE_WIDTH` columns and
//! has no escape codes, which would be noise there. `NO_COLOR` (no-color.org: set and not
//! empty) turns colours off even on a terminal.

use comfy_table::{Cell, Color, ContentArrangement, Table};
use std::cell::Cell as Flag;
use std::ffi::OsString;
use std::io::IsTerminal;

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
}

fn width_for(terminal: Option<u16>) -> u16 {
    match terminal {
        Some(w) if w >= NARROWEST_TERMINAL => w,
        _ => super::TABLE_WIDTH,
    }
}

/// Whether the text being rendered may carry colours.
pub fn colours() -> bool {
    colours_for(to_terminal(), std::env::var_os("NO_COLOR"))
}

fn colours_for(terminal: bool, no_color: Option<OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
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
        assert!(colours_for(true, None));
        assert!(colours_for(true, Some("".into())));
        assert!(!colours_for(true, Some("1".into())));
        assert!(!colours_for(false, None));
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
