package database

import (
	"fmt"
	"math/big"
	"math/bits"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/mattn/go-sqlite3"
	"github.com/shopspring/decimal"
)

// Sums of amounts weighted by durations, and moments as microseconds, in SQL (credit's store
// payment behaviour: Σ amount × (paid_at − due_at) over every invoice paid in a window, and
// invoiced amounts by day back from now).
//
// PostgreSQL computes them in numeric, exactly. SQLite keeps amounts as TEXT and times as
// text, and has no exact arithmetic for either: its SUM of a product is a float, and its
// integers overflow (an error in SUM) once a few thousand amounts of a million are multiplied
// by durations in microseconds (about 10^17 each over a year). So every SQLite connection
// creditd opens is given two Go functions (registerSQLiteFunctions), which SQLite calls as it
// steps through the rows, in the database's own query: nothing but the one result row comes
// back to the caller. Measured against reading the rows into the process and summing there
// (BENCHMARKS.md, "Issue 38"): less memory (108 MB allocated against 247 MB for 207,306 invoices),
// but go-sqlite3's reflective call costs about 6 µs a row; splitting amounts and durations into
// integer pieces that SQLite's own 64-bit SUM can add, with this aggregate as the fallback when
// SUM reports an overflow, is the way to make it cheaper.

// sqliteMicrosFunc and sqliteWeightedSumFunc are the names of the Go functions on SQLite
// connections.
const (
	sqliteMicrosFunc      = "creditd_micros"
	sqliteWeightedSumFunc = "creditd_sum_amount_micros"
)

// registerSQLiteFunctions gives a new SQLite connection the functions that SumMoneyTimesMicros
// and Micros use.
func registerSQLiteFunctions(conn *sqlite3.SQLiteConn) error {
	if err := conn.RegisterFunc(sqliteMicrosFunc, sqliteMicros, true); err != nil {
		return fmt.Errorf("register %s: %w", sqliteMicrosFunc, err)
	}
	if err := conn.RegisterAggregator(sqliteWeightedSumFunc, newWeightedSum, true); err != nil {
		return fmt.Errorf("register %s: %w", sqliteWeightedSumFunc, err)
	}
	return nil
}

// sqliteTime reads a time as go-sqlite3 stores it: parseSQLiteTime's fast path for the form
// it writes, else its SQLiteTimestampFormats (UTC when the text carries no zone), as go-sqlite3
// reads a time column back.
func sqliteTime(s string) (time.Time, error) {
	if t, ok := parseSQLiteTime(s); ok {
		return t, nil
	}
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range sqlite3.SQLiteTimestampFormats {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}

// sqliteMicros is creditd_micros(t): the microseconds from the Unix epoch to t (truncated
// toward the past), NULL for NULL.
func sqliteMicros(v any) (any, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		parsed, err := sqliteTime(t)
		if err != nil {
			return nil, err
		}
		return floorMicros(parsed), nil
	}
	return nil, fmt.Errorf("%s: not a time: %v", sqliteMicrosFunc, v)
}

// floorMicros is t as microseconds since the Unix epoch, rounded toward the past.
func floorMicros(t time.Time) int64 {
	return t.Unix()*1_000_000 + int64(t.Nanosecond()/1000)
}

// weightedSum is the aggregate creditd_sum_amount_micros(amount, later, earlier): the exact
// sum of amount × (later − earlier) in whole microseconds (the difference truncated toward
// zero, as time.Duration.Microseconds), skipping rows where any is NULL; its result is the
// sum's decimal text. Amounts of up to 18 digits without their point are summed per scale
// in 128 bits (two int64 words with carries), which almost never leaves the fast path: a
// big.Int takes over for a scale only when the 128 bits would overflow.
type weightedSum struct {
	sums map[int32]*wideSum
	err  error
}

// wideSum is a signed sum of products, exact: the low and high words of a 128-bit integer
// while it fits, then big.
type wideSum struct {
	lo  uint64
	hi  int64
	big *big.Int
}

func newWeightedSum() *weightedSum { return &weightedSum{sums: map[int32]*wideSum{}} }

func (w *weightedSum) Step(amount, later, earlier any) {
	if w.err != nil || amount == nil || later == nil || earlier == nil {
		return
	}
	text, ok1 := amount.(string)
	l, ok2 := later.(string)
	e, ok3 := earlier.(string)
	if !ok1 || !ok2 || !ok3 {
		w.err = fmt.Errorf("%s: want text arguments, got %T, %T, %T", sqliteWeightedSumFunc, amount, later, earlier)
		return
	}
	lt, err := sqliteTime(l)
	if err != nil {
		w.err = err
		return
	}
	et, err := sqliteTime(e)
	if err != nil {
		w.err = err
		return
	}
	micros := lt.Sub(et).Microseconds()
	coef, exp, ok := smallDecimal(text)
	var d decimal.Decimal
	if !ok {
		if d, err = decimal.NewFromString(text); err != nil {
			w.err = fmt.Errorf("%s: amount %q: %w", sqliteWeightedSumFunc, text, err)
			return
		}
		exp = d.Exponent()
	}
	s := w.sums[exp]
	if s == nil {
		s = &wideSum{}
		w.sums[exp] = s
	}
	if ok && s.big == nil && s.add(coef, micros) {
		return
	}
	if s.big == nil {
		s.big = s.toBig()
	}
	c := big.NewInt(coef)
	if !ok {
		c = d.Coefficient()
	}
	s.big.Add(s.big, c.Mul(c, big.NewInt(micros)))
}

// smallDecimal reads a plain decimal ([-]digits[.digits], as amounts are stored) of at most
// 18 digits as its coefficient and exponent, without allocating; ok is false for anything
// else, which decimal.NewFromString then reads.
func smallDecimal(s string) (coef int64, exp int32, ok bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	digits, point := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if digits++; digits > 18 {
				return 0, 0, false
			}
			coef = coef*10 + int64(c-'0')
			if point {
				exp--
			}
		case c == '.' && !point && i > 0 && i < len(s)-1:
			point = true
		default:
			return 0, 0, false
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	if neg {
		coef = -coef
	}
	return coef, exp, true
}

// add adds a × b to the 128-bit sum and reports whether it fit.
func (s *wideSum) add(a, b int64) bool {
	// |a × b| < 2^126, so the product always fits 128 bits.
	neg := (a < 0) != (b < 0)
	ua, ub := absU(a), absU(b)
	phi, plo := bits.Mul64(ua, ub)
	if phi >= 1<<62 {
		return false
	}
	var hi int64
	var lo uint64
	if neg {
		lo = ^plo + 1
		hi = ^int64(phi)
		if lo == 0 {
			hi++
		}
	} else {
		lo, hi = plo, int64(phi)
	}
	sumLo := s.lo + lo
	carry := int64(0)
	if sumLo < s.lo {
		carry = 1
	}
	sumHi := s.hi + hi + carry
	// Overflow of the high word: the operands' signs agree and the result's differs.
	if (s.hi >= 0) == (hi >= 0) && (sumHi >= 0) != (s.hi >= 0) {
		return false
	}
	s.lo, s.hi = sumLo, sumHi
	return true
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// toBig is the 128-bit sum as a big.Int.
func (s *wideSum) toBig() *big.Int {
	v := new(big.Int).SetInt64(s.hi)
	v.Lsh(v, 64)
	return v.Add(v, new(big.Int).SetUint64(s.lo))
}

func (w *weightedSum) Done() (string, error) {
	if w.err != nil {
		return "", w.err
	}
	total := decimal.Zero
	for exp, s := range w.sums {
		v := s.big
		if v == nil {
			v = s.toBig()
		}
		total = total.Add(decimal.NewFromBigInt(v, exp))
	}
	return total.String(), nil
}

// SumMoneyTimesMicros is the SQL expression of the exact sum, over the rows of the query, of
// the decimal column col times the microseconds from the time column earlier to the time
// column later (truncated toward zero; negative when later is before earlier), as text that
// ParseMoneySum reads; zero when no row has all three. Columns are qualified by the query's
// selector.
func (db *DB) SumMoneyTimesMicros(col, later, earlier string) entsql.Querier {
	return entsql.ExprFunc(func(b *entsql.Builder) {
		if b.Dialect() == dialect.Postgres {
			// EXTRACT returns numeric (PostgreSQL 14 on), exact to the microsecond that
			// timestamptz keeps; the difference is a whole number of microseconds.
			b.WriteString("CAST(COALESCE(SUM(").Ident(col).WriteString(" * ((EXTRACT(EPOCH FROM ").Ident(later).
				WriteString(") - EXTRACT(EPOCH FROM ").Ident(earlier).WriteString(")) * 1000000)), 0) AS TEXT)")
			return
		}
		b.WriteString("COALESCE(" + sqliteWeightedSumFunc + "(").Ident(col).WriteString(", ").Ident(later).
			WriteString(", ").Ident(earlier).WriteString("), '0')")
	})
}

// Micros is the SQL expression of the time column col (qualified by the query's selector) as
// an integer number of microseconds since the Unix epoch (rounded toward the past). On SQLite
// a time in the form go-sqlite3 writes in UTC (at most nine decimals) is converted by SQLite's own
// functions, and any other by creditd_micros, a Go function, whose call costs several times
// as much.
func (db *DB) Micros(col string) entsql.Querier {
	return entsql.ExprFunc(func(b *entsql.Builder) {
		if b.Dialect() == dialect.Postgres {
			b.WriteString("CAST(EXTRACT(EPOCH FROM ").Ident(col).WriteString(") * 1000000 AS BIGINT)")
			return
		}
		b.WriteString("COALESCE((" + sqliteUTCSeconds(col) + ") * 1000000 + (" + sqliteFractionNanos(col) + ") / 1000, " + sqliteMicrosFunc + "(" + col + "))")
	})
}
