package database

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// TestWeightedSumExact checks creditd_sum_amount_micros's accumulator against big.Int
// arithmetic, with amounts and durations large enough that the 128-bit sums overflow into
// big.Int, of both signs, at several scales.
func TestWeightedSumExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, maxAmount := range []int64{100_00, math.MaxInt64 / 4} {
		w := newWeightedSum()
		want := decimal.Zero
		for i := range 5000 {
			coef := rng.Int64N(maxAmount)
			if i%3 == 0 {
				coef = -coef
			}
			amount := decimal.New(coef, -int32(i%5))
			later := t0.Add(time.Duration(rng.Int64N(int64(5 * 365 * 24 * time.Hour))))
			earlier := t0.Add(time.Duration(rng.Int64N(int64(5 * 365 * 24 * time.Hour))))
			w.Step(amount.String(), later.Format("2006-01-02 15:04:05.999999999-07:00"), earlier.Format("2006-01-02 15:04:05.999999999-07:00"))
			want = want.Add(amount.Mul(decimal.NewFromInt(later.Sub(earlier).Microseconds())))
		}
		w.Step(nil, "x", "y") // NULL rows are skipped
		got, err := w.Done()
		if err != nil || !decimal.RequireFromString(got).Equal(want) {
			t.Errorf("max %d: got %s, want %s (%v)", maxAmount, got, want, err)
		}
	}
	// (2^63 − 1)² is just under 2^126: the 128-bit sum holds it once and once again, the
	// third would pass 2^127 − 1 and is refused (then summed in big.Int by Step).
	square := new(big.Int).Mul(big.NewInt(math.MaxInt64), big.NewInt(math.MaxInt64))
	s := &wideSum{}
	for i := range 3 {
		ok := s.add(math.MaxInt64, -math.MaxInt64)
		want := new(big.Int).Mul(square, big.NewInt(-int64(min(i+1, 2))))
		if ok != (i < 2) || s.toBig().Cmp(want) != 0 {
			t.Errorf("add %d: ok %v, sum %s, want %s", i+1, ok, s.toBig(), want)
		}
	}
}
