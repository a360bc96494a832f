package credit_test

import (
	"context"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/tenant"
)

// TestAdminSideIsStaffOnly: the admin side's operations (keys, companies, the platform's ledger
// entries, applications and their approval, erasure) refuse an API key, even one with every
// scope ("No operation approves or rejects an application"), and refuse the system viewer,
// which belongs to no store; a store's staff member acts only in their own store, where another
// store's records do not exist.
func TestAdminSideIsStaffOnly(t *testing.T) {
	env := credittest.NewService(t)
	svc := env.Service
	mine, theirs := env.MustStore(t, "mine", "EUR"), env.MustStore(t, "theirs", "EUR")
	key := env.MustIssuedKey(t, mine, "erp", credit.AllScopes...)
	theirKey := env.MustIssuedKey(t, theirs, "erp", credit.AllScopes...)
	co := env.MustCompany(t, mine, "Buyer", "100")
	app := env.MustApplication(t, mine, credit.ApplicationInput{BusinessName: "Applicant"})
	theirApp := env.MustApplication(t, theirs, credit.ApplicationInput{BusinessName: "Theirs"})

	ops := map[string]func(ctx context.Context) error{
		"create key": func(ctx context.Context) error {
			_, err := svc.Keys.Create(ctx, "k", []string{credit.ScopeReadCredit})
			return err
		},
		"rotate key": func(ctx context.Context) error { _, err := svc.Keys.Rotate(ctx, key.ID, time.Hour); return err },
		"list keys":  func(ctx context.Context) error { _, err := svc.Keys.List(ctx, time.Hour); return err },
		"create company": func(ctx context.Context) error {
			_, err := svc.Companies.Create(ctx, credit.CompanyInput{Name: "N", PaymentTerms: "NET_30", CreditLimit: "1"})
			return err
		},
		"record ledger entry": func(ctx context.Context) error {
			_, _, err := svc.Ledger.Record(ctx, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindAdjustment, Amount: "1.00"})
			return err
		},
		"create application": func(ctx context.Context) error {
			_, err := svc.Applications.Create(ctx, credit.ApplicationInput{BusinessName: "B", VATNumber: "X", ContactName: "N", ContactEmail: "n@example.com"})
			return err
		},
		"approve application": func(ctx context.Context) error {
			_, _, err := svc.Applications.SetStatus(ctx, credit.StatusChange{ApplicationID: app.ID, Status: credit.AppInReview})
			return err
		},
		"erase person": func(ctx context.Context) error {
			_, err := svc.Applications.ErasePerson(ctx, "ada@example.com")
			return err
		},
		"revoke key": func(ctx context.Context) error { return svc.Keys.Revoke(ctx, key.ID) },
	}
	for name, op := range ops {
		for viewer, ctx := range map[string]context.Context{
			"an API key with every scope": tenant.APIKey(context.Background(), mine, key.ID, "erp", credit.AllScopes),
			"the system":                  credittest.Admin(),
		} {
			if err := op(ctx); credit.CodeOf(err) != credit.CodeInsufficientScope {
				t.Errorf("%s by %s: %v, want insufficient_scope", name, viewer, err)
			}
		}
	}
	// Another store's staff: the records of this store are not found.
	other := credittest.Staff(theirs)
	if _, _, err := svc.Applications.SetStatus(other, credit.StatusChange{ApplicationID: app.ID, Status: credit.AppInReview}); !credit.IsNotFound(err) {
		t.Errorf("approving another store's application: %v, want not_found", err)
	}
	if err := svc.Keys.Revoke(other, key.ID); !credit.IsNotFound(err) {
		t.Errorf("revoking another store's key: %v, want not_found", err)
	}
	if _, _, err := svc.Ledger.Record(other, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindAdjustment, Amount: "1.00"}); !credit.IsNotFound(err) {
		t.Errorf("recording in another store's ledger: %v, want not_found", err)
	}
	// Their own staff can.
	if _, _, err := svc.Applications.SetStatus(credittest.Staff(theirs), credit.StatusChange{ApplicationID: theirApp.ID, Status: credit.AppInReview}); err != nil {
		t.Errorf("their staff moving their application: %v", err)
	}
	if err := svc.Keys.Revoke(credittest.Staff(theirs), theirKey.ID); err != nil {
		t.Errorf("their staff revoking their key: %v", err)
	}
	// Nothing of this store changed through the refused calls.
	keys, err := svc.Keys.List(credittest.Staff(mine), time.Hour)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt != nil {
		t.Fatalf("this store's keys after the refusals: %+v %v", keys, err)
	}
	got, err := svc.Applications.Get(tenant.APIKey(context.Background(), mine, key.ID, "erp", credit.AllScopes), app.ID)
	if err != nil || got.Status != credit.AppSubmitted {
		t.Fatalf("the application after the refusals: %+v %v", got, err)
	}
}
