//! Which tests may overlap. All integration tests are one binary, so any two of them can run
//! at the same time on the test harness's threads. Tests that measure (throughput, CPU, a
//! verdict, a deadline a loaded machine can miss) must have the machine to themselves: they
//! take the lock exclusively; every other test takes it shared, so they still overlap each
//! other. Each test takes one of the two as its first step and holds it to its end.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

/// For a test that measures: waits until no other test runs, and keeps them out until the
/// guard drops.
pub fn exclusive() -> RwLockWriteGuard<'static, ()> {
    // A test that panicked while holding the lock says nothing about the next one.
    MACHINE.write().unwrap_or_else(|e| e.into_inner())
}

/// For every other test: runs beside other shared tests, never beside a measuring one.
pub fn shared() -> RwLockReadGuard<'static, ()> {
    MACHINE.read().unwrap_or_else(|e| e.into_inner())
}
