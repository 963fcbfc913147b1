//! "Connect Agent Zero": installs its plugin into Agent Zero (a checkout, or
//! the Docker image's `usr/` volume) or saves it as a ZIP for Agent Zero's
//! own Plugins dialog, and, for Agent Zero in Docker, serves
//! this app's engine over HTTP on an address the person names — the docker0
//! gateway — with an access token written into the plugin's settings. No
//! second `pad serve`: the endpoint forwards to the engine's socket, whether
//! this app runs the engine or attached to one.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{json, Value};
use tokio::sync::oneshot;

use scratchpad::cli::agent_zero;

/// The token's name: what Agent Zero writes as over HTTP.
const NAME: &str = "agent-zero";

/// The HTTP endpoint Agent Zero in Docker reaches (`POST /rpc`, and MCP at
/// `/mcp`), while it runs.
#[derive(Default)]
pub struct Endpoint {
    running: Mutex<Option<(SocketAddr, oneshot::Sender<()>)>>,
}

impl Endpoint {
    /// Serves on `addr` (a loopback or private address only), replacing an
    /// endpoint on another address; one already on `addr` is kept.
    pub async fn serve(
        &self,
        addr: SocketAddr,
        socket: &Path,
        data_dir: &Path,
    ) -> Result<(), String> {
        if matches!(&*self.lock(), Some((a, _)) if *a == addr) {
            return Ok(());
        }
        scratchpad::mcp::http_bind_allowed(addr, false).map_err(|e| e.to_string())?;
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
            format!("cannot listen on {addr} ({e}): is Docker running (its docker0 gateway must exist), or is the port taken?")
        })?;
        let token = scratchpad::mcp::http_token(data_dir).map_err(|e| e.to_string())?;
        let tools = scratchpad::mcp::McpConfig {
            socket: socket.to_path_buf(),
            pad: NAME.into(),
            author: NAME.into(),
            autostart: false,
            tools: scratchpad::mcp::ToolSet::default(),
            budget: Default::default(),
        };
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            // The app's engine is another process: refusals are counted in
            // the log only.
            let refusals = scratchpad::tcp::Refusals::new("the endpoint for Agent Zero", None);
            let served =
                scratchpad::mcp::serve_http(vec![listener], token, tools, 1000, refusals, async {
                    let _ = stopped.await;
                });
            if let Err(e) = served.await {
                tracing::warn!("the endpoint for Agent Zero stopped: {e}");
            }
        });
        tracing::info!("serving the engine for Agent Zero on http://{addr} (/rpc, /mcp)");
        if let Some((_, old)) = self.lock().replace((addr, stop)) {
            let _ = old.send(());
        }
        Ok(())
    }

    /// Stops the endpoint, if one runs.
    pub fn stop(&self) {
        if let Some((_, stop)) = self.lock().take() {
            let _ = stop.send(());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(SocketAddr, oneshot::Sender<()>)>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What "Connect" did, for the window to say.
pub struct Connected {
    /// The plugin's folder, or the ZIP written.
    pub plugin: PathBuf,
    pub url: Option<String>,
}

/// Where the plugin goes: into Agent Zero (a checkout or its `usr/`
/// volume), or into a ZIP for Agent Zero's own Plugins dialog.
pub enum Destination<'a> {
    Folder(&'a Path),
    Zip(&'a Path),
}

/// The plugin installed into its folder, or the ZIP still to write (with
/// the settings, once they are known).
enum Placed<'a> {
    Installed(agent_zero::PluginDir),
    Zip(&'a Path),
}

/// Installs the plugin (or saves its ZIP); for Docker, also an access token
/// for Agent Zero (made anew: a secret is shown nowhere but its settings)
/// and the endpoint's URL in the plugin's settings. `call` reaches the engine.
pub async fn connect<F, Fut>(
    to: Destination<'_>,
    docker: Option<SocketAddr>,
    call: F,
) -> Result<Connected, String>
where
    F: Fn(&'static str, Value) -> Fut,
    Fut: std::future::Future<Output = Result<Value, Value>>,
{
    let placed = match to {
        Destination::Folder(dir) => {
            let to = agent_zero::target(dir).map_err(|e| e.to_string())?;
            if docker.is_some() {
                // Its settings are rewritten below: one it cannot read
                // stops here, before anything is written.
                agent_zero::settings(&to).map_err(|e| e.to_string())?;
            }
            agent_zero::install(&to).map_err(|e| {
                format!(
                    "could not write the plugin into {}: {e}",
                    to.path().display()
                )
            })?;
            Placed::Installed(to)
        }
        Destination::Zip(file) => Placed::Zip(file),
    };
    let plugin = match &placed {
        Placed::Installed(to) => to.path().to_owned(),
        Placed::Zip(file) => file.to_path_buf(),
    };
    let Some(addr) = docker else {
        if let Placed::Zip(file) = placed {
            agent_zero::save_zip(file, None)?;
        }
        return Ok(Connected { plugin, url: None });
    };
    let message = |e: Value| {
        e["message"]
            .as_str()
            .unwrap_or("the engine refused it")
            .to_owned()
    };
    let listed = call("token.list", json!({})).await.map_err(message)?;
    if listed["tokens"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == NAME))
    {
        call("token.revoke", json!({ "name": NAME }))
            .await
            .map_err(message)?;
    }
    let made = call("token.create", json!({"name": NAME, "pads": ["*"]}))
        .await
        .map_err(message)?;
    let secret = made["secret"].as_str().ok_or("the engine made no token")?;
    // On loopback only Docker Desktop reaches it, from inside the container
    // as host.docker.internal (which the endpoint's Host check accepts).
    let url = if addr.ip().is_loopback() {
        format!("http://host.docker.internal:{}", addr.port())
    } else {
        format!("http://{addr}")
    };
    match placed {
        Placed::Installed(to) => {
            agent_zero::write_config(&to, &[("url", json!(url)), ("token", json!(secret))])
                .map_err(|e| {
                    format!(
                        "could not save the plugin's settings in {}: {e}",
                        to.path().display()
                    )
                })?;
        }
        Placed::Zip(file) => agent_zero::save_zip(file, Some((&url, secret))).map(drop)?,
    }
    Ok(Connected {
        plugin,
        url: Some(url),
    })
}
