//! The tools' argument schemas as strict function-calling converters take
//! them, and the check every call's arguments pass before a tool runs.
//!
//! schemars writes `$schema`, `["integer", "null"]` types for optional
//! arguments, `format: uint32` and `default: []`; OpenAI-style strict mode,
//! the MCP Inspector and Agent Zero's prompt all do better without them. An
//! optional argument is one left out of `required`, so `null` adds nothing.
//! Arguments are checked against the same schema: an unknown name is refused
//! with the closest known one, a missing required one with what it is for,
//! and a number sent as a string ("5") is taken as the number. The engine's
//! own errors reach the model in the tools' terms (`in_tool_terms`).

use rmcp::model::{JsonObject, Tool};
use serde_json::{Map, Value};

/// Rewrites a tool's input schema in place (see the module's docs). `pad`
/// is this server's default pad, named in every `pad` argument's text.
pub fn strict(schema: &mut JsonObject, pad: &str) {
    schema.remove("$schema");
    schema.insert("additionalProperties".into(), Value::Bool(false));
    if let Some(Value::Object(props)) = schema.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if let Value::Object(p) = prop {
                strict_property(p);
                if name == "pad" {
                    if let Some(Value::String(d)) = p.get_mut("description") {
                        *d = match d.strip_suffix("defaults to this server's pad.") {
                            Some(head) => format!("{head}defaults to this server's pad, '{pad}'."),
                            None => format!("{d} This server's pad is '{pad}'."),
                        };
                    }
                }
            }
        }
    }
}

fn strict_property(p: &mut Map<String, Value>) {
    p.remove("default");
    if let Some(Value::Array(types)) = p.get("type") {
        let one = types.iter().find(|t| *t != "null").cloned();
        if let Some(t) = one {
            p.insert("type".into(), t);
        }
    }
    if let Some(Value::String(f)) = p.remove("format") {
        // uint32/uint64 are not JSON Schema formats: say "at least 0".
        if f.starts_with("uint") && !p.contains_key("minimum") {
            p.insert("minimum".into(), Value::from(0));
        }
    }
    if let Some(Value::Object(items)) = p.get_mut("items") {
        strict_property(items);
    }
}

/// Checks `args` against `tool`'s schema before the call; an error is
/// worded for the model that made the call. An unknown argument close to a
/// real one (`tag` for `tags`) is the model's slip and refused; any other is
/// taken out and returned — clients add their own (Gemini CLI's
/// `wait_for_previous`), and the call should not fail for it.
pub fn check(tool: &Tool, args: &mut JsonObject) -> Result<Vec<String>, String> {
    let name = tool.name.as_ref();
    let empty = Map::new();
    let props = match tool.input_schema.get("properties") {
        Some(Value::Object(p)) => p,
        _ => &empty,
    };
    let known: Vec<&str> = props.keys().map(String::as_str).collect();
    let listing = if known.is_empty() {
        "it takes no arguments".to_owned()
    } else {
        format!("its arguments are: {}", known.join(", "))
    };
    let mut ignored = Vec::new();
    for given in args.keys() {
        if !props.contains_key(given) {
            match closest(given, &known) {
                Some(c) => {
                    return Err(format!(
                        "{name} has no argument '{given}'. Did you mean '{c}'? Call it again without '{given}'; {listing}."
                    ))
                }
                None => ignored.push(given.clone()),
            }
        }
    }
    for gone in &ignored {
        args.remove(gone);
    }
    if let Some(Value::Array(required)) = tool.input_schema.get("required") {
        for r in required.iter().filter_map(Value::as_str) {
            if args.get(r).is_none_or(Value::is_null) {
                let what = props[r]["description"].as_str().unwrap_or("");
                return Err(format!(
                    "{name} needs the argument '{r}': {what} Call it again with '{r}' set."
                ));
            }
        }
    }
    for (arg, value) in args.iter_mut() {
        check_type(name, arg, &props[arg.as_str()], value)?;
    }
    // A null optional argument is the argument left out.
    args.retain(|_, v| !v.is_null());
    Ok(ignored)
}

/// The one line a result carries about arguments the tool ignored.
pub fn ignored_line(tool: &str, ignored: &[String]) -> Option<String> {
    match ignored {
        [] => None,
        [one] => Some(format!(
            "({tool} ignored the argument '{one}': it does not take it.)"
        )),
        many => Some(format!(
            "({tool} ignored the arguments '{}': it does not take them.)",
            many.join("', '")
        )),
    }
}

fn check_type(tool: &str, arg: &str, schema: &Value, value: &mut Value) -> Result<(), String> {
    let want = schema["type"].as_str().unwrap_or("");
    let fits = match want {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "integer" => {
            // A client that sends every value as a string ("5"): take it.
            if let Some(n) = value.as_str().and_then(|s| s.trim().parse::<i64>().ok()) {
                *value = Value::from(n);
            }
            value.is_i64() || value.is_u64()
        }
        "number" => value.is_number(),
        "array" => match value {
            // One string where a list of strings goes: a list of one.
            Value::String(s) if schema["items"]["type"] == "string" => {
                *value = Value::Array(vec![Value::String(std::mem::take(s))]);
                true
            }
            Value::Array(items) => items
                .iter()
                .all(|i| schema["items"]["type"] != "string" || i.is_string()),
            _ => false,
        },
        _ => true,
    };
    if fits || value.is_null() {
        return Ok(());
    }
    let shape = match want {
        "array" => "a list of strings, e.g. [\"a\", \"b\"]",
        "integer" => "a whole number, e.g. 10",
        "boolean" => "true or false",
        "string" => "a string",
        other => other,
    };
    Err(format!(
        "{tool}: the argument '{arg}' must be {shape}, not {value}. Call it again with '{arg}' as {shape}."
    ))
}

/// The known name nearest to `given`, when it is near enough to be a slip:
/// a plural or singular, a prefix, or a couple of letters off.
pub fn closest<'a>(given: &str, known: &[&'a str]) -> Option<&'a str> {
    let given = given.to_lowercase();
    known
        .iter()
        .map(|k| (distance(&given, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3) || k.starts_with(&given) || given.starts_with(k))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The engine's methods as the tools that call them, for error texts: a
/// model knows the tools, not the wire protocol.
const TOOL_TERMS: &[(&str, &str)] = &[
    ("task.* methods", "the task tools"),
    ("entry.add", "add_note"),
    ("entry.list", "list_notes"),
    ("entry.get", "search_notes"),
    ("entry.update", "update_note"),
    ("entry.delete", "delete_note"),
    ("task.claim", "claim_task"),
    ("task.heartbeat", "update_task"),
    ("task.complete", "update_task"),
    ("task.fail", "update_task"),
    ("plan.order", "plan"),
    ("tags.list", "list_tags"),
    ("pad.export", "read_pad"),
];

/// An engine error worded for a model: methods renamed to tools, and no
/// pointer to the protocol document it cannot read.
pub fn in_tool_terms(message: &str) -> String {
    crate::error::reword(message, TOOL_TERMS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(schema: Value) -> Tool {
        let mut s = schema.as_object().unwrap().clone();
        strict(&mut s, "inbox");
        Tool::new("add_note", "", Arc::new(s))
    }

    fn add_note() -> Tool {
        tool(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "The note."},
                "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1},
                "pad": {"type": ["string", "null"], "description": "The pad."}
            },
            "required": ["content"]
        }))
    }

    #[test]
    fn schemas_are_strict() {
        let t = add_note();
        let s = &*t.input_schema;
        assert!(!s.contains_key("$schema"));
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(
            s["properties"]["limit"],
            json!({"type": "integer", "minimum": 1})
        );
        assert_eq!(
            s["properties"]["tags"],
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(
            s["properties"]["pad"]["description"],
            "The pad. This server's pad is 'inbox'."
        );
    }

    #[test]
    fn an_unknown_argument_is_refused_with_the_closest_name() {
        let mut args = json!({"content": "x", "tag": ["a"]})
            .as_object()
            .unwrap()
            .clone();
        let e = check(&add_note(), &mut args).unwrap_err();
        assert!(
            e.starts_with("add_note has no argument 'tag'. Did you mean 'tags'?"),
            "{e}"
        );
        assert!(
            e.contains("its arguments are: content, limit, pad, tags"),
            "{e}"
        );
        // Not near any argument: a client's own addition, taken out.
        let mut far = json!({"content": "x", "wait_for_previous": true, "colour": 1})
            .as_object()
            .unwrap()
            .clone();
        let ignored = check(&add_note(), &mut far).unwrap();
        assert_eq!(ignored, vec!["colour", "wait_for_previous"]);
        assert_eq!(far.keys().collect::<Vec<_>>(), vec!["content"]);
        assert_eq!(
            ignored_line("add_note", &ignored).unwrap(),
            "(add_note ignored the arguments 'colour', 'wait_for_previous': it does not take them.)"
        );
    }

    #[test]
    fn a_missing_required_argument_says_what_it_is_for() {
        let e = check(&add_note(), &mut Map::new()).unwrap_err();
        assert_eq!(
            e,
            "add_note needs the argument 'content': The note. Call it again with 'content' set."
        );
    }

    #[test]
    fn near_misses_of_type_are_taken_and_real_ones_refused() {
        let mut args = json!({"content": "x", "limit": "5", "tags": "solo", "pad": null})
            .as_object()
            .unwrap()
            .clone();
        check(&add_note(), &mut args).unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"content": "x", "limit": 5, "tags": ["solo"]})
        );
        let mut bad = json!({"content": "x", "limit": "lots"})
            .as_object()
            .unwrap()
            .clone();
        let e = check(&add_note(), &mut bad).unwrap_err();
        assert!(e.contains("'limit' must be a whole number"), "{e}");
    }

    #[test]
    fn engine_errors_name_tools_not_methods() {
        assert_eq!(
            in_tool_terms("entry.update: bad 'tags': too many. See docs/protocol.md for entry.update's params."),
            "update_note: bad 'tags': too many."
        );
        assert_eq!(
            in_tool_terms("no entry with id 'x'. It may have been deleted; list the pad (entry.list) to find current ids."),
            "no entry with id 'x'. It may have been deleted; list the pad (list_notes) to find current ids."
        );
        assert!(in_tool_terms("claim it again (task.claim)").ends_with("(claim_task)"));
    }

    #[test]
    fn closest_names() {
        let known = ["content", "tags", "kind", "pad", "reply_to"];
        assert_eq!(closest("tag", &known), Some("tags"));
        assert_eq!(closest("replyto", &known), Some("reply_to"));
        assert_eq!(closest("Content", &known), Some("content"));
        assert_eq!(closest("zzzzzz", &known), None);
    }
}
