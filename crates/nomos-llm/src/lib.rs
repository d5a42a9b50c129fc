//! OpenAI-compatible chat models, a scripted stub and record/replay for Nomos.
