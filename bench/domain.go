package bench

import (
	"github.com/creditd/creditd/credit"
)

// newService is the harness's only construction of the domain service, so that a change to
// the constructor is a change to this one line.
func newService(db credit.Storage) *credit.Service {
	return credit.New(db, credit.Options{})
}
