package console

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// Forms in people's terms: payment terms are a choice of the usual Net days, or other days;
// the form's values become the domain's NET_<days> through credit's payment-terms helpers
// (credit/terms.go), which also name and bound them.

// termsChoices are the days of the payment terms offered by name; "other" asks for the days.
var termsChoices = []int{7, 14, 30, 60, 90}

// termsFieldData is what the "terms" snippet renders: the select and the days of "other".
type termsFieldData struct {
	Prefix  string
	Choices []termsChoice
	// Choice is the selected value: "NET_30", or "other" with Days.
	Choice, Days, Error string
	// Min and Max bound the days of "other".
	Min, Max int
}

// termsChoice is an option of the select: its code (NET_30) and its label (Net 30).
type termsChoice struct{ Code, Label string }

// termsField fills the snippet for a form (nil: a fresh form, Net 30 selected), keeping what
// was submitted.
func termsField(prefix string, f *form) termsFieldData {
	d := termsFieldData{Prefix: prefix, Choice: credit.PaymentTerms(30), Min: credit.MinPaymentTermsDays, Max: credit.MaxPaymentTermsDays}
	for _, days := range termsChoices {
		code := credit.PaymentTerms(days)
		d.Choices = append(d.Choices, termsChoice{Code: code, Label: credit.FormatPaymentTerms(code)})
	}
	if f == nil {
		return d
	}
	d.Choice, d.Days, d.Error = f.Value("payment_terms"), f.Value("payment_terms_days"), f.FieldError("payment_terms")
	if n, ok := credit.PaymentTermsDays(d.Choice); ok && !slices.Contains(termsChoices, n) {
		d.Choice, d.Days = "other", strconv.Itoa(n)
	}
	return d
}

// formTerms reads the payment terms of a form: a choice such as NET_30, or "other" and the
// days; what the domain then checks (1 to 365 days) is the domain's.
//
// Errors: validation_failed (payment_terms) when "other" has no whole number of days.
func formTerms(choice, days string) (string, error) {
	if choice != "other" {
		return strings.TrimSpace(choice), nil
	}
	return credit.PaymentTermsOfDays(days, "payment_terms")
}

// amount reads an amount typed in a form as the store's locale writes numbers, or plainly.
func (v *visit) amount(text string) string {
	return credit.ParseLocalAmount(text, v.store.Locale, v.store.Currency)
}

// refusedFields is refusedForm for several refusals at once: each beside the field it names
// when that is one of fields, the others together above the form's button. The status is the
// first refusal's.
func (v *visit) refusedFields(values url.Values, errs []error, fields ...string) (*form, int) {
	f := &form{Values: values, Errors: map[string]string{}}
	status := 0
	for _, err := range errs {
		p := httpapi.Describe(err)
		if status == 0 {
			status = p.Status
		}
		msg := sentence(v.amountMessage(p))
		if slices.Contains(fields, p.Param) {
			if _, taken := f.Errors[p.Param]; !taken {
				f.Errors[p.Param] = msg
			}
			continue
		}
		f.Error = strings.TrimSpace(f.Error + " " + msg)
	}
	return f, status
}

// withFieldError puts err, the refusal of a field the form itself reads (the days of "other"
// payment terms, a grace, a time), in errs in place of the domain's refusal of the same field,
// which checked only what the reading gave.
func withFieldError(errs []error, err error) []error {
	param := httpapi.Describe(err).Param
	errs = slices.DeleteFunc(slices.Clone(errs), func(e error) bool { return httpapi.Describe(e).Param == param })
	return append(errs, err)
}

// amountMessage is a refusal's message in people's terms: for an amount that could not be
// read, the API's "a decimal string such as "1500.00"" becomes an example in the store's
// locale as well; payment terms are days, not NET_<days>.
func (v *visit) amountMessage(p httpapi.Problem) string {
	if p.Param == "payment_terms" {
		// The API's NET_<days> is the select's business, not the reader's.
		return credit.PaymentTermsDaysRule
	}
	if p.Code != credit.CodeInvalidAmount || !strings.Contains(p.Message, "decimal string") {
		return p.Message
	}
	example := "10,000.00"
	if credit.DecimalComma(v.store.Locale) {
		example = "10.000,00"
	}
	return "enter the amount as a number such as " + example + " or 1500.00"
}

// form is a submitted form shown again after a refusal: its values, and the refusal's message
// next to the field it names, or above the form's button when it names none of its fields.
type form struct {
	Values url.Values
	Errors map[string]string
	Error  string
}

// refusedForm files the refusal p under the field it names when that field is one of fields.
func refusedForm(values url.Values, p httpapi.Problem, fields ...string) *form {
	f := &form{Values: values, Errors: map[string]string{}}
	msg := sentence(p.Message)
	for _, name := range fields {
		if p.Param == name {
			f.Errors[name] = msg
			return f
		}
	}
	f.Error = msg
	return f
}

// Value returns a submitted value; a nil form has none.
func (f *form) Value(name string) string {
	if f == nil {
		return ""
	}
	return f.Values.Get(name)
}

// Has reports whether a checkbox or option was submitted with value.
func (f *form) Has(name, value string) bool {
	if f == nil {
		return false
	}
	for _, v := range f.Values[name] {
		if v == value {
			return true
		}
	}
	return false
}

// FieldError returns the refusal filed under a field.
func (f *form) FieldError(name string) string {
	if f == nil {
		return ""
	}
	return f.Errors[name]
}

// FormError returns the refusal that names none of the form's fields.
func (f *form) FormError() string {
	if f == nil {
		return ""
	}
	return f.Error
}

// sentence capitalises a domain message and ends it with a full stop, for a page, with its
// timestamps written as formatTime writes them.
func sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return msg
	}
	msg = readableTimes(msg)
	// A domain message that starts with the API's name of its field (platform_company_gid must
	// look like …) starts with the words people read instead: Platform company GID must ….
	if first, rest, _ := strings.Cut(msg, " "); strings.Contains(first, "_") && strings.Trim(first, "abcdefghijklmnopqrstuvwxyz_") == "" {
		msg = strings.TrimSpace(humanLabel(first) + " " + rest)
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}
