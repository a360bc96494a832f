package database

import (
	"encoding/json"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// Reads the domain names by what they select (credit.SeqRanges, credit.Keysets, credit.Search), each written
// here in the form each database plans well.

// SeqAbove, given to a query's Where, keeps the rows whose keyColumn is keys[i] and whose
// seqColumn is above above[i], for some i: a join with the list of pairs, whose text is the
// same whatever the number of keys, so one prepared statement serves every length. With an
// index on (keyColumn, seqColumn) the planner runs it as one range scan per key.
//
// On PostgreSQL the list is two arrays (unnest). An OR of one range per key, the form SQLite
// used before, becomes there a bitmap OR of as many index scans and a sort: about five times
// the backend's CPU for the ledger pages of 50 companies. On SQLite the list is one JSON array
// of [key, above] pairs (json_each); the OR's text changed with every number of keys, each
// text a statement to prepare and cache.
func (db *DB) SeqAbove(keyColumn, seqColumn string, keys []string, above []int64) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		var w *entsql.Selector
		if s.Dialect() == dialect.Postgres {
			w = entsql.Select("c", "lo").FromExpr(entsql.P(func(b *entsql.Builder) {
				b.WriteString("unnest(").Arg(keys).WriteString("::text[], ").Arg(above).WriteString("::bigint[]) AS w(c, lo)")
			}))
		} else {
			pairs := make([][2]any, len(keys))
			for i, k := range keys {
				pairs[i] = [2]any{k, above[i]}
			}
			list, err := json.Marshal(pairs)
			if err != nil {
				s.AddError(err)
				return
			}
			w = entsql.Select("value->>0 AS c", "value->>1 AS lo").FromExpr(entsql.P(func(b *entsql.Builder) {
				b.WriteString("json_each(").Arg(string(list)).WriteString(")")
			}))
		}
		w.As("w")
		s.Join(w).OnP(entsql.And(
			entsql.ColumnsEQ(s.C(keyColumn), w.C("c")),
			entsql.ColumnsGT(s.C(seqColumn), w.C("lo")),
		))
	}
}

// Contains, given to a query's Where, keeps the rows of scope (the value of scopeColumn) whose
// column contains key, a LIKE '%key%' read through an index on both databases. On PostgreSQL
// the condition is the column's LIKE, which a trigram index on the column serves (migration
// 0010 for companies.name_key); the query's own conditions keep it in scope. SQLite has no
// index for a LIKE '%…%', and would read every row of the scope along the ordering's index to
// test its column; instead the matching rows are found first by a scan of the scope's part of
// an index on (scopeColumn, column, …), which holds the values (no row is read for a value
// that does not match), and then read by rowid. The subquery names scope only to choose that
// index's range: it filters nothing the query's own conditions do not (the data layer's store
// filter stays the outer query's).
func (db *DB) Contains(column, key, scopeColumn, scope string) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		if s.Dialect() != dialect.SQLite {
			s.Where(entsql.Contains(s.C(column), key))
			return
		}
		t := entsql.Table(s.TableName()).As("matching")
		matching := entsql.Select(t.C("rowid")).From(t).
			Where(entsql.And(entsql.EQ(t.C(scopeColumn), scope), entsql.Contains(t.C(column), key)))
		s.Where(entsql.In(s.C("rowid"), matching))
	}
}

// FirstOfEach, given to a query's Where, keeps the first n rows by orderColumn of each value
// of keyColumn in keys, among the rows where holds (nil: all): a window (ROW_NUMBER
// partitioned by keyColumn) over the named keys' rows only, so one statement reads the first
// page of each. The outer query's own conditions (the tenant's) still apply.
func (db *DB) FirstOfEach(keyColumn, orderColumn string, keys []string, n int, where func(*entsql.Selector)) func(*entsql.Selector) {
	return func(sel *entsql.Selector) {
		list := make([]any, len(keys))
		for i, k := range keys {
			list[i] = k
		}
		t := entsql.Select().From(entsql.Table(sel.TableName()))
		inner := t.Select(t.C("id")).
			AppendSelectExprAs(entsql.RowNumber().PartitionBy(t.C(keyColumn)).OrderBy(t.C(orderColumn)), "rn").
			Where(entsql.In(t.C(keyColumn), list...))
		if where != nil {
			where(inner)
		}
		inner.As("w")
		sel.Where(entsql.In(sel.C("id"), entsql.Select(inner.C("id")).From(inner).
			Where(entsql.LTE(inner.C("rn"), n))))
	}
}

// RowsAfter, given to a query's Where, keeps the rows after (key, seq) in the order of
// (keyColumn, seqColumn), as one row-value comparison: both databases start the range scan of
// an index on the two columns there. The same condition written as key > k OR (key = k AND
// seq > s) is not a range to either planner: PostgreSQL scanned the index from its start and
// SQLite the key's rows from its first, at every batch, so an export read the 1M-entry ledger
// of the benchmark's store about 500 times over (quadratic; 83% of the SQLite export's CPU,
// and PostgreSQL's batches past its statement_timeout).
func (db *DB) RowsAfter(keyColumn, seqColumn, key string, seq int64) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		s.Where(entsql.CompositeGT(s.Columns(keyColumn, seqColumn), key, seq))
	}
}

// AfterKey, given to a query's Where, keeps the rows after (key, id) in the order of column
// then idColumn, descending with desc; with emptyLast the empty key comes after all others
// (the companies by ascending utilisation, where a zero credit limit has the empty key).
func (db *DB) AfterKey(column, key, idColumn, id string, desc, emptyLast bool) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		col, idCol := s.C(column), s.C(idColumn)
		beyond, idBeyond := entsql.GT(col, key), entsql.GT(idCol, id)
		if desc {
			beyond, idBeyond = entsql.LT(col, key), entsql.LT(idCol, id)
		}
		after := entsql.Or(beyond, entsql.And(entsql.EQ(col, key), idBeyond))
		if emptyLast {
			if key == "" {
				after = entsql.And(entsql.EQ(col, ""), idBeyond)
			} else {
				after = entsql.Or(entsql.And(entsql.NEQ(col, ""), after), entsql.EQ(col, ""))
			}
		}
		s.Where(after)
	}
}

// EmptyLast, given to a query's Order before the column's own order, puts the rows whose
// column is empty after all others: it orders first by whether column is empty (false, the
// non-empty keys, before true).
func (db *DB) EmptyLast(column string) func(*entsql.Selector) {
	return func(s *entsql.Selector) { s.OrderExpr(entsql.Expr(s.C(column) + " = ''")) }
}
