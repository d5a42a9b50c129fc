//! A commit's writes as one script: statements run in order on the commit connection,
//! each prepared once per connection and kept in its cache, each keeping its own result
//! (rows changed, rows returned) and its own name for a failure.
//!
//! Every statement is written with its own numbered placeholders (`?1`/`$1` is its first
//! argument); [`Script::push`] turns each into a plain `?` and lists its arguments in the
//! order the placeholders appear (SQLite reads `$1` as a name, not a number).

use nomos_core::ports::store::StoreError;
use nomos_store_sql::backend::Arg;
use rusqlite::Connection;
use rusqlite::types::Value;

use crate::backend::value;
use crate::error::sqlite_error;

/// The statements of a script, in order.
#[derive(Debug, Default)]
pub(crate) struct Script {
    statements: Vec<Statement>,
}

/// One statement: its text with plain placeholders, its arguments in their order, and
/// what it writes, for a failure.
#[derive(Debug)]
struct Statement {
    sql: String,
    args: Vec<Bound>,
    name: String,
}

/// One argument of a script: a shared-code [`Arg`] (bound the way the schema stores it)
/// or a plain SQLite value.
#[derive(Clone, Debug)]
pub(crate) enum Bound {
    /// Bound like every shared statement's argument.
    Shared(Arg),
    /// An integer.
    Int(i64),
    /// An integer or NULL.
    OptInt(Option<i64>),
    /// A text.
    Text(String),
    /// A text or NULL.
    OptText(Option<String>),
}

impl Bound {
    fn into_value(self) -> Result<Value, StoreError> {
        Ok(match self {
            Bound::Shared(arg) => value(arg)?,
            Bound::Int(n) => Value::Integer(n),
            Bound::OptInt(n) => n.map_or(Value::Null, Value::Integer),
            Bound::Text(text) => Value::Text(text),
            Bound::OptText(text) => text.map_or(Value::Null, Value::Text),
        })
    }
}

impl From<Arg> for Bound {
    fn from(arg: Arg) -> Bound {
        Bound::Shared(arg)
    }
}

impl From<i64> for Bound {
    fn from(n: i64) -> Bound {
        Bound::Int(n)
    }
}

impl From<Option<i64>> for Bound {
    fn from(n: Option<i64>) -> Bound {
        Bound::OptInt(n)
    }
}

impl From<String> for Bound {
    fn from(text: String) -> Bound {
        Bound::Text(text)
    }
}

impl From<&str> for Bound {
    fn from(text: &str) -> Bound {
        Bound::Text(text.to_owned())
    }
}

impl From<Option<String>> for Bound {
    fn from(text: Option<String>) -> Bound {
        Bound::OptText(text)
    }
}

/// What one statement of a script did.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Rows it inserted, updated or deleted.
    pub changes: u64,
    /// Rows it returned, each as its columns' values.
    pub rows: Vec<Vec<Value>>,
}

impl Script {
    /// Appends a statement whose placeholders (`?n` or `$n`) number `args` from 1;
    /// `what` names it in a failure.
    ///
    /// # Panics
    /// When a placeholder names an argument not given: a statement written wrong.
    pub(crate) fn push(&mut self, sql: &str, args: Vec<Bound>, what: impl Into<String>) {
        let mut args: Vec<Option<Bound>> = args.into_iter().map(Some).collect();
        let mut used: Vec<Option<Bound>> = vec![None; args.len()];
        let mut text = String::with_capacity(sql.len());
        let mut ordered = Vec::with_capacity(args.len());
        for n in positional(sql, &mut text) {
            #[allow(clippy::expect_used)]
            let arg = match args[n - 1].take() {
                Some(arg) => {
                    used[n - 1] = Some(arg.clone());
                    arg
                }
                None => used[n - 1]
                    .clone()
                    .expect("a placeholder names an argument of its statement"),
            };
            ordered.push(arg);
        }
        self.statements.push(Statement {
            sql: text,
            args: ordered,
            name: what.into(),
        });
    }

    /// How many statements it holds.
    pub(crate) fn len(&self) -> usize {
        self.statements.len()
    }

    /// Runs every statement, in order, on `db`; returns what each did. The first
    /// statement that fails stops the script, and its error names it; what ran before it
    /// is undone only with the transaction around the script.
    pub(crate) fn run(self, db: &Connection) -> Result<Vec<Outcome>, StoreError> {
        let mut outcomes = Vec::with_capacity(self.statements.len());
        for statement in self.statements {
            let name = statement.name;
            let failed = |e| sqlite_error(e, &name);
            let mut prepared = db.prepare_cached(&statement.sql).map_err(failed)?;
            for (index, arg) in statement.args.into_iter().enumerate() {
                prepared
                    .raw_bind_parameter(index + 1, arg.into_value()?)
                    .map_err(failed)?;
            }
            let columns = prepared.column_count();
            let writes = !prepared.readonly();
            let mut outcome = Outcome::default();
            let mut rows = prepared.raw_query();
            while let Some(row) = rows.next().map_err(failed)? {
                let values = (0..columns)
                    .map(|column| row.get::<_, Value>(column))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(failed)?;
                outcome.rows.push(values);
            }
            drop(rows);
            // The count is of the last statement that wrote, so a read reports none.
            outcome.changes = if writes { db.changes() } else { 0 };
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }
}

/// Writes `sql` to `out` with each placeholder `?n` or `$n` as a plain `?`; returns the
/// `n` of each, in the order they appear. The statements given hold no `?` or `$`
/// inside a literal.
fn positional(sql: &str, out: &mut String) -> Vec<usize> {
    let mut order = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '?' && c != '$' {
            out.push(c);
            continue;
        }
        let mut n: usize = 0;
        let mut digits = 0;
        while let Some(v) = chars.peek().and_then(|d| d.to_digit(10)) {
            n = n * 10 + v as usize;
            digits += 1;
            chars.next();
        }
        out.push(c);
        if digits > 0 {
            if c == '$' {
                out.pop();
                out.push('?');
            }
            order.push(n);
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positioned(sql: &str) -> (String, Vec<usize>) {
        let mut out = String::new();
        let order = positional(sql, &mut out);
        (out, order)
    }

    #[test]
    fn numbered_placeholders_of_either_style_become_plain_ones_in_order() {
        assert_eq!(
            positioned("UPDATE t SET a = $2, b = ?3 WHERE id = $1 AND v = $12"),
            (
                "UPDATE t SET a = ?, b = ? WHERE id = ? AND v = ?".to_owned(),
                vec![2, 3, 1, 12]
            )
        );
    }

    #[test]
    fn a_lone_sign_is_left_as_it_is() {
        assert_eq!(
            positioned("SELECT '$' || 1 FROM t"),
            ("SELECT '$' || 1 FROM t".to_owned(), vec![])
        );
    }

    #[test]
    fn each_statement_keeps_its_changes_and_rows_and_a_failure_names_its_statement() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            .unwrap();
        let mut script = Script::default();
        script.push(
            "INSERT INTO t (id, v) VALUES (?1, ?2), (?3, ?4)",
            vec![
                Bound::Int(1),
                Bound::Text("a".into()),
                Bound::Int(2),
                Bound::Text("b".into()),
            ],
            "two rows",
        );
        script.push(
            "UPDATE t SET v = ?1 WHERE id = ?2",
            vec![Bound::Text("z".into()), Bound::Int(9)],
            "no row",
        );
        script.push(
            "SELECT v FROM t WHERE id >= $2 AND id <= ?1 + $2 ORDER BY id",
            vec![Bound::Int(1), Bound::Int(1)],
            "read back",
        );
        assert_eq!(script.len(), 3);
        let outcomes = script.run(&conn).unwrap();
        assert_eq!(outcomes.len(), 3);
        assert_eq!(outcomes[0].changes, 2);
        assert_eq!(outcomes[1].changes, 0);
        assert_eq!(outcomes[2].changes, 0, "a read changes nothing");
        let read: Vec<&Value> = outcomes[2].rows.iter().map(|r| &r[0]).collect();
        assert_eq!(read, [&Value::Text("a".into()), &Value::Text("b".into())]);

        let mut failing = Script::default();
        failing.push(
            "INSERT INTO t (id, v) VALUES (?1, ?2)",
            vec![Bound::Int(3), Bound::Text("c".into())],
            "a new row",
        );
        failing.push(
            "INSERT INTO t (id, v) VALUES (?1, ?2)",
            vec![Bound::Int(1), Bound::Text("again".into())],
            "row 1 once more",
        );
        let error = failing.run(&conn).unwrap_err().to_string();
        assert!(error.contains("row 1 once more"), "{error}");
    }
}
