package console

// Patterns returns the console's routes, so that the security tests cover every one.
func Patterns(c *Console) []string { return append([]string(nil), c.patterns...) }

// FormatMoney is the console's amount format, for tests that look for figures on a page.
var FormatMoney = formatMoney
