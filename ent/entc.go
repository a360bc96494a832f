//go:build ignore

// Command entc generates the ent client from ent/schema.
package main

import (
	"log"

	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	err := entc.Generate("./schema", &gen.Config{
		Features: []gen.Feature{
			gen.FeatureIntercept,
			gen.FeatureLock,
			gen.FeatureUpsert,
			gen.FeatureExecQuery,
			gen.FeatureVersionedMigration,
		},
	})
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}
