// Package ent holds the generated data layer; only ent/schema and this file are hand-written.
package ent

//go:generate go run -mod=mod entc.go
