package bench

import (
	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ent"
)

// newService is the harness's only construction of the domain service, so that a change to
// the constructor's name or arguments is a change to this one line.
func newService(client *ent.Client, dialectName string) *credit.Service {
	return credit.NewService(client, dialectName, credit.Options{})
}
