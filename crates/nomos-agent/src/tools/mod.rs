//! The tools the model sees: specs, argument parsing, knowledge tools and extra tools.

pub mod args;
pub mod extra;
pub(crate) mod fanout;
pub(crate) mod guests;
pub mod knowledge;
pub(crate) mod output;
pub mod specs;

pub use args::{ArgsError, Call, KnowledgeCall, parse_call};
pub use extra::{ExtraTool, ExtraToolKind, ExtraTools};
pub use specs::builtin_specs;
