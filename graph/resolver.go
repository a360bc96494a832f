// Package graph is the GraphQL transport: gqlgen's executable schema over the credit domain,
// with its HTTP handler, limits, error presenter and batched loads. Like package rest it holds
// no business rule: resolvers parse their arguments, call package credit and return its views.
package graph

import (
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/credit"
)

// Resolver is the root resolver; gqlgen's generated code reaches every field through it.
type Resolver struct {
	svc Services
}

// days is a figure in days with one decimal as a GraphQL Float (days are not money); nil stays
// null.
func days(d *decimal.Decimal) *float64 {
	if d == nil {
		return nil
	}
	f, _ := d.Round(1).Float64()
	return &f
}

// windowOr365 is a windowDays argument, or the default window of payment behaviour.
func windowOr365(windowDays *int) int {
	if windowDays == nil {
		return credit.BehaviourWindowDays
	}
	return *windowDays
}
