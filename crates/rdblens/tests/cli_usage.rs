//! What users of other tools expect around the commands: `--version` with
//! the RDB versions read, shell completions and a manual page generated
//! from the same definitions as `--help`.

mod support;

use std::collections::BTreeSet;

use support::rdblens;

#[test]
fn version_names_the_rdb_versions_it_reads() {
    rdblens().arg("--version").assert().success().stdout(format!(
        "rdblens {}\nreads Redis RDB 1-14 (REDIS0001-REDIS0014), Valkey RDB 80-81 (VALKEY080, VALKEY081)\n",
        env!("CARGO_PKG_VERSION")
    ));
    rdblens()
        .arg("-V")
        .assert()
        .success()
        .stdout(format!("rdblens {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn completions_cover_every_command_and_flag() {
    let out = rdblens().args(["completions", "bash"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("_rdblens() {\n"), "{}", &text[..80]);
    for word in [
        "report",
        "keys",
        "merge",
        "diff",
        "check",
        "--threads",
        "--summary-only",
        "--skip-unknown",
    ] {
        assert!(text.contains(word), "{word}");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = rdblens().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(
            String::from_utf8(out.stdout).unwrap().contains("threads"),
            "{shell}"
        );
    }
    rdblens()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::starts_with(
            "error: invalid value 'tcsh' for '<SHELL>'\n  [possible values: bash, elvish, fish, powershell, zsh]\n",
        ));
}

#[test]
fn the_man_page_has_every_subcommand_and_its_options() {
    let out = rdblens().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!(
        ".TH rdblens 1  \"rdblens {}\"",
        env!("CARGO_PKG_VERSION")
    )));
    for section in [
        ".SH \"RDBLENS REPORT\"",
        ".SH \"RDBLENS KEYS\"",
        ".SH \"RDBLENS CHECK\"",
    ] {
        assert!(text.contains(section), "{section}");
    }
    assert!(text.contains("\\-\\-summary\\-only"));
}

/// The exit codes the binary's source uses: its `EXIT_*` constants,
/// `ExitCode::from(N)` and `_exit(N)` (the SIGBUS handler), success, and
/// 2 for the usage errors clap reports itself.
fn exit_codes_in_the_source() -> BTreeSet<u8> {
    let pattern =
        regex::Regex::new(r"const EXIT_[A-Z_]+: u8 = (\d+);|ExitCode::from\((\d+)\)|_exit\((\d+)\)").unwrap();
    let mut codes = BTreeSet::from([0, 2]);
    let src = support::root().join("crates/rdblens/src");
    let mut files = vec![src];
    let mut scanned = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else if path.extension().is_some_and(|e| e == "rs") {
            scanned += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            for c in pattern.captures_iter(&text) {
                let n = c.iter().skip(1).flatten().next().unwrap().as_str();
                codes.insert(n.parse().unwrap());
            }
        }
    }
    assert!(scanned > 10, "{scanned} source files");
    codes
}

#[test]
fn the_man_page_refers_to_no_missing_page_and_names_every_exit_status() {
    let out = rdblens().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with(".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n.TH rdblens 1 "));
    assert_eq!(text.matches(".ds Aq").count(), 2, "the preamble once");
    // Only this page is installed: no rdblens-report(1) and the like.
    assert!(!text.contains("(1)"), "refers to another page");
    // Every subcommand is listed, and has its section in this page.
    let help = rdblens().arg("--help").output().unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let commands: Vec<&str> = help
        .split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap())
        .filter(|c| *c != "help")
        .collect();
    assert_eq!(
        commands,
        [
            "report",
            "keys",
            "merge",
            "diff",
            "advise",
            "compare-info",
            "check",
            "completions",
            "man"
        ]
    );
    for name in &commands {
        // roff writes a hyphen in text as `\-`.
        let listed = name.replace('-', "\\-");
        assert!(
            text.contains(&format!(".TP\n\\fBrdblens {listed}\\fR\n")),
            "{name} not listed"
        );
        let section = format!(".SH \"RDBLENS {}\"\n", name.to_uppercase());
        assert!(text.contains(&section), "{section}");
    }
    // EXIT STATUS names exactly the codes the binary uses, in order.
    let status = text
        .split(".SH \"EXIT STATUS\"\n")
        .nth(1)
        .expect("an EXIT STATUS section")
        .split("\n.SH ")
        .next()
        .unwrap();
    let listed: Vec<u8> = status
        .split(".TP\n\\fB")
        .skip(1)
        .map(|item| item[..item.find('\\').unwrap()].parse().unwrap())
        .collect();
    let used: Vec<u8> = exit_codes_in_the_source().into_iter().collect();
    assert_eq!(listed, used);
    assert_eq!(used, [0, 1, 2, 3, 4, 5]);
    assert!(status.contains("\\-\\-fail\\-on LEVEL"), "the CI gate's code");
    assert!(
        status.contains("\\-\\-fail\\-on\\-growth LIMITS"),
        "the growth gate shares it"
    );
    assert!(status.contains("truncated (a cut file)"));
}

#[test]
fn control_bytes_in_key_names_never_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("ansi.rdb");
    let data = support::RdbBuilder::new()
        .string(b"evil\x1b[31mred", b"v", None)
        .string(b"two\nlines", b"v", None)
        .string(b"plain:\xc3\xa9t\xc3\xa9", b"v", None)
        .finish();
    std::fs::write(&dump, data).unwrap();
    let d = dump.to_str().unwrap();
    let out = rdblens().args(["keys", d]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1].starts_with("0,string,evil\\x1b[31mred,"), "{}", lines[1]);
    assert!(lines[1].ends_with(",true"));
    assert!(lines[2].starts_with("0,string,two\\nlines,"), "{}", lines[2]);
    assert!(lines[2].ends_with(",true"));
    // Printable UTF-8 stays as it is.
    assert!(lines[3].starts_with("0,string,plain:été,"), "{}", lines[3]);
    assert!(lines[3].ends_with(",false"));
    assert!(!text.contains('\x1b'));
    for format in ["table", "json"] {
        let out = rdblens()
            .args(["report", d, "--format", format])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(!out.stdout.contains(&0x1b), "{format}");
    }
}
