// Package creditd is the root of the credit service module. Run `go generate ./...` to
// regenerate the ent client and the GraphQL server from ent/schema and schema.graphqls.
package creditd

//go:generate go run github.com/99designs/gqlgen generate
//go:generate go run ./graph/internal/rewrite
