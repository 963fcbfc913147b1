//! `pad agent-zero install [DIR]`: the Scratchpad plugin for Agent Zero
//! (clients/agent-zero, built into this binary) copied into a checkout's
//! `usr/plugins/scratchpad/` or into the Docker image's `usr/` volume;
//! `pad agent-zero zip FILE`, the same for Agent Zero's own installer; and
//! `pad agent-zero stop|pause|resume ID`, the person's hand on a running chat.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::{json, Value};

use super::confined::{Folder, Kind};
use super::{Show, UsageError};
use crate::client::Client;
use crate::protocol::method as m;
use crate::protocol::{Control, IdParams};

#[derive(Subcommand, Debug)]
pub enum AgentZeroCmd {
    /// Install (or update) the plugin into an Agent Zero checkout, or into
    /// the `usr/` folder its Docker image keeps as a volume. Saved settings
    /// (its config.json) are kept.
    Install {
        /// The checkout (holding agent.py) or its usr/ folder [default: .]
        dir: Option<PathBuf>,
        /// Agent Zero in Docker: the engine's HTTP endpoint it reaches
        /// (`pad serve --mcp-http ADDR`), e.g. http://172.17.0.1:8765;
        /// written into the plugin's settings with the token.
        #[arg(long, requires = "token_file")]
        url: Option<String>,
        /// A file holding the access token for --url (`pad token create`).
        #[arg(long)]
        token_file: Option<PathBuf>,
    },
    /// Write the plugin as a ZIP for Agent Zero's own installer (Settings →
    /// Plugins → Install → ZIP): the files `install` writes, and with --url
    /// and --token-file its settings too (the file is then private, 0600).
    Zip {
        /// Where to write it, e.g. scratchpad.zip
        file: PathBuf,
        /// Agent Zero in Docker: the engine's HTTP endpoint it reaches,
        /// e.g. http://172.17.0.1:8765.
        #[arg(long, requires = "token_file")]
        url: Option<String>,
        /// A file holding the access token for --url (`pad token create`).
        #[arg(long)]
        token_file: Option<PathBuf>,
    },
    /// Stop a running Agent Zero chat at its next step (ID: a note of the
    /// chat's thread, e.g. the note that handed it the work); given a
    /// delegation's task, stop only that subordinate and what it delegated.
    Stop { id: String },
    /// Pause a running chat; `resume` lets it go on.
    Pause { id: String },
    /// Let a paused chat go on.
    Resume { id: String },
}

macro_rules! file {
    ($path:literal) => {
        (
            $path,
            include_str!(concat!("../../clients/agent-zero/", $path)),
        )
    };
}

/// Every file of the plugin, as it is in clients/agent-zero (the tests
/// folder aside); a test checks that none is missing.
pub const FILES: &[(&str, &str)] = &[
    file!("LICENSE"),
    file!("README.md"),
    file!("api/status.py"),
    file!("default_config.yaml"),
    file!(
        "extensions/python/_functions/agent/Agent/handle_exception/end/_45_scratchpad_stopped.py"
    ),
    file!(
        "extensions/python/_functions/agent/Agent/handle_intervention/start/_60_scratchpad_stop.py"
    ),
    file!("extensions/python/_functions/agent/Agent/monologue/end/_60_scratchpad_outcome.py"),
    file!("extensions/python/job_loop/_60_scratchpad_watcher.py"),
    file!("extensions/python/message_loop_prompts_after/_60_scratchpad_recall.py"),
    file!("extensions/python/monologue_end/_60_scratchpad_end.py"),
    file!("extensions/python/monologue_start/_60_scratchpad_chat.py"),
    file!("extensions/python/monologue_start/_61_scratchpad_subordinate.py"),
    file!("extensions/python/tool_execute_after/_60_scratchpad_progress.py"),
    file!("extensions/python/tool_execute_after/_61_scratchpad_steps.py"),
    file!("extensions/python/tool_execute_before/_60_scratchpad_notify.py"),
    file!("extensions/python/tool_execute_before/_61_scratchpad_delegate.py"),
    file!("helpers/chat.py"),
    file!("helpers/delegation.py"),
    file!("helpers/pad.py"),
    file!("helpers/recall.py"),
    // The stdlib-only Python client (clients/python/scratchpad.py links
    // here): the plugin's folder is complete as it stands.
    file!("helpers/scratchpad_client.py"),
    file!("helpers/watcher.py"),
    file!("hooks.py"),
    file!("plugin.yaml"),
    file!("prompts/agent.system.tool.ask_person.md"),
    file!("prompts/agent.system.tool.scratchpad.md"),
    file!("tools/ask_person.py"),
    file!("tools/scratchpad.py"),
    file!("webui/config.html"),
];

/// Folders the plugin owns: a file there that the plugin no longer has is
/// removed on update (config.json and Agent Zero's toggles are kept).
const OWNED_DIRS: &[&str] = &["api", "extensions", "helpers", "prompts", "tools", "webui"];

/// The plugin's folder, opened: everything the installer writes is inside
/// it, reached without following a link (`confined`).
pub struct PluginDir {
    folder: Folder,
    /// What the folder given was: "checkout" or "usr folder".
    pub what: &'static str,
}

/// What an install did.
#[derive(Debug, Default)]
pub struct Installed {
    pub written: usize,
    /// Files the plugin no longer has, removed.
    pub removed: usize,
    /// Symbolic links found where the plugin's files go, removed (never
    /// followed): their names, under the plugin's folder.
    pub links: Vec<String>,
}

impl PluginDir {
    pub fn path(&self) -> &Path {
        self.folder.path()
    }
}

/// The plugin's folder under `dir` (made when missing), and what `dir` is.
/// Below `dir`, a symbolic link on the way (`usr`, `plugins`,
/// `scratchpad`) is refused with its name: a container that mounts `usr/`
/// could plant one to lead the install out.
pub fn target(dir: &Path) -> anyhow::Result<PluginDir> {
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "{} is not a folder; give Agent Zero's checkout (the folder holding agent.py) or its usr/ folder",
            dir.display()
        ))
        .into());
    }
    let (way, what): (&[&str], _) = if dir.join("agent.py").is_file() {
        (&["usr", "plugins", "scratchpad"], "checkout")
    } else if dir.file_name().is_some_and(|n| n == "usr")
        || dir.join("plugins").is_dir()
        || dir.join("settings.json").is_file()
    {
        (&["plugins", "scratchpad"], "usr folder")
    } else {
        return Err(UsageError(format!(
            "{} is neither an Agent Zero checkout (no agent.py) nor its usr/ folder (no plugins/ or settings.json); \
             give one of those, e.g. `pad agent-zero install ~/agent-zero` or `pad agent-zero install ~/a0-data/usr`",
            dir.display()
        ))
        .into());
    };
    let mut folder =
        Folder::open(dir).map_err(|e| UsageError(format!("{}: {e}", dir.display())))?;
    for name in way {
        folder = folder.sub(name).map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(PluginDir { folder, what })
}

/// Writes the plugin into its folder. A file of the plugin's folders that it
/// no longer has is removed; a link anywhere the plugin writes is removed,
/// never followed (config.json and Agent Zero's toggles are kept).
pub fn install(to: &PluginDir) -> std::io::Result<Installed> {
    let mut done = Installed::default();
    for owned in OWNED_DIRS {
        match to.folder.kind(owned)? {
            Some(Kind::Folder) => {
                let sub = to.folder.sub(owned)?;
                remove_stale(&sub, owned, &mut done)?;
            }
            Some(Kind::Link) => {
                to.folder.remove(owned)?;
                done.links.push((*owned).to_owned());
            }
            _ => {}
        }
    }
    for (path, text) in FILES {
        let mut parts: Vec<&str> = path.split('/').collect();
        let name = parts.pop().expect("a file has a name");
        let mut folder = None;
        for part in parts {
            let at = folder.as_ref().unwrap_or(&to.folder);
            folder = Some(at.sub(part)?);
        }
        let folder = folder.as_ref().unwrap_or(&to.folder);
        if folder.kind(name)? == Some(Kind::Link) {
            done.links.push((*path).to_owned());
        }
        folder.write(name, text.as_bytes(), 0o644)?;
        done.written += 1;
    }
    Ok(done)
}

fn remove_stale(dir: &Folder, rel: &str, done: &mut Installed) -> std::io::Result<()> {
    for (name, kind) in dir.entries()? {
        let path = format!("{rel}/{name}");
        match kind {
            Kind::Folder => {
                let sub = dir.sub(&name)?;
                remove_stale(&sub, &path, done)?;
                if sub.entries()?.is_empty() {
                    dir.remove_folder(&name)?;
                }
            }
            Kind::Link => {
                dir.remove(&name)?;
                done.links.push(path);
            }
            _ if name.ends_with(".pyc") || !FILES.iter().any(|(p, _)| *p == path) => {
                dir.remove(&name)?;
                done.removed += 1;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The plugin's default settings, from its default_config.yaml (flat
/// `key: value` lines: strings, numbers, booleans).
pub fn default_config() -> serde_json::Map<String, Value> {
    let (_, yaml) = FILES
        .iter()
        .find(|(p, _)| *p == "default_config.yaml")
        .expect("the plugin has a default_config.yaml");
    let mut out = serde_json::Map::new();
    for line in yaml.lines() {
        let line = line.trim();
        let Some((key, value)) = line.split_once(':').filter(|_| !line.starts_with('#')) else {
            continue;
        };
        let value = value.trim();
        let v = match value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => value
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| Value::String(value.trim_matches('"').to_owned())),
        };
        out.insert(key.trim().to_owned(), v);
    }
    out
}

/// The plugin's saved settings (`config.json` in its folder), over the
/// defaults: every key, as Agent Zero wants a saved config (it does not
/// merge one with the defaults). A file that is not a JSON object, or is a
/// link, is refused with what to do rather than replaced: a setting the
/// installer cannot read is never dropped in silence.
pub fn settings(to: &PluginDir) -> std::io::Result<serde_json::Map<String, Value>> {
    let path = to.path().join("config.json");
    let refuse = |why: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} {why}; nothing was installed. Fix the file (or move it away to start from the defaults) and install again",
                path.display()
            ),
        )
    };
    let mut config = default_config();
    let bytes = match to.folder.kind("config.json")? {
        None => return Ok(config),
        Some(Kind::File) => to.folder.read("config.json")?.unwrap_or_default(),
        Some(_) => return Err(refuse("is a symbolic link or not a file, which the installer neither reads nor writes through".into())),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(saved)) => config.extend(saved),
        Ok(_) => {
            return Err(refuse(
                "holds JSON that is not an object of settings".into(),
            ))
        }
        Err(e) => return Err(refuse(format!("is not valid JSON ({e})"))),
    }
    Ok(config)
}

/// Saves the plugin's settings with `changes` over what is saved (see
/// `settings`). 0600: it may hold an access token.
pub fn write_config(to: &PluginDir, changes: &[(&str, Value)]) -> std::io::Result<()> {
    let mut config = settings(to)?;
    for (k, v) in changes {
        config.insert((*k).to_owned(), v.clone());
    }
    let text = serde_json::to_string_pretty(&config).expect("json");
    to.folder.write("config.json", text.as_bytes(), 0o600)
}

impl AgentZeroCmd {
    /// `install` and `zip`, which need no engine.
    pub fn offline(&self) -> bool {
        matches!(self, Self::Install { .. } | Self::Zip { .. })
    }
}

/// `pad agent-zero install` and `zip`.
pub fn offline_main(cmd: AgentZeroCmd) -> std::process::ExitCode {
    let done = match cmd {
        AgentZeroCmd::Install {
            dir,
            url,
            token_file,
        } => install_into(dir, url, token_file),
        AgentZeroCmd::Zip {
            file,
            url,
            token_file,
        } => write_zip(&file, url, token_file),
        _ => unreachable!("only install and zip are offline"),
    };
    match done {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pad: {}", super::chain(&e));
            std::process::ExitCode::from(super::exit_code(&e))
        }
    }
}

/// The token in `--token-file`, trimmed.
fn read_token(file: &Path) -> anyhow::Result<String> {
    Ok(std::fs::read_to_string(file)
        .map_err(|e| {
            UsageError(format!(
                "cannot read the token from {}: {e}",
                file.display()
            ))
        })?
        .trim()
        .to_owned())
}

fn write_zip(file: &Path, url: Option<String>, token_file: Option<PathBuf>) -> anyhow::Result<()> {
    let token = token_file.as_deref().map(read_token).transpose()?;
    let settings = url.as_deref().zip(token.as_deref());
    let count = save_zip(file, settings).map_err(UsageError)?;
    let said = match &url {
        Some(url) => format!(
            "; its settings reach the engine at {url} with the token: keep the file private"
        ),
        None => String::new(),
    };
    println!(
        "Wrote the Scratchpad plugin for Agent Zero to {} ({count} files{said}).",
        file.display()
    );
    println!(
        "In Agent Zero: Settings → Plugins → Install → ZIP, choose the file, then restart Agent Zero. \
         Without settings in it, set the engine's URL and token under Settings → Agent → Scratchpad."
    );
    Ok(())
}

/// Writes the plugin's ZIP to `file` (`pad agent-zero zip`, and the app's
/// "Save the plugin as a ZIP"), with `settings` — the engine's URL and an
/// access token — as its config.json when given; returns how many files
/// it holds.
pub fn save_zip(file: &Path, settings: Option<(&str, &str)>) -> Result<usize, String> {
    let mut files: Vec<(String, Vec<u8>, u32)> = FILES
        .iter()
        .map(|(p, text)| (format!("scratchpad/{p}"), text.as_bytes().to_vec(), 0o644))
        .collect();
    if let Some((url, token)) = settings {
        let mut config = default_config();
        config.insert("url".into(), json!(url));
        config.insert("token".into(), json!(token));
        let text = serde_json::to_string_pretty(&config).expect("json");
        files.push(("scratchpad/config.json".into(), text.into_bytes(), 0o600));
    }
    let zip = super::plugin_zip::archive(&files);
    // Written beside it and renamed over (`confined`): a reader never sees
    // half a ZIP, and one holding a token is never readable by others.
    let mode = if settings.is_some() { 0o600 } else { 0o644 };
    let name = file.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        format!(
            "{} names no file; give a path like scratchpad.zip",
            file.display()
        )
    })?;
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Folder::open(parent)
        .and_then(|folder| folder.write(name, &zip, mode))
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(files.len())
}

fn install_into(
    dir: Option<PathBuf>,
    url: Option<String>,
    token_file: Option<PathBuf>,
) -> anyhow::Result<()> {
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    let to = target(&dir)?;
    let token = token_file.as_deref().map(read_token).transpose()?;
    if token.is_some() {
        // Read before anything is written: an unreadable config.json stops
        // the install with nothing changed.
        settings(&to).map_err(|e| UsageError(e.to_string()))?;
    }
    let done = install(&to).map_err(|e| {
        anyhow::anyhow!(
            "could not write the plugin into {}: {e}",
            to.path().display()
        )
    })?;
    if let (Some(url), Some(token)) = (&url, token) {
        write_config(&to, &[("url", json!(url)), ("token", json!(token))]).map_err(|e| {
            anyhow::anyhow!(
                "could not save the plugin's settings in {}: {e}",
                to.path().display()
            )
        })?;
        println!("Its settings reach the engine at {url} with the token from the file (config.json, 0600).");
    }
    let stale = if done.removed > 0 {
        format!(", removed {} the plugin no longer has", done.removed)
    } else {
        String::new()
    };
    println!(
        "Installed the Scratchpad plugin for Agent Zero in {} ({}): {} files{stale}.",
        to.path().display(),
        to.what,
        done.written
    );
    if !done.links.is_empty() {
        println!(
            "Removed {} symbolic link(s) where the plugin's files go, without following them: {}.",
            done.links.len(),
            done.links.join(", ")
        );
    }
    println!(
        "Restart Agent Zero to load it (Docker: `docker restart <container>`). Its settings are under \
         Settings → Agent → Scratchpad: the engine's socket (Docker: mount the socket's folder into the \
         container and name it there), the name it writes as (agent-zero) and its pad."
    );
    Ok(())
}

/// Pause, resume or stop: a reply in the chat's thread carrying `meta.control`.
pub(crate) async fn control(cmd: AgentZeroCmd, c: &mut Client, show: Show) -> anyhow::Result<()> {
    let (id, control) = match cmd {
        AgentZeroCmd::Stop { id } => (id, Control::Stop),
        AgentZeroCmd::Pause { id } => (id, Control::Pause),
        AgentZeroCmd::Resume { id } => (id, Control::Resume),
        AgentZeroCmd::Install { .. } | AgentZeroCmd::Zip { .. } => {
            unreachable!("handled before connecting")
        }
    };
    let parent = c
        .request::<m::EntryGet>(&IdParams { id: id.clone() })
        .await?;
    let params = control.reply(parent.entry.pad, id);
    let r = c.write::<m::EntryAdd>(params).await?;
    show.print(&r, |r| {
        println!(
            "Asked Agent Zero to {} (note {} in the chat's thread).",
            control.as_str(),
            r.entry.id
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings written for Docker hold every default key, keep what was
    /// saved, and are readable by their owner only.
    #[test]
    fn a_written_config_holds_every_key_and_is_private() {
        let tmp = tempfile::tempdir().unwrap();
        let to = target(&tmp.path().join("usr")).err().map(|_| ());
        assert!(to.is_some(), "a missing folder is refused");
        std::fs::create_dir_all(tmp.path().join("usr/plugins/scratchpad")).unwrap();
        let to = target(&tmp.path().join("usr")).unwrap();
        let dir = to.path().to_owned();
        std::fs::write(dir.join("config.json"), r#"{"pad": "mine"}"#).unwrap();
        write_config(
            &to,
            &[
                ("url", json!("http://172.17.0.1:8765")),
                ("token", json!("padt_x")),
            ],
        )
        .unwrap();
        let saved: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap())
                .unwrap();
        for key in default_config().keys() {
            assert!(saved.get(key).is_some(), "{key} missing");
        }
        assert_eq!(saved["pad"], "mine");
        assert_eq!(saved["url"], "http://172.17.0.1:8765");
        assert_eq!(saved["recall_enabled"], true);
        assert_eq!(saved["recall_budget_chars"], 3000);
        assert_eq!(saved["author"], "agent-zero");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("config.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// The binary carries every file of clients/agent-zero (tests aside).
    #[test]
    fn every_plugin_file_is_built_in() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("clients/agent-zero");
        let mut on_disk = Vec::new();
        walk(&root, &root, &mut on_disk);
        on_disk.sort();
        let mut built_in: Vec<String> = FILES.iter().map(|(p, _)| p.to_string()).collect();
        built_in.sort();
        assert_eq!(
            on_disk, built_in,
            "add the file to FILES in src/cli/agent_zero.rs"
        );
    }

    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            if rel == "tests" || rel.ends_with("__pycache__") || rel.ends_with(".pyc") {
                continue;
            }
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                out.push(rel);
            }
        }
    }
}
