//! Why an object URL could not be read.

/// Why an object URL could not be read (the message leaves the URL out:
/// callers name it).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The URL is not one this crate reads.
    #[error("{why}")]
    Url { url: String, why: String },
    /// No object has that key.
    #[error("no such object")]
    NotFound { url: String },
    /// The store refused the credentials, or they are missing.
    #[error(
        "access denied (check the credentials: environment variables, profile, instance or \
         workload identity): {detail}"
    )]
    Denied { url: String, detail: String },
    /// A prefix or glob that matched no object.
    #[error("no object under it (an empty prefix, or a pattern that matches no object)")]
    Empty { url: String },
    /// Any other failure of the store or the network, after the retries.
    /// (Not a `source`: its text already holds its causes' texts.)
    #[error("{error}")]
    Store { url: String, error: object_store::Error },
    /// A setting of the client's is not one it takes (a usage error).
    #[error("{0}")]
    Setting(String),
    /// The client's threads could not be started.
    #[error("cannot start the object storage client: {0}")]
    Runtime(#[source] std::io::Error),
}

impl Error {
    /// The error for a failed request on `url`.
    pub(crate) fn of(url: &str, source: object_store::Error) -> Error {
        let url = url.to_string();
        match source {
            object_store::Error::NotFound { .. } => Error::NotFound { url },
            object_store::Error::PermissionDenied { source, .. }
            | object_store::Error::Unauthenticated { source, .. } => Error::Denied {
                url,
                detail: source.to_string(),
            },
            error => Error::Store { url, error },
        }
    }
}
