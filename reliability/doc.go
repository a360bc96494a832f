// Package reliability holds creditd's reliability and security suite: fuzz targets for every
// input the API parses, the tenant-isolation matrix over every REST route and GraphQL root
// field, and the ledger invariants under concurrent writes. The crash-safety test lives beside
// the command it kills (cmd/creditd). RELIABILITY.md at the repository root says what each test
// proves and how to run it. The package has no code of its own: everything is in its tests.
package reliability
