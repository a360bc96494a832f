package credit

import (
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// Every field's refusal at once. A write's operation refuses its input with one error, the
// first it finds, which is what the APIs answer (contract §3). A form in the staff console
// shows every field's refusal at once, each beside its field, so the checks of each write
// with several fields are written here as one checker that looks at each field on its own and
// returns all its refusals; the operation calls the same checker and returns its first, so
// that a rule is written once and the APIs' answer stays what it was. A checker reads and
// writes nothing: what needs the database (an unknown company, an order GID already in the
// ledger, a key or an endpoint of another store) is still its operation's to find. Its
// refusals come in the order the operation checked them before, which is the order of the
// form's fields unless its doc comment says otherwise; no field is refused twice.

// CreditLimitErrors checks a credit limit change (SetCreditLimit) in the company's currency:
// the amount (present, in currency, a decimal amount of zero or more), then the reason.
func CreditLimitErrors(in CreditLimitInput, currency string) []error {
	_, errs := checkCreditLimit(in, currency)
	return errs
}

// checkCreditLimit is CreditLimitErrors with the limit it read.
func checkCreditLimit(in CreditLimitInput, currency string) (decimal.Decimal, []error) {
	var errs []error
	amount, err := requiredAmount(in.Amount, in.Currency, currency)
	if err == nil && amount.IsNegative() {
		err = errLimitBelowZero
	}
	if err != nil {
		errs = append(errs, err)
	}
	if in.Reason != nil {
		if err := checkText(*in.Reason, "reason"); err != nil {
			errs = append(errs, err)
		}
	}
	return amount, errs
}

// CompanyErrors checks a new company (Companies.Create) in the store's currency: the name
// (trimmed, present, at most 500 characters), the platform company GID when given, the
// payment terms, then the credit limit (param "amount"; a decimal amount of zero or more).
// Whether another company of the store has the GID is the operation's to find.
func CompanyErrors(in CompanyInput, currency string) []error {
	var gid *string
	if in.PlatformCompanyGID != "" {
		gid = &in.PlatformCompanyGID
	}
	_, _, errs := checkCompany(strings.TrimSpace(in.Name), gid, in.PaymentTerms, in.CreditLimit, currency)
	return errs
}

// checkCompany is CompanyErrors with the terms' days and the limit it read, for a name
// already trimmed; approvals create their company through it too.
func checkCompany(name string, gid *string, terms, limit, currency string) (int, decimal.Decimal, []error) {
	var errs []error
	if err := checkField(name, "name", 500); err != nil {
		errs = append(errs, err)
	}
	days, amount, termsErrs := companyTermsErrors(gid, terms, limit, currency)
	return days, amount, append(errs, termsErrs...)
}

// AdjustmentErrors checks an adjustment (CreateAdjustment) in the company's currency: the
// amount (present, in currency, a decimal amount other than zero), then the note (required).
func AdjustmentErrors(in AdjustmentInput, currency string) []error {
	_, errs := checkAdjustment(in, currency)
	return errs
}

// checkAdjustment is AdjustmentErrors with the amount it read.
func checkAdjustment(in AdjustmentInput, currency string) (decimal.Decimal, []error) {
	var errs []error
	amount, err := requiredAmount(in.Amount, in.Currency, currency)
	if err == nil && amount.IsZero() {
		err = ParamErrorf(CodeInvalidAmount, "amount", "an adjustment must not be zero")
	}
	if err != nil {
		errs = append(errs, err)
	}
	if in.Note == nil {
		errs = append(errs, ParamErrorf(CodeValidationFailed, "note", "note is required"))
	} else if err := checkText(*in.Note, "note"); err != nil {
		errs = append(errs, err)
	}
	return amount, errs
}

// PromiseErrors checks a promise to pay (Invoices.RecordPromise) as of now: the day
// (present, YYYY-MM-DD, from today to MaxPromiseDays ahead, UTC), then the note when given.
func PromiseErrors(in PromiseInput, now time.Time) []error {
	_, errs := checkPromise(in, now)
	return errs
}

// checkPromise is PromiseErrors with the day it read.
func checkPromise(in PromiseInput, now time.Time) (time.Time, []error) {
	var errs []error
	day, err := checkPromisedFor(in.PromisedFor, now)
	if err != nil {
		errs = append(errs, err)
	}
	if in.Note != nil {
		if err := checkText(*in.Note, "note"); err != nil {
			errs = append(errs, err)
		}
	}
	return day, errs
}

// LedgerEntryErrors checks a ledger entry (Ledger.Record) in the company's currency, in
// the order the operation checks them, which is not the form's: that the amount is a decimal
// amount, the note, the kind, the amount's sign for the kind (contract §5; only when the
// amount and the kind could be read), then the order GID (whether the kind names one, and its
// form). Whether the order is in the company's ledger is the operation's to find.
func LedgerEntryErrors(in LedgerEntryInput, currency string) []error {
	_, errs := checkLedgerEntry(in, currency)
	return errs
}

// checkLedgerEntry is LedgerEntryErrors with the amount it read.
func checkLedgerEntry(in LedgerEntryInput, currency string) (decimal.Decimal, []error) {
	var errs []error
	amount, amountErr := ParseAmount(in.Amount, currency, "amount")
	if amountErr != nil {
		errs = append(errs, amountErr)
	}
	if in.Note != "" {
		if err := checkText(in.Note, "note"); err != nil {
			errs = append(errs, err)
		}
	}
	kindErr := checkLedgerKind(in.Kind)
	if kindErr != nil {
		errs = append(errs, kindErr)
	}
	if kindErr == nil && amountErr == nil {
		if err := checkLedgerAmountSign(in.Kind, amount); err != nil {
			errs = append(errs, err)
		}
	}
	var gid *string
	if in.OrderGID != "" {
		gid = &in.OrderGID
	}
	if err := checkLedgerOrder(in.Kind, gid); err != nil {
		errs = append(errs, err)
	}
	return amount, errs
}

// KeyErrors checks a new API key (Keys.Create): its label (1 to 100 characters, surrounding
// spaces ignored), then its scopes (each one of AllScopes, at least one).
func KeyErrors(label string, scopes []string) []error {
	_, errs := checkKey(label, scopes)
	return errs
}

// checkKey is KeyErrors with the scopes it read, without repeats.
func checkKey(label string, scopes []string) ([]string, []error) {
	var errs []error
	if err := checkField(strings.TrimSpace(label), "label", 100); err != nil {
		errs = append(errs, err)
	}
	scopes, err := checkScopes(scopes)
	if err != nil {
		errs = append(errs, err)
	}
	return scopes, errs
}

// EndpointErrors checks a new webhook endpoint (Webhooks.CreateEndpoint) by the
// service's rules: its URL (surrounding spaces ignored; a public HTTPS address unless the
// service allows private ones), then its description (optional, at most 500 characters),
// then its event types (each a known type; none is every type).
func (s *Webhooks) EndpointErrors(in WebhookEndpointInput) []error {
	_, errs := s.checkWebhookEndpoint(in)
	return errs
}

// checkWebhookEndpoint is Webhooks.EndpointErrors with the event types it read, without repeats.
func (s *Webhooks) checkWebhookEndpoint(in WebhookEndpointInput) ([]string, []error) {
	var errs []error
	if err := s.validateWebhookURL(strings.TrimSpace(in.URL)); err != nil {
		errs = append(errs, err)
	}
	if in.Description != "" {
		if err := checkField(in.Description, "description", 500); err != nil {
			errs = append(errs, err)
		}
	}
	types, err := knownEventTypes(in.EventTypes, CodeValidationFailed, "events")
	if err != nil {
		errs = append(errs, err)
	}
	return types, errs
}

// PlatformSecretErrors checks a rotation of the platform secret (Platform.RotateSecret) in
// the order the operation checks them, which is not the form's: the grace (zero or more),
// then the new secret (16 to 256 characters without surrounding spaces).
func PlatformSecretErrors(secret string, grace time.Duration) []error {
	var errs []error
	if err := checkGrace(grace); err != nil {
		errs = append(errs, err)
	}
	if err := checkPlatformSecret(secret); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// checkPlatformSecret refuses a secret that cannot be the platform's.
//
// Errors: validation_failed (param "secret").
func checkPlatformSecret(secret string) error {
	if n := len(secret); n < minPlatformSecret || n > maxPlatformSecret || strings.TrimSpace(secret) != secret {
		return ParamErrorf(CodeValidationFailed, "secret", "the platform secret must be %d to %d characters without surrounding spaces", minPlatformSecret, maxPlatformSecret)
	}
	return nil
}

// ErasureErrors checks a person's erasure (ErasePerson): the email (not blank), then that the
// person carrying it out confirmed it cannot be undone. ErasePerson is called only once they
// have (the console's tick box; the command line's invocation is its confirmation), so it
// checks the email alone.
func ErasureErrors(email string, confirmed bool) []error {
	var errs []error
	if strings.TrimSpace(email) == "" {
		errs = append(errs, ParamErrorf(CodeValidationFailed, "email", "email must not be empty"))
	}
	if !confirmed {
		errs = append(errs, ParamErrorf(CodeValidationFailed, "confirm", "confirm that the erasure cannot be undone"))
	}
	return errs
}

// checkScopes reads a key's scopes: each one of AllScopes (surrounding spaces ignored, blanks
// skipped), without repeats, at least one.
//
// Errors: validation_failed (param "scopes").
func checkScopes(scopes []string) ([]string, error) {
	var out []string
	for _, sc := range scopes {
		sc = strings.TrimSpace(sc)
		if sc == "" {
			continue
		}
		if !slices.Contains(AllScopes, sc) {
			return nil, ParamErrorf(CodeValidationFailed, "scopes", "unknown scope %q: scopes are read_credit, read_applications, write_credit", sc)
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, ParamErrorf(CodeValidationFailed, "scopes", "a key needs at least one scope")
	}
	return out, nil
}
