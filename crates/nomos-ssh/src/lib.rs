//! SSH and local command executors for Nomos, with the host inventory.
