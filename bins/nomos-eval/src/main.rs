//! `nomos-eval`: replays golden conversations and evaluates the classifier corpus.

fn main() {}
