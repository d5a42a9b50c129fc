//! A read-only view of the rules' own vocabulary and option tables (CLASSIFY-6), for tools
//! that build commands from them, such as the execution oracle (CLASSIFY-9).
//!
//! Nothing here decides a class: it only lists what `rules/options.rs` and `rules/mod.rs`
//! already hold, so a generator can name every reader with each option its table allows
//! (and with options the table does not list).

/// One reader's allow-list: the options known not to write, run a program or change state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionTable {
    /// The program.
    pub program: &'static str,
    /// Short options that take no value.
    pub flags: &'static str,
    /// Short options that take a value (`-n 5`, `-n5`).
    pub values: &'static str,
    /// Long options that take no value.
    pub long_flags: &'static [&'static str],
    /// Long options that take a value (`--lines 5`, `--lines=5`).
    pub long_values: &'static [&'static str],
}

/// Every reader's option table, in the rules' order.
pub fn option_tables() -> impl Iterator<Item = OptionTable> {
    super::SAFE.iter().map(|safe| OptionTable {
        program: safe.program,
        flags: safe.flags,
        values: safe.values,
        long_flags: safe.long_flags,
        long_values: safe.long_values,
    })
}

/// The programs the rules know only read, whatever their arguments (each is vetted by its
/// option table, or accepts no option when it has none).
pub fn readers() -> &'static [&'static str] {
    super::super::READERS
}

/// Programs all of whose arguments are operands (`echo`, `test`, `expr`, ...).
pub fn operands_only() -> &'static [&'static str] {
    super::OPERANDS_ONLY
}

/// `find` primaries that only test or print, without a value and with one.
pub fn find_primaries() -> (&'static [&'static str], &'static [&'static str]) {
    (super::FIND_TESTS, super::FIND_VALUE_TESTS)
}

/// The exact `ip` option spellings known to read.
pub fn ip_options() -> &'static [&'static str] {
    super::IP_OPTIONS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_lists_what_the_rules_hold() {
        let cat = option_tables()
            .find(|table| table.program == "cat")
            .expect("cat has an option table");
        assert!(cat.flags.contains('A'));
        assert_eq!(option_tables().count(), super::super::SAFE.len());
        assert!(readers().contains(&"cat"));
        assert!(operands_only().contains(&"echo"));
        assert!(find_primaries().0.contains(&"-print"));
        assert!(!ip_options().is_empty());
    }
}
