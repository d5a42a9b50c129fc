//! Whether two command strings are the same command (GATE-9): the comparison the gate makes
//! between a command the model runs and a command an approved plan declared.
//!
//! Two commands are the same when both parse, in the grammar of the pinned shell
//! (CLASSIFY-8), to the same tree, and are spelled with the same tokens:
//!
//! * The same tree: the same words after quote removal with the same quoting and the same
//!   expansions, the same operators and lists, the same redirections with the same
//!   descriptors and targets, the same assignments and here-documents. Where a part sits in
//!   its source is left out, so the amount of blank space between words does not count.
//! * The same tokens: the words as written, quotes and backslashes included, and the
//!   operators, with the blanks between them dropped. So `ngin\x` is not `nginx` (a shell
//!   reads both as `nginx`, but an escape where none is needed is no spelling an operator
//!   approved), `'nginx;'` is not `nginx;`, and `'$X'` is not `$X`.
//!
//! Anything that does not parse is the same as nothing, itself included. The comparison
//! is pure and total, like the classifier.

use crate::ast::{
    AndOr, Command, Compound, Expansion, List, Pipeline, Redirect, RedirectTarget, Script,
    SimpleCommand, Word,
};
use crate::grammar::Grammar;
use crate::shell::Shell;

/// GATE-9: whether `a` and `b` are the same command when `shell` reads them (see the
/// module documentation): they must parse to the same tree in every grammar the pinned
/// shell may be read in (CLASSIFY-8), and be spelled with the same tokens.
pub fn same_command(a: &str, b: &str, shell: Shell) -> bool {
    let same_trees = shell.grammars().iter().all(
        |&grammar| matches!((tree(a, grammar), tree(b, grammar)), (Some(x), Some(y)) if x == y),
    );
    if !same_trees {
        return false;
    }
    match (tokens(a), tokens(b)) {
        (Some(a_tokens), Some(b_tokens)) => a_tokens == b_tokens,
        _ => false,
    }
}

/// `command`'s tree in one grammar, with every source position and source text taken out.
fn tree(command: &str, grammar: Grammar) -> Option<Script> {
    let mut script = Script::parse_in(command, grammar).ok()?;
    strip_script(&mut script);
    Some(script)
}

fn strip_script(script: &mut Script) {
    script.source.clear();
    strip_list(&mut script.body);
    for heredoc in &mut script.heredocs {
        heredoc.expansions.iter_mut().for_each(strip_expansion);
    }
}

fn strip_list(list: &mut List) {
    for item in &mut list.items {
        strip_and_or(&mut item.and_or);
    }
}

fn strip_and_or(and_or: &mut AndOr) {
    strip_pipeline(&mut and_or.first);
    for (_, pipeline) in &mut and_or.rest {
        strip_pipeline(pipeline);
    }
}

fn strip_pipeline(pipeline: &mut Pipeline) {
    for command in &mut pipeline.commands {
        match command {
            Command::Simple(simple) => strip_simple(simple),
            Command::Compound(compound, redirects) => {
                strip_compound(compound);
                redirects.iter_mut().for_each(strip_redirect);
            }
            Command::FunctionDef(def) => {
                strip_compound(&mut def.body);
                def.redirects.iter_mut().for_each(strip_redirect);
            }
        }
    }
}

fn strip_simple(simple: &mut SimpleCommand) {
    simple.span = 0..0;
    simple.assignments.iter_mut().for_each(strip_word);
    simple.words.iter_mut().for_each(strip_word);
    simple.redirects.iter_mut().for_each(strip_redirect);
}

fn strip_compound(compound: &mut Compound) {
    match compound {
        Compound::Group(list) | Compound::Subshell(list) => strip_list(list),
        Compound::If {
            branches,
            otherwise,
        } => {
            for (condition, body) in branches {
                strip_list(condition);
                strip_list(body);
            }
            if let Some(otherwise) = otherwise {
                strip_list(otherwise);
            }
        }
        Compound::Loop {
            condition, body, ..
        } => {
            strip_list(condition);
            strip_list(body);
        }
        Compound::For { words, body, .. } => {
            words.iter_mut().for_each(strip_word);
            strip_list(body);
        }
        Compound::ArithFor { header, body } => {
            header.iter_mut().for_each(strip_expansion);
            strip_list(body);
        }
        Compound::Case { word, arms } => {
            strip_word(word);
            for (patterns, body) in arms {
                patterns.iter_mut().for_each(strip_word);
                strip_list(body);
            }
        }
        Compound::Test(words) => words.iter_mut().for_each(strip_word),
        Compound::Arith(expansions) => expansions.iter_mut().for_each(strip_expansion),
    }
}

fn strip_word(word: &mut Word) {
    word.expansions.iter_mut().for_each(strip_expansion);
}

fn strip_expansion(expansion: &mut Expansion) {
    match expansion {
        Expansion::Command(list) | Expansion::Process(list) => strip_list(list),
        Expansion::Backtick(script) => strip_script(script),
        Expansion::Parameter | Expansion::Arithmetic => {}
    }
}

fn strip_redirect(redirect: &mut Redirect) {
    match &mut redirect.target {
        RedirectTarget::Word(word) => strip_word(word),
        RedirectTarget::HereDoc(_) => {}
    }
}

/// `command`'s tokens as written: each word with its quotes and backslashes, each run of
/// operator characters (`; | & < > ( )`) on its own, the blanks between them dropped;
/// `None` when a quote or an escape is left open.
///
/// It is only a spelling check beside the tree: where it splits differently from the
/// shell (inside `$(...)`, say), it does so alike on both sides, and the trees decide.
fn tokens(command: &str) -> Option<Vec<String>> {
    let mut tokens = Vec::new();
    let mut chars = command.chars().peekable();
    while let Some(&c) = chars.peek() {
        if is_blank(c) {
            // A newline separates commands; the tree keeps that, so it is dropped here too.
            chars.next();
            continue;
        }
        let mut token = String::new();
        if is_operator(c) {
            while let Some(&o) = chars.peek().filter(|&&o| is_operator(o)) {
                token.push(o);
                chars.next();
            }
            tokens.push(token);
            continue;
        }
        while let Some(&c) = chars.peek() {
            if is_blank(c) || is_operator(c) {
                break;
            }
            chars.next();
            token.push(c);
            match c {
                '\'' => loop {
                    let inner = chars.next()?;
                    token.push(inner);
                    if inner == '\'' {
                        break;
                    }
                },
                '"' => loop {
                    let inner = chars.next()?;
                    token.push(inner);
                    match inner {
                        '"' => break,
                        '\\' => token.push(chars.next()?),
                        _ => {}
                    }
                },
                '\\' => token.push(chars.next()?),
                _ => {}
            }
        }
        tokens.push(token);
    }
    Some(tokens)
}

/// The characters a shell splits words on: space, tab and newline. Any other white space
/// (a carriage return, a no-break space) is part of a word to a shell, so it is here too.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n')
}

fn is_operator(c: char) -> bool {
    matches!(c, ';' | '|' | '&' | '<' | '>' | '(' | ')')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) -> bool {
        let verdict = same_command(a, b, Shell::Sh);
        assert_eq!(
            verdict,
            same_command(b, a, Shell::Sh),
            "symmetric: {a} / {b}"
        );
        verdict
    }

    // rule: GATE-9
    #[test]
    fn blank_space_between_words_does_not_change_a_command() {
        assert!(same(
            "systemctl restart nginx",
            "  systemctl   restart\tnginx "
        ));
        assert!(same("echo a;echo b", "echo a ; echo b"));
        assert!(same("a && b | c > /tmp/x", "a&&b|c>/tmp/x"));
        assert!(same("sed -i 's/a  b/c/' f", "sed  -i 's/a  b/c/'  f"));
    }

    // rule: GATE-9
    #[test]
    fn an_escaped_character_is_not_its_plain_form() {
        assert!(!same(
            "systemctl restart nginx",
            r"systemctl restart ngin\x"
        ));
        assert!(!same(
            "systemctl restart nginx",
            r"systemctl re\start nginx"
        ));
        assert!(!same(
            "systemctl restart nginx",
            "systemctl restart 'nginx'"
        ));
        assert!(!same(r"ls my\ dir", "ls 'my dir'"));
    }

    // rule: GATE-9
    #[test]
    fn a_quoted_operator_is_not_the_operator() {
        assert!(!same(
            "systemctl restart nginx;",
            "systemctl restart nginx';'"
        ));
        assert!(!same(
            "systemctl restart nginx",
            "systemctl restart nginx';'"
        ));
        assert!(!same("a | b", "a '|' b"));
        assert!(!same("echo a > f", "echo a '>' f"));
        assert!(!same("a\nb", "a b"));
        assert!(!same("a & b", "a ; b"));
    }

    // rule: GATE-9
    #[test]
    fn white_space_a_shell_does_not_split_on_is_part_of_the_word() {
        assert!(!same(
            "systemctl restart nginx",
            "systemctl restart nginx\r"
        ));
        assert!(!same(
            "systemctl restart nginx",
            "systemctl\u{a0}restart nginx"
        ));
    }

    // rule: GATE-9
    #[test]
    fn a_quoted_word_is_not_an_expansion() {
        assert!(!same("rm $DIR", "rm '$DIR'"));
        assert!(!same("rm $DIR", "rm \"$DIR\""));
        assert!(!same("ls *.conf", "ls '*.conf'"));
        assert!(!same("echo $(id)", "echo '$(id)'"));
        assert!(same("ls *.conf", "ls  *.conf"));
    }

    // rule: GATE-9
    #[test]
    fn different_words_redirections_or_assignments_are_different_commands() {
        assert!(!same("systemctl restart nginx", "systemctl restart nginx2"));
        assert!(!same(
            "systemctl restart nginx",
            "systemctl restart nginx; rm -rf /"
        ));
        assert!(!same("echo a > f", "echo a >> f"));
        assert!(!same("echo a 2> f", "echo a > f"));
        assert!(!same("A=1 make", "A=2 make"));
        assert!(!same("cat <<EOF\na\nEOF", "cat <<EOF\nb\nEOF"));
    }

    // rule: GATE-9
    #[test]
    fn a_command_that_does_not_parse_is_the_same_as_nothing() {
        assert!(!same("echo 'open", "echo 'open"));
        assert!(!same("if true; then", "if true; then"));
        assert!(same("if true; then a; fi", "if true;  then a; fi"));
    }
}
