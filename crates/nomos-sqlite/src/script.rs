//! A commit's writes as one script: several statements sent to the writer in one round
//! trip, each keeping its own result (rows changed, rows returned) and its own name for
//! a failure.
//!
//! SQLite runs the statements of one query text in order (the sqlx driver steps through
//! them and streams each one's rows and result; `sqlx::raw_sql` would do the same but
//! binds nothing). Every statement is written
//! with its own numbered placeholders (`?1`/`$1` is its first argument); [`Script::push`]
//! turns each into a plain `?` and appends its argument to the script's one list in the
//! order the placeholders appear, so the statement texts stay those of a single
//! statement. (The driver binds plain `?` across the statements of a text in order; a
//! numbered one past a statement's own count would be left unbound.)

use futures::TryStreamExt;
use nomos_core::ports::store::StoreError;
use nomos_store_sql::backend::Arg;
use sqlx::sqlite::SqliteRow;
use sqlx::{Either, SqliteConnection};

use crate::backend::bind;
use crate::error::db_error;

/// The statements of a script, in order, and the arguments of all of them.
#[derive(Debug, Default)]
pub(crate) struct Script {
    sql: String,
    args: Vec<Bound>,
    names: Vec<String>,
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
    /// Rows it returned.
    pub rows: Vec<SqliteRow>,
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
        for n in positional(sql, &mut self.sql) {
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
            self.args.push(arg);
        }
        self.sql.push_str(";\n");
        self.names.push(what.into());
    }

    /// How many statements it holds.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// Runs every statement, in order, in one round trip to the connection; returns what
    /// each did. The first statement that fails stops the script, and its error names it;
    /// what ran before it is undone only with the transaction around the script.
    pub(crate) async fn run(self, conn: &mut SqliteConnection) -> Result<Vec<Outcome>, StoreError> {
        if self.names.is_empty() {
            return Ok(Vec::new());
        }
        let mut query = sqlx::query(sqlx::AssertSqlSafe(self.sql));
        for arg in self.args {
            query = match arg {
                Bound::Shared(arg) => bind(query, arg)?,
                Bound::Int(n) => query.bind(n),
                Bound::OptInt(n) => query.bind(n),
                Bound::Text(text) => query.bind(text),
                Bound::OptText(text) => query.bind(text),
            };
        }
        let mut outcomes = Vec::with_capacity(self.names.len());
        let mut current = Outcome::default();
        // The connection's `fetch_many` streams one result per statement of the text; the
        // test below holds the driver to it.
        let mut results = sqlx::Executor::fetch_many(&mut *conn, query);
        loop {
            let next = results.try_next().await.map_err(|e| {
                let what = self
                    .names
                    .get(outcomes.len())
                    .map_or("a statement of a commit", String::as_str);
                db_error(e, what)
            })?;
            match next {
                None => break,
                Some(Either::Right(row)) => current.rows.push(row),
                Some(Either::Left(done)) => {
                    current.changes = done.rows_affected();
                    outcomes.push(std::mem::take(&mut current));
                }
            }
        }
        if outcomes.len() != self.names.len() {
            return Err(StoreError::Backend(format!(
                "a commit's script of {} statements reported {}",
                self.names.len(),
                outcomes.len()
            )));
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

    #[tokio::test]
    async fn each_statement_keeps_its_changes_and_rows_and_a_failure_names_its_statement() {
        use sqlx::{Connection, Row};
        let mut conn = SqliteConnection::connect("sqlite::memory:").await.unwrap();
        sqlx::query("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
            .execute(&mut conn)
            .await
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
        let outcomes = script.run(&mut conn).await.unwrap();
        assert_eq!(outcomes.len(), 3);
        assert_eq!(outcomes[0].changes, 2);
        assert_eq!(outcomes[1].changes, 0);
        let read: Vec<String> = outcomes[2].rows.iter().map(|r| r.get("v")).collect();
        assert_eq!(read, ["a", "b"]);

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
        let error = failing.run(&mut conn).await.unwrap_err().to_string();
        assert!(error.contains("row 1 once more"), "{error}");
    }
}
