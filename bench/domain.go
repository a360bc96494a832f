package bench

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/database"
	"github.com/creditd/creditd/webhook"
)

// newService is the harness's only construction of the domain service, so that a change to
// the constructor is a change to this one line. dsn names the database, whose master key
// (platformMasterKey) seals the platform secret.
func newService(db credit.Storage, dsn string) *credit.Service {
	return credit.New(db, credit.Options{WebhookSealer: sync.OnceValues(func() (*webhook.Sealer, error) {
		encoded, err := platformMasterKey(dsn)
		if err != nil {
			return nil, err
		}
		key, err := webhook.ParseMasterKey(1, encoded)
		if err != nil {
			return nil, err
		}
		return webhook.NewSealer(key)
	})})
}

// platformMasterKey is the master key creditd serve will seal and open secrets with on dsn:
// CREDITD_WEBHOOK_KEY, else, for a SQLite file, the key file serve keeps beside it
// (<db>.webhook-key), made here when it does not exist yet. On PostgreSQL without the variable
// a new key is made and put into this process's environment, which the servers it starts
// inherit; the dataset keeps it for the next run (Dataset.PlatformKey).
func platformMasterKey(dsn string) (string, error) {
	if k := os.Getenv("CREDITD_WEBHOOK_KEY"); k != "" {
		return k, nil
	}
	if database.IsPostgres(dsn) {
		k := webhook.GenerateMasterKey()
		return k, os.Setenv("CREDITD_WEBHOOK_KEY", k)
	}
	path := database.SQLitePath(dsn) + ".webhook-key"
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		k := webhook.GenerateMasterKey()
		return k, os.WriteFile(path, []byte(k+"\n"), 0o600)
	}
	return string(b), err
}
