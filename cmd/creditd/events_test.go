package main

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/database"
)

// TestCLIWritesAppendEvents: the admin side's writes, run as command lines, append their
// events like the API's, and the timeline gets an adjustment recorded on the admin side too.
func TestCLIWritesAppendEvents(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	key := d.json(t, "key", "create", "--store", d.store, "--label", "erp", "--scopes", "read_credit")["id"].(string)
	co := d.json(t, "company", "create", "--store", d.store, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/1",
		"--payment-terms", "NET_30", "--credit-limit", "100.00")["id"].(string)
	d.run(t, "ledger", "record", "--company", co, "--kind", "adjustment", "--amount", "5.00", "--note", "goodwill").mustSucceed(t)
	d.run(t, "hold", "place", co, "--staff", "Olga", "--note", "check").mustSucceed(t)
	d.run(t, "hold", "lift", co, "--staff", "Olga").mustSucceed(t)
	app := d.json(t, "application", "create", "--store", d.store, "--business-name", "Gasthof", "--vat-number", "DE1",
		"--contact-name", "Ann Example", "--contact-email", "ann@example.com")["id"].(string)
	d.run(t, "application", "set-status", app, "--status", "in_review").mustSucceed(t)
	d.run(t, "key", "rotate", key).mustSucceed(t)
	d.run(t, "key", "revoke", key).mustSucceed(t)

	svc := d.service(t)
	page, err := svc.Events.List(credittest.Staff(d.store), credit.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range page.Data {
		got = append(got, string(e.Type))
	}
	want := []string{
		string(credit.EventTypeKeyCreated), string(credit.EventTypeCompanyCreated), string(credit.EventTypeLedgerEntryCreated),
		string(credit.EventTypeCompanyHoldPlaced), string(credit.EventTypeCompanyHoldLifted),
		string(credit.EventTypeApplicationCreated), string(credit.EventTypeApplicationStatusChanged),
		string(credit.EventTypeKeyRotated), string(credit.EventTypeKeyRevoked),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("events of the command lines\n got %v\nwant %v", got, want)
	}
	timeline, err := svc.Timeline.List(credittest.Staff(d.store), co, credit.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range timeline.Data {
		types = append(types, string(e.Type))
	}
	if want := []string{string(credit.TimelineHoldLifted), string(credit.TimelineHoldPlaced), string(credit.TimelineAdjustmentCreated)}; !slices.Equal(types, want) {
		t.Errorf("timeline %v, want %v (newest first)", types, want)
	}
	if a := timeline.Data[2]; a.Actor.Type != "staff" || a.Data["note"] != "goodwill" {
		t.Errorf("the admin side's adjustment on the timeline: %+v", a)
	}
}

// TestSweepPurgesOldEvents: serve's periodic sweep deletes events past the retention and keeps
// the others.
func TestSweepPurgesOldEvents(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	d.json(t, "company", "create", "--store", d.store, "--name", "Old", "--platform-company-gid", "gid://platform/Company/1",
		"--payment-terms", "NET_30", "--credit-limit", "1.00")
	db, err := database.Open(context.Background(), d.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(svc *credit.Service) int {
		t.Helper()
		page, err := svc.Events.List(credittest.Staff(d.store), credit.EventListParams{})
		if err != nil {
			t.Fatal(err)
		}
		return len(page.Data)
	}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	at := func(now time.Time) *credit.Service {
		return credit.New(db, credit.Options{Now: func() time.Time { return now }, EventRetention: 40 * 24 * time.Hour})
	}
	// 39 days after the CLI's clock the event stays; 41 days after, the sweep purges it.
	sweepOnce(context.Background(), &cmdEnv{svc: at(cliStart.Add(39 * 24 * time.Hour)), db: db}, log)
	if n := count(at(cliStart)); n != 1 {
		t.Fatalf("%d events after a sweep within the retention, want 1", n)
	}
	sweepOnce(context.Background(), &cmdEnv{svc: at(cliStart.Add(41 * 24 * time.Hour)), db: db}, log)
	if n := count(at(cliStart)); n != 0 {
		t.Fatalf("%d events after a sweep past the retention, want 0", n)
	}
}
