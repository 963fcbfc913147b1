//! The Prometheus endpoint of a real engine, scraped over real TCP after a
//! known workload: exact counts, GET only, bounded label cardinality.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::{err, ok, Harness};
use scratchpad::error::code;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// An engine with metrics on (and `tweak` applied), and the address its
/// endpoint listens on.
async fn start_with(
    tweak: impl FnOnce(&mut scratchpad::Config),
) -> (Harness, std::net::SocketAddr) {
    let h = Harness::with(|c| {
        c.metrics = true;
        tweak(c);
    })
    .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let engine = h.engine.clone();
    tokio::spawn(async move {
        engine
            .serve_metrics(listener, None, std::future::pending())
            .await
    });
    (h, addr)
}

/// One HTTP/1.1 request; returns (status, body).
async fn http(addr: std::net::SocketAddr, method: &str, path: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text[9..12].parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    // Bodies may come chunked: keep only the exposition lines.
    let body = body
        .lines()
        .filter(|l| l.starts_with('#') || l.starts_with("scratchpad_") || l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    (status, body)
}

/// Samples as `name{labels}` → value; panics on a line that is not valid
/// exposition text.
fn samples(body: &str) -> HashMap<String, f64> {
    let mut out = HashMap::new();
    for line in body.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# ") {
            assert!(
                rest.starts_with("HELP ") || rest.starts_with("TYPE "),
                "bad comment: {line}"
            );
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("no value: {line}"));
        let name_end = series.find('{').unwrap_or(series.len());
        assert!(
            series[..name_end]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "bad metric name: {line}"
        );
        if name_end < series.len() {
            assert!(series.ends_with('}'), "bad labels: {line}");
        }
        let v: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value: {line}")),
        };
        assert!(
            out.insert(series.to_string(), v).is_none(),
            "duplicate series: {series}"
        );
    }
    out
}

async fn scrape(addr: std::net::SocketAddr) -> HashMap<String, f64> {
    let (status, body) = http(addr, "GET", "/metrics").await;
    assert_eq!(status, 200, "{body}");
    samples(&body)
}

#[tokio::test]
async fn counters_and_gauges_match_a_known_workload() {
    let (h, addr) = start_with(|_| {}).await;
    let mut c = h.client().await;
    let mut watcher = h.client().await;
    ok(&mut watcher, "subscribe", json!({})).await;
    let contents = ["alpha", "bravo bravo", "charlie!"];
    for text in contents {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "a", "content": text, "tags": ["x"]}),
        )
        .await;
    }
    for text in ["task one", "task two"] {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": "b", "content": text, "kind": "task", "tags": ["x", "y"]}),
        )
        .await;
    }
    ok(
        &mut c,
        "entry.add",
        json!({"pad": "b", "content": "an insight", "kind": "insight"}),
    )
    .await;
    err(
        &mut c,
        "entry.add",
        json!({"pad": "a", "content": "x", "tags": ["bad tag"]}),
        code::INVALID_PARAMS,
    )
    .await;
    err(
        &mut c,
        "entry.add",
        json!({"pad": "../a", "content": "x"}),
        code::INVALID_PARAMS,
    )
    .await;
    err(
        &mut c,
        "entry.get",
        json!({"id": "zzzzzzzzzzzz"}),
        code::NOT_FOUND,
    )
    .await;
    err(&mut c, "no.such.method", json!({}), code::METHOD_NOT_FOUND).await;
    c.send_raw(b"{not json\n").await.unwrap();
    let _ = c.read_message().await.unwrap();
    ok(&mut c, "search", json!({"query": "bravo", "mode": "text"})).await;
    ok(&mut c, "search", json!({"query": "task", "mode": "text"})).await;
    ok(&mut c, "pad.configure", json!({"name": "empty"})).await;

    let m = scrape(addr).await;
    let get = |k: &str| *m.get(k).unwrap_or_else(|| panic!("no series {k}"));
    assert_eq!(get("scratchpad_entries_total{kind=\"note\"}"), 3.0);
    assert_eq!(get("scratchpad_entries_total{kind=\"task\"}"), 2.0);
    assert_eq!(get("scratchpad_entries_total{kind=\"insight\"}"), 1.0);
    assert_eq!(get("scratchpad_entries_total{kind=\"result\"}"), 0.0);
    assert_eq!(get("scratchpad_active_pads"), 3.0);
    assert_eq!(get("scratchpad_entries{pad=\"a\"}"), 3.0);
    assert_eq!(get("scratchpad_entries{pad=\"b\"}"), 3.0);
    assert_eq!(get("scratchpad_stored_entries"), 6.0);
    let bytes: usize =
        contents.iter().map(|c| c.len()).sum::<usize>() + "task one".len() * 2 + "an insight".len();
    assert!((get("scratchpad_avg_entry_size_bytes") - bytes as f64 / 6.0).abs() < 1e-9);
    assert_eq!(get("scratchpad_tag_entries{tag=\"x\"}"), 5.0);
    assert_eq!(get("scratchpad_tag_entries{tag=\"y\"}"), 2.0);
    assert_eq!(get("scratchpad_errors_total{code=\"-32602\"}"), 2.0);
    assert_eq!(get("scratchpad_errors_total{code=\"-32001\"}"), 1.0);
    assert_eq!(get("scratchpad_errors_total{code=\"-32700\"}"), 1.0);
    assert_eq!(get("scratchpad_errors_total{code=\"-32601\"}"), 1.0);
    assert_eq!(
        get("scratchpad_request_duration_seconds_count{method=\"(other)\"}"),
        1.0,
        "unknown methods share one series"
    );
    // hello ×2, subscribe, 8 entry.add (two refused), entry.get, 2 searches, pad.configure.
    assert_eq!(
        get("scratchpad_request_duration_seconds_count{method=\"entry.add\"}"),
        8.0
    );
    assert_eq!(
        get("scratchpad_request_duration_seconds_count{method=\"hello\"}"),
        2.0
    );
    assert_eq!(
        get("scratchpad_request_duration_seconds_count{method=\"entry.get\"}"),
        1.0
    );
    assert_eq!(
        get("scratchpad_search_duration_seconds_count{mode=\"text\"}"),
        2.0
    );
    assert_eq!(
        get("scratchpad_search_duration_seconds_count{mode=\"hybrid\"}"),
        0.0
    );
    assert_eq!(get("scratchpad_connections"), 2.0);
    assert_eq!(get("scratchpad_subscribers"), 1.0);
    assert_eq!(get("scratchpad_embed_queue"), 0.0);
    // Applied within a millisecond or by the next read: at most what was written.
    assert!((0.0..=3.0).contains(&get("scratchpad_journal_queue")));
    assert_eq!(get("scratchpad_pad_recent_writes{pad=\"a\"}"), 3.0);
    let file = if common::postgres::wanted() {
        "postgresql"
    } else {
        "pad.db"
    };
    assert!(get(&format!("scratchpad_disk_bytes{{file=\"{file}\"}}")) > 0.0);
    assert_eq!(get("scratchpad_lagged_events_total"), 0.0);
    // Histograms are cumulative and end at +Inf.
    assert_eq!(
        get("scratchpad_request_duration_seconds_bucket{method=\"entry.add\",le=\"+Inf\"}"),
        8.0
    );

    drop(c);
    drop(watcher);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let m = scrape(addr).await;
    assert_eq!(m["scratchpad_connections"], 0.0);
    assert_eq!(m["scratchpad_subscribers"], 0.0);
}

#[tokio::test]
async fn expiry_and_lagged_events_are_counted_exactly() {
    let clock = scratchpad::clock::Clock::manual(1_900_000_000_000);
    let c2 = clock.clone();
    let (h, addr) = start_with(move |c| c.clock = c2).await;
    let mut c = h.client().await;
    for pad in ["p1", "p2"] {
        ok(
            &mut c,
            "entry.add",
            json!({"pad": pad, "content": "soon gone"}),
        )
        .await;
    }
    clock.advance(Duration::from_secs(3 * 3600));
    h.engine.sweep().await.unwrap();
    clock.advance(Duration::from_secs(8 * 86400));
    h.engine.sweep().await.unwrap();
    let m = scrape(addr).await;
    assert_eq!(m["scratchpad_pads_expired_total"], 2.0);
    assert_eq!(m["scratchpad_pads_purged_total"], 2.0);
    assert_eq!(m["scratchpad_entries_purged_total"], 2.0);
    assert_eq!(m["scratchpad_active_pads"], 0.0);

    // A subscriber that reads nothing misses events; the metric counts them.
    let mut slow = h.client().await;
    ok(&mut slow, "subscribe", json!({})).await;
    let n = scratchpad::events::RING + 1000;
    for chunk in 0..n / 500 + 1 {
        for i in 0..500 {
            c.send(
                "entry.add",
                json!({"pad": "flood", "content": format!("{chunk}-{i}")}),
            )
            .await
            .unwrap();
        }
        c.flush().await.unwrap();
        for _ in 0..500 {
            c.response().await.unwrap().1.unwrap();
        }
    }
    let missed = loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), slow.next_event())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if ev["type"] == "lagged" {
            break ev["missed"].as_f64().unwrap();
        }
    };
    let m = scrape(addr).await;
    assert_eq!(m["scratchpad_lagged_events_total"], missed);
}

#[tokio::test]
async fn only_get_is_served_and_cardinality_stays_bounded_with_10000_pads() {
    let (h, addr) = start_with(|_| {}).await;
    let (status, body) = http(addr, "POST", "/metrics").await;
    assert_eq!(status, 405, "{body}");
    let (status, _) = http(addr, "DELETE", "/metrics").await;
    assert_eq!(status, 405);
    let (status, body) = http(addr, "GET", "/").await;
    assert_eq!(status, 404);
    let _ = body;

    let mut c = h.client().await;
    for chunk in 0..20 {
        for i in 0..500 {
            let n = chunk * 500 + i;
            c.send(
                "entry.add",
                json!({"pad": format!("pad-{n:05}"), "content": "x", "tags": [format!("t{}", n % 300)]}),
            )
            .await
            .unwrap();
        }
        c.flush().await.unwrap();
        for _ in 0..500 {
            c.response().await.unwrap().1.unwrap();
        }
    }
    let m = scrape(addr).await;
    assert_eq!(m["scratchpad_active_pads"], 10_000.0);
    let per = |prefix: &str| m.keys().filter(|k| k.starts_with(prefix)).count();
    assert_eq!(
        per("scratchpad_entries{"),
        scratchpad::metrics::TOP_PADS + 1,
        "busiest 50 + (other)"
    );
    assert_eq!(m["scratchpad_entries{pad=\"(other)\"}"], 10_000.0 - 50.0);
    assert_eq!(
        per("scratchpad_tag_entries{"),
        scratchpad::metrics::TOP_TAGS + 1
    );
    assert_eq!(
        per("scratchpad_pad_idle_seconds{"),
        scratchpad::metrics::TOP_PADS
    );
    assert!(m.len() < 700, "{} series with 10,000 pads", m.len());
}
