//! The tools a summary's checks are written with: [`Checker`] walks the
//! fields, names the path of the first wrong one ([`CheckError`]), and
//! holds the bounds every count is held to. Kept apart from
//! [`Summary::check`](crate::Summary::check), which reads every part of a
//! summary, so that each accumulator can check its own shape without
//! importing the summary.

/// The largest count or byte total a summary holds: 2^53, so every figure
/// reads back exactly from JSON wherever it is read (a double holds it),
/// and two of them add up without overflow. A merge whose total would
/// pass it is refused, naming the field.
pub const MAX_COUNT: u64 = 1 << 53;

/// What is wrong with a summary, and where: the JSON field's path (`summary.keys.slots.memory`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckError {
    /// The JSON field's path, e.g. `summary.keys.slots.memory`.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl std::fmt::Display for CheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for CheckError {}

pub type Checked = Result<(), CheckError>;

/// The path being checked, one JSON field or index per entry.
pub(crate) struct Checker {
    path: Vec<String>,
}

impl Checker {
    pub(crate) fn new(root: &str) -> Self {
        Checker {
            path: vec![root.to_string()],
        }
    }

    /// Runs `f` one field deeper.
    pub(crate) fn at<T>(&mut self, field: impl std::fmt::Display, f: impl FnOnce(&mut Self) -> T) -> T {
        self.path.push(field.to_string());
        let out = f(self);
        self.path.pop();
        out
    }

    fn path(&self) -> String {
        let mut out = String::new();
        for p in &self.path {
            if !p.starts_with('[') && !out.is_empty() {
                out.push('.');
            }
            out.push_str(p);
        }
        out
    }

    /// An error at the current path.
    pub(crate) fn fail(&self, message: impl Into<String>) -> CheckError {
        CheckError {
            path: self.path(),
            message: message.into(),
        }
    }

    /// An error at `field` under the current path.
    pub(crate) fn fail_at(
        &mut self,
        field: impl std::fmt::Display,
        message: impl Into<String>,
    ) -> CheckError {
        let message = message.into();
        self.at(field, |c| c.fail(message))
    }

    /// `field` is at most [`MAX_COUNT`].
    pub(crate) fn count(&mut self, field: &str, v: u64) -> Checked {
        if v > MAX_COUNT {
            return Err(self.fail_at(field, format!("{v} is over the limit of summaries (2^53)")));
        }
        Ok(())
    }

    /// `field`, a list of the first `cap` of `total` things (counted in
    /// `total_name`), holds exactly `len = min(total, cap)` records.
    pub(crate) fn first_kept(
        &mut self,
        field: &str,
        len: usize,
        total_name: &str,
        total: u64,
        cap: usize,
    ) -> Checked {
        let kept = usize::try_from(total).map_or(cap, |t| t.min(cap));
        if len != kept {
            return Err(self.fail_at(
                field,
                format!("{len} records, {total_name} {total} (the first {cap} are kept)"),
            ));
        }
        Ok(())
    }

    /// `field` (a part) is at most `whole` (named `whole_name`).
    pub(crate) fn at_most(&mut self, field: &str, v: u64, whole_name: &str, whole: u64) -> Checked {
        if v > whole {
            return Err(self.fail_at(field, format!("{v}, more than {whole_name} ({whole})")));
        }
        Ok(())
    }

    /// `field` adds up to `expected` (named `what`).
    pub(crate) fn sum_is(&mut self, field: &str, sum: Option<u64>, what: &str, expected: u64) -> Checked {
        match sum {
            Some(s) if s == expected => Ok(()),
            Some(s) => Err(self.fail_at(field, format!("adds up to {s}, {what} is {expected}"))),
            None => Err(self.fail_at(field, "adds up past 2^64")),
        }
    }
}

/// Sums without overflow (`None` past `u64::MAX`).
pub(crate) fn checked_sum(values: impl IntoIterator<Item = u64>) -> Option<u64> {
    values.into_iter().try_fold(0u64, |a, b| a.checked_add(b))
}
