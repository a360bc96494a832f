package credit_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/webhook"
)

// refusal is what a transport shows of a domain error: its code, the input it names and its
// sentence.
type refusal struct {
	Code    credit.Code
	Param   string
	Message string
}

func refusalOf(t *testing.T, err error) refusal {
	t.Helper()
	var e *credit.Error
	if !errors.As(err, &e) {
		t.Fatalf("%v is not a *credit.Error", err)
	}
	return refusal{e.Code, e.Param, e.Message}
}

func refusalsOf(t *testing.T, errs []error) []refusal {
	t.Helper()
	var out []refusal
	for _, err := range errs {
		out = append(out, refusalOf(t, err))
	}
	return out
}

// checkRefusals compares a checker's refusals with want, in order, and the operation's error
// with the first of them: the operation refuses what the checker refuses, first refusal
// first, and accepts what it accepts.
func checkRefusals(t *testing.T, name string, errs []error, opErr error, want []refusal) {
	t.Helper()
	got := refusalsOf(t, errs)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: the checker's refusals\n  %+v\nwant\n  %+v", name, got, want)
	}
	if len(want) == 0 {
		if opErr != nil {
			t.Errorf("%s: the checker accepts it, the operation refuses it: %v", name, opErr)
		}
		return
	}
	if opErr == nil {
		t.Errorf("%s: the operation accepted it; the checker refuses it with %+v", name, got)
		return
	}
	if first := refusalOf(t, opErr); len(got) > 0 && first != got[0] {
		t.Errorf("%s: the operation's error %+v, the checker's first %+v", name, first, got[0])
	}
}

func strp(s string) *string { return &s }

const (
	msgDecimal     = `amount must be a decimal string such as "1500.00"`
	msgNotZero     = "an adjustment must not be zero"
	msgRequired    = "amount is required and must not be empty"
	msgSecretRule  = "the platform secret must be 16 to 256 characters without surrounding spaces"
	msgGraceNeg    = "grace must not be negative"
	msgMaxText     = "%s must be at most 500 characters"
	msgControlChar = "%s must not contain control characters"
)

var tooLong = strings.Repeat("n", 501)

func textRefusal(param, format string) refusal {
	return refusal{credit.CodeValidationFailed, param, strings.ReplaceAll(format, "%s", param)}
}

// TestCreditLimitErrors: every field of a limit change refused at once, amount then reason;
// SetCreditLimit refuses with the first and changes nothing, and accepts what the checker does.
func TestCreditLimitErrors(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "Limits", "EUR")
	co := env.MustCompany(t, store, "Alpenblick Hotels AG", "25000.00")
	staff := credittest.Staff(store)
	for _, tc := range []struct {
		name string
		in   credit.CreditLimitInput
		want []refusal
	}{
		{"not an amount, blank reason", credit.CreditLimitInput{Amount: credit.Amount("zehntausend"), Reason: strp(" ")},
			[]refusal{{credit.CodeInvalidAmount, "amount", msgDecimal}, textRefusal("reason", "%s must not be empty")}},
		{"below zero, reason too long", credit.CreditLimitInput{Amount: credit.Amount("-1.00"), Reason: strp(tooLong)},
			[]refusal{{credit.CodeLimitBelowZero, "amount", "credit limit must be zero or greater"}, textRefusal("reason", msgMaxText)}},
		{"empty, control character", credit.CreditLimitInput{Amount: credit.Amount(" "), Reason: strp("a\x00b")},
			[]refusal{{credit.CodeValidationFailed, "amount", msgRequired}, textRefusal("reason", msgControlChar)}},
		{"left out, other currency", credit.CreditLimitInput{Currency: strp("USD"), Reason: strp("fine")},
			[]refusal{{credit.CodeValidationFailed, "amount", "amount is required"}}},
		{"other currency, bad reason", credit.CreditLimitInput{Amount: credit.Amount("10.00"), Currency: strp("USD"), Reason: strp("")},
			[]refusal{{credit.CodeCurrencyMismatch, "currency", `this company's amounts are in EUR, not "USD"`}, textRefusal("reason", "%s must not be empty")}},
		{"too many decimals only", credit.CreditLimitInput{Amount: credit.Amount("10.001")},
			[]refusal{{credit.CodeInvalidAmount, "amount", "amount has more than 2 decimal places, the minor unit of EUR"}}},
		{"good", credit.CreditLimitInput{Amount: credit.Amount("25000.00"), Reason: strp("annual review")}, nil},
	} {
		tc.in.CompanyID = co.ID
		errs := credit.CreditLimitErrors(tc.in, "EUR")
		_, opErr := env.Service.Companies.SetCreditLimit(staff, tc.in)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
	if got, _ := env.Service.Companies.Get(staff, co.ID); got.CreditLimit.Amount != "25000.00" {
		t.Errorf("the limit after the refusals: %s", got.CreditLimit.Amount)
	}
}

// TestAdjustmentErrors: an adjustment's amount and note refused at once; CreateAdjustment
// refuses with the first and records nothing.
func TestAdjustmentErrors(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "Adjustments", "EUR")
	co := env.MustCompany(t, store, "Café Morgenrot", "3000.00")
	staff := credittest.Staff(store)
	for _, tc := range []struct {
		name string
		in   credit.AdjustmentInput
		want []refusal
	}{
		{"zero, no note", credit.AdjustmentInput{Amount: credit.Amount("0.00")},
			[]refusal{{credit.CodeInvalidAmount, "amount", msgNotZero}, {credit.CodeValidationFailed, "note", "note is required"}}},
		{"not an amount, blank note", credit.AdjustmentInput{Amount: credit.Amount("1e3"), Note: strp("  ")},
			[]refusal{{credit.CodeInvalidAmount, "amount", msgDecimal}, textRefusal("note", "%s must not be empty")}},
		{"empty, note too long", credit.AdjustmentInput{Amount: credit.Amount(""), Note: strp(tooLong)},
			[]refusal{{credit.CodeValidationFailed, "amount", msgRequired}, textRefusal("note", msgMaxText)}},
		{"the transport's refusal first", credit.AdjustmentInput{Amount: credit.AmountInput{Err: credit.ParamErrorf(credit.CodeInvalidAmount, "amount", "amounts are strings")}},
			[]refusal{{credit.CodeInvalidAmount, "amount", "amounts are strings"}, {credit.CodeValidationFailed, "note", "note is required"}}},
		{"only the note", credit.AdjustmentInput{Amount: credit.Amount("-25.00"), Note: strp("a\x07")},
			[]refusal{textRefusal("note", msgControlChar)}},
		{"good", credit.AdjustmentInput{Amount: credit.Amount("-25.00"), Note: strp("goodwill")}, nil},
	} {
		tc.in.CompanyID = co.ID
		errs := credit.AdjustmentErrors(tc.in, "EUR")
		_, opErr := env.Service.Ledger.CreateAdjustment(staff, tc.in)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
	ledger, err := env.Service.Ledger.List(staff, co.ID, credit.LedgerListParams{})
	if err != nil || len(ledger.Data) != 1 {
		t.Errorf("the ledger after five refusals and one adjustment: %d entries, %v", len(ledger.Data), err)
	}
}

// TestLedgerEntryErrors: an entry's fields refused at once, in Ledger.Record's order
// (amount, note, kind, the amount's sign, order); the operation refuses with the first and
// records nothing. Whether an order is in the ledger is the operation's alone.
func TestLedgerEntryErrors(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "Entries", "EUR")
	co := env.MustCompany(t, store, "Dachdeckerei Vogt", "12000.00")
	staff := credittest.Staff(store)
	kindRefusal := refusal{credit.CodeValidationFailed, "kind", "kind must be one of order_placed, payment, refund, cancellation, adjustment, opening_balance"}
	orderForm := refusal{credit.CodeValidationFailed, "order", "order must look like gid://platform/Order/123"}
	for _, tc := range []struct {
		name string
		in   credit.LedgerEntryInput
		want []refusal
	}{
		{"every field wrong", credit.LedgerEntryInput{Kind: "loan", Amount: "1,5", OrderGID: "order 7", Note: tooLong},
			[]refusal{{credit.CodeInvalidAmount, "amount", msgDecimal}, textRefusal("note", msgMaxText), kindRefusal, orderForm}},
		{"a payment above zero with a malformed order", credit.LedgerEntryInput{Kind: credit.KindPayment, Amount: "10.00", OrderGID: "gid://platform/Order/x"},
			[]refusal{{credit.CodeInvalidAmount, "amount", "payment amounts must be below zero: they reduce what is outstanding"}, orderForm}},
		{"a refund without its order, bad note", credit.LedgerEntryInput{Kind: credit.KindRefund, Amount: "-5.00", Note: "a\x01"},
			[]refusal{textRefusal("note", msgControlChar), {credit.CodeValidationFailed, "order", "refund entries need the order's GID"}}},
		{"a zero adjustment naming an order", credit.LedgerEntryInput{Kind: credit.KindAdjustment, Amount: "0", OrderGID: "gid://platform/Order/1"},
			[]refusal{{credit.CodeInvalidAmount, "amount", msgNotZero}, {credit.CodeValidationFailed, "order", "adjustment entries do not reference an order"}}},
		{"an order of zero, unknown kind has no sign", credit.LedgerEntryInput{Kind: "", Amount: "0"},
			[]refusal{kindRefusal}},
		{"an order of zero", credit.LedgerEntryInput{Kind: credit.KindOrderPlaced, Amount: "0.00", OrderGID: "gid://platform/Order/9"},
			[]refusal{{credit.CodeInvalidAmount, "amount", "order_placed amounts must be greater than zero"}}},
		{"good", credit.LedgerEntryInput{Kind: credit.KindOrderPlaced, Amount: "640.00", OrderGID: "gid://platform/Order/5004", Note: "first order"}, nil},
	} {
		tc.in.CompanyID = co.ID
		errs := credit.LedgerEntryErrors(tc.in, "EUR")
		_, _, opErr := env.Service.Ledger.Record(staff, tc.in)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
	// The same order again passes the checker; the ledger refuses it.
	again := credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "1.00", OrderGID: "gid://platform/Order/5004"}
	if errs := credit.LedgerEntryErrors(again, "EUR"); len(errs) != 0 {
		t.Errorf("an order already recorded: the checker refuses it: %v", errs)
	}
	if _, _, err := env.Service.Ledger.Record(staff, again); credit.CodeOf(err) != credit.CodeValidationFailed {
		t.Errorf("an order already recorded: %v", err)
	}
	ledger, err := env.Service.Ledger.List(staff, co.ID, credit.LedgerListParams{})
	if err != nil || len(ledger.Data) != 1 {
		t.Errorf("the ledger after the refusals and one order: %d entries, %v", len(ledger.Data), err)
	}
}

// TestKeyErrors: a key's label and scopes refused at once; Keys.Create refuses with the first,
// creates nothing, and keeps each scope once.
func TestKeyErrors(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "Keys", "EUR")
	staff := credittest.Staff(store)
	noScope := refusal{credit.CodeValidationFailed, "scopes", "a key needs at least one scope"}
	for _, tc := range []struct {
		name   string
		label  string
		scopes []string
		want   []refusal
	}{
		{"blank label, no scope", " ", nil, []refusal{textRefusal("label", "%s must not be empty"), noScope}},
		{"label too long, unknown scope", strings.Repeat("k", 101), []string{credit.ScopeReadCredit, "admin"},
			[]refusal{{credit.CodeValidationFailed, "label", "label must be at most 100 characters"},
				{credit.CodeValidationFailed, "scopes", `unknown scope "admin": scopes are read_credit, read_applications, write_credit`}}},
		{"only blank scopes", "ERP", []string{"", " "}, []refusal{noScope}},
		{"an unknown scope alone", "ERP", []string{"write_everything"},
			[]refusal{{credit.CodeValidationFailed, "scopes", `unknown scope "write_everything": scopes are read_credit, read_applications, write_credit`}}},
		{"good, a scope twice", " ERP (production) ", []string{credit.ScopeReadCredit, " read_credit ", credit.ScopeWriteCredit}, nil},
	} {
		errs := credit.KeyErrors(tc.label, tc.scopes)
		_, opErr := env.Service.Keys.Create(staff, tc.label, tc.scopes)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
	keys, err := env.Service.Keys.List(staff, time.Hour)
	if err != nil || len(keys) != 1 || keys[0].Label != "ERP (production)" ||
		!reflect.DeepEqual(keys[0].Scopes, []string{credit.ScopeReadCredit, credit.ScopeWriteCredit}) {
		t.Errorf("keys after the refusals and one key: %+v %v", keys, err)
	}
}

// TestWebhookEndpointErrors: an endpoint's URL, description and event types refused at once;
// Webhooks.CreateEndpoint refuses with the first and creates nothing.
func TestWebhookEndpointErrors(t *testing.T) {
	sealer := credittest.NewSealer(t)
	env := credittest.NewService(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
	}})
	store := env.MustStore(t, "Hooks", "EUR")
	staff := credittest.Staff(store)
	httpOnly := refusal{credit.CodeValidationFailed, "url", "only HTTPS is allowed (an operator can allow http:// for development and tests)"}
	unknownType := refusal{credit.CodeValidationFailed, "events", `unknown event type "order.paid"; the types are ` + strings.Join(credit.EventTypeNames(), ", ")}
	for _, tc := range []struct {
		name string
		in   credit.WebhookEndpointInput
		want []refusal
	}{
		{"every field wrong", credit.WebhookEndpointInput{URL: "http://erp.example.com/hooks", Description: tooLong, EventTypes: []string{"order.paid"}},
			[]refusal{httpOnly, textRefusal("description", msgMaxText), unknownType}},
		{"no URL, bad description", credit.WebhookEndpointInput{URL: "  ", Description: "a\x00"},
			[]refusal{textRefusal("url", "%s must not be empty"), textRefusal("description", msgControlChar)}},
		{"a private address, unknown type", credit.WebhookEndpointInput{URL: "https://127.0.0.1/hooks", EventTypes: []string{string(credit.EventTypes[0]), "order.paid"}},
			[]refusal{{credit.CodeValidationFailed, "url", "the URL's host is not a public internet address (loopback, private, link-local and localhost are refused, in any spelling; an operator can allow them for development)"}, unknownType}},
		{"good, spaces around the URL", credit.WebhookEndpointInput{URL: " https://erp.example.com/hooks ", Description: "ERP", EventTypes: []string{string(credit.EventTypes[0])}}, nil},
	} {
		errs := env.Service.Webhooks.EndpointErrors(tc.in)
		_, opErr := env.Service.Webhooks.CreateEndpoint(staff, tc.in)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
	endpoints, err := env.Service.Webhooks.ListEndpoints(staff)
	if err != nil || len(endpoints) != 1 {
		t.Errorf("endpoints after the refusals and one endpoint: %+v %v", endpoints, err)
	}
}

// TestPlatformSecretErrors: a rotation's grace and secret refused at once, grace first as
// Platform.RotateSecret checks them; the operation refuses with the first and keeps the
// secret.
func TestPlatformSecretErrors(t *testing.T) {
	env := newSealingEnv(t)
	store := env.MustStore(t, "Platform", "EUR")
	staff := credittest.Staff(store)
	if _, err := env.Service.Platform.Connect(staff, "platform.myplatform.com", platformTestSecret); err != nil {
		t.Fatal(err)
	}
	before, err := env.Service.Platform.Status(staff)
	if err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(time.Minute)
	secretRefusal := refusal{credit.CodeValidationFailed, "secret", msgSecretRule}
	for _, tc := range []struct {
		name   string
		secret string
		grace  time.Duration
		want   []refusal
	}{
		{"short secret, negative grace", "tooshort", -time.Hour, []refusal{{credit.CodeValidationFailed, "grace", msgGraceNeg}, secretRefusal}},
		{"spaces around the secret", " " + platformTestSecret + " ", time.Hour, []refusal{secretRefusal}},
		{"a secret too long", strings.Repeat("s", 257), 0, []refusal{secretRefusal}},
		{"negative grace only", "shpss_the_new_secret_0123456789", -time.Second, []refusal{{credit.CodeValidationFailed, "grace", msgGraceNeg}}},
	} {
		errs := credit.PlatformSecretErrors(tc.secret, tc.grace)
		_, opErr := env.Service.Platform.RotateSecret(staff, tc.secret, tc.grace)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
	if after, err := env.Service.Platform.Status(staff); err != nil || after.UpdatedAt != before.UpdatedAt {
		t.Errorf("the connection after the refusals: %+v %v (before %+v)", after, err, before)
	}
	good := "shpss_the_new_secret_0123456789"
	_, opErr := env.Service.Platform.RotateSecret(staff, good, time.Hour)
	checkRefusals(t, "good", credit.PlatformSecretErrors(good, time.Hour), opErr, nil)
}

// TestErasureErrors: an erasure's email and confirmation refused at once; ErasePerson, called
// once confirmed, refuses a blank email with the same refusal.
func TestErasureErrors(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "Privacy", "EUR")
	staff := credittest.Staff(store)
	env.MustApplication(t, store, credit.ApplicationInput{BusinessName: "Bergbäckerei Huber", ContactName: "Maria Huber", ContactEmail: "maria@example.com"})
	email := refusal{credit.CodeValidationFailed, "email", "email must not be empty"}
	confirm := refusal{credit.CodeValidationFailed, "confirm", "confirm that the erasure cannot be undone"}
	if got := refusalsOf(t, credit.ErasureErrors(" ", false)); !reflect.DeepEqual(got, []refusal{email, confirm}) {
		t.Errorf("blank email, not confirmed: %+v", got)
	}
	if got := refusalsOf(t, credit.ErasureErrors("maria@example.com", false)); !reflect.DeepEqual(got, []refusal{confirm}) {
		t.Errorf("not confirmed: %+v", got)
	}
	_, opErr := env.Service.Applications.ErasePerson(staff, "  ")
	checkRefusals(t, "blank email, confirmed", credit.ErasureErrors("  ", true), opErr, []refusal{email})
	n, opErr := env.Service.Applications.ErasePerson(staff, "MARIA@example.com")
	checkRefusals(t, "good", credit.ErasureErrors("MARIA@example.com", true), opErr, nil)
	if n != 1 {
		t.Errorf("erased %d applications, want 1", n)
	}
}

// TestApprovalErrors: an approval's terms refused at once, in the form's order, by the same
// checks that refuse a company created with them; a good approval's terms pass.
func TestApprovalErrors(t *testing.T) {
	cases := []struct {
		name, limit, terms, gid string
		want                    []string // params
	}{
		{"all good", "5000.00", "NET_30", "gid://platform/Company/1", nil},
		{"no GID is fine", "5000.00", "NET_30", "", nil},
		{"no limit", "", "NET_30", "", []string{"credit_limit"}},
		{"every field", "12.345", "NET_0", "company-1", []string{"credit_limit", "payment_terms", "platform_company_gid"}},
		{"negative limit, bad terms", "-1", "30 days", "", []string{"credit_limit", "payment_terms"}},
		{"no limit, bad GID", "", "NET_30", "gid://x", []string{"credit_limit", "platform_company_gid"}},
	}
	for _, c := range cases {
		var got []string
		for _, err := range credit.ApprovalErrors(c.limit, c.terms, c.gid, "EUR") {
			got = append(got, refusalOf(t, err).Param)
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: refused %v, want %v", c.name, got, c.want)
		}
	}
	// The approval itself refuses with the checks a new company gets, in their order: the GID
	// before the terms before the limit.
	env := credittest.NewService(t)
	st := env.MustStore(t, "Store", "EUR")
	staff := env.StaffOf(t, st)
	a := env.MustApplication(t, st, credit.ApplicationInput{BusinessName: "Buyer GmbH", ContactEmail: "buyer@example.com"})
	if _, _, err := env.Service.Applications.SetStatus(staff, credit.StatusChange{ApplicationID: a.ID, Status: "in_review"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		in    credit.StatusChange
		param string
	}{
		{credit.StatusChange{ApplicationID: a.ID, Status: "approved", CreditLimit: "12.345", PaymentTerms: "NET_0", PlatformCompanyGID: "company-1"}, "platform_company_gid"},
		{credit.StatusChange{ApplicationID: a.ID, Status: "approved", CreditLimit: "12.345", PaymentTerms: "NET_0"}, "payment_terms"},
		{credit.StatusChange{ApplicationID: a.ID, Status: "approved", CreditLimit: "12.345", PaymentTerms: "NET_30"}, "amount"},
	} {
		if _, _, err := env.Service.Applications.SetStatus(staff, c.in); err == nil || refusalOf(t, err).Param != c.param {
			t.Errorf("approving with %+v: %v, want a refusal of %s", c.in, err, c.param)
		}
	}
}

// TestPromiseErrors: a promise's day and note refused at once, day first; RecordPromise
// refuses with the first and records nothing, and accepts what the checker accepts.
func TestPromiseErrors(t *testing.T) {
	env := newRuleEnv(t, "EUR")
	_, inv := env.openInvoice(t, "Promiser GmbH")
	now := env.Clock.Now()
	today := now.UTC().Format(time.DateOnly)
	last := now.UTC().AddDate(0, 0, credit.MaxPromiseDays).Format(time.DateOnly)
	yesterday := now.UTC().AddDate(0, 0, -1).Format(time.DateOnly)
	outOfRange := "promised_for must be from today (" + today + ") to 90 days ahead (" + last + "), UTC"
	for _, tc := range []struct {
		name string
		in   credit.PromiseInput
		want []refusal
	}{
		{"no day, blank note", credit.PromiseInput{Note: strp(" ")}, []refusal{
			{credit.CodeValidationFailed, "promised_for", "promised_for is required: the day the company promised to pay by, as YYYY-MM-DD"},
			textRefusal("note", "%s must not be empty")}},
		{"not a date, note too long", credit.PromiseInput{PromisedFor: "next friday", Note: strp(tooLong)}, []refusal{
			{credit.CodeValidationFailed, "promised_for", "promised_for must be a date as YYYY-MM-DD, such as " + today},
			textRefusal("note", msgMaxText)}},
		{"yesterday", credit.PromiseInput{PromisedFor: yesterday}, []refusal{{credit.CodeValidationFailed, "promised_for", outOfRange}}},
		{"only the note", credit.PromiseInput{PromisedFor: today, Note: strp("a\x07")}, []refusal{textRefusal("note", msgControlChar)}},
		{"good", credit.PromiseInput{PromisedFor: last, Note: strp("by transfer")}, nil},
	} {
		tc.in.InvoiceID = inv
		errs := credit.PromiseErrors(tc.in, now)
		_, opErr := env.Service.Invoices.RecordPromise(env.staff, tc.in)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
}

// TestStatementPeriodErrors: both dates of a statement's period refused at once when neither
// reads, then the period's rules one at a time; Statement refuses with the first.
func TestStatementPeriodErrors(t *testing.T) {
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Stated GmbH", "100.00").ID
	now := env.Clock.Now()
	for _, tc := range []struct {
		name, from, to string
		want           []refusal
	}{
		{"neither a date", "1.3.2026", "", []refusal{{credit.CodeInvalidParameter, "from", "from must be a date, YYYY-MM-DD"}, {credit.CodeInvalidParameter, "to", "to must be a date, YYYY-MM-DD"}}},
		{"to not a date", "2026-03-01", "soon", []refusal{{credit.CodeInvalidParameter, "to", "to must be a date, YYYY-MM-DD"}}},
		{"from after to", "2026-03-02", "2026-03-01", []refusal{{credit.CodeInvalidParameter, "from", "from must not be after to"}}},
		{"to in the future", "2026-03-01", "2026-03-03", []refusal{{credit.CodeInvalidParameter, "to", "to must not be in the future"}}},
		{"good", "2026-02-01", "2026-03-02", nil},
	} {
		errs := credit.StatementPeriodErrors(tc.from, tc.to, now)
		_, opErr := env.Service.Reports.Statement(env.staff, co, tc.from, tc.to)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
}

// TestCompanyErrors: a new company's name, platform company GID, payment terms and credit
// limit refused at once; Companies.Create refuses with the first and creates nothing.
func TestCompanyErrors(t *testing.T) {
	env := credittest.NewService(t)
	store := env.MustStore(t, "New Companies", "EUR")
	staff := credittest.Staff(store)
	gidRule := refusal{credit.CodeValidationFailed, "platform_company_gid", "platform_company_gid must look like gid://platform/Company/123"}
	for _, tc := range []struct {
		name string
		in   credit.CompanyInput
		want []refusal
	}{
		{"every field wrong", credit.CompanyInput{Name: "  ", PlatformCompanyGID: "Company 7", PaymentTerms: "NET_400", CreditLimit: "viel"},
			[]refusal{textRefusal("name", "%s must not be empty"), gidRule,
				{credit.CodeValidationFailed, "payment_terms", "payment_terms must be between NET_1 and NET_365"},
				{credit.CodeInvalidAmount, "amount", msgDecimal}}},
		{"name too long, limit below zero", credit.CompanyInput{Name: tooLong, PaymentTerms: "NET_30", CreditLimit: "-1"},
			[]refusal{textRefusal("name", msgMaxText), {credit.CodeLimitBelowZero, "amount", "credit limit must be zero or greater"}}},
		{"limit left out", credit.CompanyInput{Name: "Bergbahn AG", PaymentTerms: "NET_30"},
			[]refusal{{credit.CodeInvalidAmount, "amount", msgDecimal}}},
		{"good, no GID", credit.CompanyInput{Name: " Bergbahn AG ", PaymentTerms: "NET_45", CreditLimit: "1000.00"}, nil},
		{"good, with a GID", credit.CompanyInput{Name: "Seilbahn AG", PlatformCompanyGID: "gid://platform/Company/77", PaymentTerms: "NET_7", CreditLimit: "0"}, nil},
	} {
		errs := credit.CompanyErrors(tc.in, "EUR")
		_, opErr := env.Service.Companies.Create(staff, tc.in)
		checkRefusals(t, tc.name, errs, opErr, tc.want)
	}
	if page, err := env.Service.Companies.List(staff, credit.CompanyListParams{}); err != nil || len(page.Data) != 2 {
		t.Errorf("companies after the refusals: %+v %v", page.Data, err)
	}
}
