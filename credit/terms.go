package credit

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Payment terms: a company's days to pay an invoice, which the APIs and the command line write
// NET_<days> and people read as "Net <days>". Every transport builds, reads and shows them
// with these helpers; the range is the domain's (ParsePaymentTerms).

// The range of payment terms' days.
const (
	MinPaymentTermsDays = 1
	MaxPaymentTermsDays = 365
)

// PaymentTermsDaysRule is the rule of payment terms in people's words, for a form that asks for
// the days rather than the code.
var PaymentTermsDaysRule = fmt.Sprintf("the days to pay must be a whole number from %d to %d", MinPaymentTermsDays, MaxPaymentTermsDays)

var paymentTermsPattern = regexp.MustCompile(`^NET_([0-9]{1,3})$`)

// PaymentTerms formats a number of days as the API's NET_<days> code.
func PaymentTerms(days int) string { return fmt.Sprintf("NET_%d", days) }

// ParsePaymentTerms reads a NET_<days> code with days from 1 to 365.
//
// Errors: validation_failed (param).
func ParsePaymentTerms(s, param string) (int, error) {
	m := paymentTermsPattern.FindStringSubmatch(s)
	if m == nil {
		return 0, ParamErrorf(CodeValidationFailed, param, "%s must be NET_<days>, such as NET_30", param)
	}
	days, _ := strconv.Atoi(m[1])
	if days < MinPaymentTermsDays || days > MaxPaymentTermsDays {
		return 0, ParamErrorf(CodeValidationFailed, param, "%s must be between NET_%d and NET_%d", param, MinPaymentTermsDays, MaxPaymentTermsDays)
	}
	return days, nil
}

// PaymentTermsDays reads the days of a code NET_<days> without checking their range
// (ParsePaymentTerms does), for a form that shows the days it was sent; ok is false for a code
// of another form.
func PaymentTermsDays(code string) (days int, ok bool) {
	text, found := strings.CutPrefix(code, "NET_")
	if !found {
		return 0, false
	}
	days, err := strconv.Atoi(text)
	return days, err == nil
}

// PaymentTermsOfDays builds the NET_<days> code of days typed by a person ("30", " 45 "); the
// code's range is then ParsePaymentTerms's to check, with the company's other fields.
//
// Errors: validation_failed (param) when days is not a whole number.
func PaymentTermsOfDays(days, param string) (string, error) {
	n, err := strconv.Atoi(strings.TrimSpace(days))
	if err != nil {
		return "", ParamErrorf(CodeValidationFailed, param, "%s", PaymentTermsDaysRule)
	}
	return PaymentTerms(n), nil
}

// FormatPaymentTerms shows payment terms as people write them: NET_14 is "Net 14". Anything
// else is shown as it is.
func FormatPaymentTerms(code string) string {
	if days, ok := strings.CutPrefix(code, "NET_"); ok {
		return "Net " + days
	}
	return code
}
