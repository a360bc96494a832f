package credit

import (
	"regexp"
	"strings"
)

// Amounts as people type them (issue 31): a store's locale says how its staff write numbers,
// and forms read "10.000,00" in a store whose locale writes a decimal comma, "10,000.00" in one
// that writes a decimal point, and the API's plain "1500.00" in every store. What the text then
// means is checked by ParseAmount, as for the API.

// DefaultLocale is a store's locale unless its creation named another.
const DefaultLocale = "en"

var localePattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Z]{2})?$`)

// decimalCommaLanguages write a decimal comma and group thousands with a point or a space.
var decimalCommaLanguages = map[string]bool{
	"de": true, "fr": true, "es": true, "it": true, "nl": true, "pt": true, "pl": true, "cs": true, "sk": true,
	"da": true, "sv": true, "nb": true, "nn": true, "fi": true, "ru": true, "tr": true, "hu": true, "ro": true,
	"el": true, "bg": true, "hr": true, "sl": true, "et": true, "lv": true, "lt": true, "uk": true, "sr": true,
}

// DecimalComma reports whether a locale writes a decimal comma ("de", "de-AT"; not "de-CH",
// which writes a point).
func DecimalComma(locale string) bool {
	if locale == "de-CH" || locale == "it-CH" || locale == "fr-CH" {
		return false
	}
	lang, _, _ := strings.Cut(locale, "-")
	return decimalCommaLanguages[lang]
}

var (
	plainAmount      = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
	commaGrouped     = regexp.MustCompile(`^-?[0-9]{1,3}([. \x{00a0}\x{202f}'][0-9]{3})+(,[0-9]+)?$|^-?[0-9]+,[0-9]+$`)
	pointGrouped     = regexp.MustCompile(`^-?[0-9]{1,3}([, \x{00a0}\x{202f}'][0-9]{3})+(\.[0-9]+)?$`)
	groupSeparators  = strings.NewReplacer(".", "", " ", "", "\u00a0", "", "\u202f", "", "'", "")
	pointGroupStrips = strings.NewReplacer(",", "", " ", "", "\u00a0", "", "\u202f", "", "'", "")
)

// ParseLocalAmount turns an amount typed in a form into the API's plain decimal text: the
// plain form in any store, or the store's locale's form with its thousands separators. In a
// decimal-comma store "1.500" is fifteen hundred (the plain reading, with more decimals than
// the currency has, would be refused anyway); for a currency of three decimals, the locale's
// reading wins. Text it cannot read is returned as is, for ParseAmount to refuse with its
// message.
func ParseLocalAmount(text, locale, currency string) string {
	s := strings.TrimSpace(text)
	s = strings.Replace(s, "−", "-", 1)
	comma := DecimalComma(locale)
	if plainAmount.MatchString(s) && (!comma || !commaGrouped.MatchString(s)) {
		return s
	}
	if comma && commaGrouped.MatchString(s) {
		return strings.Replace(groupSeparators.Replace(s), ",", ".", 1)
	}
	if !comma && pointGrouped.MatchString(s) {
		return pointGroupStrips.Replace(s)
	}
	return text
}

// FormatLocalAmount writes an amount for people in a store's locale: its integer digits grouped
// by threes, with a point between groups and a decimal comma where the locale writes one
// ("10.000,00"), else a comma and a decimal point ("10,000.00"). It is the reading
// ParseLocalAmount accepts back. A statement's PDF writes its amounts with it.
func FormatLocalAmount(m Money, locale string) string {
	group, point := ",", "."
	if DecimalComma(locale) {
		group, point = ".", ","
	}
	amount, sign := m.Amount, ""
	if strings.HasPrefix(amount, "-") {
		sign, amount = "-", amount[1:]
	}
	whole, frac, hasFrac := strings.Cut(amount, ".")
	var b strings.Builder
	b.Grow(len(m.Amount) + len(whole)/3 + 1)
	b.WriteString(sign)
	for i := 0; i < len(whole); i++ {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(group)
		}
		b.WriteByte(whole[i])
	}
	if hasFrac {
		b.WriteString(point)
		b.WriteString(frac)
	}
	return b.String()
}
