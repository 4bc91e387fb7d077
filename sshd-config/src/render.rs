//! Turning values back into config text: quoting arguments so OpenSSH reads back exactly what
//! was meant, and rewriting one directive's value while keeping the rest of its line.

use crate::directive::Directive;
use crate::parse::{parse_line, split_args, Line, LineKind};
use std::borrow::Cow;

/// Quotes an argument when OpenSSH's tokenizer would otherwise split or alter it.
pub fn quote_arg(arg: &str) -> Cow<'_, str> {
    let needs = arg.is_empty()
        || arg.starts_with('#')
        || arg
            .chars()
            .any(|c| matches!(c, ' ' | '\t' | '"' | '\'' | '\\' | '=') || c.is_control());
    if !needs {
        return Cow::Borrowed(arg);
    }
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('"');
    for c in arg.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    Cow::Owned(out)
}

fn join_args(args: &[String]) -> String {
    args.iter()
        .map(|a| quote_arg(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A fresh directive line, `Keyword arg…` with a newline.
pub fn directive_line(keyword: &str, args: &[String]) -> Line {
    parse_line(&format!("{keyword} {}\n", join_args(args)))
}

/// The same line with new arguments: indentation, keyword spelling, separator, trailing
/// comment and line ending stay as they were.
pub fn with_value(line: &Line, d: &Directive, args: &[String]) -> Line {
    let raw = &line.raw;
    let text = format!(
        "{}{}{}",
        &raw[..d.value_start],
        join_args(args),
        &raw[d.value_end..]
    );
    let new = parse_line(&text);
    debug_assert!(matches!(new.kind, LineKind::Directive(_)));
    new
}

/// Whether a quoted form reads back as the original argument (used by tests and debug checks).
pub fn reads_back(arg: &str) -> bool {
    split_args(&quote_arg(arg)).map(|(a, _)| a == [arg.to_string()]) == Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::LineKind;

    #[test]
    fn quoting_reads_back() {
        for a in [
            "plain",
            "two words",
            "a\"b",
            "back\\slash",
            "#hash",
            "",
            "x=y",
            "it's",
        ] {
            assert!(reads_back(a), "{a:?} -> {}", quote_arg(a));
        }
        assert_eq!(quote_arg("aes128-ctr"), "aes128-ctr");
    }

    #[test]
    fn value_edit_keeps_the_rest_of_the_line() {
        let line = parse_line("  cIpHeRs = aes128-ctr   # fast enough\r\n");
        let LineKind::Directive(d) = &line.kind else {
            panic!()
        };
        let new = with_value(&line, d, &["^aes128-gcm@openssh.com".into()]);
        assert_eq!(
            new.raw,
            "  cIpHeRs = ^aes128-gcm@openssh.com   # fast enough\r\n"
        );
    }
}
