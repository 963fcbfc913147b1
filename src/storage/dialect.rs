//! Where the SQL both stores run differs, the hook that says how:
//! statements written once (`storage::inbox::sql`,
//! `storage::deliveries::drop_waiting`, the filters of `storage::query`)
//! take their differing pieces from here.
//!
//! A constant statement numbers its placeholders `$1`, `$2`, … in the
//! order they first appear, which SQLite binds by position as PostgreSQL
//! does. A statement built at run time (`storage::query::Query`) takes
//! each value's placeholder from `placeholder`.

/// The database a statement is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The placeholder of a built statement's `n`th value (from 1):
    /// SQLite's `?` takes the values in order, so a built piece fits in
    /// SQLite text whose own values are `?` too.
    pub fn placeholder(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => "?".into(),
            Dialect::Postgres => format!("${n}"),
        }
    }

    /// The function giving the larger of its arguments (SQLite's `max`
    /// with two arguments; PostgreSQL's `max` is only an aggregate).
    pub fn greatest(self) -> &'static str {
        match self {
            Dialect::Sqlite => "max",
            Dialect::Postgres => "greatest",
        }
    }

    /// The condition that the list column `list` holds `value`: SQLite
    /// keeps a list as JSON text, PostgreSQL as an array.
    pub fn list_has(self, list: &str, value: &str) -> String {
        match self {
            Dialect::Sqlite => {
                format!("EXISTS (SELECT 1 FROM json_each({list}) WHERE value = {value})")
            }
            Dialect::Postgres => format!("{value} = ANY({list})"),
        }
    }

    /// A list bound as `list` as rows of one column, `value`, named `alias`
    /// (SQLite reads its JSON text, PostgreSQL unnests its array).
    pub fn rows_of(self, list: &str, alias: &str) -> String {
        match self {
            Dialect::Sqlite => format!("json_each({list}) AS {alias}"),
            Dialect::Postgres => format!("unnest({list}) AS {alias}(value)"),
        }
    }

    /// A join kept in the order written: SQLite's planner takes `CROSS
    /// JOIN` as that order; PostgreSQL's plans a plain join on its own.
    pub fn join_in_order(self) -> &'static str {
        match self {
            Dialect::Sqlite => "CROSS JOIN",
            Dialect::Postgres => "JOIN",
        }
    }

    /// Live entries `e` of pads `p`, a row for each of their tags `t.tag`:
    /// SQLite lists tags in a table of their own (`entry_tags`, its index
    /// the tags'), PostgreSQL in an array on the entry.
    pub fn tagged_entries(self) -> &'static str {
        match self {
            Dialect::Sqlite => {
                "entry_tags t JOIN entries e ON e.seq = t.seq JOIN pads p ON p.name = e.pad"
            }
            Dialect::Postgres => {
                "entries e JOIN pads p ON p.name = e.pad CROSS JOIN LATERAL unnest(e.tags) AS t(tag)"
            }
        }
    }

    /// The condition that the flag `column` is false, as this database's
    /// partial indexes are written (SQLite's `WHERE taken = 0` matches
    /// only `taken = 0`).
    pub fn is_false(self, column: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} = 0"),
            Dialect::Postgres => format!("NOT {column}"),
        }
    }
}
