//! Edits that change only the lines they must: set a directive's value in the global section
//! (replacing the first occurrence in place, or inserting a line before the first block) and
//! remove a directive.

use crate::directive::{Flavor, Section};
use crate::parse::{Document, LineKind};
use crate::render;

/// What an edit did, with the 0-based line index it touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    Replaced(usize),
    Inserted(usize),
}

impl Document {
    /// Global-section directives of this one file, with their line index. Blocks opened here
    /// end at the end of the file, as OpenSSH treats them.
    fn global_lines(&self, flavor: Flavor) -> Vec<(usize, bool)> {
        let mut global = true;
        let mut out = Vec::new();
        for (i, d) in self.directives() {
            if let Some(s) = Section::opened_by(d, flavor) {
                global = s.is_global();
            }
            out.push((i, global));
        }
        out
    }

    /// Makes `keyword` read `args` for the global section of this file.
    pub fn set_global(&mut self, flavor: Flavor, keyword: &str, args: &[String]) -> Edit {
        let globals = self.global_lines(flavor);
        let existing = globals.iter().find(|(i, global)| {
            *global && matches!(&self.lines[*i].kind, LineKind::Directive(d) if d.is(keyword))
        });
        if let Some(&(i, _)) = existing {
            let LineKind::Directive(d) = &self.lines[i].kind else {
                unreachable!()
            };
            let new = render::with_value(&self.lines[i], d, args);
            self.lines[i] = new;
            return Edit::Replaced(i);
        }
        // Before the first block, else at the end: a line after `Match` would be conditional.
        let first_block = self.directives().find_map(|(i, d)| {
            Section::opened_by(d, flavor)
                .filter(|s| !s.is_global())
                .map(|_| i)
        });
        let at = first_block.unwrap_or(self.lines.len());
        if at == self.lines.len() {
            if let Some(last) = self.lines.last_mut() {
                if !last.raw.ends_with('\n') {
                    last.raw.push('\n');
                }
            }
        }
        self.lines.insert(at, render::directive_line(keyword, args));
        Edit::Inserted(at)
    }

    /// Removes every global-section occurrence of `keyword`; returns how many lines went.
    pub fn remove_global(&mut self, flavor: Flavor, keyword: &str) -> usize {
        let doomed: Vec<usize> = self
            .global_lines(flavor)
            .into_iter()
            .filter(|(i, global)| {
                *global && matches!(&self.lines[*i].kind, LineKind::Directive(d) if d.is(keyword))
            })
            .map(|(i, _)| i)
            .collect();
        for i in doomed.iter().rev() {
            self.lines.remove(*i);
        }
        doomed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_first_global_occurrence_only() {
        let text =
            "# head\nciphers aes128-ctr # old\nCiphers aes256-ctr\nMatch User x\n  Ciphers x\n";
        let mut doc = Document::parse(text);
        let e = doc.set_global(Flavor::Sshd, "Ciphers", &["^aes128-gcm@openssh.com".into()]);
        assert_eq!(e, Edit::Replaced(1));
        assert_eq!(
            doc.render(),
            "# head\nciphers ^aes128-gcm@openssh.com # old\nCiphers aes256-ctr\nMatch User x\n  Ciphers x\n"
        );
    }

    #[test]
    fn inserts_before_the_first_block() {
        let mut doc = Document::parse("Port 22\nMatch User x\n  X11Forwarding no\n");
        assert_eq!(
            doc.set_global(Flavor::Sshd, "Ciphers", &["aes128-ctr".into()]),
            Edit::Inserted(1)
        );
        assert_eq!(
            doc.render(),
            "Port 22\nCiphers aes128-ctr\nMatch User x\n  X11Forwarding no\n"
        );
        let mut doc = Document::parse("Host a\n  Port 2\nHost *\n  Ciphers x");
        assert_eq!(
            doc.set_global(Flavor::Ssh, "ciphers", &["y".into()]),
            Edit::Replaced(3)
        );
        let mut doc = Document::parse("Port 22");
        doc.set_global(Flavor::Sshd, "Ciphers", &["y".into()]);
        assert_eq!(doc.render(), "Port 22\nCiphers y\n");
        assert_eq!(doc.remove_global(Flavor::Sshd, "CIPHERS"), 1);
        assert_eq!(doc.render(), "Port 22\n");
    }
}
