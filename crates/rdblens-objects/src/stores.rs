//! One `object_store` client per bucket or container, configured from the
//! environment the way each cloud's own tools are, plus the shared
//! profile files for S3 (which `object_store` does not read).

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::http::HttpBuilder;
use object_store::{BackoffConfig, ClientConfigKey, ClientOptions, ObjectStore, RetryConfig};

use crate::location::{Location, Scheme};

/// Requests are retried with exponential back-off (0.1 s doubling to at
/// most 15 s, 10 times, within 3 minutes) on throttling (429, 503
/// SlowDown), server errors and connection failures; a body cut short is
/// resumed by the reader (src/reader.rs).
fn retry() -> RetryConfig {
    RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(15),
            base: 2.0,
        },
        max_retries: 10,
        retry_timeout: Duration::from_secs(180),
    }
}

/// The client settings every store gets on top of the environment's: no
/// limit on a whole request (a large dump streams for minutes, as fast as
/// the analysis takes it), but one on each read of the body, so a stalled
/// connection is noticed and resumed.
const CLIENT: [(ClientConfigKey, &str); 2] = [
    (ClientConfigKey::Timeout, "24h"),
    (ClientConfigKey::ReadTimeout, "60s"),
];

pub fn build(location: &Location) -> object_store::Result<Arc<dyn ObjectStore>> {
    Ok(match location.scheme {
        Scheme::S3 => {
            let mut builder = AmazonS3Builder::from_env();
            for (key, value) in aws_profile() {
                builder = builder.with_config(key, value);
            }
            for (key, value) in CLIENT {
                builder = builder.with_config(AmazonS3ConfigKey::Client(key), value);
            }
            Arc::new(
                builder
                    .with_bucket_name(&location.bucket)
                    .with_retry(retry())
                    .build()?,
            )
        }
        Scheme::Gcs => {
            let mut builder = GoogleCloudStorageBuilder::from_env();
            for (key, value) in CLIENT {
                builder = builder.with_config(GoogleConfigKey::Client(key), value);
            }
            Arc::new(
                builder
                    .with_bucket_name(&location.bucket)
                    .with_retry(retry())
                    .build()?,
            )
        }
        Scheme::Azure => {
            let mut builder = MicrosoftAzureBuilder::from_env().with_url(&location.store_url);
            for (key, value) in CLIENT {
                builder = builder.with_config(AzureConfigKey::Client(key), value);
            }
            Arc::new(
                builder
                    .with_container_name(&location.bucket)
                    .with_retry(retry())
                    .build()?,
            )
        }
        Scheme::Http => {
            // The URL was written with `http://` on purpose.
            let plain = location
                .store_url
                .get(..7)
                .is_some_and(|s| s.eq_ignore_ascii_case("http://"));
            let mut options = ClientOptions::new().with_allow_http(plain);
            for (key, value) in CLIENT {
                options = options.with_config(key, value);
            }
            Arc::new(
                HttpBuilder::new()
                    .with_url(&location.store_url)
                    .with_client_options(options)
                    .with_retry(retry())
                    .build()?,
            )
        }
    })
}

/// The settings of the shared AWS profile (`AWS_PROFILE`, else `default`)
/// that the environment does not set: the keys from the credentials file
/// (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`), the region
/// and endpoint from the config file (`AWS_CONFIG_FILE`, else `~/.aws/config`).
fn aws_profile() -> Vec<(AmazonS3ConfigKey, String)> {
    let profile = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let file = |var: &str, default: &str| {
        std::env::var_os(var)
            .map(std::path::PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws").join(default)))
            .and_then(|path| std::fs::read_to_string(path).ok())
            .unwrap_or_default()
    };
    let credentials = ini_section(&file("AWS_SHARED_CREDENTIALS_FILE", "credentials"), &profile);
    let config_section = if profile == "default" {
        profile.clone()
    } else {
        format!("profile {profile}")
    };
    let config = ini_section(&file("AWS_CONFIG_FILE", "config"), &config_section);
    let mut settings = Vec::new();
    // The keys go together: a key from the environment is never paired
    // with a secret from the file.
    if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
        for (name, key) in [
            ("aws_access_key_id", AmazonS3ConfigKey::AccessKeyId),
            ("aws_secret_access_key", AmazonS3ConfigKey::SecretAccessKey),
            ("aws_session_token", AmazonS3ConfigKey::Token),
        ] {
            if let Some(value) = lookup(&credentials, name) {
                settings.push((key, value));
            }
        }
    }
    for (name, env, key) in [
        (
            "region",
            ["AWS_REGION", "AWS_DEFAULT_REGION"],
            AmazonS3ConfigKey::Region,
        ),
        (
            "endpoint_url",
            ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"],
            AmazonS3ConfigKey::Endpoint,
        ),
    ] {
        if env.iter().all(|v| std::env::var_os(v).is_none()) {
            if let Some(value) = lookup(&config, name) {
                settings.push((key, value));
            }
        }
    }
    settings
}

/// The `name = value` lines of the `[section]` of an INI file.
fn ini_section(text: &str, section: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut pairs = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = name.trim() == section;
        } else if let (true, Some((name, value))) = (inside, line.split_once('=')) {
            pairs.push((name.trim().to_string(), value.trim().to_string()));
        }
    }
    pairs
}

fn lookup(pairs: &[(String, String)], name: &str) -> Option<String> {
    pairs.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_sections_are_read_by_name() {
        let text = "[default]\naws_access_key_id = A\n[profile dev]\nregion=eu-west-1\n# c\nendpoint_url = http://x\n";
        assert_eq!(
            lookup(&ini_section(text, "default"), "aws_access_key_id").as_deref(),
            Some("A")
        );
        let dev = ini_section(text, "profile dev");
        assert_eq!(lookup(&dev, "region").as_deref(), Some("eu-west-1"));
        assert_eq!(lookup(&dev, "endpoint_url").as_deref(), Some("http://x"));
        assert_eq!(lookup(&dev, "aws_access_key_id"), None);
    }
}
