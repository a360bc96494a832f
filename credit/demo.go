package credit

import (
	"context"
	"fmt"
	"time"

	"github.com/creditd/creditd/tenant"
)

// Demo is what SeedDemo created: the store and one key of each kind.
type Demo struct {
	StoreID string
	Keys    []DemoKey
}

// DemoKey is a demo key with its secret.
type DemoKey struct {
	Label  string
	Scopes []string
	IssuedKey
}

// SeedDemo fills an empty database with a demo store: companies with ledgers (one overdue
// order, one manual hold), applications in every status, and three keys: read-only, read with
// applications, and full access. It returns seeded=false and does nothing when the database
// already has a store.
func (s *Service) SeedDemo(ctx context.Context) (demo Demo, seeded bool, err error) {
	ctx = tenant.System(ctx)
	n, err := s.client.Store.Query().Count(ctx)
	if err != nil || n > 0 {
		return Demo{}, false, err
	}
	st, err := s.CreateStore(ctx, "Demo Wholesale GmbH", "EUR", DefaultBufferPercent)
	if err != nil {
		return Demo{}, false, err
	}
	demo.StoreID = st.ID
	now := s.Now()
	day := 24 * time.Hour
	ts := func(d time.Duration) *Timestamp { t := At(now.Add(-d)); return &t }

	type entry struct {
		kind, amount, order string
		ago                 time.Duration
	}
	companies := []struct {
		name, gid, terms, limit string
		entries                 []entry
	}{
		{"Alpenblick Hotels AG", "gid://platform/Company/1001", "NET_30", "25000.00", []entry{
			{KindOpeningBalance, "1200.00", "", 120 * day},
			{KindOrderPlaced, "4800.00", "gid://platform/Order/5001", 20 * day},
			{KindPayment, "-1200.00", "", 15 * day},
			{KindOrderPlaced, "2350.50", "gid://platform/Order/5002", 5 * day},
		}},
		{"Brauhaus Kessler KG", "gid://platform/Company/1002", "NET_14", "8000.00", []entry{
			{KindOrderPlaced, "3100.00", "gid://platform/Order/5003", 20 * day},
			{KindRefund, "-150.00", "gid://platform/Order/5003", 18 * day},
		}},
		{"Café Morgenrot", "gid://platform/Company/1003", "NET_30", "5000.00", []entry{
			{KindOrderPlaced, "980.00", "gid://platform/Order/5004", 3 * day},
			{KindPayment, "-980.00", "gid://platform/Order/5004", 1 * day},
		}},
		{"Nordlicht Feinkost GmbH", "gid://platform/Company/1004", "NET_60", "40000.00", []entry{
			{KindOrderPlaced, "12500.00", "gid://platform/Order/5005", 40 * day},
			{KindOrderPlaced, "7300.00", "gid://platform/Order/5006", 25 * day},
			{KindCancellation, "-7300.00", "gid://platform/Order/5006", 24 * day},
		}},
		{"Seeblick Catering", "gid://platform/Company/1005", "NET_30", "12000.00", nil},
	}
	var last Company
	for _, c := range companies {
		co, err := s.CreateCompany(ctx, CompanyInput{StoreID: st.ID, Name: c.name, PlatformCompanyGID: c.gid, PaymentTerms: c.terms, CreditLimit: c.limit})
		if err != nil {
			return Demo{}, false, fmt.Errorf("demo company: %w", err)
		}
		for _, e := range c.entries {
			if _, _, err := s.RecordLedgerEntry(ctx, LedgerEntryInput{CompanyID: co.ID, Kind: e.kind, Amount: e.amount, OrderGID: e.order, OccurredAt: ts(e.ago)}); err != nil {
				return Demo{}, false, fmt.Errorf("demo ledger: %w", err)
			}
		}
		last = co
	}
	// Brauhaus Kessler's order is past its NET_14 due date, so it carries an overdue hold;
	// Seeblick Catering gets a manual hold from staff.
	note := "Awaiting signed credit agreement"
	if _, err := s.PlaceHold(tenant.Staff(ctx, st.ID, "Demo Admin"), HoldInput{CompanyID: last.ID, Note: &note}); err != nil {
		return Demo{}, false, fmt.Errorf("demo hold: %w", err)
	}

	apps := []struct {
		business, vat, name, email, status string
		ago                                time.Duration
	}{
		{"Gasthof Zur Linde", "DE123456789", "Maria Huber", "maria.huber@example.com", AppSubmitted, 2 * day},
		{"Weinkontor Rhein", "DE987654321", "Jonas Weber", "jonas.weber@example.com", AppInReview, 4 * day},
		{"Bäckerei Sonnenschein", "ATU12345678", "Lena Gruber", "lena.gruber@example.com", AppNeedsInfo, 6 * day},
		{"Hafenküche Kiel", "DE111222333", "Tom Jensen", "tom.jensen@example.com", AppRejected, 9 * day},
	}
	for _, a := range apps {
		created, err := s.CreateApplication(ctx, ApplicationInput{StoreID: st.ID, BusinessName: a.business, VATNumber: a.vat, VATStatus: "valid", VATRegistry: "VIES", ContactName: a.name, ContactEmail: a.email, SubmittedAt: ts(a.ago)})
		if err != nil {
			return Demo{}, false, fmt.Errorf("demo application: %w", err)
		}
		path := map[string][]string{
			AppInReview:  {AppInReview},
			AppNeedsInfo: {AppInReview, AppNeedsInfo},
			AppRejected:  {AppInReview, AppRejected},
		}[a.status]
		for _, status := range path {
			if _, _, err := s.SetApplicationStatus(ctx, StatusChange{ApplicationID: created.ID, Status: status}); err != nil {
				return Demo{}, false, fmt.Errorf("demo application status: %w", err)
			}
		}
	}

	for _, k := range []struct {
		label  string
		scopes []string
	}{
		{"demo read-only", []string{ScopeReadCredit}},
		{"demo dashboard", []string{ScopeReadCredit, ScopeReadApplications}},
		{"demo ERP (full access)", []string{ScopeReadCredit, ScopeReadApplications, ScopeWriteCredit}},
	} {
		issued, err := s.CreateKey(ctx, st.ID, k.label, k.scopes)
		if err != nil {
			return Demo{}, false, fmt.Errorf("demo key: %w", err)
		}
		demo.Keys = append(demo.Keys, DemoKey{Label: k.label, Scopes: k.scopes, IssuedKey: issued})
	}
	return demo, true, nil
}
