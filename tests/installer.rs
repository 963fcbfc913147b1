//! `pad agent-zero install` into a folder a container also writes (Agent
//! Zero's Docker image keeps `usr/` as a volume): links planted in it never
//! lead a write, a removal or the access token out of it, and a config.json
//! it cannot read stops the install instead of being replaced.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A usr/ volume with the plugin installed once, and a folder outside it.
struct Volume {
    _tmp: tempfile::TempDir,
    usr: PathBuf,
    outside: PathBuf,
}

impl Volume {
    fn new() -> Volume {
        let tmp = tempfile::tempdir().unwrap();
        let usr = tmp.path().join("usr");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(usr.join("plugins")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("precious.txt"), "the person's file").unwrap();
        std::fs::write(tmp.path().join("token"), "padt_secret_of_agent_zero\n").unwrap();
        let v = Volume {
            _tmp: tmp,
            usr,
            outside,
        };
        assert!(v.install().status.success());
        v
    }

    fn plugin(&self) -> PathBuf {
        self.usr.join("plugins/scratchpad")
    }

    fn install(&self) -> Output {
        Command::new(env!("CARGO_BIN_EXE_pad"))
            .args(["agent-zero", "install"])
            .arg(&self.usr)
            .args(["--url", "http://172.17.0.1:8765", "--token-file"])
            .arg(self.usr.parent().unwrap().join("token"))
            .output()
            .unwrap()
    }

    /// Every file outside the volume, with its text.
    fn outside_files(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(&self.outside).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, std::fs::read_to_string(&p).unwrap_or_default()));
        }
        out.sort();
        out
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn is_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink())
}

#[test]
fn a_linked_folder_of_the_plugin_is_replaced_and_nothing_outside_is_removed() {
    let v = Volume::new();
    let helpers = v.plugin().join("helpers");
    std::fs::remove_dir_all(&helpers).unwrap();
    symlink(&v.outside, &helpers).unwrap();
    let before = v.outside_files();

    let done = v.install();
    assert!(done.status.success(), "{}", text(&done));
    assert_eq!(
        v.outside_files(),
        before,
        "a file outside the volume changed"
    );
    assert!(!is_link(&helpers), "helpers/ is still a link");
    assert!(helpers.join("pad.py").is_file());
    assert!(
        text(&done).contains("helpers"),
        "the link removed is named: {}",
        text(&done)
    );
}

#[test]
fn a_linked_file_is_replaced_not_written_through() {
    let v = Volume::new();
    let readme = v.plugin().join("README.md");
    std::fs::remove_file(&readme).unwrap();
    symlink(v.outside.join("precious.txt"), &readme).unwrap();
    // A link to a file the plugin no longer has, in a folder it owns.
    symlink(
        v.outside.join("precious.txt"),
        v.plugin().join("tools/old.py"),
    )
    .unwrap();

    let done = v.install();
    assert!(done.status.success(), "{}", text(&done));
    assert_eq!(
        v.outside_files(),
        vec![("precious.txt".into(), "the person's file".into())]
    );
    assert!(!is_link(&readme));
    assert!(std::fs::read_to_string(&readme)
        .unwrap()
        .contains("Scratchpad"));
    assert!(
        !v.plugin().join("tools/old.py").exists() && !is_link(&v.plugin().join("tools/old.py"))
    );
}

#[test]
fn a_linked_config_keeps_the_token_inside_and_says_why() {
    let v = Volume::new();
    let config = v.plugin().join("config.json");
    std::fs::remove_file(&config).unwrap();
    symlink(v.outside.join("stolen.json"), &config).unwrap();

    let done = v.install();
    assert!(!done.status.success(), "{}", text(&done));
    assert!(text(&done).contains("config.json"), "{}", text(&done));
    assert!(text(&done).contains("symbolic link"), "{}", text(&done));
    assert!(
        !v.outside.join("stolen.json").exists(),
        "the token left the volume"
    );
    let all: String = v.outside_files().iter().map(|(_, t)| t.clone()).collect();
    assert!(!all.contains("padt_secret"));
}

#[test]
fn a_linked_folder_on_the_way_is_refused_by_name() {
    let v = Volume::new();
    std::fs::remove_dir_all(v.plugin()).unwrap();
    symlink(&v.outside, v.plugin()).unwrap();

    let done = v.install();
    assert!(!done.status.success());
    assert!(
        text(&done).contains("plugins/scratchpad is a symbolic link"),
        "{}",
        text(&done)
    );
    assert_eq!(
        v.outside_files(),
        vec![("precious.txt".into(), "the person's file".into())]
    );
}

#[test]
fn an_unreadable_config_stops_the_install_and_is_kept() {
    let v = Volume::new();
    let config = v.plugin().join("config.json");
    let broken = "{\"controllers\": \"person\", \"url\": \"http://x\",";
    std::fs::write(&config, broken).unwrap();
    let readme = v.plugin().join("README.md");
    std::fs::write(&readme, "an older README").unwrap();

    let done = v.install();
    assert!(!done.status.success());
    assert!(text(&done).contains("not valid JSON"), "{}", text(&done));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), broken);
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "an older README",
        "nothing is installed when the settings cannot be kept"
    );
}

#[test]
fn a_saved_setting_survives_a_second_install() {
    let v = Volume::new();
    let config = v.plugin().join("config.json");
    let mut saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    saved["controllers"] = "person".into();
    std::fs::write(&config, saved.to_string()).unwrap();

    assert!(v.install().status.success());
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    assert_eq!(again["controllers"], "person");
    assert_eq!(again["token"], "padt_secret_of_agent_zero");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&config).unwrap().permissions().mode() & 0o777,
        0o600
    );
}
