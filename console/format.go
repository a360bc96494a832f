package console

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/creditd/creditd/credit"
)

// How the console writes values for people: money with grouped digits, times and days,
// payment terms as Net 30, actors, and event details in words.

// formatMoney shows an amount with its currency, its integer digits grouped by threes.
func formatMoney(m credit.Money) string { return formatAmount(m) + " " + m.Currency }

// formatAmount is formatMoney without the currency, for a table's cells whose heading names it.
func formatAmount(m credit.Money) string {
	amount := m.Amount
	sign := ""
	if strings.HasPrefix(amount, "-") {
		sign, amount = "−", amount[1:]
	}
	whole, frac, hasFrac := strings.Cut(amount, ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}

func formatTime(t credit.Timestamp) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// formatDay shows the day of a timestamp, for tables where the hour adds nothing (an
// invoice's issue and due dates).
func formatDay(t credit.Timestamp) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02")
}

// apiTimestamp matches a timestamp as the API writes it, inside a message.
var apiTimestamp = regexp.MustCompile(`[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})`)

// readableTimes rewrites the API timestamps in a text for people.
func readableTimes(text string) string {
	return apiTimestamp.ReplaceAllStringFunc(text, func(ts string) string {
		t, err := credit.ParseTimestamp(ts)
		if err != nil {
			return ts
		}
		return formatTime(t)
	})
}

// formatActor names who made a change once: the staff member's name, the API key's label with
// "(API key)", or "System".
func formatActor(a credit.Actor) string {
	switch a.Type {
	case "api_key":
		return a.Label + " (API key)"
	case "system":
		return "System"
	case "platform":
		return "Commerce platform"
	}
	return a.Label
}

func formatTimePtr(t *credit.Timestamp) string {
	if t == nil {
		return "—"
	}
	return formatTime(*t)
}

func derefString(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// humanLabel turns a code such as on_hold or order_placed into words.
func humanLabel(code string) string {
	if code == "" {
		return ""
	}
	words := strings.ReplaceAll(code, "_", " ")
	words = strings.ReplaceAll(words+" ", " gid ", " GID ")[:len(words)]
	return strings.ToUpper(words[:1]) + words[1:]
}

// templateLabel is humanLabel for the templates, of any string type or a pointer to one: a code
// (string, *string) or a timeline entry's kind (credit.TimelineKind). A nil pointer is "".
func templateLabel(code any) string {
	v := reflect.ValueOf(code)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.Kind() == reflect.String {
		return humanLabel(v.String())
	}
	return humanLabel(fmt.Sprint(code))
}

// detailNames are the names people read for the members of timeline events' data.
var detailNames = map[string]string{
	"platform_order_gid":            "Invoice of order",
	"due_at":                        "Was due",
	"credit_limit":                  "Credit limit",
	"application_id":                "Application",
	"platform_company_gid":          "Platform company GID",
	"previous_platform_company_gid": "Previous GID",
}

// eventDetail renders a timeline event's data as "name: value" pairs for people: amounts with
// their currency, timestamps as the console shows them, codes in words.
func eventDetail(data map[string]any) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		if k != "ledger_entry_id" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v := data[k]
		if v == nil {
			continue
		}
		text := fmt.Sprint(v)
		switch val := v.(type) {
		case map[string]any:
			if amount, ok := val["amount"].(string); ok {
				cur, _ := val["currency"].(string)
				text = formatMoney(credit.Money{Amount: amount, Currency: cur})
			}
		case credit.Money:
			text = formatMoney(val)
		case *string:
			if val == nil {
				continue
			}
			text = *val
		case string:
			text = readableTimes(val)
			switch k {
			case "kind":
				text = strings.ToLower(humanLabel(val))
			case "payment_terms":
				text = credit.FormatPaymentTerms(val)
			}
		}
		name := detailNames[k]
		if name == "" {
			name = humanLabel(k)
		}
		parts = append(parts, name+": "+text)
	}
	return strings.Join(parts, "; ")
}
