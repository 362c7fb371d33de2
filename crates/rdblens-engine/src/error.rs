//! Why an analysis produced no summary: the file's fault or rdblens's.
//!
//! The two are told apart so that a caller never reports a bug of its own
//! (a worker thread that panicked, a thread pool that could not start) to a
//! user as damage in their file.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why an analysis could not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The file cannot be read as an RDB file: its header, or a record the
    /// walk cannot get past before any key (bad input).
    #[error(transparent)]
    Input(#[from] rdblens_parser::Error),
    /// rdblens failed, not the file: a worker thread panicked or the thread
    /// pool could not start. The message says which.
    #[error("internal error: {0} (a fault in rdblens or the machine, not in the file)")]
    Internal(String),
    /// The summaries of several files could not be merged: a total past
    /// its bound (bad input).
    #[error(transparent)]
    Merge(#[from] rdblens_summary::MergeError),
}

impl AnalysisError {
    /// True when the input is at fault (not rdblens).
    pub fn is_input(&self) -> bool {
        !matches!(self, AnalysisError::Internal(_))
    }
}

/// Runs `f`, turning a panic in it (or in a thread it joins) into
/// [`AnalysisError::Internal`] with the panic's message.
pub(crate) fn guarded<R>(f: impl FnOnce() -> Result<R, AnalysisError>) -> Result<R, AnalysisError> {
    // AssertUnwindSafe: after a panic nothing `f` touched is used again;
    // the caller only gets the error.
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panicked(payload.as_ref())))
}

/// The error for a thread that panicked with `payload`.
pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> AnalysisError {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    AnalysisError::Internal(format!("a worker thread panicked: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_error_with_its_message() {
        let r: Result<(), AnalysisError> = guarded(|| panic!("boom {}", 7)); // ok: unit test (the panic under test)
        match r {
            Err(AnalysisError::Internal(m)) => assert_eq!(m, "a worker thread panicked: boom 7"),
            other => panic!("expected an internal error, got {other:?}"), // ok: unit test
        }
        let ok: Result<u8, AnalysisError> = guarded(|| Ok(3));
        assert_eq!(ok.ok(), Some(3));
    }
}
