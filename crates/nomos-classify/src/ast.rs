//! The shell syntax tree the classifier walks: scripts, lists, pipelines, commands, words.
//!
//! The tree keeps what classification needs and nothing more: the text of each word after
//! quote removal, whether it holds expansions, the commands its substitutions run, where
//! each simple command sits in its source (for reasons), and every redirection.

use std::ops::Range;

/// A parsed command string: the unit the classifier reads.
///
/// `$(...)` substitutions share their enclosing script's source and here-documents;
/// backtick substitutions and re-read strings (`bash -c '...'`) are scripts of their own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    /// The text this script was read from; spans index into it.
    pub source: String,
    /// The top-level list.
    pub body: List,
    /// Here-document bodies, indexed by [`HereDocId`].
    pub heredocs: Vec<HereDoc>,
}

/// A sequence of and-or lists separated by `;`, `&` or newlines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct List {
    /// The items in order.
    pub items: Vec<ListItem>,
}

/// One and-or list with the separator that ends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListItem {
    /// The and-or list.
    pub and_or: AndOr,
    /// How it is run.
    pub mode: RunMode,
}

/// Whether a list item runs in the foreground or the background.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// Ended by `;`, a newline or the end of the list.
    Foreground,
    /// Ended by `&`.
    Background,
}

/// Pipelines joined by `&&` and `||`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AndOr {
    /// The first pipeline.
    pub first: Pipeline,
    /// The following pipelines with the operator before each.
    pub rest: Vec<(Connector, Pipeline)>,
}

/// The operator between two pipelines of an and-or list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// `&&`
    And,
    /// `||`
    Or,
}

/// Commands joined by `|` or `|&`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    /// Whether the pipeline starts with `!`.
    pub negation: Negation,
    /// The commands, left to right; each one's stdout feeds the next one's stdin.
    pub commands: Vec<Command>,
}

/// Whether a pipeline's status is negated with `!`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Negation {
    /// No `!`.
    Plain,
    /// Starts with `!`.
    Negated,
}

/// One command of a pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Assignments, words and redirections.
    Simple(SimpleCommand),
    /// A compound command with the redirections that follow it.
    Compound(Box<Compound>, Vec<Redirect>),
    /// `name() body` or `function name body`.
    FunctionDef(Box<FunctionDef>),
}

/// A compound command (CLASSIFY-2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compound {
    /// `{ list; }`
    Group(List),
    /// `( list )`
    Subshell(List),
    /// `if c; then b; [elif c; then b;]... [else b;] fi`
    If {
        /// Each condition with its body, `if` first, then every `elif`.
        branches: Vec<(List, List)>,
        /// The `else` body.
        otherwise: Option<List>,
    },
    /// `while c; do b; done` and `until c; do b; done`.
    Loop {
        /// Which keyword started the loop.
        kind: LoopKind,
        /// The condition.
        condition: List,
        /// The body.
        body: List,
    },
    /// `for name [in words]; do b; done` (also `select`).
    For {
        /// The loop variable.
        name: String,
        /// The words iterated over (their substitutions run).
        words: Vec<Word>,
        /// The body.
        body: List,
    },
    /// `for ((init; cond; step)); do b; done`
    ArithFor {
        /// Substitutions found in the arithmetic header.
        header: Vec<Expansion>,
        /// The body.
        body: List,
    },
    /// `case word in pattern) list;; ... esac`
    Case {
        /// The word matched.
        word: Word,
        /// The arms: patterns and body.
        arms: Vec<(Vec<Word>, List)>,
    },
    /// `[[ ... ]]`: a test with its words.
    Test(Vec<Word>),
    /// `(( ... ))`: arithmetic with the substitutions found in it.
    Arith(Vec<Expansion>),
}

/// Which keyword started a loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    /// `while`
    While,
    /// `until`
    Until,
}

/// A shell function definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionDef {
    /// The function's name.
    pub name: String,
    /// The body (a compound command).
    pub body: Compound,
    /// Redirections applied whenever the function runs.
    pub redirects: Vec<Redirect>,
}

/// A simple command: `A=1 prog arg >file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading `NAME=value` assignments.
    pub assignments: Vec<Word>,
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// Every redirection, wherever it appeared among the words.
    pub redirects: Vec<Redirect>,
    /// Where the command sits in its script's source.
    pub span: Range<usize>,
}

/// One word after quote removal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word's text with quotes removed; expansions keep their source spelling (`$HOME`).
    pub text: String,
    /// Whether any part of the word was quoted or escaped.
    pub quoting: Quoting,
    /// Byte offset in `text` where the first quoted, escaped or expanded part starts.
    pub literal_prefix: usize,
    /// The expansions in the word, in order.
    pub expansions: Vec<Expansion>,
}

/// Whether a word carried quotes or escapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quoting {
    /// Bare text only.
    Bare,
    /// Some part was quoted or escaped.
    Quoted,
}

/// Something in a word whose value is only known when the shell runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expansion {
    /// `$name`, `${...}`, `$1`, `$@`, or a glob the shell expands.
    Parameter,
    /// `$(...)`: the list it runs, in the enclosing script's source.
    Command(List),
    /// `` `...` ``: a script of its own (the text after backslash removal).
    Backtick(Box<Script>),
    /// `<(...)` or `>(...)`: the list it runs.
    Process(List),
    /// `$((...))`.
    Arithmetic,
}

/// A redirection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redirect {
    /// The operator.
    pub op: RedirectOp,
    /// The target word, or the here-document.
    pub target: RedirectTarget,
}

/// The redirection operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirectOp {
    /// `<`
    Read,
    /// `>` or `>|`
    Write,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `&>` (stdout and stderr to a file)
    WriteAll,
    /// `&>>`
    AppendAll,
    /// `<&` and `>&` with a target
    Duplicate,
    /// `<<` or `<<-`
    HereDoc,
    /// `<<<`
    HereString,
}

/// What a redirection points at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RedirectTarget {
    /// A file name, a descriptor number or `-`.
    Word(Word),
    /// A here-document body.
    HereDoc(HereDocId),
}

/// Index of a here-document in [`Script::heredocs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HereDocId(pub usize);

/// A here-document body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HereDoc {
    /// The body text, as the command reads it.
    pub body: String,
    /// Substitutions in the body (only when the delimiter was unquoted).
    pub expansions: Vec<Expansion>,
}

impl Word {
    /// The word's static text, or `None` when it holds an expansion.
    pub fn literal(&self) -> Option<&str> {
        if self.expansions.is_empty() {
            Some(&self.text)
        } else {
            None
        }
    }

    /// Whether the word is exactly `keyword`, unquoted (so the shell reads it as a keyword).
    pub fn is_keyword(&self, keyword: &str) -> bool {
        self.quoting == Quoting::Bare && self.expansions.is_empty() && self.text == keyword
    }

    /// The variable name when the word is an assignment (`NAME=value`, `NAME+=value`).
    pub fn assignment_name(&self) -> Option<&str> {
        let eq = self.text.find('=')?;
        // The name and the `=` must be bare text: `"A"=1` is a command, not an assignment.
        if eq >= self.literal_prefix {
            return None;
        }
        let name = self.text[..eq]
            .strip_suffix('+')
            .unwrap_or(&self.text[..eq]);
        if is_name(name) { Some(name) } else { None }
    }
}

impl Expansion {
    /// Whether a `case` command is in this substitution, at any depth.
    pub fn holds_case(&self) -> bool {
        match self {
            Expansion::Command(list) | Expansion::Process(list) => list.holds_case(),
            Expansion::Backtick(script) => script.body.holds_case(),
            Expansion::Parameter | Expansion::Arithmetic => false,
        }
    }
}

impl List {
    /// Whether a `case` command is in this list, at any depth (substitutions included).
    pub fn holds_case(&self) -> bool {
        self.items.iter().any(|item| {
            std::iter::once(&item.and_or.first)
                .chain(item.and_or.rest.iter().map(|(_, pipeline)| pipeline))
                .flat_map(|pipeline| &pipeline.commands)
                .any(Command::holds_case)
        })
    }
}

impl Command {
    fn holds_case(&self) -> bool {
        match self {
            Command::Simple(simple) => simple
                .assignments
                .iter()
                .chain(&simple.words)
                .any(Word::holds_case),
            Command::Compound(compound, _) => compound.holds_case(),
            Command::FunctionDef(def) => def.body.holds_case(),
        }
    }
}

impl Compound {
    /// The command lists it runs, in order: each condition and body (a `case`'s arms, a
    /// loop's condition and body, ...); none for `[[ ]]` and `(( ))`.
    pub fn lists(&self) -> Vec<&List> {
        match self {
            Compound::Group(body) | Compound::Subshell(body) => vec![body],
            Compound::If {
                branches,
                otherwise,
            } => branches
                .iter()
                .flat_map(|(condition, body)| [condition, body])
                .chain(otherwise)
                .collect(),
            Compound::Loop {
                condition, body, ..
            } => vec![condition, body],
            Compound::For { body, .. } | Compound::ArithFor { body, .. } => vec![body],
            Compound::Case { arms, .. } => arms.iter().map(|(_, body)| body).collect(),
            Compound::Test(_) | Compound::Arith(_) => Vec::new(),
        }
    }

    fn holds_case(&self) -> bool {
        match self {
            Compound::Case { .. } => true,
            Compound::Group(list) | Compound::Subshell(list) => list.holds_case(),
            Compound::If {
                branches,
                otherwise,
            } => {
                branches
                    .iter()
                    .any(|(condition, body)| condition.holds_case() || body.holds_case())
                    || otherwise.as_ref().is_some_and(List::holds_case)
            }
            Compound::Loop {
                condition, body, ..
            } => condition.holds_case() || body.holds_case(),
            Compound::For { words, body, .. } => {
                words.iter().any(Word::holds_case) || body.holds_case()
            }
            Compound::ArithFor { header, body } => {
                header.iter().any(Expansion::holds_case) || body.holds_case()
            }
            Compound::Test(words) => words.iter().any(Word::holds_case),
            Compound::Arith(expansions) => expansions.iter().any(Expansion::holds_case),
        }
    }
}

impl Word {
    fn holds_case(&self) -> bool {
        self.expansions.iter().any(Expansion::holds_case)
    }
}

/// Whether `text` is a valid shell variable name.
pub fn is_name(text: &str) -> bool {
    let mut bytes = text.bytes();
    matches!(bytes.next(), Some(b) if b == b'_' || b.is_ascii_alphabetic())
        && bytes.all(|b| b == b'_' || b.is_ascii_alphanumeric())
}
