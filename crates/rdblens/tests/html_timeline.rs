//! The expiry timeline's cluster labels in a real browser: headless
//! Chromium draws the page of a dump with two clusters 30 seconds apart
//! among expiries spread over a day (on the whole-range view their bands
//! share a pixel), and the boxes of the labels as drawn must not
//! intersect. The test measures them itself: its copy of the page gets a
//! script (the page's policy allows inline scripts) that, once the page's
//! own script has drawn the chart, writes the SVG `getBBox` of every
//! `cluster · N keys` label into `<pre id="label-boxes">` as JSON, which
//! `--dump-dom` then shows.
//!
//! Needs `chromium` (Debian package; `.ci/run` installs it). Without it the
//! test says so and passes, except under CI (`CI` set), where it fails.

mod support;

use std::path::Path;

use serde_json::Value;
use support::rdblens;

/// Chromium headless, offline, with a private profile.
fn dump_dom(bin: &Path, profile: &Path, page: &Path) -> String {
    let out = support::headless_chromium(bin, profile)
        .arg("--window-size=1400,2000")
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Measures the timeline's cluster labels once the page has loaded.
const MEASURE: &str = r##"<script>
window.addEventListener("load", function () {
  setTimeout(function () {
    var boxes = [];
    document.querySelectorAll("#timeline text").forEach(function (t) {
      if (t.textContent.indexOf("cluster \u00b7") === 0) {
        var b = t.getBBox();
        boxes.push([b.x, b.y, b.width, b.height]);
      }
    });
    var pre = document.createElement("pre");
    pre.id = "label-boxes";
    pre.textContent = JSON.stringify(boxes);
    document.body.appendChild(pre);
  }, 100);
});
</script>"##;

/// `[x, y, width, height]` of every cluster label, as [`MEASURE`] wrote them.
fn label_boxes(dom: &str) -> Vec<[f64; 4]> {
    let open = "<pre id=\"label-boxes\">";
    let at = dom
        .find(open)
        .unwrap_or_else(|| panic!("the labels were not measured"))
        + open.len();
    serde_json::from_str(&dom[at..at + dom[at..].find('<').unwrap()]).unwrap()
}

fn intersect(a: &[f64; 4], b: &[f64; 4]) -> bool {
    a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3]
}

#[test]
fn close_clusters_have_labels_that_do_not_overlap() {
    let Some(bin) = support::chromium("close_clusters_have_labels_that_do_not_overlap") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("two-clusters.rdb");
    let t0: i64 = 1_800_000_000_000;
    let mut rdb = support::RdbBuilder::new();
    // 2,000 keys over a day around the clusters, one every 43.2 s, none in
    // their seconds.
    for n in 0..2000i64 {
        rdb = rdb.string(
            format!("cache:{n}").as_bytes(),
            b"v",
            Some(t0 - 43_178_400 + n * 43_200),
        );
    }
    for n in 0..300 {
        rdb = rdb
            .string(format!("flash:{n}").as_bytes(), b"v", Some(t0 + 100))
            .string(format!("promo:{n}").as_bytes(), b"v", Some(t0 + 30_100));
    }
    std::fs::write(&dump, rdb.finish()).unwrap();
    let dump = dump.to_string_lossy().to_string();
    let json: Value = serde_json::from_slice(
        &rdblens()
            .args(["report", &dump, "-q", "--format", "json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    let clusters: Vec<(i64, u64)> = json["expiry"]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["start_ms"].as_i64().unwrap(), c["keys"].as_u64().unwrap()))
        .collect();
    assert_eq!(clusters, vec![(t0, 300), (t0 + 30_000, 300)]);
    let page = dir.path().join("report.html");
    rdblens()
        .args(["report", &dump, "-q", "--format", "html", "-o"])
        .arg(&page)
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).unwrap();
    let body_end = html.rfind("</body>").unwrap();
    std::fs::write(
        &page,
        format!("{}{MEASURE}{}", &html[..body_end], &html[body_end..]),
    )
    .unwrap();

    let dom = dump_dom(&bin, &dir.path().join("profile"), &page);
    assert!(dom.contains("data-errors=\"0\""), "the page's script failed");
    let boxes = label_boxes(&dom);
    assert_eq!(boxes.len(), 2, "one label per cluster: {boxes:?}");
    for b in &boxes {
        // Drawn (a label of a chart not rendered measures 0), inside the chart.
        assert!(b[2] > 50.0 && b[3] > 8.0, "label not drawn: {b:?}");
        assert!(
            b[0] >= 0.0 && b[0] + b[2] <= 1200.0 && b[1] >= 0.0,
            "label outside the chart: {b:?}"
        );
    }
    assert!(!intersect(&boxes[0], &boxes[1]), "labels overlap: {boxes:?}");
    assert_eq!(dom.matches("cluster · 300 keys").count(), 2);
}
