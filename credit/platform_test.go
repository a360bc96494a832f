package credit_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/webhook"
)

const platformTestSecret = "shpss_test_secret_0123456789"

// newSealingEnv is a service that seals platform and webhook secrets.
func newSealingEnv(t *testing.T) *credittest.ServiceEnv {
	sealer := credittest.NewSealer(t)
	return credittest.NewService(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
	}})
}

// TestConnectPlatformUniqueness: a store has one shop and a shop names one store, decided by
// the unique indexes: each refusal names the right input, also when two connects of one store
// race (where a check before the INSERT would have blamed "another store").
func TestConnectPlatformUniqueness(t *testing.T) {
	env := newSealingEnv(t)
	mine, theirs := env.MustStore(t, "mine", "EUR"), env.MustStore(t, "theirs", "EUR")
	if _, err := env.Service.Platform.Connect(credittest.Staff(mine), " Mine.MyPlatform.com ", platformTestSecret); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, store, shop, param string
	}{
		{"this store again, its own shop", mine, "mine.myplatform.com", "store"},
		{"this store again, another shop", mine, "other.myplatform.com", "store"},
		{"another store, this store's shop in another case", theirs, "MINE.myplatform.com", "shop_domain"},
	} {
		_, err := env.Service.Platform.Connect(credittest.Staff(tc.store), tc.shop, platformTestSecret)
		var e *credit.Error
		if !asError(err, &e) || e.Code != credit.CodeValidationFailed || e.Param != tc.param {
			t.Errorf("%s: %v, want validation_failed on %s", tc.name, err, tc.param)
		}
	}

	// Two connects of one store at once, with the same shop and with different shops: one
	// connects, the other is told that the store is already connected.
	for i, shops := range [][2]string{{"race.myplatform.com", "race.myplatform.com"}, {"race-a.myplatform.com", "race-b.myplatform.com"}} {
		store := env.MustStore(t, "racing", "EUR")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for j := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[j] = env.Service.Platform.Connect(credittest.Staff(store), shops[j], platformTestSecret)
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			var e *credit.Error
			switch {
			case err == nil:
				ok++
			case !asError(err, &e) || e.Param != "store":
				t.Errorf("race %d: %v, want validation_failed on store", i, err)
			}
		}
		if ok != 1 {
			t.Errorf("race %d: %d connects succeeded, want 1 (%v)", i, ok, errs)
		}
	}
}

// TestRotatingSecretGrace: a rotation's grace is never negative; with a grace the replaced
// secret stays valid until it ends, and a rotation without one drops it at once.
func TestRotatingSecretGrace(t *testing.T) {
	env := newSealingEnv(t)
	store := env.MustStore(t, "mine", "EUR")
	ctx := credittest.Staff(store)
	if _, err := env.Service.Platform.Connect(ctx, "mine.myplatform.com", platformTestSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Service.Platform.RotateSecret(ctx, platformTestSecret+"-2", -time.Second); credit.CodeOf(err) != credit.CodeValidationFailed {
		t.Errorf("negative grace: %v, want validation_failed", err)
	}
	c, err := env.Service.Platform.RotateSecret(ctx, platformTestSecret+"-2", time.Hour)
	if err != nil || c.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotated with a grace: %+v, %v; want the previous secret's expiry", c, err)
	}
	body := []byte(`{}`)
	for _, secret := range []string{platformTestSecret, platformTestSecret + "-2"} {
		if _, err := env.Service.Platform.Authenticate(credittest.Admin(), "mine.myplatform.com", credit.SignPlatformBody(secret, body), body); err != nil {
			t.Errorf("signed with %s during the grace: %v", secret, err)
		}
	}
	if c, err = env.Service.Platform.RotateSecret(ctx, platformTestSecret+"-3", 0); err != nil || c.PreviousSecretExpiresAt != nil {
		t.Fatalf("rotated without a grace: %+v, %v; want no previous secret", c, err)
	}
	if _, err := env.Service.Platform.Authenticate(credittest.Admin(), "mine.myplatform.com", credit.SignPlatformBody(platformTestSecret+"-2", body), body); credit.CodeOf(err) != credit.CodeUnauthenticated {
		t.Errorf("signed with the secret replaced without a grace: %v, want unauthenticated", err)
	}
}

// TestCompanyGIDIsUniquePerStore: a platform company GID names one company of a store
// (contract §13), decided by the unique index, also for two creates racing; another store may
// use the same GID.
func TestCompanyGIDIsUniquePerStore(t *testing.T) {
	env := credittest.NewService(t)
	mine, theirs := env.MustStore(t, "mine", "EUR"), env.MustStore(t, "theirs", "EUR")
	in := func(name string) credit.CompanyInput {
		return credit.CompanyInput{Name: name, PlatformCompanyGID: "gid://platform/Company/7", PaymentTerms: "NET_30", CreditLimit: "100.00"}
	}
	if _, err := env.Service.Companies.Create(credittest.Staff(mine), in("First")); err != nil {
		t.Fatal(err)
	}
	_, err := env.Service.Companies.Create(credittest.Staff(mine), in("Second"))
	var e *credit.Error
	if !asError(err, &e) || e.Code != credit.CodeValidationFailed || e.Param != "platform_company_gid" {
		t.Errorf("a second company with the GID: %v, want validation_failed on platform_company_gid", err)
	}
	if _, err := env.Service.Companies.Create(credittest.Staff(theirs), in("Theirs")); err != nil {
		t.Errorf("another store's company with the GID: %v", err)
	}
	// An approval that would create a company with the taken GID is refused alike.
	staff := credittest.Staff(mine)
	app := env.MustApplication(t, mine, credit.ApplicationInput{BusinessName: "Twin GmbH", VATNumber: "DE123456789", VATStatus: "valid", VATRegistry: "VIES",
		ContactName: "Eva", ContactEmail: "eva@example.com"})
	if _, _, err := env.Service.Applications.SetStatus(staff, credit.StatusChange{ApplicationID: app.ID, Status: credit.AppInReview}); err != nil {
		t.Fatal(err)
	}
	_, _, err = env.Service.Applications.SetStatus(staff, credit.StatusChange{ApplicationID: app.ID, Status: credit.AppApproved,
		CreditLimit: "100.00", PaymentTerms: "NET_30", PlatformCompanyGID: "gid://platform/Company/7"})
	if e = nil; !asError(err, &e) || e.Code != credit.CodeValidationFailed || e.Param != "platform_company_gid" {
		t.Errorf("an approval with the taken GID: %v, want validation_failed on platform_company_gid", err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gidIn := in("Racing")
			gidIn.PlatformCompanyGID = "gid://platform/Company/8"
			_, errs[i] = env.Service.Companies.Create(credittest.Staff(mine), gidIn)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if e = nil; !asError(err, &e) || e.Param != "platform_company_gid" {
			t.Errorf("racing create: %v, want validation_failed on platform_company_gid", err)
		}
	}
	if ok != 1 {
		t.Errorf("%d racing creates with one GID succeeded, want 1", ok)
	}
}

// TestSetPlatformCompanyGIDAppendsItsEvent: a GID set by staff changes the company's
// representation, so the feed says so (contract §11) with the GID before; setting the same GID
// again changes nothing and appends nothing; another company's GID is refused by the index.
func TestSetPlatformCompanyGIDAppendsItsEvent(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "mine", "EUR")
	first := env.MustCompany(t, store, "First", "100.00")
	second := env.MustCompany(t, store, "Second", "100.00")
	ctx := credittest.Staff(store)
	events := func() []credit.Event {
		t.Helper()
		page, err := env.Service.Events.List(ctx, credit.EventListParams{Types: []string{string(credit.EventTypeCompanyPlatformGIDChanged)}})
		if err != nil {
			t.Fatal(err)
		}
		return page.Data
	}
	c, err := env.Service.Companies.SetPlatformCompanyGID(ctx, second.ID, "gid://platform/Company/9001")
	if err != nil {
		t.Fatal(err)
	}
	got := events()
	if len(got) != 1 {
		t.Fatalf("%d events after the GID was set, want 1", len(got))
	}
	var data struct {
		Object   credit.Company `json:"object"`
		Previous struct {
			GID *string `json:"platform_company_gid"`
		} `json:"previous"`
	}
	if err := json.Unmarshal(got[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Object.PlatformCompanyGID == nil || *data.Object.PlatformCompanyGID != "gid://platform/Company/9001" ||
		data.Previous.GID == nil || *data.Previous.GID != *second.PlatformCompanyGID || data.Object.UpdatedAt != c.UpdatedAt {
		t.Errorf("the event's object and previous: %s", got[0].Data)
	}
	if _, err := env.Service.Companies.SetPlatformCompanyGID(ctx, second.ID, "gid://platform/Company/9001"); err != nil || len(events()) != 1 {
		t.Errorf("the same GID again: %v, %d events; want no change and no event", err, len(events()))
	}
	_, err = env.Service.Companies.SetPlatformCompanyGID(ctx, second.ID, *first.PlatformCompanyGID)
	var e *credit.Error
	if !asError(err, &e) || e.Param != "platform_company_gid" || len(events()) != 1 {
		t.Errorf("another company's GID: %v, %d events; want validation_failed on platform_company_gid and no event", err, len(events()))
	}
}
