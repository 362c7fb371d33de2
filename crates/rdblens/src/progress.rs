//! The progress bar on standard error (bytes walked of all inputs, rate,
//! ETA). Shown only when it helps: standard error is a terminal, the inputs
//! are large, and `--quiet` was not given. It never touches standard output.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rdblens_summary::Progress;

/// Inputs smaller than this finish too fast for a bar to be worth drawing.
pub const MIN_BYTES: u64 = 64 << 20;

pub const TEMPLATE: &str =
    "{spinner} [{elapsed_precise}] [{wide_bar}] {bytes}/{total_bytes} ({binary_bytes_per_sec}, ETA {eta})";

pub fn should_show(quiet: bool, stderr_is_terminal: bool, total_bytes: u64) -> bool {
    !quiet && stderr_is_terminal && total_bytes > MIN_BYTES
}

/// One bar over several files, walked one after the other or at the same
/// time (each file's hook adds what it walked since its last call).
pub struct FilesProgress {
    bar: Option<ProgressBar>,
}

impl FilesProgress {
    /// A bar over `total` bytes (of inputs already opened, decompressed).
    pub fn for_bytes(total: u64, quiet: bool) -> Self {
        let bar = should_show(quiet, std::io::stderr().is_terminal(), total).then(|| {
            let style =
                ProgressStyle::with_template(TEMPLATE).unwrap_or_else(|_| ProgressStyle::default_bar());
            ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr()).with_style(style)
        });
        FilesProgress { bar }
    }

    /// A hook that moves the bar to the bytes walked of all the files
    /// (told by several threads, so never moved back); `None` when hidden.
    pub fn hook(&self) -> Option<Progress> {
        let bar = self.bar.clone()?;
        let furthest = AtomicU64::new(0);
        Some(Progress::new(move |done| {
            if furthest.fetch_max(done, Ordering::Relaxed) < done {
                bar.set_position(done);
            }
        }))
    }
}

impl FilesProgress {
    /// Prints a line on standard error without garbling the bar.
    pub fn eprintln(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

impl Drop for FilesProgress {
    /// The bar is cleared before anything is printed after it.
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_for_large_inputs_on_a_terminal_without_quiet() {
        assert!(should_show(false, true, MIN_BYTES + 1));
        assert!(!should_show(true, true, MIN_BYTES + 1));
        assert!(!should_show(false, false, MIN_BYTES + 1));
        assert!(!should_show(false, true, MIN_BYTES));
    }

    #[test]
    fn hidden_bars_leave_the_options_alone() {
        let p = FilesProgress::for_bytes(0, false);
        assert!(p.bar.is_none());
        assert!(p.hook().is_none());
    }
}
