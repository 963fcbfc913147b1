//! The app's settings, kept as JSON beside the data (`app-settings.json`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub const FILE: &str = "app-settings.json";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Settings {
    /// The global quick-note shortcut, e.g. "Ctrl+Shift+Space".
    pub hotkey: String,
    /// Who the person is: the author of what they write, and whose own
    /// `needs_eyes` entries raise no notification.
    pub author: String,
    /// Desktop notifications for entries tagged `needs_eyes`.
    pub notifications: bool,
    /// Idle time before a pad created in the app expires (`null`, the
    /// default: never — the person's own pads are kept).
    pub default_ttl_seconds: Option<i64>,
    /// The pad the quick-note box writes to (the last one open).
    pub pad: String,
    /// Serve Prometheus metrics here (e.g. "127.0.0.1:9464") when this app
    /// runs the engine; loopback only. Takes effect at the next start.
    pub metrics: Option<String>,
    /// The meaning-search model when this app runs the engine
    /// (`all-MiniLM-L6-v2` or `multilingual-e5-small`; `null`: `PAD_MODEL`,
    /// else the engine's default). Takes effect at the next start, which
    /// re-embeds every entry with it.
    pub model: Option<String>,
    /// Serve the engine over HTTP here for Agent Zero in Docker (the docker0
    /// gateway, e.g. "172.17.0.1:8765"; loopback or private addresses only):
    /// its plugin's `POST /rpc`, and MCP at `/mcp`. Starts at once.
    pub agent_http: Option<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            hotkey: "Ctrl+Shift+Space".into(),
            author: "user".into(),
            notifications: true,
            default_ttl_seconds: None,
            pad: "inbox".into(),
            metrics: None,
            model: None,
            agent_http: None,
        }
    }
}

impl Settings {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(FILE)
    }

    /// The saved settings, or the defaults (a damaged file is logged and
    /// replaced on the next save, never fatal).
    pub fn load(data_dir: &Path) -> Settings {
        match std::fs::read_to_string(Self::path(data_dir)) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!("{FILE} is unreadable ({e}); using the defaults");
                Settings::default()
            }),
            Err(_) => Settings::default(),
        }
    }

    /// Checks the values a person can type.
    pub fn validate(&self) -> Result<(), String> {
        scratchpad::model::author("author", &self.author).map_err(|e| e.to_string())?;
        scratchpad::model::pad_name("pad", &self.pad).map_err(|e| e.to_string())?;
        if matches!(self.default_ttl_seconds, Some(t) if t < 1) {
            return Err("the default TTL must be at least 1 second, or none".into());
        }
        self.metrics_address()?;
        self.model_kind()?;
        self.agent_http_address()?;
        Ok(())
    }

    /// The model chosen, checked (`None`: not chosen here).
    pub fn model_kind(&self) -> Result<Option<scratchpad::semantic::ModelKind>, String> {
        match self
            .model
            .as_deref()
            .map(str::trim)
            .filter(|m| !m.is_empty())
        {
            None => Ok(None),
            Some(m) => m.parse().map(Some).map_err(|e| format!("model: {e}")),
        }
    }

    /// The metrics address, checked: a loopback `host:port`, or none.
    pub fn metrics_address(&self) -> Result<Option<std::net::SocketAddr>, String> {
        address(
            self.metrics.as_deref(),
            "metrics address",
            "127.0.0.1:9464",
            |a| scratchpad::metrics::check_address(a, false).map_err(|e| e.to_string()),
        )
    }

    /// The address to serve Agent Zero on, checked: a loopback or private
    /// `host:port` (a public one is never the app's to open), or none.
    pub fn agent_http_address(&self) -> Result<Option<std::net::SocketAddr>, String> {
        address(
            self.agent_http.as_deref(),
            "the address for Agent Zero",
            "172.17.0.1:8765 (the docker0 gateway)",
            |a| scratchpad::mcp::http_bind_allowed(a, false).map_err(|e| e.to_string()),
        )
    }

    /// Writes the settings (through a temp file, so a crash keeps the old ones).
    pub fn save(&self, data_dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(data_dir)?;
        let path = Self::path(data_dir);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_vec_pretty(self).unwrap_or_default())?;
        std::fs::rename(tmp, path)
    }
}

/// A `host:port` setting: none when empty, else parsed and checked.
fn address(
    raw: Option<&str>,
    what: &str,
    example: &str,
    check: impl FnOnce(std::net::SocketAddr) -> Result<(), String>,
) -> Result<Option<std::net::SocketAddr>, String> {
    let Some(raw) = raw.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let addr = raw
        .parse()
        .map_err(|_| format!("{what} '{raw}' is not host:port, e.g. {example}"))?;
    check(addr)?;
    Ok(Some(addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_fill_missing_fields_with_defaults() {
        let dir = std::env::temp_dir().join(format!("pad-settings-{}", std::process::id()));
        let s = Settings {
            hotkey: "Alt+N".into(),
            notifications: false,
            ..Settings::default()
        };
        s.save(&dir).unwrap();
        assert_eq!(Settings::load(&dir), s);
        std::fs::write(Settings::path(&dir), r#"{"author": "ana"}"#).unwrap();
        let partial = Settings::load(&dir);
        assert_eq!(partial.author, "ana");
        assert_eq!(partial.hotkey, "Ctrl+Shift+Space");
        std::fs::write(Settings::path(&dir), "not json").unwrap();
        assert_eq!(Settings::load(&dir), Settings::default());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_model_setting_names_a_model_the_engine_offers() {
        let e5 = Settings {
            model: Some("multilingual-e5-small".into()),
            ..Settings::default()
        };
        assert_eq!(
            e5.model_kind().unwrap(),
            Some(scratchpad::semantic::ModelKind::E5Small)
        );
        assert_eq!(Settings::default().model_kind().unwrap(), None);
        let bad = Settings {
            model: Some("gpt-9".into()),
            ..Settings::default()
        };
        assert!(bad.validate().unwrap_err().contains("model"));
        let config = crate::engine_config(std::env::temp_dir(), e5.model_kind().unwrap()).unwrap();
        if std::env::var_os("PAD_NO_SEMANTIC").is_none() {
            assert_eq!(
                config.semantic.map(|s| s.kind),
                Some(scratchpad::semantic::ModelKind::E5Small),
                "the app's engine uses the chosen model"
            );
        }
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        let s = Settings {
            pad: "../x".into(),
            ..Settings::default()
        };
        assert!(s.validate().unwrap_err().contains("'/'"));
        let s = Settings {
            default_ttl_seconds: Some(0),
            ..Settings::default()
        };
        assert!(s.validate().is_err());
        let remote = Settings {
            metrics: Some("0.0.0.0:9464".into()),
            ..Settings::default()
        };
        assert!(remote.validate().unwrap_err().contains("loopback"));
        let local = Settings {
            metrics: Some("127.0.0.1:9464".into()),
            ..Settings::default()
        };
        assert_eq!(local.metrics_address().unwrap().unwrap().port(), 9464);
        let public = Settings {
            agent_http: Some("0.0.0.0:8765".into()),
            ..Settings::default()
        };
        assert!(public.validate().is_err());
        let gateway = Settings {
            agent_http: Some("172.17.0.1:8765".into()),
            ..Settings::default()
        };
        assert_eq!(gateway.agent_http_address().unwrap().unwrap().port(), 8765);
    }
}
