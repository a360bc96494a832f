package console

import (
	"strconv"
	"strings"

	"github.com/creditd/creditd/credit"
)

// Forms in people's terms: payment terms are a choice of the usual Net days, or other days;
// the form field's values are turned into the domain's NET_<days> here, once.

// termsChoices are the payment terms offered by name; "other" asks for the days.
var termsChoices = []int{7, 14, 30, 60, 90}

// termsFieldData is what the "terms" snippet renders: the select and the days of "other".
type termsFieldData struct {
	Prefix  string
	Choices []int
	// Choice is the selected value: "NET_30", or "other" with Days.
	Choice, Days, Error string
}

// termsField fills the snippet for a form (nil: a fresh form, Net 30 selected), keeping what
// was submitted.
func termsField(prefix string, f *form) termsFieldData {
	d := termsFieldData{Prefix: prefix, Choices: termsChoices, Choice: "NET_30"}
	if f == nil {
		return d
	}
	d.Choice, d.Days, d.Error = f.Value("payment_terms"), f.Value("payment_terms_days"), f.FieldError("payment_terms")
	if strings.HasPrefix(d.Choice, "NET_") {
		if n, err := strconv.Atoi(strings.TrimPrefix(d.Choice, "NET_")); err == nil && !isTermsChoice(n) {
			d.Choice, d.Days = "other", strconv.Itoa(n)
		}
	}
	return d
}

func isTermsChoice(n int) bool {
	for _, c := range termsChoices {
		if c == n {
			return true
		}
	}
	return false
}

// formTerms reads the payment terms of a form: a choice such as NET_30, or "other" and the
// days; what the domain then checks (1 to 365 days) is the domain's.
//
// Errors: validation_failed (payment_terms) when "other" has no whole number of days.
func formTerms(choice, days string) (string, error) {
	if choice != "other" {
		return strings.TrimSpace(choice), nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(days))
	if err != nil {
		return "", credit.ParamErrorf(credit.CodeValidationFailed, "payment_terms", "enter the days to pay, a whole number from 1 to 365")
	}
	return "NET_" + strconv.Itoa(n), nil
}
