package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSameDashboard checks that the comparison reads both servers' answers alike (creditd's
// formatted money against PostGraphile's bare numerics) and notices each kind of difference.
func TestSameDashboard(t *testing.T) {
	creditd := []byte(`{"data":{"companies":{"edges":[
		{"node":{"id":"co_a","creditLimit":{"amount":"500.00","currency":"EUR"},"outstanding":{"amount":"12.30","currency":"EUR"},"hold":null,
			"ledger":{"edges":[{"node":{"id":"le_2","amount":{"amount":"-2.00","currency":"EUR"}}},{"node":{"id":"le_1","amount":{"amount":"14.30","currency":"EUR"}}}]}}},
		{"node":{"id":"co_b","creditLimit":{"amount":"10.00","currency":"EUR"},"outstanding":{"amount":"0.00","currency":"EUR"},"hold":{"kind":"MANUAL"},
			"ledger":{"edges":[]}}}]}}}`)
	pglCompanies := []map[string]any{
		{"rowId": "co_a", "creditLimit": "500", "outstanding": "12.3", "holdKind": nil,
			"ledgerEntriesByCompanyId": map[string]any{"nodes": []map[string]any{{"rowId": "le_2", "amount": "-2"}, {"rowId": "le_1", "amount": "14.30"}}}},
		{"rowId": "co_b", "creditLimit": "10", "outstanding": "0", "holdKind": "manual",
			"ledgerEntriesByCompanyId": map[string]any{"nodes": []map[string]any{}}},
	}
	pgl := func(change func(c []map[string]any) []map[string]any) []byte {
		b, _ := json.Marshal(pglCompanies)
		var c []map[string]any
		_ = json.Unmarshal(b, &c)
		c = change(c)
		b, _ = json.Marshal(map[string]any{"data": map[string]any{"allCompanies": map[string]any{"nodes": c}}})
		return b
	}
	a, err := parseCreditdDashboard(creditd)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		change     func(c []map[string]any) []map[string]any
	}{
		{"same", "", func(c []map[string]any) []map[string]any { return c }},
		{"order", "company 1 is co_a against co_b", func(c []map[string]any) []map[string]any { return []map[string]any{c[1], c[0]} }},
		{"figure", "outstanding", func(c []map[string]any) []map[string]any { c[0]["outstanding"] = "12.31"; return c }},
		{"hold", "on hold", func(c []map[string]any) []map[string]any { c[1]["holdKind"] = nil; return c }},
		{"entries", "entries", func(c []map[string]any) []map[string]any {
			c[0]["ledgerEntriesByCompanyId"] = map[string]any{"nodes": []map[string]any{{"rowId": "le_1", "amount": "14.30"}, {"rowId": "le_2", "amount": "-2"}}}
			return c
		}},
		{"amount", "amount", func(c []map[string]any) []map[string]any {
			c[0]["ledgerEntriesByCompanyId"] = map[string]any{"nodes": []map[string]any{{"rowId": "le_2", "amount": "-2"}, {"rowId": "le_1", "amount": "14.31"}}}
			return c
		}},
		{"count", "2 companies against 1", func(c []map[string]any) []map[string]any { return c[:1] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := parsePostGraphileDashboard(pgl(tc.change))
			if err != nil {
				t.Fatal(err)
			}
			got := sameDashboard(a, b)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("difference %q, want one mentioning %q", got, tc.want)
			}
		})
	}
	if _, err := parsePostGraphileDashboard([]byte(`{"errors":[{"message":"boom"}]}`)); err == nil {
		t.Error("an answer with errors was accepted")
	}
}
