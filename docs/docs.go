// Package docs is creditd's documentation: the specification, the contract that closes its
// gaps, the integrator guides, and the OpenAPI document of /v1, which it embeds so that the
// binary serves the very document these pages link to (package openapi).
package docs

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the /v1 REST API, openapi.yaml, as written.
//
//go:embed openapi.yaml
var OpenAPI []byte
