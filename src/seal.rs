//! The seal: no answer or event names a note its caller may not read.
//!
//! A field of an answer or an event that names another note — a reply's
//! parent, what a note supersedes, a question's answer, a task's
//! dependencies, the question a delivery waits on — has the type
//! `NoteRef`. A caller's answer is serialized through the seal
//! (`to_text`, `to_value`): a first pass writes it and gathers every
//! `NoteRef` in it, the caller's guard looks each one up, and when one
//! names a note the caller may not read, a second pass writes it again with
//! that reference `null` (left out of a list). The seal follows the type,
//! not a list of field names, so a field added later cannot escape it.
//! The owner's answers are written once, untouched.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};

use crate::error::{Error, Result};
use crate::guard::Guard;
use crate::storage::Storage;

/// The id of another note, as an answer or an event names it: written
/// through the seal, so a caller who may not read that note sees `null`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(transparent)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct NoteRef(pub String);

impl NoteRef {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for NoteRef {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for NoteRef {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NoteRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for NoteRef {
    fn from(id: String) -> NoteRef {
        NoteRef(id)
    }
}

impl From<&str> for NoteRef {
    fn from(id: &str) -> NoteRef {
        NoteRef(id.to_owned())
    }
}

impl From<NoteRef> for String {
    fn from(r: NoteRef) -> String {
        r.0
    }
}

impl PartialEq<str> for NoteRef {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for NoteRef {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for NoteRef {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

/// Ids as `NoteRef`s.
pub fn refs(ids: Vec<String>) -> Vec<NoteRef> {
    ids.into_iter().map(NoteRef).collect()
}

/// What the serialization running on this thread does with a `NoteRef`.
enum Pass {
    /// Writes it (the owner's answers, and everything outside the seal).
    Plain,
    /// Writes it and keeps its id.
    Gather(Vec<String>),
    /// Writes `null` for the ids the caller may not read.
    Hide(HashSet<String>),
}

thread_local! {
    static PASS: RefCell<Pass> = const { RefCell::new(Pass::Plain) };
}

/// Runs `f` (a serialization: synchronous, on this thread) under `pass`,
/// and gives the pass back.
fn under<T>(pass: Pass, f: impl FnOnce() -> T) -> (T, Pass) {
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            PASS.with(|p| *p.borrow_mut() = Pass::Plain);
        }
    }
    PASS.with(|p| *p.borrow_mut() = pass);
    let reset = Reset;
    let out = f();
    let pass = PASS.with(|p| std::mem::replace(&mut *p.borrow_mut(), Pass::Plain));
    drop(reset);
    (out, pass)
}

/// Whether the pass running hides `id`, keeping it when it gathers.
fn hidden(id: &str) -> bool {
    PASS.with(|p| match &mut *p.borrow_mut() {
        Pass::Plain => false,
        Pass::Gather(ids) => {
            ids.push(id.to_owned());
            false
        }
        Pass::Hide(ids) => ids.contains(id),
    })
}

impl Serialize for NoteRef {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        if hidden(&self.0) {
            s.serialize_none()
        } else {
            s.serialize_str(&self.0)
        }
    }
}

/// `#[serde(serialize_with)]` for a list of `NoteRef`s: the hidden ones
/// are left out rather than written `null`.
pub fn list<S: Serializer>(ids: &[NoteRef], s: S) -> std::result::Result<S::Ok, S::Error> {
    let shown: Vec<&NoteRef> = ids.iter().filter(|r| !hidden(&r.0)).collect();
    let mut seq = s.serialize_seq(Some(shown.len()))?;
    for r in shown {
        seq.serialize_element(r.as_str())?;
    }
    seq.end()
}

/// The key of a shared copy's `meta` naming its source: `{pad, id, author}`
/// (`entry.share`), sealed as a `NoteRef` is (`meta`): the one note
/// reference the seal finds by name.
pub const SHARED_FROM: &str = "shared_from";

/// `#[serde(serialize_with)]` for a note's `meta`. It is the writer's own
/// free-form map, but the engine writes one note reference into it: a
/// shared copy's source (`SHARED_FROM`: `{pad, id, author}`). That
/// is sealed as a `NoteRef` is: hidden, `shared_from` reads `null` whole.
pub fn meta<S: Serializer>(
    meta: &Option<serde_json::Map<String, serde_json::Value>>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    let Some(m) = meta else {
        return s.serialize_none();
    };
    let source = m
        .get(SHARED_FROM)
        .and_then(|f| f.get("id"))
        .and_then(serde_json::Value::as_str);
    match source {
        Some(id) if hidden(id) => {
            let mut sealed = m.clone();
            sealed.insert(SHARED_FROM.into(), serde_json::Value::Null);
            sealed.serialize(s)
        }
        _ => m.serialize(s),
    }
}

fn internal(e: serde_json::Error) -> Error {
    Error::Internal(e.to_string())
}

/// `write` (one serialization of the answer) run for `guard`'s caller:
/// once, gathering the references; again, hiding those it may not read,
/// only when there are such.
async fn sealed<T>(
    guard: &Guard,
    db: &dyn Storage,
    write: impl Fn() -> serde_json::Result<T>,
) -> Result<T> {
    if guard.grant().is_none() {
        return write().map_err(internal);
    }
    let (first, pass) = under(Pass::Gather(Vec::new()), &write);
    let first = first.map_err(internal)?;
    let Pass::Gather(mut named) = pass else {
        unreachable!("the gathering pass comes back as it went");
    };
    if named.is_empty() {
        return Ok(first);
    }
    named.sort_unstable();
    named.dedup();
    let mut hide = HashSet::new();
    for id in named {
        if !guard.sees(db, &id).await? {
            hide.insert(id);
        }
    }
    if hide.is_empty() {
        return Ok(first);
    }
    under(Pass::Hide(hide), &write).0.map_err(internal)
}

/// An error for `guard`'s caller. The one error that names notes the caller
/// did not send is a loop of dependencies (`rules::would_cycle`, its path
/// in `got`): a step it may not read is said as such. Others pass as they
/// are.
pub async fn error(guard: &Guard, db: &dyn Storage, e: Error) -> Error {
    let Error::InvalidParams {
        field: Some(field),
        got: Some(serde_json::Value::Array(path)),
        ..
    } = &e
    else {
        return e;
    };
    if field != "depends_on" || guard.grant().is_none() {
        return e;
    }
    let mut sealed = Vec::with_capacity(path.len());
    for step in path {
        let shown = match step.as_str() {
            Some(id) if guard.sees(db, id).await.unwrap_or(false) => Some(id.to_owned()),
            _ => None,
        };
        sealed.push(shown);
    }
    crate::storage::rules::would_cycle(&sealed)
}

/// `v` as compact JSON text, sealed for `guard`'s caller.
pub async fn to_text<T: Serialize + ?Sized>(
    guard: &Guard,
    db: &dyn Storage,
    v: &T,
) -> Result<Vec<u8>> {
    sealed(guard, db, || {
        // Room for a note's answer from the start: grown from serde_json's
        // 128 bytes, one note's answer was copied three times on the way.
        let mut text = Vec::with_capacity(1024);
        serde_json::to_writer(&mut text, v)?;
        Ok(text)
    })
    .await
}

/// `v` as a JSON value, sealed for `guard`'s caller.
pub async fn to_value<T: Serialize + ?Sized>(
    guard: &Guard,
    db: &dyn Storage,
    v: &T,
) -> Result<serde_json::Value> {
    sealed(guard, db, || serde_json::to_value(v)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Shape {
        one: Option<NoteRef>,
        #[serde(serialize_with = "list")]
        many: Vec<NoteRef>,
        plain: NoteRef,
    }

    fn shape() -> Shape {
        Shape {
            one: Some("a".into()),
            many: vec!["a".into(), "b".into(), "c".into()],
            plain: "b".into(),
        }
    }

    #[test]
    fn a_pass_gathers_every_reference_and_hides_the_ones_it_is_given() {
        let (text, pass) = under(Pass::Gather(Vec::new()), || {
            serde_json::to_string(&shape()).unwrap()
        });
        assert_eq!(text, r#"{"one":"a","many":["a","b","c"],"plain":"b"}"#);
        let Pass::Gather(ids) = pass else { panic!() };
        assert_eq!(ids, ["a", "a", "b", "c", "b"]);

        let hide = HashSet::from(["a".to_owned(), "b".to_owned()]);
        let (text, _) = under(Pass::Hide(hide), || {
            serde_json::to_string(&shape()).unwrap()
        });
        assert_eq!(text, r#"{"one":null,"many":["c"],"plain":null}"#);
        // Outside a pass, written as they are.
        assert_eq!(
            serde_json::to_string(&shape()).unwrap(),
            r#"{"one":"a","many":["a","b","c"],"plain":"b"}"#
        );
    }

    #[test]
    fn a_shared_copys_hidden_source_reads_null_in_its_meta() {
        #[derive(Serialize)]
        struct Note {
            #[serde(serialize_with = "meta")]
            meta: Option<serde_json::Map<String, serde_json::Value>>,
        }
        let note = Note {
            meta: serde_json::json!({"shared_from": {"id": "a", "pad": "secret"}, "mine": 1})
                .as_object()
                .cloned(),
        };
        let (text, pass) = under(Pass::Gather(Vec::new()), || {
            serde_json::to_string(&note).unwrap()
        });
        let Pass::Gather(ids) = pass else { panic!() };
        assert_eq!(ids, ["a"], "{text}");
        let hide = HashSet::from(["a".to_owned()]);
        let (text, _) = under(Pass::Hide(hide), || serde_json::to_string(&note).unwrap());
        assert_eq!(text, r#"{"meta":{"mine":1,"shared_from":null}}"#);
    }

    #[test]
    fn a_panicking_serialization_leaves_no_pass_behind() {
        let hide = HashSet::from(["a".to_owned()]);
        let r = std::panic::catch_unwind(|| {
            under(Pass::Hide(hide), || -> () { panic!("in the middle") })
        });
        assert!(r.is_err());
        assert_eq!(serde_json::to_string(&NoteRef::from("a")).unwrap(), "\"a\"");
    }
}
