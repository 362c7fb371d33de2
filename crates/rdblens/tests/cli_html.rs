//! `--format html`: the page's structure, its Content-Security-Policy, and
//! that hostile key names (fixtures/html/hostile.rdb) appear as text, never
//! as markup, both in the tables and in the embedded JSON.

mod support;

use serde_json::Value;
use support::rdblens;

const HOSTILE: &str = "fixtures/html/hostile.rdb";

fn run(args: &[&str]) -> String {
    let out = rdblens()
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

fn html_report(extra: &[&str]) -> String {
    let mut args = vec!["report", HOSTILE, "-q", "--format", "html"];
    args.extend_from_slice(extra);
    run(&args)
}

fn json_report() -> Value {
    serde_json::from_str(&run(&["report", HOSTILE, "-q", "--format", "json"])).unwrap()
}

/// The embedded data block's text.
fn data_block(page: &str) -> &str {
    let open = "<script type=\"application/json\" id=\"rdblens-data\">";
    let start = page.find(open).unwrap() + open.len();
    let len = page[start..].find("</script>").unwrap();
    &page[start..start + len]
}

/// `id="..."` values of section, table and figure elements, in order: the
/// page's outline.
fn outline(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (pos, _) in page.match_indices(" id=\"") {
        let tag_start = page[..pos].rfind('<').unwrap();
        let tag = page[tag_start + 1..pos].split(' ').next().unwrap().to_string();
        let rest = &page[pos + 5..];
        let id = &rest[..rest.find('"').unwrap()];
        if !id.starts_with("cluster-") {
            out.push(format!("{tag}#{id}"));
        }
    }
    out
}

#[test]
fn page_is_self_contained_and_offline() {
    let page = html_report(&[]);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
    ));
    // Exactly two script blocks (data and code), both inline; nothing to fetch.
    assert_eq!(page.matches("<script").count(), 2);
    for attr in [
        "src=\"",
        "href=\"http",
        "href=\"//",
        "url(",
        "@import",
        "<link",
        "<iframe",
        "<img",
    ] {
        assert!(!page.contains(attr), "page contains {attr}");
    }
    // The only URL is the SVG namespace the script creates elements in.
    let urls: Vec<&str> = page
        .match_indices("http:")
        .map(|(i, _)| &page[i..i + 27])
        .collect();
    assert!(!page.contains("https:"));
    assert_eq!(urls, vec!["http://www.w3.org/2000/svg\""]);
}

#[test]
fn outline_of_the_report() {
    insta::assert_snapshot!(outline(&html_report(&[])).join("\n"));
}

#[test]
fn hostile_key_names_are_text() {
    let page = html_report(&[]);
    // Raw markup from a key name would start a tag; escaped it is text.
    for raw in [
        "<script>alert",
        "<img src=x",
        "<!--comment",
        "onmouseover=\"alert",
        "</script><script>",
    ] {
        assert!(!page.contains(raw), "unescaped {raw:?} in the page");
    }
    assert!(page.contains("<code>&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;</code>"));
    assert!(page.contains("<code>&quot;quote:\\&quot;x\\&quot; onmouseover=\\&quot;alert(2)&quot;</code>"));
    assert!(page.contains("<code>&quot;amp:&amp;lt;not-an-entity&amp;gt;&quot;</code>"));
    // Non-UTF-8 bytes the redis-cli way.
    assert!(page.contains("<code>&quot;bin:\\xff\\xfe\\x00\\x01&quot;</code>"));

    // The embedded JSON can end neither its block nor open a comment, and
    // still holds the names exactly.
    let data = data_block(&page);
    assert!(!data.contains('<') && !data.contains('>') && !data.contains('&'));
    let v: Value = serde_json::from_str(data).unwrap();
    let labels: Vec<&str> = v["namespaces"]["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n[0].as_str().unwrap())
        .collect();
    assert!(labels.contains(&"<script>alert(1)</script>"), "{labels:?}");
    assert!(
        labels.contains(&"ns</script><script>alert(3)</script>"),
        "{labels:?}"
    );
    assert!(labels.contains(&"bin"), "{labels:?}");
}

#[test]
fn figures_are_in_the_page_without_javascript() {
    let page = html_report(&[]);
    let json = json_report();
    let keys = json["totals"]["keys"].as_u64().unwrap();
    assert_eq!(keys, 1310);
    assert!(page.contains(&format!("id=\"total-keys\" data-v=\"{keys}\">1,310</div>")));
    let memory = json["totals"]["memory"].as_u64().unwrap();
    assert!(page.contains(&format!("id=\"total-memory\" data-v=\"{memory}\">")));
    // The biggest key by memory, as the JSON report has it.
    assert_eq!(
        json["top_keys"]["by_memory"][0]["key"],
        "amp:&lt;not-an-entity&gt;"
    );
    assert!(page.contains("<code id=\"biggest-key\">&quot;amp:&amp;lt;not-an-entity&amp;gt;&quot;</code>"));
    // The expiry cluster of the 600 `burst:*` keys, found in its second.
    let cluster = &json["expiry"]["clusters"][0];
    assert_eq!(cluster["keys"], 600);
    assert!(page.contains("<tr id=\"cluster-0\" data-keys=\"600\">"));
    // Every top-key row is a table row, not only chart data.
    assert!(page.contains("<table id=\"top-keys\" class=\"data sortable\">"));
    let rows = page.split("<table id=\"top-keys\"").nth(1).unwrap();
    let rows = &rows[..rows.find("</table>").unwrap()];
    let mut keys: Vec<String> = ["by_memory", "by_serialized", "by_elements"]
        .iter()
        .flat_map(|list| json["top_keys"][list].as_array().unwrap().iter())
        .map(|r| r.to_string())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 31);
    // Keys alike are one row: the 9 `burst:*` (20-byte strings expiring
    // together), `session:101`, `:228` and `:230` (191 bytes, 280 B), and
    // `session:199` and `:211` (189 bytes).
    assert_eq!(
        rows.matches("<tr>").count(),
        1 + 31 - 8 - 2 - 1,
        "the header and the three top lists' keys once each, keys alike in one row"
    );
    assert!(rows.contains(
        "<td class=\"key\" data-keys=\"9\">9 keys like <code>&quot;burst:*&quot;</code>, e.g. <code>&quot;burst:235&quot;</code></td>"
    ));
    // Their TTLs differ: the cell gives the shortest to the longest.
    assert!(rows.contains(
        "<td class=\"key\" data-keys=\"3\">3 keys like <code>&quot;session:*&quot;</code>, e.g. <code>&quot;session:101&quot;</code></td><td>string</td><td>raw</td><td class=\"n\" data-v=\"191\">191</td><td class=\"n\" data-v=\"280\">280 B</td><td class=\"n\" data-v=\"13\">13 B</td><td class=\"n\" data-v=\"191\">191 B</td><td class=\"n\" data-v=\"1960002383740\">1903.4d – 1907.6d</td>"
    ));
}

#[test]
fn sections_follow_the_section_flag() {
    let page = html_report(&["--section", "ttl"]);
    assert!(page.contains("<section id=\"ttl\">"));
    for absent in ["namespaces", "expiry", "findings", "bigkeys"] {
        assert!(!page.contains(&format!("<section id=\"{absent}\">")), "{absent}");
    }
}

#[test]
fn diff_page() {
    let page = run(&[
        "diff",
        "fixtures/rules/clean.rdb",
        HOSTILE,
        "-q",
        "--format",
        "html",
    ]);
    assert!(page.contains("<section id=\"namespaces\">"));
    assert!(page.contains("<td class=\"divcell\" data-v=\""));
    assert!(!page.contains("<script>alert"));
    assert!(page.contains("<td class=\"key\"><code>&lt;script&gt;alert(1)&lt;/script&gt;</code></td>"));
}

#[test]
fn summary_only_refuses_html() {
    rdblens()
        .args(["report", HOSTILE, "--format", "html", "--summary-only"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("--summary-only writes JSON"));
}

/// A 100-shard cluster's page with `--top 100` stays under 2 MB (the
/// issue's bound): the same 4,000-key summary merged 100 times, each copy
/// with its own slot list and top lists.
#[test]
fn hundred_shards_under_two_megabytes() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("s.json");
    rdblens()
        .args([
            "report",
            "fixtures/rules/expiry.rdb",
            "-q",
            "--top",
            "100",
            "--summary-only",
            "-o",
        ])
        .arg(&summary)
        .assert()
        .success();
    let mut cmd = rdblens();
    cmd.args(["merge", "--format", "html", "--top", "100"]);
    for n in 0..100 {
        let copy = dir.path().join(format!("shard-{n:03}.json"));
        std::fs::copy(&summary, &copy).unwrap();
        cmd.arg(copy);
    }
    let page = String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap();
    assert!(page.contains("<section id=\"shards\">"));
    assert_eq!(
        page.matches("<td class=\"path\">").count(),
        100 + 100,
        "files table and shard table"
    );
    assert!(page.len() < 2 << 20, "{} bytes", page.len());
}

/// The top-keys table of a dump whose biggest keys include 30 `feed:*`
/// strings alike (the same length, type, encoding and memory): one row for
/// them, naming how many and an example, instead of 30 equal rows.
#[test]
fn keys_alike_share_one_row_in_the_top_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("feeds.rdb");
    let mut rdb = support::RdbBuilder::new();
    for n in 100..130 {
        rdb = rdb.string(format!("feed:{n}").as_bytes(), &[b'f'; 400], None);
    }
    rdb = rdb
        .string(b"big:a", &[b'a'; 5000], None)
        .string(b"big:b", &[b'b'; 3000], None)
        .string(b"lonely", &[b'l'; 400], None);
    std::fs::write(&path, rdb.finish()).unwrap();
    let path = path.to_string_lossy().to_string();
    let page = run(&["report", &path, "-q", "--format", "html", "--top", "40"]);
    let start = page.find("<table id=\"top-keys\"").unwrap();
    let table = &page[start..start + page[start..].find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 4, "{table}");
    assert_eq!(
        rows[2],
        "<td class=\"n\" data-v=\"3\">3</td><td class=\"n\" data-v=\"0\">0</td><td class=\"key\" data-keys=\"30\">30 keys like <code>&quot;feed:*&quot;</code>, e.g. <code>&quot;feed:100&quot;</code></td><td>string</td><td>raw</td><td class=\"n\" data-v=\"400\">400</td><td class=\"n\" data-v=\"504\">504 B</td><td class=\"n\" data-v=\"402\">402 B</td><td class=\"n\" data-v=\"400\">400 B</td><td class=\"n\" data-v=\"-1\">-</td></tr>"
    );
    // A key without a namespace is its own row, even of the same figures.
    assert!(
        rows[3].contains("<td class=\"key\"><code>&quot;lonely&quot;</code></td>"),
        "{}",
        rows[3]
    );
    assert_eq!(page.matches("feed:1").count(), 1);
    assert!(
        page.contains("Keys alike (the same database, namespace, type, encoding and figures) share one row.")
    );
}
