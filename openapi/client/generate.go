// Package client is a Go client for the /v1 REST API, generated from the OpenAPI document by
// oapi-codegen (pinned in go.mod as a tool). It exists to prove that the document generates a
// working client; client.gen.go is generated: edit ../../docs/openapi.yaml and run go generate.
package client

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../../docs/openapi.yaml
