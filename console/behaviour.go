package console

import (
	"github.com/shopspring/decimal"
)

// Payment behaviour (contract §17) as the console shows it: days with one decimal, the
// on-time share as a percentage, "—" where the domain has no figure.

// formatDayFigure writes a number of days (a decimal.Decimal or *decimal.Decimal) with one
// decimal, or "—" when there is none.
func formatDayFigure(v any) string {
	var d decimal.Decimal
	switch x := v.(type) {
	case decimal.Decimal:
		d = x
	case *decimal.Decimal:
		if x == nil {
			return "—"
		}
		d = *x
	default:
		return "—"
	}
	unit := " days"
	if d.Round(1).Equal(decimal.NewFromInt(1)) || d.Round(1).Equal(decimal.NewFromInt(-1)) {
		unit = " day"
	}
	return d.StringFixed(1) + unit
}

// formatShare writes a share "0.000"–"1.000" as a percentage with one decimal, or "—".
func formatShare(s *string) string {
	if s == nil {
		return "—"
	}
	d, err := decimal.NewFromString(*s)
	if err != nil {
		return *s
	}
	return d.Shift(2).StringFixed(1) + " %"
}
