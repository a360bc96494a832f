package credit

import (
	"strings"
	"unicode"

	"github.com/shopspring/decimal"
	"golang.org/x/text/unicode/norm"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
)

// The stored keys behind the company orderings and the search of contract §6 (2026-11-27).
//
// Money is exact decimal, and SQLite keeps it as TEXT, which sorts "9" after "10". Neither
// database can order by available credit or utilisation from the stored columns alone
// (SQLite has no decimal arithmetic; utilisation is a quotient, and even PostgreSQL's numeric
// division rounds). So each company row carries sort keys, written by the domain in the same
// statement as the figures they order (createCompany, saveCompany), and by migration 0010 for
// older rows:
//
//   - a key is a fixed-width string of digits whose byte order is the exact order of the
//     value: "0" then the nines' complement of |v| for a negative v, "1" then |v| for the
//     others, integer digits zero-padded to keyIntDigits;
//   - money keys have three decimals (no currency has more), so they are the amounts exactly;
//   - the utilisation key is outstanding ÷ limit truncated to 40 decimals. Amounts are at
//     most 10^21 with three decimals, so two different quotients differ by more than 10^-36
//     and their truncations keep their order: the key orders exactly, and equal quotients
//     get equal keys (ties then go by ID). A zero limit has the empty key, which orders last
//     in both directions (see companyOrderBy);
//   - the name key is the name without case and accents (NameKey), so that "cafe" finds
//     "Café Morgenrot"; the name order is this key's, so "apfel" and "Äpfel" sort together.
//
// Digits only, so the byte order is also every PostgreSQL collation's order. The available
// credit depends on the store's buffer, which is fixed when the store is created; a change
// of it would have to rewrite its companies' available keys.

const (
	// keyIntDigits bounds the integer part of keyed values: 10^24, a thousand times any sum
	// of amounts of at most 15 integer digits that a ledger can reach. Beyond it a key is
	// clamped (its order among such values is lost, never the order of the others).
	keyIntDigits = 24
	// moneyKeyDecimals are the decimals of money keys: the most minor digits of any currency.
	moneyKeyDecimals = 3
	// utilizationKeyDecimals are the decimals of the utilisation key (see above).
	utilizationKeyDecimals = 40
)

// decimalKey is d's sort key with frac decimals (d is truncated toward zero to them).
func decimalKey(d decimal.Decimal, frac int32) string {
	v := d.Shift(frac).Truncate(0)
	digits := v.Abs().String()
	width := keyIntDigits + int(frac)
	if len(digits) > width {
		digits = strings.Repeat("9", width)
	}
	var b strings.Builder
	b.Grow(width + 1)
	if v.IsNegative() {
		b.WriteByte('0')
		for range width - len(digits) {
			b.WriteByte('9')
		}
		for i := 0; i < len(digits); i++ {
			b.WriteByte('9' - digits[i] + '0')
		}
		return b.String()
	}
	b.WriteByte('1')
	for range width - len(digits) {
		b.WriteByte('0')
	}
	b.WriteString(digits)
	return b.String()
}

// moneyKey is the sort key of an amount.
func moneyKey(d decimal.Decimal) string { return decimalKey(d, moneyKeyDecimals) }

// utilizationKey is the sort key of outstanding ÷ limit, empty for a zero limit.
func utilizationKey(outstanding, limit decimal.Decimal) string {
	if limit.IsZero() {
		return ""
	}
	q, _ := outstanding.QuoRem(limit, utilizationKeyDecimals)
	return decimalKey(q, utilizationKeyDecimals)
}

// foldedLetters are letters that Unicode does not decompose into a base letter and a mark but
// that a person types as plain Latin letters.
var foldedLetters = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d", 'ð': "d", 'Ð': "d", 'þ': "th", 'Þ': "th", 'ı': "i",
}

// NameKey is a name (or a search for one) without case and accents: decomposed, its combining
// marks dropped, lower-cased, with the few letters Unicode does not decompose spelled out
// ("Straße" is "strasse", "Café" is "cafe"). A search matches the names whose key contains
// the search's key.
func NameKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case foldedLetters[r] != "":
			b.WriteString(foldedLetters[r])
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// CompanyOrderKeys are a company's stored sort keys (see above).
type CompanyOrderKeys struct {
	Name, Outstanding, CreditLimit, Available, Utilization string
}

// OrderKeysOf returns the sort keys of a company with these figures in a store with this
// buffer and currency. Migration 0010 fills older rows with it, and the benchmark's seeder
// writes its rows with it.
func OrderKeysOf(name string, limit, outstanding decimal.Decimal, bufferPercent int, currency string) CompanyOrderKeys {
	return CompanyOrderKeys{
		Name:        NameKey(name),
		Outstanding: moneyKey(outstanding),
		CreditLimit: moneyKey(limit),
		Available:   availableKey(limit, outstanding, bufferPercent, currency),
		Utilization: utilizationKey(outstanding, limit),
	}
}

// setFigureKeys sets, on an update of c that moves its limit or outstanding to these values,
// the keys that follow them.
func setFigureKeys(u *ent.CompanyUpdateOne, c *ent.Company, limit, outstanding decimal.Decimal) {
	// Only the keys whose figures moved (an adjustment leaves the limit's): every key is
	// written with its figures, so the key of a figure that did not move is current, and
	// writing it again would still cost its index an update.
	limitMoved, outstandingMoved := !limit.Equal(c.CreditLimit), !outstanding.Equal(c.Outstanding)
	if limitMoved {
		u.SetCreditLimitKey(moneyKey(limit))
	}
	if outstandingMoved {
		u.SetOutstandingKey(moneyKey(outstanding))
	}
	if limitMoved || outstandingMoved {
		st := c.Edges.Store
		u.SetAvailableKey(availableKey(limit, outstanding, st.BufferPercent, st.Currency)).
			SetUtilizationKey(utilizationKey(outstanding, limit))
	}
}

// availableKey is the sort key of the available credit of a company with these figures in a
// store with this buffer and currency.
func availableKey(limit, outstanding decimal.Decimal, bufferPercent int, currency string) string {
	return moneyKey(availableCreditDecimal(limit, outstanding, bufferPercent, currency))
}

// lockedCompanyColumns are the columns lockCompany reads: all but the sort keys, which a
// write sets from the figures (setFigureKeys) and never reads. Reading them cost an
// adjustment about 3% of its instructions (BenchmarkCreateAdjustment, issue 27).
var lockedCompanyColumns = func() []string {
	keys := map[string]bool{company.FieldNameKey: true, company.FieldOutstandingKey: true,
		company.FieldCreditLimitKey: true, company.FieldAvailableKey: true, company.FieldUtilizationKey: true}
	var columns []string
	for _, c := range company.Columns {
		if !keys[c] {
			columns = append(columns, c)
		}
	}
	return columns
}()
