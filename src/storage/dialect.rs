//! Where the SQL both stores run differs, the hook that says how:
//! statements written once (`storage::inbox::sql`,
//! `storage::deliveries::drop_waiting`, the filters of `storage::query`)
//! take their differing pieces from here.
//!
//! A statement written whole numbers its placeholders `$1`, `$2`, … by
//! the value each takes (`numbered` makes them SQLite's `?1`, `?2`, …:
//! SQLite numbers a `$1` by where it first appears). A statement built at
//! run time (`storage::query::Query`) takes each value's placeholder from
//! `placeholder`.

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

    /// `sql`, its placeholders `$1`, `$2`, … as this database numbers a
    /// value by its position (SQLite's `?1`; a `$` not before a digit, as
    /// in a JSON path, stays).
    pub fn numbered(self, sql: String) -> String {
        match self {
            Dialect::Postgres => sql,
            Dialect::Sqlite => {
                let mut out = String::with_capacity(sql.len());
                let mut chars = sql.chars().peekable();
                while let Some(c) = chars.next() {
                    let digit_next = chars.peek().is_some_and(char::is_ascii_digit);
                    out.push(if c == '$' && digit_next { '?' } else { c });
                }
                out
            }
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

    /// The condition that `column` is one of the list bound as `list`, for
    /// a column with an index: SQLite looks each value up, PostgreSQL
    /// takes the array whole.
    pub fn any_of(self, column: &str, list: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} IN (SELECT value FROM json_each({list}))"),
            Dialect::Postgres => format!("{column} = ANY({list})"),
        }
    }

    /// What ends a `SELECT` whose rows the transaction holds until it ends
    /// (PostgreSQL's `FOR UPDATE`; SQLite's writer is held whole already).
    pub fn hold_rows(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE",
        }
    }

    /// `hold_rows`, passing over rows another transaction holds: each is
    /// taken by one engine of a team (SQLite has one writer: none is held).
    pub fn hold_free_rows(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }

    /// The JSON text of the field `key` of the JSON text column `column`
    /// (`NULL` when it has none).
    pub fn json_field(self, column: &str, key: &str) -> String {
        match self {
            Dialect::Sqlite => format!("{column} -> '$.{key}'"),
            Dialect::Postgres => format!("({column}::jsonb -> '{key}')::text"),
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

#[cfg(test)]
mod tests {
    use super::Dialect;

    #[test]
    fn sqlite_numbers_a_value_by_its_position_not_where_it_first_appears() {
        let sql = "UPDATE t SET a = $2, j = x -> '$.k' WHERE seq = $1".to_owned();
        assert_eq!(
            Dialect::Sqlite.numbered(sql.clone()),
            "UPDATE t SET a = ?2, j = x -> '$.k' WHERE seq = ?1"
        );
        assert_eq!(Dialect::Postgres.numbered(sql.clone()), sql);
    }
}
