//! What users of other tools expect around the commands: `--version` with
//! the RDB versions read, shell completions and a manual page generated
//! from the same definitions as `--help`.

mod support;

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
