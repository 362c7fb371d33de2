//! The HTML report in a real browser: headless Chromium loads the page of
//! fixtures/html/hostile.rdb with networking disabled; the test checks that
//! the script ran to the end with no error, no request and no blocked
//! request (the page's script writes these on <body>), reads figures back
//! from the DOM after the script ran and compares them with the JSON
//! report, and takes a screenshot: `html-report.png` in the test's own
//! temporary directory, or in `$RDBLENS_ARTIFACT_DIR` when that is set
//! (`.ci/run` sets it to keep the screenshot as a CI artifact).
//!
//! Needs `chromium` (Debian package; `.ci/run` installs it). Without it the
//! test says so and passes, except under CI (`CI` set), where it fails.

mod support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use support::rdblens;

const HOSTILE: &str = "fixtures/html/hostile.rdb";

/// The value of `name="..."` in the first tag that has `marker`.
fn attr<'d>(dom: &'d str, marker: &str, name: &str) -> &'d str {
    let at = dom
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} not in the DOM"));
    let tag_start = dom[..=at].rfind('<').unwrap();
    let tag = &dom[tag_start..tag_start + dom[tag_start..].find('>').unwrap()];
    let key = format!(" {name}=\"");
    let v = tag.find(&key).unwrap_or_else(|| panic!("no {name} in {tag}")) + key.len();
    &tag[v..v + tag[v..].find('"').unwrap()]
}

/// The text of the element whose opening tag ends with `open`.
fn text_after<'d>(dom: &'d str, open: &str) -> &'d str {
    let start = dom.find(open).unwrap_or_else(|| panic!("{open} not in the DOM")) + open.len();
    &dom[start..start + dom[start..].find('<').unwrap()]
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Where a file worth keeping after the run goes: `$RDBLENS_ARTIFACT_DIR`
/// (created if missing) when set, else the test's own temporary directory.
fn artifact_dir(temp: &Path) -> PathBuf {
    match std::env::var_os("RDBLENS_ARTIFACT_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            std::fs::create_dir_all(&dir)
                .unwrap_or_else(|e| panic!("RDBLENS_ARTIFACT_DIR {}: {e}", dir.display()));
            dir
        }
        None => temp.to_path_buf(),
    }
}

#[test]
fn report_in_headless_chromium() {
    let Some(bin) = support::chromium("report_in_headless_chromium") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    rdblens()
        .args(["report", HOSTILE, "-q", "--format", "html", "-o"])
        .arg(&page)
        .assert()
        .success();
    let json: Value = serde_json::from_slice(
        &rdblens()
            .args(["report", HOSTILE, "-q", "--format", "json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    let url = format!("file://{}", page.display());

    let out = support::headless_chromium(&bin, &dir.path().join("profile"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8(out.stdout).unwrap();

    // The script ran to the end, with no error and no request.
    assert_eq!(
        attr(&dom, "<body", "data-ready"),
        "1",
        "the page's script did not finish"
    );
    assert_eq!(
        attr(&dom, "<body", "data-errors"),
        "0",
        "{}",
        attr(&dom, "<body", "data-error-text")
    );
    assert_eq!(attr(&dom, "<body", "data-requests"), "0");
    assert_eq!(attr(&dom, "<body", "data-blocked"), "0");
    // The charts were drawn.
    assert!(dom
        .contains("<div class=\"chart\" id=\"treemap\" role=\"img\" aria-label=\"Namespace treemap\"><svg"));
    assert!(
        dom.contains("<div class=\"chart\" id=\"timeline\" role=\"img\" aria-label=\"Expiry timeline\"><svg")
    );
    // No key name became an element: the DOM has no script but the page's two.
    assert_eq!(dom.matches("<script").count(), 2);
    assert!(!dom.contains("<img"));

    // Figures read back from the DOM equal the JSON report's.
    let keys = json["totals"]["keys"].as_u64().unwrap();
    assert_eq!(attr(&dom, "id=\"total-keys\"", "data-v"), keys.to_string());
    assert_eq!(text_after(&dom, "id=\"total-keys\" data-v=\"1310\">"), "1,310");
    let biggest = &json["top_keys"]["by_memory"][0];
    let shown = unescape(text_after(&dom, "<code id=\"biggest-key\">"));
    assert_eq!(shown, format!("\"{}\"", biggest["key"].as_str().unwrap()));
    let cluster = json["expiry"]["clusters"][0]["keys"].as_u64().unwrap();
    assert_eq!(
        attr(&dom, "<tr id=\"cluster-0\"", "data-keys"),
        cluster.to_string()
    );
    // The timeline marks the cluster with its key count.
    assert!(
        dom.contains(&format!("cluster · {cluster} keys")),
        "no cluster marker in the timeline"
    );

    let shot = artifact_dir(dir.path()).join("html-report.png");
    let out = support::headless_chromium(&bin, &dir.path().join("profile"))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1400,2000")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 50_000,
        "screenshot of {} bytes",
        png.len()
    );
}
