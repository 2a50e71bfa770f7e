//! `DELETE … ORDER BY … LIMIT` and `UPDATE … ORDER BY … LIMIT` for D1.
//!
//! D1's SQLite is built with `SQLITE_ENABLE_UPDATE_DELETE_LIMIT`, so those statements work there
//! (chanfana's generated D1 endpoints issue them). The define only takes effect when SQLite's
//! parser is generated with it, and the amalgamation `libsqlite3-sys` bundles ships a parser
//! generated without it, so the bundled SQLite rejects them with a syntax error.
//!
//! This module owns turning such a statement into the equivalent one the bundled SQLite accepts,
//! by moving the ordering and limit into a sub-select over the table's rowids:
//!
//! ```sql
//! DELETE FROM t WHERE c ORDER BY k LIMIT 2            -- becomes
//! DELETE FROM t WHERE rowid IN (SELECT rowid FROM t WHERE c ORDER BY k LIMIT 2)
//! ```
//!
//! It is a small SQL tokenizer (strings, quoted names, comments, parentheses), written here
//! because no maintained crate parses SQLite's dialect with these clauses and prints it back
//! unchanged. Only statements with a top-level `ORDER BY`/`LIMIT` after `DELETE`/`UPDATE` are
//! touched; every other statement is returned byte for byte, and SQL without the word `limit`
//! is not even tokenized. Not handled (left as they are, so SQLite's own syntax error reaches the
//! caller): statements starting with `WITH`, `UPDATE … FROM`, named parameters in a statement
//! whose `RETURNING` clause the rewrite moves, and tables declared `WITHOUT ROWID`
//! (the rewritten statement then fails with "no such column: rowid").

use std::borrow::Cow;
use std::collections::HashMap;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
  Word,
  Param,
  Open,
  Close,
  Semicolon,
  Other,
}

#[derive(Clone, Copy, Debug)]
struct Token {
  kind: Kind,
  start: usize,
  end: usize,
}

/// The tokens of `sql`, without whitespace and comments.
fn tokenize(sql: &str) -> Vec<Token> {
  let bytes = sql.as_bytes();
  let mut tokens = Vec::new();
  let mut i = 0;
  let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
  while i < bytes.len() {
    let start = i;
    let b = bytes[i];
    let kind = match b {
      b if b.is_ascii_whitespace() => {
        i += 1;
        continue;
      }
      b'-' if bytes.get(i + 1) == Some(&b'-') => {
        while i < bytes.len() && bytes[i] != b'\n' {
          i += 1;
        }
        continue;
      }
      b'/' if bytes.get(i + 1) == Some(&b'*') => {
        i += 2;
        while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
          i += 1;
        }
        i = (i + 2).min(bytes.len());
        continue;
      }
      b'\'' | b'"' | b'`' => {
        // A doubled quote inside is the quote itself.
        i += 1;
        loop {
          match bytes.get(i) {
            None => break,
            Some(&q) if q == b => {
              if bytes.get(i + 1) == Some(&b) {
                i += 2;
              } else {
                i += 1;
                break;
              }
            }
            Some(_) => i += 1,
          }
        }
        if b == b'\'' { Kind::Other } else { Kind::Word }
      }
      b'[' => {
        while i < bytes.len() && bytes[i] != b']' {
          i += 1;
        }
        i = (i + 1).min(bytes.len());
        Kind::Word
      }
      b'?' => {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
          i += 1;
        }
        Kind::Param
      }
      b':' | b'@' if bytes.get(i + 1).is_some_and(|&n| word(n)) => {
        i += 1;
        while i < bytes.len() && word(bytes[i]) {
          i += 1;
        }
        Kind::Param
      }
      b'(' => {
        i += 1;
        Kind::Open
      }
      b')' => {
        i += 1;
        Kind::Close
      }
      b';' => {
        i += 1;
        Kind::Semicolon
      }
      b if word(b) => {
        while i < bytes.len() && word(bytes[i]) {
          i += 1;
        }
        if b == b'$' { Kind::Param } else { Kind::Word }
      }
      _ => {
        i += 1;
        Kind::Other
      }
    };
    tokens.push(Token { kind, start, end: i });
  }
  tokens
}

/// `sql` with every `DELETE`/`UPDATE … [ORDER BY …] LIMIT …` statement rewritten (see the module
/// docs); borrowed unchanged when there is none.
pub(crate) fn rewrite(sql: &str) -> Cow<'_, str> {
  if !sql.as_bytes().windows(5).any(|w| w.eq_ignore_ascii_case(b"limit")) {
    return Cow::Borrowed(sql);
  }
  let tokens = tokenize(sql);
  let mut out = String::new();
  let mut copied = 0;
  let mut changed = false;
  for statement in tokens.split(|t| t.kind == Kind::Semicolon) {
    let (Some(first), Some(last)) = (statement.first(), statement.last()) else { continue };
    if let Some(new) = rewrite_statement(sql, statement) {
      out.push_str(&sql[copied..first.start]);
      out.push_str(&new);
      copied = last.end;
      changed = true;
    }
  }
  if !changed {
    return Cow::Borrowed(sql);
  }
  out.push_str(&sql[copied..]);
  Cow::Owned(out)
}

fn is(sql: &str, t: &Token, word: &str) -> bool {
  t.kind == Kind::Word && sql[t.start..t.end].eq_ignore_ascii_case(word)
}

/// The text from token `from` to token `to` (exclusive), as written, except that bare `?`
/// parameters found in `numbers` (by their offset) are written `?N`.
fn text(sql: &str, tokens: &[Token], from: usize, to: usize, numbers: &HashMap<usize, usize>) -> String {
  if from >= to {
    return String::new();
  }
  let mut out = String::new();
  let mut copied = tokens[from].start;
  for token in &tokens[from..to] {
    if let Some(n) = numbers.get(&token.start) {
      out.push_str(&sql[copied..token.start]);
      out.push_str(&format!("?{n}"));
      copied = token.end;
    }
  }
  out.push_str(&sql[copied..tokens[to - 1].end]);
  out
}

/// The number SQLite gives each bare `?` of a statement (by offset), or `None` when it has named
/// parameters (`:a`, `@a`, `$a`), whose numbers depend on where they first appear.
fn parameter_numbers(sql: &str, tokens: &[Token]) -> Option<HashMap<usize, usize>> {
  let mut numbers = HashMap::new();
  let mut max = 0usize;
  for token in tokens.iter().filter(|t| t.kind == Kind::Param) {
    let p = &sql[token.start..token.end];
    if p == "?" {
      max += 1;
      numbers.insert(token.start, max);
    } else if let Some(n) = p.strip_prefix('?').and_then(|n| n.parse::<usize>().ok()) {
      max = max.max(n);
    } else {
      return None;
    }
  }
  Some(numbers)
}

fn rewrite_statement(sql: &str, t: &[Token]) -> Option<String> {
  let delete = is(sql, &t[0], "delete");
  if !delete && !is(sql, &t[0], "update") {
    return None;
  }
  // Top-level clause positions (depth 0).
  let (mut depth, mut set, mut from, mut where_, mut returning, mut tail) = (0i32, None, None, None, None, None);
  for (i, token) in t.iter().enumerate() {
    match token.kind {
      Kind::Open => depth += 1,
      Kind::Close => depth -= 1,
      Kind::Word if depth == 0 => {
        let next_is_by = t.get(i + 1).is_some_and(|n| is(sql, n, "by"));
        if is(sql, token, "set") && set.is_none() && !delete {
          set = Some(i);
        } else if is(sql, token, "from") && from.is_none() {
          from = Some(i);
        } else if is(sql, token, "where") && where_.is_none() {
          where_ = Some(i);
        } else if is(sql, token, "returning") && returning.is_none() {
          returning = Some(i);
        } else if (is(sql, token, "order") && next_is_by) || is(sql, token, "limit") {
          tail = Some(i);
          break;
        }
      }
      _ => {}
    }
  }
  let tail = tail?;
  // Where the table part (`name [AS alias] [INDEXED BY i | NOT INDEXED]`) starts and ends.
  let (table_start, table_end) = if delete {
    let from = from.filter(|&f| f == 1)?;
    (from + 1, where_.or(returning).unwrap_or(tail))
  } else {
    let set = set?;
    if from.is_some_and(|f| f > set) {
      return None; // UPDATE … FROM: not rewritten.
    }
    (if is(sql, &t[1], "or") { 3 } else { 1 }, set)
  };
  if table_start >= table_end {
    return None;
  }
  // Moving RETURNING after the sub-select changes the order parameters appear in: the bare ones
  // then get the numbers SQLite gave them in the original order.
  let numbers = if returning.is_some() { parameter_numbers(sql, t)? } else { HashMap::new() };
  let part = |from: usize, to: usize| text(sql, t, from, to, &numbers);
  let table = part(table_start, table_end);
  // The outer statement names the table without INDEXED BY / NOT INDEXED: an index forced there
  // may not serve a rowid lookup ("no query solution").
  let outer_end = (table_start..table_end)
    .find(|&i| is(sql, &t[i], "indexed") || (is(sql, &t[i], "not") && t.get(i + 1).is_some_and(|n| is(sql, n, "indexed"))))
    .unwrap_or(table_end);
  let outer_table = part(table_start, outer_end);
  let condition = where_.map(|w| part(w, returning.unwrap_or(tail))).unwrap_or_default();
  let returning_clause = returning.map(|r| part(r, tail)).unwrap_or_default();
  let select = format!("SELECT rowid FROM {table} {condition} {}", part(tail, t.len()));
  let outer = if delete {
    format!("DELETE FROM {outer_table}")
  } else {
    let assignments = part(set.unwrap(), where_.or(returning).unwrap_or(tail));
    format!("{} {outer_table} {assignments}", part(0, table_start))
  };
  Some(format!("{outer} WHERE rowid IN ({select}) {returning_clause}").trim_end().to_string())
}

#[cfg(test)]
mod tests {
  use super::rewrite;

  #[test]
  fn leaves_other_sql_alone() {
    for sql in ["SELECT * FROM t LIMIT 3", "DELETE FROM t WHERE a = 'limit'", "INSERT INTO t VALUES (1); SELECT 1 LIMIT 1", "UPDATE t SET a = (SELECT b FROM u ORDER BY b LIMIT 1)"] {
      assert_eq!(rewrite(sql), sql);
    }
  }

  #[test]
  fn delete_with_order_and_limit() {
    assert_eq!(
      rewrite("DELETE FROM tasks WHERE done = ? ORDER BY id DESC LIMIT ? OFFSET 1"),
      "DELETE FROM tasks WHERE rowid IN (SELECT rowid FROM tasks WHERE done = ? ORDER BY id DESC LIMIT ? OFFSET 1)"
    );
    assert_eq!(rewrite("delete from \"my table\" limit 1;"), "DELETE FROM \"my table\" WHERE rowid IN (SELECT rowid FROM \"my table\"  limit 1);");
    assert_eq!(
      rewrite("DELETE FROM t AS x INDEXED BY t_a WHERE x.a > 1 LIMIT 2"),
      "DELETE FROM t AS x WHERE rowid IN (SELECT rowid FROM t AS x INDEXED BY t_a WHERE x.a > 1 LIMIT 2)"
    );
  }

  #[test]
  fn update_with_order_and_limit() {
    assert_eq!(
      rewrite("UPDATE OR IGNORE t SET a = ?, b = (SELECT 1 LIMIT 1) WHERE c = ? ORDER BY c LIMIT 5"),
      "UPDATE OR IGNORE t SET a = ?, b = (SELECT 1 LIMIT 1) WHERE rowid IN (SELECT rowid FROM t WHERE c = ? ORDER BY c LIMIT 5)"
    );
    assert_eq!(rewrite("UPDATE t SET a = 1 LIMIT 1"), "UPDATE t SET a = 1 WHERE rowid IN (SELECT rowid FROM t  LIMIT 1)");
  }

  #[test]
  fn only_the_limited_statement_of_several() {
    assert_eq!(
      rewrite("SELECT 1; DELETE FROM t LIMIT 1; -- done\nSELECT 'a;b' LIMIT 1"),
      "SELECT 1; DELETE FROM t WHERE rowid IN (SELECT rowid FROM t  LIMIT 1); -- done\nSELECT 'a;b' LIMIT 1"
    );
  }

  #[test]
  fn returning_moves_after_the_sub_select_and_keeps_parameter_numbers() {
    assert_eq!(
      rewrite("UPDATE t SET a = ? WHERE b = ?2 RETURNING a + ? ORDER BY a LIMIT ?"),
      "UPDATE t SET a = ?1 WHERE rowid IN (SELECT rowid FROM t WHERE b = ?2 ORDER BY a LIMIT ?4) RETURNING a + ?3"
    );
    assert_eq!(rewrite("DELETE FROM t RETURNING :a LIMIT 1"), "DELETE FROM t RETURNING :a LIMIT 1");
  }

  #[test]
  fn returning_with_literal_parts() {
    assert_eq!(
      rewrite("DELETE FROM t WHERE a = 1 RETURNING id ORDER BY id LIMIT 1"),
      "DELETE FROM t WHERE rowid IN (SELECT rowid FROM t WHERE a = 1 ORDER BY id LIMIT 1) RETURNING id"
    );
  }
}
