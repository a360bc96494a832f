// Package model holds the GraphQL types that are not domain views: connections, edges, page
// info and mutation inputs, generated into models_gen.go from schema.graphqls.
package model

// Node is the Go side of the GraphQL Node interface. It asks for no method, so the domain's
// views (credit.Company, credit.Application, ...) implement it as they are; the generated code
// tells them apart by their Go type.
type Node interface{}

// EventObject is the Go side of the GraphQL EventObject union: like Node it asks for no method,
// and the generated code tells the domain's views apart by their Go type.
type EventObject interface{}
