//! The Scratchpad desktop app: a Tauri shell around the engine.
//!
//! The shell holds no business logic. It finds or starts the engine
//! (`backend`), forwards the UI's JSON-RPC calls to it (the `rpc` command),
//! and pushes every engine event to the windows (`pad-event`). Around that,
//! the desktop parts: the quick-note window on a global hotkey, desktop
//! notifications for `needs_eyes`, the tray, and the app's settings.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod agent_zero;
mod backend;
mod instance;
mod notify;
mod settings;

use std::path::PathBuf;
use std::sync::Mutex;

use scratchpad::protocol::method as m;
use scratchpad::protocol::{AddParams, Control, IdParams, RestoreParams, UpdateParams};
use serde_json::{json, Value};
use tauri::menu::{CheckMenuItem, Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Emitter, Manager, State, WindowEvent, Wry};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, ShortcutState};

use backend::Backend;
use settings::Settings;

struct AppState {
    backend: Backend,
    /// The HTTP endpoint for Agent Zero in Docker, when on (settings).
    endpoint: agent_zero::Endpoint,
    data_dir: PathBuf,
    settings: Mutex<Settings>,
    /// The tray's mute switch, kept in step with the settings.
    mute_item: Mutex<Option<CheckMenuItem<Wry>>>,
}

impl AppState {
    fn settings(&self) -> Settings {
        self.settings
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Forwards one JSON-RPC call to the engine. The error is the engine's error
/// object (`code`, `message`, `data`), so the UI can branch on the code.
#[tauri::command]
async fn rpc(
    state: State<'_, AppState>,
    method: String,
    params: Option<Value>,
) -> Result<Value, Value> {
    state
        .backend
        .call(&method, params.unwrap_or_else(|| json!({})))
        .await
}

#[tauri::command]
fn app_info(state: State<'_, AppState>) -> Value {
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "in_process": state.backend.in_process,
        "socket": state.backend.socket.display().to_string(),
        "data_dir": state.data_dir.display().to_string(),
        "pad": pad_cli(),
    })
}

/// The `pad` CLI agents should run, by its full path: the one installed
/// beside this app (the package puts both in /usr/bin; a build puts both in
/// its target directory), else the first on PATH, else just `pad`.
fn pad_cli() -> String {
    let beside = std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name("pad"));
    let on_path = std::env::var_os("PATH")
        .map(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("pad"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(on_path)
        .find(|p| p.is_file())
        .map_or_else(|| "pad".to_owned(), |p| p.display().to_string())
}

/// Does what a notification's button asked: open the entry, reply to it
/// from the quick box, or answer the question as the person, at once.
fn on_notification(app: &AppHandle, entry: &Value, action: notify::Action) {
    match action {
        notify::Action::Open => notify::open_entry(app, entry),
        notify::Action::Reply => show_quick(app, Some(entry)),
        notify::Action::Stop => {
            let state = app.state::<AppState>();
            let (Some(pad), Some(id)) = (entry["pad"].as_str(), entry["id"].as_str()) else {
                return;
            };
            let stop = AddParams {
                author: Some(state.settings().author),
                ..Control::Stop.reply(pad.to_owned(), id.to_owned())
            };
            if let Err(e) = tauri::async_runtime::block_on(state.backend.send::<m::EntryAdd>(stop))
            {
                tracing::warn!("cannot stop Agent Zero from the notification: {e}");
            }
        }
        notify::Action::Answer(choice) => {
            let state = app.state::<AppState>();
            let answer = reply(entry, &choice, state.settings().author);
            if let Err(e) =
                tauri::async_runtime::block_on(state.backend.send::<m::EntryAdd>(answer))
            {
                tracing::warn!("cannot answer from the notification: {e}");
                let _ = notify_rust::Notification::new()
                    .appname("Scratchpad")
                    .summary("The answer was not sent")
                    .body(e["message"].as_str().unwrap_or("the engine refused it"))
                    .show();
            }
        }
    }
}

/// A reply to `entry` (a notification's), written as `author`.
fn reply(entry: &Value, content: &str, author: String) -> AddParams {
    AddParams {
        pad: entry["pad"].as_str().unwrap_or_default().to_owned(),
        reply_to: entry["id"].as_str().map(str::to_owned),
        content: content.to_owned(),
        author: Some(author),
        ..AddParams::default()
    }
}

/// Opens a link from an entry in the person's browser (`xdg-open`, the
/// desktop's choice): web and mail links only, never a file or a command.
#[tauri::command]
fn open_link(url: String) -> Result<(), String> {
    let lower = url.to_ascii_lowercase();
    if !["http://", "https://", "mailto:"]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return Err(format!(
            "not opened: {url} is not a web or mail link (http, https, mailto)"
        ));
    }
    let mut child = std::process::Command::new("xdg-open")
        .arg(&url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot open {url}: xdg-open: {e}"))?;
    // Reaped on its own thread: xdg-open may wait for the browser.
    std::thread::spawn(move || child.wait());
    Ok(())
}

/// The title of entry `id` (its first line): what a notification of a
/// reply says it is about. None when it cannot be read.
pub fn entry_title(app: &AppHandle, id: &str) -> Option<String> {
    let state = app.try_state::<AppState>()?;
    let get = IdParams { id: id.to_owned() };
    let got = tauri::async_runtime::block_on(state.backend.send::<m::EntryGet>(get));
    let t = notify::title_of(got.ok()?["entry"]["content"].as_str()?);
    (!t.is_empty()).then_some(t)
}

/// A summary notification's buttons: show Needs eyes, or take
/// `needs_eyes` off every note it was about.
fn on_group(app: &AppHandle, group: notify::Group) {
    match group {
        notify::Group::Open => {
            if let Some(w) = app.get_webview_window("main") {
                let _ = w.show();
                let _ = w.unminimize();
                let _ = w.set_focus();
            }
            let _ = app.emit_to("main", "show-needs-eyes", ());
        }
        notify::Group::DoneLooking(ids) => {
            let state = app.state::<AppState>();
            for id in ids {
                let done = tauri::async_runtime::block_on(done_looking(&state.backend, &id));
                if let Err(e) = done {
                    tracing::warn!("cannot take needs_eyes off {id}: {e}");
                }
            }
        }
    }
}

/// Takes `needs_eyes` off an entry as it is now (retrying when an agent
/// changed it in between).
async fn done_looking(backend: &Backend, id: &str) -> Result<(), Value> {
    for _ in 0..3 {
        let get = IdParams { id: id.to_owned() };
        let e = backend.send::<m::EntryGet>(get).await?["entry"].clone();
        let tags: Vec<String> = e["tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|t| *t != "needs_eyes")
            .map(str::to_owned)
            .collect();
        if tags.len() == e["tags"].as_array().map_or(0, Vec::len) {
            return Ok(());
        }
        let update = UpdateParams {
            id: id.to_owned(),
            tags: Some(tags),
            if_version: e["version"].as_i64(),
            ..UpdateParams::default()
        };
        match backend.send::<m::EntryUpdate>(update).await {
            Ok(_) => return Ok(()),
            Err(err) if err["code"] == -32002 => continue,
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Undo on a notification of deletions: brings back everything those
/// changes deleted.
fn undo_deletes(app: &AppHandle, pad: &str, changes: &[i64]) {
    let state = app.state::<AppState>();
    let mut restored = 0;
    for change in changes {
        let undo = RestoreParams {
            id: None,
            version: None,
            change: Some(*change),
        };
        match tauri::async_runtime::block_on(state.backend.send::<m::EntryRestore>(undo)) {
            Ok(r) => restored += r["restored"].as_array().map_or(0, Vec::len),
            Err(e) => tracing::warn!("cannot undo change {change}: {e}"),
        }
    }
    tracing::info!("restored {restored} entries in {pad} from the notification");
}

#[tauri::command]
fn get_settings(state: State<'_, AppState>) -> Settings {
    state.settings()
}

/// Saves new settings; a new hotkey is registered first, and kept only if
/// the system accepts it.
#[tauri::command]
fn set_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    settings: Settings,
) -> Result<Settings, String> {
    settings.validate()?;
    let old = state.settings();
    if settings.hotkey != old.hotkey {
        let shortcuts = app.global_shortcut();
        let key: tauri_plugin_global_shortcut::Shortcut =
            settings.hotkey.parse().map_err(|_| {
                format!(
                    "'{}' is not a key combination: write modifiers and one key joined by +, e.g. Ctrl+Shift+Space, Alt+N or Super+F12",
                    settings.hotkey
                )
            })?;
        shortcuts.register(key).map_err(|_| {
            format!(
                "'{}' is taken by another program or the desktop; choose another, e.g. Ctrl+Alt+N",
                settings.hotkey
            )
        })?;
        let _ = shortcuts.unregister(old.hotkey.as_str());
    }
    if settings.agent_http != old.agent_http {
        match settings.agent_http_address()? {
            Some(addr) => tauri::async_runtime::block_on(state.endpoint.serve(
                addr,
                &state.backend.socket,
                &state.data_dir,
            ))?,
            None => state.endpoint.stop(),
        }
    }
    settings
        .save(&state.data_dir)
        .map_err(|e| format!("cannot save the settings: {e}"))?;
    *state.settings.lock().unwrap_or_else(|p| p.into_inner()) = settings.clone();
    if let Some(item) = state
        .mute_item
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
    {
        let _ = item.set_checked(!settings.notifications);
    }
    let _ = app.emit("settings-changed", settings.clone());
    Ok(settings)
}

/// "Connect Agent Zero": installs its plugin into `dir` (with `zip`, saves
/// it as the ZIP `dir` names, for Agent Zero's Plugins dialog); for Docker
/// (`address`: where to serve, the docker0 gateway), serves the engine there
/// and writes the URL and a new access token into the plugin's settings.
#[tauri::command]
async fn connect_agent_zero(
    app: AppHandle,
    state: State<'_, AppState>,
    dir: String,
    address: Option<String>,
    zip: Option<bool>,
) -> Result<Value, String> {
    let mut settings = state.settings();
    let docker = match address.as_deref().map(str::trim).filter(|a| !a.is_empty()) {
        Some(a) => {
            settings.agent_http = Some(a.to_owned());
            let addr = settings.agent_http_address()?.expect("set just above");
            state
                .endpoint
                .serve(addr, &state.backend.socket, &state.data_dir)
                .await?;
            settings
                .save(&state.data_dir)
                .map_err(|e| format!("cannot save the settings: {e}"))?;
            *state.settings.lock().unwrap_or_else(|p| p.into_inner()) = settings.clone();
            let _ = app.emit("settings-changed", settings);
            Some(addr)
        }
        None => None,
    };
    let dir = dir.trim();
    let dir = match dir.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map_or_else(|| PathBuf::from(dir), |h| PathBuf::from(h).join(rest)),
        None => PathBuf::from(dir),
    };
    let zip = zip.unwrap_or(false);
    let to = if zip {
        agent_zero::Destination::Zip(&dir)
    } else {
        agent_zero::Destination::Folder(&dir)
    };
    let done = agent_zero::connect(to, docker, |method, params| {
        state.backend.call(method, params)
    })
    .await?;
    Ok(json!({
        "plugin": done.plugin.display().to_string(),
        "url": done.url,
        "zip": zip,
        "restart": if docker.is_some() { "docker restart <its container>" } else { "Agent Zero's web server (python run_ui.py)" },
    }))
}

/// Shows the quick-note box from the window (Ctrl+K, or its button): for
/// when the global hotkey is taken or the desktop has none (Wayland).
#[tauri::command]
fn open_quick(app: AppHandle) {
    show_quick(&app, None);
}

/// Hides the quick-note box (Esc, or after saving).
#[tauri::command]
fn hide_quick(app: AppHandle) {
    if let Some(w) = app.get_webview_window("quick") {
        let _ = w.hide();
    }
}

fn toggle_quick(app: &AppHandle) {
    match app.get_webview_window("quick") {
        Some(w) if w.is_visible().unwrap_or(false) => {
            let _ = w.hide();
        }
        Some(_) => show_quick(app, None),
        None => {}
    }
}

/// Shows the quick box: as a plain note (it offers the newest open
/// question itself), or replying to `entry`.
fn show_quick(app: &AppHandle, entry: Option<&Value>) {
    let Some(w) = app.get_webview_window("quick") else {
        return;
    };
    let _ = w.center();
    let _ = w.show();
    let _ = w.set_focus();
    let _ = match entry {
        Some(e) => app.emit_to("quick", "quick-reply", e.clone()),
        None => app.emit_to("quick", "quick-shown", ()),
    };
}

/// Whether a tray host (a StatusNotifierWatcher) is on the session bus to
/// show the tray icon: without one, a hidden window could not be found.
fn tray_shown() -> bool {
    tauri::async_runtime::block_on(async {
        let bus = zbus::Connection::session().await?;
        let reply = bus
            .call_method(
                Some("org.freedesktop.DBus"),
                "/org/freedesktop/DBus",
                Some("org.freedesktop.DBus"),
                "NameHasOwner",
                &("org.kde.StatusNotifierWatcher",),
            )
            .await?;
        reply.body().deserialize::<bool>()
    })
    .unwrap_or(false)
}

fn toggle_main(app: &AppHandle) {
    if let Some(w) = app.get_webview_window("main") {
        if w.is_visible().unwrap_or(false) {
            let _ = w.hide();
        } else {
            let _ = w.show();
            let _ = w.set_focus();
        }
    }
}

/// Quits after stopping the in-process engine cleanly.
fn quit(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        if let Some(state) = app.try_state::<AppState>() {
            state.backend.shutdown().await;
        }
        app.exit(0);
    });
}

fn tray(app: &AppHandle, state: &AppState) -> tauri::Result<()> {
    let show = MenuItem::with_id(app, "show", "Show / hide Scratchpad", true, None::<&str>)?;
    let quick = MenuItem::with_id(app, "quick", "Quick note…", true, None::<&str>)?;
    let mute = CheckMenuItem::with_id(
        app,
        "mute",
        "Mute notifications",
        true,
        !state.settings().notifications,
        None::<&str>,
    )?;
    let quit_item = MenuItem::with_id(app, "quit", "Quit", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &show,
            &quick,
            &mute,
            &PredefinedMenuItem::separator(app)?,
            &quit_item,
        ],
    )?;
    *state.mute_item.lock().unwrap_or_else(|p| p.into_inner()) = Some(mute);
    let mut builder = TrayIconBuilder::with_id("main")
        .tooltip("Scratchpad")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "show" => toggle_main(app),
            "quick" => toggle_quick(app),
            "mute" => {
                let state = app.state::<AppState>();
                let mut s = state.settings();
                s.notifications = !s.notifications;
                if let Err(e) = set_settings(app.clone(), state, s) {
                    tracing::warn!("{e}");
                }
            }
            "quit" => quit(app),
            _ => {}
        });
    if let Some(icon) = app.default_window_icon() {
        builder = builder.icon(icon.clone());
    }
    builder.build(app)?;
    Ok(())
}

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PAD_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let data_dir = scratchpad::paths::data_dir();
    let socket = scratchpad::paths::socket_path();
    let (_instance, launches) = match instance::claim(&data_dir) {
        Ok(instance::Claim::First(i, listener)) => (i, listener),
        Ok(instance::Claim::Shown) => {
            tracing::info!(
                "Scratchpad is already running for {}: showed it",
                data_dir.display()
            );
            return;
        }
        Err(e) => {
            tracing::error!("{e}");
            std::process::exit(1);
        }
    };
    let settings = Settings::load(&data_dir);
    tauri::Builder::default()
        .plugin(
            tauri_plugin_global_shortcut::Builder::new()
                .with_handler(|app, _shortcut, event| {
                    if event.state == ShortcutState::Pressed {
                        toggle_quick(app);
                    }
                })
                .build(),
        )
        .invoke_handler(tauri::generate_handler![
            rpc,
            app_info,
            get_settings,
            set_settings,
            connect_agent_zero,
            hide_quick,
            open_quick,
            open_link
        ])
        .on_window_event(hide_on_close)
        .setup(move |app| {
            show_on_launch(app.handle(), launches);
            let state = start(app.handle(), socket, data_dir, settings)?;
            if let Err(e) = tray(app.handle(), &state) {
                // No tray on this desktop: the app still works, from its window.
                tracing::warn!("no system tray: {e}");
            }
            app.manage(state);
            quick_box(app)
        })
        .build(tauri::generate_context!())
        .expect("the app starts")
        .run(|app, event| {
            if let tauri::RunEvent::ExitRequested { api, code, .. } = event {
                // Closing the last window is not quitting (the tray quits);
                // an explicit exit stops the engine first.
                if code.is_none() {
                    api.prevent_exit();
                } else if let Some(state) = app.try_state::<AppState>() {
                    tauri::async_runtime::block_on(state.backend.shutdown());
                }
            }
        });
}

/// Closing the main window hides it to the tray: agents keep working, the
/// hotkey and notifications stay alive; Quit is in the tray. With no tray
/// to bring it back from, it minimises.
fn hide_on_close(window: &tauri::Window, event: &WindowEvent) {
    if let WindowEvent::CloseRequested { api, .. } = event {
        if window.label() == "main" {
            api.prevent_close();
            if tray_shown() {
                let _ = window.hide();
            } else {
                let _ = window.minimize();
            }
        }
    }
}

/// A second launch shows this instance's main window.
fn show_on_launch(app: &AppHandle, launches: std::os::unix::net::UnixListener) {
    let shown = app.clone();
    instance::serve(launches, move || {
        if let Some(w) = shown.get_webview_window("main") {
            let _ = w.show();
            let _ = w.unminimize();
            let _ = w.set_focus();
        }
    });
}

/// The engine reached or started, the hotkey registered, the endpoint for
/// Agent Zero served when the settings say so: the app's state.
fn start(
    app: &AppHandle,
    socket: PathBuf,
    data_dir: PathBuf,
    settings: Settings,
) -> Result<AppState, String> {
    let dir = data_dir.clone();
    let model = settings.model_kind().unwrap_or_else(|e| {
        tracing::warn!("{e}; using the default model");
        None
    });
    let metrics = settings.metrics_address().unwrap_or_else(|e| {
        tracing::warn!("{e}; metrics are off");
        None
    });
    let events = app.clone();
    let backend = tauri::async_runtime::block_on(Backend::start(
        socket,
        &settings.author,
        metrics,
        move || engine_config(dir, model),
        move |event| on_engine_event(&events, event),
    ))
    .map_err(|e| format!("cannot reach or start the engine: {e}"))?;
    if let Err(e) = app.global_shortcut().register(settings.hotkey.as_str()) {
        tracing::warn!(
            "the quick-note hotkey {} is not available: {e}",
            settings.hotkey
        );
    }
    let state = AppState {
        backend,
        endpoint: agent_zero::Endpoint::default(),
        data_dir,
        settings: Mutex::new(settings),
        mute_item: Mutex::new(None),
    };
    match state.settings().agent_http_address() {
        Ok(Some(addr)) => {
            let served = tauri::async_runtime::block_on(state.endpoint.serve(
                addr,
                &state.backend.socket,
                &state.data_dir,
            ));
            if let Err(e) = served {
                tracing::warn!("the endpoint for Agent Zero is off: {e}");
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!("{e}; the endpoint for Agent Zero is off"),
    }
    Ok(state)
}

/// Each engine event: to the windows, and a desktop notification when it
/// needs the person's eyes (or withdrawn once answered).
fn on_engine_event(app: &AppHandle, event: Value) {
    let _ = app.emit("pad-event", event.clone());
    if event["type"] == "created" {
        notify::withdraw_if_answered(&event);
    }
    if let Some(state) = app.try_state::<AppState>() {
        let s = state.settings();
        if s.notifications && notify::wanted(&event, &s.author) {
            notify::needs_eyes(app, &event, on_notification, on_group);
        }
        if s.notifications {
            if let Some(d) = notify::trashed_by_other(&event, &s.author) {
                notify::gather(app, d, undo_deletes);
            }
        }
    }
}

/// The quick-note box, hidden until the hotkey. It shares the main
/// window's web process (WebKitGTK's related view): one WebKitWebProcess,
/// not two.
fn quick_box(app: &tauri::App) -> Result<(), Box<dyn std::error::Error>> {
    let main = app
        .get_webview_window("main")
        .ok_or("the main window is missing")?;
    let quick = app.handle().clone();
    main.with_webview(move |view| {
        let built = tauri::WebviewWindowBuilder::new(
            &quick,
            "quick",
            tauri::WebviewUrl::App("quick.html".into()),
        )
        .title("Quick note")
        .inner_size(600.0, 110.0)
        .visible(false)
        .always_on_top(true)
        .decorations(false)
        .resizable(false)
        .skip_taskbar(true)
        .center()
        .with_related_view(view.inner())
        .build();
        if let Err(e) = built {
            tracing::error!("the quick-note box cannot be created: {e}");
        }
    })?;
    Ok(())
}

/// The engine's settings when the app runs it: the `PAD_*` variables read
/// as `pad serve` reads them (`scratchpad::settings`); the app's `model`
/// setting wins over `PAD_MODEL`. A variable `pad serve` would refuse is
/// said in the log and the engine starts with the defaults: the app is
/// started from a desktop, where nobody sees a refusal.
fn engine_config(
    data_dir: PathBuf,
    model: Option<scratchpad::semantic::ModelKind>,
) -> Result<scratchpad::Config, String> {
    let mut config = match scratchpad::settings::EngineSettings::from_env() {
        Ok(settings) => settings.config(data_dir).map_err(|e| e.to_string())?,
        Err(e) => {
            tracing::warn!("{e}; the engine starts with the default settings");
            scratchpad::Config::new(data_dir)
        }
    };
    if let (Some(kind), Some(s)) = (model, config.semantic.as_mut()) {
        s.kind = kind;
    }
    Ok(config)
}
