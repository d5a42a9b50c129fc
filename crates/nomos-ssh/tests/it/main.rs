//! Integration tests of the executors against a real loopback sshd.
